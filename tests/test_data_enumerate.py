from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def test_enumerate_matches_tf(tf):
    ours = Dataset.range(3, 7).enumerate(start=10)
    theirs = tf.data.Dataset.range(3, 7).enumerate(start=10)
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))
    assert_resumes_exactly(lambda: Dataset.range(5).enumerate())
