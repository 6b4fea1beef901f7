"""Polars: ``scan_tfrecord`` (a ``LazyFrame`` that pushes projection, predicates and limits into the scan).

:func:`scan_tfrecord` registers the TFRecord files as a Polars IO source
(``polars.io.plugins.register_io_source``) over
:func:`tfrx.integrations._arrow_scan.scan`. Polars hands the source the
columns the query needs (only those features are parsed), the predicate of
its filters, and a row limit:

* a predicate on scalar features (a ``FixedLenFeature`` with shape ``[]``)
  is pushed into the scan: its features are parsed first and the others
  only for the records it keeps. A predicate made of comparisons,
  ``is_between``, ``&``/``|``/``~`` and ``is_null`` of integer features and
  numeric literals (as Polars hands them over: cast to the column's type, or
  the column cast to Float64 for a float literal) is
  evaluated with ``pyarrow.compute`` on each batch's arrays; any other is evaluated by
  Polars itself on each batch of the features it names (same semantics as
  filtering afterwards, NaN ordering included);
* a predicate naming a list feature (VarLen, Ragged, a feature list, a
  shaped FixedLen) is applied by Polars on each parsed batch;
* ``n_rows`` stops reading early (when Polars sends it with a predicate,
  the limit is of the rows before filtering, as Polars means it).

VarLen and ragged features and SequenceExample feature lists are Polars
``List`` columns. :func:`read_tfrecord` is ``scan_tfrecord(...).collect()``;
:func:`write_tfrecord` writes a DataFrame as Examples (or SequenceExamples)
through tfrx's writers.

Polars is imported when this module is: ``pip install 'tfrx[polars]'``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

try:
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc
    from polars.io.plugins import register_io_source
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("tfrx.integrations.polars needs Polars and pyarrow: pip install 'tfrx[polars]'") from None

from tfrx.integrations._arrow_scan import ScanStats, resolve_spec, scan, scan_schema
from tfrx.integrations._arrow_write import write_batches
from tfrx.options import renamed_arguments

__all__ = ["scan_tfrecord", "read_tfrecord", "write_tfrecord"]


class _Untranslatable(ValueError):
    pass


_COMPARISONS = {
    "Gt": pc.greater,
    "GtEq": pc.greater_equal,
    "Lt": pc.less,
    "LtEq": pc.less_equal,
    "Eq": pc.equal,
    "NotEq": pc.not_equal,
}


# The numeric literals of Polars' serialized expressions: as written ("Dyn", an int or float of no fixed type),
# and after Polars has cast them to the column's type ("Scalar"), which is what an IO source is given.
_NUMERIC_SCALARS = {f"{sign}{bits}" for sign in ("Int", "UInt") for bits in (8, 16, 32, 64)} | {"Float32", "Float64"}
_CLOSED = {
    "Both": (pc.greater_equal, pc.less_equal),
    "Left": (pc.greater_equal, pc.less),
    "Right": (pc.greater, pc.less_equal),
    "None": (pc.greater, pc.less),
}


def _literal(body: dict) -> pa.Scalar:
    ((form, typed),) = body.items()
    if form not in ("Dyn", "Scalar") or not isinstance(typed, dict) or len(typed) != 1:
        raise _Untranslatable(str(body))
    ((lit_kind, value),) = typed.items()
    numeric = lit_kind in ("Int", "Float") if form == "Dyn" else lit_kind in _NUMERIC_SCALARS
    # (an int past int64 would compare as another type in Arrow than in Polars; Polars orders NaN above every
    # number, where Arrow compares it false)
    in_range = (isinstance(value, float) and value == value) or (isinstance(value, int) and -(2**63) <= value < 2**63)
    if numeric and in_range and not isinstance(value, bool):
        return pa.scalar(value)
    raise _Untranslatable(str(body))


#: A translated predicate: a function of the batch's table (the columns the predicate names) giving an Arrow
#: boolean array, or a scalar for a predicate of literals alone.
_Evaluator = Callable[[pa.Table], Any]


def _arrow_expression(node: Any) -> _Evaluator:
    """A Polars expression tree (its JSON form) as ``pyarrow.compute`` calls on a batch, or ``_Untranslatable``.

    The calls are the kernels a ``pyarrow.compute.Expression`` of the same
    tree runs (``&`` and ``|`` are Kleene's, as in Polars), called on the
    batch's arrays: an Expression needs an Acero plan per batch, which cost
    more CPU than parsing the batch's features.
    """
    if not isinstance(node, dict) or len(node) != 1:
        raise _Untranslatable(str(node))
    ((kind, body),) = node.items()
    if kind == "Column" and isinstance(body, str):
        return lambda table: table.column(body)
    if kind == "Literal" and isinstance(body, dict) and len(body) == 1:
        value = _literal(body)
        return lambda _table: value
    if kind == "BinaryExpr":
        left, right, op = _arrow_expression(body["left"]), _arrow_expression(body["right"]), body["op"]
        call = _COMPARISONS.get(op) or _LOGICAL.get(op)
        if call is not None:
            return lambda table: call(left(table), right(table))
    if kind == "Cast" and body.get("dtype") == {"Literal": "Float64"} and body.get("options") == "NonStrict":
        # an integer feature compared with a float: Polars compares them as Float64, as this does
        operand = _arrow_expression(body["expr"])
        return lambda table: pc.cast(operand(table), pa.float64(), safe=False)
    if kind == "Function" and len(body.get("input", ())) == 3 and isinstance(body.get("function"), dict):
        between = body["function"].get("Boolean")
        if (
            isinstance(between, dict)
            and set(between) == {"IsBetween"}
            and between["IsBetween"].get("closed") in _CLOSED
        ):
            value, low, high = (_arrow_expression(node) for node in body["input"])
            above, below = _CLOSED[between["IsBetween"]["closed"]]
            return lambda table: pc.and_kleene(above(value(table), low(table)), below(value(table), high(table)))
    if kind == "Function" and len(body.get("input", ())) == 1:
        operand = _arrow_expression(body["input"][0])
        function = body.get("function")
        unary = _UNARY.get(function["Boolean"]) if isinstance(function, dict) and set(function) == {"Boolean"} else None
        if unary is not None:
            return lambda table: unary(operand(table))
    raise _Untranslatable(kind)


_LOGICAL = {"And": pc.and_kleene, "LogicalAnd": pc.and_kleene, "Or": pc.or_kleene, "LogicalOr": pc.or_kleene}
_UNARY = {"IsNull": pc.is_null, "IsNotNull": pc.is_valid, "Not": pc.invert}  # functions {"Boolean": name}


def _translate(predicate: pl.Expr, schema: pa.Schema, names: Sequence[str]) -> _Evaluator | None:
    """The predicate as ``pyarrow.compute`` calls when it names only integer features and translates exactly."""
    if not all(pa.types.is_integer(schema.field(n).type) for n in names):
        return None  # floats: Polars orders NaN above every number, Arrow compares it false
    try:
        return _arrow_expression(json.loads(predicate.meta.serialize(format="json")))
    except (_Untranslatable, KeyError, TypeError, ValueError):
        return None


def _is_scalar(t: pa.DataType) -> bool:
    return not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


def _polars_mask(predicate: pl.Expr):
    def mask(table: pa.Table) -> pa.Array:
        frame = pl.DataFrame(table)
        return frame.select(predicate.alias("__keep")).to_series().to_arrow()

    return mask


@renamed_arguments(num_threads="num_parallel_calls")
def scan_tfrecord(
    source,
    *,
    spec: Mapping | tuple | None = None,
    compression: str | None = "auto",
    on_error: str = "raise",
    num_parallel_calls: int | None = None,
    infer_records: int = 1000,
    storage_options: dict | None = None,
    stats: ScanStats | None = None,
) -> pl.LazyFrame:
    """A ``polars.LazyFrame`` over TFRecord files of Examples or SequenceExamples; nothing is parsed until collected.

    ``source``: a path, a glob (``"train-*.tfrecord.gz"``) or a list of them.
    ``spec``: a parse spec or a ``(context_features, sequence_features)``
    pair; ``None`` infers one from the first ``infer_records`` records now.
    ``compression``, ``on_error``, ``storage_options`` as for
    :class:`tfrx.RecordReader`; damaged records raise
    :class:`tfrx.CorruptRecordError` naming file, record and byte offset.
    ``stats``: a :class:`tfrx.integrations._arrow_scan.ScanStats` that
    every collect of the frame adds its counts to.
    """
    options: dict[str, Any] = {"compression": compression, "storage_options": storage_options}
    spec = resolve_spec(source, spec, infer_records=infer_records, **options)
    schema = scan_schema(source, spec=spec, **options)
    polars_schema = pl.from_arrow(schema.empty_table()).schema  # type: ignore[union-attr]
    scan_options: dict[str, Any] = {
        **options,
        "spec": spec,
        "on_error": on_error,
        "num_parallel_calls": num_parallel_calls,
        "stats": stats,
    }

    def io_source(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size: int | None
    ) -> Iterator[pl.DataFrame]:
        columns = list(schema.names) if with_columns is None else list(with_columns)
        size: dict[str, Any] = {"batch_size": batch_size} if batch_size else {}
        if not columns:  # a row count: the raw records are enough
            raw = scan(source, limit=n_rows, **{**scan_options, "spec": False}, **size)
            for batch in raw:
                yield pl.DataFrame().with_columns(pl.repeat(None, batch.num_rows).alias("__n")).drop("__n")
            return
        if predicate is None:
            reader = scan(source, columns=columns, limit=n_rows, **scan_options, **size)
            for batch in reader:
                yield pl.from_arrow(batch)  # type: ignore[misc]
            return
        names = list(dict.fromkeys(predicate.meta.root_names()))
        if not set(names) <= set(schema.names):  # a name Polars did not resolve to columns: read them all
            names = list(schema.names)
        wanted = columns + [n for n in names if n not in columns]
        pushed = n_rows is None and all(_is_scalar(schema.field(n).type) for n in names)
        if pushed:
            mask = _translate(predicate, schema, names) or _polars_mask(predicate)
            reader = scan(source, columns=columns, filter=mask, filter_columns=names, **scan_options, **size)
            for batch in reader:
                yield pl.from_arrow(batch)  # type: ignore[misc]
            return
        # a list feature in the predicate, or a limit Polars means before filtering: Polars filters each batch
        for batch in scan(source, columns=wanted, limit=n_rows, **scan_options, **size):
            frame = pl.DataFrame(batch).filter(predicate).select(columns)
            if frame.height:
                yield frame

    return register_io_source(
        io_source,
        schema=polars_schema,
        explain_name="tfrx",
        explain_detail=f"TFRecord {source!r}",
    )


def read_tfrecord(source, *, columns: Sequence[str] | None = None, **options) -> pl.DataFrame:
    """The eager form: ``scan_tfrecord(source, **options)`` (``.select(columns)``) ``.collect()``."""
    frame = scan_tfrecord(source, **options)
    if columns is not None:
        frame = frame.select(list(columns))
    return frame.collect()


def write_tfrecord(
    df: pl.DataFrame | pl.LazyFrame,
    path: str | os.PathLike,
    *,
    feature_lists: Sequence[str] | None = None,
    compression: str | None = None,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    storage_options: dict | None = None,
) -> list[str]:
    """Writes a DataFrame as TFRecord ``tf.train.Example`` records, one per row; returns the paths written.

    Integer and boolean columns become ``int64_list``, floats
    ``float_list``, strings and binary ``bytes_list``; ``List`` columns give
    several values per feature; a null leaves the feature out of that row.
    ``feature_lists``: columns written as SequenceExample feature lists
    (``List`` per step), the others as context. Without ``num_shards`` /
    ``max_records_per_shard`` ``path`` is one file; with either it is a
    :class:`tfrx.io.ShardedWriter` prefix whose shards are committed together.
    """
    if isinstance(df, pl.LazyFrame):
        df = df.collect()
    table = df.to_arrow()
    return write_batches(
        table.to_batches(),
        path,
        feature_lists=feature_lists,
        compression=compression,
        num_shards=num_shards,
        max_records_per_shard=max_records_per_shard,
        storage_options=storage_options,
    )
