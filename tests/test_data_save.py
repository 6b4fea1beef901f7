import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrx.data import Dataset
from tfrx.data._elements import decode_element, encode_element
from tfrx.testing import assert_resumes_exactly, elements_equal

leaf = st.one_of(
    st.integers(-(2**62), 2**62).map(np.int64),
    st.floats(allow_nan=False, width=32).map(np.float32),
    st.binary(max_size=20),
    st.lists(st.integers(-1000, 1000), max_size=6).map(lambda v: np.asarray(v, np.int32)),
    st.lists(st.binary(max_size=5), min_size=1, max_size=4).map(lambda v: np.asarray(v, dtype=object)),
    st.lists(st.booleans(), max_size=4).map(lambda v: np.asarray(v, bool).reshape(-1, 1)),
)
element = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.dictionaries(st.text(min_size=1, max_size=4), inner, min_size=1, max_size=3),
        st.lists(inner, min_size=1, max_size=3).map(tuple),
    ),
    max_leaves=6,
)


def _same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, bytes):
        return type(b) is bytes and a == b
    return (
        type(a) is type(b)
        and np.asarray(a).dtype == np.asarray(b).dtype
        and elements_equal(np.asarray(a), np.asarray(b))
    )


@settings(max_examples=60, deadline=None)
@given(element)
def test_element_encoding_round_trips_exactly(x):
    assert _same(x, decode_element(encode_element(x)))


@settings(max_examples=40, deadline=None)
@given(element, st.data())
def test_element_encoding_rejects_cut_or_extended_bytes(x, data):
    blob = encode_element(x)
    cut = data.draw(st.integers(0, len(blob) - 1))
    with pytest.raises(ValueError):
        decode_element(blob[:cut])
    with pytest.raises(ValueError, match="after its last payload"):
        decode_element(blob + b"\x00")


def _elements():
    return Dataset.range(23).map(
        lambda i: {"ids": np.arange(i % 5, dtype=np.int32), "text": b"t%d" % i, "w": np.float32(i) / 3}
    )


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_save_then_load_gives_the_elements_back(tmp_path, compression):
    _elements().save(str(tmp_path / "ds"), compression=compression)
    spec = json.loads((tmp_path / "ds" / "dataset_spec.json").read_text())
    assert spec["shards"] == [{"file": "shard-00000.tfrecord", "elements": 23}]
    loaded = list(Dataset.load(str(tmp_path / "ds")))
    original = list(_elements())
    assert len(loaded) == 23 and all(_same(a, b) for a, b in zip(original, loaded))


def test_save_shard_func_splits_and_load_reads_shards_in_order(tmp_path):
    Dataset.range(10).save(tmp_path, shard_func=lambda x: x % 3)
    assert sorted(os.listdir(tmp_path)) == [
        "dataset_spec.json",
        "shard-00000.tfrecord",
        "shard-00001.tfrecord",
        "shard-00002.tfrecord",
    ]
    assert [int(x) for x in Dataset.load(tmp_path)] == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]
    reversed_order = Dataset.load(
        tmp_path, reader_func=lambda shards: Dataset.range(3).flat_map(lambda i: list(shards)[2 - int(i)])
    )
    assert [int(x) for x in reversed_order] == [2, 5, 8, 1, 4, 7, 0, 3, 6, 9]


def test_load_resumes_exactly(tmp_path):
    Dataset.range(12).map(lambda x: (x, b"%d" % x)).save(tmp_path, shard_func=lambda x, s: x % 2)
    assert_resumes_exactly(lambda: Dataset.load(tmp_path))


def test_load_of_an_unfinished_or_foreign_directory_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a directory written by Dataset.save"):
        Dataset.load(tmp_path)
    (tmp_path / "dataset_spec.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="format"):
        Dataset.load(tmp_path)


def test_save_interrupted_leaves_nothing_loadable(tmp_path):
    def boom(x):
        if x == 5:
            raise RuntimeError("stop")
        return x

    with pytest.raises(RuntimeError):
        Dataset.range(10).map(boom).save(tmp_path)
    with pytest.raises(FileNotFoundError):
        Dataset.load(tmp_path)


def test_save_and_load_through_experimental(tmp_path):
    from tfrx.data import experimental

    experimental.save(Dataset.range(4), str(tmp_path))
    assert [int(x) for x in experimental.load(str(tmp_path))] == [0, 1, 2, 3]
