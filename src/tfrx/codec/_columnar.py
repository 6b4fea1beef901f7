"""Columnar encoding: many Examples / SequenceExamples from NumPy columns.

``encode_examples({"input_ids": ids, "label": labels})`` serializes one
Example per row of the columns (first axis = examples) in the native core,
byte-for-byte equal to ``tf.train.Example(...).SerializeToString(
deterministic=True)`` for the same content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, overload

import numpy as np

from tfrx import _native
from tfrx._native import EncodeColumn, FeatureKind
from tfrx.codec._values import BYTES, FLOAT, INT64, flat_values, kind_of_dtype, normalize_kind
from tfrx.io._batch import RecordBatch

__all__ = ["Ragged", "encode_examples", "encode_sequence_examples", "serialization_order"]

# Kind numbers -> the enum the native encoder takes (a dict lookup: calling the enum costs microseconds a column).
_FEATURE_KINDS = {kind: FeatureKind(kind) for kind in (BYTES, FLOAT, INT64)}


class Ragged:
    """Rows of different lengths: row i is ``values[row_splits[i]:row_splits[i+1]]``.

    Give ``row_splits`` (length rows + 1, starting at 0) or ``row_lengths``.
    ``values`` is a NumPy array (its extra axes belong to each value), a list
    of bytes, or another ``Ragged`` (for SequenceExample feature lists: rows of
    steps of values). Any object with ``.values`` and ``.row_splits`` (such as
    a ``tf.RaggedTensor`` converted to NumPy) is accepted where a ``Ragged``
    is.
    """

    __slots__ = ("values", "row_splits")

    def __init__(self, values, row_splits=None, *, row_lengths=None) -> None:
        if (row_splits is None) == (row_lengths is None):
            raise ValueError("Ragged: pass exactly one of row_splits or row_lengths")
        if row_splits is None:
            lengths = np.asarray(row_lengths, dtype=np.int64)
            row_splits = np.zeros(len(lengths) + 1, np.int64)
            np.cumsum(lengths, out=row_splits[1:])
        splits = np.ascontiguousarray(row_splits, dtype=np.int64)
        if splits.ndim != 1 or len(splits) == 0 or splits[0] != 0 or np.any(np.diff(splits) < 0):
            raise ValueError("Ragged: row_splits must be 1-D, start at 0 and never decrease")
        if splits[-1] != len(values):
            raise ValueError(f"Ragged: row_splits end at {splits[-1]} but there are {len(values)} values")
        self.values = values
        self.row_splits = splits

    @classmethod
    def from_rows(cls, rows) -> Ragged:
        """From a sequence of per-row sequences (arrays or lists)."""
        rows = list(rows)
        lengths = [len(r) for r in rows]
        values: np.ndarray | list
        if rows and all(isinstance(r, np.ndarray) for r in rows):
            values = np.concatenate(rows) if rows else np.zeros(0)
        else:
            values = [v for r in rows for v in r]
        return cls(values, row_lengths=lengths)

    @property
    def row_lengths(self) -> np.ndarray:
        """The number of values in each row."""
        return np.diff(self.row_splits)

    def __len__(self) -> int:
        return len(self.row_splits) - 1

    def __getitem__(self, i):
        return self.values[self.row_splits[i] : self.row_splits[i + 1]]

    def __repr__(self) -> str:
        return f"Ragged({len(self)} rows, {len(self.values)} values)"


def serialization_order(names) -> list[str]:
    """Names in the order protobuf's deterministic serialization writes map keys.

    upb compares the UTF-8 bytes of the common prefix and, when one key is a
    prefix of the other, puts the longer key first (so ``"ab"`` precedes
    ``"a"`` and ``""`` comes last).
    """
    return sorted(names, key=lambda n: (*n.encode("utf-8"), 256))


class _Packed(tuple):
    """Bytes values already packed as (uint8 data, int64 offsets)."""

    __slots__ = ()

    def __len__(self) -> int:  # number of values, as for a list
        return len(self[1]) - 1


def _pack_bytes(items) -> tuple:
    if isinstance(items, _Packed):
        return tuple(items)
    try:
        packed = _native.pack_bytes(items)
        return packed.values, packed.offsets
    except TypeError:
        items = [bytes(v) for v in items]
    offsets = np.zeros(len(items) + 1, np.int64)
    if items:
        np.cumsum(np.fromiter(map(len, items), np.int64, count=len(items)), out=offsets[1:])
    return b"".join(items), offsets


def _is_ragged(col) -> bool:
    return hasattr(col, "values") and hasattr(col, "row_splits") and not isinstance(col, np.ndarray)


def _flatten_ragged(col, kind, name):
    """(kind, values, splits) of a Ragged column: the values of each row flattened."""
    splits = np.asarray(col.row_splits, dtype=np.int64)
    values = col.values
    if _is_ragged(values):  # nested: compose the splits, one row takes all its inner values
        kind, flat, inner = _flatten_ragged(values, kind, name)
        return kind, flat, np.ascontiguousarray(inner[splits])
    if isinstance(values, np.ndarray) and values.dtype.kind != "O":
        per = int(np.prod(values.shape[1:], dtype=np.int64)) if values.ndim > 1 else 1
        k, flat = flat_values(values, kind, name)
        return k, flat, np.ascontiguousarray(splits * per)
    k, flat = flat_values(list(values), kind, name)
    return k, flat, splits


_IOTA = np.zeros(1, np.int64)  # 0, 1, 2, ...: shared, read-only, grown on demand
_IOTA_MAX = 1 << 16


def _one_per_row(n: int) -> np.ndarray:
    """[0, 1, ..., n], the splits of one value per row: a read-only view for small n (a column of
    a small batch would otherwise spend a noticeable part of its time in np.arange)."""
    global _IOTA
    if n >= len(_IOTA):
        if n >= _IOTA_MAX:
            return np.arange(n + 1, dtype=np.int64)
        grown = np.arange(max(n + 1, 2 * len(_IOTA)), dtype=np.int64)
        grown.flags.writeable = False
        _IOTA = grown
    return _IOTA[: n + 1]


def _rows_flat(rows: list, kind, name):
    """(kind, flat values, splits) of per-row values (no None)."""
    n = len(rows)
    if kind in (None, BYTES) and n and type(rows[0]) is bytes:
        try:  # one bytes value per row, packed natively
            return BYTES, _Packed(_native.pack_bytes(rows)), _one_per_row(n)
        except TypeError:
            pass
    if kind in (None, BYTES) and all(type(v) is str for v in rows):
        return BYTES, [v.encode("utf-8") for v in rows], _one_per_row(n)
    parts: list = []
    kinds = set()
    for v in rows:
        if kind is None and _empty_sequence(v):
            parts.append(None)  # an empty row takes the column's kind, known once a value is seen
            continue
        k, flat = flat_values(v, kind, name)
        kinds.add(k)
        parts.append(flat)
    if kind is None:
        if kinds == {INT64, FLOAT}:  # ints beside floats: a float column, as in one list
            kinds = {FLOAT}
            parts = [p if p is None else p.astype(np.float32) for p in parts]
        if len(kinds) > 1:
            raise TypeError(
                f"feature {name!r} mixes {' and '.join(sorted(map(_kind_name, kinds)))} values; "
                f"pass kinds={{{name!r}: ...}} to choose one"
            )
        if not kinds:
            raise ValueError(f"feature {name!r} has no values to infer its kind from; pass kinds={{{name!r}: ...}}")
        kind = kinds.pop()
    empty: list | np.ndarray = [] if kind == BYTES else np.zeros(0, np.int64 if kind == INT64 else np.float32)
    parts = [empty if p is None else p for p in parts]
    lengths = np.fromiter(map(len, parts), np.int64, count=n)
    splits = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=splits[1:])
    if kind == BYTES:
        flat = [b for p in parts for b in p]
    else:
        dtype = np.int64 if kind == INT64 else np.float32
        flat = np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)
    return kind, flat, splits


def _empty_sequence(v) -> bool:
    return (
        isinstance(v, (list, tuple))
        and len(v) == 0
        or (isinstance(v, np.ndarray) and v.size == 0 and v.dtype.kind == "O")
    )


def _kind_name(kind: int) -> str:
    return {BYTES: "bytes", FLOAT: "float", INT64: "int64"}[kind]


def _values_buffer(kind, flat):
    if kind == BYTES:
        return _pack_bytes(flat)
    dtype = np.int64 if kind == INT64 else np.float32
    return np.ascontiguousarray(flat, dtype=dtype), None


def _per_row(a: np.ndarray) -> int:
    # Not reshape(rows, -1): with zero rows NumPy cannot infer the -1.
    return int(np.prod(a.shape[1:], dtype=np.int64))


def _context_column(name: str, col, kind, present) -> tuple[int, EncodeColumn]:
    """(rows, prepared column) of one Example / context column."""
    mask = None
    if isinstance(col, np.ma.MaskedArray):
        m = np.ma.getmaskarray(col)
        mask = ~(m.reshape(len(m), _per_row(m)).all(axis=1) if m.ndim > 1 else m)
        col = col.filled(0) if col.dtype.kind != "O" else col.data
    if _is_ragged(col):
        k, flat, splits = _flatten_ragged(col, kind, name)
        rows = len(splits) - 1
    elif isinstance(col, np.ndarray) and col.dtype.kind != "O":
        if col.ndim == 0:
            raise ValueError(f"feature {name!r}: a column needs a first axis of examples, got a scalar")
        rows = col.shape[0]
        if col.dtype.kind in "SU" and kind in (None, BYTES):
            k, flat, splits = _rows_flat([v for v in col.reshape(rows, _per_row(col)).tolist()], BYTES, name)
        else:
            k = kind if kind is not None else kind_of_dtype(col.dtype, name)
            per = int(np.prod(col.shape[1:], dtype=np.int64)) if col.ndim > 1 else 1
            k, flat = flat_values(col, k, name)
            splits = _one_per_row(rows) if per == 1 else _one_per_row(rows) * per
    else:
        entries = list(col)
        rows = len(entries)
        absent = [v is None for v in entries]
        if any(absent):
            nmask = ~np.array(absent, dtype=bool)
            mask = nmask if mask is None else mask & nmask
            entries = [v for v in entries if v is not None]
        k, flat, splits = _rows_flat(entries, kind, name)
        if any(absent):  # absent rows hold zero values
            full = np.zeros(rows + 1, np.int64)
            full[1:][~np.array(absent)] = np.diff(splits)
            splits = np.cumsum(full)
    if present is not None:
        p = np.asarray(present, dtype=bool).reshape(-1)
        if len(p) != rows:
            raise ValueError(f"present[{name!r}] has {len(p)} entries for {rows} examples")
        mask = p if mask is None else mask & p
    values, offsets = _values_buffer(k, flat)
    splits = np.ascontiguousarray(splits, dtype=np.int64)
    present = None if mask is None else np.ascontiguousarray(mask, dtype=np.uint8)
    # Positional: with keywords the call costs ~0.3 us more, a few percent of encoding small batches.
    return rows, EncodeColumn(name, _FEATURE_KINDS[k], values, splits, offsets, present)


def _with_steps(col: EncodeColumn, steps: np.ndarray) -> EncodeColumn:
    """A context column's values as the steps of a feature list."""
    return EncodeColumn(col.key, col.kind, values=col.values, offsets=col.offsets, splits=col.splits, steps=steps)


def _feature_list_column(name: str, col, kind) -> tuple[int, EncodeColumn]:
    """(rows, prepared column) of one SequenceExample feature-list column."""
    if _is_ragged(col):
        steps = np.ascontiguousarray(col.row_splits, dtype=np.int64)
        _, values = _context_column(name, col.values, kind, None)  # one step per entry of values
        return len(steps) - 1, _with_steps(values, steps)
    elif isinstance(col, np.ndarray) and col.dtype.kind != "O":
        if col.ndim < 2:
            raise ValueError(
                f"feature list {name!r}: an array needs axes (examples, steps, ...), got shape {col.shape}"
            )
        rows, nsteps = col.shape[:2]
        _, values = _context_column(name, col.reshape((rows * nsteps,) + col.shape[2:]), kind, None)
        return rows, _with_steps(values, np.arange(rows + 1, dtype=np.int64) * nsteps)
    else:
        entries = list(col)
        rows = len(entries)
        mask = np.array([v is not None for v in entries], dtype=bool)
        step_values = []
        steps = np.zeros(rows + 1, np.int64)
        for i, v in enumerate(entries):
            seq = [] if v is None else list(v)
            step_values.extend(seq)
            steps[i + 1] = steps[i] + len(seq)
        k, flat, splits = _rows_flat(step_values, kind, name) if step_values else (kind, None, np.zeros(1, np.int64))
        if k is None:
            k = INT64  # no steps anywhere: the kind never reaches the wire
        if flat is None:
            flat = [] if k == BYTES else np.zeros(0)
    values, offsets = _values_buffer(k, flat)
    pres = None if mask.all() else np.ascontiguousarray(mask, dtype=np.uint8)
    return rows, EncodeColumn(
        name,
        _FEATURE_KINDS[k],
        values=values,
        offsets=offsets,
        splits=np.ascontiguousarray(splits, dtype=np.int64),
        steps=steps,
        present=pres,
    )


def _prepare(columns: Mapping, kinds: Mapping | None, present: Mapping | None, lists: bool, rows):
    kinds = kinds or {}
    present = present or {}
    prepared = {}
    for name in serialization_order(list(columns)):
        if not isinstance(name, str):
            raise TypeError(f"feature names must be str, got {type(name).__name__}")
        kind = kinds.get(name)
        kind = None if kind is None else normalize_kind(kind, name)
        if lists:
            n, prepared_column = _feature_list_column(name, columns[name], kind)
        else:
            n, prepared_column = _context_column(name, columns[name], kind, present.get(name))
        if rows is None:
            rows = n
        elif n != rows:
            raise ValueError(f"feature {name!r} has {n} examples, other columns have {rows}")
        prepared[name] = prepared_column
    return list(prepared.values()), rows


def _result(out, as_batch: bool):
    if as_batch:
        return RecordBatch(out.data, out.starts, out.lengths)
    return out


@overload
def encode_examples(
    columns: Mapping, *, kinds: Mapping | None = ..., present: Mapping | None = ..., as_batch: Literal[False] = ...
) -> list[bytes]: ...
@overload
def encode_examples(
    columns: Mapping, *, kinds: Mapping | None = ..., present: Mapping | None = ..., as_batch: Literal[True]
) -> RecordBatch: ...
@overload
def encode_examples(
    columns: Mapping, *, kinds: Mapping | None = ..., present: Mapping | None = ..., as_batch: bool
) -> list[bytes] | RecordBatch: ...
def encode_examples(
    columns: Mapping,
    *,
    kinds: Mapping | None = None,
    present: Mapping | None = None,
    as_batch: bool = False,
) -> list[bytes] | RecordBatch:
    """Serializes one ``tf.train.Example`` per row of ``columns``.

    ``columns`` maps feature names to:

    * a NumPy array whose first axis is the examples: a 1-D array gives each
      example one value, higher ranks are flattened row-major per example;
      integer/bool -> Int64List, float -> FloatList (float32), ``S``/``U``
      -> BytesList (NumPy strips trailing NUL bytes from ``S`` arrays: use a
      list of bytes when they matter);
    * a :class:`Ragged` (or any object with ``.values`` and ``.row_splits``)
      for rows of different lengths;
    * a list (or object array) with one entry per example: bytes, str, a
      number, a list of them or an array; ``None`` leaves the feature out of
      that example;
    * a ``numpy.ma.MaskedArray``: masked examples leave the feature out.

    ``kinds={name: "bytes"|"float"|"int64"}`` forces a kind and
    ``present={name: bool array}`` marks, per example, whether the feature is
    written. Output is byte-identical to protobuf's
    ``SerializeToString(deterministic=True)`` of the same Example.
    Returns a list of ``bytes``, or with ``as_batch=True`` one
    :class:`tfrx.RecordBatch` (one buffer) that ``TFRecordWriter.write_many``
    takes without copying.
    """
    prepared, rows = _prepare(columns, kinds, present, False, None)
    out = _native.encode_examples(prepared, rows or 0, as_batch)
    return _result(out, as_batch)


@overload
def encode_sequence_examples(
    context: Mapping | None = ...,
    feature_lists: Mapping | None = ...,
    *,
    kinds: Mapping | None = ...,
    present: Mapping | None = ...,
    as_batch: Literal[False] = ...,
) -> list[bytes]: ...
@overload
def encode_sequence_examples(
    context: Mapping | None = ...,
    feature_lists: Mapping | None = ...,
    *,
    kinds: Mapping | None = ...,
    present: Mapping | None = ...,
    as_batch: Literal[True],
) -> RecordBatch: ...
@overload
def encode_sequence_examples(
    context: Mapping | None = ...,
    feature_lists: Mapping | None = ...,
    *,
    kinds: Mapping | None = ...,
    present: Mapping | None = ...,
    as_batch: bool,
) -> list[bytes] | RecordBatch: ...
def encode_sequence_examples(
    context: Mapping | None = None,
    feature_lists: Mapping | None = None,
    *,
    kinds: Mapping | None = None,
    present: Mapping | None = None,
    as_batch: bool = False,
) -> list[bytes] | RecordBatch:
    """Serializes one ``tf.train.SequenceExample`` per example.

    ``context`` columns are as in :func:`encode_examples`. Each
    ``feature_lists`` column holds, per example, a sequence of steps, each
    step one Feature:

    * an array of shape ``(examples, steps, ...)``: every step holds the
      flattened trailing axes (one value when the array is 2-D);
    * a :class:`Ragged` over examples whose values are the steps (a NumPy
      array, one step per row, or another ``Ragged`` for steps of different
      lengths);
    * a list with one entry per example, each a sequence of step values
      (``None`` leaves the feature list out of that example).

    ``present`` applies to context columns. Both ``context`` and
    ``feature_lists`` are always written (as when both are passed to the
    protobuf constructor), so the output equals
    ``SerializeToString(deterministic=True)`` of such a message.
    """
    ctx, rows = _prepare(context or {}, kinds, present, False, None)
    lists, rows = _prepare(feature_lists or {}, kinds, None, True, rows)
    out = _native.encode_sequence_examples(ctx, lists, rows or 0, as_batch)
    return _result(out, as_batch)
