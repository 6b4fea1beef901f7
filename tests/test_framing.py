"""The native framing scanner and framer, against a tiny pure-Python oracle."""

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx import _native


def oracle_frame(record: bytes) -> bytes:
    """TFRecord framing written out from the format's definition."""
    length = struct.pack("<Q", len(record))
    return (
        length + struct.pack("<I", tfrx.masked_crc32c(length)) + record + struct.pack("<I", tfrx.masked_crc32c(record))
    )


def scan(buf, **kw):
    r = _native.scan_records(buf, **kw)
    return dict(
        starts=r.starts.tolist(),
        lengths=r.lengths.tolist(),
        consumed=r.consumed,
        status=r.status,
        offset=r.offset,
        need=r.need,
        length=r.length,
        expected=r.expected,
        actual=r.actual,
    )


records_st = st.lists(st.binary(max_size=300), max_size=20)


@settings(max_examples=200, deadline=None)
@given(records_st)
def test_frame_records_matches_oracle(records):
    expected = b"".join(oracle_frame(r) for r in records)
    assert _native.frame_records(records) == expected
    batch = tfrx.RecordBatch.from_records(records)
    assert _native.frame_batch(batch.data, batch.starts, batch.lengths) == expected


@settings(max_examples=200, deadline=None)
@given(records_st)
def test_scan_finds_every_record(records):
    buf = b"".join(oracle_frame(r) for r in records)
    r = scan(buf)
    assert r["status"] == _native.ScanStatus.END
    assert r["consumed"] == len(buf)
    assert [buf[s : s + n] for s, n in zip(r["starts"], r["lengths"])] == records


@settings(max_examples=200, deadline=None)
@given(records_st.filter(bool), st.data())
def test_scan_stops_at_any_cut_with_exact_need(records, data):
    buf = b"".join(oracle_frame(r) for r in records)
    cut = data.draw(st.integers(0, len(buf) - 1))
    r = scan(buf[:cut])
    # Complete records before the cut are all returned.
    ends = np.cumsum([16 + len(x) for x in records])
    complete = int(np.searchsorted(ends, cut, side="right"))
    assert len(r["starts"]) == complete
    if cut == (ends[complete - 1] if complete else 0):
        assert r["status"] == _native.ScanStatus.END
    else:
        assert r["status"] == _native.ScanStatus.NEED_MORE
        # Supplying exactly `need` more bytes completes the next step (header or record).
        r2 = scan(buf[: cut + r["need"]])
        assert (
            r2["consumed"] > r["consumed"]
            or r2["status"] != _native.ScanStatus.NEED_MORE
            or (r2["offset"] == r["offset"] and r2["need"] > 0)
        )


def test_need_for_partial_header_then_body():
    buf = oracle_frame(b"x" * 100)
    r = scan(buf[:5])
    assert (r["status"], r["need"], r["offset"]) == (_native.ScanStatus.NEED_MORE, 7, 0)
    r = scan(buf[:12])
    assert (r["status"], r["need"], r["length"]) == (_native.ScanStatus.NEED_MORE, 104, 100)
    r = scan(buf[:-1])
    assert (r["status"], r["need"]) == (_native.ScanStatus.NEED_MORE, 1)


def test_length_crc_mismatch_reports_both_crcs():
    good = oracle_frame(b"abc")
    bad = bytearray(oracle_frame(b"defg"))
    bad[0] ^= 0x01
    r = scan(good + bytes(bad))
    assert r["status"] == _native.ScanStatus.LENGTH_CRC
    assert r["offset"] == len(good) and r["lengths"] == [3]
    assert r["expected"] == struct.unpack("<I", bytes(bad[8:12]))[0]
    assert r["actual"] == tfrx.masked_crc32c(bytes(bad[:8]))


def test_data_crc_mismatch_and_verify_off():
    bad = bytearray(oracle_frame(b"payload"))
    bad[14] ^= 0xFF
    r = scan(bytes(bad))
    assert r["status"] == _native.ScanStatus.DATA_CRC and r["starts"] == [] and r["length"] == 7
    assert r["actual"] == tfrx.masked_crc32c(bytes(bad[12:19]))
    r = scan(bytes(bad), verify=False)
    assert r["status"] == _native.ScanStatus.END and r["lengths"] == [7]


def test_bogus_huge_length_is_need_more_not_allocation():
    length = struct.pack("<Q", 1 << 60)
    header = length + struct.pack("<I", tfrx.masked_crc32c(length))
    r = scan(header + b"tail")
    assert r["status"] == _native.ScanStatus.NEED_MORE
    assert r["need"] == (1 << 60) + 4 - 4
    length = struct.pack("<Q", (1 << 64) - 1)
    header = length + struct.pack("<I", tfrx.masked_crc32c(length))
    assert scan(header)["need"] == (1 << 64) - 1


def test_limits():
    buf = b"".join(oracle_frame(bytes([i]) * i) for i in range(10))
    r = scan(buf, max_records=3)
    assert r["status"] == _native.ScanStatus.LIMIT and r["lengths"] == [0, 1, 2]
    r = scan(buf, max_bytes=10)
    assert r["lengths"] == [0, 1, 2, 3, 4]
    r = scan(buf, max_bytes=0)
    assert r["lengths"] == [0]  # a zero-byte record fits a zero budget
    r = scan(oracle_frame(b"big" * 100), max_bytes=1)
    assert r["lengths"] == [300]  # at least one record
    r = scan(buf, stop_offset=16 + 17)
    assert r["lengths"] == [0, 1] and r["status"] == _native.ScanStatus.LIMIT


def test_find_header():
    rec = oracle_frame(b"hello")
    buf = b"\x00garbage!" + rec
    assert _native.find_header(buf, 0) == 9
    assert _native.find_header(buf, 10) == -1
    assert _native.find_header(rec[:11], 0) == -1
    assert _native.find_header(b"", 0) == -1


def test_find_header_passes_lengths_no_record_can_have():
    def header(length):
        raw = struct.pack("<Q", length)
        return raw + struct.pack("<I", tfrx.masked_crc32c(raw))

    assert _native.find_header(b"xy" + header((1 << 48) - 1), 0) == 2
    assert _native.find_header(b"xy" + header(1 << 48) + header(5), 0) == 14


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=300),
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, (1 << 48) + 5)), max_size=4),
    st.integers(0, 300),
)
def test_find_header_matches_a_byte_by_byte_search(noise, planted, start):
    from framing_oracle import header_length

    buf = bytearray(noise)
    for at, length in planted:
        raw = struct.pack("<Q", length)
        buf[at : at + 12] = raw + struct.pack("<I", tfrx.masked_crc32c(raw))
    buf = bytes(buf)
    want = next(
        (p for p in range(start, len(buf) - 11) if (n := header_length(buf, p)) is not None and n < 1 << 48), -1
    )
    assert _native.find_header(buf, start) == want


def test_record_framing_and_split():
    header, footer = _native.record_framing(b"abc")
    assert header + b"abc" + footer == oracle_frame(b"abc")
    data = np.frombuffer(b"0123456789", dtype=np.uint8)
    assert _native.split_records(data, np.array([0, 5], np.int64), np.array([2, 5], np.int64)) == [b"01", b"56789"]
    with pytest.raises(ValueError):
        _native.split_records(data, np.array([8], np.int64), np.array([5], np.int64))
    with pytest.raises(ValueError):
        _native.frame_batch(data, np.array([-1], np.int64), np.array([1], np.int64))


def test_frame_records_accepts_buffers_and_rejects_str():
    arr = np.arange(5, dtype=np.uint8)
    assert _native.frame_records([arr, bytearray(b"x"), memoryview(b"yz")]) == (
        oracle_frame(arr.tobytes()) + oracle_frame(b"x") + oracle_frame(b"yz")
    )
    with pytest.raises(TypeError):
        _native.frame_records(["text"])


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=400), st.integers(0, 400))
def test_garbage_never_crashes_or_escapes_the_buffer(buf, start):
    r = scan(buf)
    for s, n in zip(r["starts"], r["lengths"]):
        assert 12 <= s and s + n + 4 <= len(buf)
    assert r["consumed"] <= len(buf)
    k = _native.find_header(buf, start)
    assert k == -1 or (start <= k and k + 12 <= len(buf))


@settings(max_examples=200, deadline=None)
@given(records_st.filter(bool), st.data())
def test_single_bit_flips_are_caught(records, data):
    buf = bytearray(b"".join(oracle_frame(r) for r in records))
    bit = data.draw(st.integers(0, len(buf) * 8 - 1))
    buf[bit // 8] ^= 1 << (bit % 8)
    r = scan(bytes(buf))
    # CRC-32C detects every single-bit error: the scan never returns all records intact.
    intact = [bytes(buf[s : s + n]) for s, n in zip(r["starts"], r["lengths"])]
    assert not (r["status"] == _native.ScanStatus.END and intact == records)


# ---------------------------------------------------------------- strided scans (shard's reads)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.binary(max_size=200), max_size=25),
    st.integers(1, 5),
    st.data(),
    st.integers(-1, 6),
    st.sampled_from([-1, 0, 150, 10_000]),
)
def test_a_strided_scan_keeps_every_nth_record_and_steps_over_the_rest(records, stride, data, max_records, max_bytes):
    skip = data.draw(st.integers(0, stride - 1))
    buf = b"".join(oracle_frame(r) for r in records)
    r = _native.scan_records(buf, True, max_records, max_bytes, -1, stride, skip)
    # The oracle: walk every record, keep positions skip, skip + stride, ... while the limits allow.
    kept, walked, pos, payload = [], 0, 0, 0
    for k, rec in enumerate(records):
        keep = k >= skip and (k - skip) % stride == 0
        if max_records >= 0 and len(kept) >= max_records:
            break
        if keep and max_bytes >= 0 and kept and payload + len(rec) > max_bytes:
            break
        if keep:
            kept.append(rec)
            payload += len(rec)
        walked += 1
        pos += 16 + len(rec)
    assert [buf[s : s + n] for s, n in zip(r.starts.tolist(), r.lengths.tolist())] == kept
    assert (r.walked, r.consumed) == (walked, pos)


def test_a_strided_scan_checks_only_the_kept_records_data_crcs():
    records = [b"a" * 10, b"b" * 10, b"c" * 10, b"d" * 10]
    buf = bytearray(b"".join(oracle_frame(r) for r in records))
    buf[16 + 10 + 12] ^= 1  # a payload byte of record 1
    r = _native.scan_records(bytes(buf), True, -1, -1, -1, 2, 0)  # keeps 0 and 2
    assert r.status == _native.ScanStatus.END and r.walked == 4 and len(r.starts) == 2
    r = _native.scan_records(bytes(buf), True, -1, -1, -1, 2, 1)  # keeps 1: its CRC fails
    assert r.status == _native.ScanStatus.DATA_CRC and r.offset == 26 and r.walked == 1
    buf[26] ^= 1  # the length of record 1: every stride fails on it, its length cannot be trusted
    r = _native.scan_records(bytes(buf), True, -1, -1, -1, 2, 0)
    assert r.status == _native.ScanStatus.LENGTH_CRC and r.walked == 1


def test_strided_scan_arguments_are_checked():
    with pytest.raises(ValueError, match="stride"):
        _native.scan_records(b"", True, -1, -1, -1, 0, 0)
    with pytest.raises(ValueError, match="stride"):
        _native.scan_records(b"", True, -1, -1, -1, 2, 2)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.binary(max_size=100), max_size=20),
    st.integers(1, 4),
    st.data(),
    st.integers(-1, 5),
    st.integers(-1, 400),
    st.integers(0, 3),
)
def test_walking_headers_of_a_file_finds_what_a_strided_scan_finds(
    tmp_path_factory, records, stride, data, max_records, stop, cut
):
    skip = data.draw(st.integers(0, stride - 1))
    buf = b"".join(oracle_frame(r) for r in records)
    buf = buf[: max(0, len(buf) - cut)]  # a truncated last record, or none
    path = tmp_path_factory.mktemp("walk") / "f"
    path.write_bytes(b"xyz" + buf)  # headers from byte 3 on
    with open(path, "rb") as f:
        w = _native.walk_records(f.fileno(), 3, 3 + len(buf), max_records, -1, stop, stride, skip)
    s = _native.scan_records(buf, False, max_records, -1, stop, stride, skip)
    assert w.starts.tolist() == [x - 12 + 3 for x in s.starts.tolist()]
    assert (w.lengths.tolist(), w.walked, w.consumed, w.status) == (s.lengths.tolist(), s.walked, s.consumed, s.status)
    if s.status == _native.ScanStatus.NEED_MORE:
        assert w.need == s.need


def test_walking_headers_reports_a_damaged_length(tmp_path):
    buf = bytearray(b"".join(oracle_frame(b"x" * 50) for _ in range(3)))
    buf[66 + 3] ^= 0x10
    path = tmp_path / "f"
    path.write_bytes(bytes(buf))
    with open(path, "rb") as f:
        w = _native.walk_records(f.fileno(), 0, len(buf), -1, -1, -1, 3, 0)
    assert w.status == _native.ScanStatus.LENGTH_CRC and w.offset == 66 and w.walked == 1
    with pytest.raises(OSError):
        _native.walk_records(987654, 0, 100)  # not an open descriptor
