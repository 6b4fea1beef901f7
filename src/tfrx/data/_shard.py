"""shard: every ``num_shards``-th element, starting at ``index`` (``tf.data.Dataset.shard``).

Over a ``TFRecordDataset`` (files read one after another) the source itself
reads the shard (:meth:`Dataset._strided_record_pieces`): a strided
:class:`tfrx.RecordReader` keeps records ``i, i + n, ...`` and steps over the
others on their lengths, without computing their data CRCs, and in local
uncompressed files of large records reads only their headers, so each of
``n`` shards pays for its own records (``RecordReader(stride=...)``). The
records and their order are those of the per-record shard; the
iterator state is the reader's (file, offset, records to skip). Nested
shards (DDP ranks, then DataLoader workers: ``shard_pipeline``) are one
stride: ``shard(n, i).shard(m, j)`` keeps records ``i + n*j, i + n*j + n*m, ...``.
Damage in a record another shard keeps is not seen by this one (its data
CRC is not computed here); under ``on_error="raise"`` the shard that keeps
it raises, where ``tf.data``, which reads every record in every shard,
raises in all of them. A damaged header (length CRC) raises in every shard.

Over other record sources (``num_parallel_reads``, an interleave) the shard
is batch-native as well: ``shard(n, i).batch(b)`` (and a ``shuffle`` above
the shard) takes the input's record pieces (:meth:`Dataset._record_pieces`)
and keeps every ``n``-th record of each as a strided view of the piece
(:class:`tfrx.RecordBatch` slicing; ``index_step`` keeps each record's index
in its file), no Python object per record and no copy; a batch that spans
pieces is a :class:`tfrx.io._batch.MultiBufferRecordBatch` of them. The
records, their order and the iterator state are the per-record shard's: its
state is the input's plus the input elements seen.
"""

from __future__ import annotations

from tfrx.data._batch import batch_cardinality
from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._rebatch import record_rebatcher
from tfrx.data._unbatch import SPLIT_BATCH, split_records
from tfrx.io._batch import MultiBufferRecordBatch

__all__ = ["ShardDataset"]

# The record pieces a batch-native shard(n, i).batch(b) reads: n * b records (one batch of the
# shard's) of at most this many payload bytes.
_PIECE_BYTES = 4 << 20


class _ShardIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, num_shards: int, index: int) -> None:
        self._parent = parent
        self._children = (parent,)
        self._n = num_shards
        self._index = index
        self._seen = 0  # parent elements consumed

    def __next__(self):
        while True:
            value = next(self._parent)
            pos = self._seen
            self._seen += 1
            if pos % self._n == self._index:
                return value

    def get_state(self) -> dict:
        return {"seen": self._seen, "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._seen = int(state["seen"])


class _ShardPiecesIterator(_ShardIterator):
    """The shard's records of each ``RecordBatch`` piece of ``parent``, as a strided view of the piece.

    State: the per-record shard's (``seen`` counts the input's records).
    """

    def __next__(self):
        while True:
            piece = next(self._parent)
            first = (self._index - self._seen) % self._n
            self._seen += len(piece)
            if first < len(piece):
                return piece[first :: self._n]


class _ShardPiecesDataset(Dataset):
    """The record pieces of ``shard(num_shards, index)`` over a dataset of record pieces."""

    def __init__(self, pieces: Dataset, num_shards: int, index: int) -> None:
        super().__init__()
        self._pieces = pieces
        self._num_shards = num_shards
        self._index = index

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _ShardPiecesIterator(self._pieces._iterator(ctx), self._num_shards, self._index)

    def _natively_batched(self) -> Dataset:
        return self

    def _describe(self) -> str:
        n, i = self._num_shards, self._index
        return f"shard({n}, {i}), batch-native: records {i}, {i}+{n}, ... of its input, strided views of each piece"

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return (self._pieces,)


class _ShardRecordBatchDataset(Dataset):
    """``shard(num_shards, index).batch(batch_size)`` over records read from files, batch-native:
    ``pieces`` holds the shard's records (strided views, or a strided reader's batches)."""

    def __init__(self, shard: ShardDataset, pieces: Dataset, batch_size: int, drop_remainder: bool) -> None:
        super().__init__()
        self._shard = shard
        self._pieces = pieces
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        pieces = self._pieces._iterator(ctx)
        return record_rebatcher(pieces, self.batch_size, self.drop_remainder, MultiBufferRecordBatch.join)

    def _natively_batched(self) -> Dataset:
        return self

    def _describe(self) -> str:
        return (
            f"batch({self.batch_size}), batch-native: the shard's records where the reader put them "
            "(a batch spanning pieces is read from each)"
        )

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return (self._pieces,)

    def cardinality(self) -> int:
        return batch_cardinality(self._shard.cardinality(), self.batch_size, self.drop_remainder)


class ShardDataset(Dataset):
    def __init__(self, input_dataset: Dataset, num_shards: int, index: int) -> None:
        if not isinstance(num_shards, int) or num_shards < 1:
            raise ValueError(f"shard: num_shards must be a positive int, got {num_shards!r}")
        if not isinstance(index, int) or not 0 <= index < num_shards:
            raise ValueError(f"shard: index must be in [0, {num_shards}), got {index!r}")
        super().__init__(input_dataset)
        self._num_shards = num_shards
        self._index = index

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        strided = self._strided_record_pieces(1, 0, SPLIT_BATCH, _PIECE_BYTES)
        if strided is not None:  # read by a strided reader, split into records
            return split_records(strided._iterator(ctx))
        return _ShardIterator(self._inputs[0]._iterator(ctx), self._num_shards, self._index)

    def _record_batches(self, batch_size: int, drop_remainder: bool) -> Dataset | None:
        pieces = self._strided_record_pieces(1, 0, batch_size, None)
        if pieces is None:
            pieces = self._inputs[0]._record_pieces(self._num_shards * batch_size, _PIECE_BYTES)
            if pieces is None:
                return None
            pieces = _ShardPiecesDataset(pieces, self._num_shards, self._index)
        return _ShardRecordBatchDataset(self, pieces, batch_size, drop_remainder)

    def _record_pieces(self, max_records: int, max_bytes: int) -> Dataset | None:
        strided = self._strided_record_pieces(1, 0, max_records, max_bytes)
        if strided is not None:
            return strided
        n = self._num_shards
        pieces = self._inputs[0]._record_pieces(n * max_records, n * max_bytes)
        return None if pieces is None else _ShardPiecesDataset(pieces, n, self._index)

    def _strided_record_pieces(
        self, num_shards: int, index: int, max_records: int, max_bytes: int | None
    ) -> Dataset | None:
        # shard(n, i).shard(m, j) keeps elements i + n*j, i + n*j + n*m, ... of the input: one stride.
        n = self._num_shards
        return self._inputs[0]._strided_record_pieces(n * num_shards, self._index + n * index, max_records, max_bytes)

    def _why_not_record_batches(self) -> str:
        # A shard passes its input's elements through: it is batch-native where they are records read from files.
        return self._inputs[0]._why_not_record_batches()

    def _natively_batched(self) -> Dataset | None:
        """Over batches of records (a pipeline sharded by whole batches), a shard of the batch-native batches."""
        native = self._inputs[0]._natively_batched()
        if native is None:
            return None
        return self if native is self._inputs[0] else ShardDataset(native, self._num_shards, self._index)

    def _describe(self) -> str:
        return f"shard({self._num_shards}, {self._index})"

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        if n < 0:
            return n
        return n // self._num_shards + (1 if n % self._num_shards > self._index else 0)


@transformation
def shard(self: Dataset, num_shards: int, index: int) -> Dataset:
    """Keeps elements ``index, index + num_shards, ...`` of this dataset."""
    return ShardDataset(self, num_shards, index)


def shard_pipeline(dataset: Dataset, levels: list[tuple[int, int]]) -> Dataset:
    """``dataset`` with each source restricted to nested shards ``[(num_shards, index), ...]``.

    Used for DDP ranks and DataLoader workers: the first level splits the
    data between ranks, the next splits each rank's part between workers.
    Every source decides how to split (a TFRecordDataset by files when there
    are enough, else by records); once a level splits element-wise, the
    levels below it do too, so the shards always partition the data.
    """
    levels = [(n, i) for n, i in levels if n > 1]
    if not levels:
        return dataset

    key = "-".join(f"{i}of{n}" for n, i in levels)

    def split(stage: Dataset) -> Dataset:
        if stage._inputs:
            return stage._for_shard(key)
        for n, i in levels:
            whole = stage._shard_source(n, i)
            stage = whole if whole is not None else ShardDataset(stage, n, i)
        return stage

    return dataset._rewrite(split)
