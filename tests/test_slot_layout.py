"""The shared-memory slot layout of bytes columns (src/native/slot_layout.h): pack_span_columns writes
columns that bytes_columns reads back, every part 64-byte aligned, in the room span_columns_size says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrx import _native

columns_strategy = st.lists(st.lists(st.binary(max_size=90), max_size=12), max_size=5)


def _spans(column: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A column as spans of one buffer, with a byte of padding before each value."""
    data = b"".join(b"#" + v for v in column)
    lengths = np.array([len(v) for v in column], np.int64)
    starts = np.cumsum(np.concatenate([[0], lengths[:-1] + 1]), dtype=np.int64) + 1 if column else lengths.copy()
    return np.frombuffer(data, np.uint8), starts[: len(column)], lengths


@settings(max_examples=200, deadline=None)
@given(columns=columns_strategy, at=st.integers(0, 300), slack=st.integers(0, 70))
def test_packed_columns_read_back(columns, at, slack):
    spans = [_spans(c) for c in columns]
    datas, starts, lengths = [s[0] for s in spans], [s[1] for s in spans], [s[2] for s in spans]
    begin = -(-at // 64) * 64
    size = _native.span_columns_size(lengths)
    out = np.full(begin + size + slack, 0xEE, np.uint8)
    table = _native.pack_span_columns(out, at, datas, starts, lengths).reshape(-1, 3)
    assert table.shape == (len(columns), 3)
    end = begin
    for (offsets_at, values_at, count), column in zip(table.tolist(), columns):
        assert offsets_at == end and offsets_at % 64 == 0 and values_at % 64 == 0 and count == len(column)
        assert values_at - offsets_at >= 8 * (count + 1)
        offsets = out[offsets_at : offsets_at + 8 * (count + 1)].view(np.int64)
        assert offsets.tolist() == np.concatenate([[0], np.cumsum([len(v) for v in column])]).tolist()
        end = values_at + -(-int(offsets[-1]) // 64) * 64
    assert end == begin + size  # span_columns_size is exactly the room the columns take
    assert (out[:begin] == 0xEE).all() and (out[end:] == 0xEE).all()  # nothing written outside it
    got = _native.bytes_columns(out, table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy())
    assert [a.tolist() for a in got] == columns


@settings(max_examples=100, deadline=None)
@given(columns=columns_strategy.filter(lambda cs: any(cs)), cut=st.integers(1, 64))
def test_a_buffer_cut_short_is_refused(columns, cut):
    spans = [_spans(c) for c in columns]
    lengths = [s[2] for s in spans]
    size = _native.span_columns_size(lengths)
    out = np.zeros(size, np.uint8)
    table = _native.pack_span_columns(out, 0, [s[0] for s in spans], [s[1] for s in spans], lengths).reshape(-1, 3)
    last = max(i for i, c in enumerate(columns) if c)  # the last column that holds values
    short = out[: int(table[last, 0]) + 8 * len(columns[last]) + 8 - min(cut, 8)]
    with pytest.raises(ValueError, match="bytes_columns"):
        _native.bytes_columns(short, table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy())
    with pytest.raises(ValueError, match="do not fit"):
        _native.pack_span_columns(
            np.zeros(size - cut, np.uint8), 0, [s[0] for s in spans], [s[1] for s in spans], lengths
        )
