"""save / load: a dataset written to a directory of TFRecord shards and read back.

``Dataset.save(path, compression=None, shard_func=None)`` writes every
element as one record (``elements.py``'s exact encoding: dtypes, shapes and
values survive) into ``path/shard-<k>.tfrecord`` files, and last a
``path/dataset_spec.json`` naming the shards, their element counts and the
compression; ``Dataset.load(path)`` reads them back, shard after shard.
``shard_func(element)`` (an integer) picks each element's shard (default:
all in shard 0); elements keep their order within a shard. This is tfrx's
own layout, not ``tf.data``'s snapshot format: directories written by
``tf.data.Dataset.save`` are not readable here, nor the reverse.

The spec file is written last (and atomically), so an interrupted save leaves
no loadable directory. ``load`` returns a ``TFRecordDataset`` pipeline, with
its state and exact resume; ``reader_func`` (TensorFlow's hook) gets the
dataset of per-shard datasets and returns the dataset to read, by default
their concatenation in shard order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import numpy as np

from tfrx.data._dataset import Dataset, transformation
from tfrx.data._elements import ElementsDataset, decode_element, encode_element
from tfrx.data._map import call_with_element
from tfrx.options import normalize_compression

__all__ = ["SPEC_FILE", "save_dataset", "load_dataset"]

SPEC_FILE = "dataset_spec.json"
_FORMAT = "tfrx.save/1"


def _shard_name(k: int) -> str:
    return f"shard-{k:05d}.tfrecord"


def save_dataset(dataset: Dataset, path, *, compression: str | None = None, shard_func: Callable | None = None) -> None:
    from tfrx.io._writer import TFRecordWriter

    compression = normalize_compression(compression)
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    writers: dict[int, TFRecordWriter] = {}
    counts: dict[int, int] = {}
    try:
        with iter(dataset) as it:
            for element in it:
                k = 0
                if shard_func is not None:
                    k_raw = np.asarray(call_with_element(shard_func, element))
                    if k_raw.shape != () or k_raw.dtype.kind not in "iu" or int(k_raw) < 0:
                        raise ValueError(f"save: shard_func must return a non-negative integer, got {k_raw!r}")
                    k = int(k_raw)
                if k not in writers:
                    writers[k] = TFRecordWriter(os.path.join(path, _shard_name(k)), compression=compression)
                    counts[k] = 0
                writers[k].write(encode_element(element))
                counts[k] += 1
    finally:
        for w in writers.values():
            w.close()
    spec = {
        "format": _FORMAT,
        "compression": compression,
        "shards": [{"file": _shard_name(k), "elements": counts[k]} for k in sorted(writers)],
    }
    tmp = os.path.join(path, SPEC_FILE + ".tmp")
    with open(tmp, "w") as f:
        json.dump(spec, f, indent=1)
    os.replace(tmp, os.path.join(path, SPEC_FILE))


def _decode(record):
    return decode_element(bytes(record))


def load_dataset(path, *, compression: str | None = "auto", reader_func: Callable | None = None) -> Dataset:
    from tfrx.data._concatenate import ConcatenateDataset
    from tfrx.data._tfrecord import TFRecordDataset

    compression = normalize_compression(compression, allow_auto=True)
    path = os.fspath(path)
    spec_path = os.path.join(path, SPEC_FILE)
    try:
        with open(spec_path) as f:
            spec = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"load: {spec_path!r} does not exist; {path!r} is not a directory written by Dataset.save "
            "(or the save did not finish)"
        ) from None
    if spec.get("format") != _FORMAT:
        raise ValueError(f"load: {spec_path!r} has format {spec.get('format')!r}, expected {_FORMAT!r}")
    comp = (spec["compression"] or None) if compression == "auto" else compression
    shards = [TFRecordDataset(os.path.join(path, s["file"]), compression=comp) for s in spec["shards"]]
    if reader_func is not None:
        records = reader_func(ElementsDataset(shards))
        if not isinstance(records, Dataset):
            raise TypeError(f"load: reader_func must return a Dataset, got {type(records).__name__}")
    elif not shards:
        records = ElementsDataset([])
    else:
        records = shards[0]
        for s in shards[1:]:
            records = ConcatenateDataset(records, s)
    return records.map(_decode)


@transformation
def save(
    self: Dataset, path, compression: str | None = None, shard_func: Callable | None = None, checkpoint_args=None
) -> None:
    """Writes the elements under directory ``path`` (TFRecord shards and a spec file) for :meth:`Dataset.load`."""
    if checkpoint_args is not None:
        raise NotImplementedError("save: checkpoint_args (tf.train.Checkpoint) is not supported; save in one pass")
    save_dataset(self, path, compression=compression, shard_func=shard_func)


@transformation(static=True)
def load(path, element_spec=None, compression: str | None = "auto", reader_func: Callable | None = None) -> Dataset:
    """The dataset :meth:`Dataset.save` wrote under ``path`` (``element_spec`` is accepted and not needed).

    ``compression="auto"`` (the default) reads the shards as they were saved; ``None`` means none, as
    everywhere (TensorFlow's default), ``"GZIP"`` / ``"ZLIB"`` name it.
    """
    return load_dataset(path, compression=compression, reader_func=reader_func)
