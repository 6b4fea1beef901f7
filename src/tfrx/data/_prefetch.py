"""prefetch: a background thread keeps up to ``buffer_size`` elements ready.

At most ``buffer_size`` elements are produced and not yet returned (two
counters, each written by one thread, say how many; the consumer wakes the
thread only when it waits), so memory is bounded by ``buffer_size``
elements. Elements are handed over in chunks of what was produced within
2 ms (at most ``buffer_size``), because passing elements between threads one
at a time costs tens of microseconds each; slow elements go one by one. The
thread holds no reference to the iterator: dropping or closing the iterator
(or an exception upstream) stops it, and an exception raised upstream is
re-raised to the consumer. ``tfrx.AUTOTUNE`` uses ``max(2, usable cores)``.

The thread also frees what it made: it keeps the NumPy object arrays (the
``bytes`` columns of parsed batches) of the elements it hands over and drops
them once the consumer has dropped the element, so those objects are
deallocated on the thread (and usually the core) that allocated them. A
parsed Criteo-like batch holds 26 ``bytes`` objects per record; freeing them
on the other core cost more than a third of the pipeline's CPU time
(docs/benchmarks.md). The element's first object array reaches the consumer
as a view of it, and a weak reference to that view says when the consumer
dropped it; no reference count is read, so this holds on free-threaded
builds too. At most ``2 * buffer_size + 64`` elements' arrays are kept: an
element the consumer holds longer is left to it.

The threads are reused: a new iterator (every epoch's, every evaluation's)
runs on a thread an ended one left idle (:class:`_Threads`) instead of
starting one. Starting and joining a thread costs about 0.13 ms of CPU, and a
new thread's first 3 MB of memory about 0.2-0.5 ms (its malloc arena faults
the pages in again), against 0.06 ms on a thread that has run before.
"""

from __future__ import annotations

import copy
import os
import queue
import threading
import time
import weakref
from collections import deque

import numpy as np

from tfrx.data._dataset import AUTOTUNE, Dataset, DatasetIterator, IterContext, transformation, usable_cores
from tfrx.parsing._arrays import RaggedArray, SparseArray

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


class _Slots:
    """How far the thread may run ahead: at most ``size`` elements produced and not yet taken.

    Each side writes its own counter (no lock on the way of an element); the
    consumer wakes the thread only when it waits for a slot. The wake is a
    plain lock released by the consumer and acquired by the waiting thread
    (a binary semaphore in C): a ``threading.Event`` costs a Python-level
    condition (a lock made, acquired and released) on both sides of every
    wake, about as much as the hand-over itself.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.produced = 0  # written by the thread only
        self.taken = 0  # written by the consumer only
        self._waiting = False
        self._wake = threading.Lock()  # locked while no wake is pending
        self._wake.acquire()

    def take(self) -> None:
        self.taken += 1
        if self._waiting:
            self.wake()

    def wake(self) -> None:
        """Lets a waiting thread re-check (at most one pending wake; a spare one only costs a re-check)."""
        self._waiting = False
        try:
            self._wake.release()
        except RuntimeError:  # already released: a wake is pending
            pass

    def full(self) -> bool:
        return self.produced - self.taken >= self.size

    def wait(self, stop: threading.Event) -> bool:
        """Until a slot is free (True) or ``stop`` is set (False)."""
        while not stop.is_set():
            self._waiting = True  # (before the check: a take after it releases the lock)
            if not self.full():
                self._waiting = False
                return True
            self._wake.acquire(timeout=_POLL_S)
        return False


def _handed_over(value, held: list, token: list, depth: int = 0):
    """``value`` with its first NumPy object array (through dicts, tuples, lists and the ``.values`` of sparse /
    ragged arrays) replaced by a view of it, the token whose weak reference (appended to ``token``) says when the
    consumer has dropped the element; every object array goes to ``held``. The containers on the way to the
    token are copies; the rest is ``value``'s own."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "O":
            return value
        held.append(value)
        if token:
            return value
        view = value.view()
        token.append(weakref.ref(view))
        return view
    if depth >= 4:
        return value
    kind = type(value)
    if kind is dict:
        return _handed_over_dict(value, held, token, depth)
    if kind is tuple or kind is list:
        if len(value) > 64:
            return value
        items = [_handed_over(v, held, token, depth + 1) for v in value]
        return kind(items) if token else value
    if kind is SparseArray or kind is RaggedArray:
        values = _handed_over(value.values, held, token, depth + 1)
        if values is not value.values:
            value = copy.copy(value)
            value.values = values
    return value


def _handed_over_dict(value: dict, held: list, token: list, depth: int) -> dict:
    """:func:`_handed_over` of a dict: ``value`` itself unless an entry is handed over as something else."""
    out = None  # a copy, once an entry differs (the token, or a container on the way to it)
    for k, v in value.items():
        if type(v) is np.ndarray:  # (most values: no call)
            if v.dtype.kind != "O":
                continue
            held.append(v)
            if token:
                continue
            handed = v.view()
            token.append(weakref.ref(handed))
        else:
            handed = _handed_over(v, held, token, depth + 1)
            if handed is v:
                continue
        if out is None:
            out = dict(value)
        out[k] = handed
    return value if out is None else out


def _free_returned(held: deque, cap: int) -> None:
    """Drops the object arrays of the elements the consumer has dropped (deallocating them on this thread),
    oldest first; beyond ``cap`` elements, the oldest ones' are left to the consumer, which still holds them."""
    while held and (held[0][0]() is None or len(held) > cap):
        held.popleft()


def _produce(
    parent: DatasetIterator, q: queue.SimpleQueue, stop: threading.Event, slots: _Slots, buffer_size: int
) -> None:
    chunk: list = []
    clock = time.perf_counter
    started = clock()
    held: deque = deque()
    cap = 2 * buffer_size + _MAX_CHUNK
    try:
        while not stop.is_set():
            if held:
                _free_returned(held, cap)
            if slots.full():
                if chunk:  # the consumer needs these before it can free a slot
                    q.put(("values", chunk))
                    chunk = []
                if not slots.wait(stop):
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
            token: list = []
            chunk.append((_handed_over(value, arrays, token), parent.get_state()))
            slots.produced += 1
            if token:
                held.append((token[0], arrays))
            del arrays, token, value
            if len(chunk) >= _MAX_CHUNK or clock() - started >= _MAX_DELAY_S:
                q.put(("values", chunk))
                chunk = []
                started = clock()
    except BaseException as e:  # noqa: BLE001 - handed to the consumer
        if chunk:
            q.put(("values", chunk))
        q.put(("error", e))


_IDLE_S = 30.0  # how long an idle thread waits for the next iterator before it ends
_MAX_IDLE = 8


class _Job:
    """A function running on one of :class:`_Threads`' threads; ``is_alive`` and ``join`` as a thread's."""

    __slots__ = ("_done", "thread")

    def __init__(self) -> None:
        self._done = threading.Event()
        self.thread: threading.Thread | None = None  # the thread running it, once started

    def is_alive(self) -> bool:
        return not self._done.is_set()

    def join(self, timeout: float | None = None) -> None:
        self._done.wait(timeout)


class _Threads:
    """Daemon threads that run one function after another: an ended iterator's thread runs the next one
    (the most recently idle first, whose memory is the warmest); at most ``_MAX_IDLE`` wait, each for at most
    ``_IDLE_S`` seconds. Nothing of a function (its arguments, its locals) is kept once it returns."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue] = []
        if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's threads
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._idle = []

    def run(self, fn, args: tuple, name: str) -> _Job:
        job = _Job()
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name=name, daemon=True).start()
        inbox.put((fn, args, name, job))
        return job

    def _serve(self, inbox: queue.SimpleQueue) -> None:
        me = threading.current_thread()
        while True:
            try:
                work = inbox.get(timeout=_IDLE_S)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:  # (else a job was just given to this thread: take it)
                        self._idle.remove(inbox)
                        return
                continue
            fn, args, name, job = work
            del work
            me.name = name
            job.thread = me
            try:
                fn(*args)
            finally:
                del fn, args
                with self._lock:
                    keep = len(self._idle) < _MAX_IDLE
                    if keep:
                        self._idle.append(inbox)
                job._done.set()
                del job
            if not keep:
                return


_THREADS = _Threads()


def _stop_thread(stop: threading.Event, q: queue.SimpleQueue, job: _Job, slots: _Slots) -> None:
    stop.set()
    slots.wake()  # (a thread waiting for a slot sees ``stop`` now rather than at its next poll)
    try:
        while True:
            q.get_nowait()
    except queue.Empty:
        pass
    if job.thread is not threading.current_thread():
        job.join(_JOIN_S)


class PrefetchIterator(DatasetIterator):
    """Runs ``parent`` on a daemon thread, ``buffer_size`` elements ahead of the consumer."""

    def __init__(self, parent: DatasetIterator, buffer_size: int, name: str = "tfrx-prefetch") -> None:
        self._parent = parent
        self._children = (parent,)
        self._size = buffer_size
        self._name = name
        self._queue: queue.SimpleQueue | None = None
        self._stop: threading.Event | None = None
        self._thread: _Job | None = None
        self._finalizer: weakref.finalize | None = None
        self._state: dict | None = None  # parent state after the last element returned
        self._finished = False
        self._chunk: list = []  # (element, state) pairs received and not yet returned
        self._next = 0

    def _start(self) -> None:
        if self._state is None:
            self._state = self._parent.get_state()
        self._queue = queue.SimpleQueue()  # unbounded: the slots bound the elements in flight
        self._stop = threading.Event()
        self._slots = _Slots(self._size)
        self._thread = _THREADS.run(
            _produce, (self._parent, self._queue, self._stop, self._slots, self._size), self._name
        )
        self._finalizer = weakref.finalize(self, _stop_thread, self._stop, self._queue, self._thread, self._slots)

    def _halt(self) -> None:
        self._chunk, self._next = [], 0
        if self._thread is not None:
            assert (
                self._finalizer is not None and self._stop is not None and self._queue is not None
            )  # set with _thread
            self._finalizer.detach()
            _stop_thread(self._stop, self._queue, self._thread, self._slots)
            self._thread = self._queue = self._stop = self._finalizer = None

    def __next__(self):
        if self._next < len(self._chunk):
            value, self._state = self._chunk[self._next]
            self._chunk[self._next] = None  # (the consumer alone holds what it was given)
            self._next += 1
            self._slots.take()
            return value
        if self._finished:
            raise StopIteration
        if self._thread is None:
            self._start()
        q, thread = self._queue, self._thread
        while True:
            try:
                kind, payload = q.get(timeout=_POLL_S * 4)
                break
            except queue.Empty:
                if not thread.is_alive() and q.empty():
                    self._finished = True
                    raise RuntimeError("prefetch: the background thread stopped unexpectedly") from None
        if kind == "values":
            self._chunk, self._next = payload, 1
            value, self._state = payload[0]
            payload[0] = None
            self._slots.take()
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

    def _for_handoff(self, outputs_from: object) -> tuple[Dataset, bool]:
        # A prefetch thread in a worker only adds a hand-over per batch (about 10% more CPU time a
        # Criteo-like batch on 2 cores, no faster): the loader's own prefetching keeps batches ready.
        return self._inputs[0]._for_handoff(outputs_from)

    def _describe(self) -> str:
        return f"prefetch({self._size})"


@transformation
def prefetch(self: Dataset, buffer_size: int | None = AUTOTUNE) -> Dataset:
    """Prepares up to ``buffer_size`` elements ahead on a background thread."""
    return PrefetchDataset(self, buffer_size)
