"""bytes_as="views": string features as tfrx.BytesArray over the batch's buffer, equal to the default bytes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx import BytesArray, RecordBatch


def _batch(records: list[bytes]) -> RecordBatch:
    lengths = np.array([len(r) for r in records], np.int64)
    starts = np.zeros(len(records), np.int64)
    if len(records) > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    return RecordBatch(np.frombuffer(b"".join(records), np.uint8).copy(), starts, lengths)


def _plain(value):
    """A parse result with every BytesArray turned into the object array the default gives."""
    if isinstance(value, BytesArray):
        return value.to_numpy()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, tfrx.SparseArray):
        return tfrx.SparseArray(value.indices, _plain(value.values), value.dense_shape)
    if isinstance(value, tfrx.RaggedArray):
        return tfrx.RaggedArray(_plain(value.values), value.row_splits)
    return value


def _assert_same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, tuple):
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype
        assert a.tolist() == b.tolist()
    else:
        assert type(a) is type(b) and a == b


def _has_views(value) -> bool:
    if isinstance(value, BytesArray):
        return True
    if isinstance(value, (tfrx.SparseArray, tfrx.RaggedArray)):
        return _has_views(value.values)
    return False


RECORDS = [
    tfrx.make_example(
        {
            "s": [b"ab", b"a value longer than twelve bytes"],
            "t": [b"q"] * i,
            "d": [b"x" * i],
            "pair": [b"p%d" % i, b""],
            "n": [i],
            "part": [1, 1],
            "idx": [i % 3],
        },
        kinds={"t": "bytes"},
    ).SerializeToString()
    for i in range(5)
] + [
    tfrx.make_example(
        {"s": [], "n": [9], "part": [], "idx": []}, kinds={"s": "bytes", "part": "int64", "idx": "int64"}
    ).SerializeToString()
]

SPEC = {
    "s": tfrx.VarLenFeature(tfrx.string),
    "t": tfrx.RaggedFeature(tfrx.string, partitions=[tfrx.RaggedFeature.UniformRowLength(1)]),
    "d": tfrx.FixedLenFeature([], tfrx.string, default_value=b"DEFAULT"),
    "pair": tfrx.FixedLenFeature([2], tfrx.string, default_value=[b"", b"z"]),
    "fls": tfrx.FixedLenSequenceFeature([], tfrx.string, allow_missing=True),
    "n": tfrx.FixedLenFeature([], tfrx.int64),
}


@pytest.mark.parametrize("form", ["batch", "list"])
def test_views_equal_the_default_bytes_for_every_feature_kind(form):
    records = _batch(RECORDS) if form == "batch" else list(RECORDS)
    want = tfrx.ExampleParser(SPEC).parse(records)
    got = tfrx.ExampleParser(SPEC, bytes_as="views").parse(records)
    for key in ("s", "t", "d", "pair", "fls"):
        assert _has_views(got[key]), key
    _assert_same(_plain(want), _plain(got))
    assert got["t"].to_list() == want["t"].to_list()
    assert got["s"].to_dense().tolist() == want["s"].to_dense().tolist()


def test_sparse_feature_values_reordered_as_views():
    recs = [tfrx.make_example({"v": [b"b", b"a"], "i": [2, 0]}).SerializeToString()]
    spec = {"sp": tfrx.SparseFeature(index_key="i", value_key="v", dtype=tfrx.string, size=3)}
    want = tfrx.parse_example(recs, spec)["sp"]
    got = tfrx.parse_example(recs, spec, bytes_as="views")["sp"]
    assert isinstance(got.values, BytesArray)
    assert got.values.tolist() == want.values.tolist() == [b"a", b"b"]
    assert np.array_equal(got.indices, want.indices)


def test_views_of_a_record_batch_share_its_buffer():
    batch = _batch(RECORDS[:5])
    got = tfrx.ExampleParser(
        {"s": tfrx.VarLenFeature(tfrx.string), "d": tfrx.FixedLenFeature([], tfrx.string)}, bytes_as="views"
    ).parse(batch)
    assert got["s"].values.data is batch.data
    assert got["d"].data is batch.data
    assert got["d"].tolist() == [b"x" * i for i in range(5)]


def test_defaults_and_lists_pack_the_values_into_one_new_buffer():
    batch = _batch(RECORDS)  # the last record takes d's default
    got = tfrx.ExampleParser({"d": SPEC["d"]}, bytes_as="views").parse(batch)["d"]
    assert not np.shares_memory(got.data, batch.data)
    assert got.tolist() == [b"", b"x", b"xx", b"xxx", b"xxxx", b"DEFAULT"]
    listed = tfrx.ExampleParser({"d": SPEC["d"]}, bytes_as="views").parse(list(RECORDS))["d"]
    assert listed.tolist() == got.tolist()
    values, offsets = listed.packed()
    assert values.tobytes() == b"".join(got.tolist())
    assert offsets.tolist() == [0, 0, 1, 3, 6, 10, 17]


def test_sequence_examples_as_views():
    recs = [
        tfrx.make_sequence_example(
            {"id": [b"seq%d" % i]},
            {"words": [[b"w%d" % j] * (j + 1) for j in range(i)], "tags": [[b"t"] for _ in range(i)]},
        ).SerializeToString()
        for i in range(4)
    ]
    context = {"id": tfrx.FixedLenFeature([], tfrx.string)}
    sequence = {
        "words": tfrx.VarLenFeature(tfrx.string),
        "tags": tfrx.FixedLenSequenceFeature([], tfrx.string),
    }
    ragged = {"words": tfrx.RaggedFeature(tfrx.string)}
    for seq in (sequence, ragged):
        for records in (recs, _batch(recs)):
            want = tfrx.parse_sequence_example(records, context, seq)
            got = tfrx.parse_sequence_example(records, context, seq, bytes_as="views")
            assert isinstance(got[0]["id"], BytesArray) and _has_views(got[1]["words"])
            _assert_same(_plain(want), _plain(got))
    single = tfrx.SequenceExampleParser(context, sequence, bytes_as="views").parse_single(recs[2])
    assert single[0]["id"] == b"seq2"
    assert single[1]["tags"].tolist() == [b"t", b"t"]


def test_parse_single_example_with_views():
    got = tfrx.ExampleParser(SPEC, bytes_as="views").parse_single(RECORDS[3])
    want = tfrx.ExampleParser(SPEC).parse_single(RECORDS[3])
    assert got["d"] == want["d"] == b"xxx"
    assert got["pair"].tolist() == want["pair"].tolist()
    assert got["s"].values.tolist() == want["s"].values.tolist()


def test_bytes_as_is_checked():
    with pytest.raises(ValueError, match="bytes_as"):
        tfrx.ExampleParser(SPEC, bytes_as="memoryview")
    with pytest.raises(ValueError, match="bytes_as"):
        tfrx.SequenceExampleParser({"id": tfrx.FixedLenFeature([], tfrx.string)}, bytes_as=None)
    assert "views" in repr(tfrx.ExampleParser(SPEC, bytes_as="views"))


def test_errors_are_the_same_with_views():
    spec = {"missing": tfrx.FixedLenFeature([], tfrx.string)}
    for bytes_as in ("bytes", "views"):
        with pytest.raises(tfrx.errors.ParseError, match="'missing' is required but missing in record 0"):
            tfrx.parse_example(RECORDS, spec, bytes_as=bytes_as)


def test_bytes_array_indexing_and_conversions():
    arr = BytesArray.from_values([[b"a", b"bc"], [b"", b"a long value of some bytes"]])
    assert arr.shape == (2, 2) and arr.ndim == 2 and arr.size == 4 and arr.dtype == object and len(arr) == 2
    assert arr.nbytes == 29
    assert arr[1, 1] == b"a long value of some bytes"
    assert arr[0].tolist() == [b"a", b"bc"]
    assert arr.reshape(-1)[1:].tolist() == [b"bc", b"", b"a long value of some bytes"]
    assert arr.reshape(4)[np.array([3, 0])].tolist() == [b"a long value of some bytes", b"a"]
    assert list(arr.reshape(4)) == [b"a", b"bc", b"", b"a long value of some bytes"]
    v = arr.view((0, 1))
    assert v.tobytes() == b"bc" and not v.flags.writeable and np.shares_memory(v, arr.data)
    assert np.asarray(arr).tolist() == arr.tolist()
    assert "BytesArray([[b'a', b'bc']" in repr(arr)
    with pytest.raises(ValueError, match="outside"):
        BytesArray(np.zeros(3, np.uint8), [0, 2], [1, 2])
    with pytest.raises(ValueError, match="differ in shape"):
        BytesArray(np.zeros(3, np.uint8), [0, 1], [1])


def test_packed_is_a_view_when_the_values_lie_end_to_end():
    arr = BytesArray(np.frombuffer(b"__abcdef", np.uint8), [2, 4, 5], [2, 1, 3])
    values, offsets = arr.packed()
    assert np.shares_memory(values, arr.data)
    assert values.tobytes() == b"abcdef" and offsets.tolist() == [0, 2, 3, 6]
    scattered = arr[np.array([2, 0])]
    values, offsets = scattered.packed()
    assert values.tobytes() == b"defab" and offsets.tolist() == [0, 3, 5]
    empty = arr[:0].packed()
    assert empty[0].size == 0 and empty[1].tolist() == [0]


def test_to_arrow_is_binary_view_over_the_buffer(monkeypatch):
    pa = pytest.importorskip("pyarrow")
    from tfrx.parsing import _bytes_array as bytes_array

    values = [b"", b"short", b"exactly12byt", b"thirteen byte", b"a much longer value " * 10]
    arr = BytesArray.from_values(values)
    out = arr.to_arrow()
    out.validate(full=True)
    assert out.to_pylist() == values
    if hasattr(pa, "binary_view"):
        assert out.type == pa.binary_view()
        assert out.buffers()[2].address == arr.data.ctypes.data  # the values are not copied
    monkeypatch.setattr(bytes_array, "_MAX_VIEW_BUFFER", 4)
    big = arr.to_arrow()
    assert big.type == pa.large_binary() and big.to_pylist() == values


def test_arrow_tables_of_views_match_the_default():
    pytest.importorskip("pyarrow")
    from tfrx import arrow

    spec = {k: SPEC[k] for k in ("s", "d", "pair", "t", "n")}
    batch = _batch(RECORDS)
    want = arrow.to_record_batch(tfrx.parse_example(batch, spec))
    got = arrow.to_record_batch(tfrx.parse_example(batch, spec, bytes_as="views"))
    assert got.to_pylist() == want.to_pylist()
    again = tfrx.parse_example(arrow.to_examples(got), spec)
    _assert_same(_plain(tfrx.parse_example(batch, spec)), again)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.binary(max_size=40), max_size=4), min_size=1, max_size=12))
def test_views_round_trip_any_bytes(rows):
    records = [tfrx.make_example({"v": row}, kinds={"v": "bytes"}).SerializeToString() for row in rows]
    spec = {"v": tfrx.RaggedFeature(tfrx.string)}
    for form in (records, _batch(records)):
        got = tfrx.parse_example(form, spec, bytes_as="views")["v"]
        assert got.to_list() == rows


@pytest.mark.parametrize("threads", [1, 3])
def test_large_values_are_copied_whole(threads):
    # Values of 16 KiB and more are copied after the objects are made, past
    # the cache when a batch holds 2 MiB or more, on several threads when asked.
    rng = np.random.default_rng(7)
    values = [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes() for n in rng.integers(16_000, 400_000, 24)]
    values[3] = values[3][:16383]  # just under the deferred size
    records = [tfrx.make_example({"blob": [v], "n": [i]}).SerializeToString() for i, v in enumerate(values)]
    spec = {"blob": tfrx.FixedLenFeature([], tfrx.string), "n": tfrx.FixedLenFeature([], tfrx.int64)}
    for form in (records, _batch(records)):
        out = tfrx.parse_example(form, spec, num_parallel_calls=threads)
        assert out["blob"].tolist() == values
        assert out["n"].tolist() == list(range(24))


def test_views_kept_across_a_pipeline_stay_valid(tmp_path):
    # Readers and the batch-native shuffle reuse their buffers once nothing
    # refers to them: views hold the buffer, so every batch kept to the end
    # still reads its own values.
    path = str(tmp_path / "v.tfrecord")
    values = [b"value %d " % i * (1 + i % 7) for i in range(300)]
    with tfrx.TFRecordWriter(path) as w:
        for i, v in enumerate(values):
            w.write(tfrx.make_example({"b": [v], "n": [i]}).SerializeToString())
    spec = {"b": tfrx.FixedLenFeature([], tfrx.string), "n": tfrx.FixedLenFeature([], tfrx.int64)}
    views = tfrx.ExampleParser(spec, bytes_as="views")
    pipelines = [
        tfrx.TFRecordDataset(path).batch(8).parse(views),
        tfrx.TFRecordDataset(path).shuffle(50, seed=3).batch(8).parse(views),
        (views.parse(b) for b in tfrx.RecordReader(path).iter_batches(8)),
    ]
    for pipeline in pipelines:
        kept = list(pipeline)
        seen = []
        for out in kept:
            assert isinstance(out["b"], BytesArray)
            assert out["b"].tolist() == [values[int(n)] for n in out["n"]]
            seen.extend(int(n) for n in out["n"])
        assert sorted(seen) == list(range(300))
