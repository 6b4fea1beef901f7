from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def test_zip_matches_tf(tf):
    ours = Dataset.zip((Dataset.range(5), Dataset.range(10, 13)))
    theirs = tf.data.Dataset.zip((tf.data.Dataset.range(5), tf.data.Dataset.range(10, 13)))
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))
    assert ours.cardinality() == int(theirs.cardinality()) == 3


def test_zip_dict_and_varargs():
    assert to_py(list(Dataset.zip({"a": Dataset.range(2), "b": Dataset.range(5)}))) == [
        {"a": 0, "b": 0},
        {"a": 1, "b": 1},
    ]
    assert to_py(list(Dataset.zip(Dataset.range(2), Dataset.range(2)))) == [[0, 0], [1, 1]]


def test_zip_resumes():
    assert_resumes_exactly(lambda: Dataset.zip((Dataset.range(6).shuffle(3, seed=1), Dataset.range(6))))
