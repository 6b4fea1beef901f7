import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


@pytest.mark.parametrize("n,count", [(10, 3), (10, 0), (10, 20), (10, -1), (-1, 4)])
def test_skip_matches_tf(tf, n, count):
    ours = (Dataset.range(5).repeat() if n < 0 else Dataset.range(n)).skip(count)
    theirs = (tf.data.Dataset.range(5).repeat() if n < 0 else tf.data.Dataset.range(n)).skip(count)
    assert ours.cardinality() == int(theirs.cardinality())
    assert to_py(list(ours.take(12))) == to_py(list(theirs.take(12).as_numpy_iterator()))


def test_skip_resumes():
    assert_resumes_exactly(lambda: Dataset.range(10).skip(4))
