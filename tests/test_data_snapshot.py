import os

from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return x * 2


def test_snapshot_writes_once_then_reads_from_disk(tmp_path):
    f = Counter()
    ds = Dataset.range(6).map(f).snapshot(str(tmp_path / "snap"))
    assert [int(x) for x in ds] == [0, 2, 4, 6, 8, 10]
    assert f.calls == 6
    assert os.listdir(tmp_path / "snap")
    # A new pipeline (a restarted job) pointed at the same path reads the snapshot.
    g = Counter()
    again = Dataset.range(6).map(g).snapshot(str(tmp_path / "snap"))
    assert [int(x) for x in again] == [0, 2, 4, 6, 8, 10]
    assert g.calls == 0


def test_snapshot_of_an_interrupted_pass_is_not_used(tmp_path):
    f = Counter()
    ds = Dataset.range(6).map(f).snapshot(tmp_path)
    with iter(ds) as it:
        next(it)
        next(it)
    assert [int(x) for x in ds] == [0, 2, 4, 6, 8, 10]
    assert f.calls == 8


def test_snapshot_resumes_exactly_while_writing_and_reading(tmp_path):
    assert_resumes_exactly(lambda: Dataset.range(7).snapshot(tmp_path / "a"))
    list(Dataset.range(7).snapshot(tmp_path / "b"))
    assert_resumes_exactly(lambda: Dataset.range(7).snapshot(tmp_path / "b"))
