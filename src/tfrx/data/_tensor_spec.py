"""TensorSpec: the shape and dtype of one component, for ``from_generator`` signatures.

``tf.TensorSpec`` (``tfrx.tf.TensorSpec`` is this class): ``shape`` (a list with ``None`` for unknown
sizes, or ``None`` for an unknown rank), ``dtype`` (a NumPy dtype, a name
such as ``"int32"``, ``"string"`` for bytes, or any object with
``as_numpy_dtype`` such as ``tfrx.tf.int32``) and ``name``.
``from_generator(..., output_signature=...)`` converts every generated
component to the spec's dtype and checks its shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TensorSpec", "as_numpy_dtype"]


def as_numpy_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a NumPy dtype; strings (``tf.string``) are ``object`` arrays of ``bytes``."""
    if hasattr(dtype, "as_numpy_dtype"):
        dtype = dtype.as_numpy_dtype
    if isinstance(dtype, str) and dtype in ("string", "bytes", "str"):
        return np.dtype(object)
    if dtype is bytes or dtype is str:
        return np.dtype(object)
    return np.dtype(dtype)


def _value_dtype(value: Any) -> np.dtype:
    """The dtype a value has as a component: strings (``bytes``, ``str``, NumPy ``S``/``U``) are ``object``."""
    if isinstance(value, (bytes, str)):
        return np.dtype(object)
    dtype = value.dtype if isinstance(value, (np.ndarray, np.generic)) else np.asarray(value).dtype
    return np.dtype(object) if dtype.kind in "OSU" else dtype


class TensorSpec:
    """Shape and dtype of a component (``tf.TensorSpec``)."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype: Any = np.float32, name: str | None = None) -> None:
        if shape is not None:
            shape = tuple(
                None if d is None or int(d) < 0 else int(d)
                for d in (shape if np.ndim(shape) else [shape] if isinstance(shape, int) else shape)
            )
        self.shape = shape
        self.dtype = as_numpy_dtype(dtype)
        self.name = name

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        """Whether a spec, or a value (an array, ``bytes``, a number), has this dtype and a shape that
        fits (``None`` matches any size, an unknown rank any rank).

        TensorFlow answers ``False`` for a NumPy array (only tensors and specs
        match); here arrays are the tensors, so they are compared.
        """
        if isinstance(spec_or_value, TensorSpec):
            dtype, shape = spec_or_value.dtype, spec_or_value.shape
        else:
            dtype, shape = _value_dtype(spec_or_value), np.shape(spec_or_value)
        if dtype != self.dtype:
            return False
        if self.shape is None or shape is None:
            return True
        return len(shape) == len(self.shape) and all(
            s is None or n is None or s == n for s, n in zip(self.shape, shape)
        )

    def convert(self, value: Any) -> Any:
        """``value`` as this spec's dtype; ``TypeError``/``ValueError`` when it does not fit."""
        out: Any  # bytes, a NumPy scalar or an array
        if self.dtype == object:
            a = np.asarray(value, dtype=object)
            if a.ndim == 0:
                v = a.item()
                if isinstance(v, str):
                    v = v.encode()
                if not isinstance(v, bytes):
                    raise TypeError(f"TensorSpec(dtype=string): expected bytes or str, got {type(v).__name__}")
                out = v
            else:
                flat = [v.encode() if isinstance(v, str) else v for v in a.ravel().tolist()]
                if not all(isinstance(v, bytes) for v in flat):
                    raise TypeError("TensorSpec(dtype=string): every value must be bytes or str")
                out = np.empty(len(flat), dtype=object)
                out[:] = flat
                out = out.reshape(a.shape)
        else:
            a = value if isinstance(value, np.ndarray) else np.asarray(value)
            if a.dtype.kind in "OSU":
                raise TypeError(f"TensorSpec(dtype={self.dtype}): got a value of dtype {a.dtype}")
            # As TensorFlow's generator conversion: np.asarray(value, dtype).
            out = np.asarray(a, dtype=self.dtype)
            if out.ndim == 0 and not isinstance(value, np.ndarray):
                out = out[()]
        if not self.is_compatible_with(out):  # the dtype is this spec's now: the shape does not fit
            raise ValueError(f"TensorSpec(shape={list(self.shape)}): got a value of shape {list(np.shape(out))}")
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape,
            other.dtype,
            other.name,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self) -> str:
        shape = None if self.shape is None else self.shape
        dtype = "string" if self.dtype == object else self.dtype.name
        return f"TensorSpec(shape={shape}, dtype=tf.{dtype}, name={self.name!r})"
