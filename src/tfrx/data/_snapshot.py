"""snapshot: the first complete pass written under a directory and read from it after.

As ``tf.data.Dataset.snapshot(path)``: when ``path`` holds a finished
snapshot, its elements are read; otherwise the input is read and written
there, and the snapshot becomes usable when that pass reaches the end (an
interrupted pass leaves nothing usable). This is ``cache(filename)``
(``cache.py``) with the file ``path/snapshot.cache``: tfrx keys a snapshot by
its path only, whereas TensorFlow adds a fingerprint of the pipeline, so
point a changed pipeline at a new path. ``compression`` (``"auto"``, the
default: tfrx chooses; ``None``, ``"GZIP"``, ``"ZLIB"``, and TensorFlow's
``"SNAPPY"``, checked as everywhere), ``reader_func`` and ``shard_func`` are
accepted for ``tf.data`` compatibility; the file is not compressed and not sharded (a pipeline sharded for workers and ranks does
get one file per shard, as ``cache`` does).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from tfrx.data._cache import CacheDataset
from tfrx.data._dataset import Dataset, transformation
from tfrx.options import normalize_compression

__all__ = ["SNAPSHOT_FILE"]

SNAPSHOT_FILE = "snapshot.cache"


@transformation
def snapshot(
    self: Dataset,
    path,
    compression: str | None = "auto",
    reader_func: Callable | None = None,
    shard_func: Callable | None = None,
    name: str | None = None,
) -> Dataset:
    """The first complete pass stored under directory ``path``; later passes (and runs) read it."""
    if not (isinstance(compression, str) and compression.lower() == "snappy"):  # TensorFlow's, not tfrx's
        normalize_compression(compression, allow_auto=True)
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    return CacheDataset(self, os.path.join(path, SNAPSHOT_FILE))
