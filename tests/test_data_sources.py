import numpy as np
import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def test_from_tensor_slices_matches_tf(tf):
    data = {"a": np.arange(6).reshape(3, 2), "b": np.array([b"x", b"y", b"z"], dtype=object), "c": [1.5, 2.5, 3.5]}
    ours = [to_py(x) for x in Dataset.from_tensor_slices(data)]
    theirs = [to_py(x) for x in tf.data.Dataset.from_tensor_slices(data).as_numpy_iterator()]
    assert ours == theirs
    assert Dataset.from_tensor_slices(data).cardinality() == 3


def test_strings_become_bytes():
    assert list(Dataset.from_tensor_slices(["a", "bc"])) == [b"a", b"bc"]


def test_from_tensor_slices_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="first dimensions"):
        Dataset.from_tensor_slices((np.arange(3), np.arange(4)))


def test_range_matches_python():
    assert to_py(list(Dataset.range(2, 11, 3))) == list(range(2, 11, 3))
    assert len(Dataset.range(10)) == 10
    assert isinstance(next(iter(Dataset.range(3))), np.int64)


def test_from_tensors_is_one_element():
    (x,) = list(Dataset.from_tensors(np.arange(3)))
    assert to_py(x) == [0, 1, 2]


def test_from_generator_restarts_on_resume():
    calls = []

    def gen():
        calls.append(1)
        yield from ((i, f"s{i}") for i in range(5))

    assert_resumes_exactly(lambda: Dataset.from_generator(gen))
    assert to_py(list(Dataset.from_generator(gen))) == [[i, f"s{i}".encode()] for i in range(5)]


def test_list_files_sorted_and_shuffled_per_epoch(tmp_path):
    for i in range(6):
        (tmp_path / f"f{i}.txt").write_text("x")
    plain = list(Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False))
    assert plain == sorted(plain) and len(plain) == 6
    ds = Dataset.list_files(str(tmp_path / "*.txt"), seed=3)
    first, second = list(ds.iterator(epoch=0)), list(ds.iterator(epoch=1))
    assert sorted(first) == sorted(second) == plain
    assert first == list(Dataset.list_files(str(tmp_path / "*.txt"), seed=3).iterator(epoch=0))
    assert first != second or first != plain
    assert_resumes_exactly(lambda: Dataset.list_files(str(tmp_path / "*.txt"), seed=3))


def test_list_files_no_match(tmp_path):
    with pytest.raises(FileNotFoundError):
        Dataset.list_files(str(tmp_path / "*.none"))


def test_import_tfrx_does_not_import_frameworks():
    import subprocess
    import sys

    code = "import sys, tfrx, tfrx.data; print(any(m in sys.modules for m in ('torch', 'jax', 'keras', 'tensorflow')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_list_files_unshuffled_matches_tf(tf, tmp_path):
    for name in ["b.rec", "a.rec", "c.rec", "skip.txt"]:
        (tmp_path / name).write_text("x")
    pattern = str(tmp_path / "*.rec")
    ours = list(Dataset.list_files(pattern, shuffle=False))
    theirs = list(tf.data.Dataset.list_files(pattern, shuffle=False).as_numpy_iterator())
    assert ours == theirs
