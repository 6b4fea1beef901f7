"""The three value types of tf.train.Feature: ``tfrx.int64``, ``tfrx.float32``, ``tfrx.string``.

The other TensorFlow dtypes (``tfrx.uint8``, ``tfrx.int32``, ``tfrx.float64``,
``tfrx.bool`` ...) exist for ``decode_raw``, ``cast`` and ``convert_image_dtype``
(``out_type=tfrx.uint8``); a feature spec rejects them with a :class:`SpecError`,
as TensorFlow's parser does. Every dtype has TensorFlow's ``as_numpy_dtype``.

Specs accept these objects, the matching NumPy dtypes (``np.int64``,
``np.float32``, ``np.bytes_``/``object``), TensorFlow's dtypes (by name, so
``tf.int64`` works without importing TensorFlow here) and the strings
``"int64"``, ``"float32"``, ``"float"``, ``"string"``, ``"bytes"``.
"""

from __future__ import annotations

import numpy as np

from tfrx.errors import SpecError

__all__ = [
    "DType",
    "int64",
    "float32",
    "string",
    "as_dtype",
    "bool_",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "float16",
    "float64",
    "ALL",
]


class DType:
    """A feature value type; compares equal to its name and to itself."""

    __slots__ = ("name", "kind", "numpy")

    def __init__(self, name: str, kind: int, numpy_dtype: np.dtype) -> None:
        self.name = name
        self.kind = kind  # field number of the tf.train.Feature oneof member
        self.numpy = numpy_dtype

    def __repr__(self) -> str:
        return f"tfrx.{self.name}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self is other
        if not self.is_feature_type:
            try:
                return np.dtype(getattr(other, "as_numpy_dtype", other)) == self.numpy  # type: ignore[call-overload]  # np.dtype raises TypeError on the rest
            except TypeError:
                return False
        try:
            return as_dtype(other) is self
        except (SpecError, TypeError):
            return False

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def is_numeric(self) -> bool:
        return self is not string

    @property
    def as_numpy_dtype(self) -> type:
        """The NumPy scalar type, as TensorFlow's ``DType.as_numpy_dtype`` (``object`` for strings)."""
        return object if self.kind == 1 else self.numpy.type

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype; lets ``np.dtype(tfrx.uint8)`` and NumPy functions take these objects."""
        return self.numpy

    @property
    def is_feature_type(self) -> bool:
        """Whether a tf.train.Feature can hold this type (int64, float32, string)."""
        return self.kind != 0


int64 = DType("int64", 3, np.dtype(np.int64))
float32 = DType("float32", 2, np.dtype(np.float32))
string = DType("string", 1, np.dtype(object))

# Types no tf.train.Feature holds (kind 0): for decode_raw, cast and images.
bool_ = DType("bool", 0, np.dtype(np.bool_))
uint8 = DType("uint8", 0, np.dtype(np.uint8))
uint16 = DType("uint16", 0, np.dtype(np.uint16))
uint32 = DType("uint32", 0, np.dtype(np.uint32))
uint64 = DType("uint64", 0, np.dtype(np.uint64))
int8 = DType("int8", 0, np.dtype(np.int8))
int16 = DType("int16", 0, np.dtype(np.int16))
int32 = DType("int32", 0, np.dtype(np.int32))
float16 = DType("float16", 0, np.dtype(np.float16))
float64 = DType("float64", 0, np.dtype(np.float64))

ALL = {
    d.name: d
    for d in (int64, float32, string, bool_, uint8, uint16, uint32, uint64, int8, int16, int32, float16, float64)
}

_BY_NAME = {
    "int64": int64,
    "int": int64,
    "float32": float32,
    "float": float32,
    "string": string,
    "bytes": string,
    "str": string,
    "object": string,
}


def as_dtype(value: object) -> DType:
    """Converts any accepted spelling of a feature dtype to a :class:`DType`."""
    if isinstance(value, DType):
        if not value.is_feature_type:
            raise SpecError(
                f"unsupported feature dtype {value!r}; tf.train.Example holds only int64, float32 and bytes "
                "(use tfrx.int64, tfrx.float32 or tfrx.string and cast afterwards)"
            )
        return value
    if isinstance(value, str):
        d = _BY_NAME.get(value.lower())
        if d is None:
            raise SpecError(f"unsupported dtype {value!r}; use tfrx.int64, tfrx.float32 or tfrx.string")
        return d
    if value is bytes or value is str:
        return string
    # TensorFlow DType objects (tf.int64 ...) without importing TensorFlow.
    name = getattr(value, "name", None)
    if type(value).__module__.startswith("tensorflow") and isinstance(name, str) and name in _BY_NAME:
        return _BY_NAME[name]
    try:
        np_dtype = np.dtype(value)  # type: ignore[call-overload]  # np.dtype raises TypeError on the rest
    except TypeError:
        raise SpecError(f"unsupported dtype {value!r}; use tfrx.int64, tfrx.float32 or tfrx.string") from None
    if np_dtype == np.int64:
        return int64
    if np_dtype == np.float32:
        return float32
    if np_dtype.kind in ("S", "O", "U"):
        return string
    raise SpecError(
        f"unsupported dtype {np_dtype}; tf.train.Example holds only int64, float32 and bytes "
        "(use tfrx.int64, tfrx.float32 or tfrx.string and cast afterwards)"
    )


def _by_name(name: str) -> DType:
    """The dtype named ``name`` (for pickling; every dtype, not only feature types)."""
    return ALL[name]
