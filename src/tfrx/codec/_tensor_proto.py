"""``tf.io.serialize_tensor`` / ``tf.io.parse_tensor``: arrays as TensorFlow ``TensorProto`` bytes.

The bytes are the ones TensorFlow writes: ``dtype`` (field 1), ``tensor_shape``
(field 2, one ``dim { size }`` per axis) and, for numbers and bools, the
little-endian values in ``tensor_content`` (field 4); strings go one per
``string_val`` (field 8). ``parse_tensor`` also reads the typed value fields
(``float_val``, ``int_val``, ``int64_val`` ...) other writers use, including
TensorFlow's rule that fewer values than the shape holds repeat the last one.
That repetition (a "splat") makes an output the input's size does not bound, so
``parse_tensor`` refuses one beyond ``max_expanded_bytes`` (default
:data:`MAX_EXPANDED_BYTES`, 64 MiB).
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from tfrx.errors import DecodeError

__all__ = ["MAX_EXPANDED_BYTES", "parse_tensor", "serialize_tensor"]

# The largest output parse_tensor makes by repeating values (or zeros / empty strings) the bytes do
# not hold, unless the caller passes a larger max_expanded_bytes: a 16-byte TensorProto may declare
# any shape, and TensorFlow would fill it.
MAX_EXPANDED_BYTES = 64 << 20

# TensorFlow's DataType enum (tensorflow/core/framework/types.proto).
_ENUM: dict[np.dtype, int] = {
    np.dtype(np.float32): 1,
    np.dtype(np.float64): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int8): 6,
    np.dtype(object): 7,
    np.dtype(np.complex64): 8,
    np.dtype(np.int64): 9,
    np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17,
    np.dtype(np.complex128): 18,
    np.dtype(np.float16): 19,
    np.dtype(np.uint32): 22,
    np.dtype(np.uint64): 23,
}
_DTYPE = {v: k for k, v in _ENUM.items()}
_STRING = 7

# Typed value fields of TensorProto: field number -> (wire reader, dtypes that may use it).
_F32, _F64, _VARINT = "f32", "f64", "varint"
_VALUE_FIELDS = {
    5: (_F32, (np.float32, np.complex64)),
    6: (_F64, (np.float64, np.complex128)),
    7: (_VARINT, (np.int32, np.uint8, np.int16, np.int8, np.uint16)),
    10: (_VARINT, (np.int64,)),
    11: (_VARINT, (np.bool_,)),
    13: (_VARINT, (np.float16,)),
    16: (_VARINT, (np.uint32,)),
    17: (_VARINT, (np.uint64,)),
}


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _as_array(tensor: Any) -> np.ndarray:
    if hasattr(tensor, "numpy") and not isinstance(tensor, np.ndarray):
        tensor = tensor.numpy()
    arr = np.asarray(tensor)
    if arr.dtype.kind in "SU":
        arr = (
            np.vectorize(lambda v: v.encode() if isinstance(v, str) else bytes(v), otypes=[object])(arr)
            if arr.size
            else arr.astype(object)
        )
    return arr


def serialize_tensor(tensor: Any, name: str | None = None) -> bytes:
    """The ``TensorProto`` bytes of an array, exactly as ``tf.io.serialize_tensor`` writes them.

    Returns ``bytes`` (TensorFlow returns a scalar string tensor). Python
    ints become int64 and floats float32 only when passed as NumPy arrays of
    those types: ``np.asarray`` decides the dtype, so give the array its dtype.
    """
    arr = _as_array(tensor)
    enum = _ENUM.get(arr.dtype.newbyteorder("=") if arr.dtype.byteorder not in "=|" else arr.dtype)
    if enum is None:
        raise TypeError(
            f"serialize_tensor: dtype {arr.dtype} has no TensorFlow DataType; cast to one of {sorted(str(d) for d in _ENUM)}"
        )
    shape = b"".join(_field(2, _varint(8) + _varint(int(d)) if d else b"") for d in arr.shape)
    out = bytearray(_varint(8) + _varint(enum) + _field(2, shape))
    if enum == _STRING:
        for value in arr.reshape(-1):
            if isinstance(value, str):
                value = value.encode()
            out += _field(8, bytes(value))
    elif arr.size:
        out += _field(4, np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes())
    return bytes(out)


class _Cursor:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def varint(self) -> int:
        result = shift = 0
        while True:
            if self.pos >= len(self.data):
                raise DecodeError(f"parse_tensor: TensorProto ends inside a varint at byte {self.pos}")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise DecodeError(f"parse_tensor: varint longer than 10 bytes at byte {self.pos}")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise DecodeError(
                f"parse_tensor: a field of {n} bytes at byte {self.pos} runs past the end ({len(self.data)} bytes)"
            )
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def skip(self, wire: int) -> None:
        if wire == 0:
            self.varint()
        elif wire == 1:
            self.take(8)
        elif wire == 2:
            self.take(self.varint())
        elif wire == 5:
            self.take(4)
        else:
            raise DecodeError(f"parse_tensor: unsupported wire type {wire} at byte {self.pos}")


def _shape(payload: bytes) -> tuple[int, ...]:
    cur, dims = _Cursor(payload), []
    while cur.pos < len(payload):
        key = cur.varint()
        if key == (2 << 3 | 2):
            dim, size = _Cursor(cur.take(cur.varint())), 0
            while dim.pos < len(dim.data):
                k = dim.varint()
                if k == (1 << 3):
                    size = dim.varint()
                    size = size - (1 << 64) if size >= 1 << 63 else size
                else:
                    dim.skip(k & 7)
            if size < 0:
                raise DecodeError(
                    f"parse_tensor: TensorProto has an unknown dimension ({size}); a tensor needs a fully known shape"
                )
            dims.append(size)
        elif key == (3 << 3):  # unknown_rank
            if cur.varint():
                raise DecodeError("parse_tensor: TensorProto has unknown rank; a tensor needs a fully known shape")
        else:
            cur.skip(key & 7)
    return tuple(dims)


def _typed_values(reader: str, wire: int, payload_or_value: Any, out: list) -> None:
    if wire == 2:
        width = {_F32: 4, _F64: 8}.get(reader)
        if width and len(payload_or_value) % width:
            raise DecodeError(
                f"parse_tensor: a packed list of {len(payload_or_value)} bytes is not a whole number of {width}-byte values"
            )
        if reader == _F32:
            out.extend(struct.unpack(f"<{len(payload_or_value) // 4}f", payload_or_value))
        elif reader == _F64:
            out.extend(struct.unpack(f"<{len(payload_or_value) // 8}d", payload_or_value))
        else:
            cur = _Cursor(payload_or_value)
            while cur.pos < len(payload_or_value):
                out.append(cur.varint())
    else:
        out.append(payload_or_value)


def parse_tensor(  # noqa: C901, PLR0915  one branch per TensorProto value field, as tf.io.parse_tensor
    serialized: Any, out_type: Any, name: str | None = None, *, max_expanded_bytes: int | None = MAX_EXPANDED_BYTES
) -> np.ndarray:
    """The array in ``TensorProto`` bytes, like ``tf.io.parse_tensor``; ``out_type`` must equal the stored dtype.

    Returns a NumPy array (strings as an object array of ``bytes``). ``out_type=None``
    takes the stored dtype, whatever it is (TensorBoard summaries hold several).

    A TensorProto may hold fewer values than its shape (none, or a short typed
    list whose last value repeats, as TensorFlow's splat constants): the output
    then comes from its declared shape, not from its bytes. Such an output larger
    than ``max_expanded_bytes`` (default 64 MiB; ``None``: no limit) raises
    :class:`tfrx.errors.DecodeError` naming the shape, before anything is
    allocated. Outputs whose values are all in the bytes are never limited.
    """
    if hasattr(serialized, "numpy") and not isinstance(serialized, np.ndarray):
        serialized = serialized.numpy()
    if isinstance(serialized, np.ndarray) and serialized.shape == ():
        serialized = serialized.item()
    if not isinstance(serialized, (bytes, bytearray, memoryview)):
        raise TypeError(f"parse_tensor: expected the bytes of one TensorProto, got {type(serialized).__name__}")
    want = None if out_type is None else np.dtype(getattr(out_type, "as_numpy_dtype", out_type))
    cur = _Cursor(bytes(serialized))
    enum = 0
    shape: tuple[int, ...] = ()
    content: bytes | None = None
    strings: list[bytes] = []
    values: list = []
    value_field: int | None = None
    while cur.pos < len(cur.data):
        key = cur.varint()
        number, wire = key >> 3, key & 7
        if number == 1 and wire == 0:
            enum = cur.varint()
        elif number == 2 and wire == 2:
            shape = _shape(cur.take(cur.varint()))
        elif number == 4 and wire == 2:
            content = cur.take(cur.varint())
        elif number == 8 and wire == 2:
            strings.append(cur.take(cur.varint()))
        elif number in _VALUE_FIELDS and wire in (0, 1, 2, 5):
            reader = _VALUE_FIELDS[number][0]
            value: bytes | int | float
            if wire == 2:
                value = cur.take(cur.varint())
            elif wire == 0:
                value = cur.varint()
            elif wire == 5:
                value = struct.unpack("<f", cur.take(4))[0]
            else:
                value = struct.unpack("<d", cur.take(8))[0]
            value_field = number
            _typed_values(reader, wire, value, values)
        else:
            cur.skip(wire)
    stored = _DTYPE.get(enum)
    if stored is None:
        raise DecodeError(f"parse_tensor: TensorProto dtype enum {enum} is not supported (supported: {sorted(_DTYPE)})")
    if want is not None and stored != want:
        raise TypeError(
            f"parse_tensor: type mismatch, the tensor holds {stored if enum != _STRING else 'string'} but out_type is {want}; pass out_type={stored if enum != _STRING else 'tfrx.tf.string'}"
        )
    count = math.prod(shape)  # Python ints: np.prod would wrap around on a hostile shape
    if enum == _STRING:
        items: list | np.ndarray = strings
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
    elif content is not None:
        arr = np.frombuffer(content, dtype=stored.newbyteorder("<")).astype(stored)
        items = arr
    else:
        if value_field == 13:  # half_val holds the raw 16 bits
            arr = np.asarray(values, dtype=np.uint16).view(np.float16)
        elif stored.kind == "c":
            flat = np.asarray(values, dtype=np.float32 if stored == np.complex64 else np.float64)
            arr = flat[0::2] + 1j * flat[1::2] if len(flat) else flat  # type: ignore[operator]  # numpy stubs: complex * array
            arr = arr.astype(stored)
        elif stored.kind in "iub" and values:
            ints = np.asarray(values, dtype=np.uint64).astype(np.int64 if stored.kind == "i" else np.uint64)
            arr = ints.astype(stored)
        else:
            arr = np.asarray(values, dtype=stored)
        items = arr
    n = len(items)
    if n == count:
        return arr.reshape(shape)
    if n < count and (enum == _STRING or content is None):
        _check_expansion(shape, count, n, stored if enum != _STRING else np.dtype(object), max_expanded_bytes)
    if n == 0 and enum != _STRING and content is None:
        return np.zeros(shape, dtype=stored)
    if n == 0 and enum == _STRING:
        out = np.empty(count, dtype=object)
        out[:] = [b""] * count
        return out.reshape(shape)
    if n < count and content is None:  # TensorFlow repeats the last value
        filled = np.empty(count, dtype=arr.dtype)
        filled[:n] = arr
        filled[n:] = arr[-1]
        return filled.reshape(shape)
    raise DecodeError(f"parse_tensor: TensorProto has {n} values but its shape {list(shape)} holds {count}")


def _check_expansion(shape: tuple[int, ...], count: int, n: int, dtype: np.dtype, limit: int | None) -> None:
    if limit is None:
        return
    size = count * dtype.itemsize
    if size > limit:
        kind = "string" if dtype == object else str(dtype)
        raise DecodeError(
            f"parse_tensor: TensorProto declares shape {list(shape)} ({count:,} {kind} values, {size:,} bytes) "
            f"but holds {n} value{'s' if n != 1 else ''}; filling the rest by repeating "
            f"{'the last value' if n else 'zeros'} would exceed max_expanded_bytes={limit:,}. "
            "Pass a larger max_expanded_bytes (or None) if this tensor is meant to be that large"
        )
