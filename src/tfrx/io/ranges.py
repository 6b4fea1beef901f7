"""Record ranges: a set of TFRecord files cut into pieces that separate tasks read, each record exactly once.

Engines that read in parallel (Ray Data, Spark, Dask, worker processes) share
one planner. :func:`plan_ranges` gives one :class:`RecordRange` per file, and
cuts an uncompressed file larger than its share into several:

* by record ranges when the file has an index (:func:`tfrx.build_index`):
  exact record offsets, and every range knows its first record's number and
  its row count;
* otherwise by byte ranges: a range starts at the first record header at or
  after its start position (:func:`record_boundary`: a header whose length
  CRC and data CRC both hold, so a range never starts inside a payload) and
  holds the records whose header starts before its end position.

Compressed files (GZIP, ZLIB) are one range each, unless they have a
checkpoint index (:mod:`tfrx.io.inflate_index`, made by :func:`tfrx.build_index`
or by the writer): then they are cut by records too, and a range's reading
inflates from the checkpoint before it (at a URL, fetching only the
compressed bytes of its intervals). :func:`read_range` reads one range's records as
:class:`~tfrx.io.RecordBatch` es with both CRCs checked.
"""

from __future__ import annotations

import math
import os
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfrx import _native
from tfrx.crc import masked_crc32c
from tfrx.errors import CorruptRecordError, TfrxError
from tfrx.io._batch import RecordBatch
from tfrx.io._damage import looks_compressed
from tfrx.io._framing import FRAMING_BYTES, HEADER_BYTES
from tfrx.io.index import load_index
from tfrx.io.inflate_index import CompressedRandomReader, load_inflate_index
from tfrx.io._paths import is_url, local_size, open_input, url_to_fs
from tfrx.io._positions import RecordPosition
from tfrx.io._reader import RecordReader
from tfrx.options import normalize_compression

__all__ = [
    "DEFAULT_MIN_SPLIT_BYTES",
    "RecordRange",
    "file_size",
    "group_ranges",
    "local_plain_file",
    "plan_ranges",
    "read_range",
    "record_boundary",
    "record_bounds",
]

#: Bytes a file must hold per extra range before it is split (a task costs milliseconds to schedule).
DEFAULT_MIN_SPLIT_BYTES = 32 << 20
_WINDOW = 1 << 20


@dataclass(frozen=True)
class RecordRange:
    """What one task reads: a whole file, or the records of a part of one uncompressed file.

    ``start`` and ``end`` are byte positions (``end=None``: to the end of
    the file). When ``exact``, they are record offsets (from an index, or a
    whole file) and ``first_index`` is the number of the first record;
    otherwise they are positions that :func:`read_range` moves to the next
    record boundary. ``rows`` is the record count when known, ``nbytes`` the
    bytes the range spans.
    """

    source: Any
    start: int = 0
    end: int | None = None
    exact: bool = True
    first_index: int = 0
    rows: int | None = None
    nbytes: int = 0


def file_size(source) -> int | None:
    """The size in bytes of a local file or fsspec URL, or ``None`` when it cannot be told (a file object)."""
    size = local_size(source)
    if size is None and isinstance(source, str) and is_url(source):
        fs, path = url_to_fs(source)
        size = int(fs.size(path))
    return size


def _compression_of(source, compression: str) -> str:
    """The compression of one file: the given one, or detected from its first bytes."""
    if compression != "auto":
        return compression
    if isinstance(source, str) and is_url(source):
        from tfrx.io.index import _read_range

        head = _read_range(source, 0, 4096)  # these bytes only (a file object may fetch a whole block)
    else:
        with open_input(source) as f:
            head = f.read(4096)
    return looks_compressed(head)  # the readers' rule: a damaged plain header that only looks compressed is plain


def _payload_ok(f, offset: int, length: int) -> bool:
    """Whether the record whose header is at ``offset`` has a matching data CRC."""
    f.seek(offset + HEADER_BYTES)
    body = f.read(length + 4)
    if len(body) != length + 4:
        return False
    return masked_crc32c(body[:length]) == int.from_bytes(body[length:], "little")


def record_boundary(source, position: int, size: int) -> int:
    """The offset of the first record header at or after ``position`` (``size`` if none).

    A header counts when its length CRC holds, the record fits in the file
    and its data CRC holds too: a false match inside a payload would need
    both 32-bit checksums to agree by chance. A damaged record is therefore
    never a boundary; the range before it reads it and reports the damage.
    """
    if position <= 0:
        return 0
    if position >= size:
        return size
    with open_input(source) as f:
        base = position
        while base < size:
            f.seek(base)
            # HEADER_BYTES - 1 bytes of overlap: a header that starts in this window is whole in it
            window = np.frombuffer(f.read(min(_WINDOW + HEADER_BYTES - 1, size - base)), np.uint8)
            limit = min(_WINDOW, len(window))
            k = _native.find_header(window, 0)
            while 0 <= k < limit:
                offset = base + k
                length = int.from_bytes(window[k : k + 8].tobytes(), "little")
                if offset + FRAMING_BYTES + length <= size and _payload_ok(f, offset, length):
                    return offset
                k = _native.find_header(window, k + 1)
            base += _WINDOW
    return size


def record_bounds(piece: RecordRange) -> tuple[int, int | None] | None:
    """The record offsets ``(start, end)`` a range reads (``end=None``: to the end of the file).

    An exact range's own; a byte range's moved to the record boundary at or
    after each (:func:`record_boundary`), or ``None`` when no record starts in
    it. Raises ValueError for a byte range of a file whose size cannot be told.
    """
    start, end = piece.start, piece.end
    if piece.exact:
        return start, end
    size = file_size(piece.source)
    if size is None:
        raise ValueError(f"a byte range needs a file of known size: {piece.source!r}")
    start = record_boundary(piece.source, start, size)
    end = record_boundary(piece.source, end, size) if end is not None else None
    if end is not None and start >= end:
        return None
    return start, end


def local_plain_file(piece: RecordRange, compression: str = "auto") -> str | None:
    """The path of the file a range reads when it is a local, regular, uncompressed one, else ``None``: such a
    range can be read by byte offsets (``read_range(resume=...)``, the Arrow scan's native reads)."""
    source = piece.source
    if not isinstance(source, (str, os.PathLike)):
        return None
    path = os.fspath(source)
    if not isinstance(path, str) or is_url(path) or not os.path.isfile(path):  # (a pipe is read as a stream)
        return None
    return None if _compression_of(path, compression) else path


def _index_of(source):
    """The record index of a local uncompressed file when one exists (never built here)."""
    if not isinstance(source, str) or is_url(source):
        return None
    try:
        return load_index(source, build=False)
    except (OSError, TfrxError):
        return None


def _checkpoints_of(source):
    """The checkpoint index of a GZIP/ZLIB file or object when one exists (never built here)."""
    if not isinstance(source, str):
        return None
    try:
        return load_inflate_index(source, build=False)
    except (OSError, TfrxError):
        return None


def _read_compressed_range(piece: RecordRange, batch_size: int) -> Iterator[RecordBatch]:
    """The records of an exact range of a GZIP/ZLIB file, through its checkpoint index: inflate starts at
    the checkpoint before the range, not at the start of the file."""
    index = load_inflate_index(piece.source, build=False)
    offsets, lengths = index.records.offsets, index.records.lengths
    first = piece.first_index
    stop = first + (piece.rows if piece.rows is not None else len(offsets) - first)
    if first < 0 or stop > len(offsets) or (piece.rows is None and int(offsets[first]) != piece.start):
        raise ValueError(f"range {piece!r} does not match the checkpoint index of {piece.source!r}")
    with CompressedRandomReader(piece.source, index) as reader:
        for lo in range(first, stop, batch_size):
            hi = min(lo + batch_size, stop)
            base = int(offsets[lo])
            blob = np.frombuffer(
                reader.read(base, int(offsets[hi - 1] + lengths[hi - 1]) + FRAMING_BYTES - base), np.uint8
            )
            lens = lengths[lo:hi]
            out_starts = np.concatenate([[0], np.cumsum(lens[:-1])]).astype(np.int64)
            data = np.empty(int(lens.sum()), np.uint8)
            result = _native.gather_records(blob, offsets[lo:hi] - base, lens, out_starts, data, True)
            if result.status != _native.GatherStatus.OK:
                k = lo + result.index
                raise CorruptRecordError(
                    f"record {k} of {piece.source!r} (at byte {int(offsets[k])} of its uncompressed stream) does not "
                    f"match its checkpoint index ({result.status.name}); rebuild it with tfrx.build_index("
                    f"{piece.source!r})",
                    path=str(piece.source),
                    record_index=k,
                    offset=int(offsets[k]),
                    kind="length_crc" if result.status == _native.GatherStatus.LENGTH_CRC else "data_crc",
                    expected=result.expected,
                    actual=result.actual,
                )
            yield RecordBatch(data, out_starts, lens.copy())


def plan_ranges(
    sources: Sequence,
    *,
    num_ranges: int,
    compression: str | None = "auto",
    min_split_bytes: int = DEFAULT_MIN_SPLIT_BYTES,
    use_index: bool = True,
) -> list[RecordRange]:
    """Cuts ``sources`` (expanded paths) into about ``num_ranges`` ranges of similar byte size.

    A file is split only when it is uncompressed (or compressed with a
    checkpoint index), larger than
    ``max(min_split_bytes, total / num_ranges)`` and of known size; by its
    index's record offsets when it has one and ``use_index``, else by bytes.
    Every record of every file belongs to exactly one range.
    """
    if num_ranges < 0:
        raise ValueError(f"num_ranges must be >= 0, got {num_ranges}")
    compression = normalize_compression(compression, allow_auto=True)
    sizes = [file_size(s) for s in sources]
    total = sum(s for s in sizes if s is not None)
    target = max(int(min_split_bytes), math.ceil(total / num_ranges) if num_ranges > 0 else total) or 1
    ranges: list[RecordRange] = []
    for source, size in zip(sources, sizes):
        compressed = size is not None and size > target and _compression_of(source, compression)
        # A compressed file is split only by its checkpoint index (offsets in the uncompressed stream).
        checkpoints = _checkpoints_of(source) if compressed and use_index else None
        if size is None or size <= target or (compressed and checkpoints is None):
            ranges.append(RecordRange(source, nbytes=size or 0))
            continue
        n = math.ceil(size / target)
        index = (checkpoints.records if checkpoints is not None else _index_of(source)) if use_index else None
        if checkpoints is not None and index is not None:
            bounds = np.linspace(0, len(index), n + 1).astype(np.int64)
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                if hi > lo:
                    start = int(index.offsets[lo])
                    end = int(index.offsets[hi]) if hi < len(index) else index.file_size
                    # nbytes: the compressed bytes the range spans, roughly (its share of the file)
                    share = size * (hi - lo) // max(len(index), 1)
                    ranges.append(RecordRange(source, start, end, True, int(lo), int(hi - lo), int(share)))
            continue
        if index is not None:
            bounds = np.linspace(0, len(index), n + 1).astype(np.int64)
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                if hi == lo:
                    continue
                start = int(index.offsets[lo])
                end = int(index.offsets[hi]) if hi < len(index) else size
                ranges.append(RecordRange(source, start, end, True, int(lo), int(hi - lo), end - start))
            continue
        cuts = [size * i // n for i in range(n + 1)]
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            ranges.append(RecordRange(source, lo, hi, False, 0, None, hi - lo))
    return ranges


def group_ranges(ranges: list[RecordRange], num_groups: int) -> list[list[RecordRange]]:
    """Contiguous groups of ranges, at most ``num_groups`` of them (every range alone when fewer)."""
    if num_groups <= 0 or len(ranges) <= num_groups:
        return [[r] for r in ranges]
    bounds = np.linspace(0, len(ranges), num_groups + 1).astype(np.int64)
    return [ranges[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


def read_range(
    piece: RecordRange,
    *,
    compression: str = "auto",
    on_error: str = "raise",
    batch_size: int = 1024,
    buffers: Any = None,
    resume: tuple[int, int] | None = None,
) -> Generator[RecordBatch, None, None]:
    """The records of one range, in batches of at most ``batch_size``, both CRCs checked.

    ``buffers``: where the reader takes its read buffers, as for
    :class:`tfrx.RecordReader` (a caller that is done with each batch before
    the next passes a pool, so every chunk is read into memory already mapped).
    ``resume=(offset, index)``: start at the record whose header is at byte
    ``offset`` of the file, the ``index``-th of the range (a caller that read
    the records before it another way); uncompressed files only.

    Records of a byte range are numbered from the range's first record, and a
    :class:`~tfrx.CorruptRecordError` raised in one says so (an index gives
    true record numbers).
    """
    start, end = piece.start, piece.end
    part = piece.exact and (start or end is not None)  # a part of a file, not all of it
    if part and _compression_of(piece.source, compression) and _checkpoints_of(piece.source):
        yield from _read_compressed_range(piece, batch_size)
        return
    bounds = record_bounds(piece)
    if bounds is None:
        return
    start, end = bounds
    at, first = (start, 0) if resume is None else resume
    kwargs: dict = {"start": RecordPosition(0, at, piece.first_index + first)} if at else {}
    kwargs["buffers"] = buffers
    with RecordReader(piece.source, compression=compression, on_error=on_error, end_offset=end, **kwargs) as reader:
        try:
            yield from reader.iter_batches(max_records=batch_size)
        except CorruptRecordError as e:
            if piece.exact or not start:
                raise
            raise CorruptRecordError(
                f"{e} (record numbers count from byte {start}, where this range starts; "
                "an index file gives true record numbers: tfrx.build_index)",
                path=e.path,
                record_index=e.record_index,
                offset=e.offset,
                kind=e.kind,
                expected=e.expected,
                actual=e.actual,
            ) from e
