"""``tf.TensorSpec`` (:class:`tfrx.data.TensorSpec`), ``tf.as_dtype`` and the NumPy-backed array helpers of ``tfrx.tf``.

TensorFlow's ops return ``tf.Tensor``; these return :class:`tfrx.tf.Tensor`
(NumPy arrays with ``.numpy()``) with the dtype TensorFlow would give
(``tf.constant(1)`` is int32, ``tf.constant(1.0)`` float32, Python strings
become ``bytes``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tfrx.data._tensor_spec import TensorSpec
from tfrx.dtypes import ALL, DType
from tfrx.tf._tensor import as_tensors, returns_tensors

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


@returns_tensors
def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.constant`` as a NumPy array, with TensorFlow's default dtypes for Python values."""
    arr = _infer(value) if dtype is None else np.asarray(value, dtype=_np(dtype))
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        arr = np.broadcast_to(arr, shape).copy() if arr.size == 1 else arr.reshape(shape)
    return arr


@returns_tensors
def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.convert_to_tensor`` as a NumPy array."""
    return constant(value, dtype)


@returns_tensors
def cast(x: Any, dtype: Any, name: str | None = None) -> np.ndarray:
    """``tf.cast``: floats to integers truncate toward zero, as TensorFlow's."""
    target = _np(dtype)
    if hasattr(type(x), "__tfrx_trace__"):  # tfrx.data tracing a map function: recorded, not run
        return x.__tfrx_trace__("cast", dtype=target.name)
    arr = _infer(x)
    if target == np.bool_:
        return arr != 0
    return arr.astype(target)


@returns_tensors
def reshape(tensor: Any, shape: Any, name: str | None = None) -> np.ndarray:
    """``tf.reshape`` (one ``-1`` allowed)."""
    return np.reshape(_infer(tensor), tuple(int(d) for d in np.asarray(shape).reshape(-1)))


@returns_tensors
def shape(input: Any, out_type: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.shape``: the dimensions as an int32 array (``out_type`` may be int64)."""
    return np.asarray(np.shape(input), dtype=np.int32 if out_type is None else _np(out_type))


@returns_tensors
def stack(values: Any, axis: int = 0, name: str | None = None) -> np.ndarray:
    """``tf.stack``."""
    return np.stack([_infer(v) for v in values], axis=axis)


@returns_tensors
def concat(values: Any, axis: int, name: str | None = None) -> np.ndarray:
    """``tf.concat``."""
    return np.concatenate([_infer(v) for v in values], axis=axis)


@returns_tensors
def squeeze(input: Any, axis: Any = None, name: str | None = None) -> np.ndarray:
    """``tf.squeeze``."""
    return np.squeeze(_infer(input), axis=None if axis is None else tuple(np.atleast_1d(axis).tolist()))


@returns_tensors
def expand_dims(input: Any, axis: int, name: str | None = None) -> np.ndarray:
    """``tf.expand_dims``."""
    return np.expand_dims(_infer(input), axis)


@returns_tensors
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


def _as_tout(value: Any, tout: Any) -> Any:
    if isinstance(tout, (list, tuple)):
        if len(tout) == 0:
            return []
        if not isinstance(value, (list, tuple)) or len(value) != len(tout):
            raise ValueError(f"py_function: Tout names {len(tout)} outputs, the function returned {value!r}")
        return [_as_tout(v, t) for v, t in zip(value, tout)]
    if tout is None:
        return as_tensors(value)
    if as_dtype(tout).name == "string":
        return as_tensors(value if isinstance(value, bytes) else _infer(value))
    return as_tensors(np.asarray(value, dtype=_np(tout)))


def py_function(func: Any = None, inp: Any = None, Tout: Any = None, name: str | None = None) -> Any:
    """``tf.py_function``: calls ``func`` on ``inp`` converted as ``tf.constant`` would, now.

    tfrx pipelines run Python, so nothing is deferred: the inputs become
    tensors (TensorFlow's default dtypes for Python values), ``func`` runs, and
    its result is converted to ``Tout`` (a dtype, a list of them, or ``None``).
    As in TensorFlow, ``@tf.py_function(Tout=...)`` (``func`` and ``inp``
    omitted) decorates a function so that calling it does this.
    """
    if func is None:
        return lambda f: py_function(f, inp, Tout, name)
    if inp is None:

        @functools.wraps(func)
        def call(*args: Any) -> Any:
            return py_function(func, args, Tout, name)

        return call
    args = [as_tensors(v if isinstance(v, (bytes, np.ndarray, np.generic)) else _infer(v)) for v in inp]
    return _as_tout(func(*args), Tout)
