"""The records of one file, read into buffers and walked by the native framing scanner.

A file is read in chunks of a few MiB into buffers from the process's read
pool (``io/_buffer_pool.py``) and walked by ``_native.scan_records`` (GIL
released), which checks both CRCs of every record. Complete records leave as
:class:`~tfrx.io._batch.RecordBatch` views of bytes that the scanner never
writes to again; the incomplete tail of a chunk is copied into the next
buffer. ``next_batch(n, exact=True)`` sizes the buffer for a whole batch of
``n`` records instead, after a small first read (``_PROBE``) has told the
record sizes, so that a batch's buffer is not grown (and copied) once most
of it is read; the reads that complete a batch go after the buffered bytes
where its buffer has room (past everything handed out). A record larger
than a chunk grows the buffer only after its length CRC has validated, and
only up to the bytes that really exist. After damage, ``on_error="skip"``
searches on byte by byte (``_native.find_header``) and never trusts a
damaged length to step over bytes (``io/_damage.py`` counts what is skipped).

A strided scanner (``stride`` > 1, ``RecordReader(stride=...)``) keeps every
``stride``-th record, the first after ``skip``: the records it drops are
stepped over on their length (whose CRC is checked) and their data CRCs are
never computed. Where the file allows positioned reads (a local uncompressed
file, ``on_error="raise"``) and its records are large (``_HOP_RECORD_BYTES``),
it reads only the 12-byte headers of the records it drops
(``_native.walk_records``) and then the kept records alone
(``_native.gather_records``, which checks their CRCs), so the payloads of
dropped records are never read. With ``on_error="skip"`` or ``"warn"`` every
record is checked, so that the records kept are every ``stride``-th intact
one, as a ``shard`` of the records delivered would keep.
"""

from __future__ import annotations

import io
import os
import threading
import warnings
from collections import OrderedDict

import numpy as np

from tfrx import _native
from tfrx._native import ScanStatus
from tfrx.errors import CorruptRecordError, CorruptRecordWarning
from tfrx.io._batch import RecordBatch
from tfrx.io._buffer_pool import READ_BUFFERS
from tfrx.io._compression import DecompressingReader
from tfrx.io._damage import DamageRegions, looks_compressed, record_error, stream_break_error
from tfrx.io._framing import FRAMING_BYTES, HEADER_BYTES
from tfrx.io._paths import Source, open_input, source_name
from tfrx.io._positions import ReaderStats
from tfrx.io._streams import map_file, open_stream, readinto

__all__ = ["FileScanner"]

_PROBE = 256 << 10  # bytes first read by ``next_batch(exact=True)`` while record sizes are unknown
# A strided scan reads only the headers of the records it drops once records take at least this many
# bytes: one positioned read of a header costs about what copying ~8 KiB from the page cache does.
_HOP_RECORD_BYTES = 16 << 10


class FileScanner:
    """Reads the records of one file (one uncompressed or compressed stream)."""

    def __init__(  # noqa: PLR0913  the reader's options for one file, keyword-only
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
        stride: int = 1,
        skip: int = 0,
        buffers=None,
    ) -> None:
        self.name = source_name(source)
        self._buffers = buffers  # where read buffers come from (``take(nbytes, fresh)``), else malloc / the pool
        self._stride = stride
        self.skip = skip  # records to drop before the next one kept (strided scans)
        self._hopping = False  # reading only the headers of dropped records (``_next_hop_batch``)
        self._file_end = -1  # stream offset of the end of a local uncompressed file, where one can hop
        # The file's header offsets and lengths (``_file_headers``); False: not known, None: not looked up.
        self._headers: tuple[np.ndarray, np.ndarray] | bool | None = None
        # Whether this scan reads the whole file, when walking every header of it once costs no more than the
        # strided walks would (a part of it looks up the headers other scans walked, and walks its own part).
        self._whole_file = start_offset == 0 and end_offset is None
        self._verify = verify
        self._on_error = on_error
        self._chunk = max(int(chunk_size), 64)
        self._stats = stats
        self._end = end_offset
        self.record_index = record_index
        self._damage = DamageRegions(self.name, stats, on_error)
        self._finished = False
        self._buf = np.empty(0, dtype=np.uint8)
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
        positioned = raw is not None
        if raw is None:
            raw = open_input(source)
        self._owns = raw is not source
        self._raw = raw
        try:
            opened = open_stream(
                source, raw, compression, start_offset, name=self.name, owns=self._owns, positioned=positioned
            )
            self.compression = opened.compression
            self._stream = opened.stream
            self._remaining = opened.remaining
            if use_mmap and not self.compression and self._owns and self._remaining:
                self._map(start_offset)
            hop = stride > 1 and on_error == "raise" and not self.compression and not self._mapped
            if hop and self._owns and self._stream is raw and isinstance(raw, io.FileIO) and hasattr(os, "pread"):
                if self._remaining is not None:
                    self._file_end = start_offset + self._remaining
                    self._hopping = self._may_hop() or self._first_record_is_large(start_offset)
        except BaseException:
            self.close()
            raise

    def _map(self, start_offset: int) -> None:
        """Maps a local uncompressed file: batches become read-only views of the mapping."""
        if getattr(self._raw, "fileno", None) is None:
            return  # file objects and URLs are read normally
        self._buf = map_file(self._raw)
        self._base = 0
        self._lo = min(start_offset, self._buf.shape[0])
        self._hi = self._buf.shape[0]
        self._remaining = 0
        self._eof = True
        self._mapped = True

    def close(self) -> None:
        self._finished = True
        if isinstance(getattr(self, "_stream", None), DecompressingReader):
            self._stream.close_reopened()
        # Buffers (and a mapping) live on only in batches that view them; the pool takes buffers back then.
        self._buf = np.empty(0, dtype=np.uint8)
        if self._owns and self._raw is not None:
            self._raw.close()
        self._raw = None

    @property
    def offset(self) -> int:
        """Stream offset of the next unread record header."""
        return self._base + self._lo

    # -------------------------------------------------------------- buffering
    def _fill(self, need: int = 0, whole_chunk: bool = True, in_place: bool = False) -> bool:
        """Reads more bytes so that at least ``need`` more follow the buffered ones (a whole chunk at
        least, unless ``whole_chunk`` is false).

        The bytes go into a new buffer that the buffered bytes are copied to;
        with ``in_place`` (a batch being read whole), after the buffered ones
        in the same buffer where it has room (nothing handed out lies there).
        Chunks read one after another take new buffers: malloc hands back
        the one freed a chunk ago, whose pages are mapped already, where the
        second half of a buffer read in place would be fresh pages kept
        resident. Returns False (and sets eof) when nothing more could be
        read.
        """
        if self._io_error is not None:
            err, self._io_error = self._io_error, None
            raise err
        have = self._hi - self._lo
        extra = max(need, self._chunk) if whole_chunk else max(need, 1)
        if self._remaining is not None:
            extra = min(extra, self._remaining)
        elif need > self._chunk:
            # Unknown size: grow geometrically so a bogus length costs at most
            # about twice the bytes that really exist.
            extra = min(extra, max(have, self._chunk))
        if extra <= 0:
            self._eof = True
            return False
        room = self._buf.shape[0] - self._hi
        if in_place and room >= min(extra, max(need, 1)) and not self._mapped:
            return self._read(self._buf, self._hi, min(extra, room))
        target = have + extra
        # Room for two chunks, or for a whole batch (``exact``) and a little more: sizes vary a little.
        size = max(target + target // 8, 2 * self._chunk)
        new = self._take(target, size)
        new[:have] = self._buf[self._lo : self._hi]
        self._base += self._lo
        self._buf = new
        self._lo = 0
        self._hi = have
        return self._read(new, have, extra)

    def _take(self, nbytes: int, size: int) -> np.ndarray:
        """A buffer for ``nbytes`` bytes that nothing else refers to (``size`` bytes when made afresh)."""
        if self._buffers is not None:
            return self._buffers.take(nbytes, size)  # the caller's reusable buffers (parallel reads)
        if nbytes > 2 * self._chunk:
            return READ_BUFFERS.take(nbytes, size)  # whole batches: too large for malloc to keep when freed
        # Fresh memory is nobody else's; malloc hands back the buffer freed a chunk ago, with its pages
        # mapped (tfrx/memory.py), more cheaply than the pool's exporter is made.
        return np.empty(size, np.uint8)

    def _read(self, buf: np.ndarray, at: int, extra: int) -> bool:
        """Reads up to ``extra`` bytes into ``buf[at:]`` (``buf`` is ``self._buf``, ``at`` its end)."""
        view = memoryview(buf)[: at + extra]  # type: ignore[arg-type]  # numpy stubs: __buffer__ on 3.12+ only
        target = at + extra
        n = have = at
        io_error = None
        try:
            while n < target:
                k = readinto(self._stream, view[n:])
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
        self._hi = n
        if io_error is not None:
            if n == have:
                raise io_error
            self._io_error = io_error
        return n > have

    # -------------------------------------------------------------- damage
    def _close_region(self, end: int | None = None) -> None:
        """Ends the damaged region at ``end`` (default: the current offset): counts its records and bytes."""
        if self._damage.active:
            end = self.offset if end is None else min(end, self.offset)
            self.record_index += self._damage.close(end, self.record_index)

    def _problem(self, scan: _native.ScanResult) -> CorruptRecordError:
        compressed = ""
        first = scan.status == ScanStatus.LENGTH_CRC and self.offset == 0 and self.record_index == 0
        if scan.status != ScanStatus.DATA_CRC and not self.compression and self.offset == 0:
            compressed = looks_compressed(bytes(self._buf[self._lo : min(self._hi, self._lo + (64 << 10))]))
        searched = 0
        if first and not compressed and not self._damage.active:
            # The very first header is bad: when no header anywhere in what is buffered holds either,
            # the file is most likely not a TFRecord file at all, and skipping would find nothing.
            head = self._buf[self._lo : min(self._hi, self._lo + (4 << 20))]
            if _native.find_header(head, 1) < 0:
                searched = len(head)
        return record_error(
            scan,
            name=self.name,
            record_index=self.record_index,
            offset=self.offset,
            present=self._hi - self._lo + (self._remaining or 0),
            shrunk_by=self._shrunk_by,
            compressed=compressed,
            no_header_in=searched,
            head=bytes(self._buf[self._lo : min(self._hi, self._lo + 16)]) if searched else b"",
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

    def _note_break(self) -> None:
        """The compressed stream broke: raise, or report the break once (it opens a damaged region).

        Nothing after the break can be inflated, so unlike damage in a plain
        file it is reported under ``"skip"`` as well, as a warning.
        """
        assert self._stream_error is not None  # callers check it
        data_complete = bool(getattr(self._stream, "data_complete", False))
        err = stream_break_error(
            self._stream_error,
            name=self.name,
            record_index=self.record_index,
            offset=self.offset,
            lost=sum(r.records for r in self._stats.regions if r.path == self.name),
            partial=self._hi - self._lo,
            data_complete=data_complete,
        )
        self._stream_error = None
        if self._on_error == "raise":
            self._error = err
            raise err
        warned = False
        if not self._damage.active and (self._lo < self._hi or not data_complete):
            # What follows the last whole record is lost: one region, from there on.
            self._damage.open(err, self.offset)
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
        if not self._damage.active:
            err = self._problem(scan)
            if self._on_error == "raise" or err.kind == "compressed":  # a wrong option, not damage to skip
                self._error = err  # raised again by later reads: the damage is never stepped over silently
                raise err
            self._damage.open(err, self.offset)
        header_whole = scan.status != ScanStatus.LENGTH_CRC and self._hi - self._lo >= HEADER_BYTES
        if header_whole:
            self._damage.candidate(self.offset, scan.length)
        self._resync(self._lo + 1)

    # -------------------------------------------------------------- reading
    def _reserve(self, max_records: int, max_bytes: int) -> None:
        """Reads ahead so that the buffer likely holds a whole batch of ``max_records`` records
        (and ``max_bytes`` payload bytes): one read into one buffer, so the batch needs no copy."""
        if self._eof or self._mapped or self._record_bytes <= 0:
            return
        want = max_records * self._record_bytes * self._stride
        if max_bytes >= 0:
            want = min(want, (max_bytes + FRAMING_BYTES * max_records) * self._stride)
        want += 2 * self._largest  # room for records larger than the average
        have = self._hi - self._lo
        if want > have and want > self._chunk:
            self._fill(want - have, in_place=True)

    def _learn(self, count: int, consumed: int, largest: int) -> None:
        if count:
            self._record_bytes = -(-consumed // count)
            self._largest = max(self._largest, largest + FRAMING_BYTES)

    def _read_rest_of_batch(self, scan, max_records: int, max_bytes: int) -> bool:
        """For an exact batch: reads on (True) when ``scan`` stopped short of the batch only because the
        buffer ended, learning the record sizes on the way."""
        kept = len(scan.starts)
        self._learn(scan.walked, scan.consumed, int(scan.lengths.max()) if kept else 0)
        if self._may_hop():
            self._hopping = True  # the records scanned so far are read again, headers first
            return True
        short = scan.status in (ScanStatus.NEED_MORE, ScanStatus.END) and not self._eof
        if short and kept < max_records and (max_bytes < 0 or int(scan.lengths.sum()) < max_bytes):
            rest = (max_records - kept) * self._record_bytes * self._stride
            if max_bytes >= 0:  # no further than the payload bytes the batch may still take
                rest = min(rest, (max_bytes - int(scan.lengths.sum()) + FRAMING_BYTES * kept) * self._stride)
            rest += 2 * self._largest
            self._fill(max(int(scan.need), rest), in_place=True)
            return True
        return False

    def _after_empty_scan(self, scan, exact: bool) -> bool:
        """What a scan that found no record leads to: more bytes read, or a damaged region entered (True:
        scan again), or the end of the range (False)."""
        if scan.status == ScanStatus.LIMIT:  # stop_offset reached
            self._close_region(self._end)
            self._finished = True
            return False
        if scan.status == ScanStatus.NEED_MORE and not self._eof:
            if self._remaining is None or scan.need <= self._remaining:
                self._fill(scan.need, in_place=exact)
                return True
        if scan.status == ScanStatus.NEED_MORE and self._stream_error is not None and not self._damage.active:
            self._note_break()  # the record here is cut by the break: its region reports it
        # A damaged record, or one that needs bytes that do not exist. What was
        # inflated before a break is searched as a plain file that ends there.
        self._damaged(scan)
        return True

    def next_batch(self, max_records: int = -1, max_bytes: int = -1, exact: bool = False) -> RecordBatch | None:
        """The next records; ``exact`` reads on until ``max_records`` records (or ``max_bytes``) are
        buffered, so the batch is short only where the file (or a damaged region) ends."""
        if self._error is not None:
            raise self._error
        exact = exact and max_records > 0
        while not self._finished:
            if self._hopping:
                return self._next_hop_batch(max_records, max_bytes)
            if exact and self._lo < self._hi:
                self._reserve(max_records, max_bytes)
            elif exact and self._record_bytes <= 0 and not self._eof:
                # Sizes unknown: a small first read tells them, so that the batch's buffer is sized before
                # most of its bytes are read (growing a chunk's buffer would copy the chunk).
                self._fill(min(_PROBE, self._chunk), whole_chunk=False)
                continue
            if self._lo < self._hi:
                found = self._scan_buffered(max_records, max_bytes, exact)
                if found is True:
                    continue
                return found if isinstance(found, RecordBatch) else None
            if self._eof or not self._fill(self._chunk):
                if self._stream_error is not None:
                    self._note_break()
                self._close_region()
                self._finished = True
        return None

    def _scan_buffered(self, max_records: int, max_bytes: int, exact: bool) -> RecordBatch | bool:
        """The next batch from the buffered bytes, True to scan again (after reading more, stepping over
        dropped records, or entering damage), or False at the end of the range."""
        stop = -1
        if self._end is not None:
            stop = self._end - self.offset
            if stop <= 0:
                self._close_region(self._end)
                self._finished = True
                return False
        span = self._buf[self._lo : self._hi]
        if self._mapped and max_bytes < 0 and max_records < 0:
            max_bytes = self._chunk  # a mapped file still comes in chunk-sized batches
        scan = self._scan(span, max_records, max_bytes, stop)
        if scan.walked:
            if exact and self._read_rest_of_batch(scan, max_records, max_bytes):
                return True  # (the records scanned so far are scanned again: rare once sizes are known)
            batch = self._emit(scan)
            return True if batch is None else batch  # None: only records the stride drops
        return self._after_empty_scan(scan, exact)

    def _scan(self, span: np.ndarray, max_records: int, max_bytes: int, stop: int) -> _native.ScanResult:
        """The records of ``span`` the scanner keeps (all, or every ``stride``-th after ``skip``)."""
        stride = self._stride
        # Inside a damaged region a candidate counts only when its data CRC holds too.
        verify = self._verify or self._damage.active
        if stride == 1 or self._on_error != "raise":
            # Every record checked (under "skip" and "warn" the stride counts intact records); _emit strides.
            more = max_records * stride if max_records >= 0 else -1
            return _native.scan_records(span, verify, more, max_bytes * stride if max_bytes >= 0 else -1, stop)
        return _native.scan_records(span, verify, max_records, max_bytes, stop, stride, self.skip)

    def _emit(self, scan: _native.ScanResult) -> RecordBatch | None:
        """The records ``scan`` kept as a batch (None when it only stepped over records), consumed."""
        self._close_region()
        lo, consumed, walked, stride = self._lo, scan.consumed, scan.walked, self._stride
        starts, lengths = scan.starts, scan.lengths
        first = self.record_index + self.skip
        if stride > 1 and self._on_error != "raise":  # scanned whole: the stride's records of them
            starts, lengths = starts[self.skip :: stride], lengths[self.skip :: stride]
        self.record_index += walked
        self.skip = (self.skip - walked) % stride
        self._lo = lo + consumed
        n = len(starts)
        if not n:
            return None
        data = self._buf[lo : lo + consumed]
        if not self._mapped and consumed * 16 < self._buf.shape[0]:
            data = data.copy()  # a small batch must not pin a whole chunk in memory
        offsets = starts + (self._base + lo - HEADER_BYTES)
        batch = RecordBatch(
            data, starts, lengths, path=self.name, first_index=first, file_offsets=offsets, index_step=stride
        )
        self._stats.records += n
        self._stats.bytes += int(lengths.sum()) if stride > 1 else int(consumed) - FRAMING_BYTES * n
        if not self._hopping and self._file_end >= 0:  # a strided scan that may read headers alone from here
            self._learn(walked, consumed, int(lengths.max()))
            self._hopping = self._may_hop()
        return batch

    # -------------------------------------------------------------- strided reads of large records
    def _may_hop(self) -> bool:
        """Whether the records dropped by the stride are large enough to read only their headers."""
        return self._file_end >= 0 and self._record_bytes >= _HOP_RECORD_BYTES

    def _first_record_is_large(self, offset: int) -> bool:
        """Whether the record at ``offset`` is large enough to hop over (its header alone is read; a
        damaged one is left to the buffered scan, which reports it)."""
        if self._record_bytes > 0 or self._file_end - offset < HEADER_BYTES:
            return False
        assert self._raw is not None  # a hop-capable file is open
        header = os.pread(self._raw.fileno(), HEADER_BYTES, offset)
        framing = _native.scan_records(header + bytes(4), False)  # the length and its CRC, checked
        if framing.status != ScanStatus.NEED_MORE or framing.length + FRAMING_BYTES < _HOP_RECORD_BYTES:
            return False
        self._record_bytes = int(framing.length) + FRAMING_BYTES
        return True

    def _next_hop_batch(self, max_records: int, max_bytes: int) -> RecordBatch | None:
        """The next records kept, read alone: the headers of those dropped, then the kept ones whole."""
        assert self._raw is not None  # hopping is only set on an open local file
        fd = self._raw.fileno()
        offset = self.offset
        stop = -1 if self._end is None else max(self._end - offset, 0)
        if max_records < 0 and max_bytes < 0:
            max_bytes = self._chunk  # batches of about a chunk, as the buffered reads give
        walk: _Walk | _native.ScanResult | None = self._known_headers(fd, offset, max_records, max_bytes, stop)
        if walk is None:
            walk = _native.walk_records(
                fd, offset, self._file_end, max_records, max_bytes, stop, self._stride, self.skip
            )
        # Nothing buffered is used from here on: the next read starts at the walk's end.
        self._buf = np.empty(0, dtype=np.uint8)
        self._base, self._lo, self._hi = offset + walk.consumed, 0, 0
        first = self.record_index + self.skip
        self.record_index += walk.walked
        self.skip = (self.skip - walk.walked) % self._stride
        n = len(walk.starts)
        if n:
            return self._gather(fd, walk.starts, walk.lengths, first)
        if walk.status in (ScanStatus.END, ScanStatus.LIMIT):
            self._finished = True
            return None
        present = self._file_end - self.offset
        assert isinstance(walk, _native.ScanResult)  # known headers end at the end of the file
        self._error = record_error(
            walk, name=self.name, record_index=self.record_index, offset=self.offset, present=present
        )
        raise self._error

    def _file_headers(self, fd: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The header offsets and lengths of every record of the file: from the process's cache, else
        walked once (all headers, as the strided walks of a whole-file scan would read them) and kept
        there; None for a file too large to keep or damaged (the strided walk then reports the damage
        where it lies), and for a scan of a part of the file that no other scan walked."""
        if self._headers is None:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            self._headers = _HEADER_CACHE.get(key) or False
            small = st.st_size // max(self._record_bytes, 1) < _CACHED_RECORDS
            if not self._headers and self._whole_file and st.st_size == self._file_end and small:
                walk = _native.walk_records(fd, 0, st.st_size)
                if walk.status == ScanStatus.END:
                    self._headers = (walk.starts, walk.lengths)
                    _HEADER_CACHE.put(key, self._headers)
        return self._headers if isinstance(self._headers, tuple) else None

    def _known_headers(self, fd: int, offset: int, max_records: int, max_bytes: int, stop: int) -> _Walk | None:
        """What ``walk_records`` would find from ``offset``, from the file's known headers (None: unknown)."""
        headers = self._file_headers(fd)
        if headers is None:
            return None
        offsets, lengths = headers
        count = len(offsets)
        i0 = int(np.searchsorted(offsets, offset))
        if i0 < count and int(offsets[i0]) != offset:
            return None  # not a record boundary of the file as it was walked
        last = count if stop < 0 else int(np.searchsorted(offsets, offset + stop))  # records that may be walked
        kept = np.arange(i0 + self.skip, last, self._stride)
        limited = max_records >= 0 and len(kept) > max_records
        if limited:
            kept = kept[:max_records]
        if max_bytes >= 0 and len(kept) > 1:
            fit = max(1, int(np.searchsorted(np.cumsum(lengths[kept]), max_bytes, side="right")))
            limited = limited or fit < len(kept)
            kept = kept[:fit]
        end = int(kept[-1]) + 1 if limited else last
        status = ScanStatus.END if end == count else ScanStatus.LIMIT
        stop_at = int(offsets[end]) if end < count else self._file_end
        return _Walk(status, offsets[kept], lengths[kept], stop_at - offset, end - i0)

    def _gather(self, fd: int, offsets: np.ndarray, lengths: np.ndarray, first: int) -> RecordBatch:
        """The records whose headers are at ``offsets`` read into one buffer, their framing and CRCs checked."""
        starts = np.zeros(len(lengths), np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        total = int(starts[-1] + lengths[-1])
        out = self._take(total, total)
        result = _native.gather_records(fd, offsets, lengths, starts, out, self._verify)
        if result.status != _native.GatherStatus.OK:
            k = int(result.index)
            err = self._gather_error(result, int(offsets[k]), first + k * self._stride, int(lengths[k]))
            if isinstance(err, CorruptRecordError):
                self._error = err  # raised again by later reads; a failed read may be retried
            raise err
        data = out[:total]
        self._stats.records += len(lengths)
        self._stats.bytes += total
        return RecordBatch(
            data, starts, lengths, path=self.name, first_index=first, file_offsets=offsets, index_step=self._stride
        )

    def _gather_error(self, result, offset: int, record: int, length: int) -> OSError | CorruptRecordError:
        status, expected, actual = result.status, int(result.expected), int(result.actual)
        if status == _native.GatherStatus.IO:
            return OSError(actual, f"reading {self.name!r} at byte {offset} failed: {os.strerror(actual)}")
        if status in (_native.GatherStatus.DATA_CRC, _native.GatherStatus.LENGTH_CRC):
            kind = ScanStatus.DATA_CRC if status == _native.GatherStatus.DATA_CRC else ScanStatus.LENGTH_CRC
            scan = _GatherScan(kind, length, expected, actual)
            return record_error(scan, name=self.name, record_index=record, offset=offset, present=length)  # type: ignore[arg-type]  # the fields of a ScanResult it reads
        # The header read a moment ago is no longer there: the file shrank or was rewritten while being read.
        return CorruptRecordError(
            f"{self.name!r} changed while it was read: record {record} at byte {offset} no longer holds the "
            f"{length} data bytes its header claimed a moment before; read the file again once it is no "
            "longer being written",
            path=self.name,
            record_index=record,
            offset=offset,
            kind="truncated",
            expected=length,
            actual=actual,
        )


class _Walk:
    """What ``_native.walk_records`` returns, as the known headers of a file give it."""

    __slots__ = ("status", "starts", "lengths", "consumed", "walked")

    def __init__(self, status: ScanStatus, starts: np.ndarray, lengths: np.ndarray, consumed: int, walked: int) -> None:
        self.status, self.starts, self.lengths, self.consumed, self.walked = status, starts, lengths, consumed, walked


class _HeaderCache:
    """The header offsets and lengths of files strided scanners walked whole, for the process: a later
    pass over a file (the next epoch, another shard in the same process) reads none of its headers
    again. Keyed by the file's identity (device, inode, size, modification time); the records read
    through it are still checked (length field, length CRC, data CRC) as they are read. At most
    ``max_records`` records' worth (16 bytes each), the least recently used files dropped first."""

    def __init__(self, max_records: int) -> None:
        self.max_records = max_records
        self._files: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._records = 0
        self._lock = threading.Lock()
        if hasattr(os, "register_at_fork"):  # a child forked while another thread held the lock
            os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple[np.ndarray, np.ndarray] | None:
        with self._lock:
            found = self._files.get(key)
            if found is not None:
                self._files.move_to_end(key)
            return found

    def put(self, key: tuple, headers: tuple[np.ndarray, np.ndarray]) -> None:
        with self._lock:
            if key in self._files:
                return
            self._files[key] = headers
            self._records += len(headers[0])
            while self._records > self.max_records and len(self._files) > 1:
                _, dropped = self._files.popitem(last=False)
                self._records -= len(dropped[0])


_CACHED_RECORDS = 1 << 20  # 16 MiB of offsets and lengths
_HEADER_CACHE = _HeaderCache(_CACHED_RECORDS)


class _GatherScan:
    """What ``record_error`` reads of a scan, for damage that ``gather_records`` found."""

    __slots__ = ("status", "length", "expected", "actual")

    def __init__(self, status: ScanStatus, length: int, expected: int, actual: int) -> None:
        self.status, self.length, self.expected, self.actual = status, length, expected, actual
