"""Skip mode recovers every intact record of a damaged plain file.

The reader is checked against a framing parser written from the format alone
(``framing_oracle.py``, a byte loop with its own CRC-32C):
which records come out, with which index and byte offset, and which byte
ranges are reported damaged and counted as how many records. Independently
of both, every record the damage did not touch must come out, at its shifted
offset.
"""

from __future__ import annotations

import gzip
import struct
import warnings

import pytest
from framing_oracle import frame, oracle
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.io import CorruptRecordWarning
from tfrx.tools._verify import verify_files


# ---------------------------------------------------------------- damage
def apply(buf: bytearray, edit) -> tuple[int, int, int]:
    """Applies one edit; returns (lo, hi, shift): original bytes [lo, hi) are touched, later ones move by shift."""
    kind, lo, size, fill = edit
    lo = min(lo, len(buf))
    if kind == "flip":
        hi = min(lo + size, len(buf))
        for i in range(lo, hi):
            buf[i] ^= fill | 1
        return lo, hi, 0
    if kind == "insert":
        buf[lo:lo] = bytes([fill]) * size
        return lo, lo, size
    if kind == "delete":
        hi = min(lo + size, len(buf))
        del buf[lo:hi]
        return lo, hi, -(hi - lo)
    if kind == "truncate":
        hi = len(buf)
        del buf[lo:]
        return lo, hi, 0
    # "length": a plausible length with a valid CRC written over a header-sized window
    length = struct.pack("<Q", size * 7 + fill)
    header = length + struct.pack("<I", tfrx.masked_crc32c(length))
    hi = min(lo + 12, len(buf))
    buf[lo:hi] = header[: hi - lo]
    return lo, hi, 0


edits = st.tuples(
    st.sampled_from(["flip", "insert", "delete", "truncate", "length"]),
    st.integers(0, 10_000),
    st.integers(1, 40),
    st.integers(0, 255),
)


def damaged_file(records, edit_list):
    """The damaged bytes and, for each original record, its offset after the edits or None when touched."""
    frames = [frame(r) for r in records]
    buf = bytearray(b"".join(frames))
    spans, p = [], 0
    for f in frames:
        spans.append([p, p + len(f)])
        p += len(f)
    alive = [True] * len(records)
    # Edits apply from the end of the file backwards so that each one's
    # position refers to the original bytes.
    size = len(buf)
    for edit in sorted(((k, min(lo, size), n, f) for k, lo, n, f in edit_list), key=lambda e: -e[1]):
        lo, hi, shift = apply(buf, edit)
        for i, (s, e) in enumerate(spans):
            if not alive[i]:
                continue
            if edit[0] == "insert":
                if s < lo < e:
                    alive[i] = False
                elif s >= lo:
                    spans[i] = [s + shift, e + shift]
            elif s < max(hi, lo + 1) and e > lo:
                alive[i] = False
            elif s >= hi:
                spans[i] = [s + shift, e + shift]
    return bytes(buf), [spans[i][0] if alive[i] else None for i in range(len(records))]


def read_all(path, **options):
    got = []
    with tfrx.RecordReader(path, on_error="skip", **options) as r:
        for batch in r.iter_batches(3):
            for i in range(len(batch)):
                got.append((batch.first_index + i, int(batch.file_offsets[i]), bytes(batch[i])))
        stats = r.stats
    return got, stats


payloads = st.lists(st.binary(min_size=0, max_size=120), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=payloads,
    edit_list=st.lists(edits, min_size=1, max_size=3),
    chunk=st.sampled_from([64, 100, 1 << 20]),
    use_mmap=st.booleans(),
    compressed=st.booleans(),
)
# An 8-byte payload and its CRC read as a header whose length is 2^56: not a record start.
@example([b"\x00" * 7 + b"\x01"], [("insert", 12, 12, 0)], 64, False, False)
@example([b"\x00" * 7 + b"\x01", b""], [("insert", 12, 12, 0)], 64, False, False)
# The cut splices record 0's header to record 1's header: a record whose CRCs hold, hiding record 1.
@example([b"\x00" * 8, b""], [("delete", 12, 12, 0)], 64, False, False)
def test_skip_matches_the_reference_parser(tmp_path, records, edit_list, chunk, use_mmap, compressed):
    buf, new_offsets = damaged_file(records, edit_list)
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(gzip.compress(buf, mtime=0) if compressed else buf)
    got, stats = read_all(path, chunk_size=chunk, use_mmap=use_mmap)
    want, regions = oracle(buf)
    assert got == want
    assert [(g.start, g.end, g.first_record, g.records) for g in stats.regions] == regions
    assert stats.skipped_records == sum(r[3] for r in regions)
    assert stats.skipped_bytes == sum(r[1] - r[0] for r in regions)
    assert [e.offset for e in stats.errors] == [r[0] for r in regions]
    assert [e.record_index for e in stats.errors] == [r[2] for r in regions]
    # Every record the damage left alone comes out, at its new offset, unless
    # the damage forged a record over it: bytes whose two CRCs hold, which no
    # reader can tell from a record (an 8-byte payload and its CRC are a valid
    # header, so a cut can splice one record's header to another's).
    delivered = {(off, data) for _, off, data in got}
    intact = {(off, rec) for rec, off in zip(records, new_offsets) if off is not None}
    forged = [(off, off + 16 + len(data)) for off, data in delivered - intact]
    for off, rec in intact:
        hidden = any(lo < off + 16 + len(rec) and off < hi for lo, hi in forged)
        assert (off, rec) in delivered or hidden


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.binary(min_size=1, max_size=80), min_size=3, max_size=10), data=st.data())
def test_damage_inside_one_record_keeps_true_indices(tmp_path, records, data):
    frames = [frame(r) for r in records]
    victim = data.draw(st.integers(0, len(records) - 1))
    start = sum(len(f) for f in frames[:victim])
    size = len(frames[victim])
    kind = data.draw(st.sampled_from(["flip", "insert", "delete"]))
    lo = data.draw(st.integers(start + (kind == "insert"), start + size - 1))
    n = data.draw(st.integers(1, start + size - lo - (lo == start)))  # never the whole record
    buf, offsets = damaged_file(records, [(kind, lo, n, data.draw(st.integers(0, 255)))])
    assume(frames[victim] not in buf)  # an insertion can rebuild the very bytes it split
    path = tmp_path / "one.tfrecord"
    path.write_bytes(buf)
    got, stats = read_all(path, chunk_size=data.draw(st.sampled_from([64, 1 << 20])))
    want = [(i, offsets[i], r) for i, r in enumerate(records) if i != victim]
    assert got == want
    assert stats.skipped_records == 1
    assert [(g.first_record, g.records) for g in stats.regions] == [(victim, 1)]


ABCDE = [bytes([65 + i]) * (20 + i) for i in range(5)]


def deleted_payload_byte():
    frames = [frame(r) for r in ABCDE]
    b = bytearray(frames[1])
    del b[14]  # one payload byte of B
    frames[1] = bytes(b)
    return b"".join(frames), len(frames[0]) + len(frames[1])


def test_a_deleted_payload_byte_loses_only_its_record(tmp_path):
    buf, c_offset = deleted_payload_byte()
    path = tmp_path / "abcde.tfrecord"
    path.write_bytes(buf)
    with tfrx.RecordReader(path, on_error="skip") as r:
        assert list(r) == [ABCDE[0]] + ABCDE[2:]
        assert r.skipped_records == 1
        (region,) = r.stats.regions
        assert (region.start, region.end, region.first_record) == (len(frame(ABCDE[0])), c_offset, 1)
    batches = list(tfrx.RecordReader(path, on_error="skip").iter_batches(1))
    assert [(b.first_index, int(b.file_offsets[0])) for b in batches][1] == (2, c_offset)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert list(tfrx.read_records(path, on_error="warn")) == [ABCDE[0]] + ABCDE[2:]
    assert [w.category for w in caught] == [CorruptRecordWarning]


def test_dataset_and_verify_recover_the_same_records(tmp_path):
    from tfrx.data import TFRecordDataset

    buf, _ = deleted_payload_byte()
    path = tmp_path / "abcde.tfrecord"
    path.write_bytes(buf)
    assert [bytes(x) for x in TFRecordDataset(str(path), on_error="skip")] == [ABCDE[0]] + ABCDE[2:]
    (check,) = verify_files(path)
    assert (check.records, len(check.errors), check.errors[0].record_index) == (4, 1, 1)


def test_verify_false_still_verifies_candidates_after_damage(tmp_path):
    buf, _ = deleted_payload_byte()
    path = tmp_path / "abcde.tfrecord"
    path.write_bytes(buf)
    # Without data CRCs B's deletion goes unseen: B comes out one byte long with C's first header
    # byte, and C's header no longer verifies. The search after it still checks data CRCs.
    with tfrx.RecordReader(path, on_error="skip", verify=False) as r:
        got = list(r)
    assert got[0] == ABCDE[0] and got[2:] == ABCDE[3:]


def test_adjacent_damaged_records_count_as_two(tmp_path):
    frames = [bytearray(frame(r)) for r in ABCDE]
    frames[1][14] ^= 1
    frames[2][14] ^= 1
    path = tmp_path / "two.tfrecord"
    path.write_bytes(b"".join(frames))
    got, stats = read_all(path)
    assert [(i, d) for i, _, d in got] == [(0, ABCDE[0]), (3, ABCDE[3]), (4, ABCDE[4])]
    assert stats.skipped_records == 2


@pytest.mark.parametrize("chunk", [64, 1 << 20])
def test_a_header_inside_a_payload_is_not_trusted_to_skip(tmp_path, chunk):
    # B's payload holds a framed record whose length runs past C's start:
    # after B's damage the search tries it, its data CRC fails, and C is still found.
    inner_len = struct.pack("<Q", 60)
    inner = inner_len + struct.pack("<I", tfrx.masked_crc32c(inner_len)) + b"i" * 10
    frames = [frame(ABCDE[0]), bytearray(frame(inner)), frame(ABCDE[2])]
    frames[1][12 + 14] ^= 0xFF  # B's length CRC holds, its data CRC fails; the inner header is whole
    path = tmp_path / "inner.tfrecord"
    path.write_bytes(b"".join(bytes(f) for f in frames))
    got, stats = read_all(path, chunk_size=chunk)
    assert [(i, d) for i, _, d in got] == [(0, ABCDE[0]), (2, ABCDE[2])]
    assert stats.skipped_records == 1


def test_verify_command_reports_the_damaged_byte_range(tmp_path, capsys):
    import json

    from tfrx.cli import main

    buf, c_offset = deleted_payload_byte()
    path = tmp_path / "abcde.tfrecord"
    path.write_bytes(buf)
    b_offset = len(frame(ABCDE[0]))
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("DAMAGED\t4 readable records, 1 damaged regions")
    assert f"data_crc at byte {b_offset} (record 1)" in out
    assert out.rstrip().endswith(f"; bytes {b_offset}-{c_offset} skipped as 1 record")
    assert main(["verify", "--json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["records"], report["skipped_records"]) == (4, 1)
    (error,) = report["errors"]
    assert (error["offset"], error["end"], error["record"], error["records"]) == (b_offset, c_offset, 1, 1)


def test_a_first_header_damaged_into_a_zlib_header_is_still_read_as_plain(tmp_path):
    # 0x78 0x7d is a valid zlib header: detection alone would read the file as ZLIB and lose it.
    records = [b"\x00" * 5, b"\x01", b"\x02"]
    buf = bytearray(b"".join(frame(r) for r in records))
    buf[0], buf[1] = 0x78, 0x7D
    path = tmp_path / "z.tfrecord"
    path.write_bytes(bytes(buf))
    got, stats = read_all(path)
    assert [(i, d) for i, _, d in got] == [(1, b"\x01"), (2, b"\x02")]
    assert [(g.start, g.end) for g in stats.regions] == [(0, len(frame(records[0])))]


def test_a_compressed_stream_damaged_near_its_start_stays_compressed(tmp_path):
    data = bytearray(gzip.compress(b"".join(frame(bytes([i]) * 300) for i in range(20)), mtime=0))
    data[12] ^= 0xFF
    path = tmp_path / "early.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(path))
    assert info.value.kind == "compression"


def test_dataset_resumes_exactly_across_damaged_regions(tmp_path):
    from tfrx.data import TFRecordDataset
    from tfrx.testing import assert_resumes_exactly

    frames = [bytearray(frame(bytes([i]) * (10 + i))) for i in range(8)]
    frames[2][14] ^= 1
    del frames[5][13]
    path = tmp_path / "resume.tfrecord"
    path.write_bytes(b"".join(bytes(f) for f in frames))
    full = assert_resumes_exactly(lambda: TFRecordDataset(str(path), on_error="skip"))
    assert [bytes(x) for x in full] == [bytes([i]) * (10 + i) for i in (0, 1, 3, 4, 6, 7)]
