"""MultiBufferRecordBatch: records in runs in several buffers, parsed where they lie, gathered on first use."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
import tfrx.data._parallel_reads as parallel_reads
from tfrx.data import TFRecordDataset
from tfrx.io._batch import MultiBufferRecordBatch

SPEC = {
    "s": tfrx.VarLenFeature(tfrx.string),
    "d": tfrx.FixedLenFeature([], tfrx.string, default_value=b"none"),
    "n": tfrx.FixedLenFeature([], tfrx.int64, default_value=-1),
    "f": tfrx.VarLenFeature(tfrx.float32),
}


def _record(i: int, words: list[bytes]) -> bytes:
    features: dict = {"s": words, "n": [i], "f": [i / 2] * (i % 3)}
    if i % 2:
        features["d"] = [b"d%d" % i]
    return tfrx.make_example(features, kinds={"s": "bytes", "f": "float"}).SerializeToString()


def _scatter(records: list[bytes], nbufs: int, draw) -> MultiBufferRecordBatch:
    """The records laid out in ``nbufs`` buffers, with gaps and in an order unrelated to theirs."""
    owner = [draw(i) % nbufs for i in range(len(records))]
    layouts: list[list[int]] = [[] for _ in range(nbufs)]
    for i, k in enumerate(owner):
        layouts[k].insert(draw(i + 7) % (len(layouts[k]) + 1), i)
    buffers, starts = [], np.zeros(len(records), np.int64)
    for k, ids in enumerate(layouts):
        out = bytearray(b"\xff" * (k + 1))  # a gap before the first record
        for i in ids:
            starts[i] = len(out)
            out += records[i] + b"\xee" * (i % 3)  # and between records
        buffers.append(np.frombuffer(bytes(out), np.uint8))
    lengths = np.array([len(r) for r in records], np.int64)
    return MultiBufferRecordBatch(buffers, np.array(owner, np.int64), starts, lengths)


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, tfrx.SparseArray):
            assert np.array_equal(x.indices, y.indices) and np.array_equal(x.dense_shape, y.dense_shape)
            x, y = x.values, y.values
        if isinstance(x, tfrx.BytesArray):
            x, y = x.to_numpy(), y.to_numpy()
        assert x.dtype == y.dtype and x.shape == y.shape and x.tolist() == y.tolist()


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.lists(st.binary(max_size=40), max_size=4), max_size=40),
    nbufs=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    threads=st.sampled_from([1, 3]),
    views=st.booleans(),
)
def test_parses_as_the_records_themselves(words, nbufs, seed, threads, views):
    records = [_record(i, w) for i, w in enumerate(words)]
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, 1 << 30, len(records) + 8)
    batch = _scatter(records, nbufs, lambda i: int(draws[i]))
    parser = tfrx.ExampleParser(SPEC, bytes_as="views" if views else "bytes")
    _same(parser.parse(batch, num_parallel_calls=threads), parser.parse(records, num_parallel_calls=threads))
    assert batch.nbytes == sum(map(len, records))
    # everything else sees an ordinary RecordBatch: the records gathered end to end on first use
    assert list(batch) == records and batch.is_contiguous() and batch.data.tobytes() == b"".join(records)
    assert pickle.loads(pickle.dumps(batch)).to_list() == records
    if len(records) > 2:
        assert batch[1:3].to_list() == records[1:3]


def test_sequence_examples_parse_where_they_lie():
    records = [
        tfrx.make_sequence_example(
            {"id": [i]}, {"tok": [[b"a"] * i, [b"b"]]}, kinds={"tok": "bytes"}
        ).SerializeToString()
        for i in range(6)
    ]
    batch = _scatter(records, 3, lambda i: i * 7 + 1)
    parser = tfrx.SequenceExampleParser(
        {"id": tfrx.FixedLenFeature([], tfrx.int64)}, {"tok": tfrx.RaggedFeature(tfrx.string)}
    )
    got, want = parser.parse(batch), parser.parse(records)
    for part in (0, 1):
        for k in want[part]:
            assert repr(got[part][k]) == repr(want[part][k])


def test_bad_spans_raise_instead_of_reading_outside_the_buffers():
    buffers = [np.frombuffer(b"abcdef", np.uint8), np.frombuffer(b"xyz", np.uint8)]
    core = tfrx.ExampleParser({"n": tfrx.VarLenFeature(tfrx.int64)})._core
    one = np.ones(1, np.int64)
    with pytest.raises(IndexError, match="parse_spans: buffer index out of range"):
        core.parse_spans(buffers, one * 2, one * 0, one, 1)
    with pytest.raises(IndexError, match="buffer index out of range"):
        core.parse_spans(buffers, -one, one * 0, one, 1)
    with pytest.raises(ValueError, match="parse_spans: a record lies outside its buffer"):
        core.parse_spans(buffers, one, one * 2, one * 2, 1)
    with pytest.raises(ValueError, match="outside its buffer"):
        core.parse_spans(buffers, one * 0, one * 3, -one, 1)
    with pytest.raises(ValueError, match="equal lengths"):
        core.parse_spans(buffers, np.zeros(2, np.int64), one, one, 1)
    with pytest.raises(ValueError, match="equal length"):
        MultiBufferRecordBatch(buffers, np.zeros(2, np.int64), one, one)
    with pytest.raises(IndexError, match="gather_spans: buffer index out of range"):
        MultiBufferRecordBatch(buffers, one * 5, one, one).data  # noqa: B018


def _examples_files(tmp_path, sizes):
    paths = []
    for f, n in enumerate(sizes):
        p = tmp_path / f"ex-{f}.tfrecord"
        with tfrx.TFRecordWriter(str(p)) as w:
            w.write_many([_record(100 * f + i, [b"w" * (i % 5)] * (i % 3)) for i in range(n)])
        paths.append(str(p))
    return paths


@pytest.mark.parametrize("piece", [1, 3, 64])
@pytest.mark.parametrize("reads", [2, 3])
def test_parallel_reads_parse_the_records_in_the_files_pieces(tmp_path, monkeypatch, piece, reads):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", piece)
    files = _examples_files(tmp_path, [7, 2, 9, 4])
    parser = tfrx.ExampleParser(SPEC)
    seen: list[type] = []
    parse = parser.parse

    def recording(batch, **kw):
        seen.append(type(batch))
        return parse(batch, **kw)

    monkeypatch.setattr(parser, "parse", recording)
    records = list(TFRecordDataset(files, num_parallel_reads=reads))
    for size in (1, 4, 11):
        got = list(TFRecordDataset(files, num_parallel_reads=reads).batch(size).parse(parser))
        want = [parse(records[i : i + size]) for i in range(0, len(records), size)]
        assert len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
    if piece < 64:
        assert MultiBufferRecordBatch in seen


def test_a_batch_keeps_the_read_buffers_alive_after_the_iterator_moves_on(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", 2)
    files = _examples_files(tmp_path, [6, 6])
    records = list(TFRecordDataset(files, num_parallel_reads=2))
    batches = list(TFRecordDataset(files, num_parallel_reads=2).record_batches(4))
    assert any(isinstance(b, MultiBufferRecordBatch) for b in batches)
    parser = tfrx.ExampleParser(SPEC)
    for k, b in enumerate(batches):
        _same(parser.parse(b), parser.parse(records[4 * k : 4 * k + 4]))


def test_a_bad_record_is_named_by_its_place_in_the_batch():
    records = [_record(i, [b"x"]) for i in range(5)]
    records[3] = b"\x0a\x05not an example"
    batch = _scatter(records, 2, lambda i: i * 3 + 1)
    with pytest.raises(tfrx.DecodeError, match="record 3 is not a valid serialized Example"):
        tfrx.ExampleParser(SPEC).parse(batch)


def test_the_record_store_copies_a_batchs_records_from_where_they_lie():
    from tfrx import _native

    a = np.frombuffer(b"0123456789", np.uint8)
    b = np.frombuffer(b"abcdefghij", np.uint8)
    store = _native.RecordStore()
    store.add_spans([a, b], np.array([1, 0, 1], np.int64), np.array([2, 5, 0], np.int64), np.array([3, 0, 4], np.int64))
    assert (store.end, store.count, store.nbytes) == (3, 3, 7)
    assert store.take(np.array([2, 0, 1], np.int64)).gather().tobytes() == b"abcdcde"
    for which, span, length, error in ((2, 0, 1, IndexError), (-1, 0, 1, IndexError), (0, 8, 3, ValueError)):
        with pytest.raises(error, match="RecordStore.add_spans"):
            store.add_spans(
                [a, b], np.array([which], np.int64), np.array([span], np.int64), np.array([length], np.int64)
            )
    with pytest.raises(ValueError, match="equal lengths"):
        store.add_spans([a], np.zeros(2, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))
    assert store.end == 3  # (nothing was added by a refused call)


@pytest.mark.parametrize("piece", [1, 3, 64])
def test_a_shuffle_over_parallel_reads_takes_the_records_from_the_files_pieces(tmp_path, monkeypatch, piece):
    from tfrx import _native

    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", piece)
    files = _examples_files(tmp_path, [7, 2, 9, 4])
    added = []
    real = _native.RecordStore

    class Spy:  # records which way each piece entered the store
        def __init__(self, share=None):
            self._store = real(share._store if isinstance(share, Spy) else share)

        def add_spans(self, *args):
            added.append("spans")
            return self._store.add_spans(*args)

        def add(self, *args):
            added.append("buffer")
            return self._store.add(*args)

        def __getattr__(self, name):
            return getattr(self._store, name)

    monkeypatch.setattr(_native, "RecordStore", Spy)
    parser = tfrx.ExampleParser(SPEC)
    for seed in (0, 5):
        # The per-record shuffle (a map between shuffle and batch keeps it off the batch-native path).
        per_record = TFRecordDataset(files, num_parallel_reads=2).shuffle(8, seed=seed).map(bytes).batch(5)
        want = [parser.parse(list(b)) for b in per_record]
        got = list(TFRecordDataset(files, num_parallel_reads=2).shuffle(8, seed=seed).batch(5).parse(parser))
        assert len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
    if piece < 64:
        assert "spans" in added
