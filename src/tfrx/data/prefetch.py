"""prefetch: a background thread keeps up to ``buffer_size`` elements ready.

At most ``buffer_size`` elements are produced and not yet returned (a
semaphore counts them), so memory is bounded by ``buffer_size`` elements.
Elements are handed over in chunks of what was produced within 2 ms (at most
``buffer_size``), because passing elements between threads one at a time
costs tens of microseconds each; slow elements go one by one. The thread holds no reference to the iterator: dropping or closing the
iterator (or an exception upstream) stops it, and an exception raised
upstream is re-raised to the consumer. ``tfrx.AUTOTUNE`` uses
``max(2, usable cores)``.

The thread also frees what it made: each NumPy object array (the ``bytes``
columns of parsed batches) in an element reaches the consumer as a view of
it; the thread keeps the array itself and a weak reference to the view, and
drops the array once the view is gone, so those objects are deallocated on
the thread (and usually the core) that allocated them. A parsed Criteo-like
batch holds 26 ``bytes`` objects per record; freeing them on the other core
cost more than a third of the pipeline's CPU time (docs/benchmarks.md). No
reference count is read: this holds on free-threaded builds too. At most
``2 * buffer_size + 64`` elements' arrays are kept: an array the consumer
holds longer (or a view of it made by the consumer) is left to it.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
import weakref
from collections import deque

import numpy as np

from tfrx.data.dataset import AUTOTUNE, Dataset, DatasetIterator, IterContext, transformation, usable_cores
from tfrx.parsing.arrays import RaggedArray, SparseArray

__all__ = ["PrefetchDataset", "PrefetchIterator", "resolve_buffer_size"]

_POLL_S = 0.05
_JOIN_S = 10.0
_MAX_CHUNK = 64
_MAX_DELAY_S = 0.002


def resolve_buffer_size(buffer_size: int | None) -> int:
    if buffer_size is None or buffer_size == AUTOTUNE:
        return max(2, usable_cores())
    if not isinstance(buffer_size, int) or buffer_size < 0:
        raise ValueError(f"prefetch: buffer_size must be a non-negative int or tfrx.AUTOTUNE, got {buffer_size!r}")
    return buffer_size


def _acquire(slots: threading.Semaphore, stop: threading.Event) -> bool:
    while not stop.is_set():
        if slots.acquire(timeout=_POLL_S):
            return True
    return False


def _handed_over(value, held: list, depth: int = 0):
    """``value`` with each NumPy object array in it (through dicts, tuples, lists and the ``.values`` of sparse /
    ragged arrays) replaced by a view of it; each array goes to ``held`` with a weak reference to its view."""
    if isinstance(value, np.ndarray):
        if value.dtype != object:
            return value
        view = value.view()
        held.append((value, weakref.ref(view)))
        return view
    if depth >= 4:
        return value
    kind = type(value)
    if kind is dict:
        return {k: _handed_over(v, held, depth + 1) for k, v in value.items()}
    if kind is tuple or kind is list:
        return kind(_handed_over(v, held, depth + 1) for v in value) if len(value) <= 64 else value
    if kind is SparseArray or kind is RaggedArray:
        values = _handed_over(value.values, held, depth + 1)
        if values is not value.values:
            value = copy.copy(value)
            value.values = values
    return value


def _free_returned(held: deque, cap: int) -> None:
    """Drops the held arrays whose views the consumer no longer has (deallocating them on this thread)."""
    for _ in range(len(held)):
        arrays = held.popleft()
        keep = [pair for pair in arrays if pair[1]() is not None]
        if keep:
            held.append(keep)
        del arrays, keep
    while len(held) > cap:
        held.popleft()  # held by the consumer for longer: its own reference frees them


def _produce(parent: DatasetIterator, q: queue.Queue, stop: threading.Event, slots: threading.Semaphore,
             buffer_size: int) -> None:
    chunk: list = []
    clock = time.perf_counter
    started = clock()
    held: deque = deque()
    cap = 2 * buffer_size + _MAX_CHUNK
    try:
        while not stop.is_set():
            if held:
                _free_returned(held, cap)
            if not slots.acquire(blocking=False):
                if chunk:  # the consumer needs these before it can free a slot
                    q.put(("values", chunk))
                    chunk = []
                if not _acquire(slots, stop):
                    return
                started = clock()
            try:
                value = next(parent)
            except StopIteration:
                if chunk:
                    q.put(("values", chunk))
                q.put(("end", None))
                return
            arrays: list = []
            chunk.append((_handed_over(value, arrays), parent.get_state()))
            if arrays:
                held.append(arrays)
            del arrays, value
            if len(chunk) >= _MAX_CHUNK or clock() - started >= _MAX_DELAY_S:
                q.put(("values", chunk))
                chunk = []
                started = clock()
    except BaseException as e:  # noqa: BLE001 - handed to the consumer
        if chunk:
            q.put(("values", chunk))
        q.put(("error", e))


def _stop_thread(stop: threading.Event, q: queue.Queue, thread: threading.Thread) -> None:
    stop.set()
    try:
        while True:
            q.get_nowait()
    except queue.Empty:
        pass
    if thread is not threading.current_thread():
        thread.join(_JOIN_S)


class PrefetchIterator(DatasetIterator):
    """Runs ``parent`` on a daemon thread, ``buffer_size`` elements ahead of the consumer."""

    def __init__(self, parent: DatasetIterator, buffer_size: int, name: str = "tfrx-prefetch") -> None:
        self._parent = parent
        self._children = (parent,)
        self._size = buffer_size
        self._name = name
        self._queue: queue.Queue | None = None
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._finalizer: weakref.finalize | None = None
        self._state: dict | None = None  # parent state after the last element returned
        self._finished = False
        self._chunk: list = []  # (element, state) pairs received and not yet returned
        self._next = 0

    def _start(self) -> None:
        if self._state is None:
            self._state = self._parent.get_state()
        self._queue = queue.Queue()  # unbounded: the semaphore bounds the elements in flight
        self._stop = threading.Event()
        self._slots = threading.Semaphore(self._size)
        self._thread = threading.Thread(
            target=_produce, args=(self._parent, self._queue, self._stop, self._slots, self._size), name=self._name,
            daemon=True,
        )
        self._thread.start()
        self._finalizer = weakref.finalize(self, _stop_thread, self._stop, self._queue, self._thread)

    def _halt(self) -> None:
        self._chunk, self._next = [], 0
        if self._thread is not None:
            assert self._finalizer is not None and self._stop is not None and self._queue is not None  # set with _thread
            self._finalizer.detach()
            _stop_thread(self._stop, self._queue, self._thread)
            self._thread = self._queue = self._stop = self._finalizer = None

    def __next__(self):
        if self._next < len(self._chunk):
            value, self._state = self._chunk[self._next]
            self._next += 1
            self._slots.release()
            return value
        if self._finished:
            raise StopIteration
        if self._thread is None:
            self._start()
        q, thread = self._queue, self._thread
        while True:
            try:
                kind, payload = q.get_nowait() if q.qsize() else q.get(timeout=_POLL_S * 4)
                break
            except queue.Empty:
                if not thread.is_alive() and q.empty():
                    self._finished = True
                    raise RuntimeError("prefetch: the background thread stopped unexpectedly") from None
        if kind == "values":
            self._chunk, self._next = payload, 1
            value, self._state = payload[0]
            self._slots.release()
            return value
        self._finished = True
        self._halt()
        if kind == "end":
            raise StopIteration
        raise payload

    def start(self) -> None:
        """Starts reading ahead now rather than at the first ``next``."""
        if self._thread is None and not self._finished:
            self._start()

    def ready(self) -> bool:
        """True when ``next`` would return (or raise) without waiting; starts reading ahead if it has not."""
        if self._thread is None and not self._finished and self._next >= len(self._chunk):
            self._start()  # (after ``set_state`` the thread starts again on demand)
        return self._next < len(self._chunk) or self._finished or (self._queue is not None and self._queue.qsize() > 0)

    def get_state(self) -> dict:
        return {"parent": self._state if self._state is not None else self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._halt()
        self._parent.set_state(state["parent"])
        self._state = state["parent"]
        self._finished = False

    def close(self) -> None:
        self._finished = True
        self._halt()
        super().close()


class PrefetchDataset(Dataset):
    def __init__(self, input_dataset: Dataset, buffer_size: int | None) -> None:
        super().__init__(input_dataset)
        self._size = resolve_buffer_size(buffer_size)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        parent = self._inputs[0]._iterator(ctx)
        if self._size == 0:
            return parent
        return PrefetchIterator(parent, self._size)

    def cardinality(self) -> int:
        return self._inputs[0].cardinality()

    def _describe(self) -> str:
        return f"prefetch({self._size})"


@transformation
def prefetch(self: Dataset, buffer_size: int | None = AUTOTUNE) -> Dataset:
    """Prepares up to ``buffer_size`` elements ahead on a background thread."""
    return PrefetchDataset(self, buffer_size)
