"""Dask DataFrames: read TFRecord files into one, partition by record range, and write one back as shards.

:func:`read_tfrecord` builds the DataFrame with ``dask.dataframe.from_map``:
one partition per record range (:func:`tfrx.io.ranges.plan_ranges`: a large
uncompressed file gives several, by its index or at record boundaries;
a compressed file one), each read with both CRCs checked and parsed
natively into Arrow, then pandas. Selecting columns afterwards
(``ddf[["a", "b"]]``) is pushed into the reads by Dask's optimizer, so only
those features are parsed; ``meta`` comes from the spec, so nothing is read
to build the graph (except a sample when the spec is inferred).

:func:`to_tfrecord` writes every partition to a part in ``.tfrx/`` and,
once all have succeeded, commits them in partition order as TFDS shards
with :mod:`tfrx.io._commit`'s journal; a failed partition leaves no shard
and no part.

Dask is imported when this module is: ``pip install 'tfrx[dask]'``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

try:
    import dask
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("tfrx.integrations.dask needs Dask DataFrames: pip install 'tfrx[dask]'") from None

from tfrx.integrations import _scaleout as so
from tfrx.io.ranges import RecordRange
from tfrx.options import check_on_error, normalize_compression

__all__ = ["read_tfrecord", "to_tfrecord"]


class _ReadRange:
    """Reads one record range into a pandas DataFrame (``columns``: Dask's projection)."""

    def __init__(
        self, spec, columns: list[str] | None, compression: str, on_error: str, batch_size: int, scalars: list[str]
    ) -> None:
        self.spec = spec
        self.scalars = scalars
        self.columns = columns
        self.compression = compression
        self.on_error = on_error
        self.batch_size = batch_size

    def __call__(self, piece: RecordRange, columns: Sequence[str] | None = None) -> pd.DataFrame:
        wanted = list(columns) if columns is not None else self.columns
        if self.spec is False:
            wanted = None
        p = so.make_plan(self.spec, wanted)
        batches = [
            so.scalars_from_lists(b, self.scalars, str(piece.source)) if self.scalars else b
            for b in so.read_piece(
                piece, p, compression=self.compression, on_error=self.on_error, batch_size=self.batch_size
            )
        ]
        schema = _schema(p, self.scalars)
        return _pandas(pa.Table.from_batches(batches, schema=schema))


def _schema(p, scalars: Sequence[str]) -> pa.Schema:
    """The Arrow schema of a plan's batches once its zero-or-one-value columns are scalars."""
    schema = so.plan_schema(p)
    return pa.schema([pa.field(f.name, f.type.value_type) if f.name in scalars else f for f in schema])


def _pandas(table: pa.Table) -> pd.DataFrame:
    """Every column a ``pd.ArrowDtype`` column: nulls kept in numbers, bytes and lists lossless (never turned
    into strings by Dask's ``dataframe.convert-string``)."""
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def read_tfrecord(
    paths,
    spec=None,
    columns: Sequence[str] | None = None,
    *,
    record_type: str | None = None,
    compression: str | None = "auto",
    on_error: str = "raise",
    split_bytes: int = 64 << 20,
    build_index: bool = False,
    infer_files: int = 8,
    infer_records: int = 1000,
    batch_size: int = 8192,
) -> dd.DataFrame:
    """Reads TFRecord files of Examples or SequenceExamples into a Dask DataFrame, one partition per record range.

    ``paths``: files, globs or folders (a folder stands for the data files
    under it). ``spec``: a parse spec, a ``(context, sequence)`` pair, or
    ``None`` to infer one from the first ``infer_records`` records of up to
    ``infer_files`` files spread over the input (features whose kinds differ
    between files raise ``ValueError`` naming them; differing value counts
    become list columns). ``record_type="bytes"`` (or ``spec=False``) gives
    the raw records in one column ``record``. ``columns``: the features to
    read. ``split_bytes``: the bytes per partition of a large uncompressed
    file; ``build_index``: build missing indexes first (exact record
    numbers in errors). ``compression`` and ``on_error`` as for
    :class:`tfrx.RecordReader`: damaged records raise
    :class:`tfrx.CorruptRecordError` naming file, record and byte offset.

    Columns are ``pd.ArrowDtype`` columns of the Arrow types of
    :func:`tfrx.integrations.arrow.to_record_batch` (``int64[pyarrow]``,
    ``float[pyarrow]``, ``binary[pyarrow]``, lists). With an inferred spec,
    a feature that held at most one value in every sampled record is a
    scalar column, null where a record lacks it.
    """
    compression = normalize_compression(compression, allow_auto=True)
    check_on_error(on_error)
    scalars: list[str] = []
    kind = so.record_type(record_type) if record_type is not None else ""
    if kind == "bytes":
        spec = False
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    sources = so.expand([os.fspath(p) if isinstance(p, os.PathLike) else p for p in given])
    sources = [os.fspath(s) if isinstance(s, os.PathLike) else s for s in sources]
    if spec is None:
        inferred = so.infer_spec(
            sources,
            kind={"example": "example", "sequence_example": "sequence"}.get(kind, "auto"),
            files=infer_files,
            records=infer_records,
            compression=compression,
        )
        spec, scalars = so.nullable_scalars(inferred.check())
    elif spec is not False and isinstance(spec, tuple):
        spec = (dict(spec[0] or {}), dict(spec[1] or {}))
    elif spec is not False:
        spec = dict(spec)
    cols = list(columns) if columns is not None else None
    plan = so.make_plan(spec, cols)
    meta = _pandas(_schema(plan, scalars).empty_table())
    ranges = so.plan(sources, split_bytes=split_bytes, compression=compression, build_index=build_index)
    reader = _ReadRange(spec, cols, compression, on_error, batch_size, scalars)
    return dd.from_map(reader, ranges, meta=meta, label="read-tfrecord", enforce_metadata=False)


def _write_partition(
    frame: pd.DataFrame,
    number: int,
    prefix: str,
    run: str,
    record_type: str,
    compression: str | None,
    feature_lists: list[str] | None,
    batch_rows: int,
) -> tuple[int, str, int]:
    import uuid

    path = so.part_for(prefix, run, f"{number:05d}-{uuid.uuid4().hex[:8]}")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    records = so.write_part(
        table.to_batches(max_chunksize=batch_rows),
        path,
        record_type=record_type,
        compression=compression,
        feature_lists=feature_lists,
    )
    return number, path, records


def to_tfrecord(
    ddf: dd.DataFrame,
    prefix: str | os.PathLike,
    *,
    record_type: str = "example",
    compression: str | None = None,
    feature_lists: Sequence[str] | None = None,
    index: bool = False,
    manifest: bool = True,
    batch_rows: int = 8192,
    **compute_kwargs: Any,
) -> list[str]:
    """Writes a Dask DataFrame as TFRecord shards, one per non-empty partition; returns the shard paths.

    ``prefix`` as for :class:`tfrx.ShardedWriter`: ``out/train`` gives
    ``out/train.tfrecord-00000-of-00004``, ... Rows become Examples
    (:func:`tfrx.integrations.arrow.to_examples`: integers and booleans
    int64, floats float, bytes and strings bytes, list columns several
    values, nulls missing features); ``record_type="sequence_example"``
    writes SequenceExamples whose feature lists are ``feature_lists`` (by
    default the columns of lists of lists), ``"bytes"`` writes the one
    column's values as raw records. Every partition is written to a part
    under ``.tfrx/``; only when all have succeeded are the parts moved to
    their shard names, in partition order, with the journalled commit
    (:func:`tfrx.io._commit.commit_shards`), and a failure deletes the parts.
    ``index``: write an index beside every shard. ``compute_kwargs`` go to
    ``dask.compute`` (``scheduler=...``).
    """
    prefix = os.fspath(prefix)
    kind = so.record_type(record_type)
    compression = normalize_compression(compression)
    lists = list(feature_lists) if feature_lists is not None else None
    run = so.new_run()
    root = os.path.dirname(prefix) or "."
    tasks = [
        dask.delayed(_write_partition)(part, i, prefix, run, kind, compression, lists, batch_rows)
        for i, part in enumerate(ddf.to_delayed())
    ]
    try:
        results = dask.compute(*tasks, **compute_kwargs)
        parts = [(path, records) for _, path, records in sorted(results)]
        return so.commit_parts(parts, prefix, compression=compression, index=index, manifest=manifest)
    finally:
        so.discard_run(root, run, recursive=False)
