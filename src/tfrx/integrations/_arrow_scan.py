"""One Arrow scan of TFRecord files that engines push work into: projection, a filter, a limit.

:func:`scan` returns a ``pyarrow.RecordBatchReader``. Polars, DuckDB, Daft,
Hugging Face ``datasets``, Spark and Dask read through it
(``tfrx.integrations.polars`` & co.); it is also usable on its own.

* **Projection**: only the features named in ``columns`` are parsed (the
  native parser skips the others' values without decoding them). Strings
  are parsed as views of the records and packed into ``binary`` columns
  (one native gather, no ``bytes`` object per value).
* **Filter**: a ``pyarrow.compute.Expression`` over parsed columns, or a
  callable taking a ``pyarrow.Table`` of the columns it names
  (``filter_columns``) and returning a boolean mask (an engine evaluating
  its own predicate language). Each batch parses the features the filter
  names first, keeps the records it selects, and parses the other
  projected features for those records only; once a batch's filter kept
  more than half of its records (:data:`ONE_PASS_ABOVE`), or when the other
  features are all numbers, batches parse them all in one pass and filter
  afterwards, which is cheaper then.
* **Local files**: an uncompressed file on a local disk is read by offsets,
  each batch parsed in one pass read, checked and parsed 512 KiB at a time
  in one native call (``ParserCore.parse_file``), the piece still in cache;
  damage found there is read again by the reader, which names it.
* **Limit**: reading stops once ``limit`` rows have been produced.
* **Parallelism in bounded memory**: the files are cut into record ranges
  (:func:`tfrx.io.ranges.plan_ranges`: whole files, or parts of a large
  uncompressed file by its index or by record boundaries), read and parsed
  on ``num_parallel_calls`` threads (the parser releases the GIL), at most
  ``num_parallel_calls + 1`` ranges in flight, and handed over in file order.

:class:`ScanStats` counts what a scan read and parsed, feature by feature,
so that a caller (or a test) can see that projection and filters parse less.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.acero as acero
import pyarrow.compute as pc

from tfrx.integrations._arrow_convert import FEATURE_LISTS_KEY, RAW_COLUMN, _column, _inferred, _record_batch
from tfrx.io._batch import RecordBatch
from tfrx.io._buffer_pool import READ_BUFFERS
from tfrx.io._data_files import expand_paths
from tfrx.io.ranges import RecordRange, local_plain_file, plan_ranges, read_range, record_bounds
from tfrx.parsing._bytes_array import BytesArray
from tfrx.io._reader import RecordReader
from tfrx.options import check_on_error, normalize_compression, resolve_parallelism

__all__ = ["ScanStats", "scan", "scan_schema", "resolve_spec", "RAW_COLUMN"]

_MISSING_FIELD = re.compile(r"No match for FieldRef\.Name\((.+?)\) in ")


@dataclass
class ScanStats:
    """What one scan read and parsed (counts accumulate over the scan; thread-safe)."""

    records_read: int = 0
    rows_out: int = 0
    #: feature name -> number of records it was parsed for
    parsed: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def _count(self, read: int, names: Sequence[str], parsed_records: int) -> None:
        with self._lock:
            self.records_read += read
            for name in names:
                self.parsed[name] = self.parsed.get(name, 0) + parsed_records

    def _rows(self, n: int) -> None:
        with self._lock:
            self.rows_out += n


# ------------------------------------------------------------------ specs
def _names(spec) -> list[str]:
    if isinstance(spec, tuple):
        return [*spec[0], *spec[1]]
    return list(spec)


def _restrict(spec, names: Sequence[str]):
    """``spec`` with only ``names`` (in the spec's order); a ``(context, lists)`` pair stays a pair."""
    wanted = set(names)
    if isinstance(spec, tuple):
        return ({k: v for k, v in spec[0].items() if k in wanted}, {k: v for k, v in spec[1].items() if k in wanted})
    return {k: v for k, v in spec.items() if k in wanted}


def _merged(first, second):
    """Two restricted specs of one spec as one (a ``(context, lists)`` pair stays a pair)."""
    if isinstance(first, tuple):
        return ({**first[0], **second[0]}, {**first[1], **second[1]})
    return {**first, **second}


def _empty(spec) -> bool:
    return not _names(spec)


def _parser(spec):
    from tfrx.parsing import ExampleParser, SequenceExampleParser

    # Bytes as views of the records, then packed into binary columns (to_record_batch): no Python object per
    # value, which for string features cost more than the parse itself.
    if isinstance(spec, tuple):
        return SequenceExampleParser(*spec, num_parallel_calls=1, bytes_as="views")
    return ExampleParser(spec, num_parallel_calls=1, bytes_as="views")


def to_record_batch(parsed) -> pa.RecordBatch:
    """A parse of :func:`_parser` as the scan's batch (strings as ``binary``)."""
    return _record_batch(parsed, packed=True)


def _empty_batch() -> RecordBatch:
    return RecordBatch(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))


def _schema_of(spec) -> pa.Schema:
    if spec is False:
        return pa.schema([(RAW_COLUMN, pa.binary())])
    return to_record_batch(_parser(spec).parse(_empty_batch())).schema


def _filter_columns(expression: Any, available: Sequence[str]) -> list[str]:
    """The columns a ``pyarrow.compute.Expression`` reads, found by binding it to growing empty tables.

    pyarrow does not list an expression's field references, but binding
    names the first one missing; a name that is not among ``available``
    raises ``KeyError`` naming it.
    """
    found: list[str] = []
    for _ in range(len(available) + 1):
        table = pa.table({name: pa.array([], pa.null()) for name in found})
        try:
            table.filter(expression)
            return found
        except pa.ArrowInvalid as e:
            m = _MISSING_FIELD.search(str(e))
            if m is None:
                if found:  # the names are there; a type error is the filter's own, reported when it runs
                    return found
                raise
            name = m.group(1)
            if name not in available or name in found:
                raise KeyError(f"the filter names {name!r}, which is not a feature of the scan ({list(available)})")
            found.append(name)
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return found  # every name resolved; the null-typed columns just cannot be compared
    return found


filter_columns = _filter_columns


# ------------------------------------------------------------------ one batch
def _mask(table: pa.Table, expression: pc.Expression) -> pa.ChunkedArray:
    """``expression`` evaluated over ``table`` on this thread: ``Table.filter`` hands a plan to Arrow's thread
    pool, which for one batch cost more CPU than the filter itself (the scan already runs batches on its own
    threads)."""
    source = acero.Declaration("table_source", acero.TableSourceNodeOptions(table))
    project = acero.Declaration("project", acero.ProjectNodeOptions([expression], ["keep"]))
    return acero.Declaration.from_sequence([source, project]).to_table(use_threads=False).column(0)


def _kept_rows(mask: Any, rows: int) -> np.ndarray:
    """The indexes of the rows a boolean mask keeps (a null keeps none; a scalar keeps all rows or none)."""
    if isinstance(mask, pa.Scalar):
        mask = np.full(rows, mask.is_valid and mask.as_py() is True)
    elif isinstance(mask, (pa.Array, pa.ChunkedArray)):
        if mask.null_count:
            mask = pc.fill_null(mask, False)
        mask = mask.to_numpy(zero_copy_only=False)
    mask = np.asarray(mask)
    if mask.shape != (rows,) or mask.dtype != np.bool_:
        raise ValueError(f"the filter must give one boolean per row ({rows}); it gave {mask.dtype} {mask.shape}")
    return np.flatnonzero(mask)


def _columns_of(parsed: Any, names: Sequence[str], rows: np.ndarray | None = None) -> dict[str, pa.Array]:
    """The parsed features ``names`` as Arrow columns (strings as ``binary``), of the records ``rows`` only
    when given. The rows of dense features are taken before their values are packed, so that strings of
    dropped records are never copied; the others are converted whole, then taken."""
    if not isinstance(parsed, Mapping):  # a SequenceExample parse: converted whole
        batch = to_record_batch(parsed)
        if rows is not None:
            batch = batch.take(pa.array(rows))
        return {name: batch.column(name) for name in names}
    out = {}
    for name in names:
        value = parsed[name]
        if rows is None:
            out[name] = _column(name, value, packed=True)
        elif isinstance(value, (np.ndarray, BytesArray)):
            out[name] = _column(name, value[rows], packed=True)
        else:
            out[name] = _column(name, value, packed=True).take(pa.array(rows))
    return out


#: When a filter kept more than this share of a batch's records, the next batches parse the other projected
#: features in the same pass as the filter's and filter afterwards: a second pass over most of the records
#: (each one walked again to find its features) costs more than parsing them for the dropped few. At or
#: below it, other features holding strings are parsed for the kept records only (numbers always in one
#: pass). Either way the rows are the same.
ONE_PASS_ABOVE = 0.5


def _holds_bytes(feature: Any) -> bool:
    return getattr(getattr(feature, "dtype", None), "name", "string") == "string"


@dataclass
class _Plan:
    spec: Any  # the projected spec, or False for raw records
    columns: list[str]  # output column order
    filter: Any
    filter_spec: Any  # the features the filter needs, parsed first
    rest_spec: Any  # the other projected features, parsed for the selected records only
    stats: ScanStats
    #: the schema's metadata: the feature-list columns of a SequenceExample scan (FEATURE_LISTS_KEY)
    metadata: dict[bytes, bytes] | None = None
    #: the share of records the filter kept in the latest batch (see ONE_PASS_ABOVE)
    kept: float = 0.0
    #: each scan thread's parsers, by role (a parser keeps sizes of its last batch: one per thread)
    _parsers: threading.local = field(default_factory=threading.local, repr=False, compare=False)

    def _parser_for(self, role: str, spec: Any) -> Any:
        parsers = self._parsers.__dict__
        if role not in parsers:
            parsers[role] = _parser(spec)
        return parsers[role]

    def _parse(self, role: str, spec: Any, records: RecordBatch) -> Any:
        return self._parser_for(role, spec).parse(records)

    def one_pass(self) -> bool:
        """Whether the next batch parses the filter's features and the others in one pass (see ONE_PASS_ABOVE):
        always when the others are numbers, which cost little more to decode for the dropped records than
        the second walk over the kept ones would."""
        if _empty(self.rest_spec) or _empty(self.filter_spec) or self.kept > ONE_PASS_ABOVE:
            return True
        return isinstance(self.rest_spec, Mapping) and not any(_holds_bytes(f) for f in self.rest_spec.values())

    def parse_file(
        self, fd: int, offset: int, end: int, max_records: int, max_bytes: int
    ) -> tuple[pa.RecordBatch | None, int, int] | None:
        """One pass over up to ``max_records`` records of a local uncompressed file from byte ``offset``, no more
        once their payloads reach ``max_bytes``: read, checked and parsed piece by piece in one native call
        (:data:`PIECE_BYTES` at a time), then filtered.
        ``(batch or None when no row is kept, records, next offset)``, or ``None`` when the records there are
        damaged or do not parse (the reader then reads them and says what is wrong and where)."""
        role, spec = self._one_pass_spec()
        done = self._parser_for(role, spec)._parse_file(fd, offset, end, max_records, PIECE_BYTES, max_bytes)
        if done is None:
            return None
        parsed, n, next_offset = done
        return self._one_pass_batch(parsed, n, spec), n, next_offset

    def _one_pass_spec(self) -> tuple[str, Any]:
        """The parser role and spec of a one-pass parse: every projected feature and those the filter names."""
        return ("all", self.spec) if self.filter is None else ("both", _merged(self.filter_spec, self.rest_spec))

    def _one_pass_batch(self, parsed: Any, n: int, spec: Any) -> pa.RecordBatch | None:
        """The batch of a one-pass parse of ``n`` records: the rows the filter keeps (None when none)."""
        self.stats._count(n, _names(spec), n)
        rows = None
        if self.filter is not None:
            rows = self._rows(parsed, n)
            self.kept = len(rows) / max(1, n)
            if not len(rows):
                return None
        columns = _columns_of(parsed, self.columns, rows)
        return pa.record_batch([columns[c] for c in self.columns], names=self.columns, metadata=self.metadata)

    def _rows(self, parsed: Any, records: int) -> np.ndarray:
        """The indexes of the records the filter keeps, evaluated over the features it names."""
        names = _names(self.filter_spec)
        if names:
            table = pa.table(_columns_of(parsed, names))
        else:  # a filter of literals alone: a table of no columns, one row per record
            table = pa.table({"rows": pa.nulls(records)}).select([])
        if callable(self.filter) and not isinstance(self.filter, pc.Expression):
            return _kept_rows(self.filter(table), records)
        return _kept_rows(_mask(table, self.filter), records)

    def batch(self, records: RecordBatch) -> pa.RecordBatch | None:
        if self.spec is False:
            self.stats._count(len(records), (), 0)
            return pa.record_batch([pa.array(records.to_list(), pa.binary())], names=[RAW_COLUMN])
        if self.filter is None or self.one_pass():
            role, spec = self._one_pass_spec()
            return self._one_pass_batch(self._parse(role, spec, records), len(records), spec)
        # Two passes: the filter's features, then the others for the kept records only.
        parsed = self._parse("filter", self.filter_spec, records)
        self.stats._count(len(records), _names(self.filter_spec), len(records))
        rows = self._rows(parsed, len(records))
        self.kept = len(rows) / max(1, len(records))
        if not len(rows):
            return None
        needed = set(_names(self.filter_spec))
        columns = _columns_of(parsed, [c for c in self.columns if c in needed], rows)
        selected = RecordBatch(records.data, records.starts[rows], records.lengths[rows], path=records.path)
        rest = self._parse("rest", self.rest_spec, selected)
        self.stats._count(0, _names(self.rest_spec), len(rows))
        columns.update(_columns_of(rest, _names(self.rest_spec)))
        return pa.record_batch([columns[c] for c in self.columns], names=self.columns, metadata=self.metadata)


# ------------------------------------------------------------------ the scan
def _resolve_spec(sources, spec, infer_records: int, compression: str, on_error: str):
    if spec is not None:
        return spec
    with RecordReader(sources, compression=compression, on_error=on_error, require_all_shards=False) as reader:
        for batch in reader.iter_batches(max_records=infer_records):
            return _inferred(batch, infer_records)
    return {}


def resolve_spec(
    paths,
    spec: Mapping | tuple | bool | None = None,
    *,
    compression: str | None = "auto",
    infer_records: int = 1000,
    storage_options: dict | None = None,
):
    """``spec`` itself, or (``None``) the spec inferred from the first ``infer_records`` records, as :func:`scan` does.

    Adapters call it once when a lazy scan is built, so that its schema and
    every later scan of it agree.
    """
    if spec is not None:
        return spec
    sources = expand_paths(paths, storage_options=storage_options)
    return _resolve_spec(sources, None, infer_records, normalize_compression(compression, allow_auto=True), "raise")


def scan_schema(
    paths,
    *,
    spec: Any = None,  # a spec, a (context, feature lists) pair, or None to infer one
    columns: Sequence[str] | None = None,
    raw: bool = False,
    compression: str | None = "auto",
    infer_records: int = 1000,
    storage_options: dict | None = None,
) -> pa.Schema:
    """The schema :func:`scan` gives, without reading past the sample (nothing at all when ``spec`` is given)."""
    if raw:
        spec = False
    if spec is None:
        sources = expand_paths(paths, storage_options=storage_options)
        spec = _resolve_spec(sources, None, infer_records, normalize_compression(compression, allow_auto=True), "raise")
    schema = _schema_of(spec if spec is False or columns is None else _restrict(spec, _checked(columns, spec)))
    if spec is not False:  # the columns' order, or the spec's (the parser's is not always the spec's)
        names = columns if columns is not None else _names(spec)
        schema = pa.schema([schema.field(c) for c in names], metadata=_feature_lists_metadata(spec, names))
    return schema


def _feature_lists_metadata(spec, columns: Sequence[str]) -> dict[bytes, bytes] | None:
    """A SequenceExample scan's schema metadata: its feature-list columns, sorted, under ``FEATURE_LISTS_KEY``
    (as :func:`tfrx.integrations.arrow.to_record_batch` writes it), so that ``to_sequence_examples`` and
    the writers know them."""
    if not isinstance(spec, tuple):
        return None
    return {FEATURE_LISTS_KEY: json.dumps(sorted(c for c in columns if c in spec[1])).encode()}


def _checked(columns: Sequence[str], spec) -> list[str]:
    names = _names(spec)
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise KeyError(f"no feature named {unknown} in the scan's spec (it has {names})")
    return list(columns)


def scan(  # noqa: PLR0913  a scan's projection, filter and limit, and every reader's options
    paths,
    *,
    columns: Sequence[str] | None = None,
    filter: Any = None,
    filter_columns: Sequence[str] | None = None,
    limit: int | None = None,
    spec: Any = None,  # a spec, a (context, feature lists) pair, or None to infer one
    raw: bool = False,
    batch_size: int = 65536,
    compression: str | None = "auto",
    on_error: str = "raise",
    num_parallel_calls: int | None = None,
    min_split_bytes: int = 16 << 20,
    infer_records: int = 1000,
    storage_options: dict | None = None,
    stats: ScanStats | None = None,
    ranges: Sequence[RecordRange] | None = None,
) -> pa.RecordBatchReader:
    """Scans TFRecord files of Examples or SequenceExamples as a ``pyarrow.RecordBatchReader``.

    ``spec``: a parse spec, a ``(context_features, sequence_features)``
    pair, or ``None`` to infer one from the first ``infer_records`` records;
    ``raw=True`` gives the records unparsed instead (one ``binary`` column
    named ``"record"``, as everywhere in tfrx). ``columns``: the features to parse and
    return, in this order (all of the spec's when ``None``). ``filter``: a
    ``pyarrow.compute.Expression`` over parsed features (those it names are
    parsed even when not in ``columns``), or a callable given the
    ``filter_columns`` it reads as a ``pyarrow.Table`` and returning a
    boolean mask over its rows (a null keeps no row). ``limit``: at most this many rows.
    ``num_parallel_calls``: ranges read and parsed at once (default: the
    usable cores). ``compression``, ``on_error`` and ``storage_options`` as for
    :class:`tfrx.RecordReader`; damaged records raise
    :class:`tfrx.CorruptRecordError` naming file, record and byte offset.
    ``stats``: a :class:`ScanStats` to fill. ``ranges``: the record ranges to
    read (:func:`tfrx.io.plan_ranges` of these files), instead of planning
    them here: an engine that hands ranges to its own tasks scans one each.
    """
    compression = normalize_compression(compression, allow_auto=True)
    check_on_error(on_error)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    threads = resolve_parallelism(num_parallel_calls)
    sources = expand_paths(paths, storage_options=storage_options)
    spec = False if raw else _resolve_spec(sources, spec, infer_records, compression, on_error)
    stats = stats if stats is not None else ScanStats()
    if spec is False:
        if filter is not None:
            raise ValueError("a filter needs parsed features: raw=True reads the records unparsed")
        plan = _Plan(False, [RAW_COLUMN], None, None, None, stats)
    else:
        out_columns = _checked(columns, spec) if columns is not None else _names(spec)
        if callable(filter) and not isinstance(filter, pc.Expression):
            if filter_columns is None:
                raise ValueError("a callable filter needs filter_columns: the features it reads")
            needed = _checked(filter_columns, spec)
        else:
            needed = _filter_columns(filter, _names(spec)) if filter is not None else []
        plan = _Plan(
            spec=_restrict(spec, out_columns),
            columns=out_columns,
            filter=filter,
            filter_spec=_restrict(spec, needed),
            rest_spec=_restrict(spec, [c for c in out_columns if c not in needed]),
            stats=stats,
            metadata=_feature_lists_metadata(spec, out_columns),
        )
    schema = _schema_of(plan.spec)
    if plan.spec is not False:
        schema = pa.schema([schema.field(c) for c in plan.columns], metadata=plan.metadata)
    if ranges is None:
        ranges = plan_ranges(sources, num_ranges=threads, compression=compression, min_split_bytes=min_split_bytes)
    batches = _batches(ranges, plan, compression, on_error, batch_size, threads, limit)
    return pa.RecordBatchReader.from_batches(schema, batches)


#: Bytes read, checked and parsed at a time when the scan reads a local uncompressed file itself
#: (``_Plan.parse_file``): few enough that the CRC check and the parse find them in cache after the read.
PIECE_BYTES = 512 << 10
#: How many bytes of records one batch of a file parse reads (with at most ``batch_size`` records): the first
#: of a range ``FIRST_BATCH_BYTES``, the next ones as many as make about ``BATCH_OUTPUT_BYTES`` of columns by
#: the range's batches so far, from ``MIN_BATCH_BYTES`` to ``MAX_BATCH_BYTES``. Columns of a few tens of MB
#: a batch stay under glibc's 32 MiB mmap threshold and are reused from the heap; past that each batch's are
#: mapped and faulted in afresh: BERT-like records, whose numbers decode to five times their bytes, cost 3.5x
#: the CPU from 12 MiB of records a batch (61 MB of columns) against 8 MiB (40 MB). A fixed 4 MiB of records
#: instead cost Criteo-like scans (0.57 bytes of columns a byte) 20% more CPU than one batch a file, in
#: per-batch work for 40 columns; and a batch of ``batch_size`` images would be gigabytes.
FIRST_BATCH_BYTES = 4 << 20
BATCH_OUTPUT_BYTES = 24 << 20
MIN_BATCH_BYTES = 1 << 20
MAX_BATCH_BYTES = 64 << 20


class _BatchBytes:
    """The bytes of records the next batch of a range's file parse reads (see ``BATCH_OUTPUT_BYTES``)."""

    def __init__(self) -> None:
        self.now = min(FIRST_BATCH_BYTES, MAX_BATCH_BYTES)

    def update(self, batch: pa.RecordBatch | None, records: int, read: int) -> None:
        """After a batch of ``records`` records, ``read`` bytes of them, of which ``batch`` kept some rows."""
        if batch is None or not batch.num_rows or read <= 0:
            return  # (a filter kept nothing: no measure of the columns; the size stays)
        columns_per_byte = batch.nbytes * (records / batch.num_rows) / read
        wanted = int(BATCH_OUTPUT_BYTES / max(columns_per_byte, 1e-6))
        self.now = min(MAX_BATCH_BYTES, max(MIN_BATCH_BYTES, wanted))


def _read(piece: RecordRange, plan: _Plan, compression: str, on_error: str, batch_size: int, stop: threading.Event):
    """The parsed batches of one range.

    A local uncompressed file of Examples is read by offsets: batches the
    plan parses in one pass are read, checked and parsed piece by piece in
    one native call; a batch for a filter that keeps few records (or none
    measured yet) goes through the reader, to be parsed in two passes. Any
    other range, or damage found on the way, is read by the reader alone.
    """
    path = None
    if on_error == "raise" and isinstance(plan.spec, Mapping) and plan.spec:
        path = local_plain_file(piece, compression)
    bounds = record_bounds(piece) if path is not None else None
    if path is None or bounds is None:
        return _read_batches(piece, plan, compression, on_error, batch_size, stop)
    offset, end = bounds
    end = os.path.getsize(path) if end is None else end
    index = 0  # of the range's records, those before offset
    out: list[pa.RecordBatch] = []
    chunks = None  # the reader of batches parsed in two passes, while there are such batches in a row
    sizes = _BatchBytes()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        while offset < end and not stop.is_set():
            if plan.filter is not None and not plan.one_pass():
                if chunks is None:
                    chunks = read_range(
                        piece, compression="", batch_size=batch_size, buffers=READ_BUFFERS, resume=(offset, index)
                    )
                records = next(chunks, None)
                following = None if records is None else records.end_offset()
                if records is None or following is None:
                    break
                batch, n, next_offset = plan.batch(records), len(records), following
            else:
                if chunks is not None:
                    chunks.close()
                    chunks = None
                done = plan.parse_file(fd, offset, end, batch_size, sizes.now)
                if done is None:  # damage, a record that does not parse, or a failed read
                    out.extend(_read_batches(piece, plan, compression, on_error, batch_size, stop, (offset, index)))
                    break
                batch, n, next_offset = done
                sizes.update(batch, n, next_offset - offset)
            if batch is not None and batch.num_rows:
                out.append(batch)
            offset, index = next_offset, index + n
    finally:
        if chunks is not None:
            chunks.close()
        os.close(fd)
    return out


def _read_batches(
    piece: RecordRange,
    plan: _Plan,
    compression: str,
    on_error: str,
    batch_size: int,
    stop: threading.Event,
    resume: tuple[int, int] | None = None,
) -> list[pa.RecordBatch]:
    out = []
    # Each batch is parsed into columns of their own before the next is read: the process's pool lends the read
    # buffers, so chunks land in memory already mapped (fresh memory on these threads costs a page fault per
    # 4 KiB, and zeroing).
    chunks = read_range(
        piece, compression=compression, on_error=on_error, batch_size=batch_size, buffers=READ_BUFFERS, resume=resume
    )
    for records in chunks:
        if stop.is_set():
            break
        if not len(records):
            continue
        batch = plan.batch(records)
        if batch is not None and batch.num_rows:
            out.append(batch)
    return out


def _batches(
    ranges: Sequence[RecordRange],
    plan: _Plan,
    compression: str,
    on_error: str,
    batch_size: int,
    threads: int,
    limit: int | None,
) -> Iterator[pa.RecordBatch]:
    if limit == 0:
        return
    stop = threading.Event()
    read = functools.partial(
        _read, plan=plan, compression=compression, on_error=on_error, batch_size=batch_size, stop=stop
    )
    try:
        if threads <= 1 or len(ranges) <= 1:  # nothing to overlap: read here, no thread to start
            yield from _limited(map(read, ranges), limit, plan.stats)
        else:
            yield from _limited(_in_pool(ranges, read, threads, stop), limit, plan.stats)
    finally:
        stop.set()


def _limited(
    ranges_done: Iterator[list[pa.RecordBatch]], limit: int | None, stats: ScanStats
) -> Iterator[pa.RecordBatch]:
    """The batches of the ranges read, in order, up to ``limit`` rows."""
    remaining = limit
    for batches in ranges_done:
        for batch in batches:
            if remaining is not None and batch.num_rows >= remaining:
                stats._rows(remaining)
                yield batch.slice(0, remaining)
                return
            if remaining is not None:
                remaining -= batch.num_rows
            stats._rows(batch.num_rows)
            yield batch


def _in_pool(
    ranges: Sequence[RecordRange], read: Callable[[RecordRange], list], threads: int, stop: threading.Event
) -> Iterator[list[pa.RecordBatch]]:
    """``read`` of each range, on ``threads`` threads, at most ``threads + 1`` ranges in flight, in order."""
    pending: deque[Future] = deque()
    todo = iter(ranges)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tfrx-scan") as pool:
        try:
            for piece in todo:
                pending.append(pool.submit(read, piece))
                if len(pending) > threads:
                    break
            while pending:
                yield pending.popleft().result()
                following = next(todo, None)
                if following is not None:
                    pending.append(pool.submit(read, following))
        finally:
            stop.set()
            for f in pending:
                f.cancel()
