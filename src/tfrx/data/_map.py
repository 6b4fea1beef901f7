"""map: ``fn(element)``, sequentially or on a thread pool.

With ``num_parallel_calls`` (an int or ``tfrx.AUTOTUNE``, which uses the usable
cores) up to that many calls run at once on threads; this speeds up functions
that release the GIL (the native parser, image decoding, NumPy). Results come
in input order unless ``deterministic=False``, in which case each result is
returned as soon as it is ready. Tuple elements are unpacked into positional
arguments, as in ``tf.data``. Out of order, the state names the input as of
the lowest element not yet returned and the elements after it that were, so
a restored iterator returns exactly the rest (in its own order).

Cheap functions are run on chunks of consecutive elements per task (the
chunk grows while calls take less than about half a millisecond), so the
pool's per-task cost does not dominate; expensive ones run one element per
task. At most ``2 x num_parallel_calls`` tasks are in flight.

An exception in ``fn`` stops the pool and reaches the caller (after the
results before it) with a note naming the element and, for records from
files, the file and record index.
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, resolve_parallelism, transformation
from tfrx.data._image_map import fuse_image_maps, mentions_images
from tfrx.data._provenance import annotate

__all__ = ["MapDataset", "call_with_element"]


def call_with_element(fn: Callable, value):
    """``fn(*value)`` for tuples (tf.data's convention), else ``fn(value)``.

    A ``StopIteration`` escaping ``fn`` would silently end the dataset, so it
    becomes a ``RuntimeError`` (as PEP 479 does for generators).
    """
    try:
        if type(value) is tuple:
            return fn(*value)
        return fn(value)
    except StopIteration as e:
        raise RuntimeError(f"{_fn_name(fn)} raised StopIteration") from e


def _fn_name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _short_name(fn: Callable) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


class _MapIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, fn: Callable) -> None:
        self._parent = parent
        self._children = (parent,)
        self._fn = fn
        self._count = 0

    def __next__(self):
        value = next(self._parent)
        try:
            out = call_with_element(self._fn, value)
        except Exception as e:
            raise annotate(
                e, f"map function {_fn_name(self._fn)}", self._count, self._parent.provenance(self._parent.get_state())
            )
        self._count += 1
        return out

    def get_state(self) -> dict:
        return {"count": self._count, "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._count = int(state["count"])


def _shutdown(pool: ThreadPoolExecutor) -> None:
    pool.shutdown(wait=False, cancel_futures=True)


# A task runs the function on a chunk of consecutive elements. Chunks grow
# while calls are cheap, so that the pool's per-task cost (tens of
# microseconds) is spread over many elements; an expensive function (a
# batch parse) gets chunks of one, which keeps memory and latency low.
_TARGET_TASK_S = 0.0005
_MAX_CHUNK = 64


def _run_chunk(fn: Callable, values: list) -> tuple[list, BaseException | None, float]:
    """Results of ``fn`` on ``values``, stopping at the first exception; and the time per call."""
    results = []
    t0 = time.perf_counter()
    try:
        for v in values:
            results.append(call_with_element(fn, v))
    except Exception as e:  # noqa: BLE001 - re-raised by the consumer at this element
        return results, e, 0.0
    return results, None, (time.perf_counter() - t0) / max(1, len(values))


class _ParallelMapIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, fn: Callable, threads: int, deterministic: bool) -> None:
        self._parent = parent
        self._children = (parent,)
        self._fn = fn
        self._threads = threads
        self._deterministic = deterministic
        self._pool: ThreadPoolExecutor | None = None
        self._finalizer: weakref.finalize | None = None
        # Tasks in flight: (future, the elements' numbers, parent state after each element).
        self._pending: deque = deque()
        # Results of finished tasks not yet returned: (result, number, parent state after it).
        self._ready: deque = deque()
        self._error: tuple | None = None  # (exception, number, state) to raise once the results before it are out
        self._chunk = 1
        self._exhausted = False
        self._count = 0  # elements returned
        self._pulled = 0  # elements taken from the parent
        self._state: dict | None = None  # parent state after the last element returned
        # Out of order (deterministic=False): the lowest element number not yet returned, the
        # parent's state before it, the numbers above it already returned (or to skip after a
        # restore), and the parent's state after each element pulled and not yet passed.
        self._track = not deterministic
        self._low = 0
        self._low_state: dict | None = None
        self._returned: set = set()
        self._after: dict = {}

    def _ensure_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="tfrx-map")
            self._finalizer = weakref.finalize(self, _shutdown, self._pool)
        return self._pool

    def _fill(self) -> None:
        pool = self._ensure_pool()
        if self._state is None:
            self._state = self._parent.get_state()
        if self._low_state is None:
            self._low_state = self._state
        track = self._track
        while not self._exhausted and len(self._pending) < 2 * self._threads:
            values: list = []
            numbers: list[int] = []
            states: list[dict] = []
            while len(values) < self._chunk:
                try:
                    value = next(self._parent)
                except StopIteration:
                    self._exhausted = True
                    break
                number, state = self._pulled, self._parent.get_state()
                self._pulled += 1
                if track:
                    self._after[number] = state
                    if number in self._returned:  # returned before the state was saved
                        self._passed(number)
                        continue
                values.append(value)
                numbers.append(number)
                states.append(state)
            if not values:
                if self._exhausted:
                    break
                continue
            self._pending.append((pool.submit(_run_chunk, self._fn, values), numbers, states))

    def _passed(self, number: int) -> None:
        """Out of order: element ``number`` was returned; moves the lowest unreturned element on."""
        returned = self._returned
        returned.add(number)
        while self._low in returned:
            returned.remove(self._low)
            self._low_state = self._after.pop(self._low)
            self._low += 1

    def _collect(self) -> None:
        """Moves the results of the next finished task (in order unless nondeterministic) to ``_ready``."""
        if self._deterministic:
            entry = self._pending.popleft()
        else:
            done, _ = wait([p[0] for p in self._pending], return_when=FIRST_COMPLETED)
            entry = next(p for p in self._pending if p[0] in done)
            self._pending.remove(entry)
        future, numbers, states = entry
        results, error, per_call = future.result()
        for i, r in enumerate(results):
            self._ready.append((r, numbers[i], states[i]))
        if error is not None:
            i = len(results)
            self._error = (error, numbers[i], states[i])
        elif per_call > 0:
            want = int(_TARGET_TASK_S / per_call)
            self._chunk = max(1, min(_MAX_CHUNK, want, self._chunk * 2))

    def __next__(self):
        while not self._ready:
            if self._error is not None:
                error, number, state = self._error
                self._error = None
                self.close()
                raise annotate(error, f"map function {_fn_name(self._fn)}", number, self._parent.provenance(state))
            if self._pool is None and self._exhausted:
                raise StopIteration
            try:
                self._fill()
            except BaseException:
                self.close()  # an error upstream: stop the pool before it propagates
                raise
            if not self._pending:
                self._release_pool()
                raise StopIteration
            self._collect()
        value, number, self._state = self._ready.popleft()
        self._count += 1
        if self._track:
            self._passed(number)
        return value

    def get_state(self) -> dict:
        if self._track and self._low_state is not None:
            # Out of order: the input as of the lowest element not yet returned, and which of the
            # elements after it were returned already (a restore pulls those again and drops them).
            skip = sorted(n - self._low for n in self._returned)
            return {"count": self._count, "parent": self._low_state, "skip": skip}
        parent = self._state if self._state is not None else self._parent.get_state()
        return {"count": self._count, "parent": parent}

    def set_state(self, state: dict) -> None:
        for entry in self._pending:
            entry[0].cancel()
        self._pending.clear()
        self._ready.clear()
        self._error = None
        self._exhausted = False
        self._parent.set_state(state["parent"])
        skip = state.get("skip", ())
        self._count = int(state["count"])
        self._pulled = self._low = self._count - len(skip)
        self._state = self._low_state = state["parent"]
        self._returned = {self._low + int(d) for d in skip}
        self._after = {}
        self._track = not self._deterministic or bool(skip)

    def _release_pool(self, wait: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            if self._finalizer is not None:
                self._finalizer.detach()
            pool.shutdown(wait=wait, cancel_futures=True)

    def close(self) -> None:
        self._exhausted = True
        self._pending.clear()
        self._ready.clear()
        self._release_pool(wait=True)
        super().close()


class MapDataset(Dataset):
    #: Why this map's image work was not fused with the ``batch`` after it (shown by ``explain()``).
    _not_fused: str | None = None
    #: Whether a ``batch`` was made right after this map (or after the maps above it).
    _before_batch = False

    def __init__(
        self, input_dataset: Dataset, fn: Callable, num_parallel_calls: int | None, deterministic: bool | None
    ) -> None:
        if not callable(fn):
            raise TypeError(f"map: expected a callable, got {type(fn).__name__}")
        super().__init__(input_dataset)
        self._fn = fn
        self._threads = resolve_parallelism(num_parallel_calls)
        self._parallel = num_parallel_calls is not None
        self._deterministic = deterministic

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        parent = self._inputs[0]._iterator(ctx)
        if not self._parallel:
            return _MapIterator(parent, self._fn)
        deterministic = self._deterministic
        if deterministic is None:
            deterministic = ctx.deterministic if ctx.deterministic is not None else True
        threads = self._threads if ctx.max_threads is None else min(self._threads, ctx.max_threads)
        return _ParallelMapIterator(parent, self._fn, threads, deterministic)

    def cardinality(self) -> int:
        return self._inputs[0].cardinality()

    def _why_not_record_batches(self) -> str:
        return (
            f"map({_short_name(self._fn)}) makes each record a Python object before batch; "
            "parse first and map the parsed batches (batch(n).parse(spec).map(fn)) to keep the batch-native path"
        )

    def _describe(self) -> str:
        threads = f", num_parallel_calls={self._threads}" if self._parallel else ""
        text = f"map({_short_name(self._fn)}{threads})"
        if self._not_fused:
            text += (
                f"; decode + resize not fused with batch: {self._not_fused} (write the map as "
                "tf.io.parse_single_example, tf.io.decode_jpeg and tf.image.resize on the values, "
                "other work after batch, to get one native decode + resize per batch)"
            )
        elif not self._before_batch and type(self) is MapDataset and mentions_images(self._fn):
            text += (
                "; decodes images one element at a time: with batch(n) right after the map, the parse, "
                "decode and resize run as one native call per batch"
            )
        return text

    def batch(
        self, batch_size: int, drop_remainder: bool = False, num_parallel_calls=None, deterministic=None
    ) -> Dataset:
        """``batch``; after maps that parse, decode and resize images, one batched native decode + resize
        (``data/_image_map.py``): the same batches, bit for bit."""
        plain = Dataset.batch(self, batch_size, drop_remainder, num_parallel_calls, deterministic)
        if type(self) is not MapDataset:
            return plain
        return fuse_image_maps(self, batch_size, drop_remainder, plain)


@transformation
def map(
    self: Dataset, map_func: Callable, num_parallel_calls: int | None = None, deterministic: bool | None = None
) -> Dataset:  # noqa: A001
    """``map_func`` applied to every element, optionally on ``num_parallel_calls`` threads."""
    return MapDataset(self, self._viewing_function(map_func), num_parallel_calls, deterministic)
