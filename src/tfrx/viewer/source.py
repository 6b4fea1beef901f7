"""The records a viewer shows: random access by global record number, without loading the files.

Uncompressed files (local or fsspec URLs) are read through their record
indexes (``tfrx.RandomAccessDataset``; an index is built on first use, which
reads the file once at the framing scanner's speed and is then kept beside
it or in the index cache). Compressed files cannot be read from the middle:
they are streamed once, and the offsets of every record seen are kept, so a
later page re-reads from the nearest earlier position (``RecordReader``
resumes from any record position).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tfrx.errors import TfrxError
from tfrx.io.compression import detect_compression
from tfrx.io.paths import expand_paths, is_url, source_name

if TYPE_CHECKING:
    from tfrx.data.random_access import RandomAccessDataset

__all__ = ["Shard", "ViewSource"]


@dataclass
class Shard:
    """One file: its name, compression, size and (once known) record count."""

    path: str
    compression: str
    size: int | None = None
    count: int | None = None
    error: str | None = None
    streamed: bool = False  # read from the start, not through an index (compressed, or damaged)
    # Compressed files: positions (record index, byte offset) every 1024 records seen so far.
    marks: list = field(default_factory=list)


def _head(path: str, storage_options: dict | None) -> bytes:
    if is_url(path):
        import fsspec

        with fsspec.open(path, "rb", **(storage_options or {})) as f:
            return f.read(64)
    with open(path, "rb") as f:
        return f.read(64)


def _size(path: str) -> int | None:
    try:
        if is_url(path):
            import fsspec

            return int(fsspec.core.url_to_fs(path)[0].size(path))
        import os

        return os.path.getsize(path)
    except Exception:
        return None


class ViewSource:
    """Records of a path, glob, list of them or URL, addressed by one global record number.

    Indexes go where :func:`tfrx.build_index` puts them (beside the file when
    its folder is writable, else the index cache), or into ``index_cache_dir``.
    """

    def __init__(self, paths, *, storage_options: dict | None = None, index_cache_dir: str | None = None) -> None:
        names = [source_name(p) or str(p) for p in expand_paths(paths, storage_options=storage_options)]
        if not names:
            raise FileNotFoundError(f"no TFRecord files match {paths!r}")
        self.storage_options = storage_options
        self.shards: list[Shard] = []
        for name in names:
            try:
                compression = detect_compression(_head(name, storage_options))
            except OSError as e:
                self.shards.append(Shard(name, "", error=str(e)))
                continue
            self.shards.append(Shard(name, compression or "", _size(name)))
        self._lock = threading.Lock()
        self._datasets: dict[int, RandomAccessDataset] = {}
        self._cache_dir = index_cache_dir

    # ------------------------------------------------------------------ counts
    def count(self, k: int) -> int:
        """Records in shard ``k`` (building its index, or streaming it when compressed)."""
        shard = self.shards[k]
        if shard.count is None and shard.error is None:
            try:
                if shard.compression:
                    shard.streamed = True
                    shard.count = self._stream_count(shard)
                else:
                    shard.count = len(self._dataset(k))
            except (TfrxError, ValueError) as e:
                # A damaged file has no index: stream it, skipping the damage, so every intact record shows.
                shard.error = str(e)
                shard.streamed = True
                try:
                    shard.count = self._stream_count(shard)
                except (TfrxError, OSError, ValueError) as again:
                    shard.error = str(again)
            except OSError as e:
                shard.error = str(e)
        return shard.count or 0

    def total(self) -> int:
        return sum(self.count(k) for k in range(len(self.shards)))

    def locate(self, i: int) -> tuple[int, int]:
        """(shard, record within it) of global record ``i``."""
        if i < 0:
            raise IndexError(f"record {i} is negative")
        for k in range(len(self.shards)):
            n = self.count(k)
            if i < n:
                return k, i
            i -= n
        raise IndexError("record number past the last record")

    # ------------------------------------------------------------------ reading
    def _dataset(self, k: int):
        with self._lock:
            ds = self._datasets.get(k)
            if ds is None:
                from tfrx.data.random_access import RandomAccessDataset

                ds = RandomAccessDataset([self.shards[k].path], verify=True, cache_dir=self._cache_dir,
                                         storage_options=self.storage_options)
                self._datasets[k] = ds
            return ds

    def _stream_count(self, shard: Shard) -> int:
        from tfrx.io.reader import RecordReader

        n = 0
        with RecordReader(shard.path, compression=shard.compression, on_error="skip") as reader:
            while True:
                pos = reader.position
                batch = reader.read_batch(1024)
                if batch is None:
                    break
                shard.marks.append((int(pos.record_index), int(pos.offset)))
                n += len(batch)
        return n

    def _stream_read(self, shard: Shard, first: int, count: int) -> list[bytes]:
        from tfrx.io import RecordPosition
        from tfrx.io.reader import RecordReader

        start = None
        skip = first
        for record, offset in shard.marks:
            if record <= first:
                start, skip = RecordPosition(0, offset, record), first - record
        out: list[bytes] = []
        kwargs: dict = {"start": start} if start is not None and start.record_index else {}
        with RecordReader(shard.path, compression=shard.compression, on_error="skip", **kwargs) as reader:
            for record in reader:
                if skip:
                    skip -= 1
                    continue
                out.append(record)
                if len(out) >= count:
                    break
        return out

    def read(self, first: int, count: int) -> list[tuple[int, str, int, bytes]]:
        """Up to ``count`` records from global number ``first``: (number, shard path, index in shard, bytes)."""
        out: list[tuple[int, str, int, bytes]] = []
        try:
            k, local = self.locate(first)
        except IndexError:
            return out
        number = first
        while len(out) < count and k < len(self.shards):
            shard = self.shards[k]
            n = self.count(k)
            want = min(count - len(out), n - local)
            if want > 0:
                if shard.streamed:
                    records = self._stream_read(shard, local, want)
                else:
                    records = self._dataset(k).read(np.arange(local, local + want))
                for j, record in enumerate(records):
                    out.append((number + j, shard.path, local + j, bytes(record)))
                number += len(records)
            k, local = k + 1, 0
        return out

    def record(self, i: int) -> bytes:
        got = self.read(i, 1)
        if not got:
            raise IndexError(f"record {i} is past the last record ({self.total()} records)")
        return got[0][3]

    def close(self) -> None:
        for ds in self._datasets.values():
            ds.close()
        self._datasets.clear()
