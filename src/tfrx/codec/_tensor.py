"""Dense arrays inside Examples: raw bytes plus shape and dtype.

The seeds' "image_raw + height/width" pattern, made exact: ``encode_tensor``
returns three features for a name ``x``:

* ``x``: BytesList with one value, the array's bytes in C order, little-endian;
* ``x/shape``: Int64List with the dimensions;
* ``x/dtype``: BytesList with the NumPy dtype name (``b"float32"``, ``b"uint8"``...).

TensorFlow reads them back with ``tf.io.decode_raw(x, dtype)`` and a reshape.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tfrx.errors import DecodeError

__all__ = ["encode_tensor", "decode_tensor", "decode_raw"]


def encode_tensor(array, name: str) -> dict:
    """``{name: raw bytes, name/shape: dims, name/dtype: dtype name}`` for ``make_example``/``encode_examples``-style dicts."""
    arr = np.asarray(array)
    if arr.dtype.kind in "OUSV" or arr.dtype.hasobject:
        raise TypeError(f"encode_tensor needs a numeric or bool array, got dtype {arr.dtype}")
    little = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    return {
        name: little.tobytes(),
        f"{name}/shape": np.asarray(arr.shape, dtype=np.int64),
        f"{name}/dtype": arr.dtype.name.encode("ascii"),
    }


def _first(value):
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ValueError(f"expected one value, got {len(value)}")
        return value[0]
    return value


def decode_tensor(features: Mapping, name: str) -> np.ndarray:
    """The array that :func:`encode_tensor` stored under ``name`` in a decoded dict."""
    dtype = _first(features[f"{name}/dtype"])
    dtype = dtype.decode("ascii") if isinstance(dtype, bytes) else str(dtype)
    shape = tuple(int(d) for d in np.asarray(features[f"{name}/shape"]).reshape(-1))
    return decode_raw(_first(features[name]), dtype).reshape(shape)


def _dtype(out_type) -> np.dtype:
    return np.dtype(getattr(out_type, "as_numpy_dtype", out_type))


def decode_raw(input_bytes, out_type, little_endian: bool = True, fixed_length: int | None = None) -> np.ndarray:
    """Reinterprets bytes as numbers, like ``tf.io.decode_raw``.

    One bytes-like value gives a 1-D array; a list / object array of them
    gives shape ``input.shape + (n,)``, every value the same length (or cut /
    zero-padded to ``fixed_length`` bytes). The result owns its memory and is
    in native byte order.
    """
    dtype = _dtype(out_type)
    wire = dtype.newbyteorder("<" if little_endian else ">")
    single = isinstance(input_bytes, (bytes, bytearray, memoryview))
    if single:
        items, shape = [bytes(input_bytes)], ()
    else:
        arr = np.asarray(input_bytes, dtype=object) if not isinstance(input_bytes, np.ndarray) else input_bytes
        shape = arr.shape
        items = [bytes(v) for v in arr.reshape(-1).tolist()]
    if fixed_length is not None:
        items = [v[:fixed_length].ljust(fixed_length, b"\0") for v in items]
    lengths = {len(v) for v in items}
    if len(lengths) > 1:
        raise DecodeError(f"decode_raw needs values of equal length, got lengths {sorted(lengths)[:4]}")
    length = lengths.pop() if lengths else 0
    if length % dtype.itemsize:
        raise DecodeError(f"decode_raw: input of {length} bytes is not a multiple of {dtype} ({dtype.itemsize} bytes)")
    flat = np.frombuffer(b"".join(items), dtype=wire).astype(dtype.newbyteorder("="), copy=True)
    return flat.reshape(shape + (length // dtype.itemsize,))
