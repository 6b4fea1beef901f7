"""JAX adapter: NumPy batches from a tfrx pipeline, optionally placed on devices.

``as_numpy_iterator(ds)`` is plain iteration. ``device_put_iterator(ds,
sharding=None, device=None, prefetch=2)`` (also ``ds.to_jax(...)``) calls
``jax.device_put`` on every element (a pytree of arrays) with the given
``sharding`` or ``device``, keeping ``prefetch`` elements in flight so that
host-to-device copies overlap the training step. ``bytes`` / object arrays
are left on the host. Both iterators have ``state_dict`` / ``load_state_dict``
(the state of the last element handed out).
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator
from tfrx.data._structure import map_structure

__all__ = ["as_numpy_iterator", "device_put_iterator", "DevicePutIterator"]


def as_numpy_iterator(dataset: Dataset) -> DatasetIterator:
    """Iterates NumPy elements (``tf.data``'s ``as_numpy_iterator``)."""
    return iter(dataset)


class DevicePutIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, sharding: Any = None, device: Any = None, prefetch: int = 2) -> None:
        import jax

        self._jax = jax
        self._parent = parent
        self._children = (parent,)
        self._target = sharding if sharding is not None else device
        self._prefetch = max(1, int(prefetch))
        self._queue: collections.deque = collections.deque()  # (on-device element, parent state after it)
        self._state: dict | None = None

    def _put(self, x: Any) -> Any:
        if isinstance(x, np.ndarray) and x.dtype == object or isinstance(x, (bytes, str)):
            return x
        return self._jax.device_put(x, self._target)

    def __next__(self):
        if self._state is None:
            self._state = self._parent.get_state()
        while len(self._queue) < self._prefetch:
            try:
                value = next(self._parent)
            except StopIteration:
                break
            self._queue.append((map_structure(self._put, value), self._parent.get_state()))
        if not self._queue:
            raise StopIteration
        value, self._state = self._queue.popleft()
        return value

    def get_state(self) -> dict:
        return self._state if self._state is not None else self._parent.get_state()

    def set_state(self, state: dict) -> None:
        self._queue.clear()
        self._parent.set_state(state)
        self._state = state


def device_put_iterator(
    dataset: Dataset, *, sharding: Any = None, device: Any = None, prefetch: int = 2
) -> DevicePutIterator:
    """Elements placed with ``jax.device_put(element, sharding or device)``, ``prefetch`` ahead."""
    return DevicePutIterator(iter(dataset), sharding=sharding, device=device, prefetch=prefetch)
