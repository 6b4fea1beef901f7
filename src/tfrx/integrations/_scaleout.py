"""What the Spark data source and the Dask reader and writer share: plans, sampled specs, typed batches, parts.

Reading: the files are cut into record ranges (:func:`tfrx.io.ranges.plan_ranges`;
:func:`plan` builds missing indexes first when asked), each range is read
with both CRCs checked and parsed natively, only the projected features,
into Arrow record batches (:class:`tfrx.integrations._arrow_scan`'s plan),
and :func:`conform` casts them to the exact Arrow types an engine expects.

Writing: every task writes its rows to a part in ``.tfrx/`` (:func:`part_for`,
:func:`write_part`); the driver commits the parts of the tasks that
succeeded, in order, with the journalled commit of :mod:`tfrx.io._commit`
(:func:`commit_parts`), and deletes every other part of the run
(:func:`discard_run`): failed tasks, aborted jobs and the losing attempts
of speculative execution leave no file under a shard's name.
"""

from __future__ import annotations

import math
import os
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from tfrx.errors import TfrxError
from tfrx.integrations._arrow_convert import _inferred
from tfrx.integrations._arrow_scan import ScanStats, _filter_columns, _Plan, _restrict, _schema_of
from tfrx.integrations.arrow import to_examples, to_sequence_examples
from tfrx.io._batch import RecordBatch
from tfrx.io.ranges import RecordRange, file_size, plan_ranges, read_range

__all__ = [
    "RECORD_TYPES",
    "Inferred",
    "commit_parts",
    "conform",
    "discard_run",
    "expand",
    "infer_spec",
    "make_plan",
    "part_for",
    "plan",
    "read_piece",
    "record_type",
    "spec_names",
    "write_part",
]

#: Accepted spellings of the record types (lower case, without ``_`` / ``.``) -> the canonical name.
RECORD_TYPES = {
    "example": "example",
    "tftrainexample": "example",
    "sequenceexample": "sequence_example",
    "tftrainsequenceexample": "sequence_example",
    "bytes": "bytes",
    "bytearray": "bytes",  # spark-tfrecord's name for raw records
    "raw": "bytes",
}

#: The column of raw records (record type ``bytes``).
RAW_COLUMN = "record"


def record_type(value: str | None) -> str:
    """The canonical record type: ``"example"``, ``"sequence_example"`` or ``"bytes"`` (``None``: example)."""
    if value is None:
        return "example"
    key = re.sub(r"[_.\-\s]", "", str(value)).lower()
    if key not in RECORD_TYPES:
        raise ValueError(f"record type {value!r} is not one of Example, SequenceExample, bytes (raw records)")
    return RECORD_TYPES[key]


def spec_names(spec) -> list[str]:
    """The feature names of a spec or a ``(context, sequence)`` pair, in order."""
    if isinstance(spec, tuple):
        return [*spec[0], *spec[1]]
    return list(spec)


def expand(paths: Sequence[str]) -> list:
    """Files, globs and folders as data files: a local folder stands for the files under it (recursively,
    for partition folders ``k=v/``), leaving out hidden names and those starting with ``_`` (``.tfrx/``,
    ``_SUCCESS``)."""
    from tfrx.io._data_files import expand_paths
    from tfrx.io._paths import is_url

    out: list = []
    for path in paths:
        if isinstance(path, str) and not is_url(path) and os.path.isdir(path):
            found = []
            for directory, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                found += [os.path.join(directory, n) for n in names if not n.startswith((".", "_"))]
            if not found:
                raise FileNotFoundError(f"no data files in the folder {path}")
            out += sorted(found)
        else:
            out.append(path)
    return expand_paths(out)


# ------------------------------------------------------------------ inference
@dataclass
class Inferred:
    """A spec inferred from samples of several files, and what the files disagreed on.

    ``conflicts``: one line per feature whose kind (int64 / float / bytes)
    differs between the sampled files; such a spec cannot be used, and
    :meth:`check` raises. ``widened``: one line per feature whose value
    counts differ between files (or that some files lack); it is read as a
    variable-length feature (an array column).
    """

    spec: Any
    files: list[str]
    conflicts: list[str] = field(default_factory=list)
    widened: list[str] = field(default_factory=list)

    def report(self) -> str:
        lines = [f"inferred from {len(self.files)} file(s): " + ", ".join(self.files)]
        lines += [f"kind conflict: {c}" for c in self.conflicts]
        lines += [f"read as variable length: {w}" for w in self.widened]
        return "\n".join(lines)

    def check(self) -> Any:
        """The spec, or ``ValueError`` listing every feature whose kind differs between files."""
        if self.conflicts:
            raise ValueError(
                "the sampled files disagree on the kind of "
                + f"{len(self.conflicts)} feature(s):\n  "
                + "\n  ".join(self.conflicts)
                + "\npass a parse spec (tfrx.features_to_json) or a schema naming the type each feature should have"
            )
        return self.spec


def _sample_files(sources: Sequence, files: int) -> list:
    """Up to ``files`` sources spread evenly over the list (first and last included)."""
    if files <= 0 or len(sources) <= files:
        return list(sources)
    picks = sorted({round(i * (len(sources) - 1) / (files - 1)) for i in range(files)}) if files > 1 else [0]
    return [sources[i] for i in picks]


def _infer_file(source, records: int, kind: str, compression: str):
    """One file's spec and the variable-length features that held at most one value in every sampled record.

    Feature lists always become ``RaggedFeature`` (a list of steps of lists of values).
    """
    from tfrx.io._reader import RecordReader
    from tfrx.parsing import RaggedFeature, infer_features

    with RecordReader(source, compression=compression, require_all_shards=False) as reader:
        for batch in reader.iter_batches(max_records=records):
            if kind == "auto":
                spec = _inferred(batch, records)
            else:
                spec = infer_features(batch, max_records=records, kind=kind)
            if isinstance(spec, tuple):
                context, lists = spec
                return (context, {k: RaggedFeature(v.dtype) for k, v in lists.items()}), _single(batch, context, True)
            return spec, _single(batch, spec, False)
    return None


def _single(batch, features: dict, sequence: bool) -> set[str]:
    """The VarLen features of ``features`` that hold zero or one values in every record of ``batch``."""
    from tfrx.parsing import VarLenFeature, parse_example, parse_sequence_example

    varlen = {k: v for k, v in features.items() if isinstance(v, VarLenFeature)}
    if not varlen:
        return set()
    parsed = parse_sequence_example(batch, varlen, {})[0] if sequence else parse_example(batch, varlen)
    out = set()
    for name, sparse in parsed.items():
        rows = np.asarray(sparse.indices)[:, 0] if len(sparse.indices) else np.zeros(0, np.int64)
        if not len(rows) or np.bincount(rows).max() <= 1:
            out.add(name)
    return out


def _dtype_name(feature) -> str:
    return str(getattr(feature.dtype, "name", feature.dtype))


def _merge(specs: list[tuple[str, dict, set]], sequence_lists: bool, out: Inferred) -> dict:
    """One spec over several files' specs: kinds must agree; differing counts widen to variable length.

    A feature that holds at most one value in every sampled record of every
    file (and is absent from some) is a scalar, ``FixedLenFeature([])``:
    readers of inferred specs read such scalars as nullable.
    """
    from tfrx.parsing import FixedLenFeature, RaggedFeature, VarLenFeature

    names: list[str] = []
    for _, spec, _ in specs:
        names += [n for n in spec if n not in names]
    merged = {}
    for name in names:
        seen = [(path, spec[name], name in single) for path, spec, single in specs if name in spec]
        kinds = {_dtype_name(f) for _, f, _ in seen}
        if len(kinds) > 1:
            detail = ", ".join(f"{os.path.basename(str(p))}: {_dtype_name(f)}" for p, f, _ in seen)
            out.conflicts.append(f"{name!r} ({detail})")
            continue
        first = seen[0][1]
        if len(seen) == len(specs) and all(f == first for _, f, _ in seen):
            merged[name] = FixedLenFeature([], first.dtype) if seen[0][2] else first
            continue
        scalar = not sequence_lists and all(
            s or (isinstance(f, FixedLenFeature) and not list(f.shape or [])) for _, f, s in seen
        )
        if scalar:
            merged[name] = FixedLenFeature([], first.dtype)
            continue
        wide = RaggedFeature(first.dtype) if sequence_lists else VarLenFeature(first.dtype)
        if len(seen) < len(specs):
            out.widened.append(f"{name!r} (absent from {len(specs) - len(seen)} of {len(specs)} sampled files)")
        else:
            shapes = ", ".join(
                f"{os.path.basename(str(p))}: {type(f).__name__}{list(getattr(f, 'shape', []) or [])}"
                for p, f, _ in seen
            )
            out.widened.append(f"{name!r} ({shapes})")
        merged[name] = wide
    return merged


def infer_spec(
    sources: Sequence, *, kind: str = "auto", files: int = 8, records: int = 1000, compression: str = "auto"
) -> Inferred:
    """Infers one spec from the first ``records`` records of up to ``files`` files spread over ``sources``.

    ``kind``: ``"auto"``, ``"example"`` or ``"sequence"``. The files' specs
    are merged (see :class:`Inferred`): a feature whose value count differs
    between files becomes variable length, and one whose kind differs is
    reported in ``conflicts``. Files without records are passed over.
    """
    if records < 1:
        raise ValueError(f"records must be positive, got {records}")
    picked = _sample_files(list(sources), files)
    specs = []
    for source in picked:
        found = _infer_file(source, records, kind, compression)
        if found is not None:
            specs.append((str(source), *found))
    out = Inferred(None, [p for p, _, _ in specs])
    if not specs:
        raise ValueError(f"no records in the {len(picked)} sampled file(s) to infer a spec from; pass a spec")
    sequence = [isinstance(s, tuple) for _, s, _ in specs]
    if any(sequence) and not all(sequence):
        which = [os.path.basename(p) for (p, _, _), s in zip(specs, sequence) if s]
        raise ValueError(
            f"some sampled files hold SequenceExamples ({', '.join(which)}) and others Examples; "
            "pass the record type and a spec"
        )
    if all(sequence):
        context = _merge([(p, s[0], one) for p, s, one in specs], False, out)
        lists = _merge([(p, s[1], set()) for p, s, _ in specs], True, out)
        out.spec = (context, lists)
    else:
        out.spec = _merge(specs, False, out)
    return out


def nullable_scalars(spec) -> tuple[Any, list[str]]:
    """``spec`` with its required scalar features read as zero-or-one-value features, and their names.

    Readers of inferred specs use it: a sample cannot promise that every
    record holds a feature, so a scalar is null where a record lacks it.
    """
    from tfrx.parsing import FixedLenFeature, VarLenFeature

    def convert(features: dict, names: list[str]) -> dict:
        out = {}
        for name, f in features.items():
            if isinstance(f, FixedLenFeature) and not list(f.shape or []) and f.default_value is None:
                out[name] = VarLenFeature(f.dtype)
                names.append(name)
            else:
                out[name] = f
        return out

    names: list[str] = []
    if spec is False:
        return spec, names
    if isinstance(spec, tuple):
        return (convert(spec[0], names), dict(spec[1])), names
    return convert(spec, names), names


def scalars_from_lists(batch: pa.RecordBatch, names: Sequence[str], where: str) -> pa.RecordBatch:
    """Columns of zero-or-one-value lists as scalar columns (null for none); more values raise, naming the file."""
    arrays = []
    for name in batch.schema.names:
        arr = batch.column(name)
        if name in names:
            offsets = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
            sizes = np.diff(offsets)
            if len(sizes) and sizes.max() > 1:
                row = int(np.argmax(sizes > 1))
                raise ValueError(
                    f"{where}: feature {name!r} holds {int(sizes[row])} values in a record (row {row} of a batch), "
                    "but its column is a scalar: declare it an array (array<...> in Spark), or pass a spec"
                )
            index = pa.array(offsets[:-1] - offsets[0], pa.int64(), mask=sizes == 0)
            values = arr.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
            arr = values.take(index)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


# ------------------------------------------------------------------ planning
def plan(
    sources: Sequence,
    *,
    split_bytes: int,
    compression: str = "auto",
    build_index: bool = False,
    use_index: bool = True,
) -> list[RecordRange]:
    """Record ranges of at most about ``split_bytes`` bytes each (compressed files whole).

    ``build_index``: first build the index of every uncompressed local file
    larger than ``split_bytes`` that has none (:func:`tfrx.build_index`), so
    that ranges are exact record ranges with true record numbers.
    """
    if split_bytes < 1:
        raise ValueError(f"split_bytes must be positive, got {split_bytes}")
    sources = list(sources)
    if build_index:
        _build_missing_indexes(sources, split_bytes, compression)
    sizes = [file_size(s) or 0 for s in sources]
    return plan_ranges(
        sources,
        num_ranges=max(1, math.ceil(sum(sizes) / split_bytes)),
        compression=compression,
        min_split_bytes=split_bytes,
        use_index=use_index,
    )


def _build_missing_indexes(sources: Sequence, split_bytes: int, compression: str) -> None:
    from tfrx.io._compression import detect_compression
    from tfrx.io.index import build_index, load_index
    from tfrx.io._paths import is_url

    for source in sources:
        if not isinstance(source, str) or is_url(source) or (file_size(source) or 0) <= split_bytes:
            continue
        if compression == "auto":
            with open(source, "rb") as f:
                if detect_compression(f.read(12)):
                    continue
        elif compression:
            continue
        try:
            load_index(source, build=False)
        except (OSError, TfrxError):
            build_index(source)


# ------------------------------------------------------------------ reading
def make_plan(spec, columns: Sequence[str] | None = None, filter: Any = None) -> _Plan:
    """The parse plan of ``spec`` (``False``: raw records) for ``columns``, with an optional pyarrow filter."""
    stats = ScanStats()
    if spec is False:
        return _Plan(False, [RAW_COLUMN], None, None, None, stats)
    names = spec_names(spec)
    out = list(columns) if columns is not None else names
    unknown = [c for c in out if c not in names]
    if unknown:
        raise KeyError(f"no feature named {unknown} in the spec (it has {names})")
    needed = _filter_columns(filter, names) if filter is not None else []
    return _Plan(
        spec=_restrict(spec, out),
        columns=out,
        filter=filter,
        filter_spec=_restrict(spec, needed),
        rest_spec=_restrict(spec, [c for c in out if c not in needed]),
        stats=stats,
    )


def plan_schema(p: _Plan) -> pa.Schema:
    """The Arrow schema of the batches a plan makes."""
    schema = _schema_of(p.spec)
    if p.spec is False:
        return pa.schema([(RAW_COLUMN, pa.binary())])
    return pa.schema([schema.field(c) for c in p.columns])


def read_piece(
    piece: RecordRange, p: _Plan, *, compression: str = "auto", on_error: str = "raise", batch_size: int = 8192
) -> Iterator[pa.RecordBatch]:
    """The parsed batches of one range. With ``on_error`` other than ``"raise"``, records that do not parse
    are dropped one by one (``"warn"`` says which) as well as damaged ones."""
    for records in read_range(piece, compression=compression, on_error=on_error, batch_size=batch_size):
        if not len(records):
            continue
        try:
            batch = p.batch(records)
        except (TfrxError, ValueError):
            if on_error == "raise":
                raise
            batch = _batch_skipping(p, records, on_error)
        if batch is not None and batch.num_rows:
            yield batch


def _batch_skipping(p: _Plan, records: RecordBatch, on_error: str) -> pa.RecordBatch | None:
    keep = []
    for i in range(len(records)):
        try:
            p.batch(RecordBatch.from_records([records[i]]))
        except (TfrxError, ValueError) as e:
            if on_error == "warn":
                import warnings

                warnings.warn(f"{records.path}: record {records.first_index + i}: {e}", stacklevel=3)
            continue
        keep.append(i)
    if not keep:
        return None
    return p.batch(RecordBatch.from_records([records[i] for i in keep]))


def _cast(arr: pa.Array, target: pa.DataType, name: str) -> pa.Array:
    if arr.type == target:
        return arr
    lists = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)
    if any(f(target) for f in lists[:2]) and any(f(arr.type) for f in lists):
        if pa.types.is_fixed_size_list(arr.type):
            size = arr.type.list_size
            offsets = np.arange(len(arr) + 1, dtype=np.int64) * size
            values = arr.values.slice(arr.offset * size, len(arr) * size)
        else:
            offsets = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
            values = arr.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
            offsets = offsets - offsets[0]
        mask = arr.is_null() if arr.null_count else None
        return _list_array(target, offsets, _cast(values, target.value_type, name), mask)
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise TypeError(f"column {name!r}: its values ({arr.type}) do not convert to {target}: {e}") from None


def _list_array(target: pa.DataType, offsets: np.ndarray, values: pa.Array, mask=None) -> pa.Array:
    if pa.types.is_large_list(target):
        return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), values, type=target, mask=mask)
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32), pa.int32()), values, type=target, mask=mask)


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with its columns cast to ``schema`` (an engine's exact Arrow schema: list types, nullability).

    Fixed-size and large lists become the lists the schema names, binary
    becomes string when asked (UTF-8 checked), numbers widen or narrow as
    ``pyarrow.compute.cast`` allows safely.
    """
    arrays = [_cast(batch.column(f.name), f.type, f.name) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# ------------------------------------------------------------------ writing
def new_run() -> str:
    """A fresh run id: the parts of one write job carry it in their names."""
    return uuid.uuid4().hex[:12]


def part_for(prefix: str, run: str, key: str) -> str:
    """The temporary path of one task's part of ``prefix``: ``.tfrx/<name>-<run>-<key>.part`` beside the shards."""
    from tfrx.io._commit import part_path

    return part_path(prefix, f"-{run}-{key}.part")


class PartWriter:
    """Writes Arrow batches to one part as Examples, SequenceExamples or raw records; counts them."""

    def __init__(self, path: str, *, record_type: str, compression: str | None, feature_lists=None) -> None:
        from tfrx.io._writer import TFRecordWriter

        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.path = path
        self.record_type = record_type
        self.feature_lists = list(feature_lists) if feature_lists is not None else None
        self.records = 0
        self._writer = TFRecordWriter(path, compression=compression)

    def write(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        if self.record_type == "bytes":
            if batch.num_columns != 1:
                raise ValueError(
                    f"raw records are written from one binary column; got {batch.num_columns}: {batch.schema.names}"
                )
            column = batch.column(0)
            if column.null_count:
                raise ValueError(f"column {batch.schema.names[0]!r}: a raw record cannot be null")
            records = RecordBatch.from_records([bytes(v) for v in column.cast(pa.binary()).to_pylist()])
        elif self.record_type == "sequence_example":
            lists = self.feature_lists
            if lists is None:
                lists = [f.name for f in batch.schema if _is_list_of_lists(f.type)]
            records = to_sequence_examples(batch, lists, as_batch=True)
        else:
            nested = [f.name for f in batch.schema if _is_list_of_lists(f.type)]
            if nested:
                raise TypeError(
                    f"columns {nested} hold lists of lists, which a tf.train.Example cannot: write them as feature "
                    "lists of SequenceExamples (record type sequence_example), or flatten them"
                )
            records = to_examples(batch, as_batch=True)
        self._writer.write_many(records)
        self.records += len(records)

    def close(self) -> None:
        self._writer.close()
        from tfrx.io._commit import sync_part

        sync_part(self.path)

    def discard(self) -> None:
        try:
            self._writer.close()
        finally:
            try:
                os.remove(self.path)
            except OSError:
                pass


def _is_list_of_lists(t: pa.DataType) -> bool:
    lists = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)
    return any(f(t) for f in lists) and any(f(t.value_type) for f in lists)


def write_part(
    batches: Iterable[pa.RecordBatch], path: str, *, record_type: str, compression: str | None, feature_lists=None
) -> int:
    """Writes ``batches`` to the part ``path`` (synced); returns the record count. A failure removes the part."""
    writer = PartWriter(path, record_type=record_type, compression=compression, feature_lists=feature_lists)
    try:
        for batch in batches:
            writer.write(batch)
    except BaseException:
        writer.discard()
        raise
    writer.close()
    return writer.records


def commit_parts(
    parts: Sequence[tuple[str, int]],
    prefix: str,
    *,
    compression: str | None,
    index: bool = False,
    naming: str = "tfds",
    manifest: bool = True,
) -> list[str]:
    """Commits ``(part, records)`` in order as the shard set ``prefix`` (TFDS names); returns the shard paths.

    Parts without records are dropped (their files deleted) unless every
    part is empty, when one empty shard is written so the output exists.
    """
    from tfrx.io._commit import commit_shards, discard_parts

    kept = [(p, n) for p, n in parts if n > 0]
    discard_parts([p for p, n in parts if n == 0])
    shards: list[tuple[str | None, int]] = list(kept) if kept else [(None, 0)]
    from tfrx.io.index import build_index
    from tfrx.io._sidecars import index_sidecar

    def build(path: str) -> None:  # beside the shard, as tfrx.ShardedWriter does: the index travels with the data
        build_index(path, index_path=index_sidecar(path))

    paths, _ = commit_shards(
        shards, prefix, naming=naming, compression=compression, manifest=manifest, build_index=build if index else None
    )
    return paths


def discard_run(root: str, run: str, *, recursive: bool = True) -> list[str]:
    """Deletes every part of run ``run`` in ``root/.tfrx/`` (and, when ``recursive``, in the ``.tfrx/`` folders
    of the folders under ``root``); returns what it removed."""
    from tfrx.io._sidecars import SIDECAR_DIR

    if recursive:
        folders = [d for d, _, _ in os.walk(root) if os.path.basename(d) == SIDECAR_DIR]
    else:
        folders = [os.path.join(root, SIDECAR_DIR)]
    removed = []
    marker = f"-{run}-"
    for directory in folders:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if marker in name and name.endswith(".part"):
                try:
                    os.remove(os.path.join(directory, name))
                    removed.append(os.path.join(directory, name))
                except OSError:
                    pass
        try:
            os.rmdir(directory)  # only when nothing else is in it
        except OSError:
            pass
    return removed


_SHARD = re.compile(r"^(?P<name>.+)\.tfrecord-\d{5}-of-\d{5}$")


def stale_shards(directory: str, name: str, keep: Iterable[str]) -> list[str]:
    """Shards named ``<name>.tfrecord-NNNNN-of-MMMMM`` in ``directory`` that are not in ``keep``."""
    kept = {os.path.abspath(k) for k in keep}
    out: list[str] = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return out
    for entry in entries:
        m = _SHARD.match(entry)
        path = os.path.abspath(os.path.join(directory, entry))
        if m and m.group("name") == name and path not in kept:
            out.append(path)
    return out


def hive_folder(keys: Sequence[str], values: Sequence[Any]) -> str:
    """The Hive-style folder of one partition: ``k1=v1/k2=v2`` (nulls as ``__HIVE_DEFAULT_PARTITION__``)."""
    parts = []
    for k, v in zip(keys, values):
        if v is None:
            text = "__HIVE_DEFAULT_PARTITION__"
        elif isinstance(v, bytes):
            text = v.decode("utf-8", "backslashreplace")
        else:
            text = str(v)
        text = re.sub(r"[\\/:*?\"<>|%=\x00-\x1f]", lambda m: f"%{ord(m.group(0)):02X}", text)
        parts.append(f"{k}={text}")
    return "/".join(parts)


_HIVE = re.compile(r"^([^=/]+)=(.*)$")
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def hive_values(root: str, path: str) -> dict[str, str | None]:
    """The ``k=v`` folders between ``root`` and the file ``path`` (values unescaped; ``None`` for null)."""
    from urllib.parse import unquote

    rel = os.path.relpath(os.path.dirname(os.path.abspath(path)), os.path.abspath(root))
    out: dict[str, str | None] = {}
    if rel == "." or rel.startswith(".."):
        return out
    for segment in rel.split(os.sep):
        m = _HIVE.match(segment)
        if m is None:
            return {}
        value = unquote(m.group(2))
        out[m.group(1)] = None if value == HIVE_NULL else value
    return out


def hive_partitioning(paths: Sequence[str], sources: Sequence) -> tuple[list[str], dict[str, str]]:
    """The partition columns of folders ``k=v/`` under the folders in ``paths``: their names (in folder order)
    and kinds (``"int64"`` when every value is an integer, else ``"string"``). None when the files disagree on
    the keys, or when a path is not a local folder."""
    roots = [p for p in paths if isinstance(p, str) and os.path.isdir(p)]
    if len(roots) != len(paths) or not sources:
        return [], {}
    keys: list[str] | None = None
    seen: dict[str, list] = {}
    for source in sources:
        values = next((hive_values(r, str(source)) for r in roots if _under(str(source), r)), {})
        if keys is None:
            keys = list(values)
        if list(values) != keys:
            return [], {}
        for k, v in values.items():
            seen.setdefault(k, []).append(v)
    kinds = {
        k: "int64" if all(v is None or re.fullmatch(r"-?\d{1,18}", v) for v in vs) else "string"
        for k, vs in seen.items()
    }
    return keys or [], kinds


def _under(path: str, root: str) -> bool:
    return os.path.abspath(path).startswith(os.path.abspath(root).rstrip(os.sep) + os.sep)


def partition_values(roots: Sequence[str], path: str) -> dict[str, str | None]:
    """The ``k=v`` values of ``path`` under whichever of ``roots`` holds it."""
    return next((hive_values(r, path) for r in roots if _under(path, r)), {})


def group_rows(batch: pa.RecordBatch, keys: Sequence[str]) -> dict[tuple, pa.RecordBatch]:
    """The rows of ``batch`` grouped by the values of the ``keys`` columns, those columns dropped."""
    values = list(zip(*(batch.column(k).to_pylist() for k in keys))) if keys else []
    groups: dict[tuple, list[int]] = {}
    for i, v in enumerate(values):
        groups.setdefault(tuple(v), []).append(i)
    rest = [n for n in batch.schema.names if n not in keys]
    body = batch.select(rest)
    return {k: body.take(pa.array(rows, pa.int64())) for k, rows in groups.items()}


def mapping_of(options: Mapping[str, str]) -> dict[str, str]:
    """A plain dict of options, keys lower-cased (Spark's options are case-insensitive)."""
    return {str(k).lower(): str(v) for k, v in options.items()}
