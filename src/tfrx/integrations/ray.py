"""Ray Data: read TFRecord files into a ``ray.data.Dataset`` and write one back as shards.

:func:`read_tfrecords` builds a :class:`TFRecordDatasource` (Ray's
Datasource API): one read task per file, and a large uncompressed file is
split into several tasks. With an index file (:func:`tfrx.build_index`) the
split is by record ranges and every task knows its row count; without one
it is by byte ranges, each task starting at the first record header at or
after its range start (a header whose length CRC and data CRC both hold,
so a split never starts inside a payload) and reading the records whose
header starts before its range end. Every task reads with the native
framing scanner (both CRCs checked) and parses with the native parser into
Arrow blocks (:mod:`tfrx.integrations.arrow`, numerics zero-copy).

:func:`write_tfrecords` writes a Dataset through :class:`TFRecordDatasink`
(Ray's Datasink API): every block becomes one shard, written under a
hidden temporary name by its write task and renamed to its TFDS name
(``prefix.tfrecord-00003-of-00016``) only once every task has finished, so
a failed write leaves no file that looks finished.

Ray is imported when this module is: ``pip install 'tfrx[ray]'``.
"""

from __future__ import annotations

import json
import os
import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

try:
    import pyarrow as pa
    import ray
    from ray.data.block import BlockAccessor, BlockMetadata
    from ray.data.datasource import Datasink, Datasource, ReadTask
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("tfrx.integrations.ray needs Ray Data: pip install 'tfrx[ray]'") from None

from tfrx.integrations._arrow_convert import (
    FEATURE_LISTS_KEY,
    RAW_COLUMN,
    to_examples,
    to_record_batch,
    to_sequence_examples,
)
from tfrx.errors import TfrxError
from tfrx.io._data_files import expand_paths
from tfrx.io._paths import is_url, source_name, url_to_fs, with_options
from tfrx.io.ranges import DEFAULT_MIN_SPLIT_BYTES, RecordRange, file_size, group_ranges, plan_ranges, read_range
from tfrx.options import check_on_error, normalize_compression, renamed_arguments

__all__ = ["TFRecordDatasource", "TFRecordDatasink", "read_tfrecords", "write_tfrecords"]

# The raw records' column under the deprecated ``features=False`` (``raw=True`` names it RAW_COLUMN, "record").
_OLD_RAW_COLUMN = "bytes"


# ------------------------------------------------------------------ reading
def _schema(features, raw_column: str = RAW_COLUMN) -> pa.Schema:
    """The Arrow schema of parsed ``features`` (from an empty batch); one binary column for raw records."""
    if features is False:
        return pa.schema([(raw_column, pa.binary())])
    from tfrx.integrations._arrow_convert import _parse
    from tfrx.io._batch import RecordBatch

    empty = RecordBatch(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
    return to_record_batch(_parse(empty, features)).schema


def _parser(features):
    """A reusable parser of ``features``: a spec (Examples) or a ``(context, sequence)`` pair (SequenceExamples)."""
    from tfrx.parsing import ExampleParser, SequenceExampleParser

    if isinstance(features, tuple):
        return SequenceExampleParser(*features, num_parallel_calls=1)
    return ExampleParser(features, num_parallel_calls=1)


def _parse_skipping(parser, batch, errors: list) -> dict | None:
    """Parses record by record, dropping the ones that are not valid Examples."""
    keep = []
    for i in range(len(batch)):
        try:
            parser.parse(batch[i : i + 1], num_parallel_calls=1)
        except (TfrxError, ValueError) as e:
            errors.append(f"{batch.path}: record {batch.first_index + i}: {e}")
            continue
        keep.append(i)
    if not keep:
        return None
    from tfrx.io._batch import RecordBatch

    return parser.parse(RecordBatch.from_records([batch[i] for i in keep]), num_parallel_calls=1)


def _read_piece(
    piece: RecordRange, features, compression: str, on_error: str, batch_size: int, raw_column: str = RAW_COLUMN
) -> Iterator[pa.Table]:
    parser = None if features is False else _parser(features)
    for batch in read_range(piece, compression=compression, on_error=on_error, batch_size=batch_size):
        if parser is None:
            yield pa.table({raw_column: pa.array(batch.to_list(), pa.binary())})
            continue
        try:
            parsed = parser.parse(batch, num_parallel_calls=1)
        except (TfrxError, ValueError):
            if on_error == "raise":
                raise
            skipped: list[str] = []
            parsed = _parse_skipping(parser, batch, skipped)
            if on_error == "warn":
                import warnings

                for message in skipped:
                    warnings.warn(message, stacklevel=2)
            if parsed is None:
                continue
        yield pa.Table.from_batches([to_record_batch(parsed)])


def _metadata(rows: int | None, nbytes: int, files: list[str]) -> BlockMetadata:
    try:
        return BlockMetadata(num_rows=rows, size_bytes=nbytes, input_files=tuple(files), exec_stats=None)
    except TypeError:  # Ray versions whose BlockMetadata still carries the schema
        return BlockMetadata(  # type: ignore[call-arg]  # that older signature
            num_rows=rows, size_bytes=nbytes, schema=None, input_files=tuple(files), exec_stats=None
        )


def _raw_option(features, raw: bool) -> tuple:
    """``(features, raw column)``: ``False`` and the column for raw records, else ``features`` as given.

    ``features=False`` is the former spelling of ``raw=True``: it warns, and
    keeps its column name ``"bytes"`` for this release.
    """
    if raw:
        if features is not None:
            raise TypeError("pass raw=True (the records unparsed) or features= (a spec), not both")
        return False, RAW_COLUMN
    if features is False:
        warnings.warn(
            "features=False is deprecated and will be removed in the next release; pass raw=True, which names "
            f"the column {RAW_COLUMN!r} (features=False keeps {_OLD_RAW_COLUMN!r} until then)",
            DeprecationWarning,
            stacklevel=4,
        )
        return False, _OLD_RAW_COLUMN
    return features, RAW_COLUMN


class TFRecordDatasource(Datasource):
    """A Ray Datasource over TFRecord files of ``tf.train.Example`` or ``SequenceExample`` records.

    ``features``: a spec as for :func:`tfrx.parse_example`, or a
    ``(context_features, sequence_features)`` pair for SequenceExamples
    (blocks as :func:`tfrx.integrations.arrow.to_record_batch` makes them); ``None`` infers
    one from the first ``infer_records`` records (:func:`tfrx.infer_features`,
    SequenceExamples recognised as by :func:`tfrx.integrations.arrow.read_tfrecord`);
    ``raw=True`` gives the records themselves, unparsed, in one ``binary``
    column ``"record"`` (as :func:`tfrx.integrations.arrow.read_tfrecord` and
    the converters' ``raw=True``); ``features=False``, its former spelling,
    still works for this release with a DeprecationWarning and names the
    column ``"bytes"``.
    ``compression``: ``"auto"`` (detect per file, the default), ``""`` /
    ``None`` (none), ``"GZIP"`` or ``"ZLIB"`` (``compression_type=`` is
    deprecated). Compressed files are read by one task each;
    uncompressed files larger than ``min_split_bytes`` are split (see the
    module's notes). ``use_index``: split by an existing index file when a
    file has one (``tfrx.build_index``).
    """

    @renamed_arguments(compression_type="compression")
    def __init__(
        self,
        paths,
        features: Mapping | tuple | bool | None = None,
        *,
        compression: str | None = "auto",
        storage_options: dict | None = None,
        on_error: str = "raise",
        batch_size: int = 8192,
        infer_records: int = 1000,
        min_split_bytes: int = DEFAULT_MIN_SPLIT_BYTES,
        use_index: bool = True,
        raw: bool = False,
    ) -> None:
        super().__init__()
        self.on_error = check_on_error(on_error)
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        names = [
            s if isinstance(s, str) else source_name(s) for s in expand_paths(paths, storage_options=storage_options)
        ]
        self._sources = [s for s in names if s is not None]
        if len(self._sources) != len(names):
            raise TypeError("read_tfrecords reads paths and URLs, not open file objects (tasks run elsewhere)")
        self.compression = normalize_compression(compression, allow_auto=True)
        self.batch_size = int(batch_size)
        self.min_split_bytes = int(min_split_bytes)
        self.use_index = bool(use_index)
        features, self.raw_column = _raw_option(features, raw)
        if features is None:
            features = self._infer(infer_records)
        elif isinstance(features, tuple):
            if len(features) != 2:
                raise ValueError("a SequenceExample spec is a (context_features, sequence_features) pair")
            features = (dict(features[0] or {}), dict(features[1] or {}))
        elif features is not False and features is not True:
            features = dict(features)
        elif features is True:
            raise ValueError("features must be a spec, or None (infer); pass raw=True for the records unparsed")
        self.features = features
        self.schema = _schema(features, self.raw_column)

    def _infer(self, infer_records: int):
        from tfrx.integrations._arrow_convert import _inferred
        from tfrx.io._reader import RecordReader

        records: list[bytes] = []
        with RecordReader(
            self._sources, compression=self.compression, on_error=self.on_error, require_all_shards=False
        ) as reader:
            for record in reader:
                records.append(record)
                if len(records) >= infer_records:
                    break
        if not records:
            raise ValueError(f"no records in {len(self._sources)} file(s) to infer features from; pass features=")
        return _inferred(records, infer_records)

    @property
    def paths(self) -> list[str]:
        """The files this datasource reads, globs expanded."""
        return list(self._sources)

    def get_name(self) -> str:
        return "TFRecordTfrx"

    def estimate_inmemory_data_size(self) -> int | None:
        sizes = [file_size(s) for s in self._sources]
        return sum(s for s in sizes if s is not None) or None

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context=None
    ) -> list[ReadTask]:
        pieces = plan_ranges(
            self._sources,
            num_ranges=parallelism,
            compression=self.compression,
            min_split_bytes=self.min_split_bytes,
            use_index=self.use_index,
        )
        features, compression, on_error, batch_size = self.features, self.compression, self.on_error, self.batch_size
        raw_column = self.raw_column
        tasks = []
        for group in group_ranges(pieces, parallelism):
            rows = None if any(p.rows is None for p in group) else sum(p.rows or 0 for p in group)
            if rows is None and all(p.nbytes == 0 and p.exact for p in group):
                rows = 0
            metadata = _metadata(rows, int(sum(p.nbytes for p in group)), [str(p.source) for p in group])

            def read(group=group) -> Iterable[pa.Table]:
                for piece in group:
                    yield from _read_piece(piece, features, compression, on_error, batch_size, raw_column)

            kwargs = {"per_task_row_limit": per_task_row_limit} if per_task_row_limit is not None else {}
            try:
                tasks.append(ReadTask(read, metadata, schema=self.schema, **kwargs))
            except TypeError:  # Ray before the schema moved from BlockMetadata to ReadTask
                tasks.append(ReadTask(read, metadata))
        return tasks


@renamed_arguments(compression_type="compression")
def read_tfrecords(  # noqa: PLR0913  the datasource's options, and Ray Data's read_datasource arguments passed through
    paths,
    features: Mapping | tuple | bool | None = None,
    *,
    compression: str | None = "auto",
    storage_options: dict | None = None,
    on_error: str = "raise",
    batch_size: int = 8192,
    infer_records: int = 1000,
    min_split_bytes: int = DEFAULT_MIN_SPLIT_BYTES,
    use_index: bool = True,
    raw: bool = False,
    override_num_blocks: int | None = None,
    concurrency: int | None = None,
    ray_remote_args: dict | None = None,
) -> ray.data.Dataset:
    """Reads TFRecord files of ``tf.train.Example`` into a ``ray.data.Dataset``.

    Columns are the features in name order: a ``FixedLenFeature`` of shape
    ``[]`` is a scalar column, other shapes fixed-size lists, ``VarLenFeature``
    / ``RaggedFeature`` list columns, strings ``binary``. ``features=None``
    infers the spec; ``raw=True`` gives one ``binary`` column ``"record"``
    of the records unparsed (``features=False``, deprecated, names it
    ``"bytes"``). CRCs are always checked; ``on_error="skip"``
    drops damaged records (and records that are not Examples) and goes on.
    ``paths`` are paths, globs or fsspec URLs (``storage_options`` go to
    fsspec). ``override_num_blocks`` sets the number of read tasks: files
    are grouped when it is smaller than their count, and large uncompressed
    files split when it is larger. See :class:`TFRecordDatasource`.
    """
    source = TFRecordDatasource(
        paths,
        features,
        compression=compression,
        storage_options=storage_options,
        on_error=on_error,
        batch_size=batch_size,
        infer_records=infer_records,
        min_split_bytes=min_split_bytes,
        use_index=use_index,
        raw=raw,
    )
    return ray.data.read_datasource(
        source,
        override_num_blocks=override_num_blocks,
        concurrency=concurrency,
        ray_remote_args=ray_remote_args,
    )


# ------------------------------------------------------------------ writing
def _cast_leaf(arr: pa.Array | pa.ChunkedArray, leaf: pa.DataType):
    """``arr`` with its innermost value type cast to ``leaf`` (lists kept)."""

    def swap(t: pa.DataType) -> pa.DataType:
        if pa.types.is_list(t):
            return pa.list_(swap(t.value_type))
        if pa.types.is_large_list(t):
            return pa.large_list(swap(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(swap(t.value_type), t.list_size)
        return leaf

    return arr.cast(swap(arr.type))


_LEAF = {"int64": pa.int64(), "float32": pa.float32(), "string": pa.binary()}


def _select(table: pa.Table, features: Mapping | tuple | None) -> pa.Table:
    """The columns named by ``features``, their values cast to the features' dtypes."""
    if features is None:
        return table
    if isinstance(features, tuple):  # a SequenceExample spec: context and feature-list columns
        features = {**features[0], **features[1]}
    missing = [n for n in features if n not in table.column_names]
    if missing:
        raise ValueError(f"features name columns the dataset does not have: {missing}; columns: {table.column_names}")
    columns = []
    for name, feature in features.items():
        dtype = str(getattr(getattr(feature, "dtype", feature), "name", getattr(feature, "dtype", feature)))
        leaf = _LEAF.get(dtype.replace("tfrx.", ""))
        if leaf is None:
            raise ValueError(f"feature {name!r}: dtype {dtype!r} is not int64, float32 or string")
        columns.append(_cast_leaf(table.column(name), leaf))
    return pa.table(columns, names=list(features))


class TFRecordDatasink(Datasink):
    """A Ray Datasink that writes each block as one TFRecord shard of ``tf.train.Example`` records.

    ``prefix`` is where the shards go, as for :class:`tfrx.ShardedWriter`:
    ``out/train`` gives ``out/train.tfrecord-00000-of-00004``, ... (``naming``
    is ``"tfds"`` or a template with ``{prefix}``, ``{index}``, ``{total}``).
    Each write task writes its blocks under temporary names in the hidden
    folder ``.tfrx/`` (``.tfrx/train-<run>-<task>-<block>.part``);
    :meth:`on_write_complete` commits them in dataset order to their final
    names with the manifest ``.tfrx/train.manifest.json``, through the same
    journalled commit as :class:`tfrx.ShardedWriter`
    (:func:`tfrx.io._commit.commit_shards`). A failed write removes the
    temporary files. ``num_shards``: pad with empty shards up to this
    many (:func:`write_tfrecords` repartitions to it first).
    """

    @renamed_arguments(compression_type="compression")
    def __init__(
        self,
        prefix: str | os.PathLike,
        *,
        compression: str | None = None,
        features: Mapping | None = None,
        naming: str = "tfds",
        num_shards: int | None = None,
        manifest: bool = True,
        storage_options: dict | None = None,
        feature_lists: Iterable[str] | None = None,
    ) -> None:
        from tfrx.io._sharded import shard_name

        self.prefix = os.fspath(prefix)
        self.storage_options = storage_options
        self.remote = is_url(self.prefix)
        if self.remote:
            self.prefix = with_options(self.prefix, storage_options)
        self.compression = normalize_compression(compression)
        if isinstance(features, tuple):
            context, lists = (dict(f or {}) for f in features)
            self.features: tuple[dict, dict] | dict | None = (context, lists)
            feature_lists = list(lists) if feature_lists is None else feature_lists
        else:
            self.features = dict(features) if features is not None else None
        self.feature_lists = list(feature_lists) if feature_lists is not None else None
        if naming != "tfds" and shard_name("p", 0, 2, naming) == shard_name("p", 1, 2, naming):
            raise ValueError(f"naming template {naming!r} must use {{index}} so shard names differ")
        self.naming = naming
        self.num_shards = num_shards
        self.manifest = manifest
        self.run = uuid.uuid4().hex[:12]
        self.paths: list[str] = []

    # ------------------------------------------------------------ names
    def _split(self) -> tuple[str, str]:
        if self.remote:
            directory, base = self.prefix.rsplit("/", 1)
            return directory, base
        directory, base = os.path.split(self.prefix)
        return directory or ".", base

    def _tmp(self, task: int, block: int) -> str:
        from tfrx.io._commit import part_path

        return part_path(self.prefix, f"-{self.run}-{task:05d}-{block:05d}.part")

    def _fs(self):
        fs, _ = url_to_fs(self.prefix)
        return fs

    # ------------------------------------------------------------ Datasink
    def on_write_start(self, schema=None) -> None:
        if not self.remote:
            from tfrx.io._sidecars import SIDECAR_DIR

            os.makedirs(os.path.join(self._split()[0], SIDECAR_DIR), exist_ok=True)

    def write(self, blocks: Iterable, ctx) -> list[tuple[int, int, str, int, int]]:
        from tfrx.io._writer import TFRecordWriter

        out = []
        for b, block in enumerate(blocks):
            table = BlockAccessor.for_block(block).to_arrow()
            lists = self.feature_lists
            if lists is None and FEATURE_LISTS_KEY in (table.schema.metadata or {}):
                lists = json.loads(table.schema.metadata[FEATURE_LISTS_KEY])
            table = _select(table, self.features)
            tmp = self._tmp(ctx.task_idx, b)
            with TFRecordWriter(tmp, compression=self.compression) as writer:
                for chunk in table.to_batches(max_chunksize=8192):
                    if lists is None:
                        writer.write_many(to_examples(chunk, as_batch=True))
                    else:
                        writer.write_many(to_sequence_examples(chunk, lists, as_batch=True))
                records = writer.records_written
            if not self.remote:
                from tfrx.io._commit import sync_part

                sync_part(tmp)
            out.append((ctx.task_idx, b, str(tmp), records, table.num_rows))
        return out

    def on_write_complete(self, write_result) -> None:
        from tfrx.io._commit import commit_shards

        returns = getattr(write_result, "write_returns", write_result)  # older Ray passes the list itself
        parts = sorted((p for task in returns for p in task), key=lambda p: (p[0], p[1]))
        total = max(len(parts), self.num_shards or 0, 1)
        shards = [(p[2], p[3]) for p in parts] + [(None, 0)] * (total - len(parts))  # padding: empty shards
        paths, _ = commit_shards(
            shards,
            self.prefix,
            naming=self.naming,
            compression=self.compression,
            fs=self._fs() if self.remote else None,
            storage_options=self.storage_options,
            manifest=self.manifest,
        )
        self.paths = [str(p) for p in paths]

    def on_write_failed(self, error: Exception) -> None:
        from tfrx.io._commit import discard_parts

        # the tasks' parts are not reported back on failure: find this run's by name
        base = self._split()[1]
        directory = self._tmp(0, 0).rsplit("/", 1)[0] if self.remote else os.path.dirname(self._tmp(0, 0))
        pattern = f"{base}-{self.run}-"
        fs = self._fs() if self.remote else None
        try:
            names = (
                fs.ls(fs._strip_protocol(directory), detail=False)
                if fs is not None
                else [os.path.join(directory, n) for n in os.listdir(directory)]
            )
        except OSError:
            return
        discard_parts([n for n in names if n.rsplit("/", 1)[-1].startswith(pattern)], fs=fs, directory=directory)


@renamed_arguments(compression_type="compression")
def write_tfrecords(
    dataset: ray.data.Dataset,
    prefix: str | os.PathLike,
    *,
    num_shards: int | None = None,
    compression: str | None = None,
    features: Mapping | None = None,
    naming: str = "tfds",
    manifest: bool = True,
    storage_options: dict | None = None,
    feature_lists: Iterable[str] | None = None,
    concurrency: int | None = None,
    ray_remote_args: dict | None = None,
) -> list[str]:
    """Writes a ``ray.data.Dataset`` as TFRecord shards of ``tf.train.Example``; returns the shard paths.

    Integer and boolean columns become ``int64_list`` features, floating
    point ``float_list``, binary/string ``bytes_list``; list columns give
    several values, nulls leave the feature out (as :func:`tfrx.integrations.arrow.to_examples`).
    ``features`` selects columns and casts their values to the features'
    dtypes; a ``(context_features, sequence_features)`` pair writes
    SequenceExamples, as do blocks whose schema names feature lists (from
    :func:`read_tfrecords` of SequenceExamples) or ``feature_lists=[columns]``
    (:func:`tfrx.integrations.arrow.to_sequence_examples`). ``num_shards`` repartitions the dataset into that many shards
    first; without it every block becomes a shard. Shards get TFDS names
    and appear only once the whole write has succeeded (see
    :class:`TFRecordDatasink`).
    """
    if num_shards is not None:
        if not isinstance(num_shards, int) or num_shards < 1:
            raise ValueError(f"num_shards must be a positive integer, got {num_shards!r}")
        dataset = dataset.repartition(num_shards)
    sink = TFRecordDatasink(
        prefix,
        compression=compression,
        features=features,
        naming=naming,
        num_shards=num_shards,
        manifest=manifest,
        storage_options=storage_options,
        feature_lists=feature_lists,
    )
    dataset.write_datasink(sink, concurrency=concurrency, ray_remote_args=ray_remote_args)
    return sink.paths
