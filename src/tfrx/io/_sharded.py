"""Writing a dataset as several TFRecord shards, crash-safely, with a manifest."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from tfrx.errors import TfrxError
from tfrx.io._batch import RecordBatch
from tfrx.io._framing import FRAMING_BYTES
from tfrx.options import normalize_compression
from tfrx.io._paths import is_url, url_to_fs, with_options
from tfrx.io._sidecars import SIDECAR_DIR, index_sidecar, legacy_manifest_path, manifest_path
from tfrx.io._writer import TFRecordWriter
from tfrx.io._commit import commit_shards, discard_parts, part_path, shard_name, sync_part

__all__ = ["ShardedWriter", "shard_name", "read_manifest"]


def read_manifest(prefix: str | os.PathLike, *, storage_options: dict | None = None) -> dict:
    """The manifest :class:`ShardedWriter` (or the Ray sink) wrote for ``prefix``.

    Read from ``.tfrx/<name>.manifest.json`` beside the shards, else from
    ``<prefix>.manifest.json`` where earlier versions wrote it. Keys:
    ``num_shards``, ``num_records``, ``num_bytes``, ``shardLengths`` (as
    TFDS), ``shards`` (``name``, ``records``, ``bytes`` each), ``compression``.
    """
    import json

    from tfrx.io._paths import open_input

    prefix = with_options(os.fspath(prefix), storage_options)
    tried = []
    for path in (manifest_path(prefix), legacy_manifest_path(prefix)):
        try:
            with open_input(path) as f:
                blob = f.read()
        except FileNotFoundError:
            tried.append(str(path))
            continue
        try:
            return json.loads(blob)
        except ValueError as e:
            raise TfrxError(f"manifest {str(path)!r} is not valid JSON ({e}); rewrite the shard set") from None
    raise FileNotFoundError(f"no manifest for {str(prefix)!r}: looked for {' and '.join(map(repr, tried))}")


class _Shard:
    __slots__ = ("index", "tmp", "writer", "records", "payload_bytes")

    def __init__(self, index: int, tmp: str, writer: TFRecordWriter) -> None:
        self.index = index
        self.tmp = tmp
        self.writer: TFRecordWriter | None = writer  # None once the shard is finished
        self.records = 0
        self.payload_bytes = 0

    def open_writer(self) -> TFRecordWriter:
        assert self.writer is not None  # only finished shards have none
        return self.writer


class ShardedWriter:
    """Writes records into TFRecord shards named like TFDS's, then a JSON manifest.

    How records are spread:

    * ``num_shards=N`` alone: record ``i`` goes to shard ``i % N``
      (round-robin; all N files are open at once and come out the same size
      within one record). With ``total_records=`` known in advance, records
      are split into N contiguous runs instead, as TFDS does, so shard 0 holds
      the first records.
    * ``max_records_per_shard`` and/or ``max_bytes_per_shard``: records fill
      one shard after the other; a new shard starts when the next record would
      exceed a limit (a single record larger than ``max_bytes_per_shard`` gets
      a shard of its own). The number of shards is known only at the end.
    * nothing: a single shard.

    Crash safety: every shard is written under a temporary name in the hidden
    folder ``.tfrx/`` beside the shards (``.tfrx/<name>-00003.tmp`` while
    open, ``.tfrx/<name>-00003.part`` once complete), where no glob written
    for the shards can match it. Only ``close()`` - after every shard is
    flushed and synced - commits them (:mod:`tfrx.io._commit`): it writes
    a journal listing the final names, moves the shards to their final
    ``-of-NNNNN`` names, writes the manifest (``.tfrx/<name>.manifest.json``:
    names, record counts, bytes, ``shardLengths`` as TFDS) and deletes the
    journal. A writer killed at any point of that leaves either no final
    name touched, or a journal (and, with TFDS names, a ``-of-NNNNN`` count)
    from which every tfrx reader given a glob or list sees that shards are
    missing and raises :class:`tfrx.IncompleteShardSetError`; the ``.part``
    files it leaves are intact TFRecord files. Leaving the ``with`` block on
    an exception removes the temporary files.

    On an object store (``prefix`` an fsspec URL such as ``s3://bucket/train``,
    ``storage_options`` passed to fsspec) a shard is uploaded under its
    ``.part`` name, which appears only once the upload completes, and
    ``close()`` copies each one to its final name and deletes the ``.part``,
    in the same journalled order; the journal and the manifest are written
    in one request each.

    ``index=True`` writes an index sidecar for each shard
    (``.tfrx/<shard>.tfrxidx``) with :func:`tfrx.build_index`; for GZIP/ZLIB shards, the checkpoint
    index (``.tfrx/<shard>.tfrxzidx``, :func:`tfrx.io.inflate_index.build_inflate_index`: one inflate
    pass over each finished shard), so they have random access and split into record ranges too.
    ``compression``: ``None``, ``"gzip"`` or ``"zlib"``.
    """

    def __init__(
        self,
        prefix: str | os.PathLike,
        *,
        num_shards: int | None = None,
        max_records_per_shard: int | None = None,
        max_bytes_per_shard: int | None = None,
        compression: str | None = None,
        naming: str = "tfds",
        index: bool = False,
        total_records: int | None = None,
        manifest: bool = True,
        sync: bool = True,
        storage_options: dict | None = None,
    ) -> None:
        self.prefix = os.fspath(prefix)
        self._fs: Any = None  # an fsspec filesystem for remote prefixes
        if is_url(self.prefix):
            self.prefix = with_options(self.prefix, storage_options)
            self._fs, _ = url_to_fs(self.prefix)
            storage_options = getattr(self.prefix, "storage_options", storage_options)
        self.storage_options = storage_options
        if num_shards is not None and (max_records_per_shard is not None or max_bytes_per_shard is not None):
            raise ValueError("pass num_shards, or max_records_per_shard / max_bytes_per_shard, not both")
        for name, v in (
            ("num_shards", num_shards),
            ("max_records_per_shard", max_records_per_shard),
            ("max_bytes_per_shard", max_bytes_per_shard),
        ):
            if v is not None and (not isinstance(v, (int, np.integer)) or v < 1):
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if naming != "tfds":
            try:
                shard_name("p", 0, 1, naming)
            except (KeyError, IndexError, ValueError) as e:
                raise ValueError(
                    f"naming template {naming!r} is not valid: {e!r}; use the fields {{prefix}}, {{index}} and {{total}}"
                ) from None
            if shard_name("p", 0, 2, naming) == shard_name("p", 1, 2, naming):
                raise ValueError(f"naming template {naming!r} must use {{index}} so shard names differ")
        self.compression = normalize_compression(compression)
        self.naming = naming
        self.num_shards = int(num_shards) if num_shards is not None else None
        self.max_records = max_records_per_shard
        self.max_bytes = max_bytes_per_shard
        self.total_records = total_records
        self.want_index = bool(index)
        self.want_manifest = bool(manifest)
        self.sync = bool(sync)
        if self.want_index:
            from tfrx.io.index import build_index

            self._build_index = build_index
        directory = os.path.dirname(self.prefix)
        if self._fs is None:
            os.makedirs(os.path.join(directory, SIDECAR_DIR), exist_ok=True)
        self._done: list[_Shard] = []
        self._open: list[_Shard] = []
        self._next = 0  # records written so far
        self._closed = False
        self.paths: list[str] = []
        self.manifest: dict | None = None
        if self.num_shards is not None:
            self._open = [self._new_shard(i) for i in range(self.num_shards)]
        else:
            self._open = [self._new_shard(0)]

    # -------------------------------------------------------------- shards
    def _tmp_name(self, index: int, state: str) -> str:
        return part_path(self.prefix, f"-{index:05d}.{state}")

    def _new_shard(self, index: int) -> _Shard:
        # An object appears only when its upload completes, so remote shards
        # are written straight under their ".part" name.
        tmp = self._tmp_name(index, "tmp" if self._fs is None else "part")
        return _Shard(index, tmp, TFRecordWriter(tmp, compression=self.compression))

    def _finish(self, shard: _Shard) -> None:
        shard.open_writer().close()
        if self._fs is not None:
            shard.writer = None
            self._done.append(shard)
            return
        if self.sync:
            sync_part(shard.tmp)
        part = self._tmp_name(shard.index, "part")
        os.replace(shard.tmp, part)
        shard.tmp = part
        shard.writer = None
        self._done.append(shard)

    def _roll(self) -> _Shard:
        shard = self._open[0]
        self._finish(shard)
        new = self._new_shard(shard.index + 1)
        self._open = [new]
        return new

    def _target(self, size: int) -> _Shard:
        """The shard the next record of ``size`` bytes goes to."""
        if self.num_shards is not None:
            if self.total_records:
                k = min(self._next * self.num_shards // self.total_records, self.num_shards - 1)
            else:
                k = self._next % self.num_shards
            return self._open[k]
        shard = self._open[0]
        if shard.records and (
            (self.max_records is not None and shard.records >= self.max_records)
            or (self.max_bytes is not None and _disk_estimate(shard) + size + FRAMING_BYTES > self.max_bytes)
        ):
            shard = self._roll()
        return shard

    # -------------------------------------------------------------- writing
    def _check(self) -> None:
        if self._closed:
            raise ValueError("write to a closed ShardedWriter")

    def write(self, record) -> None:
        """Writes one serialized record (bytes-like)."""
        self._check()
        if isinstance(record, str):
            raise TypeError("ShardedWriter.write expects bytes, not str")
        n = len(memoryview(record).cast("B")) if not isinstance(record, bytes) else len(record)
        shard = self._target(n)
        shard.open_writer().write(record)
        shard.records += 1
        shard.payload_bytes += n
        self._next += 1

    def write_many(self, records: RecordBatch | Iterable) -> int:
        """Writes many records (a :class:`tfrx.RecordBatch` or an iterable of bytes); returns how many."""
        self._check()
        if not isinstance(records, RecordBatch):
            items = records.tolist() if isinstance(records, np.ndarray) else list(records)
            if items and isinstance(items[0], str):
                raise TypeError("ShardedWriter.write_many expects bytes records, not str")
            records = RecordBatch.from_records(items) if items else RecordBatch(np.zeros(0, np.uint8), [], [])
        count = len(records)
        if count == 0:
            return 0
        if self.num_shards is not None and not self.total_records:
            first = self._next % self.num_shards
            for j in range(min(self.num_shards, count)):
                k = (first + j) % self.num_shards
                part = records[j :: self.num_shards]
                self._put(self._open[k], part)
            self._next += count
            return count
        i = 0
        lengths = records.lengths
        while i < count:
            shard = self._target(int(lengths[i]))
            j = self._run_end(shard, records, i)
            self._put(shard, records[i:j])
            self._next += j - i
            i = j
        return count

    def _run_end(self, shard: _Shard, records: RecordBatch, i: int) -> int:
        """How far from ``i`` records can go to ``shard`` without crossing a limit (at least one record)."""
        count = len(records)
        if self.num_shards is not None:  # contiguous split of a known total
            assert self.total_records is not None  # without one, write_many deals records round-robin
            boundary = -(-(shard.index + 1) * self.total_records // self.num_shards)
            return max(i + 1, min(count, i + boundary - self._next)) if shard.index < self.num_shards - 1 else count
        j = count
        if self.max_records is not None:
            j = min(j, i + max(1, self.max_records - shard.records))
        if self.max_bytes is not None:
            room = self.max_bytes - _disk_estimate(shard)
            sizes = np.cumsum(records.lengths[i:j] + FRAMING_BYTES)
            # _target has made sure record i fits (or has an empty shard to itself)
            j = i + max(1, int(np.searchsorted(sizes, room, side="right")))
        return j

    def _put(self, shard: _Shard, batch: RecordBatch) -> None:
        shard.open_writer().write_many(batch)
        shard.records += len(batch)
        shard.payload_bytes += int(batch.lengths.sum())

    # -------------------------------------------------------------- closing
    def close(self) -> list[str]:
        """Finishes every shard, renames them to their final names, writes the manifest; returns the paths."""
        if self._closed:
            return self.paths
        for shard in self._open:
            self._finish(shard)
        self._open = []
        shards = sorted(self._done, key=lambda s: s.index)
        build = None
        if self.want_index:

            def build(path: str) -> None:
                if self.compression:  # a compressed stream's index: inflate checkpoints, beside the shard
                    from tfrx.io.inflate_index import build_inflate_index

                    build_inflate_index(path, sidecar=True)
                else:
                    self._build_index(path, index_path=index_sidecar(path))

        self._closed = True
        self.paths, self.manifest = commit_shards(
            [(shard.tmp, shard.records) for shard in shards],
            self.prefix,
            naming=self.naming,
            compression=self.compression,
            fs=self._fs,
            storage_options=self.storage_options,
            manifest=self.want_manifest,
            build_index=build,
            sync=self.sync,
        )
        return self.paths

    @property
    def manifest_path(self) -> str:
        """Where the manifest (shard names, record counts) is written on close: ``.tfrx/<name>.manifest.json``."""
        return manifest_path(self.prefix)

    def abort(self) -> None:
        """Closes and deletes every temporary shard file; nothing final is written."""
        if self._closed:
            return
        self._closed = True
        for shard in self._open:
            try:
                writer = shard.open_writer()
                writer.abort() if self._fs is not None else writer.close()
            except Exception:
                pass
        shards = [*self._open, *self._done]
        if self._fs is not None:  # an upload that did not complete left no object
            shards = [shard for shard in shards if shard.writer is None]
        discard_parts(
            [shard.tmp for shard in shards], fs=self._fs, directory=os.path.dirname(self._tmp_name(0, "part"))
        )
        self._open, self._done = [], []

    @property
    def records_written(self) -> int:
        """Records written so far, across all shards."""
        return self._next

    def __enter__(self) -> ShardedWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                self.close()
            except BaseException:
                # e.g. the disk filled while the last buffered bytes were flushed
                self.abort()
                raise
        else:
            self.abort()

    def __repr__(self) -> str:
        return f"ShardedWriter({self.prefix!r}, records={self._next}, closed={self._closed})"


def _disk_estimate(shard: _Shard) -> int:
    return shard.payload_bytes + FRAMING_BYTES * shard.records
