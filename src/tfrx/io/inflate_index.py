"""Checkpoint indexes: random access into GZIP and ZLIB TFRecord files.

A deflate stream can only be inflated from its start, unless inflate is
restarted where a deflate block begins with the 32 KiB of output before it
as history (the approach of zlib's ``examples/zran.c``). An
:class:`InflateIndex` stores such checkpoints (the compressed byte and bit
offset, and the window) about every ``spacing`` bytes of output (1 MiB by
default), together with the record index of the uncompressed stream, so
reading record ``i`` inflates at most one checkpoint interval plus the record.

It is built once in one streaming pass (:func:`build_inflate_index`), or by
:class:`tfrx.TFRecordWriter` while it writes (``checkpoint_index=True``), and
kept where tfrx keeps the file's record index
(:func:`tfrx.io.index.default_index_path`, with the suffix ``.tfrxzidx``; with
``sidecar=True`` beside the data in ``.tfrx/<file>.tfrxzidx``, which is read
first whenever it is there), validated on loading against the compressed
file's size, modification time (an object's ETag or generation, through the
cache's name) and first and last 4 KiB; a stale one is rebuilt.

Files at URLs (``s3://``, ``gs://``, ``http(s)://``, ...) are indexed by
streaming the object once through the concurrent readahead; a random read then
fetches only the compressed bytes of the checkpoint intervals it inflates (one
range request per interval or run of neighbouring intervals, all of a batch
together, at most ``concurrency`` in flight). Every member of a multi-member GZIP file and every stream of
concatenated ZLIB streams is indexed; a member's trailer is checked on the
indexing pass (inflate from a checkpoint cannot check it: it did not see the
member's start).

File format (little-endian)::

    magic     8 bytes  b"TFRXZIX\\0"
    version   uint32   1
    kind      uint32   1 GZIP, 2 ZLIB
    size      uint64   compressed file size
    mtime     int64    its modification time in ns
    finger    uint32   CRC-32C of its first and last 4 KiB
    crc       uint32   CRC-32C of the header (this field zero) and of everything after it
    out_size  uint64   uncompressed size
    points    uint64   checkpoints
    records   uint64   records
    then per checkpoint: out offset uint64, in offset uint64, bits|byte<<8|member<<16 uint32,
    compressed window length uint32; then the windows (zlib-compressed); then the record offsets uint64.
"""

from __future__ import annotations

import functools
import os
import struct
import threading
import zlib
from bisect import bisect_right
from typing import Any

import numpy as np

from tfrx import _native
from tfrx._native import InflateStatus
from tfrx.errors import CompressedFileError, CorruptRecordError, IndexFileError, StaleIndexError
from tfrx.io._compression import detect_compression
from tfrx.io._framing import FRAMING_BYTES
from tfrx.io import index as _record_index
from tfrx.io.index import (
    SUFFIX,
    RecordIndex,
    _fingerprint,
    _scan_buffer,
    _stat,
    default_index_path,
    _keep_first_writable,
)
from tfrx.io._paths import is_url, url_to_fs
from tfrx.io._sidecars import sidecar_path

__all__ = [
    "DEFAULT_SPACING",
    "INFLATE_INDEX_SUFFIX",
    "InflateIndex",
    "CompressedRandomReader",
    "CheckpointStream",
    "build_inflate_index",
    "load_inflate_index",
    "inflate_index_path",
]

#: Output bytes between checkpoints: a random read inflates at most this much before its record.
DEFAULT_SPACING = 1 << 20
INFLATE_INDEX_SUFFIX = ".tfrxzidx"
MAGIC = b"TFRXZIX\0"
VERSION = 1
_HEADER = struct.Struct("<8sIIQqIIQQQ")
_CRC_AT = 36  # where the CRC lies in the header
_KINDS = {"GZIP": 1, "ZLIB": 2}
_NAMES = {v: k for k, v in _KINDS.items()}
_POINT = np.dtype([("out", "<u8"), ("inp", "<u8"), ("meta", "<u4"), ("wlen", "<u4")])
_IN_CHUNK = 1 << 20
# Compressed bytes fetched past the end of an interval: inflate never needs them (a checkpoint is a
# block boundary), but a few cost nothing on a request that is made anyway.
_SLACK = 1024
# Remote range requests in flight at once for one read (RandomAccessDataset passes its own).
_CONCURRENCY = 32
_OUT_CHUNK = 1 << 20
_MAX_OFFSET = 1 << 62


def inflate_index_path(path, *, cache_dir: str | None = None, sidecar: bool = False) -> str:
    """Where the checkpoint index of the compressed file ``path`` is kept: beside its record index in the
    index cache, or with ``sidecar=True`` beside the file (``.tfrx/<file>.tfrxzidx``)."""
    if sidecar:
        return sidecar_path(os.fsdecode(os.fspath(path)), INFLATE_INDEX_SUFFIX)
    return default_index_path(path, cache_dir=cache_dir)[: -len(SUFFIX)] + INFLATE_INDEX_SUFFIX


def _damage(path: str, at: int, out: int, message: str) -> CorruptRecordError:
    return CorruptRecordError(
        f"compressed data of {path!r} is damaged at byte {at} of the file ({message}; {out} bytes inflated "
        f"before it); records before the damage can be read sequentially with tfrx.RecordReader",
        path=path,
        offset=out,
        kind="compression",
        compressed_offset=at,
    )


def _truncated(path: str, at: int, out: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"compressed data of {path!r} ends inside a member at byte {at} ({out} bytes inflated); the file is truncated",
        path=path,
        offset=out,
        kind="compression",
        compressed_offset=at,
    )


class InflateIndex:
    """Inflate checkpoints and record offsets of one GZIP or ZLIB TFRecord file.

    ``points`` is a structured array (``out``: uncompressed offset, ``inp``:
    compressed offset, ``meta``: unused bits | the byte before ``inp`` << 8 |
    1 << 16 at a member start); ``windows[k]`` the 32 KiB of history of
    checkpoint ``k`` (empty at a member start); ``records`` the
    :class:`~tfrx.io.index.RecordIndex` of the uncompressed stream (its
    ``file_size`` the uncompressed size).
    """

    __slots__ = ("path", "compression", "points", "windows", "records", "file_size", "mtime_ns", "fingerprint")

    def __init__(self, path, compression, points, windows, records, file_size, mtime_ns=0, fingerprint=0) -> None:
        self.path = path
        self.compression = compression
        self.points = points
        self.windows = windows
        self.records: RecordIndex = records
        records.checkpoints = self  # readers given the record index find the checkpoints through it
        self.file_size = int(file_size)
        self.mtime_ns = int(mtime_ns)
        self.fingerprint = int(fingerprint)

    def __repr__(self) -> str:
        return (
            f"InflateIndex({self.path!r}, {self.compression}, checkpoints={len(self.points)}, "
            f"records={len(self.records)}, inflated_size={self.records.file_size})"
        )

    @property
    def out_offsets(self) -> np.ndarray:
        """The uncompressed offset of each checkpoint."""
        return self.points["out"].astype(np.int64)

    def to_bytes(self) -> bytes:
        """The ``.tfrxzidx`` form."""
        packed = [zlib.compress(w, 6) if w else b"" for w in self.windows]
        points = self.points.copy()
        points["wlen"] = [len(p) for p in packed]
        offsets = self.records.offsets.astype("<u8")
        body = points.tobytes() + b"".join(packed) + offsets.tobytes()
        fields = [MAGIC, VERSION, _KINDS[self.compression], self.file_size, self.mtime_ns, self.fingerprint, 0]
        fields += [self.records.file_size, len(points), len(offsets)]
        fields[6] = _native.crc32c(body, _native.crc32c(_HEADER.pack(*fields)))  # the header (CRC 0), then the body
        return _HEADER.pack(*fields) + body

    @classmethod
    def from_bytes(cls, blob: bytes, *, path: str, index_path: str | None = None) -> InflateIndex:
        """Parses and checks a ``.tfrxzidx`` blob; damage raises :class:`IndexFileError`."""
        where = f"checkpoint index {index_path!r}" if index_path else "checkpoint index"

        def bad(why: str) -> IndexFileError:
            return IndexFileError(
                f"{where} {why}; delete it and it is rebuilt on next use (or call "
                f"tfrx.io.inflate_index.build_inflate_index({path!r}))",
                index_path=index_path,
                path=path,
            )

        if len(blob) < _HEADER.size or blob[:8] != MAGIC:
            raise bad("is not a tfrx checkpoint index (bad magic or truncated)")
        magic, version, kind, size, mtime, finger, crc, out_size, npoints, nrecords = _HEADER.unpack_from(blob)
        if version != VERSION or kind not in _NAMES:
            raise bad(f"has version {version} / kind {kind}; this tfrx reads version {VERSION}")
        body = memoryview(blob)[_HEADER.size :]
        header = bytearray(blob[: _HEADER.size])
        header[_CRC_AT : _CRC_AT + 4] = bytes(4)
        if _native.crc32c(body, _native.crc32c(bytes(header))) != crc:
            raise bad("is corrupt (CRC mismatch)")
        if npoints > len(body) // _POINT.itemsize or nrecords > len(body) // 8 or out_size > _MAX_OFFSET:
            raise bad("is corrupt (counts exceed its size)")
        points = np.frombuffer(body, dtype=_POINT, count=npoints).copy()
        at = npoints * _POINT.itemsize
        wlen = points["wlen"].astype(np.int64)
        if at + int(wlen.sum()) + 8 * nrecords != len(body):
            raise bad("is truncated or padded")
        windows = []
        for n in wlen.tolist():
            try:
                w = zlib.decompress(body[at : at + n]) if n else b""
            except zlib.error:
                raise bad("is corrupt (a window does not inflate)") from None
            if len(w) > 32768:
                raise bad("is corrupt (a window over 32 KiB)")
            windows.append(w)
            at += n
        offsets = np.frombuffer(body[at:], dtype="<u8").astype(np.int64)
        outs, ins, meta = points["out"].astype(np.int64), points["inp"].astype(np.int64), points["meta"]
        if npoints == 0 or outs[0] != 0 or ins[0] != 0 or (meta[0] >> 16) != 1:
            raise bad("is corrupt (no checkpoint at the start)")
        if (
            np.any(np.diff(outs) <= 0)
            or np.any(np.diff(ins) <= 0)
            or np.any(outs > out_size)
            or np.any(ins > size)
            or np.any((meta & 0xFF) > 7)
            or np.any((meta >> 16) > 1)
        ):
            raise bad("is corrupt (checkpoints out of order or out of range)")
        if nrecords and (
            np.any(np.diff(offsets) < FRAMING_BYTES) or offsets[0] < 0 or offsets[-1] + FRAMING_BYTES > out_size
        ):
            raise bad("is corrupt (record offsets are not increasing record starts)")
        records = RecordIndex(path, offsets, out_size, mtime_ns=mtime)
        return cls(path, _NAMES[kind], points, windows, records, size, mtime, finger)


# ---------------------------------------------------------------- building
def _open_compressed(path: str):
    """The compressed file for one streaming pass: local, or the object fetched ahead in blocks."""
    if not is_url(path):
        return open(path, "rb")
    from tfrx.io._readahead import RemoteBlocks

    return _Closing(RemoteBlocks([path], 0, 0, block_size=4 << 20, window=8))


class _Closing:
    """A :class:`~tfrx.io._readahead.RemoteBlocks` of one object as a file read once from its start."""

    def __init__(self, blocks) -> None:
        self._blocks = blocks
        self._stream = blocks.stream(0)

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._blocks.close()


class _Rewound:
    """A stream with its first bytes, already read, put back in front."""

    def __init__(self, head: bytes, f) -> None:
        self._head = head
        self._f = f

    def read(self, size: int) -> bytes:
        if self._head:
            head, self._head = self._head, b""
            return head
        return self._f.read(size)


def _read_head(f, n: int = 4096) -> bytes:
    """Up to ``n`` bytes from the start of ``f``, reading on through short reads (fewer only at its end)."""
    head = b""
    while len(head) < n:
        more = f.read(n - len(head))
        if not more:
            break
        head += more
    return head


def build_inflate_index(
    path,
    *,
    spacing: int = DEFAULT_SPACING,
    cache_dir: str | None = None,
    index_path=None,
    verify: bool = False,
    sidecar: bool = False,
) -> InflateIndex:
    """Inflates the GZIP or ZLIB TFRecord file ``path`` (a path or URL) once, recording a checkpoint about
    every ``spacing`` output bytes and every record's offset, writes the index (to ``index_path``, else
    :func:`inflate_index_path`: the index cache, or beside the file with ``sidecar=True``; a location that
    cannot be written is not an error: the cache is used, or memory, with a warning) and returns it.

    Damaged compressed data raises :class:`~tfrx.errors.CorruptRecordError` naming the byte of the file;
    damaged framing names the record. An uncompressed file raises :class:`CompressedFileError`: it has a
    record index of its own (:func:`tfrx.build_index`).
    """
    path = os.fsdecode(os.fspath(path))
    if spacing < 32768:
        raise ValueError(f"spacing must be at least 32768 bytes, got {spacing}")
    size, mtime = _stat(path)
    # Named before the pass: the cache's name carries the file's version as it was indexed.
    cached = inflate_index_path(path, cache_dir=cache_dir)
    with _open_compressed(path) as f:
        head = _read_head(f)
        kind = detect_compression(head)
        if not kind:
            raise CompressedFileError(
                f"{path!r} is not GZIP or ZLIB compressed; index it with tfrx.build_index({path!r})"
            )
        index = _build(_Rewound(head, f), path, kind, spacing, verify)
    index.file_size, index.mtime_ns = size, mtime
    index.fingerprint = _fingerprint(path, size, head)
    index.records.mtime_ns = mtime
    if index_path is not None:
        _write(index, os.fsdecode(os.fspath(index_path)))
    else:
        keep_index(index, path, cached, sidecar=sidecar)
    return index


def keep_index(index: InflateIndex, path: str, cached: str, *, sidecar: bool) -> None:
    """Writes ``index`` of ``path`` to ``cached`` (its name in the index cache), or beside the file first with
    ``sidecar``; a location that cannot be written falls back to the next one (the cache, then memory) with a
    warning."""
    places = [inflate_index_path(path, sidecar=True), cached] if sidecar else [cached]
    _keep_first_writable(lambda where: _write(index, where), places, cached, path, "checkpoint index", stacklevel=4)


def _write(index: InflateIndex, index_path: str) -> None:
    if is_url(index_path):
        from tfrx.io._paths import open_output

        with open_output(index_path) as out:
            out.write(index.to_bytes())
        return
    folder = os.path.dirname(os.path.abspath(index_path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{index_path}.tmp{os.getpid()}-{threading.get_ident()}"
    with open(tmp, "wb") as f:
        f.write(index.to_bytes())
    os.replace(tmp, index_path)


def _build(f, path: str, kind: str, spacing: int, verify: bool) -> InflateIndex:
    inf = _native.CheckpointInflater(kind == "GZIP")
    out = np.empty(_OUT_CHUNK, dtype=np.uint8)
    points = [(0, 0, 1 << 16)]
    windows: list[bytes] = [b""]
    parts: list[np.ndarray] = []
    carry = b""
    base = count = 0  # output offset of carry[0]; records found
    total_in = total_out = 0
    last = 0  # output offset of the last checkpoint
    prev_byte = 0  # the input byte before the current chunk
    in_member = True  # a member is open (its header expected or being inflated)
    while True:
        chunk = f.read(_IN_CHUNK)
        if not chunk:
            break
        pos = 0
        while pos < len(chunk):
            step = inf.step(memoryview(chunk)[pos:], out, True)
            pos += step.consumed
            total_in += step.consumed
            if step.produced:
                buf = carry + out[: step.produced].tobytes()
                offsets, consumed = _scan_buffer(buf, path, verify, base, count, False)
                parts.append(offsets)
                count += len(offsets)
                base += consumed
                carry = buf[consumed:]
                total_out += step.produced
            in_member = True
            if step.status == InflateStatus.ERROR:
                raise _damage(path, total_in, total_out, step.message)
            if not (step.consumed or step.produced or step.status):
                raise _damage(path, total_in, total_out, "inflate makes no progress")
            if step.status == InflateStatus.MEMBER_END:
                in_member = False
                if total_out - last >= spacing and pos < len(chunk):
                    points.append((total_out, total_in, 1 << 16))
                    windows.append(b"")
                    last = total_out
            elif step.status == InflateStatus.BLOCK and total_out - last >= spacing:
                byte = chunk[pos - 1] if pos else prev_byte
                points.append((total_out, total_in, step.bits | (byte << 8)))
                windows.append(inf.window())
                last = total_out
        prev_byte = chunk[-1]
    if in_member and total_in:
        raise _truncated(path, total_in, total_out)
    if carry:
        _scan_buffer(carry, path, verify, base, count, True)  # raises: the stream ends inside a record
    table = np.array(points, dtype=np.int64)
    arr = np.zeros(len(points), dtype=_POINT)
    arr["out"], arr["inp"], arr["meta"] = table[:, 0], table[:, 1], table[:, 2]
    offsets = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return InflateIndex(path, kind, arr, windows, RecordIndex(path, offsets, total_out), total_in)


def _read_blob(where: str) -> bytes:
    """The bytes of an index file or object; ``FileNotFoundError`` when there is none."""
    if is_url(where):
        fs, p = url_to_fs(where)
        try:
            return fs.cat_file(p)
        except FileNotFoundError:
            raise
        except OSError as e:
            if "404" in str(e) or "Not Found" in str(e):
                raise FileNotFoundError(where) from e
            raise
    with open(where, "rb") as fh:
        return fh.read()


def _checked(blob: bytes, path: str, where: str) -> InflateIndex:
    """The index in ``blob``, validated against the file (size, mtime, first and last 4 KiB)."""
    index = InflateIndex.from_bytes(blob, path=path, index_path=where)
    size, mtime = _stat(path)
    # An object's mtime is not known (0): its version is in the cached index's name, and a sidecar written
    # beside a local file keeps the local mtime when copied to a store; size and fingerprint decide there.
    moved = mtime != index.mtime_ns and not is_url(path)
    if index.file_size != size or moved or _fingerprint(path, size) != index.fingerprint:
        raise StaleIndexError(
            f"checkpoint index {where!r} is stale: {path!r} changed since it was built "
            f"({index.file_size} bytes, mtime {index.mtime_ns}; now {size} bytes, mtime {mtime})",
            index_path=where,
            path=path,
        )
    return index


def load_inflate_index(
    path,
    *,
    cache_dir: str | None = None,
    index_path=None,
    build: bool = True,
    spacing: int = DEFAULT_SPACING,
    sidecar: bool = False,
) -> InflateIndex:
    """The checkpoint index of the compressed file ``path`` (a path or URL), validated against the file's
    size, mtime (an object's: through the cache's name) and first and last 4 KiB.

    Reads ``index_path`` when given (stale or damaged: raises), else the first valid one of the index beside
    the file (``.tfrx/<file>.tfrxzidx``; not looked for when an explicit ``cache_dir`` is given, unless
    ``sidecar``) and the cached one. When none is valid it is built when ``build`` (into the cache, or beside
    the file with ``sidecar=True``), else ``FileNotFoundError`` / :class:`StaleIndexError` /
    :class:`IndexFileError` is raised."""
    path = os.fsdecode(os.fspath(path))
    if index_path is not None:
        where = os.fsdecode(os.fspath(index_path))
        try:
            blob = _read_blob(where)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no checkpoint index {where!r} for {path!r}; build one with "
                f"tfrx.io.inflate_index.build_inflate_index({path!r})"
            ) from None
        return _checked(blob, path, where)
    places = [inflate_index_path(path, sidecar=True)] if cache_dir is None or sidecar else []
    invalid: IndexFileError | None = None
    for k in range(len(places) + 1):
        if k == len(places):
            places.append(inflate_index_path(path, cache_dir=cache_dir))  # names the file's version: only when needed
        where = places[k]
        try:
            index = _checked(_read_blob(where), path, where)
        except FileNotFoundError:
            continue
        except IndexFileError as e:
            invalid = invalid or e
            continue
        if sidecar and k == 1:  # asked for beside the data, found in the cache: put a copy there
            try:
                _write(index, places[0])
            except (OSError, NotImplementedError):
                pass  # read-only: built where it could be
        return index
    if not build:
        if invalid is not None:
            raise invalid
        raise FileNotFoundError(
            f"no checkpoint index for {path!r}; build one with tfrx.io.inflate_index.build_inflate_index({path!r})"
        )
    return build_inflate_index(path, cache_dir=cache_dir, spacing=spacing, sidecar=sidecar)


# ---------------------------------------------------------------- reading
class _Spans:
    """Fetched pieces ``(start, bytes)`` of a remote compressed file, read as the file itself is."""

    def __init__(self, path: str, spans) -> None:
        self._path = path
        self._spans = sorted(spans, key=lambda sp: sp[0])
        self._starts = [sp[0] for sp in self._spans]
        self._at = 0

    def seek(self, at: int) -> None:
        self._at = at

    def read(self, n: int) -> bytes:
        k = bisect_right(self._starts, self._at) - 1
        if k >= 0:
            start, data = self._spans[k]
            if self._at < start + len(data):
                return bytes(data[self._at - start : self._at - start + n])
        raise RuntimeError(f"compressed bytes of {self._path!r} at byte {self._at} were not fetched")


class CompressedRandomReader:
    """Reads byte ranges of the uncompressed stream of a GZIP/ZLIB file through its :class:`InflateIndex`.

    Each read restarts inflate at the last checkpoint at or before it, or carries on from the previous
    read when that is nearer (ranges read in ascending order share their inflate). ``inflated_bytes``
    counts every byte inflated, to show what random access costs. Thread-safe (one read at a time).

    ``path`` may be a URL: reads then fetch only the compressed bytes of the checkpoint intervals they
    inflate (:meth:`input_ranges`), all ranges of one :meth:`read_many` in one concurrent ``cat_ranges``
    (``fetched_bytes`` counts them); ``read_many(..., inputs=)`` takes ranges fetched by the caller.
    """

    def __init__(
        self,
        path,
        index: InflateIndex | None = None,
        *,
        cache_dir: str | None = None,
        file=None,
        concurrency: int = _CONCURRENCY,
    ) -> None:
        self.path = os.fsdecode(os.fspath(path))
        self.index = index if index is not None else load_inflate_index(self.path, cache_dir=cache_dir)
        self._outs = self.index.out_offsets.tolist()
        self.remote = file is None and is_url(self.path)
        self.concurrency = concurrency
        self.fetched_bytes = 0
        # ``file``: the compressed file already open (seekable), left open by close()
        self._file: Any = None if self.remote else open(self.path, "rb") if file is None else file
        self._owns = file is None and not self.remote
        self._lock = threading.Lock()
        self._inf = _native.CheckpointInflater(self.index.compression == "GZIP")
        self._pos = -1  # output offset the live inflater stands at; -1: none
        self._in = 0  # file offset of its next input byte
        self._pending = b""  # input read but not yet used
        self._buf = np.empty(_OUT_CHUNK, dtype=np.uint8)
        self.inflated_bytes = 0

    def close(self) -> None:
        """Closes the file (unless it was given open)."""
        if self._owns and self._file is not None:
            self._file.close()

    def __enter__(self) -> CompressedRandomReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _restart(self, k: int) -> None:
        p = self.index.points[k]
        meta = int(p["meta"])
        if meta >> 16:
            self._inf.start_member()
        else:
            self._inf.start_raw(meta & 0xFF, (meta >> 8) & 0xFF, self.index.windows[k])
        self._pos, self._in, self._pending = int(p["out"]), int(p["inp"]), b""

    def _inflate(self, want: int, keep: bool) -> bytes:
        """Inflates ``want`` bytes from where the inflater stands; returns them when ``keep``."""
        got: list[bytes] = []
        while want > 0:
            if not self._pending:
                self._file.seek(self._in)
                self._pending = self._file.read(_IN_CHUNK)
                if not self._pending:
                    raise _truncated(self.path, self._in, self._pos)
            out = self._buf[: min(want, len(self._buf))]
            step = self._inf.step(self._pending, out, False)
            self._pending = self._pending[step.consumed :]
            self._in += step.consumed
            if step.status == InflateStatus.ERROR:
                raise _damage(self.path, self._in, self._pos, step.message)
            if not (step.consumed or step.produced or step.status):
                raise _damage(self.path, self._in, self._pos, "inflate makes no progress")
            if step.produced:
                if keep:
                    got.append(out[: step.produced].tobytes())
                self._pos += step.produced
                want -= step.produced
                self.inflated_bytes += step.produced
        return b"".join(got)

    def _check(self, offset: int, size: int) -> None:
        if offset < 0 or size < 0 or offset + size > self.index.records.file_size:
            raise ValueError(
                f"range {offset}+{size} lies outside the {self.index.records.file_size} uncompressed bytes of "
                f"{self.path!r}"
            )

    def _read(self, offset: int, size: int) -> bytes:
        k = bisect_right(self._outs, offset) - 1
        # Carry on from the previous read when it stands in this interval, before the offset.
        if not (0 <= self._pos <= offset and self._pos >= self._outs[k]):
            self._restart(k)
        try:
            self._inflate(offset - self._pos, False)
            return self._inflate(size, True)
        except BaseException:
            self._pos = -1
            raise

    def read(self, offset: int, size: int) -> bytes:
        """``size`` bytes of the uncompressed stream from ``offset``."""
        self._check(offset, size)
        if self.remote:
            return self.read_many([offset], [size])[0]
        with self._lock:
            return self._read(offset, size)

    def input_ranges(self, offsets, sizes) -> tuple[np.ndarray, np.ndarray]:
        """The compressed byte ranges ``(starts, stops)`` that reading ``sizes[j]`` bytes at ``offsets[j]``
        inflates: from the checkpoint at or before each range to the first one at or after its end (the end
        of the file after the last), neighbouring ones merged; ascending."""
        offsets = np.asarray(offsets, dtype=np.int64)
        ends = offsets + np.asarray(sizes, dtype=np.int64)
        if not len(offsets):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        outs = self.index.points["out"].astype(np.int64)
        ins = self.index.points["inp"].astype(np.int64)
        first = np.searchsorted(outs, offsets, side="right") - 1
        last = np.searchsorted(outs, ends, side="left")
        starts = ins[np.maximum(first, 0)]
        stops = np.where(last < len(ins), ins[np.minimum(last, len(ins) - 1)] + _SLACK, self.index.file_size)
        stops = np.minimum(stops, self.index.file_size)
        order = np.argsort(starts, kind="stable")
        starts, stops = starts[order], stops[order]
        reach = np.maximum.accumulate(stops)
        breaks = np.flatnonzero(starts[1:] > reach[:-1]) + 1
        lo = np.concatenate([[0], breaks]).astype(np.int64)
        hi = np.concatenate([breaks, [len(starts)]]).astype(np.int64) - 1
        return starts[lo], reach[hi]

    @functools.cached_property
    def filesystem(self) -> tuple[Any, str]:
        """``(fsspec filesystem, path in it)`` of a remote file (looked up once)."""
        return url_to_fs(self.path)

    def _fetch(self, starts: np.ndarray, stops: np.ndarray) -> list:
        fs, p = self.filesystem
        n = len(starts)
        if getattr(fs, "async_impl", False):
            blobs = fs.cat_ranges([p] * n, starts.tolist(), stops.tolist(), batch_size=self.concurrency)
        else:
            blobs = fs.cat_ranges([p] * n, starts.tolist(), stops.tolist())
        for blob, a, b in zip(blobs, starts.tolist(), stops.tolist()):
            if isinstance(blob, BaseException):
                raise OSError(f"reading {self.path!r} at byte {a}: {blob}") from blob
            if len(blob) != b - a:
                raise OSError(f"reading {self.path!r}: asked for {b - a} bytes at byte {a}, the store sent {len(blob)}")
        return list(zip(starts.tolist(), blobs))

    def read_many(self, offsets, sizes, *, inputs=None) -> list[bytes]:
        """The ranges ``sizes[j]`` bytes at ``offsets[j]``, in the order given (inflated in ascending order).

        ``inputs``: for a remote file, ``(start, bytes)`` pieces of it covering :meth:`input_ranges`
        (fetched here when not given)."""
        offsets = np.asarray(offsets, dtype=np.int64)
        sizes = np.asarray(sizes, dtype=np.int64)
        for offset, size in zip(offsets.tolist(), sizes.tolist()):
            self._check(offset, size)
        out: list[bytes] = [b""] * len(offsets)
        if not self.remote:
            inputs = None
        elif inputs is None:
            inputs = self._fetch(*self.input_ranges(offsets, sizes))
        with self._lock:
            if inputs is not None:
                self.fetched_bytes += sum(len(data) for _, data in inputs)
                self._file, self._pos = _Spans(self.path, inputs), -1
            try:
                for j in np.argsort(offsets, kind="stable").tolist():
                    out[j] = self._read(int(offsets[j]), int(sizes[j]))
            finally:
                if inputs is not None:
                    self._file, self._pos = None, -1  # the pieces go; the next read starts at a checkpoint
        return out

    def read_records(self, offsets, lengths, *, inputs=None) -> list[bytes]:
        """Framed records (header, payload and data CRC) at ``offsets`` with payload ``lengths``."""
        return self.read_many(offsets, np.asarray(lengths, dtype=np.int64) + FRAMING_BYTES, inputs=inputs)


class CheckpointStream:
    """A read-only stream of the uncompressed bytes of a GZIP/ZLIB file from ``offset`` on, started at the
    checkpoint before ``offset`` (what :class:`tfrx.RecordReader` resumes with, instead of inflating and
    discarding everything before it). Damaged data raises :class:`~tfrx.errors.CorruptRecordError`."""

    def __init__(self, path, index: InflateIndex, offset: int, *, file=None) -> None:
        if not 0 <= offset <= index.records.file_size:
            raise ValueError(
                f"start offset {offset} lies past the end of {path!r} ({index.records.file_size} uncompressed bytes)"
            )
        self.reader = CompressedRandomReader(path, index, file=file)
        self.position = int(offset)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def read(self, size: int = -1) -> bytes:
        left = self.reader.index.records.file_size - self.position
        n = left if size is None or size < 0 else min(size, left)
        data = self.reader.read(self.position, n) if n > 0 else b""
        self.position += len(data)
        return data

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(min(len(view), _OUT_CHUNK))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.reader.close()


def _compressed_records(
    path: str, cache_dir: str | None, rebuild: bool, build: bool, verify: bool, sidecar: bool = False
) -> RecordIndex:
    if rebuild:
        index = build_inflate_index(path, cache_dir=cache_dir, verify=verify, sidecar=sidecar)
    else:
        index = load_inflate_index(path, cache_dir=cache_dir, build=build, sidecar=sidecar)
    return index.records


# tfrx.io.index's load_index / build_index hand local GZIP/ZLIB files over to this module.
_record_index.compressed_index_loader = _compressed_records
