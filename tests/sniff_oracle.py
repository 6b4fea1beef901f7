"""A payload classifier written in Python from the protobuf wire format, the reference for
``tfrx.codec._sniff`` (whose wire walk is native).

Protobuf bytes carry no type, so the check is structural: an Example is only
field 1 (Features); a SequenceExample is fields 1 (context) and 2
(FeatureLists), each at most once; every Features map entry has a printable
UTF-8 name and a Feature that holds only bytes_list (1), float_list (2) or
int64_list (3). Varints are read as Python ints (no 64-bit limit), so that
oversized keys and lengths are judged by the rules above, not by overflow.
"""

from __future__ import annotations

from typing import Iterator

EXAMPLE = "Example"
SEQUENCE_EXAMPLE = "SequenceExample"
OTHER = "other"
EMPTY = "empty"


class _Malformed(Exception):
    pass


def _varint(buf, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    n = len(buf)
    while True:
        if pos >= n or shift > 63:
            raise _Malformed
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf) -> Iterator[tuple[int, int, object]]:
    """(field number, wire type, value) of each field; value is a memoryview for wire type 2."""
    pos = 0
    n = len(buf)
    while pos < n:
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise _Malformed
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            if pos + 8 > n:
                raise _Malformed
            value, pos = None, pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > n:
                raise _Malformed
            value, pos = buf[pos : pos + length], pos + length
        elif wire == 5:
            if pos + 4 > n:
                raise _Malformed
            value, pos = None, pos + 4
        else:
            raise _Malformed
        yield field, wire, value


def _name_ok(raw) -> bool:
    try:
        name = bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return name.isprintable()


def _feature_ok(buf) -> bool:
    for field, wire, value in _fields(buf):
        if field not in (1, 2, 3) or wire != 2:
            return False
    return True


def _feature_list_ok(buf) -> bool:
    for field, wire, value in _fields(buf):
        if field != 1 or wire != 2 or not _feature_ok(value):
            return False
    return True


def _map_ok(buf, value_ok) -> bool:
    """A Features or FeatureLists message: map entries {1: name, 2: value}."""
    for field, wire, entry in _fields(buf):
        if field != 1 or wire != 2:
            return False
        has_key = False
        for f, w, v in _fields(entry):
            if f == 1 and w == 2:
                if not _name_ok(v):
                    return False
                has_key = True
            elif f == 2 and w == 2:
                if not value_ok(v):
                    return False
            else:
                return False
        if not has_key:
            return False
    return True


def record_kind(record) -> str:
    """``"Example"``, ``"SequenceExample"``, ``"empty"`` (zero bytes) or ``"other"``."""
    buf = memoryview(record).cast("B") if not isinstance(record, (bytes, bytearray)) else record
    if len(buf) == 0:
        return EMPTY
    try:
        seen = set()
        for field, wire, value in _fields(buf):
            if wire != 2 or field not in (1, 2):
                return OTHER
            if field in seen:  # a repeated field is how ExampleListWithContext looks, not an Example
                return OTHER
            seen.add(field)
            if field == 1 and not _map_ok(value, _feature_ok):
                return OTHER
            if field == 2 and not _map_ok(value, _feature_list_ok):
                return OTHER
    except _Malformed:
        return OTHER
    return SEQUENCE_EXAMPLE if 2 in seen else EXAMPLE


def top_level_kind(record) -> str:
    """``"Example"``, ``"SequenceExample"`` or ``"other"`` from the top level of ``record`` alone.

    A quick per-record check: fields 1 and 2, length-delimited, once each
    (field 2 makes a SequenceExample); it does not look inside the maps as
    :func:`record_kind` does.
    """
    buf = memoryview(record).cast("B") if not isinstance(record, (bytes, bytearray)) else record
    seen = 0
    try:
        for field, wire, _ in _fields(buf):
            bit = 1 << field if field in (1, 2) and wire == 2 else 0
            if not bit or seen & bit:
                return OTHER
            seen |= bit
    except _Malformed:
        return OTHER
    return SEQUENCE_EXAMPLE if seen & 4 else EXAMPLE
