"""Reading the files of a dataset of file names: the pipeline's only contact with :class:`tfrx.RecordReader`.

:class:`FilesIterator` reads the files one after another, ``_WINDOW`` of them
at a time through one ``RecordReader`` (which reads a list of files; for
URLs its readahead runs from one object into the next), as records
(``bytes``) or as :class:`tfrx.RecordBatch` es. With ``exact`` the reader
fills each batch of ``batch_size`` records in one buffer sized for it
(``RecordReader.read_batch(exact=True)``), so a batch is short only where a
file ends and is never copied. :class:`FileIterator` reads a single file
(one slot of a parallel read).

State names the file list's state before the open file (``files``) and the
position in that file (``file``: ``path``, ``record`` = records consumed
from it, ``offset`` = the byte offset of the next one); resuming opens that
file at that offset. Where an element came from is
:meth:`DatasetIterator.provenance` of the state after it.

With ``stride=(n, i)`` the reader keeps only the records ``i, i + n, ...``
of the files read one after another (``RecordReader(stride=...)``: the
others' payloads are stepped over unread where the file allows); the state
also holds ``skip``, the records to drop before the next one kept.
"""

from __future__ import annotations

import os

import numpy as np

from tfrx.data._dataset import DatasetIterator
from tfrx.data._provenance import Provenance
from tfrx.io._paths import is_url
from tfrx.io._reader import RecordPosition, RecordReader

__all__ = ["open_reader", "as_path", "piece_options", "FileIterator", "FilesIterator", "PIECE_READ_BYTES"]

# Files read by one reader at a time. Remote ones (URLs) gain most: the readahead fetches the
# next files' first blocks while the current one is read (each file opened on its own waits a
# round trip or two). A window never mixes local files and URLs.
_WINDOW = 16


#: The read size of a stream read in pieces when the user set no ``buffer_size``: a shuffle's chunks, which
#: are copied into the shuffle's store at once, so a smaller read holds less memory for no loss of speed
#: (1 MiB against the reader's 4 MiB: 54.8 -> 40.1 MiB added by ``shuffle(10000)`` on BERT-like records,
#: records per CPU-second unchanged within noise); and the files parallel reads read on the consumer's
#: thread while their record sizes are unknown (the pieces themselves are then read whole, each into one
#: buffer sized for it).
PIECE_READ_BYTES = 1 << 20


def piece_options(options: dict) -> dict:
    """``options`` with ``buffer_size`` :data:`PIECE_READ_BYTES` when the user set none."""
    return options if options.get("buffer_size") else {**options, "buffer_size": PIECE_READ_BYTES}


def open_reader(
    path: str | list[str],
    *,
    compression: str,
    buffer_size: int | None,
    on_error: str,
    offset: int = 0,
    record: int = 0,
    end_offset: int | None = None,
    storage_options: dict | None = None,
    stride: tuple[int, int] | None = None,
    buffers=None,
    **remote: int | None,
) -> RecordReader:
    """A :class:`tfrx.RecordReader` of ``path`` (a file or a list read one after another), positioned
    at the record ``record`` of the first file, whose header is at byte ``offset``, and stopping at byte
    ``end_offset`` where given. ``remote``: the reader's ``readahead``, ``block_size`` and ``concurrency``,
    passed on where not None."""
    kwargs: dict = {"compression": compression, "on_error": on_error}
    if storage_options:
        kwargs["storage_options"] = storage_options
    if buffer_size:
        kwargs["chunk_size"] = buffer_size
    if stride is not None and stride[0] > 1:
        kwargs["stride"] = stride
    if buffers is not None:
        kwargs["buffers"] = buffers
    if end_offset is not None:
        kwargs["end_offset"] = end_offset
    kwargs.update((name, value) for name, value in remote.items() if value is not None)
    start = RecordPosition(0, offset, record) if offset or record else None
    # The files were listed (and checked to be whole shard sets) by the dataset; this may be a worker's part.
    return RecordReader(path, start=start, require_all_shards=False, **kwargs)


def as_path(name) -> str:
    """A file name element (``bytes``, ``str``, a path or a 0-d array of them) as ``str``."""
    if isinstance(name, np.ndarray):
        name = name.item()
    return name.decode() if isinstance(name, bytes) else os.fspath(name)


def _provenance(file_state: dict | None) -> Provenance | None:
    """The last record consumed from a file, from the file's state (``path``, ``record`` consumed)."""
    if file_state is None or not file_state["record"]:
        return None
    return Provenance(file_state["path"], int(file_state["record"]) - 1)


class FileIterator(DatasetIterator):
    """The records (``batch_size=None``) or record batches of one file; state is the reader position.

    ``exact`` and ``buffers``: see ``RecordReader.read_batch`` and ``RecordReader``.
    """

    def __init__(
        self,
        path: str,
        options: dict,
        batch_size: int | None,
        max_bytes: int | None = None,
        *,
        exact: bool = False,
        buffers=None,
    ) -> None:
        self._path = path
        self._options = options
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        self._exact = exact
        self._buffers = buffers
        self._reader: RecordReader | None = None
        self._ended = False
        self._position = RecordPosition()

    def __next__(self):
        if self._reader is None:
            if self._ended:
                raise StopIteration
            pos = self._position
            self._reader = open_reader(
                self._path, offset=pos.offset, record=pos.record_index, buffers=self._buffers, **self._options
            )
        if self._batch_size is None:
            item = next(self._reader, None)
        else:
            item = self._reader.read_batch(self._batch_size, self._max_bytes, exact=self._exact)
        if item is None:
            self.close()
            self._ended = True
            raise StopIteration
        return item

    def _remember(self) -> RecordPosition:
        if self._reader is not None:
            self._position = self._reader.position
        return self._position

    def provenance(self, state: dict) -> Provenance | None:
        return _provenance(state)

    def get_state(self) -> dict:
        pos = self._remember()
        return {"path": self._path, "record": pos.record_index, "offset": pos.offset}

    def set_state(self, state: dict) -> None:
        self.close()
        self._ended = False
        self._path = state["path"]
        self._position = RecordPosition(0, int(state["offset"]), int(state["record"]))

    def close(self) -> None:
        self._remember()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()


class FilesIterator(DatasetIterator):
    """The files named by ``files`` one after another, up to ``_WINDOW`` at a time through one reader."""

    def __init__(
        self,
        files: DatasetIterator,
        options: dict,
        batch_size: int | None,
        max_bytes: int | None = None,
        exact: bool = False,
        stride: tuple[int, int] | None = None,
    ) -> None:
        self._files = files
        self._children = (files,)
        self._stride = stride
        self._skip = 0 if stride is None else stride[1]  # before the next window: records to drop first
        self._options = options
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        self._exact = exact
        self._window: list = []  # the files the reader reads: (state of ``files`` before the name, path)
        self._reader: RecordReader | None = None
        self._held = None  # (state before, path) of a name taken from ``files`` and not yet opened

    def _take(self):
        """(state of ``files`` before the next name, the name), or raises StopIteration."""
        if self._held is not None:
            held, self._held = self._held, None
            return held
        before = self._files.get_state()
        return before, as_path(next(self._files))

    def _open_window(self, first, offset: int = 0, record: int = 0) -> None:
        window = [first]
        remote = is_url(first[1])
        while len(window) < _WINDOW:
            try:
                entry = self._take()
            except StopIteration:
                break
            if is_url(entry[1]) != remote:
                self._held = entry  # the next window reads it
                break
            window.append(entry)
        self._window = window
        stride = None if self._stride is None else (self._stride[0], self._skip)
        paths = [path for _, path in window]
        self._reader = open_reader(paths, offset=offset, record=record, stride=stride, **self._options)

    def _close_window(self) -> None:
        reader, self._reader, self._window = self._reader, None, []
        if reader is not None:
            reader.close()
            self._skip = reader.stride[1]

    def __next__(self):
        while True:
            reader = self._reader
            if reader is not None:
                if self._batch_size is None:
                    item = next(reader, None)
                else:
                    item = reader.read_batch(self._batch_size, self._max_bytes, exact=self._exact)
                if item is not None:
                    return item
                self._close_window()
            self._open_window(self._take())

    def _open_file(self):
        """(index in the window, position) of the file the reader stands in, or None between windows."""
        if self._reader is None:
            return None
        pos = self._reader.position
        return (pos.file_index, pos) if pos.file_index < len(self._window) else None

    def provenance(self, state: dict) -> Provenance | None:
        return _provenance(state["file"])

    def get_state(self) -> dict:
        state = self._state()
        if self._stride is not None:
            state["skip"] = self._skip if self._reader is None else self._reader.stride[1]
        return state

    def _state(self) -> dict:
        found = self._open_file()
        if found is not None:
            k, pos = found
            before, path = self._window[k]
            return {"files": before, "file": {"path": path, "record": pos.record_index, "offset": pos.offset}}
        # Between windows: the list's state before any name taken and not yet opened.
        return {"files": self._held[0] if self._held is not None else self._files.get_state(), "file": None}

    def set_state(self, state: dict) -> None:
        self._close_window()
        self._held = None
        if self._stride is not None:
            self._skip = int(state["skip"])
        self._files.set_state(state["files"])
        saved = state["file"]
        if saved is not None:
            before = state["files"]
            self._open_window((before, as_path(next(self._files))), int(saved["offset"]), int(saved["record"]))

    def close(self) -> None:
        self._close_window()
        super().close()
