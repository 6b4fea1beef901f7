"""JAX adapter: NumPy batches from a tfrx pipeline, optionally placed on devices.

``as_numpy_iterator(ds)`` is plain iteration. ``device_put_iterator(ds,
sharding=None, device=None, prefetch=2)`` (also ``ds.to_jax(...)``) places
each whole batch (a pytree of arrays) with one ``jax.device_put`` call,
with the given ``sharding`` or ``device``, keeping ``prefetch`` batches in
flight so that host-to-device copies overlap the training step. JAX's
transfers are asynchronous: a batch is handed out as soon as its transfer is
issued, and JAX orders any computation on it after the transfer.

``sharding="data"`` (or :func:`data_parallel_sharding`) splits every batch
along its first axis over the local devices (data parallelism: a
``NamedSharding`` over a one-axis ``Mesh`` named ``"data"``); 0-d arrays are
replicated, and a batch whose size the device count does not divide is an
error naming the array (batch with ``drop_remainder=True``). ``bytes`` /
object arrays stay on the host. Both iterators have ``state_dict`` /
``load_state_dict`` (the state after the last batch handed out, not the
ones prefetched).
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator
from tfrx.data._structure import map_structure

__all__ = ["as_numpy_iterator", "data_parallel_sharding", "device_put_iterator", "DevicePutIterator"]

_NUMERIC = frozenset("biufc")


def as_numpy_iterator(dataset: Dataset) -> DatasetIterator:
    """Iterates NumPy elements (``tf.data``'s ``as_numpy_iterator``)."""
    return iter(dataset)


def data_parallel_sharding(devices: Any = None, *, axis_name: str = "data") -> Any:
    """A ``jax.sharding.NamedSharding`` that splits arrays along their first axis over ``devices``
    (default: this process's local devices), for data-parallel training."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = list(jax.local_devices() if devices is None else devices)
    if not devices:
        raise ValueError("data_parallel_sharding needs at least one device")
    return NamedSharding(Mesh(np.array(devices), (axis_name,)), PartitionSpec(axis_name))


class _Host:
    """A leaf that stays on the host, wrapped so that ``device_put`` leaves it out."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class DevicePutIterator(DatasetIterator):
    """Batches of ``parent`` placed on devices with one ``jax.device_put`` each, ``prefetch`` ahead."""

    def __init__(self, parent: DatasetIterator, sharding: Any = None, device: Any = None, prefetch: int = 2) -> None:
        import jax

        self._jax = jax
        self._parent = parent
        self._children = (parent,)
        if isinstance(sharding, str):
            if sharding != "data":
                raise ValueError(f'sharding must be a jax.sharding.Sharding or "data", got {sharding!r}')
            sharding = data_parallel_sharding()
        self._target = sharding if sharding is not None else device
        self._split = _splits_first_axis(sharding)  # how many pieces the first axis is cut into
        self._replicated: Any = None
        self._prefetch = max(1, int(prefetch))
        self._queue: collections.deque = collections.deque()  # (on-device element, parent state after it)
        self._state: dict | None = None

    def _place(self, element: Any) -> Any:
        arrays: list[np.ndarray] = []
        targets: list[Any] = []

        def take(x: Any) -> Any:
            if isinstance(x, np.generic) and x.dtype.kind in _NUMERIC:
                x = np.asarray(x)
            if isinstance(x, np.ndarray) and x.dtype.kind in _NUMERIC:
                arrays.append(x)
                if self._split:
                    targets.append(self._target_for(x, len(arrays) - 1))
                return len(arrays) - 1
            return _Host(x)

        skeleton = map_structure(take, element)
        if not arrays:
            return element
        # One call for the whole batch (a target of None: jax's default device).
        placed = self._jax.device_put(arrays, targets if self._split else self._target)
        return map_structure(lambda i: i.value if type(i) is _Host else placed[i], skeleton)

    def _target_for(self, x: np.ndarray, index: int) -> Any:
        """Where array ``index`` of a batch split over the devices goes (a scalar: replicated)."""
        if x.ndim == 0:
            if self._replicated is None:
                from jax.sharding import NamedSharding, PartitionSpec

                self._replicated = NamedSharding(self._target.mesh, PartitionSpec())
            return self._replicated
        if x.shape[0] % self._split:
            raise ValueError(
                f"array {index} of the batch (shape {x.shape}) cannot be split over {self._split} devices along "
                "its first axis: batch with a size the device count divides, and drop_remainder=True"
            )
        return self._target

    def __next__(self):
        if self._state is None:
            self._state = self._parent.get_state()
        while len(self._queue) <= self._prefetch:
            try:
                value = next(self._parent)
            except StopIteration:
                break
            self._queue.append((self._place(value), self._parent.get_state()))
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


def _splits_first_axis(sharding: Any) -> int:
    """The pieces a ``NamedSharding`` cuts the first axis into (0 when it is not one that does)."""
    spec = getattr(sharding, "spec", None)
    mesh = getattr(sharding, "mesh", None)
    if spec is None or mesh is None or not len(spec) or spec[0] is None:
        return 0
    names = spec[0] if isinstance(spec[0], tuple) else (spec[0],)
    return int(np.prod([mesh.shape[n] for n in names]))


def device_put_iterator(
    dataset: Dataset, *, sharding: Any = None, device: Any = None, prefetch: int = 2
) -> DevicePutIterator:
    """Batches placed with one ``jax.device_put(batch, sharding or device)`` each, ``prefetch`` ahead;
    ``sharding="data"``: split along the first axis over the local devices (:func:`data_parallel_sharding`)."""
    return DevicePutIterator(iter(dataset), sharding=sharding, device=device, prefetch=prefetch)
