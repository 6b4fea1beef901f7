"""Random access to TFRecord files through their indexes.

:class:`RandomAccessDataset` is a map-style dataset (``len(ds)``, ``ds[i]``,
``ds[[i, j, ...]]``) over the records of TFRecord files (GZIP/ZLIB ones
through their checkpoint index: :mod:`tfrx.io.inflate_index`). It is a
PyTorch map-style ``Dataset`` as it is (``DataLoader`` with samplers and
workers) and a Grain ``RandomAccessDataSource``. Local files are read with
positioned ``preadv`` calls (or through a read-only memory map with
``use_mmap=True``), remote ones with ``fsspec``'s ``cat_ranges``, so one
dataset may be read from many threads; batched requests are sorted by file
and offset (back-to-back records are one ``preadv``) and the results
returned in request order. Every record's framing is checked against the index (the
length field and its CRC) and, with ``verify=True``, its data CRC.

:meth:`RandomAccessDataset.shuffle_global` turns it into an iterable
``tfrx.data`` pipeline source with an exact global shuffle (see
``tfrx/data/_global_shuffle.py``).
"""

from __future__ import annotations

import mmap
import os
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from tfrx import _native
from tfrx._native import GatherStatus
from tfrx.errors import CorruptRecordError
from tfrx.io.index import IndexFileError, RecordIndex, load_indexes
from tfrx.io.inflate_index import CompressedRandomReader, load_inflate_index
from tfrx.io._batch import RecordBatch
from tfrx.io._damage import looks_compressed
from tfrx.io._framing import FRAMING_BYTES
from tfrx.io._data_files import expand_paths
from tfrx.io._paths import is_url, url_to_fs
from tfrx.options import renamed_arguments

__all__ = ["RandomAccessDataset"]


class RecordLocation(NamedTuple):
    """Where a record of a :class:`RandomAccessDataset` lies (unpacks as ``path, record_index, offset``)."""

    path: str
    record_index: int
    offset: int


# Remote reads of records closer than this are merged into one range request:
# a request costs far more than the bytes between two nearby records.
COALESCE_GAP = 64 << 10
# Range requests in flight at once for one batch of remote reads: enough to hide a distant store's
# latency, few enough not to queue at a server (or be refused by it) when a batch plans many (fsspec's
# own batches of async requests are 128). At 20 ms a request and no bandwidth cap, alternating rounds of
# benchmarks/remote_random.py gave a global-shuffle epoch 23x and 25x one request per record with 32,
# 23x, 32x and 37x with 64.
CONCURRENCY = 64


def _runs(offsets: np.ndarray, sizes: np.ndarray, gap: int = COALESCE_GAP):
    """The byte ranges ``(starts, stops)`` covering ``sizes[j]`` bytes at ``offsets[j]`` (offsets ascending),
    records closer than ``gap`` merged into one range, and the range of each j."""
    ends = offsets + sizes
    breaks = np.flatnonzero(offsets[1:] > np.maximum.accumulate(ends)[:-1] + gap) + 1
    run_lo = np.concatenate([[0], breaks]).astype(np.int64)
    run_hi = np.concatenate([breaks, [len(offsets)]]).astype(np.int64)
    starts = offsets[run_lo]
    stops = np.array([int(ends[lo:hi].max()) for lo, hi in zip(run_lo, run_hi)], dtype=np.int64)
    return starts, stops, np.repeat(np.arange(len(run_lo)), run_hi - run_lo)


def _coalesced_ranges(
    fs, path: str, offsets: np.ndarray, sizes: np.ndarray, gap: int = COALESCE_GAP, concurrency: int = CONCURRENCY
):
    """Fetches ``sizes[j]`` bytes at ``offsets[j]`` (offsets ascending) in as few range requests as gaps allow.

    Returns, for each j, the blob holding it and its start within that blob.
    """
    return _fetch_many(fs, [(path, offsets, sizes)], gap, concurrency)[0]


def _cat_ranges(fs, paths: list, starts: list, stops: list, concurrency: int) -> list:
    """The byte ranges, at most ``concurrency`` requests in flight: through the filesystem's own async
    ``cat_ranges`` where it has one (its ``batch_size`` bounds what is in flight), else on threads.
    A failed range comes back as its exception."""
    if getattr(fs, "async_impl", False):
        return fs.cat_ranges(paths, starts, stops, batch_size=concurrency)
    if concurrency <= 1 or len(paths) <= 1:
        return fs.cat_ranges(paths, starts, stops)

    def one(k: int):
        try:
            return fs.cat_file(paths[k], start=starts[k], end=stops[k])
        except Exception as e:  # handed back as the async path does; the caller raises it with the object's name
            return e

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(concurrency, len(paths)), thread_name_prefix="tfrx-ranges") as pool:
        return list(pool.map(one, range(len(paths))))


def _fetch_many(fs, reads, gap: int = COALESCE_GAP, concurrency: int = CONCURRENCY):
    """:func:`_coalesced_ranges` for several ``(path, offsets, sizes)`` of one filesystem in one
    ``cat_ranges`` call, so the range requests of all files overlap (at most ``concurrency`` in flight).
    Returns ``(blobs, rel)`` per read, in the order of ``reads``."""
    paths: list[str] = []
    starts: list[int] = []
    stops: list[int] = []
    plans = []
    for path, offsets, sizes in reads:
        lo, hi, run_of = _runs(offsets, sizes, gap)
        plans.append((path, offsets, lo, run_of, len(starts)))
        paths += [path] * len(lo)
        starts += lo.tolist()
        stops += hi.tolist()
    fetched = _cat_ranges(fs, paths, starts, stops, concurrency)
    out = []
    for path, offsets, lo, run_of, first in plans:
        mine = fetched[first : first + len(lo)]
        for blob in mine:
            if isinstance(blob, BaseException):
                raise OSError(f"reading {path!r}: {blob}") from blob
        out.append(([mine[r] for r in run_of], (offsets - lo[run_of]).tolist()))
    return out


def _path_of(p: object) -> str:
    if isinstance(p, (str, os.PathLike)):
        return os.fsdecode(os.fspath(p))
    raise TypeError(f"RandomAccessDataset reads files by path (it reopens them), not {type(p).__name__} objects")


class RandomAccessDataset:
    """Records of TFRecord files by global index.

    ``paths``: paths, globs or URLs (order kept; globs sorted; ``files=`` is
    the deprecated name). ``index``:
    ``None`` to load the index of each file (built on first use into the
    user's index cache, ``cache_dir`` or :func:`tfrx.index.index_cache_dir`:
    nothing is written beside the data), ``"sidecar"`` to build missing ones
    beside the data instead (``.tfrx/<file>.tfrxidx``), or a list of :class:`tfrx.RecordIndex` / index file paths (``"tfrx"`` or
    DALI text format), or a function ``path -> index path``. ``verify``
    checks data CRCs. Local files are read with positioned reads
    (``preadv``), back-to-back records in one call; ``use_mmap=True`` maps
    them instead (no system call per record: about twice the records per
    second on small records), as :class:`tfrx.RecordReader`'s ``use_mmap``,
    off by default for the same reason: a file truncated by another process
    while mapped kills the reading process with SIGBUS. ``transform`` maps each record's bytes to the element
    returned (e.g. a parser); ``features`` is a shortcut for parsing each record
    with ``tfrx.ExampleParser(features).parse_single``. ``storage_options``
    go to the fsspec filesystem of URLs; remote records are fetched with
    coalesced range requests (records less than ``coalesce_gap`` bytes apart,
    64 KiB by default, share one), at most ``concurrency`` (32) in flight at
    once (the filesystem's async ``cat_ranges`` where it has one, else
    threads), delivered in request order. A glob or list of
    ``-NNNNN-of-MMMMM`` shards must hold the whole set unless
    ``require_all_shards=False`` (:class:`tfrx.IncompleteShardSetError`).
    Indexes are looked for in ``.tfrx/`` beside each file, then beside it as
    ``<file>.tfrxidx`` (earlier versions), then in the cache (keyed by the
    file's path, size and mtime, so a changed file is indexed again); a
    read-only location is never an error. Local GZIP/ZLIB files are read
    through their checkpoint index (:mod:`tfrx.io.inflate_index`, built on
    first use): a record costs at most one checkpoint interval (about 1 MiB)
    of inflate.
    """

    @renamed_arguments(files="paths")
    def __init__(
        self,
        paths,
        *,
        index=None,
        verify: bool = True,
        transform: Callable[[bytes], Any] | None = None,
        features: Mapping | None = None,
        cache_dir: str | None = None,
        use_mmap: bool = False,
        storage_options: dict | None = None,
        require_all_shards: bool = True,
        concurrency: int = CONCURRENCY,
        coalesce_gap: int = COALESCE_GAP,
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive int, got {concurrency!r}")
        if isinstance(coalesce_gap, bool) or not isinstance(coalesce_gap, int) or coalesce_gap < 0:
            raise ValueError(f"coalesce_gap must be an int >= 0 (bytes), got {coalesce_gap!r}")
        self.concurrency = concurrency
        self.coalesce_gap = coalesce_gap
        self.paths = [
            _path_of(p)
            for p in expand_paths(paths, storage_options=storage_options, require_all_shards=require_all_shards)
        ]
        if transform is not None and features is not None:
            raise ValueError("pass transform= or features=, not both")
        self.verify = bool(verify)
        self.use_mmap = bool(use_mmap)
        self.transform = transform
        self.features = features
        self._parser = None
        if features is not None:
            from tfrx.parsing import ExampleParser

            self._parser = ExampleParser(features)
        self._cache_dir = cache_dir
        self.indexes: list[RecordIndex] = load_indexes(self.paths, index=index, cache_dir=cache_dir)
        for path, ix in zip(self.paths, self.indexes):
            if len(ix) and (
                np.any(ix.lengths < 0)
                or ix.offsets[0] < 0
                or int(ix.offsets[-1] + ix.lengths[-1]) + FRAMING_BYTES > ix.file_size
            ):
                raise IndexFileError(
                    f"the index given for {path!r} is inconsistent: records overlap or run "
                    f"past the end of the file; rebuild it with tfrx.build_index({path!r})",
                    path=path,
                )
        counts = np.array([len(ix) for ix in self.indexes], dtype=np.int64)
        self._ends = np.cumsum(counts)
        self._starts = self._ends - counts
        self._offsets = np.concatenate([ix.offsets for ix in self.indexes]) if self.indexes else np.zeros(0, np.int64)
        self._lengths = np.concatenate([ix.lengths for ix in self.indexes]) if self.indexes else np.zeros(0, np.int64)
        self._file_of = np.repeat(np.arange(len(self.paths), dtype=np.int64), counts)
        self._handles: dict[int, Any] = {}
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._scratch = threading.local()

    # ------------------------------------------------------------ size
    def __len__(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    def cardinality(self) -> int:
        """The number of records (``len(ds)``), as tf.data's ``cardinality()`` names it."""
        return len(self)

    def file_counts(self) -> list[int]:
        """Records per file."""
        return [len(ix) for ix in self.indexes]

    def locate(self, i: int) -> RecordLocation:
        """:class:`RecordLocation` ``(path, record_index, offset)`` of global record ``i``: its file, its
        index in that file and the byte offset of its header."""
        i = self._normalize(np.asarray([i]))[0]
        f = int(self._file_of[i])
        return RecordLocation(self.paths[f], int(i - self._starts[f]), int(self._offsets[i]))

    # ------------------------------------------------------------ pickling (DataLoader workers)
    @property
    def files(self) -> list[str]:
        """Deprecated name of :attr:`paths`."""
        warnings.warn(
            "RandomAccessDataset.files is deprecated and will be removed in the next release; use .paths",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.paths

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_handles"] = {}
        state["_lock"] = None
        state["_scratch"] = None
        state["_parser"] = None  # rebuilt from the features on unpickling
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._handles = {}
        self._lock = threading.Lock()
        self._scratch = threading.local()
        self._pid = os.getpid()
        if self.features is not None:
            from tfrx.parsing import ExampleParser

            self._parser = ExampleParser(self.features)

    def close(self) -> None:
        """Closes the open files (they reopen on the next read)."""
        with self._lock:
            handles, self._handles = self._handles, {}
        for h in handles.values():
            if isinstance(h, CompressedRandomReader):
                h.close()
            elif isinstance(h, int):
                os.close(h)
            elif isinstance(h, mmap.mmap):
                try:
                    h.close()
                except BufferError:  # a read in another thread still uses it
                    pass

    def __del__(self) -> None:
        try:
            if getattr(self, "_pid", None) == os.getpid():
                self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def _handle(self, f: int):
        if self._pid != os.getpid():  # forked: descriptors are shared, but keep our own
            self._handles = {}
            self._pid = os.getpid()
        h = self._handles.get(f)
        if h is None:
            path = self.paths[f]
            with self._lock:
                h = self._handles.get(f)
                if h is None:
                    h = None
                    if is_url(path):
                        checkpoints = getattr(self.indexes[f], "checkpoints", None)
                        if checkpoints is not None:  # GZIP/ZLIB: fetches only the intervals it inflates
                            h = CompressedRandomReader(path, checkpoints, concurrency=self.concurrency)
                        else:
                            h = url_to_fs(path)
                    else:
                        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                        try:
                            kind = looks_compressed(os.pread(fd, 4096, 0))
                            if kind:
                                # Through its checkpoint index: a read inflates at most one interval.
                                h = CompressedRandomReader(path, load_inflate_index(path, cache_dir=self._cache_dir))
                                self._handles[f] = h
                                return h
                            h = fd
                            if self.use_mmap and os.fstat(fd).st_size:
                                # Mapped reads cost no system call per record; the
                                # descriptor is not needed once mapped.
                                h = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                                if hasattr(mmap, "MADV_RANDOM"):
                                    h.madvise(mmap.MADV_RANDOM)
                        finally:
                            if h is not fd:
                                os.close(fd)
                    self._handles[f] = h
        return h

    # ------------------------------------------------------------ reading
    def _normalize(self, idx: np.ndarray) -> np.ndarray:
        n = len(self)
        idx = np.asarray(idx)
        if idx.dtype.kind not in "iu":
            if idx.size == 0:
                idx = idx.astype(np.int64)
            else:
                raise TypeError(f"record indices must be integers, got {idx.dtype}")
        idx = idx.astype(np.int64, copy=False).reshape(-1)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = int(idx[(idx < -n) | (idx >= n)][0])
            raise IndexError(f"record index {bad} out of range for {n} records")
        return np.where(idx < 0, idx + n, idx)

    def read_batch(self, indices) -> RecordBatch:
        """Records ``indices`` (global), in that order, as one :class:`tfrx.RecordBatch`."""
        data, out_starts, lengths = self._read_into(indices, None)
        return RecordBatch(data, out_starts, lengths)

    def _read_into(self, indices, scratch):
        """Reads records into a new buffer, or into ``scratch`` (a thread's reused buffer) when given."""
        idx = self._normalize(indices)
        lengths = self._lengths[idx]
        out_starts = np.zeros(len(idx), dtype=np.int64)
        if len(idx) > 1:
            np.cumsum(lengths[:-1], out=out_starts[1:])
        total = int(lengths.sum())
        if scratch is None:
            data = np.empty(total, dtype=np.uint8)
        else:
            buf = getattr(scratch, "buf", None)
            if buf is None or len(buf) < total:
                buf = scratch.buf = np.empty(max(total, 2 * len(buf) if buf is not None else 0), dtype=np.uint8)
            data = buf[:total]
        if len(idx):
            # Global indices follow (file, offset) order, so sorting them sorts the reads.
            order = np.argsort(idx, kind="stable") if len(idx) > 1 else np.zeros(1, dtype=np.int64)
            sorted_idx = idx[order]
            bounds = np.searchsorted(sorted_idx, self._ends[:-1], side="left") if len(self._ends) > 1 else ()
            lo = 0
            remote: dict[int, list] = {}  # id(filesystem) -> the remote files' reads, fetched together
            for f, hi in enumerate([*bounds, len(idx)]):
                if hi > lo:
                    group = order[lo:hi]
                    read = (f, sorted_idx[lo:hi], self._offsets[sorted_idx[lo:hi]], lengths[group], out_starts[group])
                    h = self._handle(f)
                    if isinstance(h, tuple):
                        remote.setdefault(id(h[0]), []).append((h[0], h[1], read, None))
                    elif isinstance(h, CompressedRandomReader) and h.remote:
                        fs, path = h.filesystem
                        remote.setdefault(id(fs), []).append((fs, path, read, h))
                    else:
                        self._gather(*read, data)
                lo = hi
            for reads in remote.values():
                self._gather_remote(reads, data)
        return data, out_starts, lengths

    def _gather_remote(self, reads: list, data: np.ndarray) -> None:
        """The reads of remote files of one filesystem, their range requests made together: records of plain
        files, and the compressed bytes of the checkpoint intervals that compressed ones inflate."""
        plans = []
        for _, path, read, reader in reads:
            sizes = read[3] + FRAMING_BYTES
            if reader is None:
                plans.append((path, read[2], sizes))
            else:
                starts, stops = reader.input_ranges(read[2], sizes)
                plans.append((path, starts, stops - starts))
        fetched = _fetch_many(reads[0][0], plans, self.coalesce_gap, self.concurrency)
        for (_, _, read, reader), plan, (blobs, rel) in zip(reads, plans, fetched):
            if reader is not None:
                _, starts, sizes = plan
                inputs = [
                    (s, memoryview(b)[r : r + n]) for s, n, b, r in zip(starts.tolist(), sizes.tolist(), blobs, rel)
                ]
                blobs, rel = reader.read_records(read[2], read[3], inputs=inputs), [0] * len(read[2])
            f, idx, offsets, lengths, out_starts = read
            self._gather(f, idx, offsets, lengths, out_starts, data, (blobs, rel))

    def _gather(self, f: int, idx, offsets, lengths, out_starts, data, fetched=None) -> None:
        h = self._handle(f)
        if isinstance(h, CompressedRandomReader) and fetched is None:
            fetched = (h.read_records(offsets, lengths), [0] * len(offsets))
        if isinstance(h, (int, mmap.mmap)):
            result = _native.gather_records(h, offsets, lengths, out_starts, data, self.verify)
            k = result.index
        else:
            if fetched is None:
                assert isinstance(h, tuple)
                fs, path = h
                fetched = _coalesced_ranges(
                    fs, path, offsets, lengths + FRAMING_BYTES, self.coalesce_gap, self.concurrency
                )
            blobs, rel = fetched
            for k, (b, r) in enumerate(zip(blobs, rel)):
                result = _native.gather_records(
                    b, np.array([r], np.int64), lengths[k : k + 1], out_starts[k : k + 1], data, self.verify
                )
                if result.status != GatherStatus.OK:
                    break
            else:
                return
        if result.status != GatherStatus.OK:
            raise self._error(f, int(idx[k]), int(offsets[k]), int(lengths[k]), result)

    def _error(self, f: int, i: int, offset: int, length: int, result: _native.GatherResult):
        path = self.paths[f]
        rec = i - int(self._starts[f])
        where = f"{path!r}, record {rec} at byte {offset}"
        stale = f"; the index may be stale: rebuild it with tfrx.build_index({path!r})"
        status, expected, actual = result.status, result.expected, result.actual
        if status == GatherStatus.DATA_CRC:
            msg, kind = f"data CRC mismatch in {where} (expected 0x{expected:08x}, got 0x{actual:08x})", "data_crc"
        elif status == GatherStatus.LENGTH_CRC:
            msg, kind = (
                (f"length CRC mismatch in {where} (expected 0x{expected:08x}, got 0x{actual:08x})" + stale),
                "length_crc",
            )
        elif status == GatherStatus.LENGTH:
            msg, kind = (
                f"length mismatch in {where} (index says {expected}, file says {actual})" + stale,
                "bogus_length",
            )
        elif status == GatherStatus.IO:
            raise OSError(actual, f"reading {where}: {os.strerror(actual)}")
        else:
            msg, kind = (
                f"record {rec} of {path!r} ({length} bytes at byte {offset}) runs past the end of the file" + stale,
                "truncated",
            )
        return CorruptRecordError(
            msg, path=path, record_index=rec, offset=offset, kind=kind, expected=expected, actual=actual
        )

    def read(self, indices) -> list[bytes]:
        """Records ``indices`` as a list of ``bytes``, in request order."""
        # The bytes objects copy the payloads out, so a per-thread buffer is reused (fresh
        # large allocations cost a page fault per 4 KiB).
        data, starts, lengths = self._read_into(indices, self._scratch)
        return _native.split_records(data, starts, lengths)

    def _finish(self, records: list[bytes]) -> list:
        if self._parser is not None:
            return [self._parser.parse_single(r) for r in records]
        if self.transform is not None:
            return [self.transform(r) for r in records]
        return records

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self._finish(self.read([int(key)]))[0]
        if isinstance(key, slice):
            key = range(*key.indices(len(self)))
        return self.__getitems__(key)

    def __getitems__(self, keys) -> list:
        """Many records at once (PyTorch's and Grain's batched fetch)."""
        keys = np.fromiter(keys, dtype=np.int64) if not isinstance(keys, np.ndarray) else keys
        return self._finish(self.read(keys))

    # Grain's batched read protocol (SupportsBatchedReadRandomAccessDataSource).
    _getitems = __getitems__

    def __iter__(self):
        for start in range(0, len(self), 256):
            yield from self[start : start + 256]

    def __repr__(self) -> str:
        return f"RandomAccessDataset(paths={len(self.paths)}, records={len(self)}, verify={self.verify})"

    # ------------------------------------------------------------ iterable pipelines
    def shuffle_global(
        self,
        seed: int | None = None,
        *,
        equal_shards: str | None = None,
        block_size: int = 256,
        readahead: bool | None = None,
    ):
        """An iterable ``tfrx.data`` source over a seeded permutation of all records.

        The order is a function of ``(seed, epoch)``; each epoch of the
        pipeline (``iterator(epoch=...)``, ``repeat``, the torch adapter's
        ``set_epoch``) reshuffles. Sharded between ranks and workers (the torch
        adapter does it, or :meth:`tfrx.data.Dataset.shard`) on the permutation,
        so every record is read exactly once per epoch. ``equal_shards``
        (``"drop"`` or ``"pad"``) makes the first sharding level (DDP ranks)
        equal in length by dropping the last records of the permutation or
        repeating its first ones. ``block_size`` positions are read per batched
        read (a window: over URLs, its records' range requests go out together,
        coalesced and ``concurrency`` at a time); ``readahead`` reads the next
        block on a thread (worth it on cold caches and remote files; on a warm
        page cache the hand-over costs more than it saves; ``None``, the
        default: when any file is a URL).
        """
        from tfrx.data._global_shuffle import GlobalShuffleDataset

        return GlobalShuffleDataset(
            self,
            seed=seed,
            shuffle=True,
            equal_shards=equal_shards,
            block_size=block_size,
            readahead=self._remote() if readahead is None else readahead,
        )

    def _remote(self) -> bool:
        """Whether any file is read over the network (where reading the next block ahead pays)."""
        return any(is_url(p) for p in self.paths)

    def as_dataset(self, *, equal_shards: str | None = None, block_size: int = 256, readahead: bool | None = None):
        """An iterable ``tfrx.data`` source in file order (sharded on record positions); ``readahead`` as
        in :meth:`shuffle_global`."""
        from tfrx.data._global_shuffle import GlobalShuffleDataset

        return GlobalShuffleDataset(
            self,
            seed=0,
            shuffle=False,
            equal_shards=equal_shards,
            block_size=block_size,
            readahead=self._remote() if readahead is None else readahead,
        )

    def iter(
        self,
        *,
        seed: int | None = None,
        epoch: int = 0,
        rank: int = 0,
        world_size: int = 1,
        equal_shards: str | None = None,
    ):
        """An iterator over this rank's part of the ``(seed, epoch)`` shuffle (``seed=None``: file order)."""
        ds = (
            self.as_dataset(equal_shards=equal_shards)
            if seed is None
            else self.shuffle_global(seed, equal_shards=equal_shards)
        )
        return ds._shard_source(world_size, rank).iterator(epoch=epoch) if world_size > 1 else ds.iterator(epoch=epoch)
