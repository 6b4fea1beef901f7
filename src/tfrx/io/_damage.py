"""Damage in a record stream: the errors that name it, and the regions skipped over it.

A scanner that meets a record that does not verify either raises the error
made here or, under ``on_error="skip"`` / ``"warn"``, opens a damaged region
(:class:`DamageRegions`) and searches on byte by byte; the region closes at
the next record whose length and data CRCs both verify, and is counted in
the reader's :class:`~tfrx.io._positions.ReaderStats` as a
:class:`DamagedRegion` (see ``docs/reliability.md`` for how its records are
counted).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from tfrx import _native
from tfrx._native import ScanStatus
from tfrx.errors import CorruptRecordError, CorruptRecordWarning
from tfrx.io._compression import detect_compression, shows_compressed_stream
from tfrx.io._framing import FRAMING_BYTES, HEADER_BYTES
from tfrx.io._positions import ReaderStats

__all__ = ["DamagedRegion", "DamageRegions", "record_error", "stream_break_error", "looks_compressed"]

# A length field this large (128 TiB) cannot describe a real record; a shorter
# one that runs past the end of the file is reported as truncation.
_BOGUS_LENGTH = 1 << 47
_SKIP_HINT = 'pass on_error="skip" to skip corrupt records'


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


def _hex(v) -> str:
    return f"0x{int(v):08x}"


class DamageRegions:
    """The damaged region a scanner of file ``name`` is in, if any (skip / warn modes)."""

    def __init__(self, name: str | None, stats: ReaderStats, on_error: str) -> None:
        self.name = name
        self._stats = stats
        self._on_error = on_error
        self.active = False
        self._start = 0  # stream offset where the current region began
        self._error: CorruptRecordError | None = None
        self._chain_ends: dict[int, list[int]] = {}  # where a candidate header's length says the next one starts
        self._chain_starts: set[int] = set()  # candidate headers inside the region taken for record starts

    def open(self, err: CorruptRecordError, offset: int) -> None:
        """Opens a region at ``offset``, where ``err`` was met (warns under ``"warn"``)."""
        self._stats.errors.append(err)
        if self._on_error == "warn":
            # (4: the reader's read_batch, which called the scanner that called this)
            warnings.warn(CorruptRecordWarning(f"{err}; skipping to the next valid record"), stacklevel=4)
        self.active = True
        self._start = offset
        self._error = err
        self._chain_ends = {}
        self._chain_starts = set()

    def candidate(self, offset: int, length: int) -> None:
        """Notes a header inside the region whose length CRC holds but whose record does not verify.

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

    def close(self, end: int, record_index: int) -> int:
        """Ends the open region at stream offset ``end``; returns how many records it is counted as
        (0 when no region is open). ``record_index`` is the index of its first record."""
        if not self.active:
            return 0
        sources = self._chain_ends.get(end)
        if sources is not None:
            self._chain_starts.update(sources)
        self._chain_starts.discard(self._start)
        count = 1 + sum(1 for c in self._chain_starts if self._start < c < end)
        assert self._error is not None  # set with active
        self._stats.regions.append(DamagedRegion(self.name, self._start, end, record_index, count, self._error))
        self._stats.skipped_records += count
        self._stats.skipped_bytes += end - self._start
        self.active = False
        self._error = None
        self._chain_ends = {}
        self._chain_starts = set()
        return count


def looks_compressed(head: bytes) -> str:
    """``"GZIP"`` / ``"ZLIB"`` when ``head`` (a stream's first bytes) shows such a stream, damaged or not
    (:func:`tfrx.io._compression.shows_compressed_stream`), else ``""`` (a damaged first header that only
    starts like a compressed stream)."""
    kind = detect_compression(head)
    return kind if kind and shows_compressed_stream(head, kind) else ""


def record_error(
    scan: _native.ScanResult,
    *,
    name: str | None,
    record_index: int,
    offset: int,
    present: int,
    shrunk_by: int = 0,
    compressed: str = "",
    no_header_in: int = 0,
    head: bytes = b"",
    hint: str = _SKIP_HINT,
) -> CorruptRecordError:
    """The error for the record at stream ``offset`` that ``scan`` stopped on.

    The one place a scan status becomes an error, for the readers and the
    index alike. ``present``: the bytes of the stream from ``offset`` on;
    ``shrunk_by``: what the file lost while it was read; ``compressed``: the
    kind of compression the stream's first bytes show although it is read as
    uncompressed; ``no_header_in``: the first header is bad and no valid one
    starts in the stream's first ``no_header_in`` bytes (``head``: its first
    bytes); ``hint``: what the caller can do about damage (the readers'
    default: skip it with ``on_error``).
    """
    status, length, expected, actual = scan.status, scan.length, scan.expected, scan.actual
    where = f"in {name!r}, record {record_index} at byte {offset}"
    message = None
    if compressed:
        kind = "compressed"
        message = (
            f'{name!r} looks {compressed}-compressed but is read as uncompressed (compression ""): its first '
            f"bytes are a {compressed} header, not a TFRecord length (length CRC expected {_hex(expected)}, got "
            f'{_hex(actual)}); read it with compression="{compressed}" (compression_type="{compressed}" for '
            f"TFRecordDataset, --compression {compressed.lower()} on the command line), or leave the compression "
            f"out to detect it"
        )
    elif status == ScanStatus.LENGTH_CRC:
        kind = "length_crc"
        if no_header_in:
            message = _not_tfrecord(name, expected, actual, no_header_in, present, head, hint)
        else:
            message = f"length CRC mismatch {where} (expected {_hex(expected)}, got {_hex(actual)}); {hint}"
    elif status == ScanStatus.DATA_CRC:
        kind = "data_crc"
        message = (
            f"data CRC mismatch {where} (data of {length} bytes at byte {offset + HEADER_BYTES}; "
            f"expected {_hex(expected)}, got {_hex(actual)}); {hint}"
        )
    if message is not None:
        return CorruptRecordError(
            message, path=name, record_index=record_index, offset=offset, kind=kind, expected=expected, actual=actual
        )
    if present < HEADER_BYTES:
        detail = f"the file ends {present} bytes into the 12-byte header"
        expected_total = HEADER_BYTES
    else:
        expected_total = FRAMING_BYTES + length
        detail = f"the header claims {length} data bytes, so the record needs {expected_total} bytes, but only {present} remain"
    if shrunk_by:
        detail += f"; the file shrank by {shrunk_by} bytes while it was being read"
    kind = "bogus_length" if present >= HEADER_BYTES and length >= _BOGUS_LENGTH else "truncated"
    label = "impossible record length" if kind == "bogus_length" else "truncated record"
    return CorruptRecordError(
        f"{label} {where} ({detail}); {hint}",
        path=name,
        record_index=record_index,
        offset=offset,
        kind=kind,
        expected=expected_total,
        actual=present,
    )


# First bytes of formats a TFRecord reader is sometimes pointed at by mistake.
_MAGIC = (
    (b"BZh", "a bzip2-compressed file (TFRecord files are plain, GZIP or ZLIB)"),
    (b"\xfd7zXZ\x00", "an xz-compressed file (TFRecord files are plain, GZIP or ZLIB)"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file (TFRecord files are plain, GZIP or ZLIB)"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"PAR1", "a Parquet file (tfrx convert turns it into TFRecords)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"TFRXIDX\x00", "a tfrx index file"),
)


def _looks_like(head: bytes) -> str:
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return f"; it looks like {what}"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "; it looks like text" if text and all(c.isprintable() or c in "\t\r\n" for c in text) else ""


def _not_tfrecord(
    name: str | None, expected: int, actual: int, searched: int, present: int, head: bytes, hint: str
) -> str:
    whole = searched >= present
    where = "anywhere in it" if whole else f"in its first {searched} bytes"
    message = (
        f"{name!r} is not a TFRecord file: its first 12 bytes are not a record header (length CRC expected "
        f"{_hex(expected)}, got {_hex(actual)}) and no valid record header starts {where}{_looks_like(head)}; "
        "check the path (and the compression, if it is compressed)"
    )
    if hint != _SKIP_HINT:  # a caller that cannot skip (the index) gives its own advice
        return f"{message}; {hint}"
    if whole:
        return message + ' (on_error="skip" would read no record from it)'
    return message + '; if it is a TFRecord file whose start is damaged, pass on_error="skip" to read what follows'


def stream_break_error(
    e: CorruptRecordError,
    *,
    name: str | None,
    record_index: int,
    offset: int,
    lost: int,
    partial: int,
    data_complete: bool,
) -> CorruptRecordError:
    """A compressed stream's error ``e``, saying how many records came before the break and what is lost.

    ``record_index``: the records delivered before it; ``lost``: how many of
    them were counted as damaged; ``partial``: the bytes of the next record
    inflated before the break; ``data_complete``: whether the data ended
    whole and only the stream's end check failed.
    """
    n = record_index
    done = f"records 0 to {n - 1} were read" if n else "no record was read"
    if n and lost:
        done = f"records 0 to {n - 1} come before it ({lost} of them counted as damaged)"
    if not partial and data_complete:
        detail = f"{done} and verified: the data ended whole, only the stream's end check failed"
    else:
        cut = f" (its first {partial} bytes came before the break)" if partial else ""
        detail = (
            f"{done} before the break; record {n}{cut} and everything after the break cannot be recovered "
            "(a compressed stream cannot be resynchronised)"
        )
    return CorruptRecordError(
        f"{e}; {detail}",
        path=name,
        record_index=n,
        offset=e.offset if e.offset is not None else offset,
        kind="compression",
        compressed_offset=e.compressed_offset,
    )
