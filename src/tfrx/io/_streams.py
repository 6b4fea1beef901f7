"""Opening one file's record stream: compression sniffed or given, a start offset reached.

``open_stream`` returns the stream a scanner reads a file's uncompressed
bytes from (the raw file, or an inflater over it) positioned at the start
offset; ``map_file`` maps a local uncompressed file instead.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfrx import _native
from tfrx.errors import TfrxError
from tfrx.io._compression import DecompressingReader, detect_compression, shows_compressed_stream
from tfrx.io._framing import HEADER_BYTES
from tfrx.io.inflate_index import CheckpointStream, _read_head, load_inflate_index
from tfrx.io._paths import is_url, local_size, open_input

__all__ = ["OpenedStream", "open_stream", "map_file", "readinto"]

_SNIFF = 4096  # bytes read to confirm a compression guessed from the first two


def readinto(stream, view: memoryview) -> int:
    """Reads into ``view`` (``readinto`` when the stream has it); the bytes read, 0 at the end."""
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        n = readinto(view)
        return n or 0
    data = stream.read(len(view))
    view[: len(data)] = data
    return len(data)


class _Prefixed:
    """A stream with some already-read bytes put back in front of it."""

    def __init__(self, head: bytes, raw) -> None:
        self._head = head
        self._raw = raw

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size is None or size < 0:
                data, self._head = self._head + (self._raw.read() or b""), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._raw.read(size)

    def readinto(self, buf) -> int:
        view = memoryview(buf).cast("B")
        if self._head:
            n = min(len(self._head), len(view))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return readinto(self._raw, view)


def _plain_after_all(head: bytes, compression: str) -> bool:
    """A plain file whose damaged first header only looks like a gzip/zlib header.

    Taken as plain only when nothing in the head shows a compressed stream
    (:func:`tfrx.io._compression.shows_compressed_stream`) and a TFRecord header
    with a valid length CRC lies in it as it is (a chance match in compressed
    bytes is a 2^-32 event per position). A damaged compressed stream stays
    compressed, so its damage is reported as such and naming the compression
    changes nothing.
    """
    if shows_compressed_stream(head, compression):
        return False
    return _native.find_header(np.frombuffer(head, dtype=np.uint8), 1) >= 0


def _can_seek(raw) -> bool:
    try:
        return bool(raw.seekable())
    except (AttributeError, OSError, ValueError):
        return False


@dataclass
class OpenedStream:
    """A file's record stream: ``compression`` as found, ``remaining`` its uncompressed bytes left
    from the start offset on (``None``: unknown, as for compressed streams and pipes)."""

    stream: Any  # a file object, or a DecompressingReader over one
    compression: str
    remaining: int | None


def _resume_at_checkpoint(source, raw, compression: str, start_offset: int, owns: bool) -> OpenedStream | None:
    """The stream of a local compressed file from ``start_offset``, started at the checkpoint before it,
    when the file has a valid checkpoint index (never built here); else None."""
    if not (start_offset and owns and isinstance(source, (str, os.PathLike))) or is_url(os.fspath(source)):
        return None
    index = existing_checkpoint_index(os.fsdecode(os.fspath(source)))
    if index is None:
        return None
    return OpenedStream(CheckpointStream(source, index, start_offset, file=raw), compression, None)


def existing_checkpoint_index(path: str):
    """The valid checkpoint index of the compressed file or object ``path`` (never built here), or None."""
    try:
        return load_inflate_index(path, build=False)
    except (OSError, TfrxError):
        return None


def _inflating_stream(
    source, raw, head: bytes, compression: str, start_offset: int, *, name: str | None, owns: bool
) -> OpenedStream:
    """:func:`open_stream` for a compressed stream (``head``: its first bytes, already read from ``raw``)."""
    if head and _can_seek(raw):
        # Put the sniffed bytes back by seeking: the inflater may need to seek back after damage.
        raw.seek(raw.tell() - len(head))
        head = b""
    resumed = _resume_at_checkpoint(source, raw, compression, start_offset, owns)
    if resumed is not None:
        return resumed
    reopen = None
    if isinstance(source, (str, os.PathLike)):
        reopen = lambda: open_input(source)  # read again after damage (remote readahead)
    stream = DecompressingReader(_Prefixed(head, raw) if head else raw, compression, name=name, reopen=reopen)
    if start_offset:
        skipped = stream.skip(start_offset)
        if skipped < start_offset:
            raise ValueError(
                f"start offset {start_offset} lies past the end of {name!r} ({skipped} uncompressed bytes)"
            )
    return OpenedStream(stream, compression, None)


def open_stream(
    source, raw, compression: str, start_offset: int, *, name: str | None, owns: bool, positioned: bool
) -> OpenedStream:
    """The record stream of ``source`` read through ``raw``, positioned at ``start_offset``.

    ``compression``: ``"auto"`` sniffs the first bytes; ``owns``: ``raw`` was
    opened here (else it is the caller's file object, read from where it
    stands); ``positioned``: ``raw`` already stands at ``start_offset`` when
    the file is uncompressed (remote readahead).
    """
    start = 0
    if positioned and start_offset and not compression:
        return OpenedStream(raw, "", None)
    if not owns:
        try:
            start = raw.tell()
        except (OSError, AttributeError, ValueError):
            start = 0
    head = b""
    if compression == "auto":
        head = _read_head(raw, HEADER_BYTES)
        compression = detect_compression(head)
        if compression:
            head += _read_head(raw, _SNIFF - len(head))
            if _plain_after_all(head, compression):
                compression = ""
    if compression:
        return _inflating_stream(source, raw, head, compression, start_offset, name=name, owns=owns)
    size = local_size(source)
    seekable = size is not None and getattr(raw, "seekable", lambda: False)()
    if seekable:
        raw.seek(start + start_offset)
        plain = raw
    else:
        plain = _Prefixed(head, raw) if head else raw
        left = start_offset
        while left > 0:
            data = plain.read(min(left, 1 << 22))
            if not data:
                raise ValueError(f"start offset {start_offset} lies past the end of {name!r}")
            left -= len(data)
    return OpenedStream(plain, "", None if size is None else max(size - start - start_offset, 0))


def map_file(raw) -> np.ndarray:
    """A read-only ``uint8`` array over a memory mapping of the open local file ``raw`` (which keeps
    the mapping alive: batches that view it outlive the reader)."""
    fileno = raw.fileno()
    mapped = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
    if hasattr(mapped, "madvise"):
        mapped.madvise(mmap.MADV_SEQUENTIAL)
    return np.frombuffer(mapped, dtype=np.uint8)
