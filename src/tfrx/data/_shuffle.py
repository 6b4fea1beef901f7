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
in a native ``RecordStore`` (each copied once as the window needs it; a
reader's chunk is dropped once its last record entered), so
``shuffle(m).batch(n).parse(spec)`` never makes a Python object per record,
hands the parser each batch's records where they lie, holds memory in
proportion to the buffered records, and gives the same order (tested
against this loop). The per-element form stays a Python
loop: a native call per element costs twice its time, and drawing in blocks
would read elements ahead of the buffer, moving upstream side effects
earlier than tf.data does.

State: the seed, the epoch, the input's state at the start of the pass and
the number of elements returned. No element is stored: restoring replays the
pass from its start (reading and shuffling, not returning) up to that point,
so a restore costs one read of the part of the pass already consumed. Put
``shuffle`` before ``repeat`` so that passes, and replays, stay bounded.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from tfrx import _native
from tfrx._native import DrawStatus
from tfrx.data._batch import BatchDataset, batch_cardinality
from tfrx.io._buffers import RecycledBuffers
from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._seeds import fresh_seed, rng_for
from tfrx.data._shard import ShardDataset
from tfrx.io._batch import MultiBufferRecordBatch, RecordBatch, ScatteredRecordBatch

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
        # Reads ask for what the rest of the call needs: the buffer filled, then one record per draw after the
        # first (so a batch's records enter in one read, not one read per draw).
        lack = self.size - self.fill - (self.read_end - self.next_id) + count - 1
        if lack > 0 and not self.exhausted and self._error is None:  # (what the first native call would ask for)
            self._read(read, lack)
        while True:
            result = _native.shuffle_draws(
                self.buffer,
                self.fill,
                self._uniform,
                self._upos,
                self.next_id,
                self.read_end,
                self.exhausted,
                out[n:] if n else out,
                count - n,
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
                self._read(read, self.size - self.fill + count - n - 1)
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
    def __init__(
        self, input_dataset: Dataset, buffer_size: int, seed: int | None, reshuffle_each_iteration: bool
    ) -> None:
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


class _ShuffledRecordBatchIterator(DatasetIterator):
    """``shuffle(size).batch(batch_size)`` over record chunks.

    Each record read is copied once into the native ``RecordStore`` (its own
    allocation) when the window needs it, so the store holds at most
    ``buffer_size`` records and the memory held follows their bytes; the
    rest of the reader's piece waits in the reader's buffer, dropped once
    its last record entered. The allocations of
    records that left are reused for the next ones (up to 8 MiB of them are
    kept, shared by the dataset's passes): malloc and free of a few-KiB
    block per record cost as much as copying it. A batch moves its drawn
    records out of the store into a ``RecordSet`` without copying them: the
    parser reads them there, and a ``ScatteredRecordBatch`` gathers them
    only for a consumer that asks for ``data``.
    """

    def __init__(
        self,
        parent: DatasetIterator,
        buffer_size: int,
        seed: int,
        epoch,
        batch_size: int,
        drop_remainder: bool,
        recycler: _native.RecordStore | None = None,
    ) -> None:
        self._parent = parent
        self._recycler = recycler
        self._children = (parent,)
        self._size = buffer_size
        self._batch_size = batch_size
        self._drop = drop_remainder
        self._start = parent.get_state()
        self._reset(seed, epoch)
        self._done = False
        self._outputs = RecycledBuffers()  # gathered batches' buffers, reused once the batches are gone

    def _reset(self, seed: int, epoch) -> None:
        self._seed = int(seed)
        self._epoch = tuple(int(e) for e in epoch)
        self._draws = ShuffleDraws(self._size, self._seed, self._epoch)
        self._produced = 0
        # record number -> record, for the records read and not yet drawn; the allocations of records that
        # left (this pass's or an earlier one's) take the next records
        self._store = _native.RecordStore(self._recycler)
        self._pending: RecordBatch | None = None  # the rest of the reader's last piece, not yet in the store
        self._pending_at = 0

    def _read_chunk(self, wanted: int) -> bool:
        """Copies the next ``wanted`` records (fewer where a piece ends) into the store; False at the end.

        Only what the window lacks enters the store: the rest of the reader's
        piece waits where it was read (in the reader's current buffer, which
        the reader holds anyway) for the next call, so the store never holds
        more than the window's records.
        """
        piece, at = self._pending, self._pending_at
        if piece is None:
            while True:
                try:
                    piece = next(self._parent)
                except StopIteration:
                    return False
                if len(piece):
                    break
            at = 0
        end = min(len(piece), at + max(1, wanted))
        if end < len(piece):
            self._pending, self._pending_at = piece, end
        else:
            self._pending = None  # (the reader may reuse its buffer once nothing refers to it)
        if isinstance(piece, MultiBufferRecordBatch):  # a parallel read's records, copied from where they lie
            self._store.add_spans(piece.buffers, piece.which[at:end], piece.spans[at:end], piece.lengths[at:end])
        else:
            self._store.add(piece.data, piece.starts[at:end], piece.lengths[at:end])
        self._draws.read_end += end - at
        return True

    def _take(self, count: int):
        """The records of the next ``count`` outputs (fewer at the end), moved out of the store."""
        ids = self._draws.draw(count, self._read_chunk)
        self._produced += len(ids)
        return self._store.take(ids)

    def __next__(self) -> RecordBatch:
        if self._done:
            raise StopIteration
        records = self._take(self._batch_size)
        if len(records) < self._batch_size:
            self._done = True
        if not len(records) or (self._drop and len(records) < self._batch_size):
            raise StopIteration
        return ScatteredRecordBatch(records, gather_into=self._outputs.take)

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
            if not len(self._take(min(produced - self._produced, 1 << 16))):
                break
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
        # An empty store, for its recycler: the passes' stores share it (made again in a forked child, where
        # another thread of the parent may have held its lock).
        self._recycler: _native.RecordStore | None = None
        self._recycler_pid = 0

    @classmethod
    def over(cls, shuffle: ShuffleDataset, batch_size: int, drop_remainder: bool) -> ShuffledRecordBatchDataset | None:
        pieces = shuffle._inputs[0]._record_pieces(_CHUNK_RECORDS, _CHUNK_BYTES)
        return None if pieces is None else cls(shuffle, pieces, batch_size, drop_remainder)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        sh = self._shuffle
        if self._recycler is None or self._recycler_pid != os.getpid():
            self._recycler, self._recycler_pid = _native.RecordStore(), os.getpid()
        return _ShuffledRecordBatchIterator(
            self._pieces._iterator(ctx),
            sh._size,
            sh._seed,
            sh._epoch(ctx),
            self.batch_size,
            self.drop_remainder,
            self._recycler,
        )

    def _natively_batched(self) -> Dataset:
        return self

    def _describe(self) -> str:
        return (
            f"{self._shuffle._describe()}.batch({self.batch_size}), batch-native: the buffer holds the "
            "records in a native store, each batch handed to the parser where its records lie"
        )

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return self._shuffle._inputs

    def cardinality(self) -> int:
        return batch_cardinality(self._shuffle.cardinality(), self.batch_size, self.drop_remainder)

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        source = self._shuffle._inputs[0]
        sharded = source._shard_source(num_shards, index) or ShardDataset(source, num_shards, index)
        shuffled = self._shuffle._with_inputs((sharded,))
        return shuffled._record_batches(self.batch_size, self.drop_remainder) or BatchDataset(
            shuffled, self.batch_size, self.drop_remainder
        )


@transformation
def shuffle(self: Dataset, buffer_size: int, seed: int | None = None, reshuffle_each_iteration: bool = True) -> Dataset:
    """Randomly shuffles elements within a window of ``buffer_size``."""
    return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)
