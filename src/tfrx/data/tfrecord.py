"""TFRecordDataset: records of TFRecord files, one ``bytes`` element per record.

This module is the pipeline's only contact with the record reader
(:func:`open_reader`). Files are read one
after another, or ``num_parallel_reads`` at a time in ``tf.data``'s
interleave order (``cycle_length=num_parallel_reads, block_length=1``).

For the fast parse path, :meth:`TFRecordDataset.record_batches` yields
:class:`tfrx.RecordBatch` es of exactly ``batch_size`` records (the last one
smaller unless ``drop_remainder``), straight from the reader's buffers: no
Python object per record. The batches hold the same records, in the same
order, as ``batch(batch_size)`` over the records, with ``num_parallel_reads``
too (:class:`_InterleavedBatchIterator`).

Iterator state names the file (``path``), the records consumed from it
(``record``) and the byte offset of the next one (``offset``): resuming
re-opens that file at that offset. ``compression_type="auto"`` (the
default) detects compression from the file's content; ``None`` means none,
as in TensorFlow; ``on_error`` is the reader's policy for
damaged records (``"raise"``, ``"skip"`` or ``"warn"``).
"""

from __future__ import annotations

import os

import numpy as np

from tfrx.data.dataset import (
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    IterContext,
    resolve_parallelism,
)
from tfrx.data.prefetch import PrefetchIterator
from tfrx.data.shard import ShardDataset
from tfrx.data.sources import ListFilesDataset, expand_file_pattern
from tfrx.io.batch import RecordBatch
from tfrx.io.paths import is_url
from tfrx.options import check_on_error, normalize_compression

__all__ = ["TFRecordDataset", "RecordBatchDataset", "open_reader", "concat_record_batches"]

_UNSET = object()


def open_reader(
    path: str | list[str],
    *,
    compression: str,
    buffer_size: int | None,
    on_error: str,
    offset: int,
    record: int,
    storage_options: dict | None = None,
):
    """A reader of one file positioned at the record ``record`` whose header is at byte ``offset``.

    ``path`` may also be a list of files read one after another, the position
    then being in the first. The returned object iterates ``bytes``, has ``iter_batches(max_records)``,
    ``position`` (``.offset`` / ``.record_index`` of the next record) and
    ``close()``: :class:`tfrx.RecordReader`.
    """
    try:
        from tfrx.io import RecordPosition, RecordReader  # type: ignore[attr-defined]
    except ImportError:
        raise NotImplementedError("reading TFRecord files needs tfrx.io.RecordReader, which this build lacks") from None
    kwargs = {"compression": compression, "on_error": on_error}
    if storage_options:
        kwargs["storage_options"] = storage_options
    if buffer_size:
        kwargs["chunk_size"] = buffer_size
    start = RecordPosition(0, offset, record) if offset or record else None
    # The files were listed (and checked to be whole shard sets) by the dataset; this may be a worker's part.
    return RecordReader(path, start=start, require_all_shards=False, **kwargs)


def concat_record_batches(pieces: list[RecordBatch]) -> RecordBatch:
    """One batch holding the records of ``pieces`` in order (copies only when there are several)."""
    pieces = [p for p in pieces if len(p)]
    if len(pieces) == 1:
        return pieces[0]
    if not pieces:
        return RecordBatch(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
    datas, starts, base = [], [], 0
    for p in pieces:
        lo = int(p.starts.min())
        hi = int((p.starts + p.lengths).max())
        datas.append(p.data[lo:hi])
        starts.append(p.starts - lo + base)
        base += hi - lo
    return RecordBatch(np.concatenate(datas), np.concatenate(starts), np.concatenate([p.lengths for p in pieces]))


def _as_path(name) -> str:
    if isinstance(name, np.ndarray):
        name = name.item()
    return name.decode() if isinstance(name, bytes) else os.fspath(name)


class _FileIterator(DatasetIterator):
    """The records (``batch_size=None``) or record batches of one file; state is the reader position."""

    def __init__(self, path: str, options: dict, batch_size: int | None, max_bytes: int | None = None) -> None:
        self._path = path
        self._options = options
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        self._reader = None
        self._it = None
        self._offset = 0
        self._record = 0

    def __next__(self):
        if self._it is None:
            if self._reader is not None:  # closed after the end
                raise StopIteration
            self._reader = open_reader(self._path, offset=self._offset, record=self._record, **self._options)
            if self._batch_size is None:
                self._it = iter(self._reader)
            else:
                limits = (self._batch_size,) if self._max_bytes is None else (self._batch_size, self._max_bytes)
                self._it = self._reader.iter_batches(*limits)
        try:
            return next(self._it)
        except StopIteration:
            self._remember()
            self._it = None
            raise

    def _remember(self) -> None:
        if self._reader is not None:
            pos = self._reader.position
            self._offset, self._record = int(pos.offset), int(pos.record_index)

    def get_state(self) -> dict:
        self._remember()
        return {"path": self._path, "record": self._record, "offset": self._offset}

    def set_state(self, state: dict) -> None:
        self.close()
        self._reader = None
        self._path = state["path"]
        self._record = int(state["record"])
        self._offset = int(state["offset"])

    def close(self) -> None:
        self._remember()
        reader, self._it = self._reader, None
        if reader is not None:
            reader.close()


# Remote files (URLs) are read by one reader over this many files at a time,
# so that its readahead fetches the next files' first blocks while the
# current one is read (each file opened on its own waits a round trip or two).
_REMOTE_WINDOW = 16


class _SequentialFilesIterator(DatasetIterator):
    """The files one after another (``flat_map``, without the interleave machinery per record).

    Local files are read one reader each. A run of remote files (URLs) is
    read by one :class:`tfrx.RecordReader` over up to ``_REMOTE_WINDOW`` of
    them, whose readahead runs from one object into the next; the state has
    the same form either way (the file list's state before the open file,
    and the position in that file).
    """

    def __init__(self, files: DatasetIterator, options: dict, batch_size: int | None, max_bytes: int | None = None) -> None:
        self._files = files
        self._options = options
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        self._file: _FileIterator | None = None
        self._before = None  # state of ``files`` before the open file was taken
        self._window: list = []  # remote files read by ``_reader``: (state of ``files`` before it, path)
        self._reader = None
        self._records = None  # the reader's record iterator (batch_size None)
        self._held = None  # (state before, path) of a name taken from ``files`` and not yet opened

    @property
    def _children(self):  # type: ignore[override]
        return (self._files, self._file)

    def _take(self):
        """(state of ``files`` before the next name, the name), or raises StopIteration."""
        if self._held is not None:
            held, self._held = self._held, None
            return held
        before = self._files.get_state()
        return before, _as_path(next(self._files))

    def _open_window(self, first, offset: int, record: int) -> None:
        window = [first]
        while len(window) < _REMOTE_WINDOW:
            try:
                entry = self._take()
            except StopIteration:
                break
            if not is_url(entry[1]):
                self._held = entry  # a local file after remote ones: read on its own
                break
            window.append(entry)
        self._window = window
        self._reader = open_reader([path for _, path in window], offset=offset, record=record, **self._options)
        self._records = iter(self._reader) if self._batch_size is None else None

    def _close_window(self) -> None:
        reader, self._reader, self._records, self._window = self._reader, None, None, []
        if reader is not None:
            reader.close()

    def _next_remote(self):
        if self._records is not None:
            return next(self._records, None)
        return self._reader.read_batch(self._batch_size, self._max_bytes)

    def __next__(self):
        while True:
            if self._reader is not None:
                item = self._next_remote()
                if item is not None:
                    return item
                self._close_window()
            f = self._file
            if f is None:
                before, name = self._take()
                if is_url(name):
                    self._open_window((before, name), 0, 0)
                    continue
                f = self._file = _FileIterator(name, self._options, self._batch_size, self._max_bytes)
                self._before = before
            try:
                return next(f)
            except StopIteration:
                f.close()
                self._file = None

    def get_state(self) -> dict:
        if self._reader is not None:
            pos = self._reader.position
            k = pos.file_index
            if k < len(self._window):
                before, path = self._window[k]
                return {"files": before, "file": {"path": path, "record": int(pos.record_index), "offset": int(pos.offset)}}
        elif self._file is not None:
            return {"files": self._before, "file": self._file.get_state()}
        # Between files: the list's state before any name taken and not yet opened.
        return {"files": self._held[0] if self._held is not None else self._files.get_state(), "file": None}

    def set_state(self, state: dict) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._close_window()
        self._held = None
        self._files.set_state(state["files"])
        if state["file"] is not None:
            self._before = state["files"]
            name = _as_path(next(self._files))
            file_state = state["file"]
            if is_url(name):
                self._open_window((state["files"], name), int(file_state["offset"]), int(file_state["record"]))
                return
            self._file = _FileIterator(name, self._options, self._batch_size, self._max_bytes)
            self._file.set_state(file_state)

    def close(self) -> None:
        self._close_window()
        super().close()


class _FilesDataset(Dataset):
    """The records (or record batches) of a dataset of file names, read one file at a time."""

    def __init__(self, files: Dataset, options: dict, batch_size: int | None, max_bytes: int | None = None) -> None:
        super().__init__()
        self._files = files
        self._options = options
        self._batch_size = batch_size
        self._max_bytes = max_bytes

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _SequentialFilesIterator(self._files._iterator(ctx), self._options, self._batch_size, self._max_bytes)


# With num_parallel_reads (and in files.interleave(TFRecordDataset, num_parallel_calls=...)),
# each open file is read on its own thread in batches of this many records, which
# the consumer's side interleaves or splits: handing records over one at a time
# between threads would cost more than reading them.
_PARALLEL_READ_BATCH = 256


class _SplitIterator(DatasetIterator):
    """Records of a stream of ``RecordBatch`` es; state is the input's state before the batch + the offset."""

    def __init__(self, parent: DatasetIterator) -> None:
        self._parent = parent
        self._children = (parent,)
        self._records: list = []
        self._offset = 0
        self._before = None

    def __next__(self):
        while self._offset >= len(self._records):
            before = self._parent.get_state()
            batch = next(self._parent)
            self._before, self._records, self._offset = before, batch.to_list(), 0
        self._offset += 1
        return self._records[self._offset - 1]

    def get_state(self) -> dict:
        if self._offset < len(self._records):
            return {"parent": self._before, "offset": self._offset}
        return {"parent": self._parent.get_state(), "offset": 0}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._records, self._offset = [], 0
        if state["offset"]:
            self._before = state["parent"]
            self._records = next(self._parent).to_list()
            self._offset = int(state["offset"])

    def ready(self) -> bool:
        return self._offset < len(self._records) or self._parent.ready()


def _read_ahead(batches: DatasetIterator) -> _SplitIterator:
    """Records of ``batches`` (record batches), which a background thread reads ahead."""
    reader = PrefetchIterator(batches, 2, name="tfrx-read")
    reader.start()
    return _SplitIterator(reader)


# Bytes (about) per piece a parallel-read slot reads at once, beside _PARALLEL_READ_BATCH records.
_PARALLEL_READ_BYTES = 4 << 20


class _ReadSlot:
    """One open file of a parallel read: its reader (on a background thread) and the piece being taken from."""

    __slots__ = ("input_state", "reader", "before", "piece", "offset", "eof")

    def __init__(self, input_state, reader: PrefetchIterator) -> None:
        self.input_state = input_state  # the file names' state before this file was taken
        self.reader = reader
        self.before = None  # the reader's state before ``piece`` was read
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


class _InterleavedBatchIterator(DatasetIterator):
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
    def _children(self):  # type: ignore[override]
        return (self._files, *(s.reader for s in self._slots if s is not None), *(r for _, r in self._ahead))

    def _reader(self, name) -> PrefetchIterator:
        return PrefetchIterator(_FileIterator(_as_path(name), self._options, _PARALLEL_READ_BATCH, _PARALLEL_READ_BYTES), 2, name="tfrx-read")

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
            if not is_url(_as_path(name)):
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
            if not is_url(_as_path(name)):
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
                rounds = 1 if event is not None else min(slots[j].remaining() for j in live)
                t = min(need, k * rounds)
                which, starts, lengths = np.empty(t, np.int64), np.empty(t, np.int64), np.empty(t, np.int64)
                for pos, j in enumerate(live[:t]):
                    s = slots[j]
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
        from tfrx import _native

        which, starts, lengths = (np.concatenate(a) if len(parts) > 1 else a[0] for a in zip(*parts))
        datas = [piece.data for _, piece in sorted(pieces.values(), key=lambda v: v[0])]
        data = _native.gather_spans(datas, which, starts, lengths)
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


class _RebatchIterator(DatasetIterator):
    """Cuts a stream of ``RecordBatch`` es into batches of exactly ``batch_size`` records."""

    def __init__(self, parent: DatasetIterator, batch_size: int, drop_remainder: bool) -> None:
        self._parent = parent
        self._children = (parent,)
        self._size = batch_size
        self._drop = drop_remainder
        self._piece: RecordBatch | None = None
        self._before = None
        self._offset = 0

    def __next__(self):
        need, parts = self._size, []
        while need:
            if self._piece is None or self._offset >= len(self._piece):
                before = self._parent.get_state()
                try:
                    piece = next(self._parent)
                except StopIteration:
                    self._piece = None
                    break
                self._piece, self._before, self._offset = piece, before, 0
            take = min(need, len(self._piece) - self._offset)
            parts.append(self._piece[self._offset : self._offset + take])
            self._offset += take
            need -= take
        if not parts or (self._drop and need):
            raise StopIteration
        return concat_record_batches(parts)

    def get_state(self) -> dict:
        if self._piece is not None and self._offset < len(self._piece):
            return {"parent": self._before, "offset": self._offset}
        return {"parent": self._parent.get_state(), "offset": 0}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._piece, self._offset = None, 0
        if state["offset"]:
            self._before = state["parent"]
            self._piece = next(self._parent)
            self._offset = int(state["offset"])


class RecordBatchDataset(Dataset):
    """``RecordBatch`` es of ``batch_size`` records from a :class:`TFRecordDataset`."""

    def __init__(self, source: TFRecordDataset, batch_size: int, drop_remainder: bool) -> None:
        super().__init__()
        self._source = source
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return self._source._record_batches_iterator(ctx, self.batch_size, self.drop_remainder)

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        sharded = self._source._shard_source(num_shards, index)
        if sharded is None:
            return None
        return RecordBatchDataset(sharded, self.batch_size, self.drop_remainder)


class TFRecordDataset(Dataset):
    """The records of TFRecord files (``tf.data.TFRecordDataset``).

    ``filenames``: a path, a glob, a list of them, or a dataset of file names
    (``Dataset.list_files``). ``compression_type`` (or ``compression=``, the
    name the rest of tfrx uses): ``"auto"`` (the default) detects it from
    each file's content; ``None`` / ``""`` (none, TensorFlow's meaning of
    ``None``), ``"GZIP"`` or ``"ZLIB"``. ``buffer_size``: the reader's read size in
    bytes. ``num_parallel_reads``: how many files to read at once
    (``tfrx.AUTOTUNE`` for the usable cores). ``storage_options`` go to the
    fsspec filesystem of URLs (``s3://``, ``gs://``, ...).

    A glob or list of ``-NNNNN-of-MMMMM`` shards must hold the whole set
    (else :class:`tfrx.IncompleteShardSetError` names the missing shards);
    ``require_all_shards=False`` reads whatever is there. Files tfrx keeps
    beside data (``.tfrx/``) never match; one named explicitly raises
    :class:`tfrx.SidecarFileError`.
    """

    def __init__(
        self,
        filenames,
        compression_type: str | None = "auto",
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        *,
        compression=_UNSET,
        on_error: str = "raise",
        storage_options: dict | None = None,
        require_all_shards: bool = True,
    ) -> None:
        super().__init__()
        if compression is not _UNSET:
            if compression_type != "auto":
                raise TypeError("pass compression_type or compression, not both")
            compression_type = compression
        compression = normalize_compression(compression_type, allow_auto=True, name="compression_type")
        check_on_error(on_error)
        if isinstance(filenames, Dataset):
            self._files = filenames
        else:
            names = expand_file_pattern(filenames, storage_options=storage_options,
                                        require_all_shards=require_all_shards)
            self._files = ListFilesDataset(names, shuffle=False, seed=0)
        self._options = {
            "compression": compression,
            "buffer_size": buffer_size,
            "on_error": on_error,
        }
        if storage_options:
            self._options["storage_options"] = storage_options
        self._parallel_reads = resolve_parallelism(num_parallel_reads, name="num_parallel_reads")

    @property
    def files(self) -> Dataset:
        """The dataset of file names this dataset reads."""
        return self._files

    def _record_batches_iterator(self, ctx: IterContext, batch_size: int, drop_remainder: bool) -> DatasetIterator:
        """``RecordBatch`` es of ``batch_size`` records (fewer at the end) in the records' order."""
        n = self._parallel_reads
        if n == 1:
            pieces = _FilesDataset(self._files, self._options, batch_size)._iterator(ctx)
            return _RebatchIterator(pieces, batch_size, drop_remainder)
        return _InterleavedBatchIterator(self._files, ctx, self._options, n, batch_size, drop_remainder)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        if self._parallel_reads == 1:
            return _FilesDataset(self._files, self._options, None)._iterator(ctx)
        return _SplitIterator(self._record_batches_iterator(ctx, _PARALLEL_READ_BATCH, False))

    def _read_ahead_iterator(self, ctx: IterContext) -> DatasetIterator | None:
        """For ``files.interleave(TFRecordDataset, num_parallel_calls=...)``: batches read ahead, split here."""
        if self._parallel_reads != 1:
            return None
        files = _FilesDataset(self._files, self._options, _PARALLEL_READ_BATCH)._iterator(ctx)
        return _read_ahead(files)

    def record_batches(self, batch_size: int, drop_remainder: bool = False) -> Dataset:
        """``RecordBatch`` es of ``batch_size`` records, read without a Python object per record."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        return RecordBatchDataset(self, batch_size, drop_remainder)

    def with_index(self, **kwargs):
        """These files as a :class:`tfrx.RandomAccessDataset` (``len``, ``ds[i]``, global shuffle);
        keyword arguments go to it. The files must be uncompressed; indexes are built on first use."""
        from tfrx.data.random_access import RandomAccessDataset

        kwargs.setdefault("require_all_shards", False)  # listed (and checked) when this dataset was made
        return RandomAccessDataset([_as_path(f) for f in self._files.take_all()], **kwargs)

    def cardinality(self) -> int:
        return 0 if self._files.cardinality() == 0 else UNKNOWN_CARDINALITY

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        """Shards by files when there are at least ``num_shards`` of them, else by records (``None``)."""
        n = self._files.cardinality()
        if n < num_shards:
            return None

        def shard_files(source: Dataset) -> Dataset:
            return source._shard_source(num_shards, index) or ShardDataset(source, num_shards, index)

        clone = TFRecordDataset.__new__(TFRecordDataset)
        clone.__dict__.update(self.__dict__)
        clone._iterations = 0
        clone._files = self._files._rewrite_sources(shard_files)
        return clone
