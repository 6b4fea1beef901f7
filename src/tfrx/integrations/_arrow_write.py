"""Arrow record batches written as TFRecord files of Examples or SequenceExamples, for the engine adapters.

One function, :func:`write_batches`: each batch goes through
:func:`tfrx.integrations.arrow.to_examples` (or ``to_sequence_examples``
when the schema's metadata, or ``feature_lists``, names feature-list
columns) into a :class:`tfrx.TFRecordWriter` (one file) or a
:class:`tfrx.io.ShardedWriter` (shards committed together when it closes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence

import pyarrow as pa

from tfrx.integrations._arrow_convert import FEATURE_LISTS_KEY, to_examples, to_sequence_examples
from tfrx.io import ShardedWriter, TFRecordWriter

__all__ = ["write_batches"]


def _feature_lists(schema: pa.Schema, given: Sequence[str] | None) -> list[str] | None:
    if given is not None:
        return list(given)
    meta = schema.metadata or {}
    return json.loads(meta[FEATURE_LISTS_KEY]) if FEATURE_LISTS_KEY in meta else None


def write_batches(
    batches: Iterable[pa.RecordBatch],
    path: str | os.PathLike,
    *,
    feature_lists: Sequence[str] | None = None,
    compression: str | None = None,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    storage_options: dict | None = None,
    chunk_rows: int = 8192,
) -> list[str]:
    """Writes ``batches`` as Examples (or SequenceExamples) to ``path``; returns the paths written.

    Without ``num_shards`` / ``max_records_per_shard`` ``path`` is one file;
    with either it is a :class:`tfrx.io.ShardedWriter` prefix
    (``path.tfrecord-00000-of-00004``, ...).
    """
    sharded = num_shards is not None or max_records_per_shard is not None
    writer: TFRecordWriter | ShardedWriter
    if sharded:
        writer = ShardedWriter(
            path,
            num_shards=num_shards,
            max_records_per_shard=max_records_per_shard,
            compression=compression,
            storage_options=storage_options,
        )
    else:
        writer = TFRecordWriter(path, compression=compression, storage_options=storage_options)
    with writer:
        for batch in batches:
            lists = _feature_lists(batch.schema, feature_lists)
            for start in range(0, batch.num_rows, chunk_rows):
                chunk = batch.slice(start, chunk_rows)
                if lists:
                    writer.write_many(to_sequence_examples(chunk, lists, as_batch=True))
                else:
                    writer.write_many(to_examples(chunk, as_batch=True))
    if sharded:
        assert isinstance(writer, ShardedWriter)
        return [str(p) for p in writer.paths]
    return [os.fspath(path)]
