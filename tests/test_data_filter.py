import numpy as np

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import UNKNOWN_CARDINALITY, Dataset


def test_filter_matches_tf(tf):
    ours = Dataset.range(20).filter(lambda x: x % 3 == 0)
    theirs = tf.data.Dataset.range(20).filter(lambda x: x % 3 == 0)
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))
    assert ours.cardinality() == UNKNOWN_CARDINALITY == int(theirs.cardinality())


def test_filter_numpy_bool_and_tuples():
    ds = Dataset.from_tensor_slices((np.arange(6), np.arange(6) % 2 == 0)).filter(lambda x, keep: keep)
    assert [int(x) for x, _ in ds] == [0, 2, 4]


def test_filter_resumes():
    assert_resumes_exactly(lambda: Dataset.range(15).filter(lambda x: x % 4 != 1))
