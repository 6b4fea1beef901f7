"""Damaged input: every problem raises CorruptRecordError naming where; skip/warn recover."""

import gzip
import struct
import tracemalloc
import warnings
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.io import CorruptRecordWarning


def frame(record: bytes) -> bytes:
    length = struct.pack("<Q", len(record))
    return (
        length + struct.pack("<I", tfrx.masked_crc32c(length)) + record + struct.pack("<I", tfrx.masked_crc32c(record))
    )


GOOD = [b"alpha" * 10, b"beta" * 20, b"gamma" * 30]
BEFORE = b"".join(frame(r) for r in GOOD)  # 3 good records first
AFTER = [b"delta" * 5, b"epsilon"]
AFTER_BYTES = b"".join(frame(r) for r in AFTER)


def damaged(tmp_path, middle: bytes, name="bad.tfrecord"):
    path = tmp_path / name
    path.write_bytes(BEFORE + middle + AFTER_BYTES)
    return path


def bad_length_crc():
    f = bytearray(frame(b"zeta" * 8))
    f[3] ^= 0x40
    return bytes(f)


def bad_data_crc():
    f = bytearray(frame(b"eta" * 8))
    f[20] ^= 0x01
    return bytes(f)


@pytest.mark.parametrize(
    "middle,kind",
    [(bad_length_crc(), "length_crc"), (bad_data_crc(), "data_crc"), (b"\x17" * 40, "length_crc")],
)
@pytest.mark.parametrize("chunk", [64, 1 << 20])
def test_damage_in_the_middle(tmp_path, middle, kind, chunk):
    path = damaged(tmp_path, middle)
    got = []
    with pytest.raises(tfrx.CorruptRecordError) as info:
        for rec in tfrx.RecordReader(path, chunk_size=chunk):
            got.append(rec)
    assert got == GOOD  # records before the damage were delivered
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, tfrx.TfrxError)
    assert (err.kind, err.record_index, err.offset, err.path) == (kind, 3, len(BEFORE), str(path))
    msg = str(err)
    assert str(path) in msg and "record 3" in msg and f"byte {len(BEFORE)}" in msg
    assert 'on_error="skip"' in msg
    assert f"0x{err.expected:08x}" in msg and f"0x{err.actual:08x}" in msg

    with tfrx.RecordReader(path, on_error="skip", chunk_size=chunk) as r:
        assert list(r) == GOOD + AFTER
        assert r.skipped_records == 1
        assert r.skipped_bytes == len(middle)
        assert r.stats.errors[0].kind == kind

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert list(tfrx.read_records(path, on_error="warn")) == GOOD + AFTER
    assert [w.category for w in caught] == [CorruptRecordWarning]
    assert "record 3" in str(caught[0].message)


def test_verify_false_skips_data_crc_only(tmp_path):
    path = damaged(tmp_path, bad_data_crc())
    assert len(list(tfrx.read_records(path, verify=False))) == 6
    path = damaged(tmp_path, bad_length_crc(), "len.tfrecord")
    with pytest.raises(tfrx.CorruptRecordError):
        list(tfrx.read_records(path, verify=False))


@pytest.mark.parametrize("cut", [1, 5, 11, 12, 13, 30])
def test_truncated_header_or_body(tmp_path, cut):
    tail = frame(b"theta" * 5)[:cut]
    path = tmp_path / "t.tfrecord"
    path.write_bytes(BEFORE + tail)
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    err = info.value
    assert (err.kind, err.record_index, err.offset) == ("truncated", 3, len(BEFORE))
    assert err.actual == cut
    assert "truncated record" in str(err)
    with tfrx.RecordReader(path, on_error="skip") as r:
        assert list(r) == GOOD
        assert (r.skipped_records, r.skipped_bytes) == (1, cut)


@pytest.mark.parametrize("compressed", [False, True])
def test_bogus_huge_length_costs_no_memory(tmp_path, compressed):
    length = struct.pack("<Q", 1 << 60)
    body = BEFORE + length + struct.pack("<I", tfrx.masked_crc32c(length)) + b"x" * 100
    path = tmp_path / "huge"
    path.write_bytes(gzip.compress(body) if compressed else body)
    tracemalloc.start()
    try:
        with pytest.raises(tfrx.CorruptRecordError) as info:
            list(tfrx.read_records(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    assert info.value.kind == "bogus_length" and info.value.offset == len(BEFORE)
    assert "1152921504606846976" in str(info.value)
    with tfrx.RecordReader(path, on_error="skip") as r:
        assert list(r) == GOOD
        assert r.skipped_bytes == 112


def test_corrupt_record_between_resyncs_keeps_later_records(tmp_path):
    # Two separate damaged regions: each is one skipped region.
    path = tmp_path / "two.tfrecord"
    path.write_bytes(frame(b"a") + bad_data_crc() + frame(b"b") + b"junk" + frame(b"c"))
    with tfrx.RecordReader(path, on_error="skip", chunk_size=32) as r:
        assert list(r) == [b"a", b"b", b"c"]
        assert r.skipped_records == 2
        assert r.skipped_bytes == len(bad_data_crc()) + 4


def test_garbage_file(tmp_path):
    path = tmp_path / "garbage"
    path.write_bytes(b"this is not a TFRecord file at all" * 100)
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    assert info.value.record_index == 0 and info.value.offset == 0
    with tfrx.RecordReader(path, on_error="skip") as r:
        assert list(r) == []
        assert r.skipped_bytes == 3400


@pytest.mark.parametrize(
    ("content", "looks"),
    [
        (b"this is not a TFRecord file at all\n" * 100, "it looks like text"),
        (b"\x28\xb5\x2f\xfd" + bytes(range(256)) * 4, "it looks like a zstd-compressed file"),
        (b"PAR1" + bytes(range(256)), "it looks like a Parquet file"),
        (bytes(range(255, -1, -1)) * 8, ""),
    ],
)
def test_a_file_that_is_not_tfrecord_says_so_instead_of_advising_skip(tmp_path, content, looks):
    path = tmp_path / "data.tfrecord"
    path.write_bytes(content)
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    message = str(info.value)
    assert message.startswith(f"{str(path)!r} is not a TFRecord file: its first 12 bytes are not a record header")
    assert "no valid record header starts anywhere in it" in message and looks in message
    assert 'pass on_error="skip"' not in message and 'on_error="skip" would read no record from it' in message
    assert (info.value.kind, info.value.record_index, info.value.offset) == ("length_crc", 0, 0)


def test_a_tfrecord_file_with_a_damaged_first_header_still_advises_skip(tmp_path):
    path = tmp_path / "data.tfrecord"
    data = bytearray(frame(b"a" * 10) + frame(b"b"))
    data[0] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    assert str(info.value).startswith(f"length CRC mismatch in {str(path)!r}, record 0 at byte 0")
    assert 'pass on_error="skip"' in str(info.value)
    with tfrx.RecordReader(path, on_error="skip") as r:
        assert list(r) == [b"b"]


def test_a_start_too_long_to_search_whole_keeps_the_skip_advice_as_a_condition(tmp_path):
    path = tmp_path / "data.tfrecord"
    first = bytearray(frame(b"x" * (5 << 20)))
    first[0] ^= 1
    path.write_bytes(bytes(first) + frame(b"y"))
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    message = str(info.value)
    assert "no valid record header starts in its first" in message
    assert 'if it is a TFRecord file whose start is damaged, pass on_error="skip"' in message
    with tfrx.RecordReader(path, on_error="skip") as r:
        assert list(r) == [b"y"]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_truncated_compressed_stream(tmp_path, compression):
    raw = b"".join(frame(bytes([i]) * 2000) for i in range(50))
    data = gzip.compress(raw) if compression == "GZIP" else zlib.compress(raw)
    path = tmp_path / "cut"
    path.write_bytes(data[: len(data) * 2 // 3])
    got = []
    with pytest.raises(tfrx.CorruptRecordError) as info:
        for rec in tfrx.read_records(path):
            got.append(rec)
    assert info.value.kind == "compression"
    assert "truncated" in str(info.value) and str(path) in str(info.value)
    assert got == [bytes([i]) * 2000 for i in range(len(got))]
    with tfrx.RecordReader(path, on_error="skip") as r:
        assert list(r) == got
        assert r.skipped_records == 1


def test_corrupt_compressed_stream(tmp_path):
    raw = b"".join(frame(bytes([i]) * 100) for i in range(20))
    data = bytearray(gzip.compress(raw))
    data[len(data) // 2] ^= 0xFF
    data[len(data) // 2 + 1] ^= 0xFF
    path = tmp_path / "bad.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    assert info.value.kind in {"compression", "data_crc", "length_crc"}
    assert str(path) in str(info.value)


def test_on_error_is_validated(tmp_path):
    with pytest.raises(ValueError):
        tfrx.RecordReader([], on_error="ignore")


def test_warn_mode_on_a_truncated_compressed_stream(tmp_path):
    raw = b"".join(frame(bytes([i]) * 3000) for i in range(30))
    data = gzip.compress(raw)
    path = tmp_path / "cut.gz"
    path.write_bytes(data[: len(data) // 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tfrx.RecordReader(path, on_error="warn") as r:
            got = list(r)
    assert got == [bytes([i]) * 3000 for i in range(len(got))]
    assert len(caught) == 1 and "truncated" in str(caught[0].message)


def test_resume_after_skipped_damage(tmp_path):
    path = damaged(tmp_path, bad_data_crc())
    with tfrx.RecordReader(path, on_error="skip") as r:
        first = [next(r) for _ in range(4)]
        pos = r.position
    assert first == GOOD + AFTER[:1]
    with tfrx.RecordReader(path, on_error="skip", start=pos) as r:
        assert list(r) == AFTER[1:]
        assert r.skipped_records == 0


def test_an_error_is_raised_again_not_stepped_over(tmp_path):
    bad = damaged(tmp_path, bad_data_crc())
    good = tmp_path / "good.tfrecord"
    good.write_bytes(frame(b"next file"))
    r = tfrx.RecordReader([bad, good])
    assert [next(r) for _ in range(3)] == GOOD
    for _ in range(2):
        with pytest.raises(tfrx.CorruptRecordError) as info:
            next(r)
        assert info.value.record_index == 3
    # The position names the damaged record; reading on from there is the caller's choice.
    assert r.position == tfrx.RecordPosition(0, len(BEFORE), 3)
    with tfrx.RecordReader([bad, good], start=r.position, on_error="skip") as r2:
        assert list(r2) == AFTER + [b"next file"]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_garbage_after_the_compressed_stream(tmp_path, compression):
    raw = frame(b"only")
    data = gzip.compress(raw) if compression == "GZIP" else zlib.compress(raw)
    path = tmp_path / "trailing"
    path.write_bytes(data + b"not compressed data")
    got = []
    with pytest.raises(tfrx.CorruptRecordError) as info:
        for rec in tfrx.read_records(path):
            got.append(rec)
    assert got == [b"only"] and info.value.kind == "compression"


def test_compressed_damage_offset_is_in_the_uncompressed_stream(tmp_path):
    raw = b"".join(frame(bytes([i]) * 1000) for i in range(10))
    path = tmp_path / "t.gz"
    path.write_bytes(gzip.compress(raw) + b"junk")
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    assert info.value.offset == len(raw)
    assert info.value.record_index == 10


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.binary(min_size=0, max_size=300), min_size=1, max_size=15),
    data=st.data(),
    chunk=st.sampled_from([64, 4096]),
    use_mmap=st.booleans(),
)
def test_skip_keeps_every_untouched_record(tmp_path, records, data, chunk, use_mmap):
    frames = [frame(r) for r in records]
    buf = bytearray(b"".join(frames))
    lo = data.draw(st.integers(0, len(buf) - 1))
    hi = data.draw(st.integers(lo + 1, min(len(buf), lo + 40)))
    for i in range(lo, hi):
        buf[i] ^= 0xA5
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(buf))
    ends = np.cumsum([len(f) for f in frames])
    starts = ends - [len(f) for f in frames]
    untouched = [r for r, s, e in zip(records, starts, ends) if e <= lo or s >= hi]
    with tfrx.RecordReader(path, on_error="skip", chunk_size=chunk, use_mmap=use_mmap) as r:
        got = list(r)
        assert r.skipped_records >= 1
    assert got == untouched


def test_records_after_a_data_crc_error_keep_their_true_indices(tmp_path):
    frames = [bytearray(frame(bytes([i]) * 50)) for i in range(6)]
    frames[1][20] ^= 0xFF  # damage record 1's data: its header still validates
    frames[4][20] ^= 0xFF
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(b"".join(frames))
    seen = []
    with pytest.warns(tfrx.CorruptRecordWarning) as caught:
        with tfrx.RecordReader(path, on_error="warn") as r:
            for batch in r.iter_batches(1):
                seen.append((batch.first_index, batch[0][0]))
            assert r.skipped_records == 2
            assert r.skipped_bytes == 2 * len(frames[0])
    assert seen == [(0, 0), (2, 2), (3, 3), (5, 5)]
    messages = [str(w.message) for w in caught]
    assert "record 1 at byte 66" in messages[0] and "record 4 at byte 264" in messages[1]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
@pytest.mark.parametrize("on_error", ["raise", "skip"])
def test_a_compressed_file_read_as_uncompressed_says_so(tmp_path, compression, on_error):
    from tfrx.data import TFRecordDataset

    raw = BEFORE + AFTER_BYTES
    path = tmp_path / "c.tfrecord"
    path.write_bytes(gzip.compress(raw) if compression == "GZIP" else zlib.compress(raw))
    for read in (
        lambda: list(tfrx.read_records(path, compression="", on_error=on_error)),
        lambda: list(tfrx.RecordReader(path, compression="none", on_error=on_error)),
        lambda: list(TFRecordDataset(str(path), compression_type="", on_error=on_error)),
    ):
        with pytest.raises(tfrx.CorruptRecordError) as info:
            read()
        err = info.value
        assert (err.kind, err.offset, err.record_index) == ("compressed", 0, 0)
        assert f"looks {compression}-compressed" in str(err)
        assert f'compression_type="{compression}"' in str(err) and str(path) in str(err)
    assert list(tfrx.read_records(path, compression=compression)) == GOOD + AFTER


def test_damage_that_only_starts_like_gzip_is_still_damage(tmp_path):
    path = tmp_path / "d.tfrecord"
    path.write_bytes(b"\x1f\x8b" + b"\x00" * 30 + BEFORE)
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path, compression=""))
    assert info.value.kind == "length_crc"
    with tfrx.RecordReader(path, compression="", on_error="skip") as r:
        assert list(r) == GOOD
