"""Apache Spark: a ``tfrecord`` data source and sink in pure Python (Spark 4's Python data source API).

:func:`register` adds the format to a session; then the usual idiom reads and writes TFRecord files::

    import tfrx.spark
    tfrx.spark.register(spark)
    df = spark.read.format("tfrecord").load("data/train-*")
    df.write.format("tfrecord").mode("overwrite").option("compression", "gzip").save("out/")

No jar and no JVM code: :class:`TFRecordDataSource` is a
``pyspark.sql.datasource.DataSource``, so it runs wherever PySpark 4 runs
Python (classic sessions, and Spark Connect, where the class is sent to the
server). Reading:

* **Partitions** are record ranges (:func:`tfrx.io.ranges.plan_ranges`): a
  large uncompressed file gives several tasks, cut by its index when it has
  one (``buildIndex``: build missing ones on the driver first) or else at
  record boundaries found by both CRCs; a compressed file is one task.
* Every task reads its range with both CRCs checked and parses it natively
  into Arrow record batches, the columns Spark asked for only; damaged input
  raises tfrx's error naming the file, the record and the byte offset, which
  Spark's error message carries.
* **Columns**: Spark 4's Python data sources get no column pruning from the
  optimizer, so the features parsed are those of the schema: pass
  ``.schema(...)`` (a DDL string), ``option("columns", "a,b")``, or a spec.
* **Filters**: with ``spark.sql.python.filterPushdown.enabled`` (Spark 4.1+),
  comparisons, ``IN`` and null tests on scalar columns are evaluated while
  parsing, and the other features are parsed for the selected records only.

Types: int64 -> ``bigint``, float -> ``float``, bytes -> ``binary`` (or
``string`` with ``bytesAs=string`` or a schema that says so), a fixed shape,
``VarLenFeature`` or ``RaggedFeature`` -> ``array<...>`` (nested per
dimension), a SequenceExample feature list -> ``array<array<...>>``.

Writing (:class:`TFRecordWriter`): every task writes its rows to a part in
the output's ``.tfrx/`` folder, and the driver's ``commit()`` moves the
parts of the successful tasks to TFDS shard names
(``part.tfrecord-00000-of-00004``) with :mod:`tfrx.io._commit`'s journal;
``abort()`` and the commit delete every other part of the job, so a failed,
aborted or speculative task leaves no partial or duplicated shard.

pyspark is imported when this module is: ``pip install 'tfrx[spark]'``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

try:
    import pyarrow as pa
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        BooleanType,
        ByteType,
        DataType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
        StructField,
        StructType,
    )
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("tfrx.integrations.spark needs PySpark 4 and pyarrow: pip install 'tfrx[spark]'") from None

from tfrx.integrations import _scaleout as so
from tfrx.integrations._arrow_convert import _is_view
from tfrx.io.ranges import RecordRange, group_ranges
from tfrx.options import check_on_error, normalize_compression

__all__ = [
    "SHORT_NAME",
    "TFRecordDataSource",
    "TFRecordReader",
    "TFRecordWriter",
    "register",
    "spark_schema",
]

#: The format name: ``spark.read.format("tfrecord")``.
SHORT_NAME = "tfrecord"
_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark, *, push_filters: bool | None = None) -> None:
    """Registers the ``tfrecord`` format with the session ``spark`` (``spark.dataSource.register``).

    ``push_filters``: whether readers take filters from Spark (``pushFilters``);
    by default when the session has ``spark.sql.python.filterPushdown.enabled``
    set (Spark refuses a reader that takes filters when it is off). A
    read's ``option("pushFilters", ...)`` overrides it.
    """
    if push_filters is None:
        try:
            push_filters = str(spark.conf.get(_PUSHDOWN_CONF, "false")).lower() == "true"
        except Exception:  # a Connect session or a Spark without the setting
            push_filters = False
    spark.dataSource.register(TFRecordDataSourcePushingFilters if push_filters else TFRecordDataSource)


# ------------------------------------------------------------------ types
def _leaf(dtype_name: str, bytes_as: str) -> DataType:
    if dtype_name == "int64":
        return LongType()
    if dtype_name == "float32":
        return FloatType()
    return StringType() if bytes_as == "string" else BinaryType()


def _spark_type(t: pa.DataType, bytes_as: str) -> DataType:
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ArrayType(_spark_type(t.value_type, bytes_as), containsNull=False)
    if pa.types.is_int64(t):
        return LongType()
    if pa.types.is_float32(t):
        return FloatType()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or _is_view(t):
        return StringType() if bytes_as == "string" else BinaryType()
    raise TypeError(f"Arrow type {t} has no Spark counterpart here")


def spark_schema(spec, columns: Sequence[str] | None = None, *, bytes_as: str = "binary") -> StructType:
    """The Spark schema a read with ``spec`` gives (``False``: one ``binary`` column ``record`` of raw records).

    ``columns`` selects and orders features; ``bytes_as="string"`` makes
    bytes features ``string`` columns (UTF-8 checked when read).
    """
    arrow = so.plan_schema(so.make_plan(spec, columns))
    return StructType([StructField(f.name, _spark_type(f.type, bytes_as), nullable=True) for f in arrow])


def _dtype_of(t: DataType, name: str) -> str:
    if isinstance(t, (LongType, IntegerType, ShortType, ByteType, BooleanType)):
        return "int64"
    if isinstance(t, (FloatType, DoubleType)):
        return "float32"
    if isinstance(t, (BinaryType, StringType)):
        return "string"
    raise TypeError(f"column {name!r}: Spark type {t.simpleString()} has no tf.train.Feature kind")


def _spec_of_schema(schema: StructType, record_type: str) -> tuple[Any, list[str]]:
    """A parse spec for a user's schema, and the columns that are scalars read from a list (null when absent).

    A scalar column reads a feature that holds zero values (null) or one; an
    ``array<T>`` column a ``VarLenFeature``; for SequenceExamples an
    ``array<array<T>>`` column reads a feature list (every step kept).
    """
    from tfrx.parsing import RaggedFeature, VarLenFeature

    context: dict = {}
    lists: dict = {}
    scalars = []
    for f in schema.fields:
        t = f.dataType
        if isinstance(t, ArrayType) and isinstance(t.elementType, ArrayType):
            if record_type != "sequence_example" or isinstance(t.elementType.elementType, ArrayType):
                raise TypeError(
                    f"column {f.name!r}: {t.simpleString()} needs a parse spec (option 'spec', tfrx.features_to_json)"
                    + ("" if record_type == "sequence_example" else " or recordType SequenceExample for a feature list")
                )
            lists[f.name] = RaggedFeature(_dtype_of(t.elementType.elementType, f.name))
        elif isinstance(t, ArrayType):
            context[f.name] = VarLenFeature(_dtype_of(t.elementType, f.name))
        else:
            context[f.name] = VarLenFeature(_dtype_of(t, f.name))
            scalars.append(f.name)
    spec = (context, lists) if record_type == "sequence_example" else context
    return spec, scalars


# ------------------------------------------------------------------ options
def _flag(options: dict, key: str, default: bool) -> bool:
    value = options.get(key.lower())
    if value is None:
        return default
    if value.lower() in ("true", "1", "yes"):
        return True
    if value.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"option {key!r} must be true or false, got {value!r}")


def _int(options: dict, key: str, default: int) -> int:
    value = options.get(key.lower())
    try:
        return default if value is None else int(value)
    except ValueError:
        raise ValueError(f"option {key!r} must be an integer, got {value!r}") from None


def _names(options: dict, key: str) -> list[str] | None:
    value = options.get(key.lower())
    if value is None:
        return None
    return [n.strip() for n in value.split(",") if n.strip()]


def _paths(options: dict) -> list[str]:
    if "paths" in options:
        value = options["paths"]
        try:
            paths = json.loads(value)
        except ValueError:
            paths = [value]
        if isinstance(paths, str):
            paths = [paths]
    else:
        paths = []
    if "path" in options:
        paths = [options["path"], *paths]
    if not paths:
        raise ValueError("no path: spark.read.format('tfrecord').load(path_or_glob)")
    return [str(p) for p in paths]


@dataclass
class _ReadOptions:
    paths: list[str]
    record_type: str  # example, sequence_example, bytes, or "" (detected)
    spec: Any
    columns: list[str] | None
    compression: str
    on_error: str
    bytes_as: str
    infer_files: int
    infer_records: int
    split_bytes: int
    build_index: bool
    num_partitions: int
    batch_size: int
    push_filters: bool | None

    @classmethod
    def parse(cls, raw) -> _ReadOptions:
        options = so.mapping_of(raw)
        known = {
            "path", "paths", "recordtype", "spec", "columns", "compression", "onerror", "on_error", "bytesas",
            "inferfiles", "inferrecords", "splitbytes", "buildindex", "numpartitions", "batchsize", "pushfilters",
        }  # fmt: skip
        unknown = sorted(k for k in options if k not in known)
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for format 'tfrecord' (options: {sorted(known)})")
        rtype = options.get("recordtype")
        spec = None
        if "spec" in options:
            from tfrx.parsing import features_from_json

            spec = features_from_json(options["spec"])
        record_type = so.record_type(rtype) if rtype is not None else ""
        if spec is not None and not record_type:
            record_type = "sequence_example" if isinstance(spec, tuple) else "example"
        if record_type == "bytes":
            spec = False
        bytes_as = options.get("bytesas", "binary").lower()
        if bytes_as not in ("binary", "string"):
            raise ValueError(f"option 'bytesAs' must be binary or string, got {bytes_as!r}")
        push = options.get("pushfilters")
        return cls(
            paths=_paths(options),
            record_type=record_type,
            spec=spec,
            columns=_names(options, "columns"),
            compression=normalize_compression(options.get("compression", "auto"), allow_auto=True),
            on_error=check_on_error(options.get("onerror", options.get("on_error", "raise"))),
            bytes_as=bytes_as,
            infer_files=_int(options, "inferFiles", 8),
            infer_records=_int(options, "inferRecords", 1000),
            split_bytes=_int(options, "splitBytes", 64 << 20),
            build_index=_flag(options, "buildIndex", False),
            num_partitions=_int(options, "numPartitions", 0),
            batch_size=_int(options, "batchSize", 8192),
            push_filters=None if push is None else _flag(options, "pushFilters", False),
        )

    def sources(self) -> list:
        return so.expand(self.paths)

    def hive(self) -> tuple[list[str], dict[str, str]]:
        """Partition columns from ``k=v/`` folders under the folders read (names, kinds)."""
        if self.spec is False:
            return [], {}
        return so.hive_partitioning(self.paths, self.sources())


# ------------------------------------------------------------------ the data source
class TFRecordDataSource(DataSource):
    """The ``tfrecord`` format. Read options (all optional, case-insensitive):

    ``recordType``: ``Example`` (default), ``SequenceExample`` or ``bytes``
    (raw records in one ``binary`` column ``record``; spark-tfrecord's
    ``ByteArray`` too). ``spec``: a parse spec as JSON
    (:func:`tfrx.features_to_json`). Without a spec or a ``.schema(...)``,
    one is inferred from the first ``inferRecords`` (1000) records of up to
    ``inferFiles`` (8) files spread over the input, and features whose kinds
    differ between files are reported in the error (those whose value counts
    differ become arrays). ``columns``: the features to read (comma-separated).
    ``compression``: ``auto`` (default; detected per file), ``none``, ``gzip``,
    ``zlib``. ``onError``: ``raise`` (default), ``skip`` or ``warn``.
    ``bytesAs``: ``binary`` (default) or ``string``. ``splitBytes``: the
    bytes per task of a large uncompressed file (64 MiB); ``buildIndex``:
    build missing indexes on the driver first (exact record numbers);
    ``numPartitions``: at most this many tasks (ranges grouped);
    ``pushFilters``: take filters from Spark (see :func:`register`). A
    folder whose files sit in Hive-style folders ``k=v/`` gives a column per
    key (``bigint`` when every value is an integer, else ``string``).

    Write options: ``compression`` (none by default), ``recordType``
    (``Example``, ``SequenceExample``: ``array<array<...>>`` columns or
    ``featureLists`` become feature lists; ``bytes``: one binary column),
    ``name`` (the shards' prefix, ``part``), ``partitionBy``
    (comma-separated columns: Hive-style folders ``k=v/``, since Spark
    passes no partitioning to Python sinks), ``index`` (an index per
    shard), ``manifest`` (true).
    """

    _push_filters = False

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def _options(self) -> _ReadOptions:
        return _ReadOptions.parse(self.options)

    def _resolve(self) -> tuple[_ReadOptions, Any]:
        options = self._options()
        if options.spec is not None:
            return options, options.spec
        inferred = getattr(self, "_inferred_spec", None)
        if inferred is None:
            kind = {"example": "example", "sequence_example": "sequence"}.get(options.record_type, "auto")
            found = so.infer_spec(
                options.sources(),
                kind=kind,
                files=options.infer_files,
                records=options.infer_records,
                compression=options.compression,
            )
            inferred = found.check()
            if found.widened:
                import warnings

                warnings.warn(found.report(), stacklevel=2)
            self._inferred_spec = inferred
        return options, inferred

    def schema(self) -> StructType:
        options, spec = self._resolve()
        schema = spark_schema(spec, options.columns, bytes_as=options.bytes_as)
        keys, kinds = options.hive()
        for key in keys:
            if key not in schema.fieldNames():  # a feature of the same name wins
                schema.add(StructField(key, LongType() if kinds[key] == "int64" else StringType(), nullable=True))
        return schema

    def reader(self, schema: StructType) -> TFRecordReader:
        options = self._options()
        scalars: list[str] = []
        keys, _ = options.hive()
        features = StructType([f for f in schema.fields if f.name not in keys])
        if options.spec is not None:
            spec = options.spec
        elif getattr(self, "_inferred_spec", None) is not None:
            # a sample cannot promise that every record holds a feature: inferred scalars are nullable
            spec, scalars = so.nullable_scalars(self._resolve()[1])
        elif options.record_type == "bytes":
            spec = False
        else:
            spec, scalars = _spec_of_schema(features, options.record_type or "example")
        if spec is not False:  # partition columns are those of the schema that no feature has
            keys = [k for k in keys if k in schema.fieldNames() and k not in so.spec_names(spec)]
        push = options.push_filters if options.push_filters is not None else self._push_filters
        cls = TFRecordPushdownReader if push else TFRecordReader
        return cls(options, spec, schema, scalars, keys)

    def writer(self, schema: StructType, overwrite: bool) -> TFRecordWriter:
        return TFRecordWriter(so.mapping_of(self.options), schema, overwrite)


class TFRecordDataSourcePushingFilters(TFRecordDataSource):
    """:class:`TFRecordDataSource` whose readers take filters from Spark (what :func:`register` picks when the
    session has ``spark.sql.python.filterPushdown.enabled``)."""

    _push_filters = True


class _Ranges(InputPartition):
    """One task's record ranges."""

    def __init__(self, ranges: list[RecordRange]) -> None:
        super().__init__(None)
        self.ranges = ranges

    def __repr__(self) -> str:
        return f"_Ranges({[(str(r.source), r.start, r.end) for r in self.ranges]})"


class TFRecordReader(DataSourceReader):
    """Reads record ranges and yields Arrow record batches of the schema Spark asked for."""

    def __init__(
        self, options: _ReadOptions, spec, schema: StructType, scalars: Sequence[str] = (), keys: Sequence[str] = ()
    ) -> None:
        self.options = options
        self.spec = spec
        self.schema = schema
        self.scalars = list(scalars)
        self.keys = list(keys)  # partition columns, from the k=v folders of each file
        self.filters: list = []  # pyarrow expressions of the filters taken from Spark
        names = [f.name for f in schema.fields if f.name not in self.keys]
        if spec is False:
            if len(names) != 1:
                raise ValueError(f"raw records are one binary column; the schema has {names}")
            self.columns: list[str] | None = None
        else:
            have = so.spec_names(spec)
            unknown = [n for n in names if n not in have]
            if unknown:
                raise ValueError(f"the schema names {unknown}, which the spec does not have (it has {have})")
            self.columns = names

    def partitions(self) -> list[InputPartition]:
        o = self.options
        ranges = so.plan(o.sources(), split_bytes=o.split_bytes, compression=o.compression, build_index=o.build_index)
        groups = group_ranges(ranges, o.num_partitions) if o.num_partitions > 0 else [[r] for r in ranges]
        return [_Ranges(g) for g in groups]

    def _arrow_schema(self) -> pa.Schema:
        from pyspark.sql.pandas.types import to_arrow_schema

        return to_arrow_schema(self.schema, timezone="UTC")

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        import functools
        import operator

        o = self.options
        expression = functools.reduce(operator.and_, self.filters) if self.filters else None
        # filters on features parsed as scalars are applied while parsing; on converted columns afterwards
        late = expression is not None and bool(self.scalars)
        p = so.make_plan(self.spec, self.columns, None if late else expression)
        target = self._arrow_schema()
        names = target.names
        for piece in getattr(partition, "ranges", []):
            for batch in so.read_piece(
                piece, p, compression=o.compression, on_error=o.on_error, batch_size=o.batch_size
            ):
                if self.spec is False:
                    batch = pa.RecordBatch.from_arrays([batch.column(0)], names=names)
                if self.scalars:
                    batch = so.scalars_from_lists(batch, self.scalars, str(piece.source))
                if late:
                    batch = batch.filter(expression)
                    if not batch.num_rows:
                        continue
                if self.keys:
                    batch = self._with_partition_columns(batch, str(piece.source), target)
                yield so.conform(batch, target)

    def _with_partition_columns(self, batch: pa.RecordBatch, source: str, target: pa.Schema) -> pa.RecordBatch:
        roots = [p for p in self.options.paths if os.path.isdir(p)]
        values = so.partition_values(roots, source)
        arrays, names = list(batch.columns), list(batch.schema.names)
        for key in self.keys:
            value = values.get(key)
            kind = target.field(key).type
            scalar = None if value is None else (int(value) if pa.types.is_integer(kind) else value)
            arrays.append(pa.array([scalar] * batch.num_rows, kind))
            names.append(key)
        return pa.RecordBatch.from_arrays(arrays, names=names)


def _filter_expression(f, scalars: dict) -> Any:
    """A pyarrow expression for one Spark filter on a scalar column, or ``None`` when it is not taken."""
    import pyarrow.compute as pc
    from pyspark.sql import datasource as ds

    if isinstance(f, ds.Not):
        inner = _filter_expression(f.child, scalars)
        return None if inner is None else ~inner
    attribute = getattr(f, "attribute", None)
    if attribute is None or len(attribute) != 1 or attribute[0] not in scalars:
        return None
    name = attribute[0]
    kind = scalars[name]
    column = pc.field(name)

    def literal(v):
        if v is None:
            return None
        if kind == "string":
            if isinstance(v, str):
                return v.encode()
            return v if isinstance(v, bytes) else None
        if kind == "int64":
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    if isinstance(f, ds.IsNull):
        return column.is_null()
    if isinstance(f, ds.IsNotNull):
        return column.is_valid()
    if isinstance(f, ds.In):
        values = [literal(v) for v in f.value]
        if any(v is None for v in values):
            return None
        return column.isin(values)
    ops = {
        ds.EqualTo: lambda a, b: a == b,
        ds.GreaterThan: lambda a, b: a > b,
        ds.GreaterThanOrEqual: lambda a, b: a >= b,
        ds.LessThan: lambda a, b: a < b,
        ds.LessThanOrEqual: lambda a, b: a <= b,
    }
    op = ops.get(type(f))
    if op is None:
        return None
    value = literal(f.value)
    if value is None:
        return None
    scalar = pa.scalar(value, pa.binary() if kind == "string" else None)
    return op(column, scalar)


class TFRecordPushdownReader(TFRecordReader):
    """A :class:`TFRecordReader` that takes Spark's filters on scalar columns (``pushFilters``, Spark 4.1+):
    the records they reject are dropped while parsing, and the other features are parsed for the rest only."""

    def pushFilters(self, filters: list) -> Iterator:
        from tfrx.parsing import FixedLenFeature

        spec = self.spec
        scalars: dict = {}
        if spec is not False:
            context = spec[0] if isinstance(spec, tuple) else spec
            for name, feature in context.items():
                scalar = name in self.scalars or (
                    isinstance(feature, FixedLenFeature) and not list(feature.shape or [])
                )
                if scalar and name in (self.columns or []):
                    scalars[name] = so._dtype_name(feature).replace("tfrx.", "")
        for f in filters:
            expression = _filter_expression(f, scalars)
            if expression is None:
                yield f
            else:
                self.filters.append(expression)


# ------------------------------------------------------------------ writing
@dataclass
class _Parts(WriterCommitMessage):
    """What one task wrote: ``(folder, part path, records)`` per folder, and the task's partition."""

    partition: int
    parts: list


class TFRecordWriter(DataSourceArrowWriter):
    """Writes each task's rows to parts and commits them in ``commit()`` (see the module's notes)."""

    def __init__(self, options: dict, schema: StructType, overwrite: bool) -> None:
        options = so.mapping_of(options)
        known = {"path", "compression", "recordtype", "featurelists", "name", "partitionby", "index", "manifest"}
        unknown = sorted(k for k in options if k not in known)
        if unknown:
            raise ValueError(f"unknown write option(s) {unknown} for format 'tfrecord' (options: {sorted(known)})")
        if "path" not in options:
            raise ValueError("no path: df.write.format('tfrecord').mode('overwrite').save(directory)")
        self.root = options["path"]
        self.compression = normalize_compression(options.get("compression") or None)
        self.record_type = so.record_type(options.get("recordtype"))
        self.feature_lists = _names(options, "featureLists")
        self.keys = _names(options, "partitionBy") or []
        missing = [k for k in self.keys if k not in schema.fieldNames()]
        if missing:
            raise ValueError(f"partitionBy names {missing}, which are not columns ({schema.fieldNames()})")
        self.index = _flag(options, "index", False)
        self.manifest = _flag(options, "manifest", True)
        self.overwrite = bool(overwrite)
        self.run = so.new_run()
        base = options.get("name", "part")
        if "/" in base or not base:
            raise ValueError(f"option 'name' is a file name prefix, got {base!r}")
        # appending never replaces a set: its shards get a name of their own
        self.name = base if overwrite else f"{base}-{self.run}"

    def _prefix(self, folder: str) -> str:
        return os.path.join(self.root, folder, self.name) if folder else os.path.join(self.root, self.name)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Parts:
        partition, attempt = _task_ids()
        writers: dict[str, so.PartWriter] = {}
        try:
            for batch in iterator:
                groups = so.group_rows(batch, self.keys) if self.keys else {(): batch}
                for key, rows in groups.items():
                    folder = so.hive_folder(self.keys, key) if self.keys else ""
                    writer = writers.get(folder)
                    if writer is None:
                        path = so.part_for(self._prefix(folder), self.run, f"{partition:05d}-{attempt}")
                        writer = writers[folder] = so.PartWriter(
                            path,
                            record_type=self.record_type,
                            compression=self.compression,
                            feature_lists=self.feature_lists,
                        )
                    writer.write(rows)
        except BaseException:
            for writer in writers.values():
                writer.discard()
            raise
        for writer in writers.values():
            writer.close()
        return _Parts(partition, [(folder, w.path, w.records) for folder, w in writers.items()])

    def commit(self, messages: list) -> None:
        by_folder: dict[str, list] = {}
        for message in messages:
            if message is None:
                continue
            for folder, path, records in message.parts:
                by_folder.setdefault(folder, []).append((message.partition, path, records))
        if not self.keys and "" not in by_folder:
            by_folder[""] = []  # no rows at all: one empty shard, so the output exists
        written: list[str] = []
        try:
            for folder, parts in sorted(by_folder.items()):
                parts.sort()
                written += so.commit_parts(
                    [(path, records) for _, path, records in parts],
                    self._prefix(folder),
                    compression=self.compression,
                    index=self.index,
                    manifest=self.manifest,
                )
        finally:
            so.discard_run(self.root, self.run)  # parts of failed and speculative attempts
        if self.overwrite:
            self._remove_stale(written)

    def _remove_stale(self, written: list[str]) -> None:
        """After an overwrite: shards of the same name under the output that the new sets do not hold."""
        for directory, dirs, _ in os.walk(self.root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for path in so.stale_shards(directory, self.name, written):
                os.remove(path)

    def abort(self, messages: list) -> None:
        so.discard_run(self.root, self.run)


def _task_ids() -> tuple[int, int]:
    """This task's partition and attempt ids (``(0, 0)`` outside a Spark task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return 0, 0
    return context.partitionId(), context.taskAttemptId()
