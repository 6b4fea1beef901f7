"""PyTorch adapter: a tfrx pipeline as a ``torch.utils.data.IterableDataset``.

``TorchIterableDataset(ds)`` (or ``ds.to_torch()``) shards the pipeline's
sources between DDP ranks (``torch.distributed`` when initialised, or
explicit ``rank=`` / ``world_size=``) and then between ``DataLoader``
workers, so that every record is read exactly once per epoch. Sources split
themselves: a ``TFRecordDataset`` by files when there are at least as many
files as shards, otherwise by records (each shard then reads every file and
keeps its share). Elements become torch tensors sharing memory with the
NumPy arrays (``torch.from_numpy``); ``bytes`` and object arrays stay as
they are. Batch in tfrx and use ``DataLoader(..., batch_size=None)``.

Call :meth:`TorchIterableDataset.set_epoch` each epoch (as with
``DistributedSampler``) to reshuffle; ``len()`` is this rank's number of
elements when the pipeline's cardinality is known. ``state_dict()`` /
``load_state_dict()`` make torchdata's ``StatefulDataLoader`` resume exactly.
With ``multiprocessing_context="spawn"`` the pipeline is pickled, so its
functions must be picklable (no lambdas).

In ``DataLoader`` workers, batches reach the main process through a reused
ring of shared-memory slots per worker (``tfrx.integrations._shm_ring``): the worker copies
a batch's arrays into a free slot and sends only a small pickle of the batch
with the arrays replaced by their places; the main process wraps numeric
arrays as tensors viewing the slot, without a copy, and makes string columns'
``bytes`` objects from the slot in one native call. This replaces PyTorch's
handoff of one new shared-memory segment per tensor, which costs more CPU
than parsing the batch. When the pipeline ends with ``parse`` (and
``prefetch``), workers parse strings as views and never make ``bytes``
objects themselves, the parse writes its numeric outputs straight into a
free slot (``Ring.lease``), so that only the rest of the batch is copied,
and the trailing ``prefetch`` is left out in the workers (the loader's
``prefetch_factor`` keeps batches ready); the batches arrive exactly as the
parser returns them.
``shared_memory=False`` turns all this off; ``shared_memory_slots`` sets the
ring's depth (default 6: the loader's ``prefetch_factor`` plus the batches a
training step holds). A batch whose slot is still held when the worker needs
it travels the ordinary way.

``to_torch(num_workers=k)`` starts tfrx's own ``k`` worker processes instead
(``tfrx.integrations._worker_pool``; give it to a ``DataLoader`` without workers). They
run the same shards and rings, but a batch crosses as one small message on a
pipe (the count of batches received goes back through shared memory), not
through PyTorch's index and result queues, which cost the main process about
0.2 ms of CPU a batch on their own.
Batches come in the order ``DataLoader(ds.to_torch(), num_workers=k)`` gives
them; ``prefetch_factor`` batches a worker are made ahead; the workers live
from epoch to epoch until :meth:`TorchIterableDataset.close` (or until the
dataset is collected, or the main process exits); ``multiprocessing_context``
is a start method or context (default: the platform's). An error in a worker
is raised in the main process, and a worker that dies is an error.
``num_workers="auto"`` picks the count on the first epoch from the usable
cores (``os.sched_getaffinity``) and the measured cost of a batch against
the cost of handing one over (:func:`tfrx.integrations._worker_pool.auto_workers`):
enough to keep the main process receiving, at most one fewer than the
cores, and none rather than one (on 2 cores, always none).

``device="cuda"`` (or ``"cuda:N"``) delivers every numeric array already
on the GPU (``tfrx.integrations._device_feed``): each batch is written into
pinned host memory that is reused (or, with ``num_workers=k``, copied
straight from the workers' shared-memory slots, registered as pinned where
``cudaHostRegister`` works), sent in one host-to-device copy on a side CUDA
stream, ``device_prefetch`` batches ahead, and handed over only after the
current stream waits for its copy; a slot is reused only after its copy has
completed. ``bytes`` features stay on the host (with ``bytes_on_device=True``
each goes in the same copy as a ``DeviceBytes``: its values end to end and
their offsets, as device tensors). ``state_dict()`` is the
position after the last batch handed over (not the ones prefetched). CUDA
is initialised on the first batch, never at import; ``device=None`` or
``"cpu"`` keeps batches on the host exactly as without it. Use it with
``DataLoader(..., batch_size=None, num_workers=0)`` and no ``pin_memory``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from tfrx.data._dataset import Dataset, DatasetIterator
from tfrx.data._shard import shard_pipeline
from tfrx.data._structure import map_structure
from tfrx.options import share_cores_with
from tfrx.integrations._device_feed import DeviceBytes, DeviceFeeder, PinnedOutputs, backend_for
from tfrx.integrations._shm_ring import PackedBatch, attached_mappings, unpack
from tfrx.integrations._worker_pool import Slots, WorkerPool, auto_workers, for_handoff, handoffs

__all__ = ["DeviceBytes", "TorchIterableDataset", "to_tensor", "to_tensors", "rank_and_world_size"]


_KEEP_KINDS = frozenset("OSUV")  # object (bytes), fixed-width text and bytes, void: no tensor type


def to_tensor(x: Any) -> Any:
    """A NumPy leaf as a tensor without copying numeric data; other values unchanged."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind in _KEEP_KINDS:
            return x
        if not x.flags.writeable:
            x = x.copy()  # torch warns on read-only memory
        return torch.from_numpy(x)
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return torch.from_numpy(np.asarray(x).copy())
    return x


def to_tensors(element: Any) -> Any:
    """``to_tensor`` on every leaf of an element (dicts, tuples, namedtuples; lists are leaves).

    The same as ``map_structure(to_tensor, element)``, with the common
    shapes (a dict or tuple of arrays) walked without the general machinery:
    this runs once per batch on the training loop's thread.
    """
    kind = type(element)
    if kind is dict:
        return {k: to_tensors(v) if isinstance(v, (dict, tuple)) else to_tensor(v) for k, v in element.items()}
    if kind is tuple:
        return tuple(to_tensors(v) if isinstance(v, (dict, tuple)) else to_tensor(v) for v in element)
    return map_structure(to_tensor, element)


class RankAndWorldSize(NamedTuple):
    """This process's ``rank`` among ``world_size`` processes (unpacks as ``rank, world_size``)."""

    rank: int
    world_size: int


def rank_and_world_size(rank: int | None = None, world_size: int | None = None) -> RankAndWorldSize:
    """Explicit values, else ``torch.distributed``'s when initialised, else ``(0, 1)``."""
    if rank is None or world_size is None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            rank = dist.get_rank() if rank is None else rank
            world_size = dist.get_world_size() if world_size is None else world_size
    rank = 0 if rank is None else int(rank)
    world_size = 1 if world_size is None else int(world_size)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size), got rank={rank}, world_size={world_size}")
    return RankAndWorldSize(rank, world_size)


def _parse_into(pipeline: Dataset, outputs: Any) -> Dataset:
    """``pipeline`` with each of its parses writing numeric outputs into the arenas ``outputs()`` gives."""

    def into(stage: Dataset) -> Dataset:
        clone = stage._with_outputs_from(outputs)
        return stage if clone is None else clone

    return pipeline._rewrite(into)


def _unpack_tensors(*args) -> Any:
    return to_tensors(unpack(*args))


class _Handoff:
    """What a worker yields for a packed batch: becomes the batch's tensors when the main process unpickles it."""

    __slots__ = ("packed",)

    def __init__(self, packed: PackedBatch) -> None:
        self.packed = packed

    def __reduce__(self):
        return _unpack_tensors, self.packed.__reduce__()[1]


class TorchIterableDataset(IterableDataset):
    """An ``IterableDataset`` over a tfrx pipeline, sharded across ranks and workers."""

    def __init__(
        self,
        dataset: Dataset,
        *,
        rank: int | None = None,
        world_size: int | None = None,
        shard: bool = True,
        shared_memory: bool = True,
        shared_memory_slots: int = 6,
        num_workers: int | str = 0,
        prefetch_factor: int = 2,
        multiprocessing_context: Any = None,
        device: Any = None,
        device_prefetch: int = 2,
        bytes_on_device: bool = False,
    ) -> None:
        if not isinstance(dataset, Dataset):
            raise TypeError(f"expected a tfrx Dataset, got {type(dataset).__name__}")
        if not 1 <= int(shared_memory_slots) <= 1000:
            raise ValueError(f"shared_memory_slots must be in [1, 1000], got {shared_memory_slots}")
        checks: list[tuple[str, Any, int]] = [
            ("prefetch_factor", prefetch_factor, 1),
            ("device_prefetch", device_prefetch, 1),
        ]
        if num_workers != "auto":
            checks.append(("num_workers", num_workers, 0))
        for name, value, least in checks:
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                extra = ' or "auto"' if name == "num_workers" else ""
                raise ValueError(f"{name} must be an int >= {least}{extra}, got {value!r}")
        backend_for(device, check_only=True)  # its form checked now, no device touched
        if num_workers and not shared_memory:
            raise ValueError("num_workers hands batches over through shared memory: it needs shared_memory=True")
        super().__init__()
        self.dataset = dataset
        self.shared_memory = bool(shared_memory)
        self.shared_memory_slots = int(shared_memory_slots)
        self._rank = rank
        self._world_size = world_size
        self.shard = shard
        self.epoch = 0
        self._iterator: DatasetIterator | None = None
        self._resume = None
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.multiprocessing_context = multiprocessing_context
        self._slots: Slots | None = None  # in a DataLoader worker: its ring, kept from epoch to epoch
        self._pool: WorkerPool | None = None  # with num_workers: the worker processes, kept from epoch to epoch
        self._progress: dict | None = None  # with num_workers: where each worker is (WorkerPool.iterate)
        self.device = device
        self.device_prefetch = device_prefetch
        self.bytes_on_device = bool(bytes_on_device)
        self._auto: int | None = None  # num_workers="auto": the count chosen on the first epoch
        self._fed = False  # batches go to a device: state_dict() is _delivered, the state after the last handed over
        self._delivered: Any = None
        self._feeder: DeviceFeeder | None = None  # the last epoch's (its counters tell how batches went)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_slots"] = state["_pool"] = state["_feeder"] = None  # a process's own ring, workers and feeder
        return state

    def set_epoch(self, epoch: int) -> None:
        """Selects the epoch: seeded shuffles reshuffle per epoch, identically on every rank and worker."""
        self.epoch = int(epoch)

    def _levels(self) -> list[tuple[int, int]]:
        if not self.shard:
            return []
        rank, world = rank_and_world_size(self._rank, self._world_size)
        info = get_worker_info()
        workers, worker = (1, 0) if info is None else (info.num_workers, info.id)
        return [(world, rank), (workers, worker)]

    def pipeline(self) -> Dataset:
        """The pipeline as this process (rank and worker) reads it."""
        return shard_pipeline(self.dataset, self._levels())

    def _workers(self) -> int:
        """``num_workers``, with ``"auto"`` resolved (measured once, on the first call)."""
        if self.num_workers != "auto":
            return int(self.num_workers)
        if self._auto is None:
            self._auto = 0 if get_worker_info() is not None else auto_workers(self.dataset, self._levels())
        return self._auto

    def __iter__(self):
        if self.device is not None:
            if get_worker_info() is not None:
                raise ValueError(
                    "to_torch(device=...) puts batches on the device in the main process: give it to a "
                    "DataLoader with num_workers=0 (use to_torch(device=..., num_workers=k) for worker processes)"
                )
            if self._workers() and backend_for(self.device, check_only=True):
                self._started_pool()  # (forked before CUDA starts in this process: the workers never use it)
            backend = backend_for(self.device)
            if backend is not None:
                yield from self._to_device(backend)
                return
        if self._workers():
            yield from self._through_own_workers()
            return
        info = get_worker_info()
        if info is not None:  # the loader's workers share the cores: each starts its share of threads
            share_cores_with(info.num_workers)
        slots = None
        if self.shared_memory and info is not None:
            if self._slots is None:
                self._slots = Slots()
            slots = self._slots
            pipeline, views = for_handoff(self.pipeline(), slots)
        else:
            pipeline, views = self.pipeline(), False
        it = self._started(pipeline)
        try:
            if slots is not None:
                for element in handoffs(it, views, slots, self.shared_memory_slots):
                    yield _Handoff(element) if isinstance(element, PackedBatch) else to_tensors(element)
            else:
                for element in it:
                    yield to_tensors(element)
        finally:
            it.close()

    def _started(self, pipeline: Any) -> Any:
        """The epoch's iterator of ``pipeline``, at the state ``load_state_dict`` gave, if any (used up)."""
        it = pipeline.iterator(epoch=self.epoch)
        if self._resume is not None:
            it.set_state(self._resume)
            self._resume = None
        self._iterator = it
        return it

    def _to_device(self, backend: Any):
        """The epoch's batches fed to ``backend``'s device (see the module's notes on ``device``)."""
        feeder = self._feeder = DeviceFeeder(
            backend, prefetch=self.device_prefetch, host_leaf=to_tensor, bytes_on_device=self.bytes_on_device
        )
        self._fed = True
        pairs = self._own_worker_pairs(feeder) if self._workers() else self._in_process_pairs(feeder)
        try:
            for element, state in feeder.feed(pairs):
                self._delivered = state
                yield element
        finally:
            pairs.close()
            feeder.close()

    def _in_process_pairs(self, feeder: DeviceFeeder):
        """(batch, iterator state after it) in this process, its parses writing into the feeder's pinned buffers."""
        outputs = PinnedOutputs(feeder, count=self.device_prefetch + 6)  # (+ the prefetch stages' batches)
        it = self._started(_parse_into(self.pipeline(), outputs))
        self._delivered = it.get_state()
        try:
            for element in it:
                yield element, it.get_state()
        finally:
            it.close()

    def _own_worker_pairs(self, feeder: DeviceFeeder):
        """(batch, workers' progress after it) from the own workers, their rings registered with the feeder."""
        self._delivered = self._resume
        for element in self._through_own_workers(convert=None):
            feeder.register(attached_mappings())
            yield element, self._progress

    def _through_own_workers(self, convert: Any = to_tensors):
        """The epoch from this dataset's own worker processes (started on the first epoch, kept until closed)."""
        if get_worker_info() is not None:
            raise ValueError(
                "to_torch(num_workers=k) starts its own worker processes: give it to a DataLoader "
                "with num_workers=0, or use the DataLoader's workers with to_torch() alone"
            )
        pool = self._started_pool()
        resume, self._resume = self._resume, None
        self._progress = resume
        yield from pool.iterate(self.epoch, convert or (lambda element: element), resume, self._note_progress)

    def _started_pool(self) -> WorkerPool:
        """The own workers, started unless they run (they live from epoch to epoch)."""
        pool = self._pool
        if pool is None or pool.closed:
            pool = self._pool = WorkerPool(
                self.dataset,
                self._workers(),
                levels=self._levels(),  # (this rank's shard; each worker adds its own)
                depth=self.shared_memory_slots,
                prefetch=self.prefetch_factor,
                context=self.multiprocessing_context,
            )
        return pool

    def _note_progress(self, progress: dict) -> None:
        self._progress = progress

    def close(self) -> None:
        """Stops the worker processes of ``num_workers`` (they also stop when this dataset is collected)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __len__(self) -> int:
        rank, world = rank_and_world_size(self._rank, self._world_size)
        levels = [(world, rank)] if self.shard else []
        return len(shard_pipeline(self.dataset, levels))

    # Exact resume (torchdata's StatefulDataLoader protocol): the state of this
    # process's running iterator (each worker has its own), restored by the next __iter__.
    def state_dict(self) -> dict:
        """The epoch and the running iterator's position (torchdata's StatefulDataLoader calls it)."""
        if self._fed:
            return {"epoch": self.epoch, "workers" if self._workers() else "iterator": self._delivered}
        if self._workers():
            return {"epoch": self.epoch, "workers": self._progress}
        if self._iterator is None:
            return {"epoch": self.epoch, "iterator": None}
        return {"epoch": self.epoch, "iterator": self._iterator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        """Restores :meth:`state_dict`; the next iteration resumes right after the saved element."""
        self.epoch = int(state["epoch"])
        if self.num_workers == "auto" and self._auto is None:  # resumes the way it was saved
            saved = state.get("workers")
            self._auto = len(saved["states"]) if saved else 0
        key = "workers" if self._workers() else "iterator"
        if key not in state:
            saved = "with" if "workers" in state else "without"
            raise ValueError(f"this state was saved {saved} to_torch(num_workers=...); it resumes only the same way")
        self._resume = state[key]
