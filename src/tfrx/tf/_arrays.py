"""``tf.TensorSpec``, ``tf.as_dtype`` and the NumPy-backed array helpers of ``tfrx.tf``.

TensorFlow's ops return ``tf.Tensor``; these return NumPy arrays with the
dtype TensorFlow would give (``tf.constant(1)`` is int32, ``tf.constant(1.0)``
float32, Python strings become ``bytes``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.dtypes import ALL, DType

__all__ = [
    "TensorSpec",
    "as_dtype",
    "cast",
    "concat",
    "constant",
    "convert_to_tensor",
    "expand_dims",
    "one_hot",
    "py_function",
    "reshape",
    "shape",
    "squeeze",
    "stack",
]


def as_dtype(type_value: Any) -> DType:
    """``tf.as_dtype``: a :class:`~tfrx.dtypes.DType` from a dtype, its name or a NumPy type."""
    if isinstance(type_value, DType):
        return type_value
    name = getattr(type_value, "name", None)
    if isinstance(name, str) and name in ALL and not isinstance(type_value, np.dtype):
        return ALL[name]
    if isinstance(type_value, str) and type_value in ALL:
        return ALL[type_value]
    np_dtype = np.dtype(getattr(type_value, "as_numpy_dtype", type_value))
    if np_dtype.kind in "OSU":
        return ALL["string"]
    if np_dtype.name not in ALL:
        raise TypeError(f"as_dtype: {type_value!r} has no TensorFlow dtype here; supported: {sorted(ALL)}")
    return ALL[np_dtype.name]


def _np(dtype: Any) -> np.dtype:
    return as_dtype(dtype).numpy


def _infer(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (bytes, str)):
        return np.array(value.encode() if isinstance(value, str) else value, dtype=object)
    arr = np.asarray(value)
    if arr.dtype.kind in "SU":
        flat = [v.encode() if isinstance(v, str) else bytes(v) for v in arr.reshape(-1).tolist()]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(arr.shape)
    if arr.dtype == np.float64 and not isinstance(value, np.generic):
        return arr.astype(np.float32)  # TensorFlow makes Python floats float32
    if arr.dtype == np.int64 and not isinstance(value, np.generic):
        big = arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min)
        return arr if big else arr.astype(np.int32)  # and Python ints int32 when they fit
    return arr


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.constant`` as a NumPy array, with TensorFlow's default dtypes for Python values."""
    arr = _infer(value) if dtype is None else np.asarray(value, dtype=_np(dtype))
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        arr = np.broadcast_to(arr, shape).copy() if arr.size == 1 else arr.reshape(shape)
    return arr


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.convert_to_tensor`` as a NumPy array."""
    return constant(value, dtype)


def cast(x: Any, dtype: Any, name: str | None = None) -> np.ndarray:
    """``tf.cast``: floats to integers truncate toward zero, as TensorFlow's."""
    target = _np(dtype)
    arr = _infer(x)
    if target == np.bool_:
        return arr != 0
    return arr.astype(target)


def reshape(tensor: Any, shape: Any, name: str | None = None) -> np.ndarray:
    """``tf.reshape`` (one ``-1`` allowed)."""
    return np.reshape(_infer(tensor), tuple(int(d) for d in np.asarray(shape).reshape(-1)))


def shape(input: Any, out_type: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.shape``: the dimensions as an int32 array (``out_type`` may be int64)."""
    return np.asarray(np.shape(input), dtype=np.int32 if out_type is None else _np(out_type))


def stack(values: Any, axis: int = 0, name: str | None = None) -> np.ndarray:
    """``tf.stack``."""
    return np.stack([_infer(v) for v in values], axis=axis)


def concat(values: Any, axis: int, name: str | None = None) -> np.ndarray:
    """``tf.concat``."""
    return np.concatenate([_infer(v) for v in values], axis=axis)


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.squeeze``."""
    return np.squeeze(_infer(input), axis=None if axis is None else tuple(np.atleast_1d(axis).tolist()))


def expand_dims(input: Any, axis: int, name: str | None = None) -> np.ndarray:
    """``tf.expand_dims``."""
    return np.expand_dims(_infer(input), axis)


def one_hot(
    indices: Any,
    depth: int,
    on_value: Any = 1.0,
    off_value: Any = 0.0,
    axis: int = -1,
    dtype: Any = None,
    name: str | None = None,
) -> np.ndarray:
    """``tf.one_hot`` (float32 by default; indices outside ``[0, depth)`` give all ``off_value``)."""
    idx = np.asarray(indices)
    target = np.float32 if dtype is None else _np(dtype)
    hot = (idx[..., None] == np.arange(depth)).astype(bool)
    out = np.where(hot, np.asarray(on_value, dtype=target), np.asarray(off_value, dtype=target)).astype(target)
    return np.moveaxis(out, -1, axis) if axis != -1 else out


def py_function(func: Any, inp: Any, Tout: Any, name: str | None = None) -> Any:
    """Not needed: tfrx pipelines run Python directly; call ``func(*inp)`` (in ``Dataset.map`` too)."""
    raise NotImplementedError(
        "tf.py_function is not needed with tfrx: tfrx.data pipelines run plain Python, so call func(*inp) "
        "directly (inside Dataset.map as well)"
    )


class TensorSpec:
    """``tf.TensorSpec(shape, dtype, name)``: describes one component, e.g. for ``Dataset.from_generator``'s ``output_signature``."""

    __slots__ = ("dtype", "name", "shape")

    def __init__(self, shape: Any, dtype: Any = "float32", name: str | None = None) -> None:
        self.shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.dtype = as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        """Whether a spec or an array (standing for a tensor) has this dtype and a shape that fits (``None`` matches any size).

        TensorFlow answers ``False`` for a NumPy array (only tensors and specs
        match); here arrays are the tensors, so they are compared.
        """
        if isinstance(spec_or_value, TensorSpec):
            dtype, shape = spec_or_value.dtype, spec_or_value.shape
        else:
            arr = _infer(spec_or_value)
            dtype, shape = as_dtype(arr.dtype), arr.shape
        if dtype is not self.dtype:
            return False
        if self.shape is None or shape is None:
            return True
        return len(shape) == len(self.shape) and all(
            d is None or s is None or d == s for d, s in zip(self.shape, shape)
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape,
            other.dtype,
            other.name,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name, self.name))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"
