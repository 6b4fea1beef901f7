"""Reading ``cycle_length`` files at once in tf.data's interleave order, as record batches.

``TFRecordDataset(files, num_parallel_reads=n)`` (and with ``batch(b).parse``,
``shuffle(m).batch(b).parse``) and ``files.interleave(TFRecordDataset,
cycle_length=n)`` followed by ``batch`` read through
:class:`InterleavedBatchIterator`: each batch is planned with NumPy over
whole rounds of the open files, and its records stay in the pieces the
files' readers read them into (``MultiBufferRecordBatch``): the parser reads
them there, and they are gathered end to end only for a consumer that asks
for ``data``. The turns are those of ``interleave(cycle_length=n,
block_length=b)``, from the same planner (``interleave_plan.py``).

Where the files are read is sized by the usable cores
(:func:`read_threads`), not by the number of open files. A local file's
read is a copy out of the page cache: done on a background thread it cost
1.3-1.8x the CPU of the same read on the consumer's thread (the records
then reach the parser from another core's cache, and each piece is a
thread hand-off), so it pays only where cores are left over. With fewer
cores than that, local files are read on the consumer's thread, piece by
piece as the turns reach them (the kernel's readahead still reads the
files ahead of it), into buffers of a small pool of this module
(:data:`SLOT_BUFFERS`) that are reused once the batches viewing them are
gone: fresh buffers from malloc on the consumer's thread share its heap with
the parser's outputs, which then took a page fault per 4 KiB (image records,
~10,000 faults a pass). Remote files (URLs) are always read on threads:
they wait on the network, not on a core.
"""

from __future__ import annotations

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, usable_cores
from tfrx.data._files import FileIterator, FilesIterator, as_path, piece_options
from tfrx.data._interleave_plan import InterleavePlanner, input_at
from tfrx.data._prefetch import PrefetchIterator
from tfrx.data._unbatch import SPLIT_BATCH, split_records
from tfrx.io._batch import MultiBufferRecordBatch, RecordBatch
from tfrx.io._buffer_pool import BufferPool
from tfrx.io._paths import is_url

__all__ = [
    "InterleavedBatchIterator",
    "InterleavedRecordBatchDataset",
    "interleaved_records",
    "read_ahead",
    "read_threads",
    "SLOT_BUFFERS",
]

# With num_parallel_reads (and in files.interleave(TFRecordDataset, num_parallel_calls=...)),
# each open file is read on its own thread in pieces of up to this many records (and about
# _PARALLEL_READ_BYTES), which the consumer's side interleaves or splits: handing records over
# one at a time between threads would cost more than reading them, and each piece handed over
# costs a thread hand-off and a plan step (reading two files of ~750-byte records in batches
# of 256, unparsed, measured 0.067 s of CPU a pass with pieces of 256 records, 0.040 s with
# 4,096, against 0.026 s for one reader over both files).
_PARALLEL_READ_BATCH = 4096
_PARALLEL_READ_BYTES = 4 << 20


def read_threads(cycle_length: int) -> int:
    """How many of ``cycle_length`` open local files are read on background threads: none on two
    usable cores or fewer (the consumer and the parser's threads fill them), else up to half the
    usable cores; the others are read on the consumer's thread."""
    cores = usable_cores()
    return 0 if cores <= 2 else min(cycle_length, cores // 2)


#: The buffers every parallel read of the process reads its local files into on the consumer's thread:
#: anonymous mappings of their own, outside malloc's heaps, kept mapped while free (up to 64 MiB of them), so
#: reading into them takes no page fault once they are warm and leaves the heap to the parser's outputs.
SLOT_BUFFERS = BufferPool(mapped=True)


def read_ahead(files: Dataset, ctx: IterContext, options: dict) -> DatasetIterator:
    """The records of ``files`` read one after another, in batches a background thread reads ahead."""
    pieces = FilesIterator(files._iterator(ctx), options, _PARALLEL_READ_BATCH, _PARALLEL_READ_BYTES)
    reader = PrefetchIterator(pieces, 2, name="tfrx-read")
    reader.start()
    return split_records(reader)


def interleaved_records(files: Dataset, ctx: IterContext, options: dict, cycle_length: int) -> DatasetIterator:
    """The records of ``cycle_length`` files at a time, one by one in tf.data's interleave order."""
    return split_records(InterleavedBatchIterator(files, ctx, options, cycle_length, SPLIT_BATCH, False))


class _ReadSlot:
    """One open file of a parallel read: its reader (on a background thread or this one) and the piece
    being taken from."""

    __slots__ = ("input_state", "reader", "before", "piece", "offset", "eof")

    def __init__(self, input_state, reader: DatasetIterator) -> None:
        self.input_state = input_state  # the file names' state before this file was taken
        self.reader = reader
        self.before: dict | None = None  # the reader's state before ``piece`` was read
        self.piece: RecordBatch | None = None
        self.offset = 0  # records of ``piece`` already taken
        self.eof = False

    def fetch(self) -> None:
        """Moves on to the file's next non-empty piece, or marks the end of the file."""
        while True:
            self.before = self.reader.get_state()
            try:
                piece = next(self.reader)
            except StopIteration:
                self.piece, self.offset, self.eof = None, 0, True
                return
            if len(piece):
                self.piece, self.offset = piece, 0
                return

    def available(self) -> int:
        """Records left in the current piece (the next piece is read when it is used up); 0: the file ended."""
        if self.piece is None or self.offset == len(self.piece):
            if self.eof:
                return 0
            self.fetch()
            if self.piece is None:
                return 0
        return len(self.piece) - self.offset

    def ready(self) -> bool:
        if self.piece is not None and self.offset < len(self.piece):
            return True
        return self.reader.ready() if isinstance(self.reader, PrefetchIterator) else True  # read here: no wait

    def close(self) -> None:
        self.reader.close()


class InterleavedBatchIterator(DatasetIterator):
    """``RecordBatch`` es of ``batch_size`` records from ``cycle_length`` files at once, in tf.data's order.

    The order is ``interleave(cycle_length, block_length)``'s, record by
    record, planned by :class:`tfrx.data._interleave_plan.InterleavePlanner`
    (the planner ``Dataset.interleave`` uses too): the open files take turns,
    an empty slot is filled with the next file before it is read, and a file
    that ends empties its slot and passes the turn. Each file is read in
    pieces of ``_PARALLEL_READ_BATCH`` records, ahead on a background thread or
    on the consumer's thread as the turns reach it (:func:`read_threads`); the planner
    hands out whole runs of records per file (many rounds of turns at once
    while no file opens or ends), and a batch is a
    :class:`tfrx.io._batch.MultiBufferRecordBatch` of those runs: the records
    stay in the pieces they were read into (which the batch keeps alive), the
    parser reads them there, and they are gathered end to end only for a
    consumer that asks for ``data``. No Python object per record. A batch
    from one piece is a plain ``RecordBatch`` over that piece's buffer.

    Remote files (URLs) are also opened ahead: the next ``cycle_length``
    names are taken from the file list early and their readers start
    fetching, so that a slot whose file ends goes on without waiting for a
    size lookup and a first request.

    State: the file names' state (before the files opened ahead), the
    planner's (turn, block, end of input), and per slot the state of its file
    before the current piece plus the records taken from that piece.
    """

    def __init__(
        self,
        files: Dataset,
        ctx: IterContext,
        options: dict,
        cycle_length: int,
        batch_size: int,
        drop_remainder: bool,
        block_length: int = 1,
    ) -> None:
        self._files_ds = files
        self._ctx = ctx
        self._files = files._iterator(ctx)
        self._options = options
        self._ahead: list = []  # remote files opened ahead: (file names' state before, reader)
        self._plan = InterleavePlanner(cycle_length, block_length, self._next_slot)
        self._size = batch_size
        self._drop = drop_remainder
        self._done = False

    @property
    def _children(self):
        return (self._files, *(s.reader for s in self._plan.slots if s is not None), *(r for _, r in self._ahead))

    def _reader(self, name) -> DatasetIterator:
        """The reader of one file: on a background thread for URLs and while fewer than
        :func:`read_threads` slots have one, else on the consumer's thread."""
        path = as_path(name)
        if not is_url(path):
            threaded = sum(isinstance(s.reader, PrefetchIterator) for s in self._plan.slots if s is not None)
            if threaded >= read_threads(len(self._plan.slots)):
                return FileIterator(
                    path,
                    piece_options(self._options),
                    _PARALLEL_READ_BATCH,
                    _PARALLEL_READ_BYTES,
                    exact=True,
                    buffers=SLOT_BUFFERS,
                )
        return PrefetchIterator(
            FileIterator(path, self._options, _PARALLEL_READ_BATCH, _PARALLEL_READ_BYTES), 2, name="tfrx-read"
        )

    def _open(self, name, input_state) -> _ReadSlot:
        return _ReadSlot(input_state, self._reader(name))

    def _next_slot(self) -> _ReadSlot | None:
        """The next file of the list, opened (ahead, if it is remote); None at the end of the list."""
        if self._ahead:
            before, reader = self._ahead.pop(0)
            slot = _ReadSlot(before, reader)
        else:
            before = self._files.get_state()
            try:
                name = next(self._files)
            except StopIteration:
                return None
            slot = self._open(name, before)
            if not is_url(as_path(name)):
                return slot
        while len(self._ahead) < len(self._plan.slots):  # remote files: the next ones start fetching now
            before = self._files.get_state()
            try:
                name = next(self._files)
            except StopIteration:
                break
            reader = self._reader(name)
            if isinstance(reader, PrefetchIterator):
                reader.start()
            self._ahead.append((before, reader))
            if not is_url(as_path(name)):
                break
        return slot

    def _drop_ahead(self) -> None:
        for _, reader in self._ahead:
            reader.close()
        self._ahead = []

    def _take(self, need: int, pieces: dict, parts: list) -> int:
        """Adds up to ``need`` records in turn order to ``parts`` (one planner step); returns how many (0: the end)."""
        plan, slots = self._plan, self._plan.slots
        if plan.block_length == 1:  # the slots take turns, one record each: slot i's records at i::k
            rounds = plan.plan_rounds(need)
            if rounds is None:
                return 0
            turn, t = rounds
            runs = None
        else:
            planned = plan.plan_turns(need)
            if planned is None:
                return 0
            order, runs = planned
            t = int(runs.sum())
            turn = order.tolist()
        if len(turn) == 1:  # one run of one piece: its records as they lie
            s = slots[turn[0]]
            piece = s.piece
            ids = np.full(t, pieces.setdefault(id(piece), (len(pieces), piece))[0], np.int64)
            parts.append((ids, piece.starts[s.offset : s.offset + t], piece.lengths[s.offset : s.offset + t]))
            s.offset += t
            return t
        which, starts, lengths = np.empty(t, np.int64), np.empty(t, np.int64), np.empty(t, np.int64)
        k = len(turn)
        owner = None if runs is None else np.repeat(order, runs)
        for i, j in enumerate(turn if runs is None else dict.fromkeys(turn)):
            s = slots[j]
            piece = s.piece
            if owner is None:
                mine: slice | np.ndarray = slice(i, None, k)
                c = len(range(i, t, k))
            else:
                taken = owner == j
                c, mine = int(np.count_nonzero(taken)), taken
            which[mine] = pieces.setdefault(id(piece), (len(pieces), piece))[0]
            starts[mine] = piece.starts[s.offset : s.offset + c]
            lengths[mine] = piece.lengths[s.offset : s.offset + c]
            s.offset += c
        parts.append((which, starts, lengths))
        return t

    def __next__(self) -> RecordBatch:
        if self._done:
            raise StopIteration
        pieces: dict = {}
        parts: list = []
        need = self._size
        while need:
            got = self._take(need, pieces, parts)
            if not got:
                self._done = True
                break
            need -= got
        if not parts or (self._drop and need):
            raise StopIteration
        which, starts, lengths = (np.concatenate(a) if len(parts) > 1 else a[0] for a in zip(*parts))
        if len(pieces) == 1:  # the records of one piece, where they lie
            return RecordBatch(next(iter(pieces.values()))[1].data, starts, lengths)
        datas = [piece.data for _, piece in sorted(pieces.values(), key=lambda v: v[0])]
        return MultiBufferRecordBatch(datas, which, starts, lengths)

    def get_state(self) -> dict:
        return {
            "ctx_epoch": list(self._ctx.epoch),
            "files": self._ahead[0][0] if self._ahead else self._files.get_state(),
            **self._plan.get_state(),
            "done": self._done,
            "slots": [
                None if s is None else {"input": s.input_state, "file": s.before, "offset": s.offset}
                for s in self._plan.slots
            ],
        }

    def set_state(self, state: dict) -> None:
        for s in self._plan.slots:
            if s is not None:
                s.close()
        self._drop_ahead()
        self._ctx = self._ctx.with_epoch(state["ctx_epoch"])
        slots: list[_ReadSlot | None] = []
        for saved in state["slots"]:
            if saved is None:
                slots.append(None)
                continue
            slot = self._open(input_at(self._files_ds, self._ctx, saved["input"]), saved["input"])
            if saved["file"] is not None:
                slot.reader.set_state(saved["file"])
            slot.fetch()
            slot.offset = int(saved["offset"])
            slots.append(slot)
        self._files.set_state(state["files"])
        self._plan.set_state(state, slots)
        self._done = bool(state["done"])


class InterleavedRecordBatchDataset(Dataset):
    """The batch-native form of ``files.interleave(TFRecordDataset, cycle_length, block_length).batch(n)``:
    ``RecordBatch`` es of ``batch_size`` records in the interleave's order."""

    def __init__(
        self, files: Dataset, options: dict, cycle_length: int, block_length: int, batch_size: int, drop_remainder: bool
    ) -> None:
        super().__init__()
        self._files = files
        self._options = options
        self._cycle_length = cycle_length
        self._block_length = block_length
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return InterleavedBatchIterator(
            self._files,
            ctx,
            self._options,
            self._cycle_length,
            self.batch_size,
            self.drop_remainder,
            self._block_length,
        )

    def _natively_batched(self) -> Dataset:
        return self

    def _describe(self) -> str:
        return (
            f"batch({self.batch_size}), batch-native: interleave(TFRecordDataset, cycle_length={self._cycle_length}, "
            f"block_length={self._block_length}) in runs of records from each file"
        )

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return (self._files,)
