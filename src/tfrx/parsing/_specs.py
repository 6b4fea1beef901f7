"""Feature specs, mirroring TensorFlow's ``tf.io.*Feature`` configurations.

The classes are named tuples with TensorFlow's field names and order, so
``FixedLenFeature([], tf.int64)`` written for TensorFlow works unchanged
(TensorFlow dtypes are accepted by name). Their ``repr`` is Python code that
rebuilds them (``tfrx.FixedLenFeature(shape=[], dtype=tfrx.int64)``), and
:func:`features_to_json` / :func:`features_from_json` store them as JSON.

Validation that TensorFlow performs when a parse op is built (unknown
dimensions, conflicting keys, defaults of the wrong size) happens here when
a parser is built and raises :class:`tfrx.SpecError`.
"""

from __future__ import annotations

import base64
import collections
import json
import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from tfrx import dtypes
from tfrx.errors import SpecError

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "VarLenFeature",
    "SparseFeature",
    "RaggedFeature",
    "features_to_json",
    "features_from_json",
]


def _shape_tuple(shape: Any, feature: str) -> tuple:
    if shape is None:
        raise SpecError(f"{feature}: shape is required (use [] for a scalar)")
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        raise SpecError(f"{feature}: shape must be a list of ints, got {shape!r}") from None
    out: list[int | None] = []
    for d in dims:
        d = getattr(d, "value", d)  # tf.compat.v1.Dimension
        if d is None:
            out.append(None)
        elif isinstance(d, (int, np.integer)) and int(d) >= 0:
            out.append(int(d))
        else:
            raise SpecError(f"{feature}: shape dimensions must be non-negative ints or None, got {shape!r}")
    return tuple(out)


def _value_repr(v: Any) -> str:
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value_repr(x) for x in v) + "]"
    if isinstance(v, float) and not math.isfinite(v):
        return f"float({str(v)!r})"
    return repr(v)


def _shape_repr(shape: tuple) -> str:
    return "[" + ", ".join("None" if d is None else str(d) for d in shape) + "]"


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A fixed number of values per record, parsed into an array ``[batch] + shape``.

    Without ``default_value`` the feature is required; a default is a scalar
    for ``shape=[]`` or holds exactly ``prod(shape)`` values (nested or flat).
    """

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, _shape_tuple(shape, "FixedLenFeature"), dtypes.as_dtype(dtype), default_value)

    def __repr__(self) -> str:
        extra = "" if self.default_value is None else f", default_value={_value_repr(self.default_value)}"
        return f"tfrx.FixedLenFeature(shape={_shape_repr(self.shape)}, dtype={self.dtype!r}{extra})"


class FixedLenSequenceFeature(
    collections.namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])
):
    """Any number of rows of ``shape`` values per record, padded to the longest row count.

    In ``parse_example`` it needs ``allow_missing=True`` and ``default_value``
    (a scalar) pads; in ``parse_sequence_example`` each step holds one row.
    """

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(
            cls,
            _shape_tuple(shape, "FixedLenSequenceFeature"),
            dtypes.as_dtype(dtype),
            bool(allow_missing),
            default_value,
        )

    def __repr__(self) -> str:
        extra = ", allow_missing=True" if self.allow_missing else ""
        if self.default_value is not None:
            extra += f", default_value={_value_repr(self.default_value)}"
        return f"tfrx.FixedLenSequenceFeature(shape={_shape_repr(self.shape)}, dtype={self.dtype!r}{extra})"


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """Any number of values per record, parsed into a :class:`tfrx.SparseArray`."""

    __slots__ = ()

    def __new__(cls, dtype):
        return super().__new__(cls, dtypes.as_dtype(dtype))

    def __repr__(self) -> str:
        return f"tfrx.VarLenFeature(dtype={self.dtype!r})"


class SparseFeature(
    collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
):
    """A sparse array built from index feature(s) and a value feature of the same record."""

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        if isinstance(index_key, (list, tuple)):
            index_key = list(index_key)
        if isinstance(size, (list, tuple)):
            size = [int(s) for s in size]
        elif size is not None:
            size = int(size)
        return super().__new__(cls, index_key, value_key, dtypes.as_dtype(dtype), size, bool(already_sorted))

    @property
    def index_keys(self) -> list:
        """``index_key`` as a list (one key per sparse dimension)."""
        return [self.index_key] if isinstance(self.index_key, str) else list(self.index_key)

    @property
    def sizes(self) -> list:
        """``size`` as a list (one size per sparse dimension)."""
        return [self.size] if not isinstance(self.size, list) else list(self.size)

    def __repr__(self) -> str:
        extra = ", already_sorted=True" if self.already_sorted else ""
        return (
            f"tfrx.SparseFeature(index_key={self.index_key!r}, value_key={self.value_key!r}, "
            f"dtype={self.dtype!r}, size={self.size!r}{extra})"
        )


class _Partition:
    __slots__ = ()


class _KeyPartition(_Partition):
    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        if not isinstance(key, str):  # "" names the feature "", as in TensorFlow
            raise SpecError(f"RaggedFeature.{type(self).__name__}: key must be a string, got {key!r}")
        self.key = key

    def __repr__(self) -> str:
        return f"tfrx.RaggedFeature.{type(self).__name__}({self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.key == self.key

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.key))

    def __reduce__(self):
        return (type(self), (self.key,))


class RowSplits(_KeyPartition):
    """Partition by row splits stored under ``key`` (``[0, ..., nvals]`` per record)."""

    __slots__ = ()


class RowLengths(_KeyPartition):
    """Partition by row lengths stored under ``key``."""

    __slots__ = ()


class RowStarts(_KeyPartition):
    """Partition by row start offsets stored under ``key``."""

    __slots__ = ()


class RowLimits(_KeyPartition):
    """Partition by row limit offsets stored under ``key``."""

    __slots__ = ()


class ValueRowIds(_KeyPartition):
    """Partition by the row id of every value, stored under ``key``."""

    __slots__ = ()


class UniformRowLength(_Partition):
    """Partition into rows of ``length`` values each."""

    __slots__ = ("length",)

    def __init__(self, length: int) -> None:
        if not isinstance(length, (int, np.integer)) or int(length) < 0:
            raise SpecError(f"RaggedFeature.UniformRowLength: length must be a non-negative int, got {length!r}")
        self.length = int(length)

    def __repr__(self) -> str:
        return f"tfrx.RaggedFeature.UniformRowLength({self.length})"

    def __eq__(self, other: object) -> bool:
        return type(other) is UniformRowLength and other.length == self.length

    def __hash__(self) -> int:
        return hash(("UniformRowLength", self.length))

    def __reduce__(self):
        return (UniformRowLength, (self.length,))


_PARTITIONS = (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength)


def _as_partition(p: Any) -> _Partition:
    if isinstance(p, _PARTITIONS):
        return p
    # TensorFlow's own partition objects port by name.
    name = type(p).__name__
    for cls in _PARTITIONS:
        if cls.__name__ == name:
            return cls(p.length) if cls is UniformRowLength else cls(p.key)
    raise SpecError(f"RaggedFeature: unsupported partition {p!r}; use tfrx.RaggedFeature.RowLengths(...) etc.")


def _as_splits_dtype(d: Any) -> np.dtype:
    name = getattr(d, "name", None) if type(d).__module__.startswith(("tensorflow", "tfrx")) else None
    try:
        nd = np.dtype(name or d)
    except TypeError:
        raise SpecError(f"RaggedFeature: row_splits_dtype must be int32 or int64, got {d!r}") from None
    if nd not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise SpecError(f"RaggedFeature: row_splits_dtype must be int32 or int64, got {d!r}")
    return nd


class RaggedFeature(
    collections.namedtuple("RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])
):
    """Values of ``value_key`` (default: the feature's own key) as a :class:`tfrx.RaggedArray`.

    ``partitions`` add inner ragged dimensions, outermost first, from other
    int64 features of the same record. ``row_splits_dtype`` defaults to
    int32 as in TensorFlow.
    """

    __slots__ = ()
    RowSplits = RowSplits
    RowLengths = RowLengths
    RowStarts = RowStarts
    RowLimits = RowLimits
    ValueRowIds = ValueRowIds
    UniformRowLength = UniformRowLength

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=np.int32, validate=False):
        if value_key is not None and (not isinstance(value_key, str) or not value_key):
            raise SpecError(f"RaggedFeature: value_key must be a non-empty string, got {value_key!r}")
        if not isinstance(partitions, (list, tuple)):
            raise SpecError(f"RaggedFeature: partitions must be a list or tuple, got {partitions!r}")
        if not isinstance(validate, bool):
            raise SpecError(f"RaggedFeature: validate must be a bool, got {validate!r}")
        return super().__new__(
            cls,
            dtypes.as_dtype(dtype),
            value_key,
            tuple(_as_partition(p) for p in partitions),
            _as_splits_dtype(row_splits_dtype),
            validate,
        )

    def __repr__(self) -> str:
        parts = [f"dtype={self.dtype!r}"]
        if self.value_key is not None:
            parts.append(f"value_key={self.value_key!r}")
        if self.partitions:
            parts.append("partitions=[" + ", ".join(repr(p) for p in self.partitions) + "]")
        if self.row_splits_dtype != np.int32:
            parts.append(f"row_splits_dtype={self.row_splits_dtype.name!r}")
        if self.validate:
            parts.append("validate=True")
        return "tfrx.RaggedFeature(" + ", ".join(parts) + ")"


SPEC_TYPES = (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, SparseFeature, RaggedFeature)


# ------------------------------------------------------------------ JSON


def _json_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, bytes):
        return {"base64": base64.b64encode(v).decode("ascii")}
    if isinstance(v, np.generic):
        return v.item()
    return v


def _from_json_value(v: Any) -> Any:
    if isinstance(v, list):
        return [_from_json_value(x) for x in v]
    if isinstance(v, dict) and set(v) == {"base64"}:
        return base64.b64decode(v["base64"])
    return v


def spec_to_dict(spec: Any) -> dict:
    """One spec as a JSON-ready dict (``{"type": "FixedLenFeature", ...}``)."""
    if isinstance(spec, FixedLenFeature):
        d = {"type": "FixedLenFeature", "shape": list(spec.shape), "dtype": spec.dtype.name}
    elif isinstance(spec, FixedLenSequenceFeature):
        d = {
            "type": "FixedLenSequenceFeature",
            "shape": list(spec.shape),
            "dtype": spec.dtype.name,
            "allow_missing": spec.allow_missing,
        }
    elif isinstance(spec, VarLenFeature):
        return {"type": "VarLenFeature", "dtype": spec.dtype.name}
    elif isinstance(spec, SparseFeature):
        return {
            "type": "SparseFeature",
            "index_key": spec.index_key,
            "value_key": spec.value_key,
            "dtype": spec.dtype.name,
            "size": spec.size,
            "already_sorted": spec.already_sorted,
        }
    elif isinstance(spec, RaggedFeature):
        parts = []
        for p in spec.partitions:
            if isinstance(p, UniformRowLength):
                parts.append({"type": "UniformRowLength", "length": p.length})
            else:
                parts.append({"type": type(p).__name__, "key": p.key})
        return {
            "type": "RaggedFeature",
            "dtype": spec.dtype.name,
            "value_key": spec.value_key,
            "partitions": parts,
            "row_splits_dtype": spec.row_splits_dtype.name,
            "validate": spec.validate,
        }
    else:
        raise SpecError(f"not a feature spec: {spec!r}")
    if spec.default_value is not None:
        d["default_value"] = _json_value(spec.default_value)
    return d


def spec_from_dict(d: Mapping) -> Any:
    """Inverse of :func:`spec_to_dict`."""
    kind = d.get("type")
    if kind == "FixedLenFeature":
        return FixedLenFeature(d["shape"], d["dtype"], _from_json_value(d.get("default_value")))
    if kind == "FixedLenSequenceFeature":
        return FixedLenSequenceFeature(
            d["shape"], d["dtype"], d.get("allow_missing", False), _from_json_value(d.get("default_value"))
        )
    if kind == "VarLenFeature":
        return VarLenFeature(d["dtype"])
    if kind == "SparseFeature":
        return SparseFeature(d["index_key"], d["value_key"], d["dtype"], d["size"], d.get("already_sorted", False))
    if kind == "RaggedFeature":
        parts = []
        for p in d.get("partitions", []):
            cls = {c.__name__: c for c in _PARTITIONS}.get(p.get("type"))
            if cls is None:
                raise SpecError(f"unknown ragged partition {p!r}")
            parts.append(cls(p["length"]) if cls is UniformRowLength else cls(p["key"]))
        return RaggedFeature(
            d["dtype"], d.get("value_key"), parts, d.get("row_splits_dtype", "int32"), d.get("validate", False)
        )
    raise SpecError(f"unknown feature spec type {kind!r}")


def features_to_python(features: Any) -> str:
    """Python code that builds ``features`` (a spec, or a ``(context, sequence)`` pair), for pasting into a script."""

    def block(name, spec):
        lines = [f"{name} = {{"]
        for k, v in spec.items():
            lines.append(f"    {k!r}: {v!r},")
        lines.append("}")
        return "\n".join(lines)

    if isinstance(features, tuple):
        return (
            "import tfrx\n\n"
            + block("context_features", features[0])
            + "\n"
            + block("sequence_features", features[1])
            + "\n"
        )
    return "import tfrx\n\n" + block("features", features) + "\n"


def features_to_json(features: Any, **json_kwargs: Any) -> str:
    """A features dict (or a ``(context, sequence)`` pair) as a JSON string."""
    if isinstance(features, tuple) and len(features) == 2 and not isinstance(features, SPEC_TYPES):
        obj: Any = {
            "context": {k: spec_to_dict(v) for k, v in (features[0] or {}).items()},
            "sequence": {k: spec_to_dict(v) for k, v in (features[1] or {}).items()},
        }
    else:
        obj = {"features": {k: spec_to_dict(v) for k, v in features.items()}}
    json_kwargs.setdefault("indent", 2)
    return json.dumps(obj, **json_kwargs)


class SequenceFeatures(NamedTuple):
    """The two feature dicts of a SequenceExample, ``(context, sequence)`` (unpacks as a pair)."""

    context: dict
    sequence: dict


def features_from_json(text: str | bytes) -> Any:
    """Inverse of :func:`features_to_json`: a dict, or a :class:`SequenceFeatures` ``(context, sequence)``."""
    obj = json.loads(text)
    if "features" in obj:
        return {k: spec_from_dict(v) for k, v in obj["features"].items()}
    if "context" in obj or "sequence" in obj:
        return SequenceFeatures(
            {k: spec_from_dict(v) for k, v in obj.get("context", {}).items()},
            {k: spec_from_dict(v) for k, v in obj.get("sequence", {}).items()},
        )
    raise SpecError("JSON holds neither 'features' nor 'context'/'sequence'")
