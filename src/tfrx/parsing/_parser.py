"""parse_example & co.: tf.io's parsing functions, natively, into NumPy.

A parser turns a features dict into a plan once: every key the specs need
becomes one native column (dense: written straight into a ``[batch, n]``
array; variable length: values + row splits). ``parse`` hands the records to
the native core (GIL released, big batches split over threads) and then
shapes the columns into what TensorFlow returns: arrays, :class:`SparseArray`
and :class:`RaggedArray`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from tfrx import _native
from tfrx._native import ColumnSpec, FeatureKind, ParseErrorCode, ParseFailure, ParseResult, SequenceColumnSpec
from tfrx import dtypes as _dt
from tfrx import memory as _memory
from tfrx.errors import DecodeError, ParseError, SpecError
from tfrx.io._batch import RecordBatch, _GatheredOnUse
from tfrx.options import renamed_arguments, resolve_parallelism
from tfrx.parsing._arrays import RaggedArray, SparseArray
from tfrx.parsing._bytes_array import BytesArray
from tfrx.parsing._specs import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    RowLengths,
    RowLimits,
    RowSplits,
    RowStarts,
    SparseFeature,
    UniformRowLength,
    ValueRowIds,
    VarLenFeature,
)

__all__ = [
    "ExampleParser",
    "SequenceExampleParser",
    "parse_example",
    "parse_single_example",
    "parse_sequence_example",
    "parse_single_sequence_example",
]

_KIND_NAMES = {
    FeatureKind.NONE: "no kind (empty Feature)",
    FeatureKind.BYTES: "bytes_list",
    FeatureKind.FLOAT: "float_list",
    FeatureKind.INT64: "int64_list",
}


# A batch of large bytes values this big made with glibc's default malloc thresholds faults every page of its
# values in afresh (the freed batch before it was handed back to the kernel): the first one settles them
# (tfrx.memory.tune_for_large_values).
_LARGE_VALUES_BYTES = 2 << 20
_malloc_settled = False


def _settle_malloc(serialized: Any) -> None:
    """Settles glibc's malloc thresholds when ``serialized`` is the first batch of 2 MiB or more of records."""
    lengths = getattr(serialized, "lengths", None)
    if lengths is not None:
        total = int(np.sum(lengths))
    elif isinstance(serialized, (list, tuple, np.ndarray)) and len(serialized) >= 8:
        # Estimated from the first 8 records: this runs for every batch until one is large, so no loop
        # over all of them (a batch of large values is large in its first records too).
        sample = [len(r) for r in serialized[:8] if isinstance(r, (bytes, bytearray, memoryview))]
        total = sum(sample) * len(serialized) // 8
    else:
        return
    if total >= _LARGE_VALUES_BYTES:
        _settle()


def _settle() -> None:
    """Settles the thresholds, once: after a batch of large bytes values (above), or a file parse of 2 MiB of
    records or more whatever its features, whose columns grow piece by piece on the heap (with glibc's
    default thresholds the heap's top was handed back and faulted in again for every batch: BERT-like
    records, 60 times the page faults of parsing the reader's batches, three times the CPU)."""
    global _malloc_settled
    _malloc_settled = True
    _memory.tune_for_large_values()


def _threads(num_parallel_calls: Any) -> int:
    """Native threads for a batch: ``None`` and ``AUTOTUNE`` give the usable cores."""
    return resolve_parallelism(num_parallel_calls, default=None)


def _object_array(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _values_array(values: Any) -> Any:
    if isinstance(values, list):
        return _object_array(values)
    if isinstance(values, _native.ByteSpans):  # a parser's bytes_as="views" output
        data: Any = values.data
        if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 1:
            data = np.frombuffer(data, dtype=np.uint8)
        return BytesArray._trusted(data, values.starts, values.lengths)  # type: ignore[arg-type]  # int64 arrays; the stub says object
    return values


_BYTES_AS = ("bytes", "views")


def _check_bytes_as(bytes_as: str) -> bool:
    """Whether a parser's ``bytes_as`` asks for views (BytesArray) rather than ``bytes`` objects."""
    if bytes_as not in _BYTES_AS:
        raise ValueError(
            f'bytes_as must be "bytes" (NumPy object arrays of bytes) or "views" '
            f"(tfrx.BytesArray over the batch's buffer), got {bytes_as!r}"
        )
    return bytes_as == "views"


def _prod(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _default_values(spec: Any, key: str, size: int, what: str) -> Any:
    """A spec's default as exactly `size` flat values of its dtype.

    Strings and int64 come as a list; floats as a float32 array, never
    through Python floats, so that every bit pattern (a signalling NaN
    included) reaches the output as TensorFlow keeps it.
    """
    d = spec.default_value
    dtype = spec.dtype
    flat: list | np.ndarray
    try:
        if dtype is _dt.string:
            arr = np.asarray(d, dtype=object)
            flat = [x.encode() if isinstance(x, str) else bytes(x) for x in arr.reshape(-1).tolist()]
        elif dtype is _dt.float32:
            flat = np.array(d, dtype=np.float32).reshape(-1)
        else:
            flat = np.asarray(d, dtype=dtype.numpy).reshape(-1).tolist()
    except (TypeError, ValueError) as e:
        raise SpecError(f"feature {key!r}: default_value {d!r} is not {dtype.name}: {e}") from None
    if len(flat) != size:
        raise SpecError(
            f"feature {key!r}: default_value has {len(flat)} values but {what} needs {size}"
            + (" (a scalar default works only for shape=[])" if len(flat) == 1 else "")
        )
    return flat


def _known_shape(spec: Any, key: str, sequence: bool) -> tuple:
    shape = spec.shape
    if any(d is None for d in shape):
        if not sequence and shape and shape[0] is None and all(d is not None for d in shape[1:]):
            raise SpecError(
                f"first dimension of shape for feature {key!r} is unknown; use FixedLenSequenceFeature "
                "for a variable number of rows"
            )
        raise SpecError(f"all dimensions of shape for feature {key!r} must be known, got {list(shape)}")
    return shape


def _split_type(cols: Any, key: str, spec: RaggedFeature) -> None:
    """TensorFlow's rule: every RaggedFeature reading `key` uses one row_splits_dtype."""
    seen = cols.split_types.setdefault(key, np.dtype(spec.row_splits_dtype))
    if seen != np.dtype(spec.row_splits_dtype):
        raise SpecError(
            f"conflicting partition types {seen.name} vs {np.dtype(spec.row_splits_dtype).name} for ragged "
            f"{cols.what} key {key!r}; give the RaggedFeatures reading it one row_splits_dtype "
            "(TensorFlow rejects this too)"
        )


class _Columns:
    """Native columns of one map (features / context, or feature lists), one per key."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.index: dict[str, int] = {}
        self.role: dict[str, str] = {}  # "dense" | "sparse" | "ragged"
        self.dtype: dict[str, Any] = {}
        self.native: list = []  # ColumnSpec or SequenceColumnSpec
        self.keys: list[str] = []
        self.split_types: dict[str, np.dtype] = {}  # ragged key -> row_splits_dtype

    def add(self, key: str, role: str, dtype: Any, native: ColumnSpec | SequenceColumnSpec) -> int:
        if not isinstance(key, str):
            raise SpecError(f"feature keys must be strings, got {key!r}")
        if key in self.index:
            if self.role[key] != role:
                raise SpecError(
                    f"{self.what} key {key!r} is used both as a {self.role[key]} and as a {role} feature; "
                    "TensorFlow rejects this too"
                )
            if self.dtype[key] is not dtype:
                raise SpecError(
                    f"conflicting dtypes {self.dtype[key].name} vs {dtype.name} for {self.what} key {key!r}"
                )
            return self.index[key]
        self.index[key] = len(self.native)
        self.role[key] = role
        self.dtype[key] = dtype
        self.native.append(native)
        self.keys.append(key)
        return self.index[key]


def _var_native(key: str, dtype: Any, stride: int = 1, skip_empty: bool = False) -> ColumnSpec:
    # skip_empty: the native parser skips empty Features of the key in an
    # Example: they neither override an earlier occurrence of the key nor
    # count as present (see parse.h).
    return ColumnSpec(key, FeatureKind(dtype.kind), count=stride, skip_empty=skip_empty)


def _skipping_empty(native: ColumnSpec) -> ColumnSpec:
    """A column spec whose empty Features are skipped (dense ones always are)."""
    if native.dense or native.skip_empty:
        return native
    return ColumnSpec(native.key, native.kind, count=native.count, skip_empty=True)


class _Builder:
    """Shapes native column outputs into TensorFlow's results."""

    # -------------------------------------------------------------- Example-level

    @staticmethod
    def sparse_from_var(values: Any, splits: np.ndarray, batch: int) -> SparseArray:
        dense_shape = _native.sparse_indices(splits, None, False).dense_shape
        return SparseArray._from_splits(_values_array(values), (splits,), dense_shape)

    @staticmethod
    def padded(values: Any, row_splits: np.ndarray, batch: int, inner: tuple, pad: Any, dtype: Any) -> np.ndarray:
        """Rows of `inner`-shaped items per record, padded to the longest record."""
        width = _prod(inner)
        counts = np.diff(row_splits)
        max_rows = int(counts.max()) if batch else 0
        if isinstance(values, (_native.ByteSpans, BytesArray)):
            values = _values_array(values)
            if pad != b"":
                values = values.to_numpy()
            else:  # padding is the empty value: spans of length 0
                starts = _Builder.padded(values.starts, row_splits, batch, inner, 0, _dt.int64)
                lengths = _Builder.padded(values.lengths, row_splits, batch, inner, 0, _dt.int64)
                return BytesArray._trusted(values.data, starts, lengths)  # type: ignore[return-value]  # stands in for an object array of bytes
        np_dtype = object if dtype is _dt.string else dtype.numpy
        out = np.empty((batch, max_rows) + inner, dtype=np_dtype)
        out[...] = pad
        total = int(row_splits[-1])
        if total:
            vals = _values_array(values)
            rows = np.repeat(np.arange(batch, dtype=np.int64), counts)
            within = np.arange(total, dtype=np.int64) - np.repeat(row_splits[:-1], counts)
            out[rows, within] = vals.reshape((total,) + inner) if width else vals
        return out

    @staticmethod
    def sparse_feature(spec: SparseFeature, raw: Mapping, batch: int, key: str) -> SparseArray:
        ids = [raw[k].values for k in spec.index_keys]
        values = _values_array(raw[spec.value_key].values)
        nnz = values.shape[0]
        for iv, k in zip(ids, spec.index_keys):
            if iv.shape[0] != nnz:
                raise ParseError(
                    f"SparseFeature {key!r}: index feature {k!r} holds {iv.shape[0]} values in the batch but "
                    f"value feature {spec.value_key!r} holds {nnz}",
                    feature=key,
                )
        isplits = raw[spec.index_keys[0]].row_splits
        rows = np.repeat(np.arange(batch, dtype=np.int64), np.diff(isplits))
        indices = np.stack([rows] + ids, axis=1) if nnz else np.zeros((0, 1 + len(ids)), np.int64)
        if not spec.already_sorted and nnz > 1:
            order = np.lexsort(indices.T[::-1])
            indices = indices[order]
            values = values[order]
        return SparseArray(indices, values, np.array([batch] + spec.sizes, dtype=np.int64))

    @staticmethod
    def ragged(spec: RaggedFeature, raw: Mapping, value_key: str, key: str, outer: np.ndarray | None) -> Any:
        """TensorFlow's batched ragged construction (parsing_config._add_batched_ragged_partition)."""
        sd = spec.row_splits_dtype
        column = raw[value_key]
        rt: Any = RaggedArray(_values_array(column.values), column.row_splits.astype(np.int64))
        for p in reversed(spec.partitions):
            rt = _Builder.add_partition(rt, p, raw, spec.validate, key, np.dtype(sd))
        if outer is not None:
            rt = RaggedArray(rt, outer)
        return _cast_splits(rt, sd)

    @staticmethod
    def add_partition(
        rt: RaggedArray, p: Any, raw: Mapping, validate: bool, key: str, splits_dtype: Any = np.int64
    ) -> RaggedArray:
        starts = rt.row_splits[:-1]
        if isinstance(p, UniformRowLength):
            return _uniform_partition(rt, p.length, key, validate)
        partition = raw[p.key]
        pvals, psplits = partition.values.astype(np.int64, copy=False), partition.row_splits
        if splits_dtype == np.int32 and pvals.shape[0] and (pvals.max() > _I32_MAX or pvals.min() < -_I32_MAX - 1):
            # TensorFlow casts partition values to the splits dtype first:
            # with int32 splits a value beyond int32 wraps.
            pvals = pvals.astype(np.int32).astype(np.int64)
        plengths = np.diff(psplits)
        nvals = len(rt.values) if isinstance(rt.values, RaggedArray) else rt.values.shape[0]
        if isinstance(p, (RowSplits, RowLimits)):
            if isinstance(p, RowSplits):
                keep = np.ones(pvals.shape[0], dtype=bool)
                keep[psplits[:-1][plengths > 0]] = False  # drop each record's leading 0
                pvals = pvals[keep]
                plengths = np.maximum(plengths - 1, 0)
                psplits = np.concatenate([[0], np.cumsum(plengths)]).astype(np.int64)
            limits = pvals + np.repeat(starts, plengths)
            inner_splits = np.concatenate([[0], limits]).astype(np.int64)
        elif isinstance(p, RowStarts):
            st = pvals + np.repeat(starts, plengths)
            inner_splits = np.concatenate([st, [nvals]]).astype(np.int64)
            if not st.shape[0]:
                # No rows over some values: TensorFlow's from_row_starts checks
                # only the starts given, so it accepts this; so does tfrx.
                validate = False
        elif isinstance(p, RowLengths):
            inner_splits = np.concatenate([[0], np.cumsum(pvals)]).astype(np.int64)
        elif isinstance(p, ValueRowIds):
            return _value_rowids_partition(rt, pvals, psplits, plengths, nvals, validate, key)
        else:  # pragma: no cover - specs only build known partitions
            raise SpecError(f"unhandled partition {p!r}")
        if validate:
            _validate_splits(inner_splits, nvals, key)
        return RaggedArray(RaggedArray(rt.values, inner_splits), psplits.astype(np.int64))


# The most rows a ValueRowIds partition may give beyond 16 per value.
_MAX_EMPTY_ROWS = 1 << 20
_I32_MAX = (1 << 31) - 1


def _uniform_partition(rt: RaggedArray, L: int, key: str, validate: bool) -> RaggedArray:
    """``rt`` with its values split into rows of ``L`` (a ``UniformRowLength`` partition)."""
    if L == 0:
        raise ParseError(f"ragged feature {key!r}: UniformRowLength(0) cannot split rows", feature=key)
    if isinstance(rt.values, RaggedArray):
        nrows = len(rt.values)
        _validate_uniform(nrows, L, key, validate)
        inner = RaggedArray(rt.values, np.arange(nrows // L + 1, dtype=np.int64) * L)
        return RaggedArray(inner, rt.row_splits // L)
    vals = rt.values
    # TensorFlow reshapes the values to [-1, L]: a count that is not a
    # multiple of L fails there whatever `validate` says.
    _validate_uniform(vals.shape[0], L, key, True)
    n = vals.shape[0] // L
    return RaggedArray(vals[: n * L].reshape((n, L) + vals.shape[1:]), rt.row_splits // L)


def _value_rowids_partition(
    rt: RaggedArray, pvals: np.ndarray, psplits: np.ndarray, plengths: np.ndarray, nvals: int, validate: bool, key: str
) -> RaggedArray:
    """``rt`` with a ``ValueRowIds`` partition: each record's ids, offset by the rows of the records before it."""
    batch = plengths.shape[0]
    rows_of = np.zeros(batch, dtype=np.int64)  # rows of each example
    nonempty = plengths > 0
    if pvals.shape[0]:
        maxes = np.maximum.reduceat(pvals, psplits[:-1][nonempty]) if nonempty.any() else np.zeros(0, np.int64)
        rows_of[nonempty] = np.maximum(maxes + 1, 0)
    offsets = np.cumsum(rows_of) - rows_of
    ids = pvals + np.repeat(offsets, plengths)
    if validate and ids.shape[0] and (np.any(np.diff(ids) < 0) or ids.min() < 0):
        raise ParseError(f"ragged feature {key!r}: value_rowids must be sorted and non-negative", feature=key)
    if ids.shape[0] and ids.min() < 0:
        # TensorFlow's bincount of the ids fails here, with validate=False too.
        raise ParseError(f"ragged feature {key!r}: value_rowids must be non-negative", feature=key)
    if ids.shape[0] != nvals:
        raise ParseError(f"ragged feature {key!r}: {ids.shape[0]} value row ids for {nvals} values", feature=key)
    total_rows = int(ids.max()) + 1 if ids.shape[0] else 0
    if total_rows > _MAX_EMPTY_ROWS + 16 * nvals:
        # Rows cost no bytes in a value_rowids partition: one small
        # record could otherwise size an allocation of gigabytes.
        raise ParseError(
            f"ragged feature {key!r}: value row ids give {total_rows} rows for {nvals} values; tfrx "
            f"refuses more than {_MAX_EMPTY_ROWS} + 16 per value (untrusted input must not size "
            "memory); use RowLengths or RowSplits for so many empty rows",
            feature=key,
        )
    counts = np.bincount(ids, minlength=total_rows) if ids.shape[0] else np.zeros(0, np.int64)
    inner_splits = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    inner = RaggedArray(rt.values, inner_splits)
    return RaggedArray(inner, np.concatenate([[0], np.cumsum(rows_of)]).astype(np.int64))


def _validate_uniform(n: int, L: int, key: str, validate: bool) -> None:
    if validate and (L == 0 and n or L and n % L):
        raise ParseError(f"ragged feature {key!r}: {n} values do not split into rows of {L}", feature=key)


def _validate_splits(splits: np.ndarray, nvals: int, key: str) -> None:
    if splits.shape[0] and (splits[0] != 0 or splits[-1] != nvals or np.any(np.diff(splits) < 0)):
        raise ParseError(
            f"ragged feature {key!r}: partition does not form a valid ragged array over {nvals} values "
            "(row splits must start at 0, never decrease and end at the number of values)",
            feature=key,
        )


def _cast_splits(rt: Any, dtype: np.dtype) -> Any:
    if not isinstance(rt, RaggedArray):
        return rt
    return RaggedArray(_cast_splits(rt.values, dtype), rt.row_splits.astype(dtype, copy=False))


def _records_call(core: Any, serialized: Any, threads: int, views: bool = False) -> tuple[ParseResult, int]:
    """Runs the native core on any accepted form of serialized records."""
    if isinstance(serialized, _GatheredOnUse):  # records where they were read or kept
        return serialized._parse_in_place(core, threads, views), len(serialized)
    if isinstance(serialized, RecordBatch):
        result = core.parse_buffer(serialized.data, serialized.starts, serialized.lengths, threads, views=views)
        return result, len(serialized)
    if isinstance(serialized, (bytes, bytearray, memoryview, str)):
        raise TypeError("parse_example takes a batch of records; use parse_single_example for one record")
    if hasattr(serialized, "numpy") and not isinstance(serialized, np.ndarray):  # a tf.Tensor
        serialized = serialized.numpy()
    if isinstance(serialized, np.ndarray):
        if serialized.ndim != 1:
            raise TypeError(f"serialized records must be a 1-D array, got shape {serialized.shape}")
        if serialized.dtype != object and serialized.dtype.kind != "S":
            raise TypeError(f"serialized records must be bytes, got an array of {serialized.dtype}")
        serialized = serialized.tolist()
    elif not isinstance(serialized, (list, tuple)):
        serialized = list(serialized)
    try:
        return core.parse_list(serialized, threads, views=views), len(serialized)
    except BufferError as e:
        raise TypeError(f"serialized records must be bytes-like: {e}") from None
    except TypeError as e:
        raise TypeError(f"serialized records must be a sequence of bytes: {e}") from None


def _single_record(serialized: Any) -> list:
    if hasattr(serialized, "numpy") and not isinstance(serialized, (bytes, np.ndarray)):
        serialized = serialized.numpy()
    if isinstance(serialized, np.ndarray):
        if serialized.ndim != 0:
            raise TypeError("parse_single_* takes one record; use parse_example for a batch")
        serialized = serialized.item()
    if isinstance(serialized, str):
        raise TypeError("serialized record must be bytes, not str")
    return [serialized]


class _ExamplePlan:
    """Validated specs of one features map, and how to shape its columns."""

    def __init__(self, features: Mapping | None, *, context: bool) -> None:
        self.features = dict(features or {})
        self.context = context
        self.cols = _Columns("context" if context else "feature")
        self.dense: dict[str, tuple] = {}  # key -> (shape, dtype)
        self.fls: dict[str, tuple] = {}  # key -> (shape, pad, dtype)
        allowed = (
            (FixedLenFeature, VarLenFeature, RaggedFeature)
            if context
            else (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, SparseFeature, RaggedFeature)
        )
        for key in sorted(self.features):
            spec = self.features[key]
            if not isinstance(spec, allowed):
                where = "context_features" if context else "features"
                raise SpecError(f"unsupported {type(spec).__name__} {spec!r} for key {key!r} in {where}")
            if isinstance(spec, FixedLenFeature):
                shape = _known_shape(spec, key, False)
                n = _prod(shape)
                default = None if spec.default_value is None else _default_values(spec, key, n, f"shape {list(shape)}")
                if isinstance(default, np.ndarray):
                    default = default.astype("<f4", copy=False).tobytes()
                self.cols.add(
                    key,
                    "dense",
                    spec.dtype,
                    ColumnSpec(key, FeatureKind(spec.dtype.kind), dense=True, count=n, default=default),
                )
                self.dense[key] = (shape, spec.dtype)
            elif isinstance(spec, FixedLenSequenceFeature):
                if not spec.allow_missing:
                    raise SpecError(
                        f"FixedLenSequenceFeature {key!r} needs allow_missing=True in parse_example (as in TensorFlow)"
                    )
                shape = _known_shape(spec, key, True)
                if spec.default_value is None:
                    pad: Any = b"" if spec.dtype is _dt.string else spec.dtype.numpy.type(0)
                else:
                    pad = _default_values(spec, key, 1, "padding of a FixedLenSequenceFeature")[0]
                self.cols.add(
                    key, "dense", spec.dtype, _var_native(key, spec.dtype, max(1, _prod(shape)), skip_empty=not context)
                )
                self.fls[key] = (shape, pad, spec.dtype)
            elif isinstance(spec, VarLenFeature):
                self.cols.add(key, "sparse", spec.dtype, _var_native(key, spec.dtype))
            elif isinstance(spec, SparseFeature):
                if not spec.index_key:
                    raise SpecError(f"SparseFeature {key!r}: missing index_key")
                if not spec.value_key:
                    raise SpecError(f"SparseFeature {key!r}: missing value_key")
                if spec.size is None or len(spec.sizes) != len(spec.index_keys):
                    raise SpecError(
                        f"SparseFeature {key!r}: index_key and size must have equal lengths "
                        f"({spec.index_key!r} vs {spec.size!r})"
                    )
                for k in sorted(spec.index_keys):
                    self.cols.add(k, "sparse", _dt.int64, _var_native(k, _dt.int64))
                self.cols.add(spec.value_key, "sparse", spec.dtype, _var_native(spec.value_key, spec.dtype))
            else:
                self._add_ragged(key, spec)

    def _add_ragged(self, key: str, spec: RaggedFeature) -> None:
        value_key = key if spec.value_key is None else spec.value_key
        self.cols.add(value_key, "ragged", spec.dtype, _var_native(value_key, spec.dtype))
        _split_type(self.cols, value_key, spec)
        for p in spec.partitions:
            if not isinstance(p, UniformRowLength):
                self.cols.add(p.key, "ragged", _dt.int64, _var_native(p.key, _dt.int64))
                _split_type(self.cols, p.key, spec)

    def build(self, outputs: list, batch: int) -> dict:
        raw: dict[str, Any] = {}
        for key, out in zip(self.cols.keys, outputs):
            raw[key] = out
        result: dict[str, Any] = {}
        for key, spec in self.features.items():
            if isinstance(spec, FixedLenFeature):
                shape, dtype = self.dense[key]
                result[key] = _values_array(raw[key]).reshape((batch,) + shape)
            elif isinstance(spec, FixedLenSequenceFeature):
                shape, pad, dtype = self.fls[key]
                column = raw[key]  # a RaggedColumn
                width = max(1, _prod(shape))
                result[key] = _Builder.padded(column.values, column.row_splits // width, batch, shape, pad, dtype)
            elif isinstance(spec, VarLenFeature):
                column = raw[key]
                result[key] = _Builder.sparse_from_var(column.values, column.row_splits, batch)
            elif isinstance(spec, SparseFeature):
                result[key] = _Builder.sparse_feature(spec, raw, batch, key)
            else:
                value_key = key if spec.value_key is None else spec.value_key
                result[key] = _Builder.ragged(spec, raw, value_key, key, None)
        return result


def _strip_batch(value: Any) -> Any:
    """The first (only) record of a batch-of-one result."""
    if isinstance(value, (np.ndarray, BytesArray)):
        return value[0]
    if isinstance(value, SparseArray):
        return SparseArray(value.indices[:, 1:].copy(), value.values, value.dense_shape[1:].copy())
    if isinstance(value, RaggedArray):
        return value.values
    return value


def _raise_error(
    err: ParseFailure,
    names: list[str],
    seq_names: list[str],
    specs: Mapping,
    seq_specs: Mapping,
    serialized: Any = None,
    sequence: bool = False,
) -> None:
    code, record, column, in_seq, step = err.code, err.record, err.column, err.in_sequence, err.step
    expected, actual, offset = err.expected, err.actual, err.offset
    batch = serialized if isinstance(serialized, RecordBatch) else None
    path = batch.path if batch is not None else None
    where = f"record {batch.record_index(record) if batch is not None else record}" + (f" of {path!r}" if path else "")
    if code == ParseErrorCode.MALFORMED:
        feat = ""
        if column >= 0:
            feat = f" (inside {'feature list' if in_seq else 'feature'} {(seq_names if in_seq else names)[column]!r})"
        raise DecodeError(
            f"{where} is not a valid serialized {'SequenceExample' if sequence else 'Example'}: "
            f"malformed protobuf at byte {offset}{feat}",
            offset=offset,
            record_index=record,
        )
    key = (seq_names if in_seq else names)[column]
    what = "feature list" if in_seq else "feature"
    at_step = f", step {step}" if in_seq and step >= 0 else ""
    if code == ParseErrorCode.MISSING:
        named = _names_nearby(key, serialized, record, in_seq, sequence)
        if named is not None:
            msg = f"{what} {key!r} is required but missing in {where}{named}"
        elif in_seq:
            msg = (
                f"{what} {key!r} is required but missing in {where}; pass allow_missing=True to "
                "FixedLenSequenceFeature to give such records zero steps"
            )
        else:
            msg = (
                f"{what} {key!r} is required but missing in {where}; give its FixedLenFeature a "
                "default_value, or use VarLenFeature"
            )
    elif code == ParseErrorCode.KIND_MISMATCH:
        msg = (
            f"{what} {key!r} in {where}{at_step}: data types don't match: expected "
            f"{_KIND_NAMES[FeatureKind(expected)]} but found {_KIND_NAMES[FeatureKind(actual)]}"
        )
    elif code == ParseErrorCode.COUNT_MISMATCH:
        spec = (seq_specs if in_seq else specs).get(key)
        shape = list(getattr(spec, "shape", ()) or [])
        msg = (
            f"{what} {key!r} in {where}{at_step}: expected {expected} value{'' if expected == 1 else 's'} (shape {shape}) "
            f"but found {actual}"
        )
    elif code == ParseErrorCode.NOT_MULTIPLE:
        msg = (
            f"{what} {key!r} in {where}: found {actual} values, not a multiple of {expected} "
            "(the row size of its FixedLenSequenceFeature shape)"
        )
    else:  # pragma: no cover
        msg = f"{what} {key!r} in {where}: parse error {int(code)}"
    raise ParseError(msg, feature=key, record_index=record)


_NAME_SAMPLE = 64  # records whose feature names a missing-feature error looks at


def _names_nearby(key: str, serialized: Any, record: int, in_seq: bool, sequence: bool) -> str | None:
    """For a required feature missing from the failing record and from every record sampled around it: the
    rest of the message, naming the close names the records do hold (a misspelled key), not a default_value
    that would hide the typo. None when some sampled record has ``key`` (an optional feature) or the records
    cannot be read back here."""
    import difflib

    try:
        count = len(serialized)
        picks = [record] + [i for i in range(min(count, _NAME_SAMPLE)) if i != record]
        names: set[str] = set()
        for i in picks:
            payload = bytes(serialized[i])
            if sequence:
                decoded = _native.decode_sequence_example(payload, keep_empty=True)
                names.update(decoded.feature_lists if in_seq else decoded.context)
            else:
                names.update(_native.decode_example(payload, keep_empty=True))
    except Exception:  # not records this can index or decode: keep the general advice
        return None
    if key in names:
        return None
    where = "" if len(picks) == 1 else f" and in all {len(picks)} records looked at"
    hiding = "allow_missing=True" if in_seq else "a default_value"
    close = difflib.get_close_matches(key, sorted(names), n=3, cutoff=0.6)
    if close:
        guess = " or ".join(repr(c) for c in close)
        return f"{where}; did you mean {guess}? ({hiding} would hide a misspelled key)"
    held = ", ".join(repr(n) for n in sorted(names)[:12]) + (", ..." if len(names) > 12 else "")
    return (
        f"{where}, which hold {held or 'no features'}; check the key ({hiding} would hide a misspelled "
        "one: use it only for a feature that some records lack)"
    )


class ExampleParser:
    """A reusable ``tf.io.parse_example``: validates ``features`` once, parses many batches.

    ``parse(batch)`` takes a list of ``bytes``, a NumPy object array of
    ``bytes`` or a :class:`tfrx.RecordBatch` and returns a dict of NumPy
    arrays, :class:`SparseArray` and :class:`RaggedArray` values keyed like
    ``features``. ``num_parallel_calls`` (default: the usable cores, as with
    ``tfrx.AUTOTUNE``) splits big batches across native threads; results do
    not depend on it. ``bytes_as="views"`` returns string features as
    :class:`tfrx.BytesArray` (spans of the batch's buffer, no ``bytes``
    object per value) instead of object arrays.
    """

    @renamed_arguments(num_threads="num_parallel_calls")
    def __init__(self, features: Mapping, *, num_parallel_calls: int | None = None, bytes_as: str = "bytes") -> None:
        if not isinstance(features, Mapping) or not features:
            raise SpecError("features must be a non-empty dict mapping keys to feature specs")
        self._views = _check_bytes_as(bytes_as)
        self.bytes_as = bytes_as
        self.features = dict(features)
        self._plan = _ExamplePlan(self.features, context=False)
        self._core = _native.ParserCore(self._plan.cols.native, [], False)
        self._single_core: Any = None
        # Whether a parse makes bytes objects (a string feature, not as views): see _settle_malloc.
        self._makes_bytes = not self._views and any(
            getattr(getattr(f, "dtype", None), "name", None) == "string" for f in self.features.values()
        )
        _threads(num_parallel_calls)  # checked now, resolved per call (the usable cores may change)
        self.num_parallel_calls = num_parallel_calls

    @renamed_arguments(num_threads="num_parallel_calls")
    def parse(self, serialized: Any, *, num_parallel_calls: int | None = None) -> dict:
        """``tf.io.parse_example`` with this parser's features: a batch of records to a dict of arrays.

        ``serialized`` is a RecordBatch, a list of bytes or a NumPy object array;
        ``num_parallel_calls`` overrides the parser's own setting for this call.
        """
        n = self.num_parallel_calls if num_parallel_calls is None else num_parallel_calls
        return self._parse(self._core, serialized, _threads(n))

    def _parse(self, core: Any, serialized: Any, threads: int) -> dict:
        if self._makes_bytes and not _malloc_settled:
            _settle_malloc(serialized)
        result, batch = _records_call(core, serialized, threads, self._views)
        if result.error is not None:
            _raise_error(result.error, self._plan.cols.keys, [], self.features, {}, serialized)
        return self._plan.build(result.columns, batch)

    __call__ = parse

    def _parse_file(
        self, fd: int, offset: int, end: int, max_records: int, piece: int, max_bytes: int = 0
    ) -> tuple[dict, int, int] | None:
        """Up to ``max_records`` records of the uncompressed TFRecord file ``fd`` from the header at byte
        ``offset`` (before byte ``end``; ``max_bytes`` > 0: no more once their payloads reach it), read,
        checked and parsed piece by piece (``piece`` bytes at a time) in one native call: ``(features,
        records, next offset)``, strings as :class:`BytesArray` of their own. ``None`` when the records
        there are damaged, cut short or do not parse, or a read failed: the caller reads them with a
        :class:`RecordReader` instead, which names what is wrong and where."""
        out = self._core.parse_file(fd, offset, end, max_records, piece, max_bytes)
        if out.status:
            return None
        if not _malloc_settled and out.next_offset - offset >= _LARGE_VALUES_BYTES:
            _settle()
        return self._plan.build(out.result.columns, out.records), out.records, out.next_offset

    def parse_single(self, serialized: Any) -> dict:
        """``tf.io.parse_single_example``: one record, no batch dimension.

        TensorFlow parses a single record with its own routine, in which an
        empty Feature never overrides an earlier occurrence of its key, for
        every feature type (in a batch that holds only for dense features).
        """
        if self._single_core is None:
            self._single_core = _native.ParserCore([_skipping_empty(c) for c in self._plan.cols.native], [], False)
        return {k: _strip_batch(v) for k, v in self._parse(self._single_core, _single_record(serialized), 1).items()}

    def __reduce__(self):
        # Pickled as its arguments (the native column specs are rebuilt from them): a pipeline with a
        # parse stage reaches DataLoader workers under spawn, the default start method on macOS and Windows.
        options = {"num_parallel_calls": self.num_parallel_calls, "bytes_as": self.bytes_as}
        return functools.partial(ExampleParser, **options), (self.features,)

    def __repr__(self) -> str:
        views = ', bytes_as="views"' if self._views else ""
        return f"tfrx.ExampleParser({self.features!r}{views})"


class SequenceExampleParser:
    """A reusable ``tf.io.parse_sequence_example``.

    ``parse(batch)`` returns ``(context, feature_lists, lengths)`` like
    TensorFlow; ``parse_single(record)`` returns ``(context, feature_lists)``.
    ``bytes_as="views"`` returns string features as :class:`tfrx.BytesArray`.
    """

    @renamed_arguments(num_threads="num_parallel_calls")
    def __init__(
        self,
        context_features: Mapping | None = None,
        sequence_features: Mapping | None = None,
        *,
        num_parallel_calls: int | None = None,
        bytes_as: str = "bytes",
    ) -> None:
        if not (context_features or sequence_features):
            raise SpecError("context_features and sequence_features are both empty; give at least one")
        self._views = _check_bytes_as(bytes_as)
        self.bytes_as = bytes_as
        self.context_features = dict(context_features or {})
        self.sequence_features = dict(sequence_features or {})
        self._context = _ExamplePlan(self.context_features, context=True)
        self.seq_cols = _Columns("feature list")
        self._fls: dict[str, tuple] = {}
        for key in sorted(self.sequence_features):
            spec = self.sequence_features[key]
            if isinstance(spec, FixedLenSequenceFeature):
                shape = _known_shape(spec, key, True)
                if spec.default_value is not None:
                    raise SpecError(
                        f"FixedLenSequenceFeature {key!r}: default_value must be None in sequence_features "
                        "(TensorFlow pads feature lists with zeros)"
                    )
                n = _prod(shape)
                self.seq_cols.add(
                    key,
                    "dense",
                    spec.dtype,
                    SequenceColumnSpec(
                        key, FeatureKind(spec.dtype.kind), step_count=n, required=not spec.allow_missing
                    ),
                )
                self._fls[key] = (shape, spec.dtype)
            elif isinstance(spec, VarLenFeature):
                self.seq_cols.add(key, "sparse", spec.dtype, SequenceColumnSpec(key, FeatureKind(spec.dtype.kind)))
            elif isinstance(spec, RaggedFeature):
                value_key = key if spec.value_key is None else spec.value_key
                self.seq_cols.add(
                    value_key, "ragged", spec.dtype, SequenceColumnSpec(value_key, FeatureKind(spec.dtype.kind))
                )
                _split_type(self.seq_cols, value_key, spec)
                for p in spec.partitions:
                    if not isinstance(p, UniformRowLength):
                        self.seq_cols.add(p.key, "ragged", _dt.int64, SequenceColumnSpec(p.key, FeatureKind.INT64))
                        _split_type(self.seq_cols, p.key, spec)
            else:
                raise SpecError(f"unsupported {type(spec).__name__} {spec!r} for key {key!r} in sequence_features")
        self._core = _native.ParserCore(self._context.cols.native, self.seq_cols.native, True)
        _threads(num_parallel_calls)
        self.num_parallel_calls = num_parallel_calls

    @renamed_arguments(num_threads="num_parallel_calls")
    def parse(self, serialized: Any, *, num_parallel_calls: int | None = None) -> ParsedSequenceExamples:
        """``tf.io.parse_sequence_example``: a batch of records to :class:`ParsedSequenceExamples`
        ``(context, feature_lists, lengths)``."""
        threads = _threads(self.num_parallel_calls if num_parallel_calls is None else num_parallel_calls)
        result, batch = _records_call(self._core, serialized, threads, self._views)
        if result.error is not None:
            _raise_error(
                result.error,
                self._context.cols.keys,
                self.seq_cols.keys,
                self.context_features,
                self.sequence_features,
                serialized,
                sequence=True,
            )
        context = self._context.build(result.columns, batch)
        raw: dict[str, _native.SequenceColumn] = dict(zip(self.seq_cols.keys, result.sequence_columns))
        feature_lists: dict[str, Any] = {}
        lengths: dict[str, Any] = {}
        for key, spec in self.sequence_features.items():
            if isinstance(spec, FixedLenSequenceFeature):
                shape, dtype = self._fls[key]
                column = raw[key]
                pad = b"" if dtype is _dt.string else dtype.numpy.type(0)
                feature_lists[key] = _Builder.padded(column.values, column.record_splits, batch, shape, pad, dtype)
                lengths[key] = np.diff(column.record_splits)
            elif isinstance(spec, VarLenFeature):
                feature_lists[key] = self._sequence_sparse(raw[key], batch)
            else:
                value_key = key if spec.value_key is None else spec.value_key
                # Each feature list's steps as rows, as the Example-level builders read a column.
                flat = {k: _StepColumn(c.values, c.step_splits) for k, c in raw.items()}
                outer = raw[value_key].record_splits
                for p in spec.partitions:
                    if not isinstance(p, UniformRowLength) and not np.array_equal(raw[p.key].record_splits, outer):
                        counts = np.diff(outer), np.diff(raw[p.key].record_splits)
                        rec = int(np.flatnonzero(counts[0] != counts[1])[0])
                        raise ParseError(
                            f"ragged feature {key!r}: record {rec} has {int(counts[0][rec])} steps of "
                            f"{value_key!r} but {int(counts[1][rec])} of partition {p.key!r}: the steps do "
                            "not line up, so tfrx refuses it; give both feature lists the same number of steps "
                            "(TensorFlow refuses it with validate=True, but with validate=False, and in "
                            "parse_single_sequence_example for some partitions, returns rows that do not "
                            "match their values)",
                            feature=key,
                        )
                feature_lists[key] = _Builder.ragged(spec, flat, value_key, key, outer)
        return ParsedSequenceExamples(context, feature_lists, lengths)

    @staticmethod
    def _sequence_sparse(out: _native.SequenceColumn, batch: int) -> SparseArray:
        values, step_splits, record_splits = out.values, out.step_splits, out.record_splits
        dense_shape = _native.sparse_indices(record_splits, step_splits, False).dense_shape
        return SparseArray._from_splits(_values_array(values), (record_splits, step_splits), dense_shape)

    __call__ = parse

    def parse_single(self, serialized: Any) -> ParsedSequenceExample:
        """``tf.io.parse_single_sequence_example``: one record, no batch dimension, as a
        :class:`ParsedSequenceExample` ``(context, feature_lists)``."""
        context, feature_lists, _ = self.parse(_single_record(serialized), num_parallel_calls=1)
        return ParsedSequenceExample(
            {k: _strip_batch(v) for k, v in context.items()},
            {k: _strip_batch(v) for k, v in feature_lists.items()},
        )

    def __reduce__(self):
        # As ExampleParser's: pickled as its arguments.
        options = {"num_parallel_calls": self.num_parallel_calls, "bytes_as": self.bytes_as}
        return functools.partial(SequenceExampleParser, **options), (self.context_features, self.sequence_features)

    def __repr__(self) -> str:
        return f"tfrx.SequenceExampleParser({self.context_features!r}, {self.sequence_features!r})"


class _StepColumn(NamedTuple):
    """A feature-list column with its steps as the rows: what _Builder reads of a native RaggedColumn."""

    values: Any
    row_splits: np.ndarray


class ParsedSequenceExamples(NamedTuple):
    """A batch of parsed SequenceExamples: unpacks as ``context, feature_lists, lengths``, as in TensorFlow."""

    context: dict
    feature_lists: dict
    lengths: dict


class ParsedSequenceExample(NamedTuple):
    """One parsed SequenceExample: unpacks as ``context, feature_lists``, as in TensorFlow."""

    context: dict
    feature_lists: dict


@renamed_arguments(num_threads="num_parallel_calls")
def parse_example(
    serialized: Any, features: Mapping, *, num_parallel_calls: int | None = None, bytes_as: str = "bytes"
) -> dict:
    """``tf.io.parse_example``: a batch of serialized Examples -> dict of arrays."""
    return ExampleParser(features, num_parallel_calls=num_parallel_calls, bytes_as=bytes_as).parse(serialized)


def parse_single_example(serialized: Any, features: Mapping) -> dict:
    """``tf.io.parse_single_example``: one serialized Example -> dict of arrays."""
    if hasattr(type(serialized), "__tfrx_trace__"):
        # A placeholder of tfrx.data tracing a map function (to fuse the parse with batch): recorded, not run.
        ExampleParser(features)  # the spec's errors now, as in the call it stands for
        return serialized.__tfrx_trace__("parse_single_example", features=features)
    return ExampleParser(features).parse_single(serialized)


@renamed_arguments(num_threads="num_parallel_calls")
def parse_sequence_example(
    serialized: Any,
    context_features: Mapping | None = None,
    sequence_features: Mapping | None = None,
    *,
    num_parallel_calls: int | None = None,
    bytes_as: str = "bytes",
) -> ParsedSequenceExamples:
    """``tf.io.parse_sequence_example``: returns :class:`ParsedSequenceExamples` ``(context, feature_lists, lengths)``."""
    return SequenceExampleParser(
        context_features, sequence_features, num_parallel_calls=num_parallel_calls, bytes_as=bytes_as
    ).parse(serialized)


def parse_single_sequence_example(
    serialized: Any, context_features: Mapping | None = None, sequence_features: Mapping | None = None
) -> ParsedSequenceExample:
    """``tf.io.parse_single_sequence_example``: returns :class:`ParsedSequenceExample` ``(context, feature_lists)``."""
    return SequenceExampleParser(context_features, sequence_features).parse_single(serialized)
