"""The parser skips the features a spec does not name by their length, remembering per entry position the key no
column wanted in the previous record; these records move keys between positions, record to record, so that every
remembered key is sometimes right, sometimes another key (wanted or not, of the same length or not), and sometimes
an entry of another layout (value first, long lengths). Each parse must equal decoding each record by itself."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


# keys of 1, 2, 12, 13 (the longest a 16-byte pattern covers) and 14 bytes, some sharing a length and a prefix
KEYS = ["a", "b", "ab", "ac", "x" * 12, "x" * 11 + "y", "k" * 13, "k" * 12 + "j", "z" * 14, "z" * 13 + "w"]


def _feature(values: list[int]) -> bytes:
    return _ld(3, _ld(1, b"".join(_varint(v) for v in values)))  # int64_list, packed


@st.composite
def _record(draw) -> tuple[bytes, dict]:
    keys = draw(st.permutations(KEYS))[: draw(st.integers(0, len(KEYS)))]
    entries, expected = [], {}
    for key in keys:
        values = draw(st.lists(st.integers(0, 2**40), max_size=draw(st.sampled_from([3, 40]))))  # 40: past 128 bytes
        k, v = _ld(1, key.encode()), _ld(2, _feature(values))
        entries.append(_ld(1, v + k if draw(st.booleans()) else k + v))  # value first is valid in an Example
        expected[key] = values
    return _ld(1, b"".join(entries)), expected


@settings(max_examples=150, deadline=None)
@given(st.lists(_record(), min_size=1, max_size=12), st.sets(st.sampled_from(KEYS), min_size=1))
def test_parse_equals_decoding_each_record(records, wanted):
    spec = {k: tfrx.VarLenFeature(tfrx.int64) for k in sorted(wanted)}
    parsed = tfrx.parse_example([r for r, _ in records], spec)
    for key in wanted:
        sparse = parsed[key]
        rows = [[] for _ in records]
        for (row, _), value in zip(sparse.indices.tolist(), sparse.values.tolist()):
            rows[row].append(value)
        assert rows == [e.get(key, []) for _, e in records], key
    for record, expected in records:  # and the decoder agrees with the records as built
        decoded = tfrx.decode_example(record)
        assert {k: np.asarray(v).tolist() for k, v in decoded.items()} == expected
