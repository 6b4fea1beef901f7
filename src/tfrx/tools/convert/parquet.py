"""Parquet to TFRecord shards and TFRecords back to Parquet."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from tfrx.tools.convert._common import (
    ConvertSummary,
    _check_engine,
    _Errors,
    _committing,
    _map_jobs,
    _sharding,
    _start,
    _worker_policy,
    _writer,
)
from tfrx.tools.convert._records import _decoded_rows, _done, _raw_records
from tfrx.tools.convert._values import _convert_text, _encode_sequence_rows, _json_cell, _normalize_spec
from tfrx._progress import progress_bar
from tfrx.options import ProgressOption


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ImportError("Parquet needs pyarrow: pip install 'tfrx[arrow]'") from None
    return pyarrow


def _arrow_kind(t, pa) -> str | None:
    while (
        pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_dictionary(t)
    ):
        t = t.value_type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return "int64"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "float"
    if (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return "bytes"
    if pa.types.is_null(t):  # only nulls: nothing reaches the wire, any kind will do
        return "bytes"
    return None


def parquet_to_tfrecord(  # noqa: PLR0913  the converters' shared options (sharding, compression, on_error)
    path: str | os.PathLike,
    output: str | os.PathLike,
    *,
    spec: Mapping | None = None,
    columns: list[str] | None = None,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    max_bytes_per_shard: int | None = None,
    compression: str | None = None,
    naming: str = "tfds",
    batch_rows: int = 8192,
    raw: bool = False,
    on_error: str = "raise",
    progress: ProgressOption = None,
    engine: str = "local",
) -> ConvertSummary:
    """Converts a Parquet file into TFRecord shards, one Example per row (needs pyarrow).

    Integer and boolean columns become int64 features, floating point float,
    strings and binary bytes; list columns become multi-valued features and
    nulls are left out. Columns of lists of lists (``list<list<int64>>``),
    and the columns the schema metadata names as feature lists (as
    :func:`tfrecord_to_parquet` and :func:`tfrx.integrations.arrow.to_record_batch` write
    them), are SequenceExample feature lists: one step per inner list (a null
    step is a Feature with no kind), and every row is then a
    SequenceExample whose other columns are its context. ``spec`` forces kinds; a column whose type has no
    Feature kind (structs, maps, timestamps) must be cast first or left out
    with ``columns=``. A value that does not fit a forced kind is a bad input.
    ``engine="ray"`` converts each row group as a Ray task. ``raw=True``
    writes the binary column ``record`` (as ``tfrecord_to_parquet(raw=True)``
    writes it) as the records themselves, unchanged.
    """
    pa = _pyarrow()
    import pyarrow.parquet as pq

    _check_engine(engine)
    path = os.fspath(path)
    summary, errors, t0 = _start(on_error)
    pf = pq.ParquetFile(path)
    if raw:
        return _raw_parquet_to_tfrecord(
            path,
            pf,
            output,
            summary,
            errors,
            t0,
            batch_rows,
            progress,
            _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming),
            compression,
        )
    schema = pf.schema_arrow
    names = columns or schema.names
    kinds = _column_kinds(path, schema, names, spec, pa)
    lists = _feature_list_columns(schema, names, pa)
    summary.spec = dict(kinds)
    total = pf.metadata.num_rows
    writer = _writer(
        output, _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression, total
    )
    with _committing(writer, summary, t0):
        with progress_bar(total, desc="parquet", unit="rec", enabled=progress) as bar:
            if engine == "ray":
                _write_groups_on_ray(path, pf, names, kinds, lists, on_error, batch_rows, writer, errors, bar)
            else:
                row0 = 0
                for batch in pf.iter_batches(batch_size=batch_rows, columns=names):
                    records = _parquet_batch(path, batch, row0, kinds, lists, errors)
                    if records is not None:
                        writer.write_many(records)
                    row0 += batch.num_rows
                    bar.update(batch.num_rows)
    return summary


def _column_kinds(path: str, schema, names, spec: Mapping | None, pa) -> dict:
    """The Feature kind of each column: ``spec``'s, else its Arrow type's; a column without one is an error."""
    given = _normalize_spec(spec or {})
    kinds = {}
    for name in names:
        if name not in schema.names:
            raise ValueError(f"{path!r} has no column {name!r}; columns: {schema.names}")
        kind = given.get(name) or _arrow_kind(schema.field(name).type, pa)
        if kind is None:
            raise ValueError(
                f"{path!r}: column {name!r} has type {schema.field(name).type}, which has no "
                "tf.train.Feature kind; cast it or leave it out with columns="
            )
        kinds[name] = kind
    return kinds


def _write_groups_on_ray(path, pf, names, kinds, lists, on_error, batch_rows, writer, errors, bar) -> None:
    """``engine="ray"``: each row group converted by a Ray task, written here in order."""
    groups = pf.metadata.num_row_groups
    starts = np.cumsum([0] + [pf.metadata.row_group(g).num_rows for g in range(groups)])
    jobs = [(path, g, int(starts[g]), names, kinds, lists, _worker_policy(on_error), batch_rows) for g in range(groups)]
    for batches, skipped, messages, rows in _map_jobs(_parquet_group_job, jobs, "ray", 1):
        for batch in batches:
            writer.write_many(batch)
        errors.add(skipped, messages)
        bar.update(rows)


def _raw_parquet_to_tfrecord(path, pf, output, summary, errors, t0, batch_rows, progress, sharding, compression):
    """The ``record`` column (``tfrecord_to_parquet(raw=True)``) back into records, unchanged."""
    pa = _pyarrow()
    from tfrx.integrations.arrow import RAW_COLUMN

    if RAW_COLUMN not in pf.schema_arrow.names:
        raise ValueError(
            f"{path!r} has no column {RAW_COLUMN!r} (raw=True reads what tfrecord_to_parquet(raw=True) "
            f"writes); columns: {pf.schema_arrow.names}"
        )
    column_type = pf.schema_arrow.field(RAW_COLUMN).type
    if not (pa.types.is_binary(column_type) or pa.types.is_large_binary(column_type)):
        raise ValueError(f"{path!r}: column {RAW_COLUMN!r} has type {column_type}, expected binary")
    writer = _writer(output, sharding, compression, pf.metadata.num_rows)
    with _committing(writer, summary, t0):
        with progress_bar(pf.metadata.num_rows, desc="parquet", unit="rec", enabled=progress) as bar:
            row0 = 0
            for batch in pf.iter_batches(batch_size=batch_rows, columns=[RAW_COLUMN]):
                records = batch.column(0).to_pylist()
                for i in [i for i, r in enumerate(records) if r is None]:
                    errors(f"{path}: row {row0 + i}: {RAW_COLUMN!r} is null")
                writer.write_many([r for r in records if r is not None])
                row0 += batch.num_rows
                bar.update(batch.num_rows)
    return summary


def _feature_list_columns(schema, names, pa) -> frozenset:
    """The columns that hold feature lists: named in the schema metadata, or lists of variable-length lists."""
    from tfrx.integrations.arrow import FEATURE_LISTS_KEY

    named = set(json.loads((schema.metadata or {}).get(FEATURE_LISTS_KEY, b"[]")))
    out = set()
    for name in names:
        t = schema.field(name).type
        if name in named or (
            (pa.types.is_list(t) or pa.types.is_large_list(t))
            and (pa.types.is_list(t.value_type) or pa.types.is_large_list(t.value_type))
        ):
            out.add(name)
    return frozenset(out)


def _parquet_steps(path, name, kind, values, row0, bad, errors, pa_type, pa) -> list:
    """A feature-list column as, per row, None or a list of steps (None for a step with no kind)."""
    natural = _arrow_kind(pa_type, pa)
    out: list = []
    for i, v in enumerate(values):
        if v is None or bad[i]:
            out.append(None)
            continue
        try:
            steps = [None if s is None else (s if isinstance(s, list) else [s]) for s in v]
            if natural != kind:
                steps = [None if s is None else _arrow_cell(s, kind) for s in steps]
            out.append(steps)
        except (ValueError, TypeError, UnicodeDecodeError):
            bad[i] = True
            out.append(None)
            errors(f"{path}: row {row0 + i}: feature list {name!r}: {str(v)[:60]!r} does not fit {kind}")
    return out


def _parquet_batch(path: str, batch, row0: int, kinds: dict, lists: frozenset, errors: _Errors):
    """The Examples (SequenceExamples when there are feature lists) of one Arrow record batch of a Parquet file
    (bad rows left out), or None when none remain."""
    from tfrx.codec import encode_examples

    pa = _pyarrow()
    if batch.num_rows:
        records = _examples_via_arrow(batch, kinds, lists, pa)
        if records is not None:
            return records
    cols = {}
    bad = np.zeros(batch.num_rows, bool)
    for name, kind in kinds.items():
        arr = batch.column(name)
        if pa.types.is_dictionary(arr.type):  # as the Arrow mapping reads them: by their values
            arr = arr.dictionary_decode()
        if pa.types.is_decimal(arr.type):
            arr = arr.cast(pa.float64())
        if name in lists:
            cols[name] = _parquet_steps(path, name, kind, arr.to_pylist(), row0, bad, errors, arr.type, pa)
            continue
        cols[name] = _parquet_column(path, name, kind, arr, row0, bad, errors, pa)
    if bad.any():
        keep = np.flatnonzero(~bad)
        cols = {k: (v[keep] if isinstance(v, np.ndarray) else [v[i] for i in keep]) for k, v in cols.items()}
    if not len(next(iter(cols.values()), [])):
        return None
    if not lists:
        return encode_examples(cols, kinds=kinds, as_batch=True)
    rows = len(next(iter(cols.values())))
    context_kinds = {k: v for k, v in kinds.items() if k not in lists}
    list_kinds = {k: v for k, v in kinds.items() if k in lists}
    if any(step is None for k in lists for v in cols[k] if v is not None for step in v):

        def cell(v):
            return v.item() if isinstance(v, np.generic) else v

        pairs = [
            (
                {k: cell(cols[k][i]) for k in context_kinds if cols[k][i] is not None},
                {k: cols[k][i] for k in lists if cols[k][i] is not None},
            )
            for i in range(rows)
        ]
        return _encode_sequence_rows(pairs, context_kinds, list_kinds)
    from tfrx.codec import encode_sequence_examples

    return encode_sequence_examples(
        {k: cols[k] for k in context_kinds}, {k: cols[k] for k in lists}, kinds=kinds, as_batch=True
    )


def _parquet_column(path: str, name: str, kind: str, arr, row0: int, bad: np.ndarray, errors: _Errors, pa):
    """A column (not a feature list) for the encoder: values converted to ``kind`` when the spec forces another
    kind than the column's own; rows whose value does not fit are marked in ``bad`` and reported."""
    natural = _arrow_kind(arr.type, pa)
    is_list = pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or pa.types.is_fixed_size_list(arr.type)
    if not is_list and natural == kind and arr.null_count == 0 and kind != "bytes" and arr.type != pa.uint64():
        return arr.to_numpy(zero_copy_only=False)
    values = arr.to_pylist()
    for i, v in enumerate(values):
        if v is None or bad[i]:
            continue
        try:
            if natural != kind:
                values[i] = _arrow_cell(v, kind)
        except (ValueError, TypeError, UnicodeDecodeError):
            bad[i] = True
            errors(f"{path}: row {row0 + i}: column {name!r}: {str(v)[:60]!r} does not fit {kind}")
            continue
        problem = _cell_problem(values[i])
        if problem:
            bad[i] = True
            errors(f"{path}: row {row0 + i}: column {name!r}: {problem}")
    return values


def _examples_via_arrow(batch, kinds: dict, lists: frozenset, pa):
    """The Examples (SequenceExamples with feature lists) of a batch whose columns all have their natural kinds,
    through the Arrow -> Example mapping of :func:`tfrx.integrations.arrow.to_examples` /
    :func:`~tfrx.integrations.arrow.to_sequence_examples`; None when a row needs the row-by-row path (a kind
    forced by the spec, or a value the mapping refuses: that path names the row and applies ``on_error``)."""
    from tfrx.integrations.arrow import to_examples, to_sequence_examples

    if any(_arrow_kind(batch.column(name).type, pa) != kind for name, kind in kinds.items()):
        return None
    columns = batch.select(list(kinds))
    try:
        if lists:
            return to_sequence_examples(columns, feature_lists=sorted(lists), as_batch=True)
        return to_examples(columns, as_batch=True)
    except (ValueError, TypeError):
        return None


_INT64_MAX = (1 << 63) - 1


def _cell_problem(value) -> str | None:
    """Why a value of its natural kind has no ``tf.train.Feature`` form (as the Arrow mapping refuses it), or None."""
    items = value if isinstance(value, list) else [value]
    if any(v is None for v in items):
        return "the list holds a null; a tf.train.Feature's list has no nulls (fill or drop them first)"
    if any(isinstance(v, int) and v > _INT64_MAX for v in items):
        return "a value past int64 (Int64List holds signed 64-bit values)"
    return None


def _parquet_group_job(job):
    """A Ray task: the Examples of one row group; returns (record batches, rows skipped, messages, rows read)."""
    import pyarrow.parquet as pq

    path, group, row0, names, kinds, lists, on_error, batch_rows = job
    summary, errors, _ = _start(on_error)
    out, rows = [], 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows, row_groups=[group], columns=names):
        records = _parquet_batch(path, batch, row0 + rows, kinds, lists, errors)
        if records is not None:
            out.append(records)
        rows += batch.num_rows
    return out, summary.skipped, summary.errors, rows


def _arrow_cell(value, kind: str):
    """A Parquet value converted to ``kind`` (text is parsed as a number); ValueError when it does not fit."""
    items = value if isinstance(value, list) else [value]
    out = []
    for v in items:
        if isinstance(v, bytes):
            v = v.decode("utf-8") if kind != "bytes" else v
        if isinstance(v, str) and kind != "bytes":
            out.append(_convert_text(v, kind))
        elif isinstance(v, bytes):
            out.append(v)
        else:
            out.append(_json_cell(v, kind))
    return out if isinstance(value, list) else out[0]


def tfrecord_to_parquet(
    paths,
    output: str | os.PathLike,
    *,
    compression="auto",
    batch_rows: int = 8192,
    raw: bool = False,
    on_error: str = "raise",
    progress: ProgressOption = None,
) -> ConvertSummary:
    """Writes the Examples of TFRecord files as a Parquet file (needs pyarrow).

    Each feature becomes a list column (``list<int64>``, ``list<float>``,
    ``list<binary>``), columns in name order; a feature missing from a record
    is null. A SequenceExample's feature lists become list-of-list columns
    (``list<list<int64>>``: the steps, each a list of values; a step with no
    kind is null) named in the schema metadata under
    ``tfrx.integrations.arrow.FEATURE_LISTS_KEY``, as :func:`tfrx.integrations.arrow.to_record_batch`
    writes them; :func:`parquet_to_tfrecord` and
    :func:`tfrx.integrations.arrow.to_sequence_examples` read them back.

    A feature's kind is the kind of its first value; a later record whose
    value has another kind (or that has a feature list where earlier records
    have a context feature of that name) is a bad input (``on_error``), as are
    damaged records and payloads that are not Examples or SequenceExamples.
    ``raw=True`` writes one ``binary`` column ``record`` with every record's
    bytes instead. (A Parquet file without columns has no rows: when no
    record has any feature, the output is empty.) A feature first seen after the first ``batch_rows`` records
    is added as a column that is null in the earlier rows: the rows written so
    far are then rewritten once, at the end, under the grown schema.
    """
    summary, errors, t0 = _start(on_error)
    output = os.fspath(output)
    if raw:
        return _done(
            summary, _write_raw_parquet(paths, output, compression, batch_rows, on_error, errors, progress), output, t0
        )
    out = _ParquetParts(output, batch_rows)
    rows = out.rows
    n = 0
    try:
        for context, lists, where in _decoded_rows(
            paths, compression, on_error, errors, progress, "parquet", where=True
        ):
            try:
                rows.append(context, lists)
            except ValueError as bad:  # the record does not fit the kinds of the earlier ones
                errors(f"{where}: {bad}")
                continue
            n += 1
            if len(rows) >= batch_rows:
                out.flush()
        out.flush()
        out.finish()
    except BaseException:
        out.abandon()
        raise
    finally:
        out.remove_parts()
    return _done(summary, n, output, t0)


def _write_raw_parquet(paths, output: str, compression, batch_rows: int, on_error, errors, progress) -> int:
    """Every record's bytes as one ``binary`` column ``record``; the number of records written."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    from tfrx.integrations.arrow import RAW_COLUMN

    tmp = output + ".tmp"
    n = 0
    try:
        with pq.ParquetWriter(tmp, pa.schema([(RAW_COLUMN, pa.binary())])) as writer:
            chunk: list = []
            for rec in _raw_records(paths, compression, on_error, errors, progress, "parquet"):
                chunk.append(rec)
                if len(chunk) >= batch_rows:
                    writer.write_table(pa.table({RAW_COLUMN: pa.array(chunk, pa.binary())}))
                    n += len(chunk)
                    chunk = []
            writer.write_table(pa.table({RAW_COLUMN: pa.array(chunk, pa.binary())}))
            n += len(chunk)
        os.replace(tmp, output)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return n


class _ParquetParts:
    """The Parquet output of :func:`tfrecord_to_parquet`: the rows (an :class:`~tfrx.integrations.arrow.ExampleBatchBuilder`,
    which knows the kinds seen so far), and the parts written.

    Parts are written under one schema each: the first is the output's temporary file; a feature first seen
    later starts a new part with the grown schema, and :meth:`finish` rewrites them as one file.
    """

    def __init__(self, output: str, batch_rows: int) -> None:
        from tfrx.integrations.arrow import ExampleBatchBuilder

        self.pa = _pyarrow()
        self.output = output
        self.tmp = output + ".tmp"
        self.batch_rows = batch_rows
        self.rows = ExampleBatchBuilder()
        self.parts: list[str] = []
        self.writer: Any = None
        self.written: Any = None  # the schema of the current part

    def schema(self):
        return self.rows.schema

    def flush(self) -> None:
        """Writes the rows appended since the last flush under the current schema, starting a new part when the
        schema grew."""
        import pyarrow.parquet as pq

        if not len(self.rows):
            return
        batch = self.rows.flush()
        if self.writer is not None and not batch.schema.equals(self.written, check_metadata=True):
            self.writer.close()
            self.writer = None
        if self.writer is None:
            self.parts.append(self.tmp if not self.parts else f"{self.output}.part{len(self.parts)}.tmp")
            self.writer = pq.ParquetWriter(self.parts[-1], batch.schema)
            self.written = batch.schema
        self.writer.write_batch(batch)

    def finish(self) -> None:
        """Closes the last part, merges the parts when there are several, and moves the result to the output."""
        import pyarrow.parquet as pq

        if self.writer is None:
            pq.write_table(self.pa.table({}), self.tmp)
        else:
            self.writer.close()
            self.writer = None
            if len(self.parts) > 1 or not self.schema().equals(self.written, check_metadata=True):
                self.merge()
        os.replace(self.tmp, self.output)

    def merge(self) -> None:
        """Rewrites the parts as one file under the final schema, null columns where a part lacks one."""
        import pyarrow.parquet as pq

        pa = self.pa
        final = self.schema()
        merged = self.output + ".merge.tmp"
        self.parts.append(merged)
        with pq.ParquetWriter(merged, final) as out:
            for part in self.parts[:-1]:
                with pq.ParquetFile(part) as source:
                    batches = list(source.iter_batches(batch_size=self.batch_rows))
                for batch in batches:
                    columns = [
                        batch.column(batch.schema.get_field_index(f.name)).cast(f.type)
                        if f.name in batch.schema.names
                        else pa.nulls(batch.num_rows, f.type)
                        for f in final
                    ]
                    out.write_table(pa.Table.from_arrays(columns, schema=final))
        os.replace(merged, self.tmp)
        self.parts.pop()

    def abandon(self) -> None:
        """After a failure: closes the writer and removes the output's temporary files."""
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:
                pass
        for path in [self.tmp, *self.parts]:
            if os.path.exists(path):
                os.remove(path)

    def remove_parts(self) -> None:
        """Removes the parts after the first (merged into it, or left by a failure)."""
        for path in self.parts[1:]:
            if os.path.exists(path):
                os.remove(path)
