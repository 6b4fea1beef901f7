import numpy as np

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def test_unbatch_matches_tf(tf):
    data = {"a": np.arange(12).reshape(6, 2), "b": np.array([b"%d" % i for i in range(6)], dtype=object)}
    ours = Dataset.from_tensor_slices(data).batch(4).unbatch()
    theirs = tf.data.Dataset.from_tensor_slices(data).batch(4).unbatch()
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))


def test_unbatch_resumes_inside_batches():
    assert_resumes_exactly(lambda: Dataset.range(10).batch(4).unbatch())
    assert_resumes_exactly(lambda: Dataset.range(10).batch(3).unbatch().batch(4))
