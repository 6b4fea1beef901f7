"""``tf.Tensor`` for ``tfrx.tf``: NumPy arrays and ``bytes`` that also answer ``.numpy()``.

TensorFlow code reads a tensor's value with ``.numpy()``. Here values are
NumPy arrays already, so the ``tfrx.tf`` namespace hands them out as
:class:`EagerTensor`, a zero-copy ``np.ndarray`` subclass whose ``numpy()``
is a plain ndarray view (a NumPy scalar or ``bytes`` for a 0-d value, as
TensorFlow's), and scalar strings as :class:`BytesTensor`, a ``bytes``
subclass whose ``numpy()`` is the plain ``bytes``. Both stay what they were:
every NumPy function, ``bytes`` method and tfrx function takes them.
``isinstance(x, tf.Tensor)`` holds for both.

Only ``tfrx.tf`` wraps; ``tfrx``'s own API returns plain arrays.
"""

from __future__ import annotations

import functools
from abc import ABC
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

__all__ = ["TENSORS", "BytesTensor", "EagerTensor", "Tensor", "TensorView", "as_plain", "as_tensors", "returns_tensors"]


class Tensor(ABC):  # noqa: B024 - a marker for isinstance, as tf.Tensor is for its concrete classes
    """``tf.Tensor``: ``isinstance(x, tf.Tensor)`` is true for :class:`EagerTensor` and :class:`BytesTensor`."""


class EagerTensor(np.ndarray):
    """A NumPy array with TensorFlow's ``numpy()`` (what ``type(tf.constant(0))`` is under ``tfrx.tf``)."""

    def numpy(self) -> Any:
        """The value as plain NumPy: an ndarray view (no copy), or a NumPy scalar / ``bytes`` when 0-d."""
        plain = self.view(np.ndarray)
        return plain[()] if plain.ndim == 0 else plain

    def __getitem__(self, key: Any) -> Any:
        """NumPy indexing; a single element comes back as a tensor too, as in TensorFlow."""
        out = np.ndarray.__getitem__(self, key)
        return out if type(out) is EagerTensor else as_tensors(out)

    def __iter__(self) -> Iterator[Any]:
        """Iterates the first dimension, yielding tensors (a 0-d tensor is not iterable, as in TensorFlow)."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        return _repr(self.numpy(), self.shape, "string" if self.dtype == object else self.dtype.name)

    def __str__(self) -> str:
        return _str(self.numpy(), self.shape, "string" if self.dtype == object else self.dtype.name)

    def __format__(self, format_spec: str) -> str:
        return format(self.numpy(), format_spec)  # the value's format, as TensorFlow's f-strings show it


class BytesTensor(bytes):
    """A scalar string (``bytes``) with TensorFlow's ``numpy()``, ``shape`` ``()`` and ``dtype`` ``object``.

    NumPy does not convert ``bytes`` subclasses without a dtype:
    ``np.asarray(x)`` raises, ``np.asarray(x, dtype=object)`` and
    ``x.numpy()`` work.
    """

    __slots__ = ()
    shape: tuple[int, ...] = ()
    ndim = 0
    dtype = np.dtype(object)

    def numpy(self) -> bytes:
        """The plain ``bytes``."""
        return bytes(self)

    def __repr__(self) -> str:
        return _repr(bytes(self), (), "string")

    def __str__(self) -> str:
        return _str(bytes(self), (), "string")

    def __format__(self, format_spec: str) -> str:
        return format(bytes(self), format_spec)

    def __getitem__(self, key: Any) -> Any:
        """``bytes`` indexing, except NumPy's ``x[None]`` / ``x[...]`` (``tf.newaxis``), which give tensors."""
        if key is None or key is Ellipsis or isinstance(key, tuple):
            scalar = np.empty((), dtype=object)
            scalar[()] = bytes(self)
            return scalar[key].view(EagerTensor)
        return bytes.__getitem__(self, key)


def _repr(value: Any, shape: tuple, dtype: str) -> str:
    """TensorFlow's ``repr`` of an eager tensor."""
    shown = repr(value.item() if isinstance(value, np.generic) else value)
    return f"<tf.Tensor: shape={shape}, dtype={dtype}, numpy={shown}>"


def _str(value: Any, shape: tuple, dtype: str) -> str:
    """TensorFlow's ``str`` (and ``print``) of an eager tensor."""
    shown = (
        repr(value.item()) if isinstance(value, np.generic) else repr(value) if isinstance(value, bytes) else str(value)
    )
    return f"tf.Tensor({shown}, shape={shape}, dtype={dtype})"


Tensor.register(EagerTensor)
Tensor.register(BytesTensor)


def as_tensors(value: Any) -> Any:
    """``value`` with every array, NumPy scalar and ``bytes`` in it (dicts, tuples, lists) as a tensor.

    Arrays become :class:`EagerTensor` views (no copy), ``bytes`` a
    :class:`BytesTensor`; other objects (``SparseArray``, ``RaggedArray``,
    Python numbers, strings) are returned as they are.
    """
    kind = type(value)
    if kind is EagerTensor or kind is BytesTensor:
        return value
    if kind is np.ndarray:
        return value.view(EagerTensor)
    if kind is bytes:
        return BytesTensor(value)
    if kind is dict:
        return {k: as_tensors(v) for k, v in value.items()}
    if kind is tuple:
        return tuple(as_tensors(v) for v in value)
    if kind is list:
        return [as_tensors(v) for v in value]
    if isinstance(value, np.generic):
        return np.asarray(value).view(EagerTensor)
    if isinstance(value, np.ndarray):  # another subclass (a masked array, a matrix): left as it is
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return kind(*(as_tensors(v) for v in value))
    return value


def as_plain(value: Any) -> Any:
    """The inverse of :func:`as_tensors`: tensors in ``value`` back to plain ndarrays, NumPy scalars and ``bytes``."""
    kind = type(value)
    if kind is EagerTensor:
        return value.numpy()
    if kind is BytesTensor:
        return bytes(value)
    if kind is dict:
        return {k: as_plain(v) for k, v in value.items()}
    if kind is tuple:
        return tuple(as_plain(v) for v in value)
    if kind is list:
        return [as_plain(v) for v in value]
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return kind(*(as_plain(v) for v in value))
    return value


class TensorView:
    """The element view ``tfrx.tf``'s datasets carry: ``view(element)`` gives tensors, ``view.plain(element)``
    plain values (for ``as_numpy_iterator``)."""

    __call__ = staticmethod(as_tensors)
    plain = staticmethod(as_plain)


TENSORS = TensorView()

_F = TypeVar("_F", bound=Callable[..., Any])


def returns_tensors(fn: _F) -> _F:
    """``fn`` with its result passed through :func:`as_tensors` (``__wrapped__`` is ``fn``)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return as_tensors(fn(*args, **kwargs))

    return call  # type: ignore[return-value]
