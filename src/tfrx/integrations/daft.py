"""Daft: TFRecord files as a ``daft.io.source.DataSource`` and a ``DataSink``, over the Arrow scan.

:class:`TFRecordSource` plans one task per record range
(:func:`tfrx.io.plan_ranges`, as Spark, Dask and Ray do: a file, or a part
of an uncompressed file larger than ``split_bytes``, cut by its index's
record offsets or at record boundaries); each task scans its range
with :func:`tfrx.integrations._arrow_scan.scan`, given Daft's pushdowns:
the columns the query reads (only those features are parsed), its filter
(evaluated by Daft on the features it names, which are parsed first; the
other columns are parsed for the rows it keeps only) and its limit (each
task stops once it has that many rows). :func:`read_tfrecord` returns the
``daft.DataFrame``.

:class:`TFRecordSink` (``df.write_sink(TFRecordSink("out/train"))``)
writes every micropartition as one shard under a temporary name and commits
them all together when the write finishes, through the same journalled
commit as :class:`tfrx.io.ShardedWriter` (TFDS names
``train.tfrecord-00000-of-00004`` and a manifest); rows are written as
``tf.train.Example`` (or SequenceExample with ``feature_lists``).

Daft is imported when this module is: ``pip install 'tfrx[daft]'``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

try:
    import daft
    import pyarrow as pa
    from daft.io.sink import DataSink, WriteResult
    from daft.io.source import DataSource, DataSourceTask
    from daft.recordbatch import MicroPartition, RecordBatch
    from daft.schema import Schema
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("tfrx.integrations.daft needs Daft: pip install 'tfrx[daft]'") from None

from tfrx.integrations._arrow_scan import ScanStats, resolve_spec, scan, scan_schema
from tfrx.integrations._arrow_write import write_batches
from tfrx.integrations._scaleout import plan
from tfrx.io._data_files import expand_paths
from tfrx.io.ranges import DEFAULT_MIN_SPLIT_BYTES, RecordRange

__all__ = ["TFRecordSource", "TFRecordSink", "read_tfrecord"]


def _daft_mask(expression: Any):
    def mask(table: pa.Table) -> pa.Array:
        batch = RecordBatch.from_arrow_table(table)
        return batch.eval_expression_list([expression]).to_arrow_table().column(0).combine_chunks()  # type: ignore[arg-type]

    return mask


class _Task(DataSourceTask):
    def __init__(self, piece: RecordRange, schema: Schema, options: dict) -> None:
        self.piece = piece
        self._schema = schema
        self.options = options

    @property
    def schema(self) -> Schema:
        return self._schema

    async def read(self) -> AsyncIterator[RecordBatch]:
        import asyncio

        batches = iter(scan(self.piece.source, ranges=[self.piece], **self.options))
        end = object()
        while True:
            batch = await asyncio.to_thread(next, batches, end)
            if not isinstance(batch, pa.RecordBatch):
                break
            yield RecordBatch.from_arrow_record_batches([batch], batch.schema)


class TFRecordSource(DataSource):
    """TFRecord files of Examples or SequenceExamples as a Daft data source (one task per record range).

    ``paths``: a path, a glob or a list of them. ``spec``: a parse spec or a
    ``(context_features, sequence_features)`` pair; ``None`` infers one from
    the first ``infer_records`` records. ``compression``, ``on_error``,
    ``storage_options`` as for :class:`tfrx.RecordReader`; damaged records
    raise :class:`tfrx.CorruptRecordError` naming file, record and byte
    offset. ``stats``: a ``ScanStats`` every task adds its counts to.
    ``split_bytes``: an uncompressed file (or a compressed one with a
    checkpoint index) larger than this is read by several tasks, one per
    record range of about this size; ``use_index=False`` cuts at record
    boundaries even where an index gives exact record offsets.
    """

    def __init__(
        self,
        paths,
        *,
        spec: Mapping | tuple | None = None,
        compression: str | None = "auto",
        on_error: str = "raise",
        infer_records: int = 1000,
        storage_options: dict | None = None,
        stats: ScanStats | None = None,
        split_bytes: int = DEFAULT_MIN_SPLIT_BYTES,
        use_index: bool = True,
    ) -> None:
        options: dict[str, Any] = {"compression": compression, "storage_options": storage_options}
        self.paths = [str(p) for p in expand_paths(paths, storage_options=storage_options)]
        self.ranges = plan(self.paths, split_bytes=split_bytes, compression=compression or "", use_index=use_index)
        self.spec = resolve_spec(self.paths, spec, infer_records=infer_records, **options)
        self.arrow_schema = scan_schema(self.paths, spec=self.spec, **options)
        self._schema = Schema.from_pyarrow_schema(self.arrow_schema)
        self.options = {**options, "on_error": on_error, "spec": self.spec, "stats": stats, "num_parallel_calls": 1}

    @property
    def name(self) -> str:
        return "TFRecordSource"

    @property
    def schema(self) -> Schema:
        return self._schema

    async def get_tasks(self, pushdowns) -> AsyncIterator[DataSourceTask]:
        names = self.arrow_schema.names
        wanted = None if pushdowns.columns is None else set(pushdowns.columns)
        if wanted is not None and pushdowns.filters is not None:
            wanted |= pushdowns.filter_required_column_names()  # Daft applies the filter again on the task's rows
        columns = names if wanted is None else [c for c in names if c in wanted]
        options = {**self.options, "columns": columns, "limit": pushdowns.limit}
        if pushdowns.filters is not None:
            options["filter"] = _daft_mask(pushdowns.filters)
            options["filter_columns"] = sorted(pushdowns.filter_required_column_names())
        schema = Schema.from_pyarrow_schema(pa.schema([self.arrow_schema.field(c) for c in columns]))
        for piece in self.ranges:
            yield _Task(piece, schema, options)


def read_tfrecord(paths, **options) -> daft.DataFrame:
    """A lazy ``daft.DataFrame`` over TFRecord files: ``TFRecordSource(paths, **options).read()``."""
    return TFRecordSource(paths, **options).read()


class TFRecordSink(DataSink[tuple[str, int]]):
    """Writes a Daft DataFrame as TFRecord shards: ``df.write_sink(TFRecordSink("out/train"))``.

    One shard per micropartition, committed together by :meth:`finalize`
    (as :class:`tfrx.io.ShardedWriter` does: TFDS names, a manifest; a failed
    write leaves no file that looks finished). ``feature_lists``: columns
    written as SequenceExample feature lists. ``compression``: ``None``,
    ``"gzip"`` or ``"zlib"``.
    """

    def __init__(
        self,
        prefix: str | os.PathLike,
        *,
        feature_lists: Sequence[str] | None = None,
        compression: str | None = None,
        naming: str = "tfds",
        manifest: bool = True,
    ) -> None:
        self.prefix = os.fspath(prefix)
        self.feature_lists = list(feature_lists) if feature_lists is not None else None
        self.compression = compression
        self.naming = naming
        self.manifest = manifest
        self.run = uuid.uuid4().hex[:12]
        self.paths: list[str] = []

    def name(self) -> str:
        return "TFRecordSink"

    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(pa.schema([("path", pa.string()), ("records", pa.int64())]))

    def start(self) -> None:
        from tfrx.io._sidecars import SIDECAR_DIR

        os.makedirs(os.path.join(os.path.dirname(self.prefix) or ".", SIDECAR_DIR), exist_ok=True)

    def write(self, micropartitions: Iterator[MicroPartition]) -> Iterator[WriteResult[tuple[str, int]]]:
        from tfrx.io._commit import part_path, sync_part

        for part in micropartitions:
            table = part.to_arrow()
            if table.num_rows == 0:
                continue
            tmp = str(part_path(self.prefix, f"-{self.run}-{uuid.uuid4().hex[:12]}.part"))
            write_batches(table.to_batches(), tmp, feature_lists=self.feature_lists, compression=self.compression)
            sync_part(tmp)
            yield WriteResult(
                result=(tmp, table.num_rows), bytes_written=os.path.getsize(tmp), rows_written=table.num_rows
            )

    def finalize(self, write_results: list[WriteResult[tuple[str, int]]]) -> MicroPartition:
        from tfrx.io._commit import commit_shards

        shards: list[tuple[str | None, int]] = [r.result for r in write_results] or [(None, 0)]
        paths, _ = commit_shards(
            shards, self.prefix, naming=self.naming, compression=self.compression, manifest=self.manifest
        )
        self.paths = [str(p) for p in paths]
        records = [n for _, n in shards]
        table = pa.table({"path": pa.array(self.paths, pa.string()), "records": pa.array(records, pa.int64())})
        return MicroPartition.from_arrow(table)
