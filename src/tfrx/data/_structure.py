"""Nested element structures: dicts, tuples and namedtuples of NumPy values.

Batching, padding and slicing walk elements with these helpers, the way
``tf.nest`` does for ``tf.data``. A Python list is a leaf (it becomes one
array), as ``tf.data.Dataset.from_tensor_slices`` treats lists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["map_structure", "flatten", "to_numpy", "stack", "slice_structure", "leading_dim"]


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def map_structure(fn: Callable, *structures: Any) -> Any:
    """Applies ``fn`` to corresponding leaves of equally shaped structures."""
    first = structures[0]
    if isinstance(first, dict):
        for s in structures[1:]:
            if not isinstance(s, dict) or s.keys() != first.keys():
                raise ValueError("elements do not have the same structure (dict keys differ)")
        return {k: map_structure(fn, *(s[k] for s in structures)) for k in first}
    if isinstance(first, tuple):
        for s in structures[1:]:
            if not isinstance(s, tuple) or len(s) != len(first):
                raise ValueError("elements do not have the same structure (tuple lengths differ)")
        items = [map_structure(fn, *parts) for parts in zip(*structures)]
        return type(first)(*items) if _is_namedtuple(first) else tuple(items)
    return fn(*structures)


def flatten(structure: Any) -> list:
    """Leaves in a fixed order (dicts in insertion order)."""
    out: list = []
    map_structure(out.append, structure)
    return out


def to_numpy(x: Any) -> Any:
    """A leaf as NumPy: text and bytes become object arrays of ``bytes`` (TensorFlow's ``tf.string``)."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "U":
            return np.array([s.encode() for s in x.ravel().tolist()], dtype=object).reshape(x.shape)
        if x.dtype.kind == "S":
            return np.array(x.ravel().tolist(), dtype=object).reshape(x.shape)
        return x
    if isinstance(x, str):
        return x.encode()
    if isinstance(x, (bytes, np.generic)):
        return x
    a = np.asarray(x)
    if a.dtype.kind in "US" or (a.dtype == object and a.size and isinstance(a.flat[0], str)):
        return to_numpy(a.astype(str) if a.dtype == object else a)
    return a


def leading_dim(structure: Any) -> int:
    """The common first dimension of every leaf (``from_tensor_slices``, ``unbatch``)."""
    sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None for leaf in flatten(structure)}
    if None in sizes:
        raise ValueError("every component must have at least one dimension to be sliced")
    dims = {int(s) for s in sizes if s is not None}
    if len(dims) != 1:
        raise ValueError(f"components have different first dimensions: {sorted(dims)}")
    return dims.pop()


def slice_structure(structure: Any, i: int) -> Any:
    return map_structure(lambda a: a[i], structure)


def _stack_leaf(*values: Any) -> np.ndarray:
    first = values[0]
    if isinstance(first, bytes) and all(type(v) is bytes for v in values):
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if isinstance(first, (bytes, str)) or (isinstance(first, np.ndarray) and first.dtype == object):
        out = np.empty((len(values),) + np.shape(first), dtype=object)
        for i, v in enumerate(values):
            out[i] = v.encode() if isinstance(v, str) else v
        return out
    try:
        return np.stack([np.asarray(v) for v in values])
    except ValueError as e:
        shapes = sorted({np.shape(v) for v in values})
        raise ValueError(
            f"cannot batch components of different shapes {shapes}; use padded_batch() "
            "or make the shapes equal in a map()"
        ) from e


def stack(elements: list) -> Any:
    """Stacks a list of equally structured elements into one batched element."""
    return map_structure(_stack_leaf, *elements)
