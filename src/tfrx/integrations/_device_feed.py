"""Batches fed to an accelerator: pinned host memory reused, one host-to-device copy per batch, prefetched.

:class:`DeviceFeeder` takes a pipeline's batches (pytrees of NumPy arrays)
and hands them on with every numeric array on the device:

* when all of a batch's numeric arrays already lie in pinned host memory
  the feeder knows (a parse that wrote them into :class:`PinnedOutputs`'
  buffers, or a shared-memory ring of tfrx's worker processes registered as
  pinned with :meth:`DeviceBackend.register`), they are not copied on the
  host at all; otherwise they are written end to end (64-byte aligned) into
  a **pinned staging slot** the feeder reuses (a ring of ``prefetch + 2``),
  in one native gather with the GIL released;
* the used bytes go to the device in **one copy** on a side stream, and the
  arrays become views of the device buffer (no copy per array);
* batches are issued ``prefetch`` ahead of the one handed out, so the copies
  overlap the training step;
* ordering: a batch is handed over only after the consumer's stream waits
  for its copy (:meth:`DeviceBackend.hand_over`, which also records the
  buffer on that stream so the allocator does not reuse it early); a staging
  slot is written again, and a shared-memory slot is let go, only after the
  copy that read it has completed (:meth:`DeviceBackend.wait`);
* ``bytes`` (object arrays) and other non-numeric leaves stay on the host,
  unless ``bytes_on_device``: then each object array of ``bytes`` goes in
  the same copy as a :class:`DeviceBytes` (its values end to end and their
  offsets, on the device).

The device logic is behind :class:`DeviceBackend`. :class:`CudaBackend` is
PyTorch's CUDA (imported and initialised when the first batch is fed, never
at import). :class:`StandInBackend` is a CPU stand-in whose copies complete
later, in order or shuffled, and read the host memory only when they
complete, as a DMA engine does: a feeder that reused a slot too early, or
handed out a batch before its copy ended, gives wrong values with it. The
tests run the feeder on it.
"""

from __future__ import annotations

import collections
import random
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Protocol

import numpy as np

from tfrx import _native
from tfrx.data._structure import map_structure
from tfrx.integrations._shm_ring import ALIGN, NUMERIC, gather_pieces

__all__ = [
    "CudaBackend",
    "DeviceBackend",
    "DeviceBytes",
    "DeviceFeeder",
    "PinnedOutputs",
    "StandInBackend",
    "backend_for",
]


class DeviceBackend(Protocol):
    """What the feeder needs of a device: pinned memory, asynchronous copies, events and views."""

    def pinned(self, nbytes: int) -> tuple[Any, np.ndarray]:
        """Pinned host memory of ``nbytes``: the backend's handle and a NumPy ``uint8`` view of it."""
        ...

    def register(self, memory: Any) -> Any:
        """Registers host memory (a writable buffer) as pinned; a handle to copy from, or None where it fails."""
        ...

    def unregister(self, handle: Any) -> None:
        """Undoes :meth:`register` (the memory must stay mapped until this returns)."""
        ...

    def copy(self, host: Any, offset: int, nbytes: int) -> tuple[Any, Any]:
        """Starts copying ``nbytes`` of ``host`` from ``offset`` to a new device buffer: (buffer, event)."""
        ...

    def done(self, event: Any) -> bool:
        """Whether the copy ``event`` stands for has completed."""
        ...

    def wait(self, event: Any) -> None:
        """Blocks the host until the copy ``event`` stands for has completed."""
        ...

    def hand_over(self, buffer: Any, event: Any) -> None:
        """Makes the consumer's stream wait for ``event`` before using ``buffer`` (and keeps it alive for it)."""
        ...

    def view(self, buffer: Any, offset: int, dtype: np.dtype, shape: tuple) -> Any:
        """An array of ``dtype`` and ``shape`` viewing ``buffer`` from byte ``offset`` (no copy)."""
        ...


# ------------------------------------------------------------------ backends


class CudaBackend:
    """PyTorch's CUDA device: pinned memory from torch, copies on a side stream, CUDA events."""

    def __init__(self, device: Any = "cuda") -> None:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError(
                f"device={str(device)!r} needs a CUDA device, and torch.cuda.is_available() is False "
                "(a CPU build of torch, or no GPU visible); pass device=None to keep batches on the host"
            )
        self._torch = torch
        self.device = torch.device(device)
        if self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.stream = torch.cuda.Stream(device=self.device)
        self._dtypes: dict[str, Any] = {}

    def pinned(self, nbytes: int) -> tuple[Any, np.ndarray]:
        host = self._torch.empty(max(nbytes, 1), dtype=self._torch.uint8, pin_memory=True)
        return host, host.numpy()

    def register(self, memory: Any) -> Any:
        torch = self._torch
        host = torch.frombuffer(memory, dtype=torch.uint8)
        try:
            status = torch.cuda.cudart().cudaHostRegister(host.data_ptr(), host.numel(), 0)
        except Exception:  # noqa: BLE001  (a torch without the binding: fall back to staging)
            return None
        if int(status) != 0:
            return None
        return host

    def unregister(self, handle: Any) -> None:
        self._torch.cuda.cudart().cudaHostUnregister(handle.data_ptr())

    def copy(self, host: Any, offset: int, nbytes: int) -> tuple[Any, Any]:
        torch = self._torch
        with torch.cuda.stream(self.stream):
            buffer = torch.empty(max(nbytes, 1), dtype=torch.uint8, device=self.device)
            buffer[:nbytes].copy_(host[offset : offset + nbytes], non_blocking=True)
            event = torch.cuda.Event()
            event.record(self.stream)
        return buffer, event

    def done(self, event: Any) -> bool:
        return bool(event.query())

    def wait(self, event: Any) -> None:
        event.synchronize()

    def hand_over(self, buffer: Any, event: Any) -> None:
        consumer = self._torch.cuda.current_stream(self.device)
        consumer.wait_event(event)
        buffer.record_stream(consumer)

    def view(self, buffer: Any, offset: int, dtype: np.dtype, shape: tuple) -> Any:
        return _torch_view(self._torch, buffer, offset, dtype, shape, self._dtypes)


def _torch_view(torch: Any, buffer: Any, offset: int, dtype: np.dtype, shape: tuple, cache: dict) -> Any:
    tdtype = cache.get(dtype.str)
    if tdtype is None:
        tdtype = cache[dtype.str] = torch.from_numpy(np.empty(0, dtype)).dtype
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return buffer[offset : offset + nbytes].view(tdtype).view(shape)


class _StandInEvent:
    __slots__ = ("complete", "number")

    def __init__(self, number: int) -> None:
        self.complete = False
        self.number = number


class StandInBackend:
    """A CPU stand-in for a device, for tests: copies complete later, reading the host memory only then.

    ``order="fifo"`` completes copies in the order they were issued (one
    stream); ``"random"`` in a seeded random order (copies on several
    engines). Each :meth:`done` call may complete one pending copy (as a
    device progresses on its own); :meth:`hand_over` completes nothing (as a
    stream's ``wait_event``, it does not block the host), so only the
    feeder's own waits keep a source from being rewritten early; values are
    read after :meth:`drain` (or the feeder's ``close``), as after a
    ``torch.cuda.synchronize()``. The device buffers are NumPy arrays
    filled with ``0xEE`` until their copy completes; :meth:`view` gives
    torch tensors over them when ``torch_views`` (else NumPy arrays).
    Counters: ``copies`` (copies issued), ``registered`` (memory registered
    and not yet unregistered), ``pinned_bytes`` (staging memory made).
    """

    def __init__(self, *, order: str = "fifo", seed: int = 0, torch_views: bool = True) -> None:
        if order not in ("fifo", "random"):
            raise ValueError(f"order must be 'fifo' or 'random', got {order!r}")
        self.order = order
        self._random = random.Random(seed)
        self._pending: list[tuple[_StandInEvent, Callable[[], None]]] = []
        self._issued = 0
        self.copies = 0
        self.registered: list[Any] = []
        self.pinned_bytes = 0
        self.handed_over: list[int] = []  # event numbers, in the order batches were handed over
        self._torch: Any = None
        if torch_views:
            import torch

            self._torch = torch
        self._dtypes: dict[str, Any] = {}

    def pinned(self, nbytes: int) -> tuple[Any, np.ndarray]:
        host = np.empty(max(nbytes, 1), np.uint8)
        self.pinned_bytes += host.nbytes
        return host, host

    def register(self, memory: Any) -> Any:
        host = np.frombuffer(memory, np.uint8)
        self.registered.append(host)
        return host

    def unregister(self, handle: Any) -> None:
        self.registered = [h for h in self.registered if h is not handle]

    def copy(self, host: Any, offset: int, nbytes: int) -> tuple[Any, Any]:
        buffer = np.full(max(nbytes, 1), 0xEE, np.uint8)
        event = _StandInEvent(self._issued)
        self._issued += 1
        self.copies += 1

        def run() -> None:
            buffer[:nbytes] = host[offset : offset + nbytes]

        self._pending.append((event, run))
        return buffer, event

    def _complete_one(self) -> None:
        k = 0 if self.order == "fifo" else self._random.randrange(len(self._pending))
        event, run = self._pending.pop(k)
        run()
        event.complete = True

    def done(self, event: Any) -> bool:
        if not event.complete and self._pending and self._random.random() < 0.5:
            self._complete_one()  # the device moves on by itself now and then
        return event.complete

    def wait(self, event: Any) -> None:
        while not event.complete:
            self._complete_one()

    def hand_over(self, buffer: Any, event: Any) -> None:
        # As a stream's wait_event: the consumer's later work is ordered after the copy, and the host
        # is not blocked (the copy may still be pending: its source must not be reused until it is done).
        self.handed_over.append(event.number)

    def view(self, buffer: Any, offset: int, dtype: np.dtype, shape: tuple) -> Any:
        if self._torch is None:
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            return buffer[offset : offset + nbytes].view(dtype).reshape(shape)
        return _torch_view(self._torch, self._torch.from_numpy(buffer), offset, dtype, shape, self._dtypes)

    def drain(self) -> None:
        """Completes every pending copy."""
        while self._pending:
            self._complete_one()


def backend_for(device: Any, *, check_only: bool = False) -> Any:
    """The backend for ``device``: None for no device or the CPU (batches stay as they are), a
    :class:`DeviceBackend` as given, else :class:`CudaBackend` (made, and CUDA initialised, now).
    ``check_only``: whether there would be a backend, touching no device (a bad ``device`` raises
    either way)."""
    if device is None:
        return None if not check_only else False
    if not isinstance(device, (str, int)) and hasattr(device, "hand_over"):
        return device if not check_only else True
    kind = str(device).split(":")[0]
    if kind == "cpu":
        return None if not check_only else False
    if kind != "cuda":
        raise ValueError(f"device must be None, 'cpu', 'cuda' or 'cuda:N' (or a DeviceBackend), got {device!r}")
    return CudaBackend(device) if not check_only else True


# ------------------------------------------------------------------ the feeder


class _Staging:
    """One pinned staging slot: its memory and the copy that last read it."""

    __slots__ = ("host", "array", "event")

    def __init__(self) -> None:
        self.host: Any = None
        self.array: np.ndarray | None = None
        self.event: Any = None


class _Region:
    """Pinned host memory batches are copied from directly: a shared-memory ring's mapping registered
    as pinned (kept mapped while registered), or a pinned buffer of :class:`PinnedOutputs`."""

    __slots__ = ("memory", "handle", "start", "end", "users", "registered")

    def __init__(self, memory: Any, handle: Any, start: int, end: int, registered: bool = True) -> None:
        self.memory, self.handle, self.start, self.end = memory, handle, start, end
        self.users = 0  # batches in flight copied from it
        self.registered = registered  # (by register(): unregistered when dropped)


class _InFlight:
    """A batch whose copy has been issued: its structure, the device buffer, the event, what must live until then."""

    __slots__ = ("element", "places", "buffer", "event", "keep", "staging", "region")

    def __init__(self) -> None:
        self.element: Any = None
        self.places: list[tuple[int, np.dtype, tuple]] = []
        self.buffer: Any = None
        self.event: Any = None
        self.keep: Any = None  # the host batch (its shared-memory slot is let go once the copy has completed)
        self.staging: _Staging | None = None
        self.region: _Region | None = None


class _Placeholder:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class DeviceBytes(NamedTuple):
    """A column of ``bytes`` on the device: item ``i`` (of the flattened ``shape``) is
    ``values[offsets[i]:offsets[i + 1]]``; ``values`` uint8, ``offsets`` int64 (one more than items)."""

    values: Any
    offsets: Any
    shape: tuple


class _BytesPlaceholder:
    __slots__ = ("values", "offsets", "shape")

    def __init__(self, values: int, offsets: int, shape: tuple) -> None:
        self.values, self.offsets, self.shape = values, offsets, shape


class DeviceFeeder:
    """Feeds batches to a :class:`DeviceBackend`, ``prefetch`` ahead (see :mod:`tfrx.integrations._device_feed`).

    ``host_leaf``: what a leaf that stays on the host becomes (e.g. a NumPy
    scalar made a tensor); numeric NumPy arrays go to the device.
    """

    def __init__(
        self,
        backend: DeviceBackend,
        *,
        prefetch: int = 2,
        host_leaf: Callable[[Any], Any] = lambda x: x,
        bytes_on_device: bool = False,
    ):
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
            raise ValueError(f"prefetch must be a positive int, got {prefetch!r}")
        self.backend = backend
        self.bytes_on_device = bool(bytes_on_device)
        self.prefetch = prefetch
        self._host_leaf = host_leaf
        self._staging = [_Staging() for _ in range(prefetch + 2)]
        self._next = 0
        self._regions: dict[int, _Region] = {}  # id(memory) -> region
        self._in_flight: collections.deque = collections.deque()
        self.direct = 0  # batches copied from registered memory, with no staging copy
        self.staged = 0  # batches copied through a staging slot
        self.staged_bytes = 0  # the largest batch staged (what a PinnedOutputs buffer should hold)

    # -- registered memory

    def add_pinned(self, memory: Any, handle: Any) -> None:
        """Makes ``memory`` (already pinned: ``handle`` is the backend's copy source over it) a region
        batches are copied from directly (see :class:`PinnedOutputs`)."""
        start = _native.buffer_address(memory)
        with memoryview(memory) as view:
            nbytes = view.nbytes
        self._regions[id(memory)] = _Region(memory, handle, start, start + nbytes, registered=False)

    def drop_pinned(self, memory: Any) -> bool:
        """Forgets a region of :meth:`add_pinned` unless a copy in flight reads it; whether it was dropped."""
        region = self._regions.get(id(memory))
        if region is None:
            return True
        if region.users:
            return False
        del self._regions[id(memory)]
        return True

    def register(self, memories: dict[Any, Any]) -> None:
        """Registers these buffers (``{key: writable buffer}``) as pinned, once each; regions no longer
        listed are unregistered as soon as no batch in flight is copied from them."""
        live = {id(m) for m in memories.values()}
        for key in [k for k, r in list(self._regions.items()) if r.registered and k not in live and not r.users]:
            region = self._regions.pop(key)
            self.backend.unregister(region.handle)
        for memory in memories.values():
            if id(memory) in self._regions:
                continue
            handle = self.backend.register(memory)
            if handle is None:
                continue
            start = _native.buffer_address(memory)
            with memoryview(memory) as view:
                nbytes = view.nbytes
            self._regions[id(memory)] = _Region(memory, handle, start, start + nbytes)

    def _region_of(self, arrays: list[np.ndarray]) -> tuple[_Region, int, int] | None:
        """The registered region holding every array, with the span (start, end) of addresses they cover."""
        if not self._regions or not arrays:
            return None
        lo = hi = None
        for x in arrays:
            if not x.flags.c_contiguous:
                return None
            at = x.ctypes.data
            lo = at if lo is None else min(lo, at)
            hi = at + x.nbytes if hi is None else max(hi, at + x.nbytes)
        assert lo is not None and hi is not None
        for region in tuple(self._regions.values()):  # (a parse on another thread may add one meanwhile)
            if region.start <= lo and hi <= region.end:
                return region, lo, hi
        return None

    # -- one batch

    def _split(self, element: Any) -> tuple[Any, list[np.ndarray]]:
        arrays: list[np.ndarray] = []

        def take(x: Any) -> Any:
            if isinstance(x, np.generic) and x.dtype.kind in NUMERIC:
                x = np.asarray(x)
            if type(x) is np.ndarray and x.dtype.kind in NUMERIC and x.dtype.byteorder in "=|":
                arrays.append(x)
                return _Placeholder(len(arrays) - 1)
            if self.bytes_on_device and type(x) is np.ndarray and x.dtype.kind == "O":
                try:
                    packed = _native.pack_bytes(x.reshape(-1))
                except TypeError:  # an item that is not bytes: the array stays on the host
                    return self._host_leaf(x)
                arrays.extend((packed.values, packed.offsets))
                return _BytesPlaceholder(len(arrays) - 2, len(arrays) - 1, x.shape)
            return self._host_leaf(x)

        return map_structure(take, element), arrays

    def _free_staging(self) -> _Staging:
        slot = self._staging[self._next]
        self._next = (self._next + 1) % len(self._staging)
        if slot.event is not None:
            self.backend.wait(slot.event)  # never written while a copy may still read it
            slot.event = None
        return slot

    def put(self, element: Any) -> _InFlight:
        """Issues ``element``'s copy to the device; :meth:`take` hands it over."""
        flight = _InFlight()
        flight.element, arrays = self._split(element)
        if not arrays:
            return flight
        found = self._region_of(arrays)
        if found is not None and all((x.ctypes.data - found[1]) % x.dtype.itemsize == 0 for x in arrays):
            region, lo, hi = found
            flight.places = [(x.ctypes.data - lo, x.dtype, x.shape) for x in arrays]
            flight.buffer, flight.event = self.backend.copy(region.handle, lo - region.start, hi - lo)
            flight.keep, flight.region = element, region  # the slot stays held until the copy has read it
            region.users += 1
            self.direct += 1
        else:
            flight.staging = slot = self._free_staging()
            pieces: list[tuple[np.ndarray, int]] = []
            cursor = 0
            for x in arrays:
                at = (cursor + ALIGN - 1) // ALIGN * ALIGN
                pieces.append((x if x.flags.c_contiguous else np.ascontiguousarray(x), at))
                flight.places.append((at, x.dtype, x.shape))
                cursor = at + x.nbytes
            if slot.array is None or slot.array.nbytes < cursor:
                slot.host, slot.array = self.backend.pinned(
                    max(cursor, 2 * (0 if slot.array is None else slot.array.nbytes))
                )
            if cursor:
                gather_pieces(pieces, slot.array[:cursor])
            flight.buffer, flight.event = self.backend.copy(slot.host, 0, cursor)
            slot.event = flight.event
            self.staged += 1
            self.staged_bytes = max(self.staged_bytes, cursor)
        self._in_flight.append(flight)
        self._retire()
        return flight

    def _retire(self) -> None:
        """Lets go of the host batches whose copies have completed (their shared-memory slots go back)."""
        flights = self._in_flight
        while flights and (flights[0].event is None or self.backend.done(flights[0].event)):
            self._release(flights.popleft())

    def _release(self, flight: _InFlight) -> None:
        if flight.region is not None:
            flight.region.users -= 1
            flight.region = None
        flight.keep = None

    def take(self, flight: _InFlight) -> Any:
        """The batch of ``flight`` with its arrays on the device, safe for the consumer's stream to read."""
        if flight.event is None:
            return flight.element
        self.backend.hand_over(flight.buffer, flight.event)
        views = [self.backend.view(flight.buffer, at, dtype, shape) for at, dtype, shape in flight.places]
        buffer = flight.buffer
        flight.buffer = None
        del buffer

        def fill(x: Any) -> Any:
            kind = type(x)
            if kind is _Placeholder:
                return views[x.index]
            if kind is _BytesPlaceholder:
                return DeviceBytes(views[x.values], views[x.offsets], x.shape)
            return x

        return map_structure(fill, flight.element)

    def feed(self, pairs: Iterator[tuple[Any, Any]]) -> Iterator[tuple[Any, Any]]:
        """``(element, state)`` pairs with each element on the device, ``prefetch`` batches issued ahead
        of the one handed out; ``state`` travels with its element (the position after it)."""
        queue: collections.deque = collections.deque()
        source = iter(pairs)
        more = True
        try:
            while True:
                while more and len(queue) <= self.prefetch:
                    try:
                        element, state = next(source)
                    except StopIteration:
                        more = False
                        break
                    queue.append((self.put(element), state))
                if not queue:
                    return
                flight, state = queue.popleft()
                out = self.take(flight)
                self._retire()
                yield out, state
        finally:
            queue.clear()

    def close(self) -> None:
        """Waits for the copies in flight, then lets go of staging memory and registered regions."""
        while self._in_flight:
            flight = self._in_flight.popleft()
            if flight.event is not None:
                self.backend.wait(flight.event)
            self._release(flight)
        for slot in self._staging:
            if slot.event is not None:
                self.backend.wait(slot.event)
            slot.host = slot.array = slot.event = None
        for region in self._regions.values():
            if region.registered:
                self.backend.unregister(region.handle)
        self._regions.clear()


class PinnedOutputs:
    """Pinned buffers that a parse writes its numeric outputs into, so that a batch goes to the device
    straight from where it was parsed (no copy on the host).

    Called (as a parse's ``outputs_from``, on whatever thread parses) it
    gives a native ``OutputArena`` over a free pinned buffer, or None (the
    parse then uses its usual memory and the feeder stages the batch). A
    buffer is free again once the arena and every array over it are gone:
    the feeder keeps a batch until its copy has completed, so a buffer is
    never written while a copy may read it. Buffers hold twice the largest
    batch the feeder has staged (none is made before one was: the first
    batch goes the staging way); at most ``count`` exist at once.
    """

    def __init__(self, feeder: DeviceFeeder, count: int) -> None:
        self._feeder = feeder
        self._count = count
        self._lock = threading.Lock()
        # per buffer: [NumPy view, the backend's handle, weak reference to its current arena or None]
        self._buffers: list[list[Any]] = []
        self.leased = 0  # arenas handed out

    def __call__(self) -> Any:
        size = 2 * self._feeder.staged_bytes
        if not size:
            return None
        with self._lock:
            entry = self._free(size)
            if entry is None:
                return None
            arena = _native.OutputArena(entry[0])
            entry[2] = weakref.ref(arena)
            self.leased += 1
            return arena

    def _free(self, size: int) -> list[Any] | None:
        """A free buffer of at least ``size`` bytes (made, or made anew for a larger size), or None."""
        for k, entry in enumerate(self._buffers):
            if entry[2] is not None and entry[2]() is not None:
                continue  # (the arena, or arrays over it, still live)
            if entry[0].nbytes >= size:
                return entry
            if self._feeder.drop_pinned(entry[0]):  # too small: its place goes to a larger one
                del self._buffers[k]
                break
        if len(self._buffers) >= self._count:
            return None
        host, array = self._feeder.backend.pinned(size)
        self._feeder.add_pinned(array, host)
        entry = [array, host, None]
        self._buffers.append(entry)
        return entry
