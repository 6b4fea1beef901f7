"""The records a viewer shows: random access by global record number, without loading the files.

A local TFDS dataset directory stands for its TFRecord shards.
Uncompressed files (local or fsspec URLs) are read through their record
indexes (``tfrx.RandomAccessDataset``; an index is built on first use, which
reads the file once at the framing scanner's speed and is then kept beside
it or in the index cache). Local GZIP/ZLIB files too, through their
checkpoint index (:mod:`tfrx.io.inflate_index`: a page inflates at most one
checkpoint interval). Remote compressed files and damaged files cannot be read
from the middle: they are streamed once, and the offsets of every record seen
are kept, so a later page re-reads from the nearest earlier position
(``RecordReader`` resumes from any record position).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tfrx.errors import CorruptRecordError, TfrxError
from tfrx.io._compression import detect_compression
from tfrx.io._data_files import expand_paths
from tfrx.io._paths import is_url, source_name

if TYPE_CHECKING:
    from tfrx.data._random_access import RandomAccessDataset

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
    # Streamed files: (intact records before, byte offset, record index in the file) every 1024 records.
    marks: list = field(default_factory=list)
    # Each damaged region met while streaming the file (see :func:`damage_entry`), in file order.
    damage: list = field(default_factory=list)


_DAMAGE_KINDS = {
    "length_crc": "length CRC mismatch",
    "data_crc": "data CRC mismatch",
    "truncated": "truncated record: the file ends inside it",
    "bogus_length": "impossible record length",
    "compression": "the compressed stream is broken",
    "compressed": "a compressed file read as uncompressed",
}


def damage_message(error) -> str:
    """What is wrong, in words that do not number records (the viewer numbers the intact records itself)."""
    kind = getattr(error, "kind", None)
    text = _DAMAGE_KINDS.get(kind or "", None)
    if text is None:
        return str(error)
    offset = getattr(error, "offset", None)
    if offset is not None:
        text += f" at byte {offset}"
    expected, actual = getattr(error, "expected", None), getattr(error, "actual", None)
    if kind in ("length_crc", "data_crc") and isinstance(expected, int) and isinstance(actual, int):
        text += f" (expected 0x{expected:08x}, got 0x{actual:08x})"
    elif expected is not None and actual is not None:
        text += f" (expected {expected}, got {actual})"
    compressed = getattr(error, "compressed_offset", None)
    if compressed is not None:
        text += f"; compressed byte {compressed}"
    return text


def damage_entry(error, region, before: int) -> dict:
    """One damaged region of a file: where (bytes skipped), what, and the intact records around it.

    ``before`` is how many intact records of the file precede the damage, so
    the damage lies between the file's intact records ``before - 1`` and
    ``before`` as the viewer numbers them.
    """
    return {
        "kind": getattr(error, "kind", None) or type(error).__name__,
        "message": damage_message(error),
        "offset": getattr(error, "offset", None),
        "start": None if region is None else int(region.start),
        "end": None if region is None else int(region.end),
        "before": before,
        "file_record": getattr(error, "record_index", None),
    }


def _indexable(shard: Shard) -> bool:
    """Whether a shard is read through an index: uncompressed, or a local GZIP/ZLIB file (checkpoint index)."""
    return not shard.compression or not is_url(shard.path)


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


def _tfds_folder(path) -> str | None:
    """The version directory of a local TFDS dataset directory (or one above its version), else ``None``."""
    import os

    if not isinstance(path, (str, os.PathLike)) or not os.path.isdir(path):
        return None
    from tfrx.tfds._loading import _find_version_dir

    return _find_version_dir(os.fspath(path), None)


def _tfds_shards(paths) -> tuple[list, list[str]]:
    """Each local TFDS dataset directory among ``paths`` as its TFRecord shards; other paths as they are.

    ``paths`` is one path or glob, or a list of them (as ``tfrx view`` gives
    its arguments). Returns the paths to expand and the TFDS version folders.
    """
    import glob
    import os

    items = [paths] if isinstance(paths, (str, bytes, os.PathLike)) else list(paths)
    out: list = []
    folders: list[str] = []
    for item in items:
        folder = _tfds_folder(item)
        if folder is None:
            out.append(item)
            continue
        shards = sorted(glob.glob(os.path.join(glob.escape(folder), "*.tfrecord*")))
        if not shards or not os.path.exists(os.path.join(folder, "dataset_info.json")):
            raise FileNotFoundError(
                f"{os.fspath(item)!r} is a directory but not a TFDS dataset (no dataset_info.json "
                "beside TFRecord shards); give the files or a glob"
            )
        out += shards
        folders.append(folder)
    return out, folders


@dataclass
class TfdsHints:
    """What a TFDS directory's ``features.json`` tells the viewer, by the Example key of each feature.

    ``labels``: ClassLabel names (by file stem, ``objects-label`` for the key
    ``objects/label``); ``boxes``: ``(bbox key, label key or None)`` of each
    ``BBoxFeature`` (stored as ``ymin, xmin, ymax, xmax`` per box);
    ``colormap``: image keys whose values are depth or float data
    (``Image(dtype=float32)``, stored as 4-channel PNGs of the float's bytes,
    ``uint16`` images, ``use_colormap``) with their dtype.
    """

    labels: dict[str, list[str]] = field(default_factory=dict)
    boxes: list[tuple[str, str | None]] = field(default_factory=list)
    colormap: dict[str, str] = field(default_factory=dict)


def _tfds_hints(folders: list[str]) -> TfdsHints:
    import glob
    import os

    hints = TfdsHints()
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(glob.escape(folder), "*.labels.txt"))):
            with open(path, encoding="utf-8") as f:
                hints.labels[os.path.basename(path)[: -len(".labels.txt")]] = [
                    line.strip() for line in f if line.strip()
                ]
        try:
            from tfrx.tfds._info import read_info

            features = read_info(folder, open_file=lambda p: open(p, "rb")).features
        except Exception:  # an unreadable features.json only costs the hints
            continue
        _walk_features(features, "", hints)
    return hints


def _walk_features(feature, key: str, hints: TfdsHints) -> None:
    kind = getattr(feature, "kind", "")
    if kind in ("FeaturesDict", "Translation"):
        items = dict(feature.items())
        for name, child in items.items():
            _walk_features(child, f"{key}/{name}" if key else name, hints)
        boxes = [f"{key}/{n}" if key else n for n, c in items.items() if getattr(c, "kind", "") == "BBoxFeature"]
        boxes += [
            f"{key}/{n}" if key else n
            for n, c in items.items()
            if getattr(c, "kind", "") in ("Sequence", "Dataset") and getattr(c.feature, "kind", "") == "BBoxFeature"
        ]
        if boxes:
            labels = [
                f"{key}/{n}" if key else n
                for n, c in items.items()
                if getattr(c, "kind", "") == "ClassLabel"
                or getattr(getattr(c, "feature", None), "kind", "") == "ClassLabel"
            ]
            hints.boxes += [(b, labels[0] if labels else None) for b in boxes]
    elif kind in ("Sequence", "Dataset", "Video"):
        inner = feature.feature
        if getattr(inner, "kind", "") == "BBoxFeature":
            return  # found by the dict that holds it, beside its labels
        _walk_features(inner, key, hints)
    elif kind in ("Image", "LabeledImage"):
        dtype = getattr(getattr(feature, "dtype", None), "name", "")
        if dtype in ("float32", "uint16") or getattr(feature, "use_colormap", False):
            hints.colormap[key] = dtype


class ViewSource:
    """Records of a path, glob, list of them or URL, addressed by one global record number.

    Indexes go where :func:`tfrx.build_index` puts them (the user's index
    cache, never beside the data), or into ``index_cache_dir``.
    """

    def __init__(self, paths, *, storage_options: dict | None = None, index_cache_dir: str | None = None) -> None:
        expanded, folders = _tfds_shards(paths)
        self.tfds = _tfds_hints(folders)
        self.label_names = self.tfds.labels
        names = [source_name(p) or str(p) for p in expand_paths(expanded, storage_options=storage_options)]
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
        self._indexes: dict[int, object] = {}
        self._count_lock = threading.RLock()
        self._cache_dir = index_cache_dir

    # ------------------------------------------------------------------ counts
    def prepare(self, progress=None) -> None:
        """Counts every file: loads or builds each uncompressed file's index, streams the others.

        ``progress(bytes_done, bytes_total)`` is called as the indexes are
        built (every 256 MiB or so of a file being scanned) and after each file.
        """
        total = sum(s.size or 0 for s in self.shards)
        done = 0
        for k, shard in enumerate(self.shards):
            if shard.count is None and shard.error is None and _indexable(shard) and k not in self._indexes:
                self._indexes[k] = self._index(
                    shard, None if progress is None else (lambda p, base=done: progress(base + p.done, total))
                )
            self.count(k)
            done += shard.size or 0
            if progress is not None:
                progress(done, total)

    def _index(self, shard: Shard, progress):
        from tfrx.io.index import build_index, load_index

        try:
            try:
                return load_index(shard.path, cache_dir=self._cache_dir, build=False)
            except FileNotFoundError:
                return build_index(shard.path, cache_dir=self._cache_dir, progress=progress or False)
        except (TfrxError, ValueError, OSError):
            return None  # count() meets the same problem and records it

    def count(self, k: int) -> int:
        """Records in shard ``k`` (building its index, or streaming it when compressed)."""
        shard = self.shards[k]
        if shard.count is None:
            with self._count_lock:  # one thread counts a file; the others wait for its count
                self._count(shard, k)
        return shard.count or 0

    def _count(self, shard: Shard, k: int) -> None:
        if shard.count is None and shard.error is None:
            try:
                if not _indexable(shard):
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

    def demote(self, k: int) -> None:
        """Reads shard ``k`` by streaming from now on (its index reached a record whose CRC fails).

        Its records are then numbered as the other damaged files' are: the
        intact ones in order, the damage skipped and listed in ``damage``.
        """
        with self._count_lock:
            shard = self.shards[k]
            if shard.streamed:
                return
            with self._lock:
                ds = self._datasets.pop(k, None)
            if ds is not None:
                ds.close()
            shard.streamed, shard.marks, shard.damage = True, [], []
            try:
                shard.count = self._stream_count(shard)
            except (TfrxError, OSError, ValueError) as e:
                shard.error, shard.count = str(e), 0

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
                from tfrx.data._random_access import RandomAccessDataset

                index = self._indexes.get(k)
                ds = RandomAccessDataset(
                    [self.shards[k].path],
                    verify=True,
                    cache_dir=self._cache_dir,
                    index=None if index is None else [index],
                    storage_options=self.storage_options,
                )
                self._datasets[k] = ds
            return ds

    def _stream_count(self, shard: Shard) -> int:
        from tfrx.io._reader import RecordReader

        n = 0
        with RecordReader(shard.path, compression=shard.compression, on_error="skip") as reader:
            while True:
                pos = reader.position
                batch = reader.read_batch(1024)
                if batch is None:
                    break
                shard.marks.append((n, int(pos.offset), int(pos.record_index)))
                n += len(batch)
            stats = reader.stats
        shard.damage = []
        skipped = 0
        for error in stats.errors:
            region = next((r for r in stats.regions if r.error is error), None)
            if region is not None:
                before = int(region.first_record) - skipped
                skipped += int(region.records)
            else:  # a broken compressed stream whose records ended whole: after the last one read
                before = n
            shard.damage.append(damage_entry(error, region, before))
        if shard.damage:
            first = shard.damage[0]["message"]
            more = len(shard.damage) - 1
            shard.error = f"damaged: {first}" + (f" (and {more} more damaged regions)" if more else "")
        return n

    def _stream_read(self, shard: Shard, first: int, count: int) -> list[bytes]:
        from tfrx.io import RecordPosition
        from tfrx.io._reader import RecordReader

        start = None
        skip = first
        for intact, offset, record in shard.marks:
            if intact <= first:
                start, skip = RecordPosition(0, offset, record), first - intact
        out: list[bytes] = []
        kwargs: dict = {"start": start} if start is not None and start.offset else {}
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
                    try:
                        records = self._dataset(k).read(np.arange(local, local + want))
                    except CorruptRecordError:
                        self.demote(k)  # the numbers of this file's records may change: start again
                        return self.read(first, count)
                for j, record in enumerate(records):
                    out.append((number + j, shard.path, local + j, bytes(record)))
                number += len(records)
            k, local = k + 1, 0
        return out

    def batches(self, start: int = 0, stop: int | None = None, size: int = 1024):
        """``(first number, RecordBatch)`` pairs covering records ``start`` to ``stop``, in order.

        Indexed files are read a batch at a time through their index; a
        streamed file is read once from the nearest known position.
        """
        total = self.total()
        stop = total if stop is None else min(stop, total)
        if start >= stop:
            return
        k, local = self.locate(start)
        number = start
        while number < stop and k < len(self.shards):
            shard = self.shards[k]
            end = min(self.count(k), local + stop - number)
            if shard.streamed:
                for batch in self._stream_batches(shard, local, end, size):
                    yield number, batch
                    number += len(batch)
            else:
                ds = self._dataset(k)
                lo = local
                try:
                    for lo in range(local, end, size):
                        hi = min(end, lo + size)
                        batch = ds.read_batch(np.arange(lo, hi))
                        yield number, batch
                        number += hi - lo
                except CorruptRecordError:
                    # Damage the index did not show: the records before it keep their numbers, the
                    # rest of the file is streamed past the damage.
                    self.demote(k)
                    end = min(self.count(k), lo + stop - number)
                    for batch in self._stream_batches(shard, lo, end, size):
                        yield number, batch
                        number += len(batch)
            k, local = k + 1, 0

    def _stream_batches(self, shard: Shard, first: int, end: int, size: int):
        from tfrx.io import RecordPosition
        from tfrx.io._reader import RecordReader

        start, skip = None, first
        for intact, offset, record in shard.marks:
            if intact <= first:
                start, skip = RecordPosition(0, offset, record), first - intact
        kwargs: dict = {"start": start} if start is not None and start.offset else {}
        left = end - first
        with RecordReader(shard.path, compression=shard.compression, on_error="skip", **kwargs) as reader:
            while left > 0:
                batch = reader.read_batch(max(size, skip) if skip else size)
                if batch is None:
                    break
                if skip:
                    cut = min(skip, len(batch))
                    batch, skip = batch[cut:], skip - cut
                batch = batch[:left]
                if len(batch):
                    left -= len(batch)
                    yield batch

    def read_numbers(self, numbers) -> list[tuple[int, str, int, bytes]]:
        """The records with these global numbers (sorted, distinct), as :meth:`read` gives them.

        Indexed files read exactly those records through the index; a
        streamed file is read once over the span the numbers cover.
        """
        numbers = np.asarray(numbers, np.int64)
        out: list[tuple[int, str, int, bytes]] = []
        base = 0
        for k, shard in enumerate(self.shards):
            n = self.count(k)
            mine = numbers[(numbers >= base) & (numbers < base + n)] - base
            if mine.size:
                if shard.streamed:
                    wanted = set(mine.tolist())
                    local = int(mine[0])
                    for batch in self._stream_batches(shard, local, int(mine[-1]) + 1, 1024):
                        for j in range(len(batch)):
                            if local + j in wanted:
                                out.append((base + local + j, shard.path, local + j, batch[j]))
                        local += len(batch)
                else:
                    try:
                        batch = self._dataset(k).read_batch(mine)
                    except CorruptRecordError:
                        self.demote(k)  # numbers past the damage now name other records: start again
                        return self.read_numbers(numbers)
                    out += [(base + int(i), shard.path, int(i), batch[j]) for j, i in enumerate(mine)]
            base += n
        return out

    def sample_numbers(self, count: int, seed: int) -> np.ndarray:
        """``count`` distinct record numbers drawn uniformly from all records (sorted), from ``seed``."""
        total = self.total()
        rng = np.random.default_rng(seed)
        if count >= total:
            return np.arange(total, dtype=np.int64)
        return np.sort(rng.choice(total, size=count, replace=False)).astype(np.int64)

    def record(self, i: int) -> bytes:
        got = self.read(i, 1)
        if not got:
            raise IndexError(f"record {i} is past the last record ({self.total()} records)")
        return got[0][3]

    def close(self) -> None:
        for ds in self._datasets.values():
            ds.close()
        self._datasets.clear()
