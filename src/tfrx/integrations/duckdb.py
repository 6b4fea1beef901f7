"""DuckDB: ``SELECT ... FROM tfrecord('train-*.tfrecord.gz')`` over the Arrow scan, with projection and filters pushed in.

DuckDB's Python API has no table functions written in Python
(``create_function`` makes scalar functions only, and its replacement
scans resolve Python variables, not calls), so the glob cannot be looked up
when a query names it. What DuckDB does scan from Python is an Arrow
*source*: an object registered under a name (``con.register``) or a
Python variable a query names, which every query scans afresh and which is
offered the query's columns and filters. :func:`source` builds one over
:func:`tfrx.integrations._arrow_scan.scan`:

* **projection**: only the columns the query reads are parsed;
* **filters**: a filter DuckDB offers (comparisons of a column with a
  constant, ``AND``/``OR``/``NOT``, ``IS [NOT] NULL``, ``IN``) is taken when
  it names scalar features and translates exactly to Arrow (DuckDB's own
  translation, NaN ordering included); its features are parsed first and
  the other columns only for the rows it keeps. Any other filter DuckDB
  applies itself.

:func:`register` registers sources for the globs it is given and defines
the table macro ``tfrecord(path)`` over them, so that
``FROM tfrecord('train-*.tfrecord.gz')`` reads like DuckDB's own
``read_parquet``; a path not registered first is an error naming it.

Writing: ``con.sql(query).arrow()`` (a ``pyarrow.Table``) goes to
``tfrx.integrations.arrow.to_examples`` and a tfrx writer, or in one call
:func:`write_tfrecord`.

DuckDB is imported when this module is: ``pip install 'tfrx[duckdb]'``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

try:
    import duckdb
    import pyarrow as pa
    from duckdb._sources import ArrowScanSource
    from duckdb._sources.nodes import Untranslatable
    from duckdb._sources.to_arrow import to_arrow
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tfrx.integrations.duckdb needs DuckDB 2 (its Arrow source protocol) and pyarrow: pip install 'tfrx[duckdb]'"
    ) from None

from tfrx.integrations._arrow_scan import ScanStats, resolve_spec, scan, scan_schema
from tfrx.integrations._arrow_write import write_batches
from tfrx.options import renamed_arguments

__all__ = ["TFRecordSource", "source", "register", "write_tfrecord", "MACRO", "VIEW_PREFIX"]

#: The table macro :func:`register` defines.
MACRO = "tfrecord"
#: Registered sources are named ``VIEW_PREFIX + path``.
VIEW_PREFIX = "tfrecord:"


def _scalar(t: pa.DataType) -> bool:
    return not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


class TFRecordSource(ArrowScanSource):
    """TFRecord files as a DuckDB Arrow source: each query scans them afresh, parsing only what it needs."""

    schema_is_stable = True

    def __init__(self, paths, *, spec: Mapping | tuple | None = None, stats: ScanStats | None = None, **options):
        super().__init__(self)
        self.paths = paths
        self.options = options
        self.stats = stats
        scan_opts = {k: options[k] for k in ("compression", "storage_options", "infer_records") if k in options}
        self.spec = resolve_spec(paths, spec, **scan_opts)
        scan_opts.pop("infer_records", None)
        self.schema = scan_schema(paths, spec=self.spec, **scan_opts)

    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """The whole scan as an Arrow C stream (any Arrow consumer can read the source this way)."""
        reader = scan(self.paths, spec=self.spec, stats=self.stats, **self.options)
        return reader.__arrow_c_stream__(requested_schema)

    def _names(self, predicate) -> list[str]:
        found: list[str] = []
        pending = [predicate]
        while pending:
            node = pending.pop()
            parts = getattr(node, "parts", None)
            if parts is not None:
                found.append(parts[0])
            pending.extend(node._children())
        return found

    def accepts(self, predicate) -> bool:
        """Whether the scan applies ``predicate`` exactly as DuckDB would (scalar features, translatable)."""
        if not all(_scalar(self.schema.field(n).type) for n in self._names(predicate)):
            return False
        try:
            to_arrow(predicate, self.schema)
        except (Untranslatable, KeyError):
            return False
        return True

    def stream(self, columns: Sequence[int] | None, filters: Sequence[Any]) -> tuple[object, bool]:
        """A fresh scan of ``columns`` (declared indexes) keeping the rows every one of ``filters`` keeps."""
        names = None if columns is None else [self.schema.names[i] for i in columns]
        expression = None
        for predicate in filters:
            term = to_arrow(predicate, self.schema)
            expression = term if expression is None else expression & term
        reader = scan(self.paths, columns=names, filter=expression, spec=self.spec, stats=self.stats, **self.options)
        return reader.__arrow_c_stream__(), True


@renamed_arguments(num_threads="num_parallel_calls")
def source(
    paths,
    *,
    spec: Mapping | tuple | None = None,
    compression: str | None = "auto",
    on_error: str = "raise",
    num_parallel_calls: int | None = None,
    infer_records: int = 1000,
    storage_options: dict | None = None,
    stats: ScanStats | None = None,
) -> TFRecordSource:
    """TFRecord files as an object DuckDB queries by name: ``con.register("train", source(...))`` or a variable.

    ``paths``: a path, a glob or a list of them. ``spec``: a parse spec or a
    ``(context_features, sequence_features)`` pair; ``None`` infers one from
    the first ``infer_records`` records now. The other options are
    :func:`tfrx.integrations._arrow_scan.scan`'s; damaged records raise
    :class:`tfrx.CorruptRecordError` naming file, record and byte offset
    (DuckDB passes it on as its own exception, with that message).
    ``stats``: a ``ScanStats`` every query adds its counts to.
    """
    return TFRecordSource(
        paths,
        spec=spec,
        stats=stats,
        compression=compression,
        on_error=on_error,
        num_parallel_calls=num_parallel_calls,
        infer_records=infer_records,
        storage_options=storage_options,
    )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def register(con: duckdb.DuckDBPyConnection, *paths: str, **options) -> dict[str, TFRecordSource]:
    """Makes ``SELECT ... FROM tfrecord('<path>')`` work on ``con`` for each of ``paths`` (globs allowed).

    Defines the table macro ``tfrecord(path)`` (``query_table`` of the
    source registered for that path) and registers a :func:`source` for
    every path, under the name ``tfrecord:<path>``; ``options`` go to
    :func:`source`. Call it again for more paths. Returns the sources by
    path.
    """
    con.execute(
        f"CREATE OR REPLACE TEMP MACRO {MACRO}(path) AS TABLE SELECT * FROM query_table({_quote(VIEW_PREFIX)} || path)"
    )
    made = {}
    for path in paths:
        made[path] = source(path, **options)
        con.register(VIEW_PREFIX + path, made[path])
    return made


def write_tfrecord(
    relation: Any,
    path: str | os.PathLike,
    *,
    feature_lists: Sequence[str] | None = None,
    compression: str | None = None,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    storage_options: dict | None = None,
) -> list[str]:
    """Writes a query's rows (a ``DuckDBPyRelation``, e.g. ``con.sql(...)``) as ``tf.train.Example`` records.

    Streams the result as Arrow batches through
    ``tfrx.integrations.arrow.to_examples`` (``to_sequence_examples`` for
    ``feature_lists``) into one file or, with ``num_shards`` /
    ``max_records_per_shard``, :class:`tfrx.io.ShardedWriter` shards.
    Returns the paths written.
    """
    reader = relation.to_arrow_reader() if hasattr(relation, "to_arrow_reader") else relation.arrow()
    batches = reader if isinstance(reader, pa.RecordBatchReader) else reader.to_batches()
    return write_batches(
        batches,
        path,
        feature_lists=feature_lists,
        compression=compression,
        num_shards=num_shards,
        max_records_per_shard=max_records_per_shard,
        storage_options=storage_options,
    )
