import numpy as np
import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def test_padded_batch_matches_tf(tf):
    ours = Dataset.range(1, 6).map(lambda x: np.arange(int(x), dtype=np.int64)).padded_batch(2)
    theirs = tf.data.Dataset.range(1, 6).map(lambda x: tf.range(x)).padded_batch(2)
    a, b = list(ours), list(theirs.as_numpy_iterator())
    assert to_py(a) == to_py(b) and [x.shape for x in a] == [x.shape for x in b]


def test_padded_shapes_and_values_match_tf(tf):
    def ours_elem(x):
        n = int(x)
        return np.full(n, n, np.int32), np.array([b"s"] * n, dtype=object)

    ours = Dataset.range(1, 5).map(ours_elem).padded_batch(3, padded_shapes=([5], [None]), padding_values=(-1, b"?"))
    theirs = (
        tf.data.Dataset.range(1, 5)
        .map(lambda x: (tf.fill([x], tf.cast(x, tf.int32)), tf.fill([x], "s")))
        .padded_batch(3, padded_shapes=([5], [None]), padding_values=(-1, "?"))
    )
    a, b = list(ours), list(theirs.as_numpy_iterator())
    assert to_py(a) == to_py(b)
    assert [x[0].shape for x in a] == [x[0].shape for x in b]
    assert a[0][0].dtype == np.int32


def test_padded_batch_dicts_with_drop_remainder(tf):
    ours = Dataset.range(1, 6).map(lambda x: {"v": np.ones((int(x), 2))}).padded_batch(2, drop_remainder=True)
    theirs = (
        tf.data.Dataset.range(1, 6)
        .map(lambda x: {"v": tf.ones((x, 2), tf.float64)})
        .padded_batch(2, drop_remainder=True)
    )
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))
    assert ours.cardinality() == int(theirs.cardinality()) == 2


def test_too_long_for_padded_shape():
    with pytest.raises(ValueError, match="larger than the padded size"):
        list(Dataset.range(5).map(lambda x: np.zeros(int(x))).padded_batch(5, padded_shapes=[2]))


def test_padded_batch_resumes():
    assert_resumes_exactly(lambda: Dataset.range(7).map(lambda x: np.arange(int(x))).padded_batch(3))


def test_padded_batch_of_tuples_with_default_and_integer_padding_values():
    # A tuple of default (None) or integer padding values is one value per component, not a padded shape.
    def gen():
        for i in range(4):
            yield np.int32(i), np.arange(i, dtype=np.float32)

    ds = Dataset.from_generator(gen, output_types=(np.int32, np.float32), output_shapes=((), (None,)))
    ids, values = next(iter(ds.padded_batch(3)))
    assert ids.tolist() == [0, 1, 2] and values.tolist() == [[0, 0], [0, 0], [0, 1]]
    ids, values = next(iter(ds.padded_batch(3, padding_values=(0, -1))))
    assert values.tolist() == [[-1, -1], [0, -1], [0, 1]]
