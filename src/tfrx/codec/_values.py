"""Mapping Python and NumPy values to the three Feature kinds.

``bytes``/``str`` (UTF-8) -> BytesList; ``bool``, ints and integer arrays
(int8..uint64) -> Int64List; floats and float16/32/64 arrays -> FloatList,
stored as float32 on the wire (as TensorFlow does). Scalars become one-element
lists; arrays of any rank are flattened row-major.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

__all__ = ["BYTES", "FLOAT", "INT64", "KIND_NAMES", "normalize_kind", "flat_values", "kind_of_dtype"]

# Feature.kind oneof field numbers.
BYTES, FLOAT, INT64 = 1, 2, 3
KIND_NAMES = {BYTES: "bytes", FLOAT: "float", INT64: "int64"}

_KIND_ALIASES = {
    "bytes": BYTES, "bytes_list": BYTES, "string": BYTES, "str": BYTES,
    "float": FLOAT, "float_list": FLOAT, "float32": FLOAT, "float64": FLOAT, "float16": FLOAT,
    "int64": INT64, "int64_list": INT64, "int": INT64, "bool": INT64,
}  # fmt: skip

_INT64_MAX = np.iinfo(np.int64).max


def normalize_kind(kind: object, name: str | None = None) -> int:
    """``"bytes"``/``"float"``/``"int64"`` (or a dtype, or a kind number) -> kind number."""
    if isinstance(kind, int) and kind in KIND_NAMES:
        return kind
    key = getattr(kind, "name", kind)  # tf.DType / np.dtype
    if isinstance(key, str) and key.lower() in _KIND_ALIASES:
        return _KIND_ALIASES[key.lower()]
    try:
        return kind_of_dtype(np.dtype(getattr(kind, "as_numpy_dtype", kind)), name)  # type: ignore[call-overload]  # np.dtype raises TypeError on the rest
    except TypeError:
        pass
    where = f" for feature {name!r}" if name is not None else ""
    raise ValueError(f"unknown feature kind {kind!r}{where}; use 'bytes', 'float' or 'int64'")


def kind_of_dtype(dtype: np.dtype, name: str | None = None) -> int:
    if dtype.kind in "biu":
        return INT64
    if dtype.kind == "f":
        return FLOAT
    if dtype.kind in "SU":
        return BYTES
    where = f" for feature {name!r}" if name is not None else ""
    raise TypeError(f"cannot store NumPy dtype {dtype}{where} in a Feature (bytes, integer or float expected)")


def _as_bytes(v: object, name: str | None) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    where = f" in feature {name!r}" if name is not None else ""
    raise TypeError(f"expected bytes or str{where}, got {type(v).__name__}")


def _to_int64(arr: np.ndarray, name: str | None) -> np.ndarray:
    where = f" in feature {name!r}" if name is not None else ""
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size and int(arr.max()) > _INT64_MAX:
        raise OverflowError(
            f"uint64 value {int(arr.max())}{where} does not fit in int64 (Int64List holds signed 64-bit)"
        )
    if arr.dtype.kind not in "biu":
        raise TypeError(f"expected integers{where}, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64).reshape(-1)


def _to_float32(arr: np.ndarray, name: str | None) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        where = f" in feature {name!r}" if name is not None else ""
        raise TypeError(f"expected numbers{where}, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):  # out-of-range doubles become +-inf, as in protobuf
        return np.ascontiguousarray(arr, dtype=np.float32).reshape(-1)


def _python_numbers(items: list, kind: int | None, name: str | None) -> np.ndarray:
    where = f" in feature {name!r}" if name is not None else ""
    if kind == INT64 or (kind is None and all(isinstance(v, (int, np.integer, np.bool_)) for v in items)):
        if any(isinstance(v, (float, np.floating)) for v in items):
            raise TypeError(f"expected integers{where}, got a float")
        try:
            arr = np.array(items, dtype=np.int64)
        except OverflowError:
            big = next(v for v in items if not -(2**63) <= int(v) <= _INT64_MAX)
            raise OverflowError(f"integer {big}{where} does not fit in int64") from None
        except (TypeError, ValueError):
            raise TypeError(f"expected integers{where}, got {items[:3]!r}...") from None
        return arr
    try:
        return _to_float32(np.array(items, dtype=np.float64), name)
    except (TypeError, ValueError):
        raise TypeError(f"cannot store {items[:3]!r}...{where} in a Feature") from None


def flat_values(value: object, kind: int | None = None, name: str | None = None):
    """``(kind, values)``: values an int64 / float32 1-D array, or a list of bytes.

    ``kind`` forces the Feature kind; otherwise it is inferred from the value.
    """
    if isinstance(value, (bytes, str, bytearray, memoryview)):
        if kind is not None and kind != BYTES:
            raise TypeError(f"expected numbers in feature {name!r}, got {type(value).__name__}")
        return BYTES, [_as_bytes(value, name)]
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        k = kind if kind is not None else kind_of_dtype(value.dtype, name)
        if k == BYTES:
            if value.dtype.kind not in "SU":
                raise TypeError(f"expected bytes in feature {name!r}, got dtype {value.dtype}")
            return BYTES, [_as_bytes(v, name) for v in value.reshape(-1).tolist()]
        return k, _to_int64(value, name) if k == INT64 else _to_float32(value, name)
    if isinstance(value, (bool, int, float, np.generic)):
        return flat_values(np.asarray(value), kind, name)
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise TypeError(f"cannot store a {type(value).__name__} in feature {name!r}")
    items = value.reshape(-1).tolist() if isinstance(value, np.ndarray) else list(value)
    if items and any(isinstance(v, (list, tuple, np.ndarray)) for v in items):
        flat: list = []
        for v in items:  # nested lists flatten row-major, like arrays
            _, sub = flat_values(v, kind, name)
            flat.extend(sub.tolist() if isinstance(sub, np.ndarray) else sub)
        items = flat
    if not items:
        if kind is None:
            raise ValueError(
                f"feature {name!r} is an empty list, whose kind cannot be inferred; "
                f"pass kinds={{{name!r}: 'int64'}} (or 'float', 'bytes') or use tfrx.int64_feature([])"
            )
        return kind, [] if kind == BYTES else np.zeros(0, np.int64 if kind == INT64 else np.float32)
    if kind == BYTES or (kind is None and isinstance(items[0], (bytes, str, bytearray, memoryview))):
        return BYTES, [_as_bytes(v, name) for v in items]
    arr = _python_numbers(items, kind, name)
    return (INT64 if arr.dtype == np.int64 else FLOAT), arr
