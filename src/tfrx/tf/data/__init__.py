"""``tf.data``: :mod:`tfrx.data` under TensorFlow's names (``Dataset``, ``TFRecordDataset``, ``AUTOTUNE``, ``Options``).

Every public name of :mod:`tfrx.data` is reachable here, including ones
added later; ``tf.data.experimental`` holds TensorFlow's experimental aliases.
The datasets made here are tfrx datasets whose elements come out as tensors
(:class:`tfrx.tf.Tensor`: NumPy arrays and ``bytes`` with ``.numpy()``), and
so do those of every pipeline built on them; functions given to ``map``,
``filter``, ``interleave`` and ``flat_map`` receive tensors too, and
``as_numpy_iterator()`` yields plain values, as TensorFlow's does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

import tfrx.data as _data
from tfrx.data import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Options,
)
from tfrx.tf._tensor import TENSORS

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "Options",
    "TFRecordDataset",
    "experimental",
]


def giving_tensors(make: Callable[..., Any]) -> Callable[..., Any]:
    """``make`` (a function returning a tfrx dataset) with the dataset's elements handed out as tensors."""

    @functools.wraps(make)
    def call(*args: Any, **kwargs: Any) -> Any:
        dataset = make(*args, **kwargs)
        dataset._element_view = TENSORS
        return dataset

    return call


def _strings_as_bytes(value: Any) -> Any:
    """``value`` with its text as ``bytes``, as TensorFlow stores strings: ``str``, NumPy ``U`` arrays and
    object arrays (a pandas column) holding ``str``; dicts and tuples are structure, the rest is left as is."""
    if isinstance(value, dict):
        return {k: _strings_as_bytes(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_strings_as_bytes(v) for v in value)
    if isinstance(value, str):
        return value.encode()
    if not (isinstance(value, (np.ndarray, list)) or hasattr(value, "__array__")):
        return value
    array = np.asarray(value)
    if array.dtype.kind != "U" and not (array.dtype == object and any(isinstance(v, str) for v in array.flat)):
        return value
    out = np.empty(array.size, dtype=object)
    out[:] = [v.encode() if isinstance(v, str) else v for v in array.flat]
    return out.reshape(array.shape)


def _from_values(make: Callable[..., Any]) -> Callable[..., Any]:
    """A constructor from in-memory values that stores their text as ``bytes``, then gives tensors."""

    @functools.wraps(make)
    def call(tensors: Any, *args: Any, **kwargs: Any) -> Any:
        return make(_strings_as_bytes(tensors), *args, **kwargs)

    return giving_tensors(call)


class _AnyTfrxDataset(type):
    """``isinstance(x, tf.data.Dataset)`` holds for every tfrx dataset, as for every ``tf.data`` one in TensorFlow."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _data.Dataset)

    def __subclasscheck__(cls, sub: type) -> bool:
        return isinstance(sub, type) and issubclass(sub, _data.Dataset)


class Dataset(_data.Dataset, metaclass=_AnyTfrxDataset):
    """``tf.data.Dataset``: :class:`tfrx.data.Dataset`, whose constructors here (``from_tensor_slices``,
    ``range``, ``from_generator``, ``list_files``, ``zip``, ...) make datasets of tensors."""


for _name, _attr in list(vars(_data.Dataset).items()):
    if isinstance(_attr, staticmethod) and not _name.startswith("_"):
        _make = _from_values if _name in ("from_tensor_slices", "from_tensors") else giving_tensors
        setattr(Dataset, _name, staticmethod(_make(_attr.__func__)))
del _name, _attr, _make


class TFRecordDataset(_data.TFRecordDataset):
    """``tf.data.TFRecordDataset``: :class:`tfrx.TFRecordDataset` whose records come out as
    :class:`tfrx.tf.Tensor` (``bytes`` with ``.numpy()``); its arguments are tfrx's."""

    _element_view = TENSORS


TFRecordDataset.__init__.__signature__ = inspect.signature(_data.TFRecordDataset.__init__)  # type: ignore[attr-defined]

from tfrx.tf.data import experimental  # noqa: E402 - it uses giving_tensors above


def __getattr__(name: str):
    try:
        return getattr(_data, name)
    except AttributeError:
        raise AttributeError(f"module 'tfrx.tf.data' has no attribute {name!r} (tfrx.data has no such name)") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(getattr(_data, "__all__", ())))
