import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


@pytest.mark.parametrize("n,shards,index", [(10, 3, 0), (10, 3, 2), (7, 7, 6), (3, 5, 4), (0, 2, 1)])
def test_shard_matches_tf(tf, n, shards, index):
    ours = Dataset.range(n).shard(shards, index)
    theirs = tf.data.Dataset.range(n).shard(shards, index)
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))
    assert ours.cardinality() == int(theirs.cardinality())


def test_shard_validates():
    with pytest.raises(ValueError):
        Dataset.range(3).shard(0, 0)
    with pytest.raises(ValueError):
        Dataset.range(3).shard(2, 2)


def test_shard_resumes():
    assert_resumes_exactly(lambda: Dataset.range(11).filter(lambda x: x != 4).shard(3, 1))
