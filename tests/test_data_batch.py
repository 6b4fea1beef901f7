import numpy as np
import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


@pytest.mark.parametrize("n,size,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (2, 5, True)])
def test_batch_matches_tf(tf, n, size, drop):
    data = {
        "x": np.arange(n * 2, dtype=np.float32).reshape(n, 2),
        "s": np.array([b"r%d" % i for i in range(n)], dtype=object),
    }
    ours = Dataset.from_tensor_slices(data).batch(size, drop_remainder=drop)
    theirs = tf.data.Dataset.from_tensor_slices(data).batch(size, drop_remainder=drop)
    a, b = list(ours), list(theirs.as_numpy_iterator())
    assert to_py(a) == to_py(b)
    assert [x["x"].shape for x in a] == [x["x"].shape for x in b]
    assert all(x["x"].dtype == np.float32 and x["s"].dtype == object for x in a)
    assert ours.cardinality() == int(theirs.cardinality())


def test_batch_of_tuples_and_scalars():
    ((a, b),) = list(Dataset.range(3).map(lambda x: (x, b"k")).batch(3))
    assert a.dtype == np.int64 and a.tolist() == [0, 1, 2]
    assert b.dtype == object and b.tolist() == [b"k"] * 3


def test_batch_shape_mismatch_is_explained():
    with pytest.raises(ValueError, match="padded_batch"):
        list(Dataset.range(3).map(lambda x: np.zeros(int(x))).batch(3))


def test_batch_resumes():
    assert_resumes_exactly(lambda: Dataset.range(10).batch(3))
    assert_resumes_exactly(lambda: Dataset.range(10).batch(3, drop_remainder=True))
