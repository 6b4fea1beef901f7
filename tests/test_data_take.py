import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


@pytest.mark.parametrize("n,count", [(10, 3), (10, 0), (10, 20), (10, -1), (-1, 4)])
def test_take_matches_tf(tf, n, count):
    ours = (Dataset.range(5).repeat() if n < 0 else Dataset.range(n)).take(count)
    theirs = (tf.data.Dataset.range(5).repeat() if n < 0 else tf.data.Dataset.range(n)).take(count)
    assert ours.cardinality() == int(theirs.cardinality())
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))


def test_take_does_not_read_past_the_end():
    calls = []
    list(Dataset.range(100).map(lambda x: calls.append(x) or x).take(3))
    assert len(calls) == 3


def test_take_resumes():
    assert_resumes_exactly(lambda: Dataset.range(10).take(6))
