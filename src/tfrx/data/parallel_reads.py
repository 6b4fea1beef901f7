"""Reading ``cycle_length`` files at once in tf.data's interleave order, as record batches.

``TFRecordDataset(files, num_parallel_reads=n)`` (and with ``batch(b).parse``,
``shuffle(m).batch(b).parse``) reads through :class:`InterleavedBatchIterator`:
each open file is read ahead on its own thread (:class:`tfrx.data.files.FileIterator`
in a prefetch), and each batch is planned with NumPy over whole rounds of
the open files and gathered in one native call. The turn rule is
``interleave``'s (``tfrx/data/interleave.py``) with ``block_length=1``.
"""

from __future__ import annotations

import numpy as np

from tfrx import _native
from tfrx.data.dataset import Dataset, DatasetIterator, IterContext
from tfrx.data.files import FileIterator, FilesIterator, as_path
from tfrx.data.prefetch import PrefetchIterator
from tfrx.data.unbatch import split_records
from tfrx.io.batch import RecordBatch
from tfrx.io.paths import is_url

__all__ = ["InterleavedBatchIterator", "interleaved_records", "read_ahead"]

# With num_parallel_reads (and in files.interleave(TFRecordDataset, num_parallel_calls=...)),
# each open file is read on its own thread in batches of this many records, which
# the consumer's side interleaves or splits: handing records over one at a time
# between threads would cost more than reading them.
_PARALLEL_READ_BATCH = 256


def read_ahead(files: Dataset, ctx: IterContext, options: dict) -> DatasetIterator:
    """The records of ``files`` read one after another, in batches a background thread reads ahead."""
    reader = PrefetchIterator(FilesIterator(files._iterator(ctx), options, _PARALLEL_READ_BATCH), 2, name="tfrx-read")
    reader.start()
    return split_records(reader)


def interleaved_records(files: Dataset, ctx: IterContext, options: dict, cycle_length: int) -> DatasetIterator:
    """The records of ``cycle_length`` files at a time, one by one in tf.data's interleave order."""
    return split_records(InterleavedBatchIterator(files, ctx, options, cycle_length, _PARALLEL_READ_BATCH, False))


# Bytes (about) per piece a parallel-read slot reads at once, beside _PARALLEL_READ_BATCH records.
_PARALLEL_READ_BYTES = 4 << 20


class _ReadSlot:
    """One open file of a parallel read: its reader (on a background thread) and the piece being taken from."""

    __slots__ = ("input_state", "reader", "before", "piece", "offset", "eof")

    def __init__(self, input_state, reader: PrefetchIterator) -> None:
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

    def remaining(self) -> int:
        return 0 if self.piece is None else len(self.piece) - self.offset


class InterleavedBatchIterator(DatasetIterator):
    """``RecordBatch`` es of ``batch_size`` records from ``cycle_length`` files at once, in tf.data's order.

    The order is ``interleave(cycle_length, block_length=1)``'s, record by
    record: the open files take turns, an empty slot is filled with the next
    file before it is read, and a file that ends empties its slot and passes
    the turn. Each file is read ahead on its own thread in pieces of
    ``_PARALLEL_READ_BATCH`` records; a batch is planned with NumPy (whole
    rounds over the open files at a time) and copied out of the pieces in one
    native call (``_native.gather_spans``): no Python object per record.

    Remote files (URLs) are also opened ahead: the next ``cycle_length``
    names are taken from the file list early and their readers start
    fetching, so that a slot whose file ends goes on without waiting for a
    size lookup and a first request.

    State: the file names' state (before the files opened ahead), the turn,
    and per slot the state of its file before the current piece plus the
    records taken from that piece.
    """

    def __init__(self, files: Dataset, ctx: IterContext, options: dict, cycle_length: int, batch_size: int, drop_remainder: bool) -> None:
        self._files_ds = files
        self._ctx = ctx
        self._files = files._iterator(ctx)
        self._options = options
        self._ahead: list = []  # remote files opened ahead: (file names' state before, reader)
        self._slots: list[_ReadSlot | None] = [None] * cycle_length
        self._cycle = 0
        self._end_of_input = False
        self._size = batch_size
        self._drop = drop_remainder
        self._done = False

    @property
    def _children(self):
        return (self._files, *(s.reader for s in self._slots if s is not None), *(r for _, r in self._ahead))

    def _reader(self, name) -> PrefetchIterator:
        return PrefetchIterator(FileIterator(as_path(name), self._options, _PARALLEL_READ_BATCH, _PARALLEL_READ_BYTES), 2, name="tfrx-read")

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
        while len(self._ahead) < len(self._slots):  # remote files: the next ones start fetching now
            before = self._files.get_state()
            try:
                name = next(self._files)
            except StopIteration:
                break
            reader = self._reader(name)
            reader.start()
            self._ahead.append((before, reader))
            if not is_url(as_path(name)):
                break
        return slot

    def _drop_ahead(self) -> None:
        for _, reader in self._ahead:
            reader.close()
        self._ahead = []

    def _plan(self, need: int, pieces: dict, parts: list) -> int:
        """Adds up to ``need`` records in turn order to ``parts``; returns how many (0: the end)."""
        slots, n = self._slots, len(self._slots)
        while True:
            for s in slots:  # piece boundaries do not change the order: refill ahead of the turn
                if s is not None and not s.eof and s.remaining() == 0:
                    s.fetch()
            live: list[int] = []
            event = None  # the first slot in turn order that must open or close a file
            for step in range(n):
                j = (self._cycle + step) % n
                s = slots[j]
                if s is None:
                    if self._end_of_input:
                        continue  # its turns pass
                    event = j
                    break
                if s.eof:
                    event = j
                    break
                live.append(j)
            if live:
                k = len(live)
                rounds = 1 if event is not None else min(slots[j].remaining() for j in live)  # type: ignore[union-attr]  # live slots are open
                t = min(need, k * rounds)
                which, starts, lengths = np.empty(t, np.int64), np.empty(t, np.int64), np.empty(t, np.int64)
                for pos, j in enumerate(live[:t]):
                    s = slots[j]
                    assert s is not None and s.piece is not None  # live: open, with records left
                    c = len(range(pos, t, k))
                    piece = s.piece
                    which[pos::k] = pieces.setdefault(id(piece), (len(pieces), piece))[0]
                    starts[pos::k] = piece.starts[s.offset : s.offset + c]
                    lengths[pos::k] = piece.lengths[s.offset : s.offset + c]
                    s.offset += c
                parts.append((which, starts, lengths))
                self._cycle = (live[(t - 1) % k] + 1) % n
                return t
            if event is None:
                return 0
            self._cycle = event
            s = slots[event]
            if s is None:  # tf.data opens the next file in the empty slot and reads it in the same turn
                slot = self._next_slot()
                if slot is None:
                    self._end_of_input = True
                    continue
                slots[event] = slot
            else:  # the file ended: the slot empties and the turn passes
                s.reader.close()
                slots[event] = None
                self._cycle = (event + 1) % n

    def __next__(self) -> RecordBatch:
        if self._done:
            raise StopIteration
        pieces: dict = {}
        parts: list = []
        need = self._size
        while need:
            got = self._plan(need, pieces, parts)
            if not got:
                self._done = True
                break
            need -= got
        if not parts or (self._drop and need):
            raise StopIteration
        which, starts, lengths = (np.concatenate(a) if len(parts) > 1 else a[0] for a in zip(*parts))
        datas = [piece.data for _, piece in sorted(pieces.values(), key=lambda v: v[0])]
        data: np.ndarray = _native.gather_spans(datas, which, starts, lengths)  # type: ignore[assignment]  # the stub says object
        out_starts = np.zeros(len(lengths), np.int64)
        np.cumsum(lengths[:-1], out=out_starts[1:])
        return RecordBatch(data, out_starts, lengths)

    def get_state(self) -> dict:
        return {
            "ctx_epoch": list(self._ctx.epoch),
            "files": self._ahead[0][0] if self._ahead else self._files.get_state(),
            "end_of_input": self._end_of_input,
            "cycle": self._cycle,
            "done": self._done,
            "slots": [
                None if s is None else {"input": s.input_state, "file": s.before, "offset": s.offset}
                for s in self._slots
            ],
        }

    def set_state(self, state: dict) -> None:
        for s in self._slots:
            if s is not None:
                s.reader.close()
        self._drop_ahead()
        self._slots = [None] * len(self._slots)
        self._ctx = self._ctx.with_epoch(state["ctx_epoch"])
        for i, saved in enumerate(state["slots"]):
            if saved is None:
                continue
            finder = self._files_ds._iterator(self._ctx)
            finder.set_state(saved["input"])
            name = next(finder)
            finder.close()
            slot = self._open(name, saved["input"])
            if saved["file"] is not None:
                slot.reader.set_state(saved["file"])
            slot.fetch()
            slot.offset = int(saved["offset"])
            self._slots[i] = slot
        self._files.set_state(state["files"])
        self._end_of_input = bool(state["end_of_input"])
        self._cycle = int(state["cycle"])
        self._done = bool(state["done"])
