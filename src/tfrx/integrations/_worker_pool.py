"""A pipeline's shards run in worker processes; their batches reach the main process through shared memory.

Two kinds of worker use this module:

* **PyTorch's** (``DataLoader(ds.to_torch(), num_workers=k)``): each worker
  runs :func:`handoffs` and yields what it gives. PyTorch's queues carry each
  batch (a small pickle naming a slot of the worker's ring), which costs
  PyTorch about 0.2 ms of CPU a batch in the main process and 0.15 ms in the
  worker, whatever the batch holds.
* **tfrx's own** (:class:`WorkerPool`, ``ds.to_torch(num_workers=k)`` in a
  ``DataLoader`` without workers): each worker has the same ring, two pipes
  and two words of shared memory. Per batch one message (the slot's place
  and the iterator's state, a few hundred bytes) crosses on a pipe, and the
  main process counts it received in shared memory (a pipe's system calls
  cost 15-40 us each on a virtual machine), so that the main process spends
  on a batch little more than making its arrays from the slot. Batches come in PyTorch's order: one from each
  worker in turn, skipping workers that have run out.

A worker runs at most ``prefetch`` batches ahead of what the main process
has received, as a loader's ``prefetch_factor``; one that is that far ahead
naps (50 us, doubling to 2 ms) between looks at the count. The workers live as long as the pool,
from epoch to epoch (starting a worker, and faulting its ring's memory in,
costs more than a short epoch's batches); each epoch is one command.
"""

from __future__ import annotations

import ctypes
import math
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from multiprocessing import util as mp_util
from typing import Any

from tfrx.data._dataset import Dataset
from tfrx.data._shard import shard_pipeline
from tfrx.memory import tune_owned_process
from tfrx.options import share_cores_with, usable_cores
from tfrx.integrations._shm_ring import PackedBatch, Ring, prepare, unpack, views_to_objects
from tfrx.data._range_shard import range_shard_pipeline

__all__ = ["Slots", "WorkerPool", "auto_workers", "for_handoff", "handoffs"]


class Slots:
    """Hands a worker's parse a slot of the worker's ring to write its outputs into (``Ring.lease``), once there is a ring."""

    __slots__ = ("ring",)

    def __init__(self) -> None:
        self.ring: Ring | None = None

    def __call__(self) -> Any:
        ring = self.ring
        return None if ring is None else ring.lease()

    def close(self) -> None:
        if self.ring is not None:
            self.ring.close()
            self.ring = None


def for_handoff(pipeline: Dataset, slots: Slots) -> tuple[Dataset, bool]:
    """``pipeline`` as a worker runs it for the shared-memory handoff, and whether its bytes come as views.

    When nothing but ``prefetch`` follows a ``parse`` (so that no stage of
    the user's sees the difference), the parse gives ``BytesArray`` instead
    of ``bytes`` objects and writes its numeric outputs into slots of the
    worker's ring: the worker never makes (or frees) a ``bytes`` object per
    value, the main process makes each once, from the values in the slot, as
    the parse itself would have, and the numeric outputs are already where
    the main process reads them. The trailing ``prefetch`` stages are left
    out: the loader's own prefetching keeps batches ready, and a prefetch
    thread in the worker only adds a hand-over per batch (about 10% more CPU
    time a Criteo-like batch on 2 cores, no faster).
    """
    return pipeline._for_handoff(slots)


def handoffs(elements: Iterator, views: bool, slots: Slots, depth: int) -> Iterator[PackedBatch | Any]:
    """Each element packed into the worker's ring (a ``PackedBatch``), or as it is when it cannot be.

    ``views``: the elements' ``BytesArray`` leaves stand for object arrays of
    ``bytes`` (see :func:`for_handoff`); an element given back as it is has
    them made. ``slots``: the worker's ring, which the pipeline's parse takes
    slots from; it opens on the first element with arrays, with ``depth``
    slots of twice that element's size, and lasts from epoch to epoch (a new
    one would cost the page faults of its memory in both processes again).
    It is closed, for a ring of larger slots, when a batch does not fit. An
    element goes as it is when it holds no array, or when every slot is
    still held by the consumer.
    """
    for element in elements:
        ring = slots.ring
        prepared = prepare(element, views_as_objects=views, ring=ring)
        if prepared is not None and ring is not None and prepared.size > ring.slot_bytes:
            if prepared.slot is not None:  # the copies do not fit after the parse's outputs
                prepared = prepare(element, views_as_objects=views)  # all of it into another slot
                assert prepared is not None
            if prepared.size > ring.slot_bytes:  # a ring of larger slots
                slots.close()
                ring = None
        if prepared is not None and ring is None:
            ring = slots.ring = Ring(2 * prepared.size, depth)
            mp_util.Finalize(None, ring.close, exitpriority=10)
        packed = None if prepared is None or ring is None else ring.put(prepared)
        if packed is not None:
            yield packed
        else:
            yield views_to_objects(element) if views else element


# ------------------------------------------------------------------ tfrx's own workers

# main -> worker, on the pipe: _STOP, _EXIT, or _EPOCH followed by a pickle of (epoch, iterator state or None, ahead)
_STOP, _EXIT, _EPOCH = b"s", b"x", b"e"
# worker -> main: a pickled tuple whose first item is one of these
_PACKED, _PLAIN, _END, _ERROR, _STOPPED = "packed", "plain", "end", "error", "stopped"
# Each worker's words of shared memory, written by the main process only: the batches it has received
# this epoch (a worker makes a batch while it is fewer than `ahead` batches ahead of that), and how
# many times it has been asked to read the pipe (a stop, or the exit) while the worker may be busy.
_RECEIVED, _CALLS = 0, 1
_PARENT_CHECK = 1.0  # seconds between checks, while a worker waits, that its parent lives
_LONGEST_NAP = 0.002  # seconds a worker that is far enough ahead sleeps between looks at the count


class _Exit(Exception):
    """The main process asked the worker to exit, or is gone."""


class _Channel:
    """A worker's ends: the command pipe, the result pipe and its shared words (see _RECEIVED)."""

    def __init__(self, commands: Any, results: Any, shared: Any, parent: int) -> None:
        self.commands, self.results, self.shared, self.parent = commands, results, shared, parent
        self.answered = 0  # the calls (shared[_CALLS]) this worker has read the pipe for

    def command(self) -> bytes:
        """The next command on the pipe; raises _Exit when it is to exit or the main process is gone."""
        while not self.commands.poll(_PARENT_CHECK):
            if os.getppid() != self.parent:
                raise _Exit
        try:
            command = self.commands.recv_bytes()
        except (EOFError, OSError):
            raise _Exit from None
        if command == _EXIT:
            raise _Exit
        return command

    def send(self, message: tuple) -> None:
        self.results.send_bytes(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))

    def stopped(self) -> None:
        self.answered = self.shared[_CALLS]
        self.send((_STOPPED,))

    def wait_to_make(self, made: int, ahead: int) -> bool:
        """Waits until fewer than ``ahead`` of the ``made`` batches are unreceived; False when the main
        process stops the epoch instead (the stop is answered)."""
        shared = self.shared
        nap, napped = 0.00005, 0.0
        while True:
            if shared[_CALLS] != self.answered:  # a stop (or the exit) is on the pipe
                while self.command() != _STOP:
                    pass
                self.stopped()
                return False
            if made - shared[_RECEIVED] < ahead:
                return True
            time.sleep(nap)
            napped += nap
            nap = min(2 * nap, _LONGEST_NAP)
            if napped >= _PARENT_CHECK:
                napped = 0.0
                if os.getppid() != self.parent:
                    raise _Exit


def _error_message(error: BaseException) -> tuple:
    text = "".join(traceback.format_exception(error))
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # an exception that does not survive pickling: its text does
        error = RuntimeError(f"{type(error).__name__}: {error}")
    return (_ERROR, error, text)


def _serve(
    dataset: Dataset,
    levels: list,
    depth: int,
    channel: _Channel,
    processes: int,
    inherited: list[int],
) -> None:
    """A worker's life: one epoch per command until the pool closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    tune_owned_process()  # the process is tfrx's own (tfrx/memory.py)
    for fd in inherited:  # (forked: the main process's ends of the earlier workers' pipes)
        try:
            os.close(fd)
        except OSError:
            pass
    share_cores_with(processes)
    slots = Slots()
    try:
        pipeline, views = for_handoff(range_shard_pipeline(dataset, levels), slots)
        while True:
            command = channel.command()
            if command == _STOP:  # (a stop for an epoch that ended before it came)
                channel.stopped()
            elif command[:1] == _EPOCH:
                epoch, state, ahead = pickle.loads(command[1:])
                _run_epoch(pipeline, views, slots, depth, epoch, state, ahead, channel)
    except (_Exit, BrokenPipeError):
        pass
    finally:
        slots.close()


def _run_epoch(
    pipeline: Dataset, views: bool, slots: Slots, depth: int, epoch: int, state: Any, ahead: int, channel: _Channel
) -> None:
    it = None
    try:
        it = pipeline.iterator(epoch=epoch)
        if state is not None:
            it.set_state(state)
        made = 0
        for packed in handoffs(it, views, slots, depth):
            if isinstance(packed, PackedBatch):
                channel.send((_PACKED, packed.__reduce__()[1], it.get_state()))
            else:
                channel.send((_PLAIN, packed, it.get_state()))
            made += 1
            if not channel.wait_to_make(made, ahead):
                return
        channel.send((_END,))
    except (_Exit, BrokenPipeError):
        raise
    except Exception as error:
        channel.send(_error_message(error))
    finally:
        if it is not None:
            it.close()


class WorkerPool:
    """``processes`` worker processes, each running its shard of ``dataset`` (see :mod:`tfrx.integrations._worker_pool`).

    ``levels``: the shards this process already reads (DDP ranks), to which
    each worker adds its own; ``depth``: the slots of each worker's ring;
    ``prefetch``: the batches each worker makes ahead; ``context``: a
    ``multiprocessing`` start method or context (default: the platform's).
    The workers start at once and exit when the pool is closed or collected,
    or with the main process.
    """

    def __init__(
        self,
        dataset: Dataset,
        processes: int,
        *,
        levels: list | None = None,
        depth: int = 6,
        prefetch: int = 2,
        context: Any = None,
    ) -> None:
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise ValueError(f"processes must be a positive int, got {processes!r}")
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
            raise ValueError(f"prefetch must be a positive int, got {prefetch!r}")
        ctx: Any = context if context is not None and not isinstance(context, str) else mp.get_context(context)
        self.processes = processes
        self.prefetch = prefetch
        self._workers: list[Any] = []
        self._commands: list[Any] = []
        self._results: list[Any] = []
        self._shared: list[Any] = []  # each worker's words (_RECEIVED, _CALLS)
        self._lock = threading.Lock()
        self._running: int | None = None  # the id of the iteration the workers run now
        self._running_active: list[int] = []  # its workers that have not run out
        self._iterations = 0
        levels = list(levels or [])
        try:
            forked = ctx.get_start_method() == "fork"
            for index in range(processes):
                commands_in, commands_out = ctx.Pipe(duplex=False)
                results_in, results_out = ctx.Pipe(duplex=False)
                shared = ctx.RawArray(ctypes.c_int64, 2)
                inherited = [c.fileno() for c in self._commands + self._results] if forked else []
                channel = _Channel(commands_in, results_out, shared, os.getpid())
                worker = ctx.Process(
                    target=_serve,
                    args=(dataset, [*levels, (processes, index)], depth, channel, processes, inherited),
                    name=f"tfrx-worker-{index}",
                    daemon=True,
                )
                worker.start()
                commands_in.close()
                results_out.close()
                self._workers.append(worker)
                self._commands.append(commands_out)
                self._results.append(results_in)
                self._shared.append(shared)
        except BaseException:
            _shut_down(self._workers, self._commands, self._results, self._shared)
            raise
        self._finalizer = weakref.finalize(self, _shut_down, self._workers, self._commands, self._results, self._shared)

    def close(self) -> None:
        """Stops the workers (waiting a little for each to exit cleanly) and frees their rings."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def iterate(
        self,
        epoch: int,
        convert: Callable[[Any], Any] = lambda element: element,
        resume: dict | None = None,
        progress: Callable[[dict], None] | None = None,
    ) -> Iterator[Any]:
        """One epoch's elements, ``convert`` ed, in turn from each worker.

        ``resume``: a ``progress`` state to go on from; ``progress`` is
        called with the state after each element, before it is yielded
        (``{"turn": the worker whose turn is next, or after it the first that
        has not run out, "states": [each worker's iterator state,
        None for one that has given nothing], "done": [whether each has run
        out]}``). A new iteration stops one still running.
        """
        if self.closed:
            raise ValueError("the worker pool is closed")
        count = self.processes
        states: list = [None] * count if resume is None else list(resume["states"])
        done: list = [False] * count if resume is None else list(resume["done"])
        turn = 0 if resume is None else int(resume["turn"])
        if len(states) != count or len(done) != count:
            raise ValueError(f"a state of {len(states)} workers cannot resume {count} workers")
        with self._lock:
            if self._running is not None:
                self._stop(self._running_active)
            self._iterations += 1
            me = self._running = self._iterations
            active = [i for i in range(count) if not done[i]]
            self._running_active = active
            for i in active:
                self._shared[i][_RECEIVED] = 0
                start = pickle.dumps((epoch, states[i], self.prefetch), pickle.HIGHEST_PROTOCOL)
                self._commands[i].send_bytes(_EPOCH + start)
        finished = False
        try:
            while active:
                if self._running != me:
                    raise RuntimeError("a newer iteration of this worker pool stopped this one")
                if turn not in active:
                    turn = next((i for i in active if i > turn), active[0])
                i = turn
                message = self._receive(i)
                kind = message[0]
                if kind == _END:
                    done[i] = True
                    active.remove(i)
                    continue
                if kind == _ERROR:
                    done[i] = True
                    active.remove(i)
                    error = message[1]
                    error.add_note(f"(in tfrx worker {i}; its traceback:)\n{message[2]}")
                    raise error
                self._shared[i][_RECEIVED] += 1  # the worker may make one more
                if kind == _PACKED:
                    element = convert(unpack(*message[1]))
                else:
                    element = convert(message[1])
                states[i] = message[2]
                turn = (i + 1) % count  # (the next worker that has not run out, found above)
                if progress is not None:
                    progress({"turn": turn, "states": list(states), "done": list(done)})
                del message
                yield element
            finished = True
        finally:
            with self._lock:
                if self._running == me:
                    self._running = None
                    if not finished and not self.closed:
                        self._stop(active)

    def _receive(self, i: int) -> tuple:
        try:
            return pickle.loads(self._results[i].recv_bytes())
        except (EOFError, OSError):
            worker = self._workers[i]
            worker.join(1.0)
            raise RuntimeError(
                f"tfrx worker {i} (pid {worker.pid}) exited unexpectedly (exit code {worker.exitcode})"
            ) from None

    def _stop(self, active: list[int]) -> None:
        """Stops the workers still running an epoch, releasing the slots of the batches they had sent."""
        for i in active:
            self._shared[i][_CALLS] += 1
            try:
                self._commands[i].send_bytes(_STOP)
            except OSError:
                continue
        for i in active:
            while True:
                try:
                    message = self._receive(i)
                except RuntimeError:
                    break
                if message[0] == _STOPPED:
                    break
                if message[0] == _PACKED:
                    unpack(*message[1])  # (made and dropped at once: its slot is free again)


def _shut_down(workers: list, commands: list, results: list, shared: list) -> None:
    for connection, words in zip(commands, shared):
        words[_CALLS] += 1
        try:
            connection.send_bytes(_EXIT)
        except OSError:
            pass
    for connection in results:  # a worker blocked sending a batch no one will read gets an error
        connection.close()
    for worker in workers:
        worker.join(5.0)
        if worker.is_alive():
            worker.terminate()
            worker.join(1.0)
    for connection in commands:
        connection.close()


# ------------------------------------------------------------------ how many workers


class WorkerCosts:
    """What :func:`auto_workers` measured: CPU seconds to make a batch in this process, and to hand one over."""

    __slots__ = ("make", "handoff", "batches")

    def __init__(self, make: float, handoff: float, batches: int) -> None:
        self.make, self.handoff, self.batches = make, handoff, batches

    def __repr__(self) -> str:
        return (
            f"WorkerCosts(make={self.make * 1e6:.0f} us, handoff={self.handoff * 1e6:.0f} us, batches={self.batches})"
        )


def measure_costs(
    dataset: Dataset, levels: list | None = None, *, batches: int = 4, budget: float = 1.0
) -> WorkerCosts:
    """CPU time per batch of ``dataset`` (this process's shard; the first batch, which fills buffers, not
    counted) and of handing such a batch through a shared-memory ring and making it again. Process CPU
    time: the parser's threads count (nothing else of this process should run meanwhile)."""
    it = shard_pipeline(dataset, list(levels or [])).iterator(epoch=0)
    made: list[Any] = []
    try:
        first = next(it, None)
        if first is None:
            return WorkerCosts(0.0, 0.0, 0)
        made.append(first)
        start = time.process_time()
        deadline = time.monotonic() + budget
        count = 0
        while count < batches and time.monotonic() < deadline:
            element = next(it, None)
            if element is None:
                break
            made.append(element)
            count += 1
        make = (time.process_time() - start) / count if count else 0.0
    finally:
        it.close()
    sample = made[-1]
    prepared = prepare(sample)
    if prepared is None:  # nothing a ring carries: the element is pickled whole
        start = time.process_time()
        pickle.loads(pickle.dumps(sample, pickle.HIGHEST_PROTOCOL))
        return WorkerCosts(make, time.process_time() - start, count)
    ring = Ring(2 * prepared.size, 2)
    try:
        start = time.process_time()
        for _ in range(2):
            packed = ring.put(prepare(sample) or prepared, wait=1.0)
            if packed is not None:
                unpack(*packed.__reduce__()[1])  # (made and dropped: the slot is free again)
        handoff = (time.process_time() - start) / 2
    finally:
        ring.close()
    return WorkerCosts(make, handoff, count)


def auto_workers(dataset: Dataset, levels: list | None = None, *, cores: int | None = None) -> int:
    """The worker count for ``to_torch(num_workers="auto")``: from the usable cores and measured costs.

    Each worker makes batches at ``1 / make`` a second and the main process
    receives them at ``1 / handoff``; ``ceil(make / handoff)`` workers keep it
    busy, at most one fewer than the usable cores (the main process needs
    one). Fewer than 2 means none: the in-process parse already runs its
    threads on every core, so one worker only moves the same work to another
    process and adds the handoff (on 2 cores, 1 and 2 workers gave 0.6-0.9x
    of none in wall clock on BERT-like records, docs/benchmarks.md).
    """
    cores = usable_cores() if cores is None else int(cores)
    if cores <= 1:
        return 0
    costs = measure_costs(dataset, levels)
    return workers_for(costs, cores)


def workers_for(costs: WorkerCosts, cores: int) -> int:
    """The worker count for these measured costs on ``cores`` usable cores (see :func:`auto_workers`)."""
    if costs.batches == 0 or cores <= 1:
        return 0
    count = min(math.ceil(costs.make / max(costs.handoff, 1e-6)), cores - 1)
    return count if count >= 2 else 0
