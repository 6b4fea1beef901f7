import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import INFINITE_CARDINALITY, Dataset


@pytest.mark.parametrize("count", [0, 1, 3, -1, None])
def test_repeat_counts_match_tf(tf, count):
    ours = Dataset.range(4).repeat(count)
    theirs = tf.data.Dataset.range(4).repeat(count)
    assert ours.cardinality() == int(theirs.cardinality())
    assert to_py(list(ours.take(10))) == to_py(list(theirs.take(10).as_numpy_iterator()))


def test_repeat_of_empty_ends():
    assert list(Dataset.range(0).repeat()) == []
    assert Dataset.range(0).repeat().cardinality() == 0


def test_infinite_len_raises():
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(3).repeat())
    assert Dataset.range(3).repeat().cardinality() == INFINITE_CARDINALITY


def test_repeat_resumes_across_epochs():
    assert_resumes_exactly(lambda: Dataset.range(5).shuffle(3, seed=1).repeat(3))
