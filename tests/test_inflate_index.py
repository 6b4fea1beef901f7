"""Checkpoint indexes of GZIP/ZLIB files (tfrx.io.inflate_index): random reads inflate at most one interval."""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.io.inflate_index import (
    CompressedRandomReader,
    InflateIndex,
    build_inflate_index,
    inflate_index_path,
    load_inflate_index,
)

SPACING = 1 << 16


def _records(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    # Low-entropy payloads compress (deflate blocks of Huffman codes, not stored blocks).
    return [rng.integers(0, 6, size=int(rng.integers(0, 4000)), dtype=np.uint8).tobytes() for _ in range(n)]


def _framed(records: list[bytes]) -> bytes:
    return bytes(tfrx._native.frame_records(records))


def _compress(kind: str, raw: bytes, members: int = 1) -> bytes:
    cuts = np.linspace(0, len(raw), members + 1).astype(int)
    parts = [raw[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
    if kind == "GZIP":
        return b"".join(gzip.compress(p) for p in parts)
    return b"".join(zlib.compress(p) for p in parts)


RECORDS = _records(1500)
RAW = _framed(RECORDS)


@pytest.fixture(params=[("GZIP", 1), ("GZIP", 3), ("ZLIB", 1), ("ZLIB", 2)], ids=lambda p: f"{p[0]}x{p[1]}")
def compressed(request, tmp_path):
    kind, members = request.param
    path = str(tmp_path / f"data.tfrecord.{kind.lower()}")
    with open(path, "wb") as f:
        f.write(_compress(kind, RAW, members))
    index = build_inflate_index(path, spacing=SPACING)
    return path, index


def _max_interval(index: InflateIndex) -> int:
    outs = np.append(index.out_offsets, index.records.file_size)
    return int(np.diff(outs).max())


def test_index_lists_every_record_and_checkpoints(compressed):
    path, index = compressed
    assert index.records.file_size == len(RAW)
    assert len(index.records) == len(RECORDS)
    expected = np.cumsum([0] + [len(r) + 16 for r in RECORDS[:-1]])
    assert np.array_equal(index.records.offsets, expected)
    assert len(index.points) > len(RAW) // (4 * SPACING)  # checkpoints all along the stream
    # The record index tfrx.load_index gives is the same, from the stored checkpoint index.
    assert tfrx.load_index(path) == index.records
    assert os.path.exists(inflate_index_path(path))


def test_random_read_inflates_at_most_one_interval(compressed):
    path, index = compressed
    bound = _max_interval(index)
    rng = np.random.default_rng(1)
    with CompressedRandomReader(path, index) as reader:
        for i in rng.integers(0, len(RECORDS), 60).tolist():
            off, n = int(index.records.offsets[i]), len(RECORDS[i]) + 16
            before = reader.inflated_bytes
            assert reader.read(off, n) == RAW[off : off + n]
            assert reader.inflated_bytes - before <= bound + n
        # Reading from the start costs everything before: the index saves that.
        assert bound < len(RAW) // 4


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(0, len(RECORDS) - 1), min_size=1, max_size=40), st.sampled_from(["GZIP", "ZLIB"]))
def test_random_access_dataset_matches_sequential_reading(tmp_path_factory, indices, kind):
    folder = tmp_path_factory.mktemp("ra")
    path = str(folder / "d.tfrecord")
    with open(path, "wb") as f:
        f.write(_compress(kind, RAW, 2))
    ds = tfrx.RandomAccessDataset(path, cache_dir=str(folder / "cache"))
    sequential = list(tfrx.read_records(path, compression=kind)) if kind == "GZIP" else RECORDS
    assert len(ds) == len(RECORDS)
    assert ds[indices] == [sequential[i] for i in indices]
    assert ds[indices[0]] == sequential[indices[0]]


def test_global_shuffle_reads_every_record_once(tmp_path):
    path = str(tmp_path / "s.tfrecord.gz")
    tfrx.write_records(path, RECORDS[:300], compression="GZIP")
    ds = tfrx.RandomAccessDataset(path)
    assert sorted(ds.shuffle_global(seed=3)) == sorted(RECORDS[:300])


def test_stale_index_is_rebuilt(tmp_path):
    path = str(tmp_path / "a.tfrecord.gz")
    tfrx.write_records(path, RECORDS[:100], compression="GZIP")
    first = load_inflate_index(path)
    assert len(first.records) == 100
    old_place = inflate_index_path(path)
    tfrx.write_records(path, RECORDS[:120], compression="GZIP")  # rewritten: another size and mtime
    assert len(load_inflate_index(path).records) == 120
    assert not os.path.exists(old_place) and os.path.exists(inflate_index_path(path))  # the old one is pruned
    assert len(tfrx.RandomAccessDataset(path)) == 120
    with pytest.raises(tfrx.StaleIndexError, match="stale"):
        stale = str(tmp_path / "old.tfrxzidx")
        with open(stale, "wb") as f:
            f.write(first.to_bytes())
        load_inflate_index(path, index_path=stale)


def test_damaged_index_file_is_rebuilt_or_reported(tmp_path):
    path = str(tmp_path / "a.tfrecord.gz")
    tfrx.write_records(path, RECORDS[:50], compression="GZIP")
    where = inflate_index_path(path)
    build_inflate_index(path)
    blob = bytearray(open(where, "rb").read())
    blob[60] ^= 0xFF
    open(where, "wb").write(bytes(blob))
    with pytest.raises(tfrx.IndexFileError, match="corrupt"):
        load_inflate_index(path, build=False)
    assert len(load_inflate_index(path).records) == 50  # rebuilt


def test_damaged_compressed_data_names_the_byte(tmp_path):
    path = str(tmp_path / "bad.tfrecord.gz")
    blob = bytearray(_compress("GZIP", RAW))
    at = len(blob) // 2
    blob[at : at + 64] = b"\xff" * 64
    open(path, "wb").write(bytes(blob))
    # Either inflate fails (the byte of the file is named) or what it makes breaks the framing (the record).
    with pytest.raises(tfrx.CorruptRecordError, match=r"damaged at byte \d+ of the file|record \d+ at byte") as e:
        build_inflate_index(path)
    if e.value.kind == "compression":
        assert at <= e.value.compressed_offset <= len(blob)
    else:
        assert e.value.record_index is not None and e.value.record_index < len(RECORDS)


def test_damage_after_indexing_is_located_on_read(tmp_path):
    path = str(tmp_path / "late.tfrecord.gz")
    data = _compress("GZIP", RAW)
    open(path, "wb").write(data)
    index = build_inflate_index(path, spacing=SPACING, index_path=str(tmp_path / "ix"))
    k = len(index.points) // 2
    start = int(index.points["inp"][k])
    blob = bytearray(data)
    blob[start : start + 200] = b"\xff" * 200
    open(path, "wb").write(bytes(blob))
    with CompressedRandomReader(path, index) as reader:
        with pytest.raises(tfrx.CorruptRecordError, match=str(path)):
            reader.read(int(index.points["out"][k]), 1 << 15)


def test_truncated_file(tmp_path):
    path = str(tmp_path / "short.tfrecord.zz")
    data = _compress("ZLIB", RAW)
    open(path, "wb").write(data[: len(data) // 2])
    with pytest.raises(tfrx.CorruptRecordError, match="truncated|ends inside"):
        build_inflate_index(path)


def test_checkpoints_given_to_the_native_inflater_are_checked():
    inf = tfrx._native.CheckpointInflater(True)
    with pytest.raises(ValueError, match="invalid inflate checkpoint"):
        inf.start_raw(9, 0, b"")
    with pytest.raises(ValueError, match="invalid inflate checkpoint"):
        inf.start_raw(0, 0, bytes(40000))


def test_uncompressed_file_is_refused(tmp_path):
    path = str(tmp_path / "plain.tfrecord")
    tfrx.write_records(path, RECORDS[:3])
    with pytest.raises(tfrx.CompressedFileError, match="not GZIP or ZLIB"):
        build_inflate_index(path)


def test_viewer_reads_a_local_gzip_file_through_its_checkpoint_index(tmp_path):
    from tfrx.viewer._source import ViewSource

    path = str(tmp_path / "v.tfrecord.gz")
    tfrx.write_records(path, RECORDS, compression="GZIP")
    src = ViewSource(path, index_cache_dir=str(tmp_path / "cache"))
    assert src.total() == len(RECORDS)
    assert not src.shards[0].streamed  # indexed, not streamed from the start
    page = src.read(1400, 5)
    assert [r[3] for r in page] == RECORDS[1400:1405] and [r[2] for r in page] == list(range(1400, 1405))


def test_plan_ranges_splits_an_indexed_compressed_file(tmp_path):
    from tfrx.io.ranges import plan_ranges, read_range

    path = str(tmp_path / "r.tfrecord.gz")
    tfrx.write_records(path, RECORDS, compression="GZIP")
    assert len(plan_ranges([path], num_ranges=4, min_split_bytes=1)) == 1  # no checkpoint index: one range
    tfrx.build_index(path)
    ranges = plan_ranges([path], num_ranges=4, min_split_bytes=1)
    assert len(ranges) == 4 and all(r.exact for r in ranges)
    got = [bytes(b) for r in ranges for batch in read_range(r, batch_size=100) for b in batch]
    assert got == RECORDS  # every record exactly once, in order
    assert [r.first_index for r in ranges] == [0] + list(np.cumsum([r.rows for r in ranges[:-1]]))


@pytest.fixture
def checkpoint_streams(tmp_path, monkeypatch):
    """A GZIP file of RECORDS with its checkpoint index, and the list of every CheckpointStream opened."""
    from tfrx.io import inflate_index

    path = str(tmp_path / "resume.tfrecord.gz")
    tfrx.write_records(path, RECORDS, compression="GZIP")
    index = tfrx.build_index(path)
    streams: list = []
    real = inflate_index.CheckpointStream.__init__

    def keep(self, *args, **kwargs):
        real(self, *args, **kwargs)
        streams.append(self)

    monkeypatch.setattr(inflate_index.CheckpointStream, "__init__", keep)
    return path, index, streams


def test_reader_resumes_a_compressed_file_at_its_checkpoint(checkpoint_streams):
    path, index, streams = checkpoint_streams
    with tfrx.RecordReader(path) as reader:
        for _ in range(1400):
            next(reader)
        state = reader.position
    with tfrx.RecordReader(path, start=state) as resumed:
        assert list(resumed) == RECORDS[1400:]
    # The resumed reader inflated from a checkpoint near record 1400, not the bytes before it.
    assert len(streams) == 1
    start = int(index.offsets[1400])
    bound = index.file_size - start + _max_interval(load_inflate_index(path))
    assert streams[0].reader.inflated_bytes <= bound < index.file_size


def test_dataset_state_resumes_a_compressed_file_at_its_checkpoint(checkpoint_streams):
    path, index, streams = checkpoint_streams
    ds = tfrx.TFRecordDataset(path)
    it = iter(ds)
    for _ in range(1300):
        next(it)
    again = iter(ds)
    again.set_state(it.get_state())
    assert list(again) == RECORDS[1300:]
    # From the checkpoint before record 1300 to the end: at most one interval more than the records read.
    bound = index.file_size - int(index.offsets[1300]) + _max_interval(load_inflate_index(path))
    assert len(streams) == 1 and streams[0].reader.inflated_bytes <= bound < index.file_size


@settings(max_examples=30, deadline=None)
@given(st.binary(min_size=0, max_size=4096), st.integers(0, 7), st.integers(0, 255), st.binary(max_size=32768))
def test_native_inflater_survives_arbitrary_input(data, bits, value, window):
    # The checkpoint and the data are untrusted: every outcome is a status, never a crash.
    for gzip_mode in (True, False):
        inf = tfrx._native.CheckpointInflater(gzip_mode)
        inf.start_raw(bits, value, window)
        out = np.empty(1 << 16, np.uint8)
        step = inf.step(data, out, True)
        assert 0 <= step.consumed <= len(data) and 0 <= step.produced <= len(out)
        inf.start_member()
        step = inf.step(data, out, False)
        assert 0 <= step.consumed <= len(data)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**9), st.integers(1, 255))
def test_a_damaged_byte_is_reported_where_it_is_or_harmless(tmp_path_factory, where, flip):
    folder = tmp_path_factory.mktemp("flip")
    path = str(folder / "f.tfrecord.gz")
    blob = bytearray(_compress("GZIP", _framed(RECORDS[:200])))
    at = where % len(blob)
    blob[at] ^= flip
    open(path, "wb").write(bytes(blob))
    try:
        index = build_inflate_index(path, index_path=str(folder / "ix"))
    except tfrx.CorruptRecordError as e:
        # Located: the byte of the file where inflate failed, or the record whose framing broke.
        assert path in str(e)
        assert e.compressed_offset is not None or e.record_index is not None
        if e.compressed_offset is not None:
            assert e.compressed_offset <= len(blob)
        return
    except tfrx.CompressedFileError:
        assert at < 2  # the gzip magic itself was hit: not a compressed file any more
        return
    # Harmless (a header field such as the mtime): every record still reads back.
    with CompressedRandomReader(path, index) as reader:
        got = reader.read_records(index.records.offsets, index.records.lengths)
    assert [g[12:-4] for g in got] == RECORDS[:200]


_SMALL = _compress("GZIP", _framed(RECORDS[:300]))
_BUILT: list = []  # the file and its index blob, made once


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_damaged_index_file_raises_index_file_error(tmp_path_factory, data):
    if not _BUILT:
        folder = tmp_path_factory.mktemp("ixdamage")
        _BUILT.append(str(folder / "d.tfrecord.gz"))
        open(_BUILT[0], "wb").write(_SMALL)
        _BUILT.append(build_inflate_index(_BUILT[0], spacing=1 << 15, index_path=str(folder / "ix")).to_bytes())
    path, blob = _BUILT[0], bytearray(_BUILT[1])
    cut = data.draw(st.booleans())
    if cut:
        blob = blob[: data.draw(st.integers(0, len(blob) - 1))]
    else:
        at = data.draw(st.integers(0, len(blob) - 1))
        blob[at] ^= data.draw(st.integers(1, 255))
    with pytest.raises(tfrx.IndexFileError):
        InflateIndex.from_bytes(bytes(blob), path=path, index_path="ix")


def test_build_index_verify_checks_data_crcs_of_a_compressed_file(tmp_path):
    raw = bytearray(_framed(RECORDS[:50]))
    raw[int(np.cumsum([len(r) + 16 for r in RECORDS[:20]])[-1]) + 12] ^= 1  # a payload byte of record 20
    path = str(tmp_path / "crc.tfrecord.gz")
    open(path, "wb").write(gzip.compress(bytes(raw)))
    assert len(tfrx.build_index(path)) == 50  # framing only: the length CRCs hold
    with pytest.raises(tfrx.CorruptRecordError, match="data CRC mismatch.*record 20"):
        tfrx.build_index(path, verify=True)
