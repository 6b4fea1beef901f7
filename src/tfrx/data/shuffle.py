"""shuffle: a streaming window shuffle with a buffer of ``buffer_size`` elements.

The buffer is filled from the input; each output is a uniformly chosen buffer
element, whose slot is refilled from the input before the next choice. The
order is a function of ``seed`` and the epoch only (``numpy`` PCG64 seeded
from both): with ``reshuffle_each_iteration`` (the default) every pass, and
every repetition under ``repeat``, gets a new order; without it every pass
repeats the first order. ``seed=None`` draws a seed from OS entropy once,
when the dataset is built. Orders differ from TensorFlow's (a different
generator); the distribution is the same.

Each output is ``buffer[int(u * len(buffer))]`` for uniform draws ``u``
made in blocks of ``_DRAWS_PER_BLOCK``, the slot refilled by swap-with-last.
The batch-native form (below) makes the same draws on record numbers with
:class:`ShuffleDraws` (the native ``shuffle_draws``) and keeps the records
in the reader's ``RecordBatch`` es, so ``shuffle(m).batch(n).parse(spec)``
never makes a Python object per record and gives the same order (tested
against this loop). The per-element form stays a Python loop: a native call
per element costs twice its time, and drawing in blocks would read elements
ahead of the buffer, moving upstream side effects earlier than tf.data does.

State: the seed, the epoch, the input's state at the start of the pass and
the number of elements returned. No element is stored: restoring replays the
pass from its start (reading and shuffling, not returning) up to that point,
so a restore costs one read of the part of the pass already consumed. Put
``shuffle`` before ``repeat`` so that passes, and replays, stay bounded.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tfrx import _native
from tfrx._native import DrawStatus
from tfrx.data.batch import BatchDataset, batch_cardinality
from tfrx.data.buffers import RecycledBuffers
from tfrx.data.dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data.seeds import fresh_seed, rng_for
from tfrx.data.shard import ShardDataset
from tfrx.io.batch import RecordBatch, ScatteredRecordBatch

__all__ = ["ShuffleDataset", "ShuffleDraws", "ShuffledRecordBatchDataset"]

_DRAWS_PER_BLOCK = 1024


class ShuffleDraws:
    """The window shuffle on element numbers: which numbers leave the buffer, in order.

    ``read(n)`` (given to :meth:`draw`) must read up to ``n`` more elements,
    numbered from ``read_end`` on, and advance ``read_end`` past each one as
    it is stored (so an exception leaves the count right); it returns False
    at the end of the input.
    """

    def __init__(self, size: int, seed: int, epoch: tuple[int, ...]) -> None:
        self.size = size
        self._rng = rng_for(seed, epoch)
        self._uniform = np.zeros(0)  # uniform draws in [0, 1), made in blocks
        self._upos = 0
        self.buffer = np.empty(size, np.int64)  # element numbers, the first ``fill`` in use
        self.fill = 0
        self.next_id = 0  # the next element number to enter the buffer
        self.read_end = 0  # element numbers below this have been read
        self.exhausted = False
        self._error: Exception | None = None  # from reading ahead: raised when that input is needed

    def draw(self, count: int, read: Callable[[int], bool], out: np.ndarray | None = None) -> np.ndarray:
        """The numbers of the next ``count`` outputs (fewer at the end of the input).

        An exception from ``read`` (which may read ahead) is held until the
        draws need the input that failed: the call then ends with the numbers
        drawn before, and the next call raises it.
        """
        if out is None:
            out = np.empty(count, np.int64)
        n = 0
        lack = self.size - self.fill - (self.read_end - self.next_id)
        if lack > 0 and not self.exhausted and self._error is None:  # (what the first native call would ask for)
            self._read(read, lack)
        while True:
            result = _native.shuffle_draws(
                self.buffer, self.fill, self._uniform, self._upos, self.next_id, self.read_end,
                self.exhausted, out[n:] if n else out, count - n,
            )
            self.fill, self._upos, self.next_id = result.fill, result.upos, result.next_id
            n += result.written
            status = result.status
            if n >= count or status == DrawStatus.EXHAUSTED:
                return out[:n]
            if status == DrawStatus.NEED_RECORDS:
                if self._error is not None:
                    if n:
                        return out[:n]
                    error, self._error = self._error, None
                    raise error
                self._read(read, self.size - self.fill)
            elif status == DrawStatus.NEED_UNIFORMS:
                self._uniform, self._upos = self._rng.random(_DRAWS_PER_BLOCK), 0

    def _read(self, read: Callable[[int], bool], n: int) -> None:
        try:
            if not read(n):
                self.exhausted = True
        except Exception as e:  # noqa: BLE001 - raised when the draws need that input
            self._error = e

    def live(self) -> np.ndarray:
        """The numbers read and not yet drawn: in the buffer, or read and waiting to enter it."""
        return np.concatenate([self.buffer[: self.fill], np.arange(self.next_id, self.read_end, dtype=np.int64)])


class _ShuffleIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, buffer_size: int, seed: int, epoch: tuple[int, ...]) -> None:
        self._parent = parent
        self._children = (parent,)
        self._size = buffer_size
        self._start = parent.get_state()
        self._reset(seed, epoch)

    def _reset(self, seed: int, epoch) -> None:
        self._seed = int(seed)
        self._epoch = tuple(int(e) for e in epoch)
        self._rng = rng_for(self._seed, self._epoch)
        self._uniform = iter(())  # random draws in [0, 1), made in blocks: one call per element is slow
        self._buffer: list = []
        self._exhausted = False
        self._produced = 0

    def __next__(self):
        buffer = self._buffer
        while not self._exhausted and len(buffer) < self._size:
            try:
                buffer.append(next(self._parent))
            except StopIteration:
                self._exhausted = True
        if not buffer:
            raise StopIteration
        try:
            u = next(self._uniform)
        except StopIteration:
            self._uniform = iter(self._rng.random(_DRAWS_PER_BLOCK).tolist())
            u = next(self._uniform)
        i = int(u * len(buffer))
        value = buffer[i]
        buffer[i] = buffer[-1]
        buffer.pop()
        self._produced += 1
        return value

    def get_state(self) -> dict:
        return {"seed": self._seed, "epoch": list(self._epoch), "start": self._start, "produced": self._produced}

    def set_state(self, state: dict) -> None:
        self._start = state["start"]
        self._parent.set_state(self._start)
        self._reset(state["seed"], state["epoch"])
        for _ in range(int(state["produced"])):
            next(self)


class ShuffleDataset(Dataset):
    def __init__(self, input_dataset: Dataset, buffer_size: int, seed: int | None, reshuffle_each_iteration: bool) -> None:
        if not isinstance(buffer_size, int) or buffer_size < 1:
            raise ValueError(f"shuffle: buffer_size must be a positive int, got {buffer_size!r}")
        super().__init__(input_dataset)
        self._size = buffer_size
        self._seed = fresh_seed() if seed is None else int(seed)
        self._reshuffle = bool(reshuffle_each_iteration)

    def _epoch(self, ctx: IterContext) -> tuple[int, ...]:
        return ctx.epoch if self._reshuffle else ()

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _ShuffleIterator(self._inputs[0]._iterator(ctx), self._size, self._seed, self._epoch(ctx))

    def _record_batches(self, batch_size: int, drop_remainder: bool) -> Dataset | None:
        return ShuffledRecordBatchDataset.over(self, batch_size, drop_remainder)

    def _why_not_record_batches(self) -> str:
        return f"shuffle over: {self._inputs[0]._why_not_record_batches()}"

    def _describe(self) -> str:
        return f"shuffle({self._size}, seed={self._seed})"

    def cardinality(self) -> int:
        return self._inputs[0].cardinality()


# ------------------------------------------------------------------ the batch-native form
# Records (at most) and bytes (about) per chunk read from the files. Larger chunks cost fewer steps
# per record (1024 records: ~9% fewer instructions than 128 on Criteo-like rows).
_CHUNK_RECORDS = 1024
_CHUNK_BYTES = 4 << 20
# The per-record table (storage, start, length) drops the rows of records that have left the buffer
# once it holds more than 4 x buffer_size + this many.
_COMPACT_MIN = 4096
# A storage (a reader buffer, or survivors copied together) lives until its last record leaves the
# buffer, which with uniform draws takes several times as long as the buffer's turnover. Once the
# storages held exceed _HELD_RATIO x the bytes of the records still buffered (plus _SLACK_BYTES),
# the survivors of the emptiest storages are copied into one fresh array, down to _TARGET_RATIO.
_HELD_RATIO = 1.5
_TARGET_RATIO = 1.2
_SLACK_BYTES = 8 << 20
_EMPTY_DATA = np.zeros(0, np.uint8)  # stands in for storages no record of a gather comes from


def _storage_of(data: np.ndarray) -> tuple[np.ndarray, int]:
    """The array that owns ``data``'s memory (a reader buffer several chunks may view) and ``data``'s offset in it."""
    base = data.base
    if isinstance(base, np.ndarray) and base.dtype == np.uint8 and base.ndim == 1 and base.flags.c_contiguous:
        offset = data.ctypes.data - base.ctypes.data
        if 0 <= offset and offset + data.shape[0] <= base.shape[0]:
            return base, offset
    return data, 0


class _ShuffledRecordBatchIterator(DatasetIterator):
    """``shuffle(size).batch(batch_size)`` over record chunks, gathering each batch into one ``RecordBatch``."""

    def __init__(self, parent: DatasetIterator, buffer_size: int, seed: int, epoch, batch_size: int,
                 drop_remainder: bool) -> None:
        self._parent = parent
        self._children = (parent,)
        self._size = buffer_size
        self._batch_size = batch_size
        self._drop = drop_remainder
        self._start = parent.get_state()
        self._reset(seed, epoch)
        self._done = False
        self._outputs = RecycledBuffers()  # the batches' buffers, reused once the batches are gone

    def _reset(self, seed: int, epoch) -> None:
        self._seed = int(seed)
        self._epoch = tuple(int(e) for e in epoch)
        self._draws = ShuffleDraws(self._size, self._seed, self._epoch)
        self._produced = 0
        self._drawn_low = 0  # the lowest record number buffered when the current draw began
        # Storage number -> [uint8 array, records in it not yet drawn, their bytes]; keyed by the array too.
        self._storages: dict[int, list] = {}
        self._by_array: dict[int, int] = {}
        self._nstorages = 0
        self._newest = -1  # the storage the reader may still be filling: never compacted
        self._held = 0  # bytes of the storages
        self._live = 0  # bytes of the records read and not yet drawn
        # Per record read and possibly still buffered, from record number ``_meta_base`` on: its storage,
        # start and length, in the first ``_meta_len`` columns of a table that grows by doubling and
        # drops the rows of records that have left the buffer.
        self._meta_base = 0
        self._meta_len = 0
        self._meta = np.zeros((3, 4 * self._size + _COMPACT_MIN), np.int64)

    # -------------------------------------------------------------- storages
    def _add_storage(self, data: np.ndarray) -> int:
        s = self._nstorages
        self._nstorages += 1
        self._storages[s] = [data, 0, 0]
        self._by_array[id(data)] = s
        self._held += data.nbytes
        return s

    def _drop_storage(self, s: int) -> None:
        data = self._storages.pop(s)[0]
        del self._by_array[id(data)]
        self._held -= data.nbytes

    def _read_chunk(self, _wanted: int) -> bool:
        while True:
            try:
                piece = next(self._parent)
            except StopIteration:
                return False
            if len(piece):
                break
        data, offset = _storage_of(piece.data)
        s = self._by_array.get(id(data))
        if s is None:
            s = self._add_storage(data)
        entry = self._storages[s]
        nbytes = int(piece.lengths.sum())
        entry[1] += len(piece)
        entry[2] += nbytes
        self._live += nbytes
        self._newest = s
        self._append_meta(s, piece.starts + offset, piece.lengths)
        self._draws.read_end += len(piece)
        return True

    def _append_meta(self, s: int, starts: np.ndarray, lengths: np.ndarray) -> None:
        n, k = self._meta_len, len(starts)
        meta = self._meta
        if n + k > meta.shape[1]:
            # Drop the rows below the oldest record still buffered or drawn but not yet looked up
            # (``draw`` reads chunks while it draws, so the draws of this batch count too).
            draws = self._draws
            low = min(int(draws.buffer[: draws.fill].min()) if draws.fill else draws.next_id, self._drawn_low)
            drop = low - self._meta_base
            keep = n - drop
            if keep + k > meta.shape[1] // 2:  # mostly live: grow
                grown = np.empty((3, 2 * (keep + k)), np.int64)
                grown[:, :keep] = meta[:, drop:n]
                self._meta = meta = grown
            else:
                meta[:, :keep] = meta[:, drop:n]
            self._meta_base, n = low, keep
        meta[0, n : n + k] = s
        meta[1, n : n + k] = starts
        meta[2, n : n + k] = lengths
        self._meta_len = n + k

    def _draw(self, count: int) -> np.ndarray:
        """The record numbers of the next ``count`` outputs (fewer at the end)."""
        draws = self._draws  # no record this call draws lies below the lowest one buffered now
        self._drawn_low = int(draws.buffer[: draws.fill].min()) if draws.fill else draws.next_id
        ids = draws.draw(count, self._read_chunk, np.empty(count, np.int64))
        self._produced += len(ids)
        return ids

    def _buffers(self, rows: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
        """The storages the records of ``rows`` (storage, start, length) lie in, each record's index in that
        list, and how many records come from each (storages between them that none comes from stand in empty)."""
        first = int(rows[0].min())
        which = rows[0] - first
        counts = np.bincount(which)
        storages = self._storages
        buffers = [storages[s][0] if k else _EMPTY_DATA for s, k in enumerate(counts.tolist(), first)]
        return buffers, which, counts

    def _gather(self, rows: np.ndarray) -> np.ndarray:
        """The records of ``rows`` (storage, start, length) end to end, in a new array."""
        buffers, which, _ = self._buffers(rows)
        gathered: np.ndarray = _native.gather_spans(buffers, which, rows[1], rows[2], None)  # type: ignore[assignment]  # the stub says object
        return gathered

    def _release(self, rows: np.ndarray, which: np.ndarray, counts: np.ndarray) -> None:
        """The records of ``rows`` left the buffer: storages whose last record left are dropped."""
        first = int(rows[0, 0]) - int(which[0])
        nbytes = np.bincount(which, weights=rows[2])
        self._live -= int(rows[2].sum())
        storages = self._storages
        for j in np.flatnonzero(counts).tolist():
            entry = storages[first + j]
            entry[1] -= int(counts[j])
            entry[2] -= int(nbytes[j])
            if entry[1] == 0:
                self._drop_storage(first + j)
        # (Once the input is exhausted nothing more is read: memory only falls, compacting cannot lower the peak.)
        if self._held > _HELD_RATIO * self._live + _SLACK_BYTES and not self._draws.exhausted:
            self._compact()

    def _compact(self) -> None:
        """Copies the buffered records of the emptiest storages into one new array and drops those storages."""
        target = _TARGET_RATIO * self._live + _SLACK_BYTES // 2
        held, chosen = self._held, []
        emptiest = sorted((entry[2] / max(1, entry[0].nbytes), s) for s, entry in self._storages.items() if s != self._newest)
        for _, s in emptiest:
            if held <= target:
                break
            entry = self._storages[s]
            held += entry[2] - entry[0].nbytes  # the survivors move into the new array
            chosen.append(s)
        if not chosen:
            return
        ids = self._draws.live()
        cols = ids - self._meta_base
        rows = self._meta[:, cols]
        moving = np.isin(rows[0], np.asarray(chosen, np.int64))
        cols, rows = cols[moving], rows[:, moving]
        if len(cols):
            data = self._gather(rows)
            starts = np.zeros(len(cols), np.int64)
            np.cumsum(rows[2][:-1], out=starts[1:])
            t = self._add_storage(data)
            self._storages[t][1:] = [len(cols), int(rows[2].sum())]
            self._meta[0, cols] = t
            self._meta[1, cols] = starts
        for s in chosen:
            self._drop_storage(s)

    # -------------------------------------------------------------- iteration
    def __next__(self) -> RecordBatch:
        if self._done:
            raise StopIteration
        ids = self._draw(self._batch_size)
        if len(ids) < self._batch_size:
            self._done = True
        if not len(ids) or (self._drop and len(ids) < self._batch_size):
            raise StopIteration
        rows = self._meta[:, ids - self._meta_base]
        buffers, which, counts = self._buffers(rows)
        batch = ScatteredRecordBatch(buffers, which, rows[1], rows[2], gather_into=self._outputs.take)
        self._release(rows, which, counts)
        return batch

    def get_state(self) -> dict:
        shuffle = {"seed": self._seed, "epoch": list(self._epoch), "start": self._start, "produced": self._produced}
        return {"done": self._done, "parent": shuffle}

    def provenance(self, state: dict):
        return None  # (the records of a shuffled batch come from anywhere in the window)

    def set_state(self, state: dict) -> None:
        shuffle = state["parent"]
        self._start = shuffle["start"]
        self._parent.set_state(self._start)
        self._reset(shuffle["seed"], shuffle["epoch"])
        produced = int(shuffle["produced"])
        while self._produced < produced:
            ids = self._draw(min(produced - self._produced, 1 << 16))
            if not len(ids):
                break
            rows = self._meta[:, ids - self._meta_base]
            _, which, counts = self._buffers(rows)
            self._release(rows, which, counts)
        self._done = bool(state["done"])


class ShuffledRecordBatchDataset(Dataset):
    """``RecordBatch`` es of ``shuffle(...).batch(batch_size)`` over records, without a Python object per record.

    The draws are :class:`ShuffleDraws`', as in ``shuffle``, so the batches
    hold exactly the records, in the same order, that ``shuffle(...).batch(...)``
    gives; where the input's chunks and records have the same iterator state
    (files read one at a time), a state saved on either path restores on the
    other.
    """

    def __init__(self, shuffle: ShuffleDataset, pieces: Dataset, batch_size: int, drop_remainder: bool) -> None:
        super().__init__()
        self._shuffle = shuffle
        self._pieces = pieces
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    @classmethod
    def over(cls, shuffle: ShuffleDataset, batch_size: int, drop_remainder: bool) -> ShuffledRecordBatchDataset | None:
        pieces = shuffle._inputs[0]._record_pieces(_CHUNK_RECORDS, _CHUNK_BYTES)
        return None if pieces is None else cls(shuffle, pieces, batch_size, drop_remainder)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        sh = self._shuffle
        return _ShuffledRecordBatchIterator(self._pieces._iterator(ctx), sh._size, sh._seed, sh._epoch(ctx),
                                            self.batch_size, self.drop_remainder)

    def _natively_batched(self) -> Dataset:
        return self

    def _describe(self) -> str:
        return (f"{self._shuffle._describe()}.batch({self.batch_size}), batch-native: the buffer holds record "
                "numbers into the reader's RecordBatch es, each batch gathered in one native call")

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return self._shuffle._inputs

    def cardinality(self) -> int:
        return batch_cardinality(self._shuffle.cardinality(), self.batch_size, self.drop_remainder)

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        source = self._shuffle._inputs[0]
        sharded = source._shard_source(num_shards, index) or ShardDataset(source, num_shards, index)
        shuffled = self._shuffle._with_inputs((sharded,))
        return shuffled._record_batches(self.batch_size, self.drop_remainder) or BatchDataset(
            shuffled, self.batch_size, self.drop_remainder)


@transformation
def shuffle(self: Dataset, buffer_size: int, seed: int | None = None, reshuffle_each_iteration: bool = True) -> Dataset:
    """Randomly shuffles elements within a window of ``buffer_size``."""
    return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)
