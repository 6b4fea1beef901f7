"""``tf.data``: :mod:`tfrx.data` under TensorFlow's names (``Dataset``, ``TFRecordDataset``, ``AUTOTUNE``, ``Options``).

Every public name of :mod:`tfrx.data` is reachable here, including ones
added later; ``tf.data.experimental`` holds TensorFlow's experimental aliases.
The datasets made here are tfrx datasets whose elements come out as tensors
(:class:`tfrx.tf.Tensor`: NumPy arrays and ``bytes`` with ``.numpy()``), and
so do those of every pipeline built on them; functions given to ``map``,
``filter`` ... receive the plain values, and ``as_numpy_iterator()`` yields
plain values, as TensorFlow's does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import tfrx.data as _data
from tfrx.data import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Options,
)
from tfrx.tf._tensor import as_tensors

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
        dataset._element_view = as_tensors
        return dataset

    return call


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
        setattr(Dataset, _name, staticmethod(giving_tensors(_attr.__func__)))
del _name, _attr


class TFRecordDataset(_data.TFRecordDataset):
    """``tf.data.TFRecordDataset``: :class:`tfrx.TFRecordDataset` whose records come out as
    :class:`tfrx.tf.Tensor` (``bytes`` with ``.numpy()``); its arguments are tfrx's."""

    _element_view = staticmethod(as_tensors)


TFRecordDataset.__init__.__signature__ = inspect.signature(_data.TFRecordDataset.__init__)  # type: ignore[attr-defined]

from tfrx.tf.data import experimental  # noqa: E402 - it uses giving_tensors above


def __getattr__(name: str):
    try:
        return getattr(_data, name)
    except AttributeError:
        raise AttributeError(f"module 'tfrx.tf.data' has no attribute {name!r} (tfrx.data has no such name)") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(getattr(_data, "__all__", ())))
