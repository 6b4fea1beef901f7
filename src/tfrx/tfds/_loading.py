"""Reading a prepared TFDS directory: ``builder(dir)``, ``load(dir, split=...)``, random access."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from typing import Any

import numpy as np

from tfrx.errors import SpecError
from tfrx.io._paths import is_url, open_input
from tfrx.tfds import features as features_lib
from tfrx.tfds import _splits as splits_lib
from tfrx.tfds._info import DatasetInfo, read_info


class SkipDecoding:
    """``tfds.decode.SkipDecoding()``: keep an Image / Video / lazily decoded Audio feature's encoded bytes."""

    def __repr__(self) -> str:
        return "SkipDecoding()"


def _skip_keys(decoders, features) -> frozenset:
    """Flat keys of the image features ``decoders`` (a nested dict of SkipDecoding) skips."""
    if decoders is None:
        return frozenset()
    out = set()

    def walk(dec, feat, prefix):
        if isinstance(dec, SkipDecoding) or (isinstance(dec, type) and issubclass(dec, SkipDecoding)):
            out.update(_encoded_keys(feat, prefix))
            return
        if not isinstance(dec, Mapping):
            raise TypeError(
                f"decoders: expected SkipDecoding() or a dict of them at {prefix or '<root>'!r}, "
                f"got {type(dec).__name__}"
            )
        while isinstance(feat, features_lib.Sequence):
            feat = feat.feature
        for k, d in dec.items():
            if not isinstance(feat, features_lib.FeaturesDict) or k not in feat.features:
                raise KeyError(f"decoders: no feature {(prefix + '/' + k) if prefix else k!r}")
            walk(d, feat.features[k], f"{prefix}/{k}" if prefix else k)

    walk(decoders, features, "")
    return frozenset(out)


def _encoded_keys(feat, prefix):
    if isinstance(feat, (features_lib.Image, features_lib.AudioFile)):
        return [prefix]
    if isinstance(feat, features_lib.Sequence):
        return _encoded_keys(feat.feature, prefix)
    if isinstance(feat, features_lib.FeaturesDict):
        return [k for n, f in feat.features.items() for k in _encoded_keys(f, f"{prefix}/{n}" if prefix else n)]
    return []


class DataSource:
    """Random access to the examples a split string selects (map-style: ``len``, ``ds[i]``, ``ds[[i, j]]``).

    Usable as a Grain ``RandomAccessDataSource`` and a PyTorch map-style dataset;
    picklable into DataLoader workers. Records are read through tfrx record
    indexes (built once per shard and cached; ``cache_dir`` chooses where).
    """

    def __init__(
        self,
        builder: Builder,
        split,
        *,
        decoders=None,
        unknown: str = "raise",
        as_supervised: bool = False,
        cache_dir: str | None = None,
        interleave_cycle_length: int | None = 1,
        interleave_block_length: int = splits_lib.DEFAULT_BLOCK_LENGTH,
    ) -> None:
        info = builder.info
        self.split = split
        self._info = info
        # One parsing spec for the whole split, built from features.json; every
        # read is one native parse of the block of records it fetched.
        self._decoder = features_lib.Decoder(
            info.features, skip_decoding=_skip_keys(decoders, info.features), unknown=unknown
        )
        self._supervised = as_supervised
        if as_supervised and not info.supervised_keys:
            raise ValueError(f"as_supervised=True but {info.full_name} has no supervised_keys")
        ranges = splits_lib.resolve(split, {k: v.shard_lengths for k, v in info.splits.items()})
        names = list(dict.fromkeys(name for name, _, _ in ranges))
        # Shard readers (and their record indexes) are opened on the first read:
        # len() and the pipeline's cardinality come from shardLengths alone.
        self._files = {}
        for name in names:
            si = info.splits[name]
            self._files[name] = [(f, n) for f, n in zip(si.filenames, si.shard_lengths) if n]
        self._readers: dict = {}
        self._cache_dir = cache_dir
        self._storage_options = builder.storage_options
        parts_r, parts_p, takes = [], [], []
        for name, start, stop in ranges:
            si = info.splits[name]
            first = dict(zip(si.filenames, np.cumsum([0] + list(si.shard_lengths[:-1]))))
            for path, skip, take in splits_lib.file_instructions(start, stop, si.filenames, si.shard_lengths):
                parts_r.append(np.full(take, names.index(name), np.int32))
                parts_p.append(np.arange(first[path] + skip, first[path] + skip + take, dtype=np.int64))
                takes.append(take)
        self._reader_of = np.concatenate(parts_r) if parts_r else np.zeros(0, np.int32)
        self._pos = np.concatenate(parts_p) if parts_p else np.zeros(0, np.int64)
        if interleave_cycle_length is None:  # TFDS's default ReadConfig
            interleave_cycle_length = 1 if info.disable_shuffling else splits_lib.DEFAULT_CYCLE_LENGTH
        # The file instructions read as TFDS's interleave reads them (one interleave over all of them).
        order = splits_lib.interleave_order(takes, interleave_cycle_length, interleave_block_length)
        if interleave_cycle_length > 1:
            self._reader_of, self._pos = self._reader_of[order], self._pos[order]
        self._names = names

    def __len__(self) -> int:
        return len(self._pos)

    def __repr__(self) -> str:
        return f"tfrx.tfds.DataSource(name={self._info.name}, split={str(self.split)!r}, num_records={len(self)})"

    def _reader(self, name: str):
        reader = self._readers.get(name)
        if reader is None:
            from tfrx.data._random_access import RandomAccessDataset

            files = [f for f, _ in self._files[name]]
            reader = RandomAccessDataset(files, cache_dir=self._cache_dir, storage_options=self._storage_options)
            for (path, n), got in zip(self._files[name], reader.file_counts()):
                if n != got:
                    raise SpecError(
                        f"{path}: dataset_info.json says {n} examples (shardLengths) but the file "
                        f"holds {got} records; the directory is incomplete or was rewritten"
                    )
            self._readers[name] = reader
        return reader

    def _decode(self, name: str, pos: np.ndarray) -> list:
        reader = self._reader(name)
        records = reader.read_batch(pos)

        def where(i: int) -> str:
            path, rec, offset = reader.locate(int(pos[i]))
            return f"{path!r}, record {rec} at byte {offset} (split {name!r} example {int(pos[i])})"

        values = self._decoder.decode(records, where=where)
        if self._supervised:
            keys = self._info.supervised_keys
            return [tuple(_select(v, k) for k in keys) for v in values]
        return values

    def _normalize(self, keys) -> np.ndarray:
        idx = np.asarray(keys, dtype=np.int64).reshape(-1)
        n = len(self)
        if np.any((idx < -n) | (idx >= n)):
            bad = int(idx[(idx < -n) | (idx >= n)][0])
            raise IndexError(f"index {bad} out of range for split {str(self.split)!r} of {n} examples")
        return np.where(idx < 0, idx + n, idx)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self.__getitems__([int(key)])[0]
        if isinstance(key, slice):
            key = range(*key.indices(len(self)))
        return self.__getitems__(key)

    def __getitems__(self, keys) -> list:
        idx = self._normalize(list(keys) if not isinstance(keys, np.ndarray) else keys)
        out: list = [None] * len(idx)
        for r, name in enumerate(self._names):
            sel = np.nonzero(self._reader_of[idx] == r)[0]
            if not len(sel):
                continue
            for j, value in zip(sel, self._decode(name, self._pos[idx[sel]])):
                out[j] = value
        return out

    _getitems = __getitems__  # Grain's batched read protocol

    def __iter__(self):
        for start in range(0, len(self), 256):
            yield from self[start : start + 256]

    def close(self) -> None:
        for r in self._readers.values():
            r.close()
        self._readers = {}


def _select(value, key):
    if isinstance(key, tuple):
        return tuple(_select(value, k) for k in key)
    if isinstance(key, dict):
        return {k: _select(value, v) for k, v in key.items()}
    for part in key.split("/"):
        value = value[part]
    return value


class Builder:
    """A prepared TFDS dataset directory (``tfds.builder_from_directory``), read without TensorFlow."""

    def __init__(self, data_dir, *, storage_options: dict | None = None, cache_dir: str | None = None) -> None:
        data_dir = _local(data_dir)
        self.data_dir = data_dir.rstrip("/") if is_url(data_dir) else data_dir
        self.storage_options = storage_options
        self.info: DatasetInfo = read_info(
            self.data_dir, open_file=lambda p: open_input(p, storage_options=storage_options), index_cache_dir=cache_dir
        )

    @property
    def name(self) -> str:
        return self.info.name

    def __repr__(self) -> str:
        return f"tfrx.tfds.Builder({self.data_dir!r}, name={self.info.name!r}, version={self.info.version!r})"

    def as_data_source(
        self,
        split,
        *,
        decoders=None,
        unknown: str = "raise",
        as_supervised: bool = False,
        cache_dir: str | None = None,
        interleave_cycle_length: int | None = 1,
        interleave_block_length: int = splits_lib.DEFAULT_BLOCK_LENGTH,
    ) -> DataSource:
        """Random access over ``split`` (any TFDS split string or :func:`even_splits` item).

        Index ``i`` is the ``i``-th example in file order (shard after shard), as
        TFDS's data sources number them. ``interleave_cycle_length=None`` numbers
        them in the order ``as_dataset`` reads them instead (TFDS's default
        interleave), any other value in the order of that ``tf.data`` interleave.
        """
        return DataSource(
            self,
            split,
            decoders=decoders,
            unknown=unknown,
            as_supervised=as_supervised,
            cache_dir=cache_dir,
            interleave_cycle_length=interleave_cycle_length,
            interleave_block_length=interleave_block_length,
        )

    def as_dataset(
        self,
        split=None,
        *,
        decoders=None,
        shuffle_files: bool = False,
        seed: int | None = None,
        as_supervised: bool = False,
        unknown: str = "raise",
        cache_dir: str | None = None,
        block_size: int = 64,
        interleave_cycle_length: int | None = None,
        interleave_block_length: int = splits_lib.DEFAULT_BLOCK_LENGTH,
    ):
        """A ``tfrx.data`` pipeline of the examples of ``split``, in the order TFDS reads them.

        ``split=None`` gives ``{name: dataset}`` for every split, as TFDS does.
        With ``shuffle_files=False`` the examples come in the order of
        ``tfds.as_numpy(builder.as_dataset(split, shuffle_files=False))``: TFDS's
        default ``ReadConfig`` interleaves the shards, 16 open at a time, 16
        examples from each in turn (one shard after another for datasets
        prepared with ``disable_shuffling``). ``interleave_cycle_length`` and
        ``interleave_block_length`` are ``tfds.ReadConfig``'s; pass
        ``interleave_cycle_length=1`` for file order (shard after shard).
        The pipeline shards on example positions (``.shard()``, the torch
        adapter's workers and ranks): every example is read exactly once per
        epoch. ``shuffle_files=True`` reads the examples in a seeded random
        order (an exact global shuffle, where TFDS only shuffles shard order).
        """
        if split is None:
            return {
                name: self.as_dataset(
                    name,
                    decoders=decoders,
                    shuffle_files=shuffle_files,
                    seed=seed,
                    as_supervised=as_supervised,
                    unknown=unknown,
                    cache_dir=cache_dir,
                    block_size=block_size,
                    interleave_cycle_length=interleave_cycle_length,
                    interleave_block_length=interleave_block_length,
                )
                for name in self.info.splits
            }
        from tfrx.data._global_shuffle import GlobalShuffleDataset

        source = self.as_data_source(
            split,
            decoders=decoders,
            unknown=unknown,
            as_supervised=as_supervised,
            cache_dir=cache_dir,
            interleave_cycle_length=interleave_cycle_length,
            interleave_block_length=interleave_block_length,
        )
        return GlobalShuffleDataset(
            source, seed=seed if shuffle_files else 0, shuffle=bool(shuffle_files), block_size=block_size
        )


def builder(data_dir, *, storage_options: dict | None = None, cache_dir: str | None = None) -> Builder:
    """The prepared TFDS dataset at ``data_dir`` (``<root>/<name>/[<config>/]<version>/``, local or URL).

    A directory above the version (``<root>/<name>`` or ``<root>/<name>/<config>``)
    picks its newest version.
    """
    return Builder(_find_version_dir(data_dir, storage_options), storage_options=storage_options, cache_dir=cache_dir)


class _Dirs:
    """The few directory operations finding a version directory needs, locally or through fsspec."""

    def __init__(self, path: str, storage_options: dict | None) -> None:
        self.remote = is_url(path)
        if self.remote:
            from tfrx.io._paths import url_to_fs

            self._fs, _ = url_to_fs(path, storage_options)

    def _fs_path(self, path: str) -> str:
        return self._fs._strip_protocol(path)

    def join(self, path: str, name: str) -> str:
        return path.rstrip("/") + "/" + name if self.remote else os.path.join(path, name)

    def dirname(self, path: str) -> str:
        return path.rstrip("/").rsplit("/", 1)[0] if self.remote else os.path.dirname(path)

    def isfile(self, path: str) -> bool:
        return self._fs.isfile(self._fs_path(path)) if self.remote else os.path.isfile(path)

    def isdir(self, path: str) -> bool:
        return self._fs.isdir(self._fs_path(path)) if self.remote else os.path.isdir(path)

    def exists(self, path: str) -> bool:
        return self._fs.exists(self._fs_path(path)) if self.remote else os.path.exists(path)

    def listdir(self, path: str) -> list:
        if not self.remote:
            return sorted(os.listdir(path))
        return sorted(posixpath.basename(p.rstrip("/")) for p in self._fs.ls(self._fs_path(path), detail=False))


def _local(path) -> str:
    path = os.fsdecode(os.fspath(path)) if not isinstance(path, str) else path
    if path.lower().startswith("file://"):
        path = path[len("file://") :]
    return path if is_url(path) else os.path.expanduser(path)


def _find_version_dir(data_dir, storage_options) -> str:
    """The version directory at or below ``data_dir``; a shard or json file inside one gives its directory."""
    path = _local(data_dir)
    d = _Dirs(path, storage_options)
    if d.isfile(path):
        return d.dirname(path)
    if d.exists(d.join(path, "dataset_info.json")) or not d.isdir(path):
        return path.rstrip("/") if d.remote else path
    versions = []
    names = d.listdir(path)
    for name in names:
        parts = name.split(".")
        if (
            len(parts) == 3
            and all(p.isdigit() for p in parts)
            and d.exists(d.join(d.join(path, name), "dataset_info.json"))
        ):
            versions.append((tuple(int(p) for p in parts), name))
    if versions:
        return d.join(path, max(versions)[1])
    subdirs = [d.join(path, name) for name in names if d.isdir(d.join(path, name))]
    if len(subdirs) == 1:
        return _find_version_dir(subdirs[0], storage_options)
    return path


def _named(name: str, data_dir) -> str:
    """``"mnist"``, ``"mnist:3.0.1"``, ``"wmt19_translate/de-en:1.0.0"`` under ``data_dir`` -> a directory."""
    name, _, version = name.partition(":")
    root = os.fsdecode(os.fspath(data_dir))
    sep = "/" if is_url(root) else os.sep
    path = root.rstrip("/" + os.sep) + sep + name.replace("/", sep)
    return path + sep + version if version else path


def load(  # noqa: PLR0913  mirrors tfds.load's arguments
    path,
    *,
    split=None,
    data_dir=None,
    decoders=None,
    shuffle_files: bool = False,
    seed: int | None = None,
    as_supervised: bool = False,
    with_info: bool = False,
    unknown: str = "raise",
    storage_options: dict | None = None,
    cache_dir: str | None = None,
    interleave_cycle_length: int | None = None,
    interleave_block_length: int = splits_lib.DEFAULT_BLOCK_LENGTH,
) -> Any:
    """``tfds.load`` for a prepared directory: ``load(dir, split="train[:10%]+test")``.

    ``path`` is the dataset directory, or with ``data_dir=`` a TFDS name
    (``"mnist"``, ``"mnist:3.0.1"``, ``"name/config:version"``; the newest
    version when none is given) under that root, as ``tfds.load(name,
    data_dir=...)`` takes it. Returns a ``tfrx.data`` dataset (a dict of them
    with ``split=None``), or ``(dataset, info)`` with ``with_info=True``.
    Examples come in TFDS's order (its default interleave of the shards);
    ``interleave_cycle_length=1`` reads them shard after shard.
    """
    if data_dir is not None:
        path = _named(str(path), _local(data_dir))
    b = builder(path, storage_options=storage_options, cache_dir=cache_dir)
    ds = b.as_dataset(
        split,
        decoders=decoders,
        shuffle_files=shuffle_files,
        seed=seed,
        as_supervised=as_supervised,
        unknown=unknown,
        cache_dir=cache_dir,
        interleave_cycle_length=interleave_cycle_length,
        interleave_block_length=interleave_block_length,
    )
    return (ds, b.info) if with_info else ds
