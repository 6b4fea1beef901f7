import numpy as np
import pytest

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly

CASES = names("scan_")


@pytest.mark.parametrize("name", CASES)
def test_scan_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_scan_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_scan_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


def test_scan_state_of_arrays_and_bytes_resumes_exactly():
    def step(state, x):
        hist, text = state
        hist = hist.copy()
        hist[int(x) % 3] += 0.5
        return (hist, text + b"%d" % int(x)), (hist, text)

    make = lambda: Dataset.range(8).shuffle(4, seed=2).scan((np.zeros(3, np.float32), b""), step)  # noqa: E731
    out = assert_resumes_exactly(make)
    assert out[-1][0].dtype == np.float32 and out[-1][0].sum() == 4.0
    assert len(out[-1][1]) == 7 and set(out[-1][1].decode()) < set("01234567")


def test_scan_func_must_return_a_pair():
    with pytest.raises(TypeError, match="new_state, output"):
        list(Dataset.range(2).scan(0, lambda s, x: s + x))
