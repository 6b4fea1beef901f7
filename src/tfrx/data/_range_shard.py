"""More worker processes than files: each worker reads record ranges of the files, batch-native.

Split between more shards than it has files, a ``TFRecordDataset`` shards by
record: every shard reads every file (all of its bytes, both CRCs) and keeps
one record in ``n``, and the pipeline leaves the batch-native path. With
tfrx's own workers (``to_torch(num_workers=k)``) the files are instead cut
with :func:`tfrx.io.plan_ranges` (by an index's record offsets when the
file has one, else by byte ranges that :func:`tfrx.io.ranges.record_boundary`
moves to the next record) and the ranges are dealt out as contiguous groups
of about equal bytes, one group per shard: each worker reads only its own
bytes, in whole batches (``RecordReader.read_batch(exact=True)``, joined
where a batch spans two ranges), so 16 workers read no more than 8 do.

Every record is in exactly one range (each boundary is found the same way
by both workers that share it), so the shards still partition the data. A
worker's iterator state is the range it reads and the reader's position in
it, so ``state_dict()`` resumes exactly. Files that are too small to be cut
(below :data:`MIN_SPLIT_BYTES` each piece), compressed files without a
checkpoint index, and file lists that are shuffled per epoch keep the
record-level sharding.
"""

from __future__ import annotations

from typing import Any

from tfrx.data._tfrecord import TFRecordDataset
from tfrx.data._dataset import UNKNOWN_CARDINALITY, Dataset, DatasetIterator, IterContext
from tfrx.data._files import as_path, open_reader
from tfrx.data._rebatch import record_rebatcher
from tfrx.data._unbatch import SPLIT_BATCH, split_records
from tfrx.data._shard import shard_pipeline
from tfrx.data._shuffle import ShuffledRecordBatchDataset
from tfrx.data._sources import ListFilesDataset
from tfrx.data._tfrecord import RecordBatchDataset
from tfrx.io._positions import RecordPosition
from tfrx.io._reader import RecordReader
from tfrx.io.ranges import RecordRange, plan_ranges, record_bounds

__all__ = ["MIN_SPLIT_BYTES", "RangeRecordsDataset", "range_shard_pipeline", "shard_ranges"]

#: The least bytes of a range: smaller files are not cut (a range costs a reader's open and a boundary search).
MIN_SPLIT_BYTES = 1 << 20


def _nested_shard(levels: list[tuple[int, int]]) -> tuple[int, int]:
    """(shards, index) of the innermost shard of nested levels ``[(num_shards, index), ...]``."""
    total, index = 1, 0
    for n, i in levels:
        total, index = total * n, index * n + i
    return total, index


def shard_ranges(ranges: list[RecordRange], num_shards: int) -> list[list[RecordRange]]:
    """The ranges dealt out in order as ``num_shards`` contiguous groups of about equal bytes: a range
    goes to the group its middle byte falls in (a group may be empty when ranges are few)."""
    groups: list[list[RecordRange]] = [[] for _ in range(num_shards)]
    total = sum(max(r.nbytes, 1) for r in ranges)
    done = 0
    for r in ranges:
        size = max(r.nbytes, 1)
        middle = done + size / 2
        groups[min(num_shards - 1, int(middle * num_shards / total))].append(r)
        done += size
    return groups


def _range_source(stage: TFRecordDataset, num_shards: int, index: int) -> RangeRecordsDataset | None:
    """``stage``'s shard ``index`` of ``num_shards`` as record ranges, or None where it keeps today's sharding."""
    files = stage.files
    if not isinstance(files, ListFilesDataset) or files._shuffle or files.cardinality() >= num_shards:
        return None  # (enough files: they are dealt out whole; shuffled names: no fixed list to cut)
    options = stage._options
    paths = [as_path(f) for f in files.files]
    if not paths:
        return None
    ranges = plan_ranges(
        paths, num_ranges=num_shards, compression=options["compression"], min_split_bytes=MIN_SPLIT_BYTES
    )
    if len(ranges) < num_shards:
        return None  # too small to give every shard a range
    return RangeRecordsDataset(shard_ranges(ranges, num_shards)[index], options)


def range_shard_pipeline(dataset: Dataset, levels: list[tuple[int, int]]) -> Dataset:
    """``shard_pipeline(dataset, levels)``, with each ``TFRecordDataset`` that has fewer files than shards
    read as this shard's record ranges (see the module's notes) instead of one record in ``n`` of all."""
    total, index = _nested_shard([(n, i) for n, i in levels if n > 1])
    if total > 1:

        def split(stage: Dataset) -> Dataset:
            if isinstance(stage, TFRecordDataset):
                ranged = _range_source(stage, total, index)
                return stage if ranged is None else ranged
            if (
                isinstance(stage, RecordBatchDataset)
                and isinstance(stage._source, TFRecordDataset)
                and getattr(stage, "_stride", None) is None  # (a user's shard(n, i) read strided: left as it is)
            ):
                # (what batch(n) of a TFRecordDataset becomes: the same batches, of the ranges)
                ranged = _range_source(stage._source, total, index)
                if ranged is not None:
                    if stage._max_bytes is not None:
                        return ranged._record_pieces(stage.batch_size, stage._max_bytes)
                    return ranged._record_batches(stage.batch_size, stage.drop_remainder)
            if isinstance(stage, ShuffledRecordBatchDataset) and isinstance(stage._shuffle._inputs[0], TFRecordDataset):
                # (shuffle(...).batch(n) of a TFRecordDataset: the same shuffle over the ranges' records)
                ranged = _range_source(stage._shuffle._inputs[0], total, index)
                if ranged is not None:
                    shuffled = stage._shuffle._with_inputs((ranged,))
                    batches = shuffled._record_batches(stage.batch_size, stage.drop_remainder)
                    return stage if batches is None else batches
            return stage

        dataset = dataset._rewrite_sources(split)
    return shard_pipeline(dataset, levels)


class _RangeReader:
    """A cursor over a list of ranges: the range being read, and a reader at a position in it."""

    def __init__(self, ranges: list[RecordRange], options: dict) -> None:
        self._ranges = ranges
        self._options = options
        self.range = 0
        self._start: RecordPosition | None = None  # where to open range `range` (None: its beginning)
        self._reader: RecordReader | None = None

    def _open(self) -> RecordReader | None:
        while self.range < len(self._ranges):
            piece = self._ranges[self.range]
            bounds = record_bounds(piece)  # byte positions are moved to the record boundary at or after each
            if bounds is None:
                self.range += 1
                continue
            start, end = bounds
            at = self._start or RecordPosition(0, start, piece.first_index)
            self._reader = open_reader(
                piece.source, offset=at.offset, record=at.record_index, end_offset=end, **self._options
            )
            return self._reader
        return None

    def read(self, max_records: int | None, max_bytes: int | None, exact: bool) -> Any:
        """The next batch of records (never spanning two ranges), or None after the last range."""
        while True:
            reader = self._reader or self._open()
            if reader is None:
                return None
            batch = reader.read_batch(max_records, max_bytes, exact=exact)
            if batch is not None:
                return batch
            self.close()
            self.range += 1
            self._start = None

    def state(self) -> dict:
        position = self._reader.position if self._reader is not None else self._start
        return {"range": self.range, "position": None if position is None else position.to_dict()}

    def seek(self, state: dict) -> None:
        self.close()
        self.range = int(state["range"])
        position = state["position"]
        self._start = None if position is None else RecordPosition.from_dict(position)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class _RangePiecesIterator(DatasetIterator):
    """The ranges' records as ``RecordBatch`` es of at most ``max_records`` (exactly that many where a
    range does not end first), or of about ``max_bytes``."""

    def __init__(self, ranges: list[RecordRange], options: dict, max_records: int, max_bytes: int | None) -> None:
        self._cursor = _RangeReader(ranges, options)
        self._max_records, self._max_bytes = max_records, max_bytes

    def __next__(self) -> Any:
        batch = self._cursor.read(self._max_records, self._max_bytes, self._max_bytes is None)
        if batch is None:
            raise StopIteration
        return batch

    def get_state(self) -> dict:
        return self._cursor.state()

    def set_state(self, state: dict) -> None:
        self._cursor.seek(state)

    def close(self) -> None:
        self._cursor.close()


class RangeRecordsDataset(Dataset):
    """The records of a list of :class:`tfrx.io.RecordRange` s, in order: one shard of a ``TFRecordDataset``.

    ``options``: the dataset's reader options (compression, on_error,
    buffer_size, storage_options). It is already one shard's data, so it
    is not split again.
    """

    def __init__(self, ranges: list[RecordRange], options: dict) -> None:
        super().__init__()
        self.ranges = list(ranges)
        self._options = options

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return split_records(_RangePiecesIterator(self.ranges, self._options, SPLIT_BATCH, None))

    def _record_batches(self, batch_size: int, drop_remainder: bool) -> Dataset:
        return _RangeBatchesDataset(self, batch_size, drop_remainder, None)

    def _record_pieces(self, max_records: int, max_bytes: int) -> Dataset:
        return _RangeBatchesDataset(self, max_records, False, max_bytes)

    def _shard_source(self, num_shards: int, index: int) -> Dataset:
        return self

    def cardinality(self) -> int:
        return 0 if not self.ranges else UNKNOWN_CARDINALITY

    def _describe(self) -> str:
        files = len({str(r.source) for r in self.ranges})
        return f"record ranges ({len(self.ranges)} ranges of {files} files: this shard's part)"


class _RangeBatchesDataset(Dataset):
    def __init__(self, source: RangeRecordsDataset, batch_size: int, drop_remainder: bool, max_bytes: int | None):
        super().__init__()
        self._source = source
        self.batch_size, self.drop_remainder, self._max_bytes = batch_size, drop_remainder, max_bytes

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        pieces = _RangePiecesIterator(self._source.ranges, self._source._options, self.batch_size, self._max_bytes)
        if self._max_bytes is not None:
            return pieces
        return record_rebatcher(pieces, self.batch_size, self.drop_remainder)

    def _natively_batched(self) -> Dataset:
        return self

    def _shard_source(self, num_shards: int, index: int) -> Dataset:
        return self

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return (self._source,)

    def _describe(self) -> str:
        if self._max_bytes is not None:
            return f"record chunks of up to {self.batch_size} records / {self._max_bytes >> 20} MiB, from ranges"
        return f"batch({self.batch_size}), batch-native: RecordBatch es read whole from this shard's record ranges"
