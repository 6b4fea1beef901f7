"""Apache Arrow interop: parsed batches to ``pyarrow`` and back (the readers: ``_arrow_read.py``).

Numeric data is never copied on the way to Arrow: Arrow arrays are built
over the NumPy buffers the parser returned (which own their memory), so the
Arrow objects keep those buffers alive. Per feature kind:

* ``FixedLenFeature`` with shape ``[]``: a primitive column (``int64``,
  ``float32``); with shape ``[d1, d2, ...]``: nested ``fixed_size_list``
  over the flat values.
* ``VarLenFeature`` (:class:`tfrx.SparseArray`, one row per example) and
  ``RaggedFeature`` (:class:`tfrx.RaggedArray`): lists whose offsets are
  the ``row_splits`` - ``large_list`` for ``int64`` splits, ``list`` for
  ``int32`` ones (``RaggedFeature``'s default). A VarLen feature's splits
  are computed from its indices.
* strings (``bytes``): ``binary``; these are the one copy, since NumPy
  holds them as Python objects. Parsed with ``bytes_as="views"``
  (:class:`tfrx.BytesArray`) they become ``binary_view`` arrays over the
  batch's buffer instead, without copying the values.

SequenceExamples (the ``(context, feature_lists, lengths)`` that
``tfrx.parse_sequence_example`` returns) become one column per context
feature, as above, and one per feature list: a list over the example's
steps of each step's values (``list<list<...>>`` from the nested
``row_splits`` of a ``RaggedFeature``; ``list<...>`` or
``list<fixed_size_list<...>>`` for a ``FixedLenSequenceFeature``, whose
padding is dropped using ``lengths``). The schema's metadata names the
feature-list columns.

Without a spec, :class:`ExampleBatchBuilder` turns decoded records
(``tfrx.decode_sequence_example``'s ``(context, feature_lists)``) into
record batches whose schema grows as features appear: every feature a
``list<v>`` column, null where a record lacks it, every feature list a
``list<list<v>>`` column; a record whose kinds contradict earlier ones is
reported, not guessed at. ``tfrx convert`` to Parquet writes through it.

The way back, :func:`to_examples` / :func:`to_sequence_examples`, turns a
Table or RecordBatch into serialized ``tf.train.Example`` /
``SequenceExample`` records through the native columnar encoder; nulls
become missing features.

pyarrow is imported when this module is: ``pip install 'tfrx[arrow]'``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

try:
    import pyarrow as pa
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("tfrx.integrations.arrow needs pyarrow: pip install 'tfrx[arrow]'") from None

from tfrx.parsing._arrays import RaggedArray, SparseArray
from tfrx.parsing._bytes_array import BytesArray

__all__ = [
    "to_record_batch",
    "to_table",
    "to_examples",
    "to_sequence_examples",
    "ExampleBatchBuilder",
    "FEATURE_LISTS_KEY",
    "RAW_COLUMN",
]

_NUMERIC = {np.dtype(np.int64): pa.int64(), np.dtype(np.float32): pa.float32()}
# Schema metadata key listing (as JSON) the columns that hold SequenceExample feature lists.
FEATURE_LISTS_KEY = b"tfrx.feature_lists"
# The one binary column of records read or written unparsed (``raw=True`` here, in tfrx.integrations.ray and in
# the converters): a column named for what a cell holds, one TFRecord record.
RAW_COLUMN = "record"


# ---------------------------------------------------------------- NumPy -> Arrow
def _flat(values: Any, packed: bool = False) -> pa.Array:
    """A primitive Arrow array over ``values`` (1-D view), sharing its buffer; a BytesArray as ``binary_view``
    over its buffer, or with ``packed`` as ``binary`` of its own (:func:`_binary`)."""
    if isinstance(values, BytesArray):
        return _binary(values) if packed else values.to_arrow()
    if values.dtype == object:
        return pa.array(values.reshape(-1).tolist(), type=pa.binary())
    arrow_type = _NUMERIC.get(values.dtype)
    if arrow_type is None:
        arrow_type = pa.from_numpy_dtype(values.dtype)
    flat = np.ascontiguousarray(values).reshape(-1)
    return pa.Array.from_buffers(arrow_type, len(flat), [None, pa.py_buffer(flat)])


def _binary(values: BytesArray) -> pa.Array:
    """``binary`` of a BytesArray's values end to end, in memory of its own (one native gather, no object per
    value): what a parse with the default ``bytes_as`` gives, without making a ``bytes`` object per value."""
    data, offsets = values.packed()
    # Values already end to end in the records: copied, not a view that would keep the records alive. Values
    # that are their buffer's whole content (a parse that packed them already) are shared as they are.
    if np.may_share_memory(data, values.data) and data.shape[0] != values.data.shape[0]:
        data = np.array(data, dtype=np.uint8, copy=True)
    if int(offsets[-1]) > np.iinfo(np.int32).max:
        return pa.Array.from_buffers(
            pa.large_binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
    offsets32 = offsets.astype(np.int32)
    return pa.Array.from_buffers(pa.binary(), len(offsets) - 1, [None, pa.py_buffer(offsets32), pa.py_buffer(data)])


def _dense(values: Any, packed: bool = False) -> pa.Array:
    """``(n, d1, ..., dk)`` -> nested fixed-size lists of ``d1 .. dk`` over the flat values."""
    arr = _flat(values, packed)
    for level in range(values.ndim - 1, 0, -1):
        size = int(values.shape[level])
        if size:
            arr = pa.FixedSizeListArray.from_arrays(arr, size)
        else:  # Arrow has no zero-size fixed lists: a list column of empty lists
            parents = int(np.prod(values.shape[:level]))
            arr = pa.LargeListArray.from_arrays(pa.array(np.zeros(parents + 1, np.int64)), arr)
    return arr


def _ragged(r: RaggedArray, packed: bool = False) -> pa.Array:
    if isinstance(r.values, RaggedArray):
        inner = _ragged(r.values, packed)
    else:
        inner = _dense(r.values if isinstance(r.values, BytesArray) else np.asarray(r.values), packed)
    splits = np.ascontiguousarray(r.row_splits)
    if splits.dtype == np.int32:  # RaggedFeature's default row_splits_dtype, as TensorFlow's
        offsets = pa.Array.from_buffers(pa.int32(), len(splits), [None, pa.py_buffer(splits)])
        return pa.ListArray.from_arrays(offsets, inner)
    splits = splits.astype(np.int64, copy=False)
    offsets = pa.Array.from_buffers(pa.int64(), len(splits), [None, pa.py_buffer(splits)])
    return pa.LargeListArray.from_arrays(offsets, inner)


def _sparse(s: SparseArray, packed: bool = False) -> pa.Array:
    if s.indices.ndim != 2 or s.indices.shape[1] != 2:
        raise ValueError(
            f"only one-dimensional VarLen features (rank-2 SparseArray) convert to Arrow lists; "
            f"got indices of shape {s.indices.shape}"
        )
    rows = int(s.dense_shape[0])
    counts = np.bincount(s.indices[:, 0], minlength=rows) if len(s.indices) else np.zeros(rows, np.int64)
    splits = np.zeros(rows + 1, np.int64)
    np.cumsum(counts, out=splits[1:])
    return _ragged(RaggedArray(s.values, splits), packed)


def _column(name: str, value: Any, packed: bool = False) -> pa.Array:
    if isinstance(value, RaggedArray):
        return _ragged(value, packed)
    if isinstance(value, SparseArray):
        return _sparse(value, packed)
    if isinstance(value, (np.ndarray, BytesArray)):
        if value.ndim == 0:
            raise ValueError(f"feature {name!r} is a scalar, not a batch: parse a batch of records")
        return _dense(value, packed)
    raise TypeError(f"feature {name!r}: cannot convert {type(value).__name__} to Arrow")


def _steps(values: np.ndarray, lengths: np.ndarray | None, packed: bool = False) -> pa.Array:
    """A padded ``FixedLenSequenceFeature`` batch ``(n, max_steps, ...)`` as lists of each example's steps."""
    n, width = values.shape[0], values.shape[1]
    if lengths is None:
        lengths = np.full(n, width, np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    splits = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=splits[1:])
    steps = values.reshape((n * width,) + values.shape[2:])
    if int(splits[-1]) != n * width:  # padding to drop: the one copy
        steps = steps[(np.arange(width) < lengths[:, None]).reshape(-1)]
    return _ragged(RaggedArray(steps, splits), packed)


def _is_sequence(parsed) -> bool:
    return isinstance(parsed, (tuple, list)) and len(parsed) in (2, 3) and all(isinstance(p, Mapping) for p in parsed)


def _sequence_columns(parsed, packed: bool = False) -> tuple[list[str], list[pa.Array], list[str]]:
    context, feature_lists = parsed[0], parsed[1]
    lengths = parsed[2] if len(parsed) == 3 else {}
    both = sorted(set(context) & set(feature_lists))
    if both:
        raise ValueError(f"{both} are both context features and feature lists; one Arrow column each cannot hold both")
    names = sorted([*context, *feature_lists])
    columns = []
    for name in names:
        if name in context:
            columns.append(_column(name, context[name], packed))
            continue
        value = feature_lists[name]
        if isinstance(value, SparseArray) and value.indices.ndim == 2 and value.indices.shape[1] == 3:
            value = _sparse_steps(value)
        if isinstance(value, (np.ndarray, BytesArray)):
            if value.ndim < 2:
                raise ValueError(f"feature list {name!r} has shape {value.shape}, expected (examples, steps, ...)")
            columns.append(_steps(value, lengths.get(name), packed))  # type: ignore[arg-type]  # BytesArray has ndim, shape and slicing
        elif isinstance(value, RaggedArray):
            columns.append(_ragged(value, packed))
        else:
            raise TypeError(f"feature list {name!r}: cannot convert {type(value).__name__} to Arrow")
    return names, columns, sorted(feature_lists)


def _sparse_steps(s: SparseArray) -> RaggedArray:
    """A VarLen feature list (indices ``[example, step, value]``) as examples -> steps -> values.

    A SparseArray does not record trailing empty steps: an example has as
    many steps as its last step with a value (parse with ``RaggedFeature``
    to keep every step).
    """
    n = int(s.dense_shape[0])
    ex, step = s.indices[:, 0], s.indices[:, 1]
    steps_per = np.zeros(n, np.int64)
    if len(ex):
        np.maximum.at(steps_per, ex, step + 1)
    ex_splits = np.zeros(n + 1, np.int64)
    np.cumsum(steps_per, out=ex_splits[1:])
    total_steps = int(ex_splits[-1])
    counts = np.bincount(ex_splits[ex] + step, minlength=total_steps) if len(ex) else np.zeros(total_steps, np.int64)
    step_splits = np.zeros(total_steps + 1, np.int64)
    np.cumsum(counts, out=step_splits[1:])
    return RaggedArray(RaggedArray(s.values, step_splits), ex_splits)


def to_record_batch(parsed) -> pa.RecordBatch:
    """A parsed batch as a ``pyarrow.RecordBatch``, columns in name order.

    ``parsed`` is the dict ``tfrx.parse_example`` returns, or the
    ``(context, feature_lists, lengths)`` of ``tfrx.parse_sequence_example``
    (the feature-list columns are then named in the schema metadata under
    ``FEATURE_LISTS_KEY``, which :func:`to_sequence_examples` reads).
    """
    return _record_batch(parsed, packed=False)


def _record_batch(parsed, packed: bool) -> pa.RecordBatch:
    """:func:`to_record_batch`; with ``packed``, the values of a parse with ``bytes_as="views"`` become ``binary``
    columns of their own, as the default parse's ``bytes`` objects do, without an object per value."""
    metadata = None
    if _is_sequence(parsed):
        names, columns, lists = _sequence_columns(parsed, packed)
        metadata = {FEATURE_LISTS_KEY: json.dumps(lists).encode()}
    elif isinstance(parsed, Mapping):
        names = sorted(parsed)
        columns = [_column(n, parsed[n], packed) for n in names]
    else:
        raise TypeError(
            f"expected parse_example's dict or parse_sequence_example's (context, feature_lists, lengths), "
            f"got {type(parsed).__name__}"
        )
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        raise ValueError(f"features have different numbers of rows: {dict(zip(names, map(len, columns)))}")
    schema = pa.schema([pa.field(n, c.type) for n, c in zip(names, columns)], metadata=metadata)
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def to_table(parsed) -> pa.Table:
    """One parsed batch (Example dict or SequenceExample tuple), or an iterable of them, as a ``pyarrow.Table``.

    A tuple of 2 or 3 dicts is one ``parse_sequence_example`` result; a list
    is always a list of batches (a list of 2 or 3 Example dicts has the
    same shape as a sequence parse).
    """
    if isinstance(parsed, Mapping) or (isinstance(parsed, tuple) and _is_sequence(parsed)):
        return pa.Table.from_batches([to_record_batch(parsed)])
    batches = [to_record_batch(p) for p in parsed]
    if not batches:
        raise ValueError("to_table needs at least one batch (the schema comes from it)")
    return pa.Table.from_batches(batches)


# ---------------------------------------------------------------- decoded records -> Arrow, no spec
_LEAF = {"int64": pa.int64(), "float": pa.float32(), "bytes": pa.binary()}


def _value_kind(value: Any) -> str:
    """The kind of a decoded Feature's values: int64 / float arrays, bytes lists."""
    if isinstance(value, np.ndarray):
        return "int64" if value.dtype == np.int64 else "float"
    return "bytes"


def _steps_kind(steps: list) -> str | None:
    """The kind of a feature list's steps (one kind for all), None when no step has a kind, "mixed" otherwise."""
    kinds = {_value_kind(s) for s in steps if s is not None}
    return kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else None)


class ExampleBatchBuilder:
    """Decoded Examples / SequenceExamples to ``pyarrow.RecordBatch`` es without a spec, the schema growing as
    features appear.

    Each record is what :func:`tfrx.decode_sequence_example` returns, ``(context, feature_lists)``
    (``feature_lists`` ``None`` or ``{}`` for an Example; :func:`tfrx.decode_example`'s dict is a context).
    A feature's kind is the kind of its first value, an empty list's included (TensorFlow's parser refuses a
    Feature of another kind than the spec's, empty or not); every feature is a ``list<v>`` column (``int64``,
    ``float``, ``binary``), null in a record without it (a Feature with no kind set is absent, as
    ``parse_example`` treats it); every feature list a ``list<list<v>>`` column, a step with no kind a null
    step, named in the schema metadata under ``FEATURE_LISTS_KEY``. Values keep their bits (float32 NaN
    payloads included). :meth:`check` says why a record does not fit the kinds learned so far (another kind,
    a name that is a context feature in one record and a feature list in another, steps of several kinds);
    :meth:`append` refuses such a record. :meth:`flush` returns the rows appended since the last one under
    :attr:`schema`, the schema of every feature seen so far, columns in name order.
    """

    def __init__(self) -> None:
        self._kinds: dict[str, str] = {}  # context feature -> kind
        self._list_kinds: dict[str, str | None] = {}  # feature list -> kind (None while no step has one)
        self._rows: list[tuple[Mapping, Mapping]] = []

    def __len__(self) -> int:
        """The rows appended since the last :meth:`flush`."""
        return len(self._rows)

    @property
    def schema(self) -> pa.Schema:
        """Every feature and feature list seen so far, in name order."""
        names = sorted([*self._kinds, *self._list_kinds])
        meta = {FEATURE_LISTS_KEY: json.dumps(sorted(self._list_kinds)).encode()} if self._list_kinds else None
        return pa.schema([(k, self._column_type(k)) for k in names], metadata=meta)

    def _column_type(self, name: str) -> pa.DataType:
        if name in self._list_kinds:
            kind = self._list_kinds[name]
            return pa.list_(pa.list_(pa.null() if kind is None else _LEAF[kind]))
        return pa.list_(_LEAF[self._kinds[name]])

    def check(self, context: Mapping, feature_lists: Mapping | None = None) -> str | None:
        """Why a record does not fit the kinds seen so far (nor itself), or None."""
        kinds, list_kinds = self._kinds, self._list_kinds
        for k, v in context.items():
            if k in list_kinds:
                return f"feature {k!r} is a context feature, earlier records have a feature list of that name"
            if k in kinds and _value_kind(v) != kinds[k]:
                return f"feature {k!r} is {_value_kind(v)}, earlier records have {kinds[k]}"
        for k, steps in (feature_lists or {}).items():
            if k in context:
                return (
                    f"{k!r} is both a context feature and a feature list; one column cannot hold "
                    "both (convert to JSON Lines instead)"
                )
            if k in kinds:
                return f"feature list {k!r}: earlier records have a context feature of that name"
            kind = _steps_kind(steps)
            if kind == "mixed":
                return f"feature list {k!r} has steps of different kinds"
            if kind is not None and list_kinds.get(k) not in (None, kind):
                return f"feature list {k!r} is {kind}, earlier records have {list_kinds[k]}"
        return None

    def append(self, context: Mapping, feature_lists: Mapping | None = None) -> None:
        """Adds one record's row, learning the kinds of its features; ValueError saying why when
        :meth:`check` finds it does not fit."""
        problem = self.check(context, feature_lists)
        if problem is not None:
            raise ValueError(problem)
        for k, v in context.items():
            self._kinds.setdefault(k, _value_kind(v))
        for k, steps in (feature_lists or {}).items():
            if self._list_kinds.get(k) is None:
                self._list_kinds[k] = _steps_kind(steps)
        self._rows.append((context, feature_lists or {}))

    def flush(self) -> pa.RecordBatch:
        """The rows appended since the last flush, as one record batch under :attr:`schema`."""
        schema, rows = self.schema, self._rows
        self._rows = []
        columns = []
        for field in schema:
            name = field.name
            if name in self._list_kinds:
                kind = self._list_kinds[name]
                columns.append(_nested_list_column([r[1].get(name) for r in rows], kind))
            else:
                columns.append(_list_column([r[0].get(name) for r in rows], self._kinds[name]))
        return pa.RecordBatch.from_arrays(columns, schema=schema)


def _rows(values: list) -> tuple[list, np.ndarray, pa.Array | None]:
    """The non-null entries of ``values``, the list offsets of all of them, and the null mask (None: no null)."""
    present = [v for v in values if v is not None]
    offsets = np.zeros(len(values) + 1, np.int64)
    if len(present) == len(values):
        np.cumsum(np.fromiter(map(len, values), np.int64, len(values)), out=offsets[1:])
        return present, offsets, None
    nulls = np.fromiter((v is None for v in values), bool, len(values))
    counts = np.zeros(len(values), np.int64)
    counts[~nulls] = np.fromiter(map(len, present), np.int64, len(present))
    np.cumsum(counts, out=offsets[1:])
    return present, offsets, pa.array(nulls)


def _list_column(values: list, kind: str | None) -> pa.Array:
    """``list<v>`` of decoded values (arrays, lists of bytes, None for a null) over one buffer of the values."""
    present, offsets, mask = _rows(values)
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError(f"{int(offsets[-1])} values in one batch of a list<> column: write smaller batches")
    leaf = pa.null() if kind is None else _LEAF[kind]
    if kind is None:
        flat = pa.nulls(int(offsets[-1]))
    elif kind == "bytes":
        flat = pa.array([b for v in present for b in v], pa.binary())
    else:
        dtype = np.int64 if kind == "int64" else np.float32
        flat = pa.array(np.concatenate(present).astype(dtype, copy=False) if present else np.zeros(0, dtype))
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), flat, type=pa.list_(leaf), mask=mask)


def _nested_list_column(values: list, kind: str | None) -> pa.Array:
    """``list<list<v>>`` of decoded feature lists (lists of steps, None for a null row or a kind-less step)."""
    present, offsets, mask = _rows(values)
    steps = _list_column([s for v in present for s in v], kind)
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), steps, type=pa.list_(steps.type), mask=mask)


# ---------------------------------------------------------------- Arrow -> Examples
def _offsets(arr) -> np.ndarray:
    off = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return off - off[0]


def _to_column(name: str, arr) -> tuple[Any, np.ndarray | None]:
    """An encoder column for one Arrow array, and its ``present`` mask when it has nulls.

    The one mapping of Arrow types to Feature kinds (the converters use it
    too): integers and booleans int64, floating point and decimals float
    (float32, as ``FloatList``), binary and strings of every width bytes;
    dictionary arrays by their values; a column of nulls only is missing
    everywhere. A null inside a list, and an unsigned value past int64, have no
    ``tf.train.Feature`` form: ValueError naming the row.
    """
    from tfrx.codec import Ragged

    if pa.types.is_dictionary(arr.type):  # an encoding of its values, not a type of its own
        arr = arr.dictionary_decode()
    present = None
    if arr.null_count:
        present = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    t = arr.type
    if pa.types.is_null(t):
        return np.zeros(len(arr), np.int64), np.zeros(len(arr), bool)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if present is not None:
            arr = arr.fill_null(pa.scalar([], type=t))
        values = _list_values(name, arr)
        off = _offsets(arr)
        if isinstance(values, list):  # bytes
            return Ragged(values, row_splits=off), present
        return Ragged(np.asarray(values), row_splits=off), present
    if pa.types.is_fixed_size_list(t):
        if present is not None:
            raise ValueError(f"column {name!r}: nulls in a fixed-size list column cannot be encoded")
        values = _list_values(name, arr)
        if isinstance(values, (list, Ragged)):  # bytes, or lists inside: rows of list_size values each
            return Ragged(values, row_splits=np.arange(len(arr) + 1, dtype=np.int64) * t.list_size), present
        return np.asarray(values).reshape(len(arr), t.list_size, *np.asarray(values).shape[1:]), present
    if _is_bytes(t):
        items = arr.to_pylist()
        return [b"" if v is None else (v.encode() if isinstance(v, str) else v) for v in items], present
    if pa.types.is_boolean(t):
        filled = arr.fill_null(False) if present is not None else arr
        return filled.to_numpy(zero_copy_only=False).astype(np.int64), present
    if pa.types.is_integer(t):
        filled = arr.fill_null(0) if present is not None else arr
        return _int64_values(name, filled.to_numpy(zero_copy_only=False)), present
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        filled = arr.fill_null(0) if present is not None else arr
        if pa.types.is_decimal(t):
            filled = filled.cast(pa.float64())
        return filled.to_numpy(zero_copy_only=False).astype(np.float32, copy=False), present
    raise TypeError(f"column {name!r}: Arrow type {t} has no tf.train.Example counterpart; cast it or leave it out")


_INT64_MAX = (1 << 63) - 1


def _int64_values(name: str, values: np.ndarray) -> np.ndarray:
    """Integers as int64; an unsigned value past int64 is an error, not a wrapped negative number."""
    if values.dtype == np.uint64 and len(values) and int(values.max()) > _INT64_MAX:
        row = int(np.argmax(values > _INT64_MAX))
        raise ValueError(
            f"column {name!r}: value {int(values[row])} (at {row}) is past int64 (Int64List holds signed "
            "64-bit values); cast the column or leave it out"
        )
    return values.astype(np.int64, copy=False)


def _list_values(name: str, arr):
    """The values of a list column's lists, which must not hold nulls (a Feature's list has none)."""
    flat = arr.flatten()
    if flat.null_count:
        at = int(np.argmax(np.asarray(flat.is_null().to_numpy(zero_copy_only=False), dtype=bool)))
        row = int(np.searchsorted(_row_ends(arr), at, side="right"))
        raise ValueError(
            f"column {name!r}: the list in row {row} holds a null; a tf.train.Feature's list has no nulls "
            "(fill or drop them first)"
        )
    values, _ = _to_column(name, flat)
    return values


def _row_ends(arr) -> np.ndarray:
    """Where each row's values end in ``arr.flatten()``."""
    if pa.types.is_fixed_size_list(arr.type):
        return np.arange(1, len(arr) + 1, dtype=np.int64) * arr.type.list_size
    return _offsets(arr)[1:]


def _is_bytes(t: pa.DataType) -> bool:
    return (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or _is_view(t)
    )


def _is_view(t: pa.DataType) -> bool:
    """binary_view / string_view (what BytesArray.to_arrow makes), where this pyarrow has them."""
    return getattr(pa.types, "is_binary_view", lambda _: False)(t) or getattr(
        pa.types, "is_string_view", lambda _: False
    )(t)


def to_examples(data, *, as_batch: bool = False):
    """Serialized ``tf.train.Example`` records of a ``pyarrow.Table`` / ``RecordBatch``, one per row.

    Integers and booleans become ``int64_list``, floats ``float_list``,
    binary/string ``bytes_list``; lists and fixed-size lists give several
    values per feature. A null leaves the feature out of that example.
    Returns a list of ``bytes``, or a :class:`tfrx.RecordBatch` with
    ``as_batch=True``.
    """
    from tfrx.codec import encode_examples

    columns, present = {}, {}
    for name, arr in _arrays(data).items():
        if _is_nested_list(arr.type):
            raise TypeError(
                f"column {name!r} is {arr.type}, lists of lists: a SequenceExample feature list, not an Example "
                f"feature; use to_sequence_examples(data, feature_lists=[{name!r}])"
            )
        col, mask = _to_column(name, arr)
        columns[name] = col
        if mask is not None:
            present[name] = mask
    return encode_examples(columns, present=present or None, as_batch=as_batch)


def _is_nested_list(t: pa.DataType) -> bool:
    lists = (pa.types.is_list, pa.types.is_large_list)
    return any(f(t) for f in lists) and any(f(t.value_type) for f in lists)


def _arrays(data) -> dict:
    if isinstance(data, pa.Table):
        data = data.combine_chunks()
        return {
            name: data.column(name).chunk(0)
            if data.column(name).num_chunks
            else pa.array([], type=data.column(name).type)
            for name in data.column_names
        }
    if isinstance(data, pa.RecordBatch):
        return {name: data.column(i) for i, name in enumerate(data.schema.names)}
    raise TypeError(f"expected a pyarrow Table or RecordBatch, got {type(data).__name__}")


def _leaf_kind(t) -> str:
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t = t.value_type
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return "int64"
    return "bytes"


def to_sequence_examples(data, feature_lists: Iterable[str] | None = None, *, as_batch: bool = False):
    """Serialized ``tf.train.SequenceExample`` records of a Table / RecordBatch, one per row.

    ``feature_lists`` names the columns that hold feature lists (lists over
    steps); default: those the schema metadata names (as written by
    :func:`to_record_batch`). Every other column is a context feature,
    encoded as in :func:`to_examples`. A feature-list column is a list per
    example of its steps: ``list<list<v>>`` (steps of any length),
    ``list<v>`` (one value per step) or ``list<fixed_size_list<v>>``; a null
    leaves the feature list out of that example.
    """
    from tfrx.codec import Ragged, encode_sequence_examples

    if feature_lists is None:
        meta = (data.schema.metadata or {}).get(FEATURE_LISTS_KEY)
        if meta is None:
            raise ValueError(
                "no feature_lists given and the schema does not name them: pass feature_lists=[column names]"
            )
        feature_lists = json.loads(meta)
    lists = set(feature_lists)
    arrays = _arrays(data)
    missing = sorted(lists - set(arrays))
    if missing:
        raise KeyError(f"feature lists {missing} are not columns of the table")
    if any(_has_null_steps(arrays[name]) for name in lists):
        return _sequence_examples_by_row(arrays, lists, as_batch)
    context: dict[str, Any] = {}
    present: dict[str, Any] = {}
    fl: dict[str, Any] = {}
    kinds: dict[str, Any] = {}
    for name, arr in arrays.items():
        if name not in lists:
            col, mask = _to_column(name, arr)
            context[name] = col
            if mask is not None:
                present[name] = mask
            continue
        t = arr.type
        if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
            raise TypeError(f"feature list {name!r} must be a list column (one entry per step), got {t}")
        kinds[name] = _leaf_kind(t)
        if arr.null_count:  # examples without the feature list: one Python entry per example
            fl[name] = [None if v is None else [_step_values(s) for s in v] for v in arr.to_pylist()]
            continue
        steps, _ = _to_column(name, arr.flatten())
        if isinstance(steps, list):  # bytes, one value per step
            steps = Ragged(steps, row_splits=np.arange(len(steps) + 1, dtype=np.int64))
        fl[name] = Ragged(steps, row_splits=_offsets(arr))
    return encode_sequence_examples(context, fl, kinds=kinds, present=present or None, as_batch=as_batch)


def _has_null_steps(arr) -> bool:
    t = arr.type
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and bool(arr.flatten().null_count)


def _sequence_examples_by_row(arrays: dict, lists: set, as_batch: bool):
    """SequenceExamples one row at a time, for feature lists with null steps: a null step is a Feature with
    no kind (as TensorFlow writes an empty Feature, and tfrecord_to_parquet reads one back), which the columnar
    encoder has no form for. Context columns are checked as :func:`to_examples` checks them."""
    from tfrx import train
    from tfrx.codec import make_sequence_example

    kinds = {}
    for name, arr in arrays.items():
        if name in lists:
            if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
                raise TypeError(f"feature list {name!r} must be a list column (one entry per step), got {arr.type}")
            _to_column(name, arr.flatten().drop_null())  # nulls inside a step's values are refused
        else:
            _to_column(name, arr)
        kinds[name] = _leaf_kind(arr.type)
    rows = {name: arr.to_pylist() for name, arr in arrays.items()}
    out = []
    for i in range(len(next(iter(rows.values()), []))):
        context = {k: _row_value(v[i]) for k, v in rows.items() if k not in lists and v[i] is not None}
        steps = {
            k: [train.Feature() if s is None else _row_value(_step_values(s)) for s in v[i]]
            for k, v in rows.items()
            if k in lists and v[i] is not None
        }
        message = make_sequence_example(context, steps, kinds={k: kinds[k] for k in (*context, *steps)})
        out.append(message.SerializeToString(deterministic=True))
    if as_batch:
        from tfrx.io._batch import RecordBatch

        return RecordBatch.from_records(out)
    return out


def _row_value(value):
    """A Python cell as make_example takes it: a list of values, strings as UTF-8 bytes."""
    items = value if isinstance(value, list) else [value]
    return [v.encode() if isinstance(v, str) else v for v in items]


def _step_values(step):
    if isinstance(step, list):
        return [v for v in _flatten_py(step)]
    return [step]


def _flatten_py(values):
    for v in values:
        if isinstance(v, list):
            yield from _flatten_py(v)
        else:
            yield v


# ---------------------------------------------------------------- reading: the spec inferred, a batch parsed
def _inferred(batch, infer_records: int):
    """The inferred spec; a SequenceExample's VarLen feature lists become RaggedFeatures (every step kept).

    Records that are not Examples or SequenceExamples (a TensorBoard event
    file, other messages, text) raise DecodeError saying what they look like,
    instead of an empty spec or a table of empty rows.
    """
    from tfrx.errors import DecodeError
    from tfrx.parsing import RaggedFeature, VarLenFeature, infer_features
    from tfrx.codec._sniff import OTHER, describe, payload_kind, record_kind

    sample = [batch[i] for i in range(min(len(batch), 32))]
    if payload_kind(sample) == OTHER:
        first = next(i for i, r in enumerate(sample) if record_kind(r) == OTHER)
        offset = "" if batch.file_offsets is None else f" at byte {int(batch.file_offsets[first])}"
        raise DecodeError(
            f"{batch.path or '<stream>'}: record {batch.first_index + first}{offset} is not a tf.train.Example or "
            f"SequenceExample (the records look like {describe(sample)}); read them with tfrx.read_records, "
            "or pass features= to parse them anyway",
            record_index=batch.first_index + first,
        )

    features = infer_features(batch, max_records=infer_records, kind="auto")
    if isinstance(features, tuple):
        context, lists = features
        lists = {k: RaggedFeature(v.dtype) if isinstance(v, VarLenFeature) else v for k, v in lists.items()}
        features = (context, lists)
    return features


def _parse(batch, features):
    from tfrx.parsing import parse_example, parse_sequence_example

    if isinstance(features, tuple):
        return parse_sequence_example(batch, *features)
    return parse_example(batch, features)
