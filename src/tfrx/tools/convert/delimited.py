"""CSV (any delimiter) to TFRecord shards, split at row boundaries across processes."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping

import numpy as np

from tfrx.options import ProgressOption, renamed_arguments, resolve_parallelism
from tfrx.tools.convert._common import (
    ConvertSummary,
    _check_engine,
    _committing,
    _map_jobs,
    _sharding,
    _start,
    _worker_policy,
    _writer,
)
from tfrx.tools.convert._values import _convert_text, _normalize_spec, _rows_to_columns, _text_kind
from tfrx._progress import progress_bar


@renamed_arguments(workers="num_parallel_calls")
def csv_to_tfrecord(  # noqa: PLR0913  the converters' shared options, and csv's dialect
    path: str | os.PathLike,
    output: str | os.PathLike,
    *,
    spec: Mapping | None = None,
    delimiter: str = ",",
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    max_bytes_per_shard: int | None = None,
    compression: str | None = None,
    naming: str = "tfds",
    infer_rows: int = 1000,
    chunk_rows: int = 8192,
    num_parallel_calls: int | None = None,
    parallel_chunk_bytes: int = 16 << 20,
    on_error: str = "raise",
    progress: ProgressOption = None,
    engine: str = "local",
) -> ConvertSummary:
    """Converts a CSV file with a header row into TFRecord shards, one Example per row.

    ``spec`` maps column names to ``"int64"``, ``"float"`` or ``"bytes"``
    (or tfrx features such as ``FixedLenFeature([], tfrx.float32)``);
    columns it leaves out are inferred from the first ``infer_rows`` rows
    (int64 if every value is an integer, float if every value is a number,
    bytes otherwise). An empty field is a missing value: the feature is left
    out of that Example. A row with the wrong number of fields, or a value
    that does not fit its column's kind, is a bad input (``on_error``).

    Files larger than ``parallel_chunk_bytes`` are split at row boundaries
    and converted by ``num_parallel_calls`` processes (default: the usable
    cores; ``workers=`` is the deprecated name); records
    keep the file's order. Fields may be quoted (RFC 4180), also across lines.
    ``engine="ray"`` converts those ranges as Ray tasks instead.
    """
    _check_engine(engine)
    path = os.fspath(path)
    summary, errors, t0 = _start(on_error)
    given = _normalize_spec(spec or {})
    size = os.path.getsize(path)
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{path!r} is empty; expected a header row") from None
        if len(set(header)) != len(header):
            raise ValueError(f"{path!r}: the header has repeated column names: {header}")
        unknown = set(given) - set(header)
        if unknown:
            raise ValueError(f"spec names columns that {path!r} does not have: {sorted(unknown)}")
        head = []
        for row in reader:
            head.append(row)
            if len(head) >= infer_rows:
                break
        width = len(header)
        kinds = {}
        for j, name in enumerate(header):
            kinds[name] = given.get(name) or _text_kind([r[j] for r in head if len(r) == width])
        summary.spec = kinds
        names = list(kinds.items())
    header_end = _header_end(path)
    writer = _writer(output, _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression)
    workers = resolve_parallelism(num_parallel_calls, default=None)
    with _committing(writer, summary, t0):
        with progress_bar(size, desc="csv", unit="B", enabled=progress) as bar:
            bar.update(header_end)
            split = workers > 1 or engine == "ray"
            ranges = _csv_ranges(path, header_end, size, parallel_chunk_bytes) if split else []
            if len(ranges) > 1:
                jobs = [(path, a, b, line, names, width, delimiter, on_error, chunk_rows) for a, b, line in ranges]
                results = _map_jobs(_csv_range_job, jobs, engine, min(workers, len(ranges)), processes=True)
                for (a, b, _), (batches, skipped, messages) in zip(ranges, results):
                    for batch in batches:
                        writer.write_many(batch)
                    errors.add(skipped, messages)
                    bar.update(b - a)
            else:
                _csv_range(
                    path,
                    header_end,
                    size,
                    2,
                    names,
                    width,
                    delimiter,
                    errors,
                    chunk_rows,
                    on_batch=lambda batch, done: (writer.write_many(batch), bar.update(done)),
                )
    return summary


def _header_end(path: str) -> int:
    """Byte offset just after the header row (a header may not span lines)."""
    with open(path, "rb") as f:
        f.readline()
        return f.tell()


def _csv_ranges(path: str, start: int, size: int, target: int) -> list[tuple[int, int, int]]:
    """(start, end, first line number) byte ranges that end at a row boundary.

    A newline ends a row only outside quotes; with RFC 4180 quoting (``""``
    inside quoted fields) that is where the number of quote characters since
    the range start is even.
    """
    import mmap

    if size - start <= target:
        return [(start, size, 2)]
    ranges = []
    line = 2
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        while start < size:
            end = size
            search = start + target - 1
            while search < size:
                nl = mm.find(b"\n", search)
                if nl < 0:
                    end = size
                    break
                end = nl + 1
                if mm[start:end].count(b'"') % 2 == 0:
                    break
                search = end  # that newline is inside a quoted field
            ranges.append((start, end, line))
            line += mm[start:end].count(b"\n")
            start = end
    return ranges


def _csv_range_job(job):
    """Worker: converts one byte range; returns (record batches, rows skipped, messages)."""
    path, start, end, line, names, width, delimiter, on_error, chunk_rows = job
    summary, errors, _ = _start(_worker_policy(on_error))
    batches = []
    _csv_range(
        path,
        start,
        end,
        line,
        names,
        width,
        delimiter,
        errors,
        chunk_rows,
        on_batch=lambda batch, done: batches.append(batch),
    )
    return batches, summary.skipped, summary.errors


def _csv_range(path, start, end, first_line, names, width, delimiter, errors, chunk_rows, on_batch):
    """Parses rows of ``path[start:end]`` and hands each chunk's records to ``on_batch(batch, bytes_done)``."""
    from tfrx.codec import encode_examples

    kinds = dict(names)
    with open(path, "rb") as fb:
        fb.seek(start)
        data = fb.read(end - start)
    text = io.StringIO(data.decode("utf-8"), newline="")
    reader = csv.reader(text, delimiter=delimiter)

    def convert_rows(chunk):
        """Rows one by one: the exact error for each bad row."""
        rows = []
        for line, row in chunk:
            out = {}
            for (name, kind), value in zip(names, row):
                if value == "":
                    continue
                try:
                    out[name] = _convert_text(value, kind)
                except ValueError:
                    errors(f"{path}: line {line}: column {name!r}: {value!r} is not {kind}")
                    break
            else:
                rows.append(out)
        if rows:
            return encode_examples(_rows_to_columns(rows, kinds), kinds=kinds, as_batch=True)
        return None

    def convert_chunk(chunk, done):
        if not chunk:
            return
        parsed = _csv_columns([row for _, row in chunk], names)
        if parsed is None:  # a value does not fit its column: find which, row by row
            batch = convert_rows(chunk)
        else:
            columns, present = parsed
            batch = encode_examples(columns, kinds=kinds, present=present or None, as_batch=True)
        if batch is not None:
            on_batch(batch, done)

    chunk: list[tuple[int, list[str]]] = []
    done = 0
    last = 0
    for row in reader:
        line = first_line + last  # the line where the row starts (a quoted field may span lines)
        last = reader.line_num
        if len(row) != width:
            if row:
                errors(f"{path}: line {line}: {len(row)} fields, the header has {width}")
            continue
        chunk.append((line, row))
        if len(chunk) >= chunk_rows:
            pos = text.tell()
            convert_chunk(chunk, pos - done)
            done = pos
            chunk = []
    convert_chunk(chunk, len(data) - done)


def _csv_columns(rows: list[list[str]], names) -> tuple[dict, dict] | None:
    """(columns, present) of a chunk of CSV rows, numbers parsed by NumPy; None when a value does not parse."""
    columns: dict[str, list | np.ndarray] = {}
    present: dict[str, np.ndarray] = {}
    for j, (name, kind) in enumerate(names):
        if kind == "bytes":
            texts = [r[j] for r in rows]
            columns[name] = [t.encode("utf-8") for t in texts]
            missing = np.fromiter((t == "" for t in texts), bool, count=len(texts))
        else:
            col = np.array([r[j] for r in rows], dtype=str)
            missing = col == ""
            if missing.any():
                col[missing] = "0"
            try:
                columns[name] = col.astype(np.int64 if kind == "int64" else np.float64)
            except (ValueError, OverflowError):
                return None
        if missing.any():
            present[name] = ~missing
    return columns, present
