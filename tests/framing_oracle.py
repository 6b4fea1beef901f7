"""A TFRecord framing parser written from the format alone, as the reference for skip mode.

Deliberately simple and slow: it tries every byte position in Python, with
its own table-driven CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)
and TFRecord's mask, sharing no code with the reader.
"""

from __future__ import annotations

import struct


def _table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _table()


def masked_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(record: bytes) -> bytes:
    """One record framed as TFRecord writes it."""
    length = struct.pack("<Q", len(record))
    return length + struct.pack("<I", masked_crc32c(length)) + record + struct.pack("<I", masked_crc32c(record))


# No record is 2^48 bytes or longer: a header claiming so is not taken for a record start.
LENGTH_LIMIT = 1 << 48


def _u32(buf: bytes, p: int) -> int:
    return struct.unpack_from("<I", buf, p)[0]


def header_length(buf: bytes, p: int):
    """The length field at ``p`` when its 12-byte header is whole and its CRC holds, else None."""
    if p + 12 > len(buf) or masked_crc32c(buf[p : p + 8]) != _u32(buf, p + 8):
        return None
    return struct.unpack_from("<Q", buf, p)[0]


def whole_record(buf: bytes, p: int):
    """The payload of the record at ``p`` when both its CRCs hold and it fits, else None."""
    n = header_length(buf, p)
    if n is None or p + 16 + n > len(buf):
        return None
    data = buf[p + 12 : p + 12 + n]
    return data if masked_crc32c(data) == _u32(buf, p + 12 + n) else None


def oracle(buf: bytes):
    """``(records, regions)``: records as (index, offset, payload); regions as (start, end, first, count).

    A record is delivered where both CRCs hold. Damage at ``a`` ends at the
    next position whose record verifies (or the end). Inside it, a header
    whose length CRC holds and whose length is below ``LENGTH_LIMIT`` is taken for a record start when another such
    header's length ends exactly on it, or its own length ends exactly on
    another such header or on the region's end; the region counts as one
    record plus those starts after ``a``.
    """
    records, regions = [], []
    pos = index = 0
    while pos < len(buf):
        data = whole_record(buf, pos)
        if data is not None:
            records.append((index, pos, data))
            index += 1
            pos += 16 + len(data)
            continue
        a = pos
        q = next((p for p in range(a + 1, len(buf)) if whole_record(buf, p) is not None), len(buf))
        ends = {p: p + 16 + n for p in range(a, q) if (n := header_length(buf, p)) is not None and n < LENGTH_LIMIT}
        starts = set()
        for p, e in ends.items():
            if e in ends or e == q:
                starts.add(p)
            if e in ends:
                starts.add(e)
        count = 1 + len({p for p in starts if p > a})
        regions.append((a, q, index, count))
        index += count
        pos = q
    return records, regions
