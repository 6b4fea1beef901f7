import logging

import numpy as np
import pytest

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset, DatasetIterator
from tfrx.testing import assert_resumes_exactly

CASES = names("ignore_errors_")


@pytest.mark.parametrize("name", CASES)
def test_ignore_errors_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_ignore_errors_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_ignore_errors_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


def _fail_on_multiples_of_3(x):
    if x % 3 == 0:
        raise ValueError(f"bad element {x}")
    return x


def test_ignore_errors_logs_each_skipped_error(caplog):
    ds = Dataset.range(7).map(_fail_on_multiples_of_3).ignore_errors(log_warning=True)
    with caplog.at_level(logging.WARNING, logger="tfrx"):
        assert [int(x) for x in ds] == [1, 2, 4, 5]
    assert sum("bad element" in r.getMessage() for r in caplog.records) == 3
    caplog.clear()
    list(Dataset.range(7).map(_fail_on_multiples_of_3).ignore_errors())
    assert not caplog.records


class _Stuck(Dataset):
    """Yields 0, 1, then raises forever without moving."""

    def _iterator(self, ctx):
        class It(DatasetIterator):
            i = 0

            def __next__(self):
                if self.i < 2:
                    self.i += 1
                    return np.int64(self.i - 1)
                raise OSError("cannot read past byte 42")

            def get_state(self):
                return {"i": self.i}

            def set_state(self, state):
                self.i = state["i"]

        return It()


def test_ignore_errors_ends_an_input_that_cannot_move_past_an_error():
    assert [int(x) for x in _Stuck().ignore_errors()] == [0, 1]


def test_ignore_errors_does_not_hide_keyboard_interrupt():
    def interrupt(x):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        list(Dataset.range(2).map(interrupt).ignore_errors())


def _damaged_golden():
    import json

    from data_ops_cases import cases

    return json.loads(cases.GOLDEN.read_text())["ignore_errors_damaged_files"]


def _ours_on_damaged(tmp_path):
    import tfrx
    from data_ops_cases import cases
    from tfrx.io._writer import TFRecordWriter

    paths = cases.write_damaged_files(str(tmp_path), TFRecordWriter)
    return paths, cases.read_damaged(paths, tfrx.TFRecordDataset)


def test_ignore_errors_on_damaged_files_matches_golden(tmp_path):
    _, got = _ours_on_damaged(tmp_path)
    assert got == _damaged_golden()


def test_ignore_errors_on_damaged_files_matches_tf(tmp_path, tf):
    from data_ops_cases import cases

    paths, got = _ours_on_damaged(tmp_path)
    assert got == cases.read_damaged(paths, tf.data.TFRecordDataset)
