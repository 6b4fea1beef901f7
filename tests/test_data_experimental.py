import numpy as np
import pytest

import tfrx.data
from tfrx.data import Dataset, experimental


def test_experimental_aliases_build_the_same_pipelines():
    ds = Dataset.range(10)
    pairs = [
        (
            ds.apply(experimental.group_by_window(lambda x: x % 2, lambda k, g: g.batch(2), window_size=2)),
            ds.group_by_window(lambda x: x % 2, lambda k, g: g.batch(2), window_size=2),
        ),
        (
            ds.map(lambda x: np.arange(x % 3 + 1)).apply(experimental.bucket_by_sequence_length(len, [2], [2, 2])),
            ds.map(lambda x: np.arange(x % 3 + 1)).bucket_by_sequence_length(len, [2], [2, 2]),
        ),
        (
            ds.apply(experimental.scan(np.int64(0), lambda s, x: (s + x, s))),
            ds.scan(np.int64(0), lambda s, x: (s + x, s)),
        ),
        (ds.batch(3).apply(experimental.unbatch()), ds),
        (ds.apply(experimental.enumerate_dataset(5)), ds.enumerate(5)),
        (ds.apply(experimental.shuffle_and_repeat(4, 2, seed=1)), ds.shuffle(4, seed=1).repeat(2)),
        (experimental.sample_from_datasets([ds, ds], seed=3), Dataset.sample_from_datasets([ds, ds], seed=3)),
        (
            experimental.choose_from_datasets([ds, ds], Dataset.from_tensor_slices(np.array([1, 0, 1]))),
            Dataset.choose_from_datasets([ds, ds], Dataset.from_tensor_slices(np.array([1, 0, 1]))),
        ),
    ]
    for a, b in pairs:
        assert [np.asarray(x).tolist() for x in a.iterator(epoch=0)] == [
            np.asarray(x).tolist() for x in b.iterator(epoch=0)
        ]


def test_experimental_ignore_errors_and_snapshot(tmp_path):
    def bad(x):
        if x == 1:
            raise ValueError
        return x

    assert [int(x) for x in Dataset.range(3).map(bad).apply(experimental.ignore_errors())] == [0, 2]
    assert [int(x) for x in Dataset.range(3).apply(experimental.snapshot(str(tmp_path)))] == [0, 1, 2]


def test_experimental_constants_and_helpers():
    assert experimental.AUTOTUNE == tfrx.data.AUTOTUNE
    assert experimental.cardinality(Dataset.range(4)) == 4
    assert experimental.cardinality(Dataset.range(4).repeat()) == experimental.INFINITE_CARDINALITY
    assert int(experimental.get_single_element(Dataset.range(1))) == 0
    with pytest.raises(ValueError, match="more than one"):
        experimental.get_single_element(Dataset.range(2))
    with pytest.raises(ValueError, match="empty"):
        experimental.get_single_element(Dataset.range(0))


def test_experimental_names_exist_in_tf(tf):
    for name in experimental.__all__:
        if name != "TensorSpec":
            assert hasattr(tf.data.experimental, name), name
    for name in (
        "sample_from_datasets",
        "choose_from_datasets",
        "bucket_by_sequence_length",
        "group_by_window",
        "ignore_errors",
        "rebatch",
        "save",
        "load",
        "snapshot",
        "window",
        "scan",
        "flat_map",
        "range",
        "from_generator",
        "from_tensor_slices",
    ):
        assert hasattr(tf.data.Dataset, name) and hasattr(Dataset, name), name
