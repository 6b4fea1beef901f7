"""Connectors stored as tensors: :class:`Tensor` (Scalar, Text, BBoxFeature, Audio samples) and :class:`ClassLabel`.

Values are stored as int64, float32 or bytes (float64 is widened back after
float32 rounding, as TFDS does); a shape with one unknown dimension is a flat
list reshaped; nested sequences of unknown length use
``<key>/ragged_flat_values`` + ``<key>/ragged_row_lengths_<k>``;
``encoding="bytes"|"zlib"`` tensors are raw little-endian bytes (``<key>/value``
+ ``<key>/shape`` when more than one dimension is unknown).
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import Any

import numpy as np

from tfrx.errors import ParseError, SpecError
from tfrx.parsing import FixedLenFeature
from tfrx.tfds.features.base import (
    Feature,
    VariableSpec,
    _Block,
    _byte_rows,
    _bytes_spec,
    _cast,
    _dims_json,
    _dtype_name,
    _known_shape,
    _parse_dtype,
    _shape_str,
    _stack,
)


@dataclasses.dataclass
class Tensor(Feature):
    """``tfds.features.Tensor`` (and Scalar, ClassLabel, Text, BBoxFeature, Audio, which store like it)."""

    shape: tuple = ()
    dtype: np.dtype = dataclasses.field(default_factory=lambda: np.dtype(np.int64))
    encoding: str = "none"
    kind_: str = "Tensor"
    extra: dict = dataclasses.field(default_factory=dict)
    optional: bool = False
    _plans: dict = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.kind = self.kind_
        self.shape = _known_shape(self.shape)
        self.dtype = np.dtype(self.dtype)
        self.encoding = (self.encoding or "none").lower()

    def __repr__(self) -> str:
        enc = f", encoding={self.encoding}" if self.encoding != "none" else ""
        if self.extra.get("file_format"):
            enc += f", file_format={self.extra['file_format']}"
        if self.optional:
            enc += ", optional=True"
        return f"{self.kind}(shape={_shape_str(self.shape)}, dtype={_dtype_name(self.dtype)}{enc})"

    def default_value(self) -> Any:
        """What TFDS decodes an ``optional=True`` feature written as ``None`` to (``Tensor._default_value``).

        The feature's key is left out of the Example and parsed with this
        default: ``b""`` for strings, the dtype's minimum for integers and
        floats, ``False`` for bools, repeated over the shape.
        """
        dt = self.dtype
        if dt == object:
            value: Any = b""
        elif dt == np.bool_:
            value = False
        elif dt.kind in "iu":
            value = np.iinfo(dt).min
        elif dt.kind == "f":
            value = np.finfo(dt).min
        else:
            raise SpecError(f"{self}: optional features of dtype {dt} are not supported by TFDS either")
        return value if not self.shape else np.full(self.shape, value, dtype=dt)

    def _parse_default(self):
        """The default as the parser stores it (int64 / float32 / bytes), as TFDS's parsing spec casts it."""
        value = self.default_value()
        if self.dtype == object:
            return value
        with np.errstate(over="ignore"):
            stored = np.asarray(value).astype(np.float32 if self.dtype.kind == "f" else np.int64)
        return stored if stored.ndim else stored.item()

    @property
    def sample_rate(self) -> int | None:
        """An Audio feature's ``sample_rate`` metadata (None for other kinds)."""
        return self.extra.get("sample_rate")

    # ---------------------------------------------------------- decode
    def _plan(self, seq: tuple) -> tuple:
        """``(full shape, unknown dims, target shape)`` for values nested in ``seq`` (cached per seq)."""
        plan = self._plans.get(seq)
        if plan is None:
            full = tuple(seq) + self.shape
            plan = (full, sum(d is None for d in full), tuple(-1 if d is None else d for d in full))
            self._plans[seq] = plan
        return plan

    def _spec(self, key: str, seq: tuple, out: dict, variable: VariableSpec) -> None:
        if self.encoding != "none":
            if sum(d is None for d in self.shape) > 1:
                out[f"{key}/value"] = variable((), "string")
                out[f"{key}/shape"] = variable((), "int64")
            else:
                out[key] = _bytes_spec(seq, variable)
            return
        full, unknown, _ = self._plan(seq)
        dt = _parse_dtype(self.dtype)
        if unknown == 0 and self.optional and not seq:
            # A value written as None is left out of the Example; TFDS parses it with the default.
            out[key] = FixedLenFeature(full, dt, default_value=self._parse_default())
        elif unknown == 0:
            out[key] = FixedLenFeature(full, dt)
        elif unknown == 1:
            out[key] = variable(tuple(d for d in full if d is not None), dt)
        elif len(seq) > 1:
            for k in range(len(seq) - 1):
                out[f"{key}/ragged_row_lengths_{k}"] = variable((), "int64")
            out[f"{key}/ragged_flat_values"] = variable(tuple(d for d in self.shape if d is not None), dt)

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        if self.encoding != "none":
            return self._decode_bytes(b, key, seq)
        full, unknown, target = self._plan(seq)
        if unknown == 0:
            # One cast for the whole block; iterating gives each record's row (a scalar for shape ()).
            return _cast(b.cols[key].reshape(-1), self.dtype).reshape((b.n,) + full)
        if unknown > 1 and len(seq) > 1:
            return self._decode_ragged(b, key, seq)
        if unknown > 1:
            raise SpecError(
                f"feature {key!r}: {self} has more than one unknown dimension and no encoding; "
                "TFDS cannot store it either"
            )
        values, splits = b.rows(key, self.dtype)
        out = []
        for i in range(b.n):
            row = values[splits[i] : splits[i + 1]]
            try:
                out.append(row.reshape(target))
            except ValueError:
                raise ParseError(
                    f"{b.where(i)}: feature {key!r} ({self}) holds {row.size} values, which do not "
                    f"fit the shape {_shape_str(full)}"
                ) from None
        return out

    def _decode_ragged(self, b: _Block, key: str, seq: tuple) -> list:
        flat, flat_splits = b.rows(f"{key}/ragged_flat_values", self.dtype)
        inner = tuple(-1 if d is None else d for d in self.shape)
        inner = (-1,) + inner[1:] if inner and inner[0] == -1 else (-1,) + inner
        levels = [b.rows(f"{key}/ragged_row_lengths_{k}", np.dtype(np.int64)) for k in range(len(seq) - 1)]
        out = []
        for i in range(b.n):
            values = flat[flat_splits[i] : flat_splits[i + 1]].reshape(inner)
            lengths = [v[s[i] : s[i + 1]] for v, s in levels]
            # The innermost level splits the flat values; outer levels group rows.
            rows: list = np.split(values, np.cumsum(lengths[-1])[:-1]) if len(lengths[-1]) else []
            for lv in reversed(lengths[:-1]):
                ends = np.cumsum(lv)
                rows = [rows[e - n : e] for n, e in zip(lv, ends)]
            out.append(list(rows))
        return out

    def _decode_one_bytes(self, data: bytes, shape) -> np.ndarray:
        if self.encoding == "zlib":
            data = zlib.decompress(data)
        elif self.encoding == "gzip":
            import gzip

            data = gzip.decompress(data)
        arr = np.frombuffer(data, dtype=self.dtype.newbyteorder("<")).astype(self.dtype, copy=False)
        return arr.reshape(tuple(-1 if d is None else d for d in shape))

    def _decode_bytes(self, b: _Block, key: str, seq: tuple) -> list:
        out = []
        if sum(d is None for d in self.shape) > 1:
            values, vsplits = b.rows(f"{key}/value", np.dtype(object))
            shapes, ssplits = b.rows(f"{key}/shape", np.dtype(np.int64))
            rank = len(self.shape)
            for i in range(b.n):
                vals = values[vsplits[i] : vsplits[i + 1]]
                dims = shapes[ssplits[i] : ssplits[i + 1]].reshape(-1, rank)
                items = [self._decode_item(b, i, key, v, tuple(int(d) for d in s)) for v, s in zip(vals, dims)]
                out.append(items if seq else items[0])
            return out
        for i, vals in enumerate(_byte_rows(b, key, seq)):
            if not seq:
                out.append(self._decode_item(b, i, key, vals, self.shape))
            else:
                out.append(_stack([self._decode_item(b, i, key, v, self.shape) for v in vals], self.shape, self.dtype))
        return out

    def _decode_item(self, b: _Block, i: int, key: str, data: bytes, shape) -> np.ndarray:
        try:
            return self._decode_one_bytes(data, shape)
        except (ValueError, zlib.error) as e:
            raise ParseError(
                f"{b.where(i)}: feature {key!r} ({self}): stored bytes do not decode to "
                f"{_shape_str(shape)} {_dtype_name(self.dtype)} ({e})"
            ) from None

    # ---------------------------------------------------------- encode
    def _encode(self, value, key: str, out: dict, seq: tuple) -> None:
        if value is None:
            if self.optional:
                return  # left out of the Example, as TFDS's example_serializer does
            raise ValueError(
                f"feature {key!r} ({self}) is None but the feature is not optional; "
                "give a value, or declare the feature with optional=True"
            )
        if self.kind == "Audio" and not seq and not isinstance(value, (np.ndarray, list, tuple)):
            from tfrx.tfds import audio

            data, fmt = audio.read_file(value, self.extra.get("file_format"))
            value = audio.decode(data, fmt, _channels(self.shape), self.dtype)
        if self.encoding != "none":
            items = list(value) if seq else [value]
            blobs: list = []
            shapes: list = []
            for v in items:
                arr = np.asarray(v, dtype=self.dtype)
                raw = arr.astype(self.dtype.newbyteorder("<"), copy=False).tobytes()
                blobs.append(zlib.compress(raw) if self.encoding == "zlib" else raw)
                shapes.extend(arr.shape)
            if sum(d is None for d in self.shape) > 1:
                out[f"{key}/value"] = ("bytes", blobs)
                out[f"{key}/shape"] = ("int64", np.asarray(shapes, np.int64))
            else:
                out[key] = ("bytes", blobs)
            return
        full = tuple(seq) + self.shape
        if sum(d is None for d in full) > 1 and len(seq) > 1:
            lengths: list = [[] for _ in range(len(seq) - 1)]
            flat: list = []

            def rec(v, level):
                if level == len(seq) - 1:
                    flat.extend(np.ravel(np.asarray(v, dtype=object if self.dtype == object else None)).tolist())
                    return
                for sub in v:
                    lengths[level].append(len(sub))
                    rec(sub, level + 1)

            rec(value, 0)
            for k, lv in enumerate(lengths):
                out[f"{key}/ragged_row_lengths_{k}"] = ("int64", np.asarray(lv, np.int64))
            out[f"{key}/ragged_flat_values"] = _storage_values(flat, self.dtype)
            return
        if self.dtype == object:
            out[key] = _storage_values(value if isinstance(value, (list, tuple, np.ndarray)) else [value], self.dtype)
            return
        out[key] = _storage_values(value, self.dtype)

    def to_proto_json(self) -> dict:
        payload: dict[str, Any] = {
            "dtype": _dtype_name(self.dtype),
            "encoding": self.encoding,
            "shape": _dims_json(self.shape) if self.shape else {},
        }
        if self.optional:
            payload["optional"] = True
        if self.kind == "ClassLabel":
            return {"classLabel": {"numClasses": str(self.extra.get("num_classes", 0))}}
        if self.kind == "Text":
            return {"text": {}}
        if self.kind == "BBoxFeature":
            return {"boundingBox": {"bboxFormat": "REL_YXYX", "dtype": "float32", "shape": {"dimensions": ["4"]}}}
        if self.kind == "Audio":
            return {
                "audio": _audio_json(
                    self.shape,
                    self.dtype,
                    self.extra.get("file_format"),
                    self.extra.get("sample_rate"),
                    self.encoding.upper(),
                    False,
                )
            }
        return {"tensor": payload}


def _storage_values(values, dtype: np.dtype):
    arr = np.ravel(np.asarray(values, dtype=object if dtype == object else None))
    if dtype == object:
        return ("bytes", [v.encode() if isinstance(v, str) else bytes(v) for v in arr])
    if dtype.kind in "fc":
        return ("float", arr.astype(np.float32))
    if dtype == np.uint64:
        return ("int64", arr.astype(np.uint64).view(np.int64))
    return ("int64", arr.astype(np.int64))


@dataclasses.dataclass
class ClassLabel(Tensor):
    """``tfds.features.ClassLabel``: an int64 scalar with label names.

    As in TFDS, ``ClassLabel(num_classes=n)`` is named ``"0"`` ... ``"n-1"``
    (``names_given`` is then False, and no label file is written for it).
    """

    names: list | None = None
    num_classes: int | None = None
    names_given: bool = dataclasses.field(default=False, init=False)

    def __post_init__(self) -> None:
        self.kind_ = "ClassLabel"
        if self.names is not None:
            self.names = [str(n) for n in self.names]
            if self.num_classes is not None and int(self.num_classes) != len(self.names):
                raise ValueError(f"ClassLabel: {len(self.names)} names but num_classes={self.num_classes}")
            self.num_classes = len(self.names)
            self.names_given = True
        elif self.num_classes is not None:
            self.names = [str(i) for i in range(int(self.num_classes))]
        self.extra = {"num_classes": self.num_classes}
        super().__post_init__()

    def int2str(self, i: int) -> str:
        if self.names is None:
            return str(i)
        if not 0 <= i < len(self.names):
            raise ValueError(f"label {i} is outside [0, {len(self.names)}); names: {self.names[:10]}")
        return self.names[i]

    def str2int(self, s: str) -> int:
        if self.names and s in self.names:
            return self.names.index(s)
        if s.isdigit() and (self.num_classes is None or int(s) < self.num_classes):
            return int(s)
        raise ValueError(f"unknown label {s!r}; names: {(self.names or [])[:10]}")

    def __repr__(self) -> str:
        return f"ClassLabel(shape=(), dtype=int64, num_classes={self.num_classes})"

    def _encode(self, value, key, out, seq):
        super()._encode(self._ints(value), key, out, seq)

    def _ints(self, value):
        if isinstance(value, (str, bytes)):
            return self.str2int(value.decode() if isinstance(value, bytes) else value)
        if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value):
            return [self._ints(v) for v in value]
        n = self.num_classes
        if n is not None and not -1 <= int(value) < n:  # -1: no label, as TFDS allows
            raise ValueError(f"class label {int(value)} is outside [-1, {n}) (num_classes={n})")
        return value


def _channels(shape) -> int:
    return int(shape[1]) if len(shape) > 1 and shape[1] is not None else 1


def _audio_json(shape, dtype, file_format, sample_rate, encoding: str, lazy: bool) -> dict:
    a: dict[str, Any] = {"dtype": _dtype_name(dtype), "encoding": encoding, "shape": _dims_json(shape)}
    if file_format:
        a["fileFormat"] = file_format
    if sample_rate:
        a["sampleRate"] = str(sample_rate)
    if lazy:
        a["lazyDecode"] = True
    return a
