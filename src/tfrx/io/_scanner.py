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
"""

from __future__ import annotations

import warnings

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


class FileScanner:
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
        if target > 2 * self._chunk:
            new = READ_BUFFERS.take(target, size)  # whole batches: too large for malloc to keep when freed
        else:
            # Fresh memory is nobody else's; malloc hands back the buffer freed a chunk ago, with its
            # pages mapped (tfrx/memory.py), more cheaply than the pool's exporter is made.
            new = np.empty(size, np.uint8)
        new[:have] = self._buf[self._lo : self._hi]
        self._base += self._lo
        self._buf = new
        self._lo = 0
        self._hi = have
        return self._read(new, have, extra)

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
        want = max_records * self._record_bytes
        if max_bytes >= 0:
            want = min(want, max_bytes + FRAMING_BYTES * max_records)
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
        self._learn(len(scan.starts), scan.consumed, int(scan.lengths.max()))
        short = scan.status in (ScanStatus.NEED_MORE, ScanStatus.END) and not self._eof
        if short and len(scan.starts) < max_records and (max_bytes < 0 or int(scan.lengths.sum()) < max_bytes):
            rest = (max_records - len(scan.starts)) * self._record_bytes + 2 * self._largest
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
            if exact and self._lo < self._hi:
                self._reserve(max_records, max_bytes)
            elif exact and self._record_bytes <= 0 and not self._eof:
                # Sizes unknown: a small first read tells them, so that the batch's buffer is sized before
                # most of its bytes are read (growing a chunk's buffer would copy the chunk).
                self._fill(min(_PROBE, self._chunk), whole_chunk=False)
                continue
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
                scan = _native.scan_records(span, self._verify or self._damage.active, max_records, max_bytes, stop)
                if len(scan.starts):
                    if exact and self._read_rest_of_batch(scan, max_records, max_bytes):
                        continue  # (the records scanned so far are scanned again: rare once sizes are known)
                    return self._emit(scan.starts, scan.lengths, scan.consumed)
                if not self._after_empty_scan(scan, exact):
                    return None
                continue
            if self._eof or not self._fill(self._chunk):
                if self._stream_error is not None:
                    self._note_break()
                self._close_region()
                self._finished = True
        return None

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
