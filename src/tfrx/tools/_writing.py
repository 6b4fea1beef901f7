"""write_examples: columns or rows of features written as tf.train.Example records, to one file or shards."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from tfrx.codec import encode_examples, make_example
from tfrx.io.index import build_index
from tfrx.io._paths import is_url
from tfrx.io._sharded import ShardedWriter
from tfrx.io._writer import TFRecordWriter

__all__ = ["write_examples"]

_CHUNK_ROWS = 8192


def _column_length(col) -> int:
    if hasattr(col, "row_splits"):
        return len(col.row_splits) - 1
    return len(col)


def _iter_column_chunks(columns: Mapping, chunk: int):
    lengths = {k: _column_length(v) for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"columns have different lengths: {lengths}")
    n = next(iter(lengths.values()), 0)
    if any(hasattr(v, "row_splits") for v in columns.values()) or n <= chunk:
        yield n, columns
        return
    for lo in range(0, n, chunk):
        yield min(chunk, n - lo), {k: v[lo : lo + chunk] for k, v in columns.items()}


def _serialized_rows(data: Iterable, kinds: Mapping | None):
    """Each row as serialized Example bytes, in lists of at most ``_CHUNK_ROWS``."""
    pending: list[bytes] = []
    for row in data:
        if isinstance(row, (bytes, bytearray, memoryview)):
            pending.append(bytes(row))
        elif isinstance(row, Mapping):
            pending.append(make_example(row, kinds=kinds).SerializeToString(deterministic=True))
        elif hasattr(row, "SerializeToString"):
            pending.append(row.SerializeToString(deterministic=True))
        else:
            raise TypeError(
                f"write_examples: rows must be dicts, Example messages or bytes, got {type(row).__name__}; "
                "pass columns as a dict of arrays"
            )
        if len(pending) >= _CHUNK_ROWS:
            yield pending
            pending = []
    if pending:
        yield pending


def _single_file_writer(path: str, compression: str | None, storage_options: dict | None) -> TFRecordWriter:
    directory = os.path.dirname(path)
    if directory and not is_url(path):
        os.makedirs(directory, exist_ok=True)
    return TFRecordWriter(path, compression=compression, storage_options=storage_options)


def write_examples(
    prefix_or_path: str | os.PathLike,
    data: Any,
    *,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    max_bytes_per_shard: int | None = None,
    compression: str | None = None,
    naming: str = "tfds",
    index: bool = False,
    kinds: Mapping | None = None,
    storage_options: dict | None = None,
) -> list[str]:
    """Writes ``data`` as ``tf.train.Example`` records; returns the paths written.

    ``data`` is either columns - a mapping of feature name to a NumPy array
    (first axis: examples), a :class:`tfrx.Ragged` or a list - serialized by
    the native columnar encoder (:func:`tfrx.encode_examples`), or rows - an
    iterable of ``{name: value}`` dicts built with :func:`tfrx.make_example`
    (or ready ``tfrx.train.Example`` messages / serialized bytes).

    Without any sharding argument the records go to the single file
    ``prefix_or_path``; with ``num_shards``, ``max_records_per_shard`` or
    ``max_bytes_per_shard`` they go through a :class:`~tfrx.io._sharded.ShardedWriter`
    (columns are split into contiguous shards, rows round-robin).
    ``storage_options`` go to fsspec when ``prefix_or_path`` is a URL.
    """
    path = os.fspath(prefix_or_path)
    is_columns = isinstance(data, Mapping)
    total = None
    if is_columns and data:
        lengths = {_column_length(v) for v in data.values()}
        total = lengths.pop() if len(lengths) == 1 else None
    writer: ShardedWriter | TFRecordWriter
    if num_shards is not None or max_records_per_shard is not None or max_bytes_per_shard is not None:
        writer = ShardedWriter(
            prefix_or_path,
            num_shards=num_shards,
            max_records_per_shard=max_records_per_shard,
            max_bytes_per_shard=max_bytes_per_shard,
            compression=compression,
            naming=naming,
            index=index,
            total_records=total if num_shards is not None else None,
            storage_options=storage_options,
        )
    else:
        writer = _single_file_writer(path, compression, storage_options)
    if is_columns:
        batches = (
            encode_examples(chunk, kinds=kinds, as_batch=True) for _, chunk in _iter_column_chunks(data, _CHUNK_ROWS)
        )
    else:
        batches = _serialized_rows(data, kinds)
    try:
        for batch in batches:
            writer.write_many(batch)
    except BaseException:
        if isinstance(writer, ShardedWriter) or is_url(path):
            writer.abort()  # no half-written shard set or object appears
        else:
            writer.close()
        raise
    if isinstance(writer, ShardedWriter):
        return writer.close()
    writer.close()
    if index:
        build_index(path, sidecar=True)
    return [path]
