"""The batch-native form of ``TFRecordDataset(files).shuffle(n, seed).batch(b)``, for ``parse``.

``shuffle`` followed by ``batch`` over a record source normally turns every
record into a Python ``bytes`` that passes through three iterators. Here the
records stay in the reader's :class:`tfrx.RecordBatch` es: the shuffle buffer
holds record numbers (their position in the pass), the chunks that hold them
stay alive until all their records have been emitted, and each output batch
is one ``RecordBatch`` copied out of the chunks in one native call
(``_native.gather_spans``), which the native parser reads directly.

The draws are those of ``shuffle`` (same generator, same blocks of uniform
draws, same swap-with-last removal and refill), so the batches hold exactly
the records, in the same order, that ``shuffle(...).batch(...)`` gives, and
with files read one at a time the iterator state has the same format as
``batch`` over ``shuffle``: a state saved on either path restores on the
other. With ``num_parallel_reads`` the chunks come from the interleaved
reader (``TFRecordDataset._record_batches_iterator``) in tf.data's order.
"""

from __future__ import annotations

import sys

import numpy as np

from tfrx.data.batch import BatchDataset
from tfrx.data.dataset import Dataset, DatasetIterator, IterContext
from tfrx.data.seeds import rng_for
from tfrx.data.shuffle import _DRAWS_PER_BLOCK, ShuffleDataset
from tfrx.data.tfrecord import TFRecordDataset, _FilesDataset
from tfrx.io.batch import RecordBatch

__all__ = ["ShuffledRecordBatchDataset", "shuffled_record_batches"]

# Records (at most) and bytes (about) per chunk read from a file. Each chunk is
# kept until its last record leaves the shuffle buffer, so smaller chunks hold
# less memory beyond the buffer's own records; larger ones cost fewer steps per
# record (1024 records: ~9% fewer instructions than 128 on Criteo-like rows).
_CHUNK_RECORDS = 1024
_CHUNK_BYTES = 4 << 20
# The per-record table (chunk, start, length) drops the rows of records that
# have left the buffer once it holds more than 4 x buffer_size + this many.
_COMPACT_MIN = 4096
# Output buffers are reused once nothing refers to them any more (a batch and
# everything made from it are gone): fresh large allocations cost a page fault
# per 4 KiB, more than copying the records into pages already mapped.
_SPARE_BUFFERS = 8
_EMPTY = np.zeros(0, np.uint8)  # stands in for chunks no record of a batch comes from


class _ShuffledRecordBatchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, buffer_size: int, seed: int, epoch, batch_size: int, drop_remainder: bool) -> None:
        self._parent = parent
        self._children = (parent,)
        self._size = buffer_size
        self._batch_size = batch_size
        self._drop = drop_remainder
        self._start = parent.get_state()
        self._reset(seed, epoch)
        self._done = False
        self._spare: list = []

    def _out_buffer(self, nbytes: int) -> np.ndarray:
        """A uint8 array of at least ``nbytes`` that nothing else refers to."""
        spare = self._spare
        free = None
        for k in range(len(spare)):  # (not enumerate: its reused tuple would hold a reference)
            a = spare[k]
            if sys.getrefcount(a) <= 3:  # the list, ``a`` and the call's argument
                if a.shape[0] >= nbytes:
                    return a
                free = k
        buf = np.empty(nbytes + nbytes // 4, np.uint8)
        if free is not None:
            spare[free] = buf
        elif len(spare) < _SPARE_BUFFERS:
            spare.append(buf)
        return buf

    def _reset(self, seed: int, epoch) -> None:
        self._seed = int(seed)
        self._epoch = tuple(int(e) for e in epoch)
        self._rng = rng_for(self._seed, self._epoch)
        self._uniform = np.zeros(0)  # uniform draws in [0, 1), made in blocks as ``shuffle`` makes them
        self._upos = 0
        self._buffer = np.empty(self._size, np.int64)  # record numbers in the pass, the first ``_fill`` used
        self._fill = 0
        self._next_id = 0  # the next record number to enter the buffer
        self._read_end = 0  # record numbers below this have been read
        self._exhausted = False
        self._produced = 0
        self._drawn_low = 0
        self._chunks: dict = {}  # chunk number -> [RecordBatch, records not yet emitted]
        self._nchunks = 0
        # Per record read and possibly still in the buffer, from record number ``_meta_base`` on: its
        # chunk number, start and length in the chunk's data, in the first ``_meta_len`` columns of a
        # table that grows by doubling and drops the rows of records that have left the buffer.
        self._meta_base = 0
        self._meta_len = 0
        self._meta = np.zeros((3, 4 * self._size + _COMPACT_MIN), np.int64)

    def _read_chunk(self) -> bool:
        while True:
            try:
                piece = next(self._parent)
            except StopIteration:
                return False
            if len(piece):
                break
        c = self._nchunks
        self._nchunks += 1
        self._chunks[c] = [piece, len(piece)]
        self._append_meta(c, piece)
        self._read_end += len(piece)
        return True

    def _append_meta(self, c: int, piece: RecordBatch) -> None:
        n, k = self._meta_len, len(piece)
        meta = self._meta
        if n + k > meta.shape[1]:
            # Drop the rows below the oldest record still buffered or drawn but not yet looked up
            # (``_draw_ids`` reads chunks while it draws, so the draws of this batch count too).
            low = min(int(self._buffer[: self._fill].min()) if self._fill else self._next_id, self._drawn_low)
            drop = low - self._meta_base
            keep = n - drop
            if keep + k > meta.shape[1] // 2:  # mostly live: grow
                grown = np.empty((3, 2 * (keep + k)), np.int64)
                grown[:, :keep] = meta[:, drop:n]
                self._meta = meta = grown
            else:
                meta[:, :keep] = meta[:, drop:n]
            self._meta_base, n = low, keep
        meta[0, n : n + k] = c
        meta[1, n : n + k] = piece.starts
        meta[2, n : n + k] = piece.lengths
        self._meta_len = n + k

    def _lookup(self, ids: np.ndarray) -> np.ndarray:
        """(chunk number, start, length) rows of the records ``ids``, as a 3 x len(ids) array."""
        return self._meta[:, ids - self._meta_base]

    def _draw_ids(self, count: int) -> np.ndarray:
        """The record numbers of the next ``count`` (or fewer, at the end) shuffle outputs."""
        from tfrx import _native

        out = np.empty(count, np.int64)
        n = 0
        self._drawn_low = self._next_id  # (no record drawn yet in this call is below the next to enter)
        while n < count:
            status, k, self._fill, self._upos, self._next_id = _native.shuffle_draws(
                self._buffer, self._fill, self._uniform, self._upos, self._next_id, self._read_end,
                self._exhausted, out[n:], count - n,
            )
            if k:
                self._drawn_low = min(self._drawn_low, int(out[n : n + k].min()))
            n += k
            if status == 1:
                if not self._read_chunk():
                    self._exhausted = True
            elif status == 2:
                self._uniform, self._upos = self._rng.random(_DRAWS_PER_BLOCK), 0
            elif status == 3:
                break
        self._produced += n
        return out[:n]

    def _release(self, nos: np.ndarray, counts: np.ndarray) -> None:
        chunks = self._chunks
        for c, k in zip(nos.tolist(), counts.tolist()):
            entry = chunks[c]
            entry[1] -= k
            if entry[1] == 0:
                del chunks[c]

    def __next__(self) -> RecordBatch:
        if self._done:
            raise StopIteration
        ids = self._draw_ids(self._batch_size)
        if len(ids) < self._batch_size:
            self._done = True
        if not len(ids) or (self._drop and len(ids) < self._batch_size):
            raise StopIteration
        meta = self._lookup(ids)
        first = int(meta[0].min())
        which = meta[0] - first
        counts = np.bincount(which)
        chunks = self._chunks
        datas = [chunks[c][0].data if k else _EMPTY for c, k in enumerate(counts.tolist(), first)]
        lengths = meta[2]
        from tfrx import _native

        total = int(lengths.sum())
        data = _native.gather_spans(datas, which, meta[1], lengths, self._out_buffer(total))
        assert isinstance(data, np.ndarray)  # the stub types nanobind's object returns as object
        data = data[:total]
        nos = np.flatnonzero(counts)
        self._release(nos + first, counts[nos])
        out_starts = np.zeros(len(ids), np.int64)
        if len(ids) > 1:
            np.cumsum(lengths[:-1], out=out_starts[1:])
        return RecordBatch(data, out_starts, lengths)

    def get_state(self) -> dict:
        shuffle = {"seed": self._seed, "epoch": list(self._epoch), "start": self._start, "produced": self._produced}
        return {"done": self._done, "parent": shuffle}

    def set_state(self, state: dict) -> None:
        shuffle = state["parent"]
        self._start = shuffle["start"]
        self._parent.set_state(self._start)
        self._reset(shuffle["seed"], shuffle["epoch"])
        produced = int(shuffle["produced"])
        while self._produced < produced:
            ids = self._draw_ids(min(produced - self._produced, 1 << 16))
            if not len(ids):
                break
            chunk_of = self._lookup(ids)[0]
            first = int(chunk_of.min())
            counts = np.bincount(chunk_of - first)
            nos = np.flatnonzero(counts)
            self._release(nos + first, counts[nos])
        self._done = bool(state["done"])


class ShuffledRecordBatchDataset(Dataset):
    """``RecordBatch`` es of ``source.shuffle(...).batch(batch_size)``, built without a Python object per record."""

    def __init__(self, shuffle: ShuffleDataset, batch_size: int, drop_remainder: bool) -> None:
        super().__init__()
        self._shuffle = shuffle
        self._source: TFRecordDataset = shuffle._inputs[0]  # type: ignore[assignment]  # shuffled_record_batches checks it
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        sh = self._shuffle
        epoch = ctx.epoch if sh._reshuffle else ()
        source = self._source
        if source._parallel_reads == 1:
            pieces = _FilesDataset(source._files, source._options, _CHUNK_RECORDS, _CHUNK_BYTES)._iterator(ctx)
        else:  # the files' records interleaved in tf.data's order, gathered into chunks
            pieces = source._record_batches_iterator(ctx, _CHUNK_RECORDS, False)
        return _ShuffledRecordBatchIterator(pieces, sh._size, sh._seed, epoch, self.batch_size, self.drop_remainder)

    def cardinality(self) -> int:
        return BatchDataset(self._shuffle, self.batch_size, self.drop_remainder).cardinality()

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        sharded = self._source._shard_source(num_shards, index)
        if sharded is None:  # by records: the element-wise chain over the record shard
            from tfrx.data.shard import ShardDataset

            shuffled = self._shuffle._with_inputs((ShardDataset(self._source, num_shards, index),))
            return BatchDataset(shuffled, self.batch_size, self.drop_remainder)
        return ShuffledRecordBatchDataset(self._shuffle._with_inputs((sharded,)), self.batch_size, self.drop_remainder)


def shuffled_record_batches(batch: Dataset) -> Dataset | None:
    """The batch-native form of ``batch`` when it is ``TFRecordDataset(...).shuffle(...).batch(...)``; ``None`` otherwise."""
    if type(batch) is not BatchDataset:
        return None
    shuffle = batch._inputs[0]
    if type(shuffle) is not ShuffleDataset:
        return None
    source = shuffle._inputs[0]
    if type(source) is not TFRecordDataset:
        return None
    return ShuffledRecordBatchDataset(shuffle, batch.batch_size, batch.drop_remainder)
