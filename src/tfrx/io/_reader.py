"""Reading TFRecord files: ``read_records`` and ``RecordReader``.

A reader walks its list of files one after another, each through a
:class:`~tfrx.io._scanner.FileScanner` (``io/_scanner.py``: buffers, the native
framing scanner, damage), and keeps the position a reading can resume from
(``io/_positions.py``). Remote files come through the readahead of
``io/_readahead.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from tfrx import _native
from tfrx.errors import CorruptRecordWarning
from tfrx.io._batch import RecordBatch
from tfrx.io._compression import detect_compression
from tfrx.io._damage import DamagedRegion
from tfrx.io._framing import HEADER_BYTES
from tfrx.io._data_files import expand_paths
from tfrx.io._paths import Source, is_url, url_to_fs
from tfrx.io._positions import ReaderStats, RecordPosition
from tfrx.io._readahead import DEFAULT_CONCURRENCY, DEFAULT_READAHEAD, RemoteBlocks
from tfrx.io._scanner import FileScanner
from tfrx.options import check_on_error, normalize_compression

__all__ = [
    "RecordReader",
    "read_records",
    "RecordPosition",
    "ReaderStats",
    "DamagedRegion",
    "CorruptRecordWarning",
    "DEFAULT_CHUNK_SIZE",
]

DEFAULT_CHUNK_SIZE = 4 << 20


class _Forward:
    """A stream read from byte ``at`` of its object on, as a file that is only ever read forward."""

    def __init__(self, stream, at: int) -> None:
        self._stream = stream
        self._at = at

    def seek(self, offset: int) -> None:
        if offset != self._at:
            raise ValueError(f"a remote stream read forward from byte {self._at} cannot seek to {offset}")

    def read(self, size: int) -> bytes:
        data = self._stream.read(size)
        self._at += len(data)
        return data

    def close(self) -> None:
        pass


def check_remote_options(**values: Any) -> None:
    """Checks the remote read options given (None: the default): ``readahead`` an int >= 0 bytes,
    ``block_size`` and ``concurrency`` ints >= 1."""
    for name, value in values.items():
        least, what = (0, ">= 0 (bytes, an int)") if name == "readahead" else (1, "a positive int")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise ValueError(f"{name} must be {what} or None, got {value!r}")


class RecordReader:
    """Reads the records of one or more TFRecord files, in order.

    ``paths``: a path, glob, URL, open binary file, or a list of these.
    ``compression``: ``"auto"`` (detect from content, the default), ``""`` /
    ``None`` / ``"none"`` (no compression, as ``None`` means in TensorFlow),
    ``"GZIP"`` or ``"ZLIB"`` (any case) or a :class:`TFRecordOptions`. ``verify`` checks every data CRC (length CRCs
    are always checked). ``on_error``: ``"raise"`` (default) raises
    :class:`tfrx.CorruptRecordError`; ``"skip"`` searches on byte by byte
    from the damage to the next record whose length and data CRCs verify, so
    every intact record is delivered, and records the damage in ``stats``
    (``regions``, ``skipped_records``, ``skipped_bytes``, ``errors``);
    ``"warn"`` does the same and issues a :class:`CorruptRecordWarning`.
    A broken GZIP/ZLIB stream delivers every record inflated before the
    break and warns in both modes (see ``docs/reliability.md``).

    ``start`` (a :class:`RecordPosition` or its dict) resumes where
    ``position`` was taken; ``start_offset`` / ``end_offset`` restrict a
    single file to the records whose header starts in that byte range of its
    uncompressed stream (a compressed stream is inflated and discarded up to
    the start).

    ``chunk_size`` is how many bytes are read at a time (memory stays within
    a few chunks plus the largest record). ``use_mmap=True`` maps local
    uncompressed files instead of reading them: batches are then read-only
    views of the mapping (never copied, never reused), which saves a copy
    per byte; a file truncated by another process while mapped can crash
    the process with SIGBUS, so it is off by default.

    ``readahead``: for URLs (``s3://``, ``gs://``, ``http(s)://``, ...), how
    many bytes to fetch ahead of the reader (the memory the readahead may
    hold), as range requests of ``block_size`` bytes (default
    ``chunk_size``) that run on into the next objects of the list, at most
    ``concurrency`` (default 8) in flight (default 32 MiB, ``0`` reads each
    object through one fsspec file, one request at a time). Record order and
    positions are the same either way. It applies when every source is a URL
    and no ``end_offset`` is given.

    Given a glob or several paths, the files must make up whole shard sets
    (every ``-NNNNN-of-MMMMM`` shard, nothing left by an interrupted
    commit), else :class:`tfrx.IncompleteShardSetError`;
    ``require_all_shards=False`` reads whatever is there. tfrx's own files
    (``.tfrx/``, indexes, manifests) are dropped from globs.

    ``buffers``: where the reader takes the buffers it reads into, an
    object whose ``take(nbytes, fresh)`` returns a writable ``uint8`` array
    of at least ``nbytes`` bytes that nothing else refers to (``fresh``: the
    size to make when none is free); the default takes fresh memory, and
    buffers for whole batches from a pool of the process. Batches view these
    buffers, so the pool must not hand one out again while a view is alive.

    ``stride=(n, i)`` reads only the records ``i, i + n, i + 2n, ...`` of
    the files read one after another (counted across the files, from
    ``start`` when given), as ``tf.data``'s ``shard(n, i)`` keeps them.
    The records in between are stepped over on their lengths (whose CRCs
    are checked) and their data CRCs are never computed; in a local
    uncompressed file whose records are large (16 KiB or more) only their
    12-byte headers are read. So damage inside a record another stride
    keeps goes unnoticed here (the reader that keeps it raises), where
    reading every record would raise. With ``on_error="skip"`` or
    ``"warn"`` every record is read and checked, and the stride counts
    the intact ones. Batches of a strided reader view the records kept
    (``RecordBatch.index_step`` is ``n``); ``stride`` (the property) gives
    ``(n, j)`` for the next record, to resume with ``start=position``.

    Iterating yields ``bytes``; ``read_batch`` / ``iter_batches`` give
    :class:`tfrx.RecordBatch` objects without a Python object per record.
    The reader is a cursor: iteration continues from ``position``;
    ``seek()`` / ``reset()`` move it. Records read after ``start_offset``
    are numbered from 0 (the offset does not say how many records precede
    it); a ``start`` position carries the right index.
    """

    def __init__(  # noqa: PLR0913  reading options, stride, and the remote readahead's memory, block size, requests
        self,
        paths: Source | Iterable[Source],
        *,
        compression="auto",
        verify: bool = True,
        on_error: str = "raise",
        start: RecordPosition | dict | None = None,
        start_offset: int | None = None,
        end_offset: int | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        use_mmap: bool = False,
        readahead: int | None = None,
        storage_options: dict | None = None,
        require_all_shards: bool = True,
        stride: tuple[int, int] | None = None,
        block_size: int | None = None,
        concurrency: int | None = None,
        buffers=None,
    ) -> None:
        check_on_error(on_error)
        self._buffers = buffers
        self._stride, self._first_skip = _check_stride(stride)
        self._skip = self._first_skip  # records to drop before the next one kept, between files
        self._sources = expand_paths(paths, storage_options=storage_options, require_all_shards=require_all_shards)
        self.compression = normalize_compression(compression, allow_auto=True)
        self.verify = bool(verify)
        self.on_error = on_error
        self.chunk_size = int(chunk_size)
        self.use_mmap = bool(use_mmap)
        if (start_offset is not None or end_offset is not None) and len(self._sources) != 1:
            raise ValueError("start_offset / end_offset need exactly one file")
        if start is not None and start_offset is not None:
            raise ValueError("pass either start or start_offset, not both")
        self._end_offset = end_offset
        remote = bool(self._sources) and all(isinstance(s, str) and is_url(s) for s in self._sources)
        check_remote_options(readahead=readahead, block_size=block_size, concurrency=concurrency)
        self.readahead = DEFAULT_READAHEAD if readahead is None else int(readahead)
        self.block_size = block_size
        self.concurrency = DEFAULT_CONCURRENCY if concurrency is None else concurrency
        self._use_readahead = remote and end_offset is None and self.readahead > 0
        self._blocks: RemoteBlocks | None = None
        self.stats = ReaderStats()
        self._scanner: FileScanner | None = None
        self._pending: RecordBatch | None = None
        self._pending_list: list[bytes] = []
        self._pending_i = 0
        self._closed = False
        self._file_index = 0
        self._next_start = RecordPosition(0, int(start_offset or 0), 0)
        self._record_bytes = 0  # bytes a record took in the last file read (sizes whole batches)
        if start is not None:
            self.seek(start)

    # -------------------------------------------------------------- info
    @property
    def paths(self) -> list[Source]:
        """The expanded list of files, in reading order."""
        return list(self._sources)

    @property
    def skipped_records(self) -> int:
        """Records dropped so far under ``on_error="skip"`` or ``"warn"``."""
        return self.stats.skipped_records

    @property
    def skipped_bytes(self) -> int:
        """Bytes passed over so far while skipping damaged records."""
        return self.stats.skipped_bytes

    @property
    def position(self) -> RecordPosition:
        """The position of the next record to be returned (see :class:`RecordPosition`)."""
        if self._pending is not None and self._pending_i < len(self._pending):
            i = self._pending_i
            assert self._pending.file_offsets is not None  # the reader's batches carry their offsets
            return RecordPosition(self._file_index, int(self._pending.file_offsets[i]), self._pending.record_index(i))
        if self._scanner is not None:
            return RecordPosition(self._file_index, self._scanner.offset, self._scanner.record_index)
        return self._next_start

    @property
    def stride(self) -> tuple[int, int]:
        """``(n, j)``: every ``n``-th record is read, the next one kept being ``j`` records after ``position``."""
        if self._pending is not None and self._pending_i < len(self._pending):
            return (self._stride, 0)  # ``position`` is the next record kept
        if self._scanner is not None:
            return (self._stride, self._scanner.skip)
        return (self._stride, self._skip)

    def seek(self, position: RecordPosition | dict) -> None:
        """Continues reading at ``position`` (taken from ``position`` earlier); with a ``stride``, the
        records kept count from there, as from ``start``."""
        pos = RecordPosition.from_dict(position)
        if not 0 <= pos.file_index <= len(self._sources) or pos.offset < 0:
            raise ValueError(f"position {pos} is outside this reader's {len(self._sources)} files")
        self._drop_scanner()
        self._drop_readahead()
        self._drop_pending()
        self._file_index = pos.file_index
        self._next_start = pos
        self._skip = self._first_skip

    def reset(self) -> None:
        """Starts again from the first record of the first file."""
        self.seek(RecordPosition())

    # -------------------------------------------------------------- files
    def _drop_scanner(self) -> None:
        if self._scanner is not None:
            self._scanner.close()
            self._scanner = None

    def _drop_readahead(self) -> None:
        if self._blocks is not None:
            self._blocks.close()
            self._blocks = None

    def _remote_stream(self, k: int, offset: int):
        """``(stream, compression)`` of remote file ``k`` from the readahead, started on first use.

        Resuming inside a file in ``"auto"`` mode reads its first bytes to
        tell whether it is compressed: an uncompressed file is then fetched
        from ``offset`` on, a compressed one from the checkpoint before
        ``offset`` when it has a checkpoint index (the stream handed back is
        then the uncompressed one, compression ``""``), else from its start.
        """
        compression = self.compression
        if offset and self._blocks is not None:
            self._drop_readahead()  # a jump inside a file: fetch from there
        if self._blocks is None:
            base = offset
            if offset and compression == "auto":
                source = self._sources[k]
                assert isinstance(source, str)  # a remote reader's sources are all URLs
                fs, path = url_to_fs(source)
                compression = detect_compression(fs.cat_file(path, start=0, end=HEADER_BYTES))
            chunk = max(self.chunk_size if self.block_size is None else self.block_size, 64)
            if compression and offset:
                resumed = self._resume_at_checkpoint(k, offset, chunk)
                if resumed is not None:
                    return resumed, ""
            if compression:
                base = 0
            self._blocks = self._blocks_from(k, base, chunk)
        return self._blocks.stream(k), compression

    def _blocks_from(self, k: int, base: int, chunk: int) -> RemoteBlocks:
        return RemoteBlocks(
            self._sources,
            k,
            base,
            block_size=chunk,
            window=max(1, self.readahead // chunk),
            concurrency=self.concurrency,
        )

    def _resume_at_checkpoint(self, k: int, offset: int, chunk: int):
        """The uncompressed stream of compressed object ``k`` from ``offset``, inflated from the checkpoint
        before it with the blocks fetched from there on, when the object has a valid checkpoint index
        (never built here); else None."""
        from tfrx.io._streams import existing_checkpoint_index
        from tfrx.io.inflate_index import CheckpointStream

        source = self._sources[k]
        assert isinstance(source, str)  # a remote reader's sources are all URLs
        index = existing_checkpoint_index(source)
        if index is None:
            return None
        if offset > index.records.file_size:
            return None  # past the end: the ordinary path says so
        point = int(np.searchsorted(index.out_offsets, offset, side="right")) - 1
        self._blocks = self._blocks_from(k, int(index.points["inp"][point]), chunk)
        return CheckpointStream(source, index, offset, file=_Forward(self._blocks.stream(k), self._blocks.base(k)))

    def _drop_pending(self) -> None:
        self._pending = None
        self._pending_list = []
        self._pending_i = 0

    def _current(self) -> FileScanner | None:
        if self._closed:
            raise ValueError("I/O operation on a closed RecordReader")
        while self._scanner is None:
            if self._file_index >= len(self._sources):
                return None
            start = self._next_start
            if start.file_index != self._file_index:
                start = RecordPosition(self._file_index, 0, 0)
            raw, compression = None, self.compression
            if self._use_readahead:
                raw, compression = self._remote_stream(self._file_index, start.offset)
            self._scanner = FileScanner(
                self._sources[self._file_index],
                raw=raw,
                compression=compression,
                verify=self.verify,
                on_error=self.on_error,
                chunk_size=self.chunk_size,
                stats=self.stats,
                start_offset=start.offset,
                record_index=start.record_index,
                end_offset=self._end_offset,
                use_mmap=self.use_mmap,
                record_bytes=self._record_bytes,
                stride=self._stride,
                skip=self._skip,
                buffers=self._buffers,
            )
            self.stats.files += 1
        return self._scanner

    def _next_file(self) -> None:
        if self._scanner is not None:
            self._record_bytes = self._scanner._record_bytes  # the next file's records are likely alike
            self._skip = self._scanner.skip  # the stride counts on across files
        self._drop_scanner()
        self._file_index += 1
        self._next_start = RecordPosition(self._file_index, 0, 0)

    # -------------------------------------------------------------- batches
    def read_batch(
        self, max_records: int | None = None, max_bytes: int | None = None, *, exact: bool = False
    ) -> RecordBatch | None:
        """The next records as one :class:`RecordBatch`, or ``None`` at the end.

        At most ``max_records`` records and, beyond the first record,
        ``max_bytes`` payload bytes; without limits, every complete record
        already buffered (a few MiB). A batch never spans two files.
        ``exact=True`` reads on until the batch has ``max_records`` records
        (or ``max_bytes``), in one buffer sized for it, so that it is short
        only where a file ends: whole batches without a copy, however many
        chunks they span.
        """
        mr = -1 if max_records is None else int(max_records)
        mb = -1 if max_bytes is None else int(max_bytes)
        if mr == 0:
            return RecordBatch(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
        if self._pending is not None and self._pending_i < len(self._pending):
            rest = self._pending[self._pending_i :]
            if mr >= 0 and len(rest) > mr:
                rest = rest[:mr]
            if mb >= 0 and len(rest) > 1:
                cum = np.cumsum(rest.lengths)
                rest = rest[: max(1, int(np.searchsorted(cum, mb, side="right")))]
            self._pending_i += len(rest)
            return rest
        self._drop_pending()
        while True:
            scanner = self._current()
            if scanner is None:
                return None
            batch = scanner.next_batch(mr, mb, exact)
            if batch is not None:
                return batch
            self._next_file()

    def iter_batches(
        self, max_records: int | None = None, max_bytes: int | None = None, *, exact: bool = False
    ) -> Iterator[RecordBatch]:
        """Yields :class:`RecordBatch` objects until every file is read (``exact``: see :meth:`read_batch`)."""
        while True:
            batch = self.read_batch(max_records, max_bytes, exact=exact)
            if batch is None:
                return
            yield batch

    # -------------------------------------------------------------- records
    def __iter__(self) -> RecordReader:
        return self

    def __next__(self) -> bytes:
        while self._pending_i >= len(self._pending_list):
            self._drop_pending()
            batch = self.read_batch()
            if batch is None:
                raise StopIteration
            self._pending = batch
            self._pending_list = _native.split_records(batch.data, batch.starts, batch.lengths)
        record = self._pending_list[self._pending_i]
        self._pending_i += 1
        return record

    def read_all(self) -> list[bytes]:
        """Every remaining record as a list of ``bytes``."""
        return list(self)

    # -------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Closes the open file; ``position`` still reports where reading stopped."""
        if not self._closed:
            self._next_start = self.position
            self._skip = self.stride[1]
        self._drop_scanner()
        self._drop_readahead()
        self._drop_pending()
        self._closed = True

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._drop_scanner()
            self._drop_readahead()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"RecordReader({len(self._sources)} files, compression={self.compression!r}, position={self.position})"


def _check_stride(stride) -> tuple[int, int]:
    """``(n, i)`` of a ``stride`` argument, checked (``(1, 0)`` for ``None``)."""
    if stride is None:
        return (1, 0)
    try:
        n, i = stride
    except (TypeError, ValueError):
        raise TypeError(f"stride must be a pair (n, i), got {stride!r}") from None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"stride: n must be a positive int, got {n!r}")
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
        raise ValueError(f"stride: i must be in [0, {n}), got {i!r}")
    return (n, i)


def read_records(
    paths: Source | Iterable[Source],
    *,
    compression="auto",
    verify: bool = True,
    on_error: str = "raise",
    storage_options: dict | None = None,
    require_all_shards: bool = True,
) -> Iterator[bytes]:
    """Yields every record of the TFRecord files ``paths`` as ``bytes``.

    See :class:`RecordReader` for the arguments; this is the one-shot form.
    ``storage_options`` go to the fsspec filesystem of URLs.
    """
    reader = RecordReader(
        paths,
        compression=compression,
        verify=verify,
        on_error=on_error,
        storage_options=storage_options,
        require_all_shards=require_all_shards,
    )
    return _iterate(reader)


def _iterate(reader: RecordReader) -> Iterator[bytes]:
    with reader:
        yield from reader
