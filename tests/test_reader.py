"""RecordReader / read_records: sources, batches, positions, compression detection."""

import gzip
import io
import json
import os
import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
from data_helpers import sized_files
from tfrx.io import detect_compression
from tfrx.io._compression import decompressor_backend


def frame(record: bytes) -> bytes:
    length = struct.pack("<Q", len(record))
    return (
        length + struct.pack("<I", tfrx.masked_crc32c(length)) + record + struct.pack("<I", tfrx.masked_crc32c(record))
    )


def write(path, records, compression=None):
    with tfrx.TFRecordWriter(path, compression=compression) as w:
        w.write_many(records)
    return path


RECORDS = [f"record {i}".encode() * (i % 7) for i in range(50)]


# ------------------------------------------------------------------ round trips
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.binary(max_size=2000), max_size=30),
    compression=st.sampled_from(["", "GZIP", "ZLIB"]),
    chunk=st.sampled_from([64, 1000, 1 << 20]),
)
def test_round_trip_small(tmp_path, records, compression, chunk):
    path = write(tmp_path / "x", records, compression)
    with tfrx.RecordReader(path, chunk_size=chunk) as r:
        assert list(r) == records
    batches = list(tfrx.RecordReader(path, chunk_size=chunk).iter_batches(max_records=7))
    assert [rec for b in batches for rec in b] == records


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 6 << 20), min_size=1, max_size=3),
    compression=st.sampled_from(["", "GZIP", "ZLIB"]),
)
def test_round_trip_multi_mib(tmp_path, sizes, compression):
    rng = np.random.default_rng(sum(sizes))
    records = [rng.bytes(n) for n in sizes]
    path = write(tmp_path / "big", records, compression)
    assert list(tfrx.read_records(path)) == records


# ------------------------------------------------------------------ sources
def test_path_kinds_and_globs(tmp_path):
    for i in range(3):
        write(tmp_path / f"part-{i}.tfrecord", [f"{i}-{j}".encode() for j in range(4)])
    expected = [f"{i}-{j}".encode() for i in range(3) for j in range(4)]
    assert list(tfrx.read_records(str(tmp_path / "part-*.tfrecord"))) == expected
    assert list(tfrx.read_records(tmp_path / "part-*.tfrecord")) == expected
    assert list(tfrx.read_records([tmp_path / "part-2.tfrecord", str(tmp_path / "part-0.tfrecord")])) == (
        expected[8:] + expected[:4]
    )
    assert list(tfrx.read_records(f"file://{tmp_path}/part-1.tfrecord")) == expected[4:8]
    with open(tmp_path / "part-0.tfrecord", "rb") as f:
        assert list(tfrx.read_records(f)) == expected[:4]
        assert not f.closed
    assert list(tfrx.read_records(io.BytesIO((tmp_path / "part-1.tfrecord").read_bytes()))) == expected[4:8]


def test_missing_files_raise(tmp_path):
    with pytest.raises(FileNotFoundError):
        tfrx.RecordReader(tmp_path / "nope.tfrecord")
    with pytest.raises(FileNotFoundError):
        tfrx.RecordReader(str(tmp_path / "nope-*.tfrecord"))
    with pytest.raises(TypeError):
        tfrx.RecordReader(42)


def test_local_paths_never_import_fsspec(tmp_path):
    import subprocess
    import sys

    write(tmp_path / "x", [b"a"])
    code = (
        "import sys, tfrx; list(tfrx.read_records(sys.argv[1])); "
        "w = tfrx.TFRecordWriter(sys.argv[1] + '.out'); w.write(b'x'); w.close(); "
        "assert 'fsspec' not in sys.modules"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "x")], check=True, env=env)


def test_fsspec_urls(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    with tfrx.TFRecordWriter("memory://bucket/a-0.tfrecord") as w:
        w.write_many([b"x", b"y"])
    with tfrx.TFRecordWriter("memory://bucket/a-1.tfrecord", compression="gzip") as w:
        w.write(b"z")
    try:
        assert list(tfrx.read_records("memory://bucket/a-*.tfrecord")) == [b"x", b"y", b"z"]
    finally:
        fs.rm("/bucket", recursive=True)


def test_readahead_reaches_a_missing_object_after_the_records_before_it():
    fsspec = pytest.importorskip("fsspec")
    recs = [b"r%d" % i for i in range(100)]
    urls = [f"memory://readahead/p{k}.tfrecord" for k in range(3)]
    tfrx.write_records(urls[0], recs)
    tfrx.write_records(urls[2], recs)
    seen = []
    try:
        with pytest.raises(FileNotFoundError, match="no such object: 'memory://readahead/p1.tfrecord'"):
            for r in tfrx.RecordReader(urls, chunk_size=256, readahead=1024):
                seen.append(r)
        assert seen == recs
        with pytest.raises(ValueError, match="readahead must be >= 0"):
            tfrx.RecordReader(urls, readahead=-1)
    finally:
        fsspec.filesystem("memory").rm("/readahead", recursive=True)


def test_empty_inputs(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    assert list(tfrx.read_records(tmp_path / "empty")) == []
    assert list(tfrx.read_records(tmp_path / "empty", compression="gzip")) == []
    assert list(tfrx.read_records([])) == []
    with tfrx.RecordReader(tmp_path / "empty") as r:
        assert r.read_batch() is None


# ------------------------------------------------------------------ compression
def test_detect_compression():
    raw = frame(b"abc")
    assert detect_compression(raw) == ""
    assert detect_compression(gzip.compress(raw)) == "GZIP"
    assert detect_compression(zlib.compress(raw)) == "ZLIB"
    assert detect_compression(b"") == ""


def test_raw_file_starting_with_gzip_magic_is_raw(tmp_path):
    # A record of length 0x8b1f (35615) starts with the bytes 1f 8b.
    record = b"\x00" * 0x8B1F
    path = write(tmp_path / "magic", [record])
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert list(tfrx.read_records(path)) == [record]


def test_explicit_compression_overrides_detection(tmp_path):
    path = write(tmp_path / "x.gz", RECORDS, "gzip")
    assert list(tfrx.read_records(path, compression="GZIP")) == RECORDS
    with pytest.raises(tfrx.CorruptRecordError):
        list(tfrx.read_records(path, compression=None))
    with pytest.raises(ValueError):
        tfrx.RecordReader(path, compression="lz4")


def test_multi_member_gzip(tmp_path):
    a, b = frame(b"first") + frame(b"second"), frame(b"third")
    (tmp_path / "m.gz").write_bytes(gzip.compress(a) + gzip.compress(b) + b"\x00" * 10)
    assert list(tfrx.read_records(tmp_path / "m.gz")) == [b"first", b"second", b"third"]
    # A member boundary inside a record.
    (tmp_path / "split.gz").write_bytes(gzip.compress(a[:7]) + gzip.compress(a[7:]))
    assert list(tfrx.read_records(tmp_path / "split.gz")) == [b"first", b"second"]


def test_decompressor_backend_is_named():
    assert decompressor_backend() in {"isal", "zlib-ng", "zlib"}


# ------------------------------------------------------------------ batches
def test_batches_own_their_data_and_carry_provenance(tmp_path):
    path = write(tmp_path / "x", RECORDS)
    with tfrx.RecordReader(path, chunk_size=300) as r:
        batches = list(r.iter_batches(max_records=5))
    assert [rec for b in batches for rec in b] == RECORDS
    assert all(b.data.flags.owndata or b.data.base is not None for b in batches)
    assert batches[0].path == str(path)
    first = 0
    raw = path.read_bytes()
    for b in batches:
        assert b.first_index == first
        first += len(b)
        for i, rec in enumerate(b):
            off = int(b.file_offsets[i])
            assert raw[off + 12 : off + 12 + len(rec)] == rec
    # Data of an earlier batch is unchanged after more reading.
    snapshot = [b.to_list() for b in batches]
    assert [b.to_list() for b in batches] == snapshot


def test_read_batch_limits(tmp_path):
    path = write(tmp_path / "x", [b"x" * 100] * 10)
    with tfrx.RecordReader(path) as r:
        assert len(r.read_batch(max_records=3)) == 3
        assert len(r.read_batch(max_bytes=250)) == 2
        assert len(r.read_batch(max_bytes=1)) == 1
        assert len(r.read_batch(max_records=0)) == 0
        assert len(r.read_batch()) == 4
        assert r.read_batch() is None


def test_batches_never_span_files(tmp_path):
    paths = [write(tmp_path / f"{i}", [bytes([i])] * 3) for i in range(3)]
    with tfrx.RecordReader(paths) as r:
        batches = list(r.iter_batches())
    assert [b.path for b in batches] == [str(p) for p in paths]


def test_iteration_then_batches_continue_in_order(tmp_path):
    path = write(tmp_path / "x", RECORDS)
    with tfrx.RecordReader(path) as r:
        head = [next(r) for _ in range(5)]
        rest = [rec for b in r.iter_batches(max_records=4) for rec in b]
    assert head + rest == RECORDS


# ------------------------------------------------------------------ positions
@pytest.mark.parametrize("compression", ["", "GZIP"])
def test_resume_from_every_position(tmp_path, compression):
    paths = [write(tmp_path / f"{i}", RECORDS[i * 10 : i * 10 + 10], compression) for i in range(3)]
    expected = RECORDS[:30]
    r = tfrx.RecordReader(paths, chunk_size=128)
    positions = []
    for _ in expected:
        positions.append(r.position)
        next(r)
    positions.append(r.position)
    assert list(r) == []
    for k, pos in enumerate(positions):
        state = json.loads(json.dumps(pos.to_dict()))
        with tfrx.RecordReader(paths, start=state) as r2:
            assert list(r2) == expected[k:]
    assert positions[0] == tfrx.RecordPosition(0, 0, 0)
    assert positions[10].file_index == 1 or positions[10].record_index == 10


def test_seek_and_reset(tmp_path):
    path = write(tmp_path / "x", RECORDS)
    with tfrx.RecordReader(path) as r:
        r.read_batch(max_records=20)
        pos = r.position
        assert pos.record_index == 20
        tail = list(r)
        r.seek(pos)
        assert list(r) == tail == RECORDS[20:]
        r.reset()
        assert list(r) == RECORDS


@pytest.mark.parametrize("compression", ["", "ZLIB"])
def test_byte_ranges(tmp_path, compression):
    path = write(tmp_path / "x", RECORDS, compression)
    offsets = [0]
    for rec in RECORDS:
        offsets.append(offsets[-1] + 16 + len(rec))
    lo, hi = offsets[10], offsets[20]
    with tfrx.RecordReader(path, start_offset=lo, end_offset=hi) as r:
        assert list(r) == RECORDS[10:20]
    # An end inside a record still includes it (headers at or after end are excluded).
    with tfrx.RecordReader(path, start_offset=lo, end_offset=hi - 1) as r:
        assert list(r) == RECORDS[10:20]
    with tfrx.RecordReader(path, end_offset=offsets[1]) as r:
        assert list(r) == RECORDS[:1]
    with pytest.raises(ValueError):
        tfrx.RecordReader([path, path], start_offset=0)


def test_closed_reader_raises(tmp_path):
    r = tfrx.RecordReader(write(tmp_path / "x", [b"a"]))
    r.close()
    with pytest.raises(ValueError):
        r.read_batch()


@pytest.mark.parametrize("compression", ["", "GZIP"])
@pytest.mark.parametrize("chunk", [64, 1000, 8192])
def test_exact_batches_are_whole_across_chunks(tmp_path, compression, chunk):
    rng = np.random.default_rng(3)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 3000, 300)]
    paths = [write(tmp_path / "a", records[:170], compression), write(tmp_path / "b", records[170:], compression)]
    for size, max_bytes in ((7, None), (64, None), (1000, None), (50, 20_000)):
        with tfrx.RecordReader(paths, chunk_size=chunk) as r:
            batches = list(r.iter_batches(size, max_bytes, exact=True))
        assert [x for b in batches for x in b] == records
        for b in batches:  # short only where a file ends or max_bytes is reached
            ends_file = b.first_index + len(b) in (170, 130)
            assert len(b) == size or ends_file or (max_bytes and b.nbytes + 3000 > max_bytes), (size, len(b))
            assert len(b) <= size


def test_exact_batches_resume_and_hold_their_data(tmp_path):
    records = [bytes([i % 251]) * (100 + i) for i in range(400)]
    path = write(tmp_path / "x", records)
    kept = []
    with tfrx.RecordReader(path, chunk_size=4096) as r:
        kept.append(r.read_batch(33, exact=True))
        position = r.position
        rest = list(r.iter_batches(33, exact=True))
    assert [len(b) for b in [kept[0], *rest]] == [33] * 12 + [4]
    with tfrx.RecordReader(path, chunk_size=4096, start=position) as r:
        assert [x for b in r.iter_batches(33, exact=True) for x in b] == records[33:]
    # Buffers of closed readers serve the next readers, but never one a batch still holds.
    with tfrx.RecordReader(path, chunk_size=4096) as r:
        for b in r.iter_batches(50, exact=True):
            pass
    assert kept[0].to_list() == records[:33]
    assert [x for b in rest for x in b] == records[33:]


@pytest.mark.parametrize("compression", ["", "GZIP"])
def test_memory_stays_bounded_by_the_chunk(tmp_path, compression):
    import tracemalloc

    rng = np.random.default_rng(5)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 40_000, 600)]  # ~12 MB
    path = write(tmp_path / "x", records, compression)
    tracemalloc.start()
    try:
        n = 0
        with tfrx.RecordReader(path, chunk_size=256 << 10) as r:
            for batch in r.iter_batches():
                n += len(batch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == len(records)
    assert peak < 4 << 20  # a few chunks, not the 12 MB file


def test_a_record_larger_than_the_chunk(tmp_path):
    big = bytes(range(256)) * 4000  # 1 MB
    path = write(tmp_path / "x", [b"a", big, b"b"])
    with tfrx.RecordReader(path, chunk_size=1000) as r:
        assert list(r) == [b"a", big, b"b"]


def test_text_mode_files_are_refused(tmp_path):
    path = write(tmp_path / "x", [b"a"])
    with open(path) as f, pytest.raises(TypeError, match="binary"):
        list(tfrx.read_records(f))
    with open(tmp_path / "y", "w") as f, pytest.raises(TypeError, match="binary"):
        tfrx.TFRecordWriter(f)


def test_mmap_mode(tmp_path):
    rng = np.random.default_rng(9)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 5000, 300)]
    path = write(tmp_path / "x", records)
    with tfrx.RecordReader(path, use_mmap=True, chunk_size=10_000) as r:
        batches = list(r.iter_batches())
    assert len(batches) > 10  # chunk-sized batches, not one for the whole file
    assert [rec for b in batches for rec in b] == records  # still valid after close
    assert not batches[0].data.flags.writeable
    offsets = batches[3].file_offsets
    with tfrx.RecordReader(path, use_mmap=True, start_offset=int(offsets[0]), end_offset=int(offsets[-1]) + 1) as r:
        assert list(r) == batches[3].to_list()
    with tfrx.RecordReader(path, use_mmap=True) as r:
        next(r)
        pos = r.position
    with tfrx.RecordReader(path, use_mmap=True, start=pos) as r:
        assert list(r) == records[1:]
    # Compressed files and file objects are read normally.
    gz = write(tmp_path / "x.gz", records, "gzip")
    assert list(tfrx.RecordReader(gz, use_mmap=True)) == records
    with open(path, "rb") as f:
        assert list(tfrx.RecordReader(f, use_mmap=True)) == records
    (tmp_path / "empty").write_bytes(b"")
    assert list(tfrx.RecordReader(tmp_path / "empty", use_mmap=True)) == []


def test_mmap_mode_damage(tmp_path):
    good = [b"a" * 100, b"b" * 200]
    raw = b"".join(frame(r) for r in good)
    path = tmp_path / "bad"
    path.write_bytes(raw + b"garbage!" + frame(b"c") + frame(b"d")[:-3])
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.RecordReader(path, use_mmap=True))
    assert info.value.offset == len(raw)
    with tfrx.RecordReader(path, use_mmap=True, on_error="skip") as r:
        assert list(r) == good + [b"c"]
        assert r.skipped_records == 2 and r.skipped_bytes == 8 + len(frame(b"d")) - 3


def test_position_survives_close(tmp_path):
    path = write(tmp_path / "x", RECORDS)
    r = tfrx.RecordReader(path)
    r.read_batch(max_records=7)
    pos = r.position
    r.close()
    assert r.position == pos == tfrx.RecordPosition(0, pos.offset, 7)
    with tfrx.RecordReader(path, start=pos) as r2:
        assert list(r2) == RECORDS[7:]


# ---------------------------------------------------------------- stride=(n, i): what shard(n, i) reads


@pytest.mark.parametrize("size", [40, 20_000])  # buffered scans, and headers alone read
def test_a_strided_reader_keeps_every_nth_record_across_files(tmp_path, size):
    paths, records = sized_files(tmp_path, [[size] * 7, [], [size] * 5, [size + 1] * 9])
    for n, i in [(1, 0), (2, 1), (3, 0), (3, 2), (5, 4), (30, 7)]:
        with tfrx.RecordReader(paths, stride=(n, i)) as r:
            assert list(r) == records[i::n]
        with tfrx.RecordReader(paths, stride=(n, i)) as r:
            batches = list(r.iter_batches(2, exact=True))
        assert [x for b in batches for x in b] == records[i::n]
        # each record keeps its index in its file
        names = [(b.path, b.record_index(k)) for b in batches for k in range(len(b))]
        assert [rec.split(b"-")[:2] for rec in records[i::n]] == [
            [str(paths.index(p)).encode(), str(k).encode()] for p, k in names
        ]


@pytest.mark.parametrize("size", [40, 20_000])
def test_a_strided_reader_resumes_from_its_position_and_stride(tmp_path, size):
    paths, records = sized_files(tmp_path, [[size] * 6, [size] * 5])
    want = records[1::3]
    for taken in range(len(want) + 1):
        with tfrx.RecordReader(paths, stride=(3, 1)) as r:
            got = [next(r) for _ in range(taken)]
            pos, stride = r.position, r.stride
        with tfrx.RecordReader(paths, start=pos, stride=stride) as r:
            assert got + list(r) == want
    with tfrx.RecordReader(paths, stride=(3, 1)) as r:
        first = r.read_batch(2, exact=True)
        pos, stride = r.position, r.stride
    with tfrx.RecordReader(paths, start=pos, stride=stride) as r:
        assert list(first) + list(r) == want


def test_stride_is_checked():
    with pytest.raises(ValueError, match="stride"):
        tfrx.RecordReader([], stride=(0, 0))
    with pytest.raises(ValueError, match="stride"):
        tfrx.RecordReader([], stride=(3, 3))
    with pytest.raises(TypeError, match="stride"):
        tfrx.RecordReader([], stride=3)


@pytest.mark.parametrize("how", [{"compression": "GZIP"}, {"use_mmap": True}])
@pytest.mark.parametrize("size", [40, 20_000])
def test_a_strided_reader_of_compressed_or_mapped_files(tmp_path, how, size):
    recs = [f"{r}-".encode().ljust(size, b"y") for r in range(11)]
    path = str(tmp_path / "f.tfrecord")
    with tfrx.TFRecordWriter(path, options=how.get("compression")) as w:
        w.write_many(recs)
    for n, i in [(2, 0), (3, 2), (4, 1)]:
        with tfrx.RecordReader(path, stride=(n, i), **how) as r:
            assert list(r) == recs[i::n]
        assert list(tfrx.TFRecordDataset(path).shard(n, i)) == recs[i::n]
