"""Record-offset index files: where every record of a TFRecord file starts.

An index lists, for one uncompressed TFRecord file, the byte offset of every
record's 12-byte header; a record's payload length follows from the next
offset (or the file size). It is built by walking the framing only (length
fields and their CRCs), never the payloads, and makes ``len()``, random
access and an exact global shuffle possible.

Two formats:

``"tfrx"`` (default, ``.tfrx/<file>.tfrxidx``): a 48-byte little-endian header
then ``count`` uint64 offsets::

    magic    8 bytes  b"TFRXIDX\\0"
    version  uint32   1
    header   uint32   48 (bytes before the offsets)
    count    uint64   records in the file
    size     uint64   size of the data file
    mtime    int64    its modification time in ns when indexed (informational)
    finger   uint32   CRC-32C of the data file's first and last 4 KiB
    crc      uint32   CRC-32C of the offsets

Loading checks all of it: a file that grew or shrank since (``size``), an
index of another file (``finger``) and a damaged or truncated index raise
:class:`StaleIndexError` / :class:`IndexFileError`.

``"dali"``: the text index written by NVIDIA DALI's ``tfrecord2idx`` and the
``tfrecord`` package: one ``"<offset> <length>"`` line per record, the length
counting the 16 framing bytes.

A GZIP or ZLIB file's record index (offsets in its uncompressed stream) is
kept in its checkpoint index (:mod:`tfrx.io.inflate_index`, ``.tfrxzidx``
in the index cache beside the record indexes), which also makes reading a
record inflate at most one checkpoint interval.

Reading never writes into the data's folder: indexes tfrx builds on its own
are cached in the user's cache directory (:func:`index_cache_dir`:
``$TFRX_CACHE_DIR``, else ``$XDG_CACHE_HOME/tfrx``, else ``~/.cache/tfrx``),
under a name made of the file's absolute path or URL, its size and its
modification time (an object's ETag or generation), so a changed file is
indexed again. An index beside the data, in the hidden folder ``.tfrx/``
(see :mod:`tfrx.io._sidecars`: no glob written for data files matches it),
is written only when asked for (``sidecar=True``, ``tfrx index``,
``ShardedWriter(index=True)``), and read first whenever it is there and
valid, as is one beside the file as earlier versions wrote it
(``<file>.tfrxidx``). A location that cannot be written (a read-only folder
or file system) is never an error: the index is kept in the cache instead,
or only in memory, with a warning.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from tfrx import _native
from tfrx._progress import progress_bar
from tfrx._native import ScanStatus
from tfrx.errors import CompressedFileError, IndexFileError, StaleIndexError
from tfrx.io._damage import looks_compressed, record_error
from tfrx.io._framing import FRAMING_BYTES, HEADER_BYTES
from tfrx.io._data_files import expand_paths
from tfrx.io._paths import is_url, open_input, with_options
from tfrx.io._sidecars import INDEX_SUFFIX, index_sidecar, legacy_index_sidecar, sidecar_path
from tfrx.options import ProgressOption, check_progress

__all__ = [
    "RecordIndex",
    "IndexFileError",
    "StaleIndexError",
    "CompressedFileError",
    "build_index",
    "load_index",
    "write_index",
    "count_records",
    "default_index_path",
    "index_cache_dir",
]

MAGIC = b"TFRXIDX\0"
VERSION = 1
_HEADER = struct.Struct("<8sIIQQqII")
HEADER_SIZE = _HEADER.size  # 48
SUFFIX = INDEX_SUFFIX
_FINGERPRINT_BYTES = 4096
# No file is this large; bigger offsets or sizes in an index are corruption, and
# rejecting them keeps every sum of offset and length inside int64.
_MAX_OFFSET = 1 << 62
_CHUNK = 64 << 20
_PROGRESS_STEP = 256 << 20  # a local scan that reports progress does so this often


def _rebuild_hint(path: str) -> str:
    return f"rebuild it with tfrx.build_index({path!r}) (or `tfrx index {path}`)"


class RecordIndex:
    """Offsets of the records of one TFRecord file.

    ``offsets[i]`` is where record ``i``'s header starts, ``lengths[i]`` its
    payload length (framing excluded); ``file_size`` the data file's size.
    """

    __slots__ = ("path", "offsets", "lengths", "file_size", "mtime_ns", "fingerprint", "checkpoints")

    def __init__(
        self,
        path: str | None,
        offsets: np.ndarray,
        file_size: int,
        *,
        lengths: np.ndarray | None = None,
        mtime_ns: int = 0,
        fingerprint: int = 0,
    ) -> None:
        self.path = path
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.file_size = int(file_size)
        if lengths is None:
            ends = np.empty_like(self.offsets)
            if len(ends):
                ends[:-1] = self.offsets[1:]
                ends[-1] = self.file_size
            lengths = ends - self.offsets - FRAMING_BYTES
        self.lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        self.mtime_ns = int(mtime_ns)
        self.fingerprint = int(fingerprint)
        # The checkpoint index (tfrx.io.inflate_index.InflateIndex) of a GZIP/ZLIB file this index came from.
        self.checkpoints: Any = None

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def count(self) -> int:
        """The number of records the index lists."""
        return len(self.offsets)

    def __repr__(self) -> str:
        return f"RecordIndex({self.path!r}, records={len(self)}, file_size={self.file_size})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RecordIndex)
            and self.file_size == other.file_size
            and np.array_equal(self.offsets, other.offsets)
            and np.array_equal(self.lengths, other.lengths)
        )

    # ------------------------------------------------------------ formats
    def to_bytes(self) -> bytes:
        """The ``"tfrx"`` binary form."""
        offsets = self.offsets.astype("<u8", copy=False)
        header = _HEADER.pack(
            MAGIC,
            VERSION,
            HEADER_SIZE,
            len(offsets),
            self.file_size,
            self.mtime_ns,
            self.fingerprint,
            _native.crc32c(offsets.tobytes()),
        )
        return header + offsets.tobytes()

    def to_dali(self) -> str:
        """The DALI / ``tfrecord`` text form: ``"<offset> <framed length>"`` per line."""
        return "".join(f"{o} {n}\n" for o, n in zip(self.offsets.tolist(), (self.lengths + FRAMING_BYTES).tolist()))

    @classmethod
    def from_bytes(cls, blob: bytes, *, path: str | None = None, index_path: str | None = None) -> RecordIndex:
        where = f"index file {index_path!r}" if index_path else "index"
        if blob[:8] != MAGIC[: len(blob[:8])] or (len(blob) >= 8 and blob[:8] != MAGIC):
            raise IndexFileError(
                f"{where} is not a tfrx index (bad magic {blob[:8]!r}); {_rebuild_hint(path or '...')}",
                index_path=index_path,
                path=path,
            )
        if len(blob) < HEADER_SIZE:
            raise IndexFileError(
                f"{where} is truncated ({len(blob)} bytes, header needs {HEADER_SIZE}); {_rebuild_hint(path or '...')}",
                index_path=index_path,
                path=path,
            )
        magic, version, header_size, count, size, mtime, finger, crc = _HEADER.unpack_from(blob)
        if version != VERSION or header_size < HEADER_SIZE:
            raise IndexFileError(
                f"{where} has version {version} (header {header_size} bytes); this tfrx reads version {VERSION}; "
                f"{_rebuild_hint(path or '...')}",
                index_path=index_path,
                path=path,
            )
        want = header_size + 8 * count
        if len(blob) != want:
            raise IndexFileError(
                f"{where} is truncated or padded: {len(blob)} bytes, expected {want} for {count} records; "
                f"{_rebuild_hint(path or '...')}",
                index_path=index_path,
                path=path,
            )
        body = blob[header_size:]
        actual = _native.crc32c(body)
        if actual != crc:
            raise IndexFileError(
                f"{where} is corrupt: offsets CRC mismatch (expected 0x{crc:08x}, got 0x{actual:08x}); "
                f"{_rebuild_hint(path or '...')}",
                index_path=index_path,
                path=path,
            )
        if size > _MAX_OFFSET:
            raise IndexFileError(
                f"{where} is corrupt: it claims a file of {size} bytes", index_path=index_path, path=path
            )
        offsets = np.frombuffer(body, dtype="<u8").astype(np.int64)
        if count and (
            offsets[0] < 0
            or np.any(offsets > _MAX_OFFSET)
            or np.any(np.diff(offsets) < FRAMING_BYTES)
            or offsets[-1] + FRAMING_BYTES > size
        ):
            raise IndexFileError(
                f"{where} is corrupt: offsets are not increasing record starts", index_path=index_path, path=path
            )
        return cls(path, offsets, size, mtime_ns=mtime, fingerprint=finger)

    @classmethod
    def from_dali(
        cls, text: str | bytes, *, path: str | None = None, file_size: int | None = None, index_path: str | None = None
    ) -> RecordIndex:
        if isinstance(text, bytes):
            text = text.decode("ascii", errors="replace")
        where = f"index file {index_path!r}" if index_path else "index"
        try:
            table = np.array([line.split() for line in text.splitlines() if line.strip()], dtype=np.int64)
        except (ValueError, OverflowError):
            raise IndexFileError(
                f"{where} is not a text index of '<offset> <length>' lines", index_path=index_path, path=path
            ) from None
        if table.size == 0:
            table = np.zeros((0, 2), dtype=np.int64)
        if table.ndim != 2 or table.shape[1] != 2:
            raise IndexFileError(
                f"{where} is not a text index of '<offset> <length>' lines", index_path=index_path, path=path
            )
        offsets, framed = table[:, 0].copy(), table[:, 1].copy()
        if (
            np.any(framed < FRAMING_BYTES)
            or np.any(offsets < 0)
            or np.any(offsets > _MAX_OFFSET)
            or np.any(framed > _MAX_OFFSET)
            or np.any(offsets[1:] < offsets[:-1] + framed[:-1])
        ):
            raise IndexFileError(
                f"{where} is corrupt: lengths below 16 bytes or overlapping records", index_path=index_path, path=path
            )
        end = int(offsets[-1] + framed[-1]) if len(offsets) else 0
        return cls(path, offsets, end if file_size is None else file_size, lengths=framed - FRAMING_BYTES)


# ---------------------------------------------------------------- locations
def index_cache_dir() -> str:
    """Where tfrx caches the indexes it builds: ``index/`` under ``$TFRX_CACHE_DIR``, else under
    ``$XDG_CACHE_HOME/tfrx`` (an absolute path), else under ``~/.cache/tfrx``."""
    root = os.environ.get("TFRX_CACHE_DIR")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        # The XDG base directory spec: a relative $XDG_CACHE_HOME is invalid and ignored.
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tfrx")
    return os.path.join(root, "index")


# fsspec's info() keys that change when an object is rewritten, most specific first
_VERSION_KEYS = (
    "ETag",
    "etag",
    "generation",
    "md5Hash",
    "mtime",
    "LastModified",
    "last_modified",
    "updated",
    "created",
)


def _file_version(path: str) -> str:
    """What changes when the file is rewritten: its size and mtime (an object's size and ETag/generation)."""
    if is_url(path):
        from tfrx.io._paths import url_to_fs

        fs, p = url_to_fs(path)
        info = fs.info(p)
        tag = next((info[k] for k in _VERSION_KEYS if info.get(k) is not None), "")
        return f"{info.get('size')}:{tag}"
    st = os.stat(path)
    return f"{st.st_size}:{st.st_mtime_ns}"


def _path_key(path: str) -> str:
    key = path if is_url(path) else os.path.abspath(path)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _cached_name(path: str, version: str | None = None, suffix: str = SUFFIX) -> str:
    version = _file_version(path) if version is None else version
    stamp = hashlib.sha256(version.encode()).hexdigest()[:8]
    return f"{_path_key(path)}-{stamp}-{os.path.basename(path.rstrip('/'))}{suffix}"


def _prune_cache(kept: str, path: str) -> None:
    """Removes the cached indexes of earlier versions of ``path`` (same path key and name, other stamp)."""
    folder, name = os.path.split(kept)
    head, tail = f"{_path_key(path)}-", name[len(_path_key(path)) + 10 :]
    try:
        for other in os.listdir(folder):
            if other != name and other.startswith(head) and other.endswith(tail):
                os.remove(os.path.join(folder, other))
    except OSError:
        pass  # a cache that cannot be tidied is still a cache


def default_index_path(path: str, *, cache_dir: str | None = None, sidecar: bool = False) -> str:
    """Where the ``"tfrx"`` index of ``path`` is kept: in ``cache_dir`` (default :func:`index_cache_dir`),
    under a name made of the file's absolute path or URL, size and mtime (ETag or generation for objects);
    with ``sidecar=True``, beside the file in ``.tfrx/<file>.tfrxidx``. ``path`` must exist (unless ``sidecar``)."""
    path = os.fsdecode(os.fspath(path))
    if sidecar:
        return index_sidecar(path)
    return os.path.join(index_cache_dir() if cache_dir is None else cache_dir, _cached_name(path))


# ---------------------------------------------------------------- building
def _exists(path: str) -> bool:
    if is_url(path):
        from tfrx.io._paths import url_to_fs

        fs, p = url_to_fs(path)
        return bool(fs.exists(p))
    return os.path.exists(path)


def _stat(path: str) -> tuple[int, int]:
    """Size and mtime in ns; an object's mtime counts as 0 (its ETag or generation is in the cache's name)."""
    if is_url(path):
        from tfrx.io._paths import url_to_fs

        fs, p = url_to_fs(path)
        return int(fs.size(p)), 0
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def _read_range(path: str, start: int, length: int) -> bytes:
    if is_url(path):  # exactly these bytes, in one request (a file object may fetch a larger block)
        from tfrx.io._paths import url_to_fs

        fs, p = url_to_fs(path)
        if length <= 0:
            return b""
        try:
            return fs.cat_file(p, start=start, end=start + length)
        except FileNotFoundError:
            raise
        except OSError:
            if int(fs.size(p)) <= start:  # a range past the end (an empty object) is refused, not empty
                return b""
            raise
    with open_input(path) as f:
        f.seek(start)
        return f.read(length)


def _fingerprint(path: str, size: int, head: bytes | None = None) -> int:
    n = min(size, _FINGERPRINT_BYTES)
    head = _read_range(path, 0, n) if head is None else head[:n]
    tail = _read_range(path, size - n, n) if size > n else b""
    return _native.crc32c(tail, _native.crc32c(head))


def _compressed_error(path: str, kind: str) -> CompressedFileError:
    where = (
        "a record index cannot describe a compressed stream (tfrx.build_index gives compressed files a "
        "checkpoint index instead)"
    )
    return CompressedFileError(
        f"cannot index {path!r}: it is {kind}-compressed, and {where}; or rewrite it uncompressed "
        f"(`tfrx reshard --output-compression none`, or tfrx.TFRecordWriter without compression) and index the copy"
    )


_INDEX_HINT = "the file is damaged and cannot be indexed past this record (`tfrx verify` lists its damaged regions)"


def _scan_buffer(buf, path: str, verify: bool, base: int, count: int, final: bool):
    scan = _native.scan_records(buf, verify)
    if scan.status not in (ScanStatus.END, ScanStatus.NEED_MORE) or (scan.status == ScanStatus.NEED_MORE and final):
        offset = base + scan.offset
        searched, head = 0, b""
        if scan.status == ScanStatus.LENGTH_CRC and offset == 0:
            # As the readers do: a bad first header and no valid one in the first 4 MiB: not a TFRecord file.
            with memoryview(buf)[: 4 << 20] as start:
                if _native.find_header(start, 1) < 0:
                    searched, head = len(start), bytes(start[:16])
        raise record_error(
            scan,
            name=path,
            record_index=count + len(scan.starts),
            offset=offset,
            present=len(buf) - scan.offset,
            no_header_in=searched,
            head=head,
            hint=_INDEX_HINT,
        )
    return scan.starts - HEADER_BYTES + base, scan.consumed


def _scan_view(view, path: str, verify: bool, progress) -> np.ndarray:
    """The record offsets of a whole mapped file; with ``progress``, in steps it is told about."""
    if progress is None:
        return _scan_buffer(view, path, verify, 0, 0, True)[0]
    parts: list[np.ndarray] = []
    base, count, step = 0, 0, _PROGRESS_STEP
    while True:
        end = min(len(view), base + step)
        with view[base:end] as part:  # released before the file is unmapped, also when the scan raises
            offsets, consumed = _scan_buffer(part, path, verify, base, count, end == len(view))
        parts.append(offsets)
        count += len(offsets)
        base += consumed
        progress(base, len(view))
        if end == len(view) and base >= end:
            return np.concatenate(parts)
        step = _PROGRESS_STEP if consumed else 2 * step  # a record longer than the step: take more


def _scan(path: str, size: int, verify: bool, progress=None) -> np.ndarray:
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    if not is_url(path):
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
                mm.madvise(mmap.MADV_SEQUENTIAL)
            view = memoryview(mm)
            try:
                return _scan_view(view, path, verify, progress)
            finally:
                view.release()
    # Remote: chunked reads, carrying an incomplete record over to the next chunk.
    parts: list[np.ndarray] = []
    base, count, carry = 0, 0, b""
    with open_input(path) as f:
        while True:
            chunk = f.read(_CHUNK)
            final = not chunk
            buf = carry + chunk
            if not buf:
                break
            offsets, consumed = _scan_buffer(buf, path, verify, base, count, final)
            parts.append(offsets)
            count += len(offsets)
            base += consumed
            carry = buf[consumed:]
            if progress is not None:
                progress(base, size)
            if final:
                break
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _check_uncompressed(path: str, head: bytes) -> None:
    kind = looks_compressed(head)  # the readers' rule: a damaged plain header that only looks compressed is plain
    if kind:
        raise _compressed_error(path, kind)


def scan_index(
    path,
    *,
    verify: bool = False,
    progress: ProgressOption | Callable[[int, int], Any] = False,
    storage_options: dict | None = None,
) -> RecordIndex:
    """The index of ``path`` computed from its framing (length CRCs; data CRCs too when ``verify``).

    ``progress`` (see :mod:`tfrx.options`; default ``False``): a bar, or a
    callable told a :class:`tfrx.Progress` of the bytes scanned (unit ``"B"``,
    ``total`` the file size) every 256 MiB or so. ``storage_options`` go to the
    fsspec filesystem of a URL.
    """
    return _scan_index(_path(path, storage_options), verify, progress, "scan_index")


def _path(path, storage_options: dict | None) -> str:
    """``path`` as a string; a URL carrying ``storage_options`` (and the files named after it too)."""
    return with_options(os.fsdecode(os.fspath(path)), storage_options)


def _scan_index(path: str, verify: bool, progress, where: str) -> RecordIndex:
    old = check_progress(progress, where=where, old_shape="progress(bytes_scanned, file_size)", stacklevel=4)
    size, mtime = _stat(path)
    head = _read_range(path, 0, _FINGERPRINT_BYTES) if size else b""
    _check_uncompressed(path, head)
    if old:
        offsets = _scan(path, size, verify, progress)
    else:
        with progress_bar(size, desc="index", unit="B", enabled=progress) as bar:
            offsets = _scan(path, size, verify, (lambda done, _size: bar.update(done - bar.n)) if bar.active else None)
    return RecordIndex(path, offsets, size, mtime_ns=mtime, fingerprint=_fingerprint(path, size, head))


def write_index(index: RecordIndex, index_path, *, format: str = "tfrx") -> str:
    """Writes ``index`` to ``index_path`` (atomically: a temporary file, then a rename)."""
    index_path = os.fsdecode(os.fspath(index_path))
    blob = index.to_bytes() if format == "tfrx" else index.to_dali().encode() if format == "dali" else None
    if blob is None:
        raise ValueError(f'format must be "tfrx" or "dali", got {format!r}')
    if is_url(index_path):
        from tfrx.io._paths import open_output

        with open_output(index_path) as f:
            f.write(blob)
        return index_path
    folder = os.path.dirname(os.path.abspath(index_path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{index_path}.tmp{os.getpid()}-{threading.get_ident()}"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, index_path)
    return index_path


def build_index(
    path,
    *,
    index_path=None,
    format: str = "tfrx",
    cache_dir: str | None = None,
    sidecar: bool = False,
    verify: bool = False,
    progress: ProgressOption | Callable[[int, int], Any] = False,
    storage_options: dict | None = None,
) -> RecordIndex:
    """Scans ``path`` and writes its index; returns the :class:`RecordIndex`.

    The index goes to ``index_path``, else to the index cache (``cache_dir``,
    default :func:`index_cache_dir`; nothing is written beside the data), else,
    with ``sidecar=True``, beside the file in ``.tfrx/<file>.tfrxidx``
    (``.tfrx/<file>.idx`` for ``format="dali"``, the text index of DALI's
    ``tfrecord2idx`` / the ``tfrecord`` package). When that location cannot be
    written (a read-only folder), the index goes to the cache, or stays in
    memory, with a warning; only an explicit ``index_path`` raises. Only
    framing is read: length CRCs are always checked, data CRCs when ``verify``.
    A GZIP/ZLIB file (local or at a URL) gets a checkpoint index instead
    (:func:`tfrx.io.inflate_index.build_inflate_index`, in the index cache, or beside
    the file with ``sidecar=True``); given ``index_path`` or ``format="dali"``, it raises
    :class:`CompressedFileError`.
    ``progress`` reports the scan as :func:`scan_index`'s does; ``storage_options``
    go to the fsspec filesystem of a URL (its index's too).
    """
    path = _path(path, storage_options)
    if format not in ("tfrx", "dali"):
        raise ValueError(f'format must be "tfrx" or "dali", got {format!r}')
    version = _file_version(path) if index_path is None else None  # before the scan: a change meanwhile misses
    try:
        index = _scan_index(path, verify, progress, "build_index")
    except CompressedFileError:
        if index_path is not None or format != "tfrx":
            raise
        return _compressed_records(path, cache_dir, rebuild=True, verify=verify, sidecar=sidecar)
    if index_path is not None:
        write_index(index, index_path, format=format)
        return index
    suffix = SUFFIX if format == "tfrx" else ".idx"
    cached = os.path.join(index_cache_dir() if cache_dir is None else cache_dir, _cached_name(path, version, suffix))
    places = [sidecar_path(path, suffix), cached] if sidecar else [cached]
    _keep_first_writable(lambda where: write_index(index, where, format=format), places, cached, path, "index")
    return index


def _keep_first_writable(write, places: list[str], cached: str, path: str, what: str, stacklevel: int = 3) -> None:
    """Writes an index of ``path`` (``write(where)``) to the first of ``places`` that takes it: beside the
    file, then ``cached`` (its name in the index cache, whose copies of earlier versions of the file are
    then removed); a place that cannot be written falls back to the next with a warning, and none to
    memory (the index is built again next time). ``what`` names the index in the warnings, which point
    ``stacklevel`` frames up."""
    failed = []
    for where in places:
        try:
            write(where)
        except (OSError, NotImplementedError) as e:  # NotImplementedError: a read-only filesystem (http)
            failed.append(f"{where!r} ({getattr(e, 'strerror', None) or e or type(e).__name__})")
            continue
        if where is cached:
            _prune_cache(cached, path)
        if failed:
            warnings.warn(
                f"could not write the {what} of {path!r} beside it: {failed[0]}; it is cached in {where!r} instead",
                RuntimeWarning,
                stacklevel=stacklevel,
            )
        return
    warnings.warn(
        f"could not keep the {what} of {path!r}: {'; '.join(failed)}; it is used from memory and will be built "
        f"again next time (set TFRX_CACHE_DIR to a writable folder, or pass cache_dir=)",
        RuntimeWarning,
        stacklevel=stacklevel,
    )


# The record index of a GZIP/ZLIB file, from its checkpoint index: ``(path, cache_dir, rebuild, build,
# verify, sidecar)``.
# tfrx.io.inflate_index (which builds on this module, so it cannot be imported here) sets it when
# imported, and tfrx.io imports it.
compressed_index_loader: Callable[[str, str | None, bool, bool, bool, bool], RecordIndex] | None = None


def _compressed_records(
    path: str, cache_dir: str | None, *, rebuild: bool, build: bool = True, verify: bool = False, sidecar: bool = False
) -> RecordIndex:
    """The record index of a GZIP/ZLIB file: offsets in its uncompressed stream, from its checkpoint
    index (:mod:`tfrx.io.inflate_index`, kept beside the record indexes, or beside the file with ``sidecar``):
    loaded, or built when missing or stale and ``build`` (else ``FileNotFoundError`` /
    :class:`StaleIndexError`), or built anew when ``rebuild`` (data CRCs checked too when ``verify``)."""
    if compressed_index_loader is None:
        raise _compressed_error(path, "GZIP/ZLIB")
    return compressed_index_loader(path, cache_dir, rebuild, build, verify, sidecar)


def _sniff_format(blob: bytes) -> str:
    return "tfrx" if blob[:4] == MAGIC[:4] else "dali"


def _validate(index: RecordIndex, path: str, index_path: str, size: int) -> None:
    if index.file_size != size:
        raise StaleIndexError(
            f"index {index_path!r} is stale: it describes {index.file_size} bytes but {path!r} now has "
            f"{size}; {_rebuild_hint(path)}",
            index_path=index_path,
            path=path,
        )
    if index.fingerprint and _fingerprint(path, size) != index.fingerprint:
        raise StaleIndexError(
            f"index {index_path!r} does not match {path!r}: the file's contents differ from the file it "
            f"was built for (another file, or rewritten since); {_rebuild_hint(path)}",
            index_path=index_path,
            path=path,
        )


def load_index(
    path,
    *,
    index_path=None,
    format: str | None = None,
    cache_dir: str | None = None,
    sidecar: bool = False,
    build: bool = True,
    storage_options: dict | None = None,
) -> RecordIndex:
    """The index of ``path``, validated against the file.

    Reads ``index_path`` (format ``"tfrx"`` or ``"dali"``, sniffed when
    ``None``), else the first valid one of: the index beside the file
    (``.tfrx/<file>.tfrxidx``, then ``<file>.tfrxidx`` as earlier versions
    wrote it; not looked for when an explicit ``cache_dir`` is given, unless
    ``sidecar``) and the cached index (in ``cache_dir``, default
    :func:`index_cache_dir`). When none is valid (missing, stale or damaged)
    it is built when ``build`` (see :func:`build_index`: into the cache, or
    beside the file with ``sidecar=True``), else ``FileNotFoundError`` /
    the error of the invalid one is raised. An explicit ``index_path`` that
    is stale, truncated or another file's raises :class:`StaleIndexError` /
    :class:`IndexFileError`. ``storage_options`` go to the fsspec filesystem of a URL.
    """
    path = _path(path, storage_options)
    if index_path is not None:
        return _read_index(path, _path(index_path, getattr(path, "storage_options", None)), format)

    def candidates():
        if cache_dir is None or sidecar:
            yield index_sidecar(path)
            yield legacy_index_sidecar(path)
        yield default_index_path(path, cache_dir=cache_dir)  # names the file's version: computed only when needed

    invalid: IndexFileError | None = None
    for k, candidate in enumerate(candidates()):
        if not _exists(candidate):
            continue
        try:
            index = _read_index(path, candidate, format)
        except IndexFileError as e:
            invalid = invalid or e
            continue
        if sidecar and k == 2:  # asked for beside the data but found in the cache: put a copy there
            try:
                write_index(index, index_sidecar(path))
            except (OSError, NotImplementedError):
                pass  # read-only: build_index warned when it cached this one
        return index
    if invalid is None and looks_compressed(_read_range(path, 0, _FINGERPRINT_BYTES)):
        return _compressed_records(path, cache_dir, rebuild=False, build=build, sidecar=sidecar)
    if not build:
        if invalid is not None:
            raise invalid
        raise FileNotFoundError(f"no index for {path!r}; build one with tfrx.build_index({path!r})")
    return build_index(path, cache_dir=cache_dir, sidecar=sidecar)


def _read_index(path: str, index_path: str, format: str | None) -> RecordIndex:
    with open_input(index_path) as f:
        blob = f.read()
    size, _ = _stat(path)
    fmt = format or _sniff_format(blob)
    if fmt == "tfrx":
        index = RecordIndex.from_bytes(blob, path=path, index_path=index_path)
        _validate(index, path, index_path, size)
    elif fmt == "dali":
        index = RecordIndex.from_dali(blob, path=path, index_path=index_path)
        if len(index) and index.file_size != size:
            raise StaleIndexError(
                f"index {index_path!r} is stale: its last record ends at byte {index.file_size} but "
                f"{path!r} has {size} bytes; {_rebuild_hint(path)}",
                index_path=index_path,
                path=path,
            )
        index.file_size = size
    else:
        raise ValueError(f'format must be "tfrx", "dali" or None, got {format!r}')
    return index


def load_indexes(paths, *, index=None, cache_dir: str | None = None) -> list[RecordIndex]:
    """Indexes for a list of files: ``index`` may be ``None`` (cached/built), ``"sidecar"`` (built when
    missing into ``.tfrx/`` beside each file), a list of :class:`RecordIndex` or of index file paths,
    or a function ``path -> index path``."""
    files = [os.fsdecode(os.fspath(p)) for p in paths]
    sidecar = isinstance(index, str) and index == "sidecar"
    if index is None or sidecar:
        if len(files) > 1 and any(is_url(p) for p in files):
            # Each object's index costs a few round trips (HEAD, the index object, its fingerprint):
            # look them up concurrently rather than one object after another.
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(16, len(files)), thread_name_prefix="tfrx-index") as pool:
                return list(pool.map(lambda p: load_index(p, cache_dir=cache_dir, sidecar=sidecar), files))
        return [load_index(p, cache_dir=cache_dir, sidecar=sidecar) for p in files]
    if isinstance(index, str):
        raise ValueError(
            f'index must be None, "sidecar", a list of indexes or index paths, or a function, got {index!r}'
        )
    if callable(index):
        return [load_index(p, index_path=index(p)) for p in files]
    items = list(index)
    if len(items) != len(files):
        raise ValueError(f"index: got {len(items)} indexes for {len(files)} files")
    out = []
    for p, item in zip(files, items):
        if isinstance(item, RecordIndex):
            out.append(item)
        else:
            out.append(load_index(p, index_path=item))
    return out


def count_records(
    paths, *, cache_dir: str | None = None, require_all_shards: bool = True, storage_options: dict | None = None
) -> int:
    """Total records in ``paths`` (paths, globs), from their indexes (built and cached when missing).

    A glob or list of ``-NNNNN-of-MMMMM`` shards must hold the whole set unless ``require_all_shards=False``.
    ``storage_options`` go to the fsspec filesystem of URLs.
    """
    files = expand_paths(paths, require_all_shards=require_all_shards, storage_options=storage_options)
    return sum(len(load_index(p, cache_dir=cache_dir)) for p in files)
