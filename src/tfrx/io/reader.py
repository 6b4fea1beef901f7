"""Reading TFRecord files: ``read_records`` and ``RecordReader``.

Files are read in chunks of a few MiB into fresh NumPy buffers and walked by
the native framing scanner (``_native.scan_records``, GIL released), which
checks both CRCs of every record. Complete records leave as
:class:`~tfrx.io.batch.RecordBatch` views of a chunk that the reader never
writes to again; the incomplete tail of a chunk is copied into the next one.
``read_batch(n, exact=True)`` sizes the buffer for a whole batch of ``n``
records instead. Buffers are reused once no batch refers to them, also by
the next reader once this one is closed.
A record larger than a chunk grows the buffer only after its length CRC has
validated, and only up to the bytes that really exist. After damage,
``on_error="skip"`` searches on byte by byte (``_native.find_header``) and
never trusts a damaged length to step over bytes.
"""

from __future__ import annotations

import mmap
import sys
import threading
import warnings
import zlib
from collections.abc import Iterable, Iterator
import os
from dataclasses import dataclass, field

import numpy as np

from tfrx import _native
from tfrx._native import ScanStatus
from tfrx.errors import CorruptRecordError, CorruptRecordWarning
from tfrx.io.batch import RecordBatch
from tfrx.io.compression import DecompressingReader, detect_compression
from tfrx.io.framing import FRAMING_BYTES, HEADER_BYTES
from tfrx.io.paths import Source, expand_paths, is_url, local_size, open_input, source_name, url_to_fs
from tfrx.io.readahead import DEFAULT_READAHEAD, RemoteBlocks
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
# A length field this large (128 TiB) cannot describe a real record; a shorter
# one that runs past the end of the file is reported as truncation.
_BOGUS_LENGTH = 1 << 47
_SKIP_HINT = 'pass on_error="skip" to skip corrupt records'


@dataclass(frozen=True)
class RecordPosition:
    """Where a reader stands: the next record to read.

    ``file_index`` indexes the reader's expanded file list, ``offset`` is the
    byte offset of the next record's header in the file's uncompressed
    stream, ``record_index`` is that record's index within the file.
    ``to_dict()`` / ``from_dict()`` give a JSON-serialisable form.
    """

    file_index: int = 0
    offset: int = 0
    record_index: int = 0

    def to_dict(self) -> dict:
        """A JSON-serialisable form; :meth:`from_dict` reads it back."""
        return {"file_index": self.file_index, "offset": self.offset, "record_index": self.record_index}

    @classmethod
    def from_dict(cls, state) -> RecordPosition:
        if isinstance(state, RecordPosition):
            return state
        if isinstance(state, (tuple, list)):
            return cls(*(int(v) for v in state))
        return cls(int(state["file_index"]), int(state["offset"]), int(state.get("record_index", 0)))


@dataclass(frozen=True)
class DamagedRegion:
    """A byte range of a file's (uncompressed) stream that held no verifiable record.

    ``start`` is where the damage was met (a record boundary), ``end`` where the
    next record whose length CRC and data CRC both verify starts (or where the
    stream ends); ``first_record`` is the index the region's first record had,
    ``records`` how many records the region is counted as (see
    ``docs/reliability.md``); ``error`` is the problem met at ``start``.
    """

    path: str | None
    start: int
    end: int
    first_record: int
    records: int
    error: CorruptRecordError


@dataclass
class ReaderStats:
    """Counters of a reader: records and payload bytes read, damage skipped."""

    records: int = 0
    bytes: int = 0
    files: int = 0
    skipped_records: int = 0
    skipped_bytes: int = 0
    errors: list = field(default_factory=list)  # the CorruptRecordError of each region and stream break
    regions: list = field(default_factory=list)  # a DamagedRegion for each skipped region


def _readinto(stream, view: memoryview) -> int:
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
        return _readinto(self._raw, view)


_SNIFF = 4096  # bytes read to confirm a compression guessed from the first two


def _read_up_to(raw, n: int) -> bytes:
    head = b""
    while len(head) < n:
        more = raw.read(n - len(head))
        if not more:
            break
        head += more
    return head


def _plain_after_all(head: bytes, compression: str) -> bool:
    """A plain file whose damaged first header only looks like a gzip/zlib header.

    Taken as plain when the head does not inflate and a TFRecord header
    with a valid length CRC follows in it (a chance match in compressed
    bytes is a 2^-32 event per position); a damaged compressed stream has
    no such header and stays compressed, so its damage is reported as such.
    """
    try:
        zlib.decompressobj(31 if compression == "GZIP" else 15).decompress(head)
        return False
    except zlib.error:
        return _native.find_header(np.frombuffer(head, dtype=np.uint8), 1) >= 0


def _can_seek(raw) -> bool:
    try:
        return bool(raw.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _free_refcount() -> int | None:
    """``sys.getrefcount`` of an array referenced only by a pool list, seen
    from a loop shaped like the one in ``_take_buffer``; ``None`` where the
    interpreter has no reference counts to go by (then chunks are never reused)."""
    if not hasattr(sys, "getrefcount"):
        return None
    pool = [np.empty(1, dtype=np.uint8)]
    for arr in pool:
        return sys.getrefcount(arr)
    return None


_UNREFERENCED = _free_refcount()


class _SpareBuffers:
    """Read buffers of closed readers, kept for the next reader of this process.

    A new reader (every pass over a dataset, every window of files) would
    otherwise take fresh memory, which costs a page fault per 4 KiB; with
    batches sized for whole batches of large records (tens of MiB) glibc
    also hands the freed buffers back to the system between readers. At most
    ``max_bytes`` are kept, only buffers nothing else refers to.
    """

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self._max = max_bytes
        self._lock = threading.Lock()
        self._arrays: list[np.ndarray] = []
        if hasattr(os, "register_at_fork"):  # a child forked while another thread held the lock
            os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._arrays = []

    # The lock is never waited for: ``give`` also runs from ``RecordReader.__del__``, which the
    # garbage collector may call inside ``take`` on the same thread. A busy list is passed by.
    def give(self, arr: np.ndarray) -> None:
        if not self._lock.acquire(blocking=False):
            return
        try:
            held = sum(a.shape[0] for a in self._arrays)
            if held + arr.shape[0] <= self._max:
                self._arrays.append(arr)
        finally:
            self._lock.release()

    def take(self, size: int) -> np.ndarray | None:
        """The smallest kept buffer of at least ``size`` bytes, or None."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            fits = [a for a in self._arrays if a.shape[0] >= size]
            if not fits:
                return None
            arr = min(fits, key=lambda a: a.shape[0])
            self._arrays = [a for a in self._arrays if a is not arr]
            return arr
        finally:
            self._lock.release()


_SPARE = _SpareBuffers()


def _hex(v) -> str:
    return f"0x{int(v):08x}"


class _FileScanner:
    """Reads the records of one file (one uncompressed or compressed stream)."""

    def __init__(
        self,
        source: Source,
        *,
        compression: str,
        verify: bool,
        on_error: str,
        chunk_size: int,
        stats: ReaderStats,
        start_offset: int = 0,
        record_index: int = 0,
        end_offset: int | None = None,
        use_mmap: bool = False,
        raw=None,
        record_bytes: int = 0,
    ) -> None:
        self.name = source_name(source)
        self._verify = verify
        self._on_error = on_error
        self._chunk = max(int(chunk_size), 64)
        self._stats = stats
        self._end = end_offset
        self.record_index = record_index
        self._in_damage = False
        self._region_start = 0  # stream offset where the current damaged region began
        self._region_error: CorruptRecordError | None = None
        self._chain_ends: dict[int, list[int]] = {}  # where a candidate header's length says the next one starts
        self._chain_starts: set[int] = set()  # candidate headers inside the region taken for record starts
        self._finished = False
        self._buf = np.empty(0, dtype=np.uint8)
        self._pool: list[np.ndarray] = []
        self._lo = 0
        self._hi = 0
        self._base = start_offset  # stream offset of _buf[0]
        self._eof = False
        self._mapped = False
        self._error: CorruptRecordError | None = None
        self._stream_error: CorruptRecordError | None = None
        self._io_error: OSError | None = None  # a read error held back until the records before it are out
        self._shrunk_by = 0  # bytes the file lost while being read
        self._record_bytes = record_bytes  # bytes a record takes (with framing), as seen so far
        self._largest = 0  # bytes the largest record seen took

        # ``raw``: an already opened stream (remote readahead), positioned at
        # ``start_offset`` when the file is uncompressed, else at its start.
        self._positioned = raw is not None
        if raw is None:
            raw = open_input(source)
        self._owns = raw is not source
        self._raw = raw
        try:
            self._open_stream(source, raw, compression, start_offset)
            if use_mmap and not self.compression:
                self._map_file(start_offset)
        except BaseException:
            self.close()
            raise

    # -------------------------------------------------------------- opening
    def _open_stream(self, source, raw, compression: str, start_offset: int) -> None:
        start = 0
        if self._positioned and start_offset and not compression:
            self.compression = ""
            self._stream = raw
            self._remaining = None
            return
        if not self._owns:
            try:
                start = raw.tell()
            except (OSError, AttributeError, ValueError):
                start = 0
        head = b""
        if compression == "auto":
            head = _read_up_to(raw, HEADER_BYTES)
            compression = detect_compression(head)
            if compression:
                head += _read_up_to(raw, _SNIFF - len(head))
                if _plain_after_all(head, compression):
                    compression = ""
        self.compression = compression
        if compression:
            if head and _can_seek(raw):
                # Put the sniffed bytes back by seeking: the inflater may need to seek back after damage.
                raw.seek(raw.tell() - len(head))
                head = b""
            reopen = None
            if isinstance(source, (str, os.PathLike)):
                reopen = lambda: open_input(source)  # read again after damage (remote readahead)
            stream = DecompressingReader(_Prefixed(head, raw) if head else raw, compression, name=self.name,
                                         reopen=reopen)
            if start_offset:
                skipped = stream.skip(start_offset)
                if skipped < start_offset:
                    raise ValueError(
                        f"start offset {start_offset} lies past the end of {self.name!r} "
                        f"({skipped} uncompressed bytes)"
                    )
            self._stream = stream
            self._remaining = None
            return
        size = local_size(source)
        seekable = size is not None and getattr(raw, "seekable", lambda: False)()
        if seekable:
            raw.seek(start + start_offset)
            self._stream = raw
        else:
            plain = _Prefixed(head, raw) if head else raw
            left = start_offset
            while left > 0:
                data = plain.read(min(left, 1 << 22))
                if not data:
                    raise ValueError(f"start offset {start_offset} lies past the end of {self.name!r}")
                left -= len(data)
            self._stream = plain
        self._remaining = None if size is None else max(size - start - start_offset, 0)

    def _map_file(self, start_offset: int) -> None:
        """Maps a local uncompressed file: batches become read-only views of the mapping."""
        fileno = getattr(self._raw, "fileno", None)
        if not self._owns or fileno is None or not self._remaining:
            return  # file objects, URLs and empty files are read normally
        size = os.fstat(fileno()).st_size
        mapped = mmap.mmap(fileno(), 0, access=mmap.ACCESS_READ)
        if hasattr(mapped, "madvise"):
            mapped.madvise(mmap.MADV_SEQUENTIAL)
        self._buf = np.frombuffer(mapped, dtype=np.uint8)  # keeps the mapping alive
        self._base = 0
        self._lo = min(start_offset, size)
        self._hi = size
        self._remaining = 0
        self._eof = True
        self._mapped = True

    def close(self) -> None:
        self._finished = True
        if isinstance(getattr(self, "_stream", None), DecompressingReader):
            self._stream.close_reopened()
        self._buf = np.empty(0, dtype=np.uint8)  # a mapping lives on only in batches that view it
        pool, self._pool = self._pool, []
        if _UNREFERENCED is not None:
            for arr in pool:  # (the loop shape _UNREFERENCED was measured in)
                if sys.getrefcount(arr) <= _UNREFERENCED and arr.shape[0] > 2 * self._chunk:
                    _SPARE.give(arr)  # (buffers of two chunks are cheap to take afresh; whole batches are not)
        if self._owns and self._raw is not None:
            self._raw.close()
        self._raw = None

    @property
    def offset(self) -> int:
        """Stream offset of the next unread record header."""
        return self._base + self._lo

    # -------------------------------------------------------------- buffering
    def _fill(self, need: int = 0) -> bool:
        """Reads more bytes so that at least ``need`` more follow the buffered ones.

        Returns False (and sets eof) when nothing more could be read.
        """
        if self._io_error is not None:
            err, self._io_error = self._io_error, None
            raise err
        have = self._hi - self._lo
        extra = max(need, self._chunk)
        if self._remaining is not None:
            extra = min(extra, self._remaining)
        elif need > self._chunk:
            # Unknown size: grow geometrically so a bogus length costs at most
            # about twice the bytes that really exist.
            extra = min(extra, max(have, self._chunk))
        if extra <= 0:
            self._eof = True
            return False
        target = have + extra
        new = self._take_buffer(target)
        new[:have] = self._buf[self._lo : self._hi]
        view = memoryview(new)[:target]  # type: ignore[arg-type]  # numpy stubs: __buffer__ on 3.12+ only
        n = have
        io_error = None
        try:
            while n < target:
                k = _readinto(self._stream, view[n:])
                if not k:
                    self._eof = True
                    break
                n += k
        except CorruptRecordError as e:
            # Reported once the records inflated before the damage are delivered.
            self._stream_error = e
            self._eof = True
        except OSError as e:
            # Keep the bytes read before the failure: the records they complete are
            # delivered first, and a retry after a transient error loses nothing.
            io_error = e
        if self._remaining is not None:
            self._remaining -= n - have
            if self._eof and self._remaining > 0:
                # The file ended before the size seen at open: it shrank while
                # being read. What is missing does not exist; say so in errors.
                self._shrunk_by = self._remaining
                self._remaining = 0
            if self._remaining <= 0:
                self._eof = True
        self._base += self._lo
        self._buf = new
        self._lo = 0
        self._hi = n
        if io_error is not None:
            if n == have:
                raise io_error
            self._io_error = io_error
        return n > have

    def _take_buffer(self, size: int) -> np.ndarray:
        """A buffer of at least ``size`` bytes that nobody else references.

        Fresh memory costs a page fault per 4 KiB, which would halve the read
        speed, so chunks are recycled once every batch viewing them is gone
        (the reference count tells; a batch still alive keeps its chunk out
        of the pool's reach, so data handed out is never overwritten).
        """
        pool = self._pool
        if _UNREFERENCED is not None:
            for arr in pool:
                if arr is not self._buf and arr.shape[0] >= size and sys.getrefcount(arr) <= _UNREFERENCED:
                    return arr
        spare = _SPARE.take(size) if _UNREFERENCED is not None and size > 2 * self._chunk else None
        if spare is not None:
            arr = spare
        else:
            # Room for two chunks, or for a whole batch (``exact``) and a little more: sizes vary a little.
            arr = np.empty(max(size + size // 8, 2 * self._chunk), dtype=np.uint8)
        if len(pool) < 3:
            pool.append(arr)
        else:
            for i in range(len(pool)):
                if pool[i] is not self._buf:
                    pool[i] = arr
                    break
        return arr

    def _compression_error(self, e: CorruptRecordError) -> CorruptRecordError:
        """The stream's error, saying how many records came before the break and what is lost."""
        n = self.record_index
        done = f"records 0 to {n - 1} were read" if n else "no record was read"
        lost = sum(r.records for r in self._stats.regions if r.path == self.name)
        if n and lost:
            done = f"records 0 to {n - 1} come before it ({lost} of them counted as damaged)"
        partial = self._hi - self._lo
        if not partial and getattr(self._stream, "data_complete", False):
            detail = f"{done} and verified: the data ended whole, only the stream's end check failed"
        else:
            cut = f" (its first {partial} bytes came before the break)" if partial else ""
            detail = (
                f"{done} before the break; record {n}{cut} and everything after the break cannot be recovered "
                "(a compressed stream cannot be resynchronised)"
            )
        return CorruptRecordError(
            f"{e}; {detail}",
            path=self.name,
            record_index=n,
            offset=e.offset if e.offset is not None else self.offset,
            kind="compression",
            compressed_offset=e.compressed_offset,
        )

    # -------------------------------------------------------------- errors
    def _report(self, err: CorruptRecordError) -> None:
        """Opens a damaged region at the current offset (skip / warn modes)."""
        self._stats.errors.append(err)
        if self._on_error == "warn":
            warnings.warn(CorruptRecordWarning(f"{err}; skipping to the next valid record"), stacklevel=4)
        self._in_damage = True
        self._region_start = self.offset
        self._region_error = err
        self._chain_ends = {}
        self._chain_starts = set()

    def _candidate(self, offset: int, length: int) -> None:
        """Notes a header inside a damaged region whose length CRC holds but whose record does not verify.

        Its length is never used to step over bytes; it only helps count the
        region's records: a candidate is taken for a record start when an
        earlier candidate's length ends exactly on it, or its own length ends
        exactly on another candidate or on the end of the region.
        """
        ends = self._chain_ends
        for stale in [e for e in ends if e < offset]:
            del ends[stale]
        sources = ends.pop(offset, None)
        if sources is not None:
            self._chain_starts.add(offset)
            self._chain_starts.update(sources)
        ends.setdefault(offset + FRAMING_BYTES + int(length), []).append(offset)

    def _close_region(self, end: int | None = None) -> None:
        """Ends the damaged region at ``end`` (default: the current offset): counts its records and bytes."""
        if not self._in_damage:
            return
        end = self.offset if end is None else min(end, self.offset)
        sources = self._chain_ends.get(end)
        if sources is not None:
            self._chain_starts.update(sources)
        self._chain_starts.discard(self._region_start)
        count = 1 + sum(1 for c in self._chain_starts if self._region_start < c < end)
        assert self._region_error is not None  # set with _in_damage
        self._stats.regions.append(
            DamagedRegion(self.name, self._region_start, end, self.record_index, count, self._region_error)
        )
        self._stats.skipped_records += count
        self._stats.skipped_bytes += end - self._region_start
        self.record_index += count
        self._in_damage = False
        self._region_error = None
        self._chain_ends = {}
        self._chain_starts = set()

    def _looks_compressed(self) -> str:
        """``"GZIP"`` / ``"ZLIB"`` when a stream read as uncompressed starts with bytes that inflate as one."""
        if self.compression or self.offset != 0:
            return ""
        head = bytes(self._buf[self._lo : min(self._hi, self._lo + (64 << 10))])
        kind = detect_compression(head)
        if not kind:
            return ""
        try:
            zlib.decompressobj(31 if kind == "GZIP" else 15).decompress(head, 1 << 16)
        except zlib.error:
            return ""  # a damaged first header that only starts like a compressed stream
        return kind

    def _problem(self, scan: _native.ScanResult) -> CorruptRecordError:
        status, length, expected, actual = scan.status, scan.length, scan.expected, scan.actual
        offset = self._base + self._lo
        where = f"in {self.name!r}, record {self.record_index} at byte {offset}"
        kind = self._looks_compressed() if status != ScanStatus.DATA_CRC else ""
        if kind:
            return CorruptRecordError(
                f"{self.name!r} looks {kind}-compressed but is read as uncompressed (compression \"\"): its first "
                f"bytes are a {kind} header, not a TFRecord length (length CRC expected {_hex(expected)}, got "
                f'{_hex(actual)}); read it with compression="{kind}" (compression_type="{kind}" for '
                f'TFRecordDataset, --compression {kind.lower()} on the command line), or leave the compression '
                f"out to detect it",
                path=self.name, record_index=self.record_index, offset=offset, kind="compressed",
                expected=expected, actual=actual,
            )
        if status == ScanStatus.LENGTH_CRC:
            return CorruptRecordError(
                f"length CRC mismatch {where} (expected {_hex(expected)}, got {_hex(actual)}); {_SKIP_HINT}",
                path=self.name, record_index=self.record_index, offset=offset, kind="length_crc",
                expected=expected, actual=actual,
            )
        if status == ScanStatus.DATA_CRC:
            return CorruptRecordError(
                f"data CRC mismatch {where} (data of {length} bytes at byte {offset + HEADER_BYTES}; "
                f"expected {_hex(expected)}, got {_hex(actual)}); {_SKIP_HINT}",
                path=self.name, record_index=self.record_index, offset=offset, kind="data_crc",
                expected=expected, actual=actual,
            )
        present = self._hi - self._lo + (self._remaining or 0)
        if present < HEADER_BYTES:
            detail = f"the file ends {present} bytes into the 12-byte header"
            expected_total = HEADER_BYTES
        else:
            expected_total = FRAMING_BYTES + length
            detail = f"the header claims {length} data bytes, so the record needs {expected_total} bytes, but only {present} remain"
        if self._shrunk_by:
            detail += f"; the file shrank by {self._shrunk_by} bytes while it was being read"
        kind = "bogus_length" if present >= HEADER_BYTES and length >= _BOGUS_LENGTH else "truncated"
        label = "impossible record length" if kind == "bogus_length" else "truncated record"
        return CorruptRecordError(
            f"{label} {where} ({detail}); {_SKIP_HINT}",
            path=self.name, record_index=self.record_index, offset=offset, kind=kind,
            expected=expected_total, actual=present,
        )

    def _resync(self, start: int) -> None:
        """Moves to the next header with a valid length CRC at or after buffer index ``start``.

        The caller then tries the whole record there; every byte position is
        tried in turn, so a record that starts inside bytes a damaged length
        claimed is still found.
        """
        while True:
            k = _native.find_header(self._buf[: self._hi], start)
            if k >= 0:
                self._lo = k
                return
            self._lo = max(start, self._hi - (HEADER_BYTES - 1))
            if self._eof or not self._fill(self._chunk):
                self._lo = self._hi
                return
            start = self._lo

    # -------------------------------------------------------------- reading
    def _reserve(self, max_records: int, max_bytes: int) -> None:
        """Reads ahead so that the buffer likely holds a whole batch of ``max_records`` records
        (and ``max_bytes`` payload bytes): one read into one buffer, so the batch needs no copy."""
        if self._eof or self._mapped or self._record_bytes <= 0:
            return
        want = max_records * self._record_bytes
        if max_bytes >= 0:
            want = min(want, max_bytes + FRAMING_BYTES * max_records)
        want += 2 * self._largest  # room for records larger than the average
        have = self._hi - self._lo
        if want > have and want > self._chunk:
            self._fill(want - have)

    def _learn(self, count: int, consumed: int, largest: int) -> None:
        if count:
            self._record_bytes = -(-consumed // count)
            self._largest = max(self._largest, largest + FRAMING_BYTES)

    def next_batch(self, max_records: int = -1, max_bytes: int = -1, exact: bool = False) -> RecordBatch | None:
        """The next records; ``exact`` reads on until ``max_records`` records (or ``max_bytes``) are
        buffered, so the batch is short only where the file (or a damaged region) ends."""
        if self._error is not None:
            raise self._error
        exact = exact and max_records > 0
        while not self._finished:
            if exact and self._lo < self._hi:
                self._reserve(max_records, max_bytes)
            if self._lo < self._hi:
                stop = -1
                if self._end is not None:
                    stop = self._end - self.offset
                    if stop <= 0:
                        self._close_region(self._end)
                        self._finished = True
                        return None
                span = self._buf[self._lo : self._hi]
                if self._mapped and max_bytes < 0 and max_records < 0:
                    max_bytes = self._chunk  # a mapped file still comes in chunk-sized batches
                # Inside a damaged region a candidate counts only when its data CRC holds too.
                scan = _native.scan_records(span, self._verify or self._in_damage, max_records, max_bytes, stop)
                if len(scan.starts):
                    if exact:
                        self._learn(len(scan.starts), scan.consumed, int(scan.lengths.max()))
                        short = scan.status in (ScanStatus.NEED_MORE, ScanStatus.END) and not self._eof
                        if short and len(scan.starts) < max_records and (max_bytes < 0 or int(scan.lengths.sum()) < max_bytes):
                            self._fill(max(int(scan.need), (max_records - len(scan.starts)) * self._record_bytes))
                            continue  # (the records scanned so far are scanned again: rare once sizes are known)
                    return self._emit(scan.starts, scan.lengths, scan.consumed)
                if scan.status == ScanStatus.LIMIT:  # stop_offset reached
                    self._close_region(self._end)
                    self._finished = True
                    return None
                if scan.status == ScanStatus.NEED_MORE and not self._eof:
                    if self._remaining is None or scan.need <= self._remaining:
                        self._fill(scan.need)
                        continue
                if scan.status == ScanStatus.NEED_MORE and self._stream_error is not None and not self._in_damage:
                    self._note_break()  # the record here is cut by the break: its region reports it
                # A damaged record, or one that needs bytes that do not exist. What was
                # inflated before a break is searched as a plain file that ends there.
                self._damaged(scan)
                continue
            if self._eof or not self._fill(self._chunk):
                if self._stream_error is not None:
                    self._note_break()
                self._close_region()
                self._finished = True
        return None

    def _note_break(self) -> None:
        """The compressed stream broke: raise, or report the break once (it opens a damaged region).

        Nothing after the break can be inflated, so unlike damage in a plain
        file it is reported under ``"skip"`` as well, as a warning.
        """
        assert self._stream_error is not None  # callers check it
        err = self._compression_error(self._stream_error)
        self._stream_error = None
        if self._on_error == "raise":
            self._error = err
            raise err
        warned = False
        if not self._in_damage and (self._lo < self._hi or not getattr(self._stream, "data_complete", False)):
            # What follows the last whole record is lost: one region, from there on.
            self._report(err)
            warned = self._on_error == "warn"
        else:
            self._stats.errors.append(err)
        if not warned:
            warnings.warn(CorruptRecordWarning(str(err)), stacklevel=5)

    def _damaged(self, scan: _native.ScanResult) -> None:
        """The record at the current offset does not verify: raise, or search on byte by byte.

        Nothing the damaged header claims is trusted to step over bytes: a
        length can be intact while bytes of its record were inserted or
        deleted, and stepping over it would lose the record after it.
        """
        if not self._in_damage:
            err = self._problem(scan)
            if self._on_error == "raise" or err.kind == "compressed":  # a wrong option, not damage to skip
                self._error = err  # raised again by later reads: the damage is never stepped over silently
                raise err
            self._report(err)
        header_whole = scan.status != ScanStatus.LENGTH_CRC and self._hi - self._lo >= HEADER_BYTES
        if header_whole:
            self._candidate(self.offset, scan.length)
        self._resync(self._lo + 1)

    def _emit(self, starts: np.ndarray, lengths: np.ndarray, consumed: int) -> RecordBatch:
        self._close_region()
        lo = self._lo
        data = self._buf[lo : lo + consumed]
        if not self._mapped and consumed * 16 < self._buf.shape[0]:
            data = data.copy()  # a small batch must not pin a whole chunk in memory
        offsets = starts + (self._base + lo - HEADER_BYTES)
        batch = RecordBatch(data, starts, lengths, path=self.name, first_index=self.record_index, file_offsets=offsets)
        n = len(starts)
        self.record_index += n
        self._lo = lo + consumed
        self._stats.records += n
        self._stats.bytes += int(consumed) - FRAMING_BYTES * n
        return batch


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

    ``readahead``: for URLs (``s3://``, ``gs://``, ...), how many bytes to
    fetch ahead of the reader, as concurrent range requests of
    ``chunk_size`` bytes that run on into the next objects of the list
    (default 32 MiB, ``0`` reads each object through one fsspec file, one
    request at a time). Record order and positions are the same either way.
    It applies when every source is a URL and no ``end_offset`` is given.

    Given a glob or several paths, the files must make up whole shard sets
    (every ``-NNNNN-of-MMMMM`` shard, nothing left by an interrupted
    commit), else :class:`tfrx.IncompleteShardSetError`;
    ``require_all_shards=False`` reads whatever is there. tfrx's own files
    (``.tfrx/``, indexes, manifests) are dropped from globs.

    Iterating yields ``bytes``; ``read_batch`` / ``iter_batches`` give
    :class:`tfrx.RecordBatch` objects without a Python object per record.
    The reader is a cursor: iteration continues from ``position``;
    ``seek()`` / ``reset()`` move it. Records read after ``start_offset``
    are numbered from 0 (the offset does not say how many records precede
    it); a ``start`` position carries the right index.
    """

    def __init__(
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
    ) -> None:
        check_on_error(on_error)
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
        if readahead is not None and int(readahead) < 0:
            raise ValueError(f"readahead must be >= 0 bytes, got {readahead!r}")
        self.readahead = DEFAULT_READAHEAD if readahead is None else int(readahead)
        self._use_readahead = remote and end_offset is None and self.readahead > 0
        self._blocks: RemoteBlocks | None = None
        self.stats = ReaderStats()
        self._scanner: _FileScanner | None = None
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
            return RecordPosition(
                self._file_index, int(self._pending.file_offsets[i]), self._pending.first_index + i
            )
        if self._scanner is not None:
            return RecordPosition(self._file_index, self._scanner.offset, self._scanner.record_index)
        return self._next_start

    def seek(self, position: RecordPosition | dict) -> None:
        """Continues reading at ``position`` (taken from ``position`` earlier)."""
        pos = RecordPosition.from_dict(position)
        if not 0 <= pos.file_index <= len(self._sources) or pos.offset < 0:
            raise ValueError(f"position {pos} is outside this reader's {len(self._sources)} files")
        self._drop_scanner()
        self._drop_readahead()
        self._drop_pending()
        self._file_index = pos.file_index
        self._next_start = pos

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
        from ``offset`` on, a compressed one from its start.
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
            if compression:
                base = 0
            chunk = max(self.chunk_size, 64)
            self._blocks = RemoteBlocks(
                self._sources, k, base, block_size=chunk, window=max(1, self.readahead // chunk)
            )
        return self._blocks.stream(k), compression

    def _drop_pending(self) -> None:
        self._pending = None
        self._pending_list = []
        self._pending_i = 0

    def _current(self) -> _FileScanner | None:
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
            self._scanner = _FileScanner(
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
            )
            self.stats.files += 1
        return self._scanner

    def _next_file(self) -> None:
        if self._scanner is not None:
            self._record_bytes = self._scanner._record_bytes  # the next file's records are likely alike
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
        paths, compression=compression, verify=verify, on_error=on_error, storage_options=storage_options,
        require_all_shards=require_all_shards,
    )
    return _iterate(reader)


def _iterate(reader: RecordReader) -> Iterator[bytes]:
    with reader:
        yield from reader
