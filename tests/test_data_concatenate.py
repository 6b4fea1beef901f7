from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def test_concatenate_matches_tf(tf):
    ours = Dataset.range(3).concatenate(Dataset.range(10, 12))
    theirs = tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(10, 12))
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))
    assert ours.cardinality() == int(theirs.cardinality()) == 5
    assert_resumes_exactly(lambda: Dataset.range(3).concatenate(Dataset.range(10, 12)))
