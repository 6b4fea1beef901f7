"""Converters: image folders, CSV, JSON Lines and Parquet to TFRecord shards, and TFRecords back to tables.

Every converter returns a :class:`ConvertSummary`. Bad inputs (an image that
does not decode, a CSV row with the wrong number of fields, a value that does
not fit the spec) follow ``on_error``: ``"raise"`` (default) stops with a
:class:`tfrx.TfrxError` naming the input, ``"skip"`` leaves the input out and
counts it, ``"warn"`` does the same with a warning. Skipped inputs are always
counted in ``summary.skipped`` with their messages in ``summary.errors``.

``engine="ray"`` runs the per-chunk work of the image, CSV and Parquet
converters (decoding images, parsing rows, encoding Examples) as Ray tasks
on the cluster ``ray.init()`` connected to (a local one when none was
started); the driver only writes the returned records into the shards, so
the output is the same as a local conversion. The inputs must be readable
at the same paths from every Ray worker.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
import warnings
from collections.abc import Mapping
from collections import deque
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from tfrx.errors import TfrxError
from tfrx.tools.progress import progress_bar
from tfrx.tools.sharded import ShardedWriter

__all__ = [
    "ConvertError",
    "ConvertSummary",
    "IMAGE_EXTENSIONS",
    "images_to_tfrecord",
    "csv_to_tfrecord",
    "jsonl_to_tfrecord",
    "parquet_to_tfrecord",
    "tfrecord_to_jsonl",
    "tfrecord_to_parquet",
]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp")
_ON_ERROR = ("raise", "skip", "warn")
_ENGINES = ("local", "ray")
_MAX_KEPT_ERRORS = 100


class ConvertError(TfrxError, ValueError):
    """An input could not be converted (with ``on_error="raise"``)."""


@dataclass
class ConvertSummary:
    """What a conversion did: records written, inputs skipped (with messages), output paths, seconds."""

    records: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    seconds: float = 0.0
    spec: dict | None = None

    def __str__(self) -> str:
        rate = f", {self.records / self.seconds:,.0f} records/s" if self.seconds > 0 else ""
        return (f"{self.records} records written to {len(self.paths)} file(s), {self.skipped} inputs skipped "
                f"in {self.seconds:.2f} s{rate}")


class _Errors:
    def __init__(self, on_error: str, summary: ConvertSummary) -> None:
        if on_error not in _ON_ERROR:
            raise ValueError(f"on_error must be one of {_ON_ERROR}, got {on_error!r}")
        self.on_error = on_error
        self.summary = summary

    def __call__(self, message: str) -> None:
        if self.on_error == "raise":
            raise ConvertError(message + '; pass on_error="skip" to leave such inputs out and count them')
        self.summary.skipped += 1
        if len(self.summary.errors) < _MAX_KEPT_ERRORS:
            self.summary.errors.append(message)
        if self.on_error == "warn":
            warnings.warn(message, stacklevel=3)

    def add(self, skipped: int, messages, *, warn: bool = True) -> None:
        """Counts inputs skipped elsewhere (a worker that ran with ``"skip"``), keeping and warning about its messages."""
        self.summary.skipped += skipped
        for m in messages:
            if len(self.summary.errors) < _MAX_KEPT_ERRORS:
                self.summary.errors.append(m)
            if warn and self.on_error == "warn":
                warnings.warn(m, stacklevel=3)


def _start(on_error: str) -> tuple[ConvertSummary, _Errors, float]:
    """A fresh summary, its error policy, and the start time."""
    summary = ConvertSummary()
    return summary, _Errors(on_error, summary), time.perf_counter()


def _worker_policy(on_error: str) -> str:
    """Workers collect messages instead of warning; the driver warns once it has them (``_Errors.add``)."""
    return "skip" if on_error == "warn" else on_error


def _check_engine(engine: str) -> None:
    if engine not in _ENGINES:
        raise ValueError(f"engine must be one of {_ENGINES}, got {engine!r}")


def _map_jobs(func, jobs, engine: str, workers: int, *, processes: bool = False):
    """``func(job)`` for every job, results in job order: as Ray tasks, or in a local pool.

    Ray tasks are submitted a few at a time ahead of the result being
    consumed, so results waiting in the object store stay bounded.
    """
    if engine == "ray":
        try:
            import ray
        except ImportError:
            raise ImportError("engine='ray' needs Ray: pip install 'tfrx[ray]'") from None
        if not ray.is_initialized():
            ray.init()
        task = ray.remote(func)
        ahead = max(2, 2 * int(ray.available_resources().get("CPU", workers) or workers))
        pending: deque = deque()
        for job in jobs:
            pending.append(task.remote(job))
            if len(pending) >= ahead:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())
        return
    pool = ProcessPoolExecutor if processes else ThreadPoolExecutor
    with pool(workers) as ex:
        yield from ex.map(func, jobs)


def _writer(output, sharding: Mapping | None, compression, total=None) -> ShardedWriter:
    sharding = dict(sharding or {})
    if sharding.get("num_shards") is not None and total is not None:
        sharding.setdefault("total_records", total)
    return ShardedWriter(output, compression=compression, **sharding)


def _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming) -> dict:
    return {"num_shards": num_shards, "max_records_per_shard": max_records_per_shard,
            "max_bytes_per_shard": max_bytes_per_shard, "naming": naming}


def _finish(writer: ShardedWriter, summary: ConvertSummary, t0: float, ok: bool) -> ConvertSummary:
    if ok:
        summary.paths = writer.close()
    else:
        writer.abort()
    summary.records = writer.records_written
    summary.seconds = time.perf_counter() - t0
    return summary


# ================================================================== image folders
def _list_images(root: str, extensions) -> tuple[list[str], list[tuple[str, int]]]:
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no such directory: {root!r}")
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    if not classes:
        raise ValueError(f"{root!r} has no class subfolders; expected one folder per class (ImageNet layout): "
                         f"{root}/cat/001.jpg, {root}/dog/002.jpg, ...")
    files = []
    for label, name in enumerate(classes):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, name)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in sorted(filenames):
                if f.lower().endswith(extensions) and not f.startswith("."):
                    files.append((os.path.join(dirpath, f), label))
    return classes, files


def _image_size(data: bytes) -> tuple[int, int]:
    """(height, width) from the image header, without decoding the pixels."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        width, height = im.size
    return height, width


def _image_record(path: str, label: int, classes, root, resize, reencode, quality, validate="full"):
    """One image's features, or an error message (the work runs in threads: decoding releases the GIL)."""
    from tfrx.image import decode_image, encode_jpeg, encode_png, image_format

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"{path}: cannot read: {e.strerror or e}"
    fmt = image_format(data) if data else None
    if fmt is None:
        return f"{path}: not an image (unknown format)"
    if validate == "header" and resize is None and reencode is None:
        try:
            height, width = _image_size(data)
        except Exception as e:  # noqa: BLE001 - any header failure is a bad input
            return f"{path}: cannot read the {fmt} header: {e}"
        return (data, fmt, label, classes[label], height, width, os.path.relpath(path, root))
    try:
        image = decode_image(data, channels=None if reencode is None and resize is None else 3, expand_animations=False)
    except Exception as e:  # noqa: BLE001 - any decoder failure is a bad input
        return f"{path}: cannot decode {fmt}: {e}"
    if resize is not None:
        from tfrx.image import resize as resize_image

        image = np.clip(np.rint(resize_image(image, resize, antialias=True)), 0, 255).astype(np.uint8)
    if reencode is not None or resize is not None:
        fmt = reencode or ("png" if fmt == "png" else "jpeg")
        data = encode_jpeg(image, quality=quality) if fmt == "jpeg" else encode_png(image)
    return (data, fmt, label, classes[label], int(image.shape[0]), int(image.shape[1]), os.path.relpath(path, root))


def _image_part_job(job) -> list:
    """A Ray task: the results of ``_image_record`` for one part of the file list."""
    part, options = job
    return [_image_record(path, label, *options) for path, label in part]


def _image_results(parts, options, engine: str, workers: int):
    """For each part of the file list, the list of its ``_image_record`` results."""
    if engine == "ray":
        yield from _map_jobs(_image_part_job, [(part, options) for part in parts], engine, workers)
        return
    with ThreadPoolExecutor(workers) as pool:
        for part in parts:
            yield list(pool.map(lambda fl: _image_record(fl[0], fl[1], *options), part))


def images_to_tfrecord(
    root: str | os.PathLike,
    output: str | os.PathLike,
    *,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    max_bytes_per_shard: int | None = None,
    compression: str | None = None,
    naming: str = "tfds",
    resize: tuple[int, int] | None = None,
    reencode: str | None = None,
    quality: int = 95,
    validate: str = "full",
    shuffle: bool = True,
    seed: int = 0,
    workers: int | None = None,
    extensions=IMAGE_EXTENSIONS,
    on_error: str = "raise",
    progress: bool | None = None,
    engine: str = "local",
) -> ConvertSummary:
    """Converts a folder with one subfolder per class (ImageNet layout) into TFRecord shards.

    Each image becomes one Example with the keys TensorFlow's ImageNet
    scripts and TFDS use: ``image/encoded`` (the file's bytes, or the
    re-encoded image), ``image/format`` (``jpeg``, ``png``, ...),
    ``image/class/label`` (index of the class folder in sorted order),
    ``image/class/text`` (the folder name), ``image/height``,
    ``image/width`` and ``image/filename`` (relative to ``root``).

    With ``validate="full"`` (the default) every image is decoded, which
    reads its size and catches damaged files; ``validate="header"`` reads
    only the header (several times faster; a file cut short after its header
    goes through unnoticed). ``resize=(height, width)`` resizes (bilinear, antialiased) and
    ``reencode="jpeg"|"png"`` re-encodes (a resized image is re-encoded as
    JPEG unless it was a PNG). The file order is shuffled with ``seed``
    unless ``shuffle=False`` (sorted by class then name). ``workers`` threads
    (default: every core) decode in parallel; decoding releases the GIL.
    ``engine="ray"`` decodes parts of the file list as Ray tasks instead.
    Output naming and sharding are as :class:`tfrx.ShardedWriter` (the
    default, without sharding arguments, is one shard per 1024 images).
    """
    from tfrx.codec import encode_examples

    _check_engine(engine)
    root = os.fspath(root)
    if validate not in ("full", "header"):
        raise ValueError(f"validate must be 'full' or 'header', got {validate!r}")
    if reencode is not None:
        reencode = {"jpg": "jpeg"}.get(reencode.lower(), reencode.lower())
        if reencode not in ("jpeg", "png"):
            raise ValueError(f"reencode must be 'jpeg' or 'png', got {reencode!r}")
    classes, files = _list_images(root, tuple(e.lower() for e in extensions))
    if shuffle:
        order = np.random.default_rng(seed).permutation(len(files))
        files = [files[i] for i in order]
    summary, errors, t0 = _start(on_error)
    if num_shards is None and max_records_per_shard is None and max_bytes_per_shard is None:
        max_records_per_shard = 1024
    writer = _writer(output, _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression)
    workers = workers or os.cpu_count() or 1
    chunk = max(64, 16 * workers)
    parts = [files[lo : lo + chunk] for lo in range(0, len(files), chunk)]
    options = (classes, root, resize, reencode, quality, validate)
    ok = False
    try:
        with progress_bar(len(files), desc="images", unit="img", enabled=progress) as bar:
            for part, results in zip(parts, _image_results(parts, options, engine, workers)):
                rows = []
                for r in results:
                    if isinstance(r, str):
                        errors(r)
                    else:
                        rows.append(r)
                bar.update(len(part))
                if not rows:
                    continue
                cols = list(zip(*rows))
                columns = {
                    "image/encoded": list(cols[0]),
                    "image/format": [f.encode() for f in cols[1]],
                    "image/class/label": np.asarray(cols[2], np.int64),
                    "image/class/text": [t.encode() for t in cols[3]],
                    "image/height": np.asarray(cols[4], np.int64),
                    "image/width": np.asarray(cols[5], np.int64),
                    "image/filename": [f.encode() for f in cols[6]],
                }
                writer.write_many(encode_examples(columns, kinds={k: "bytes" for k in columns if k.endswith(("encoded", "format", "text", "filename"))}, as_batch=True))
        ok = True
    finally:
        _finish(writer, summary, t0, ok)
    summary.spec = {"classes": classes}
    return summary


# ================================================================== tables
_KINDS = ("int64", "float", "bytes")
_SPEC_ALIASES = {"int": "int64", "int64": "int64", "integer": "int64", "bool": "int64",
                 "float": "float", "float32": "float", "double": "float", "float64": "float",
                 "bytes": "bytes", "string": "bytes", "str": "bytes"}


def _normalize_spec(spec) -> dict[str, str]:
    """A spec given as {name: "int64"|"float"|"bytes"}, or a tfrx features dict, as kinds."""
    out = {}
    for name, v in dict(spec).items():
        if isinstance(v, str):
            kind = _SPEC_ALIASES.get(v.lower())
        else:
            dtype = getattr(v, "dtype", None)
            kind = _SPEC_ALIASES.get(str(getattr(dtype, "name", dtype)).lower().replace("tfrx.", ""))
        if kind is None:
            raise ValueError(f"spec for {name!r} must be 'int64', 'float' or 'bytes' (or a tfrx feature), got {v!r}")
        out[name] = kind
    return out


def _text_kind(values: list[str]) -> str:
    kind = "int64"
    for v in values:
        if v == "":
            continue
        if kind == "int64":
            try:
                int(v)
                continue
            except ValueError:
                kind = "float"
        if kind == "float":
            try:
                float(v)
                continue
            except ValueError:
                return "bytes"
    return kind


def _convert_text(value: str, kind: str):
    if kind == "int64":
        return int(value)
    if kind == "float":
        return float(value)
    return value.encode("utf-8")


def _rows_to_columns(rows: list[dict], kinds: dict[str, str]) -> dict:
    columns = {}
    for name, kind in kinds.items():
        col = [r.get(name) for r in rows]
        columns[name] = col
    return columns


def _write_rows(writer, rows, kinds) -> None:
    from tfrx.codec import encode_examples

    if rows:
        writer.write_many(encode_examples(_rows_to_columns(rows, kinds), kinds=kinds, as_batch=True))


def csv_to_tfrecord(
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
    workers: int | None = None,
    parallel_chunk_bytes: int = 16 << 20,
    on_error: str = "raise",
    progress: bool | None = None,
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
    and converted by ``workers`` processes (default: every core); records
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
    workers = workers or os.cpu_count() or 1
    ok = False
    try:
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
                _csv_range(path, header_end, size, 2, names, width, delimiter, errors, chunk_rows,
                                     on_batch=lambda batch, done: (writer.write_many(batch), bar.update(done)))
        ok = True
    finally:
        _finish(writer, summary, t0, ok)
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
    _csv_range(path, start, end, line, names, width, delimiter, errors, chunk_rows,
               on_batch=lambda batch, done: batches.append(batch))
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


def _tell(f, default: int) -> int:
    try:
        return f.buffer.tell()
    except (OSError, AttributeError):
        return default


def _json_kind(value):
    """The kind of a JSON value (scalar or list), or None for null / empty list."""
    if isinstance(value, list):
        kinds = {_json_kind(v) for v in value} - {None}
        if not kinds:
            return None
        if kinds <= {"int64"}:
            return "int64"
        if kinds <= {"int64", "float"}:
            return "float"
        if len(kinds) == 1:
            return kinds.pop()
        return "mixed"
    if isinstance(value, bool) or isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "bytes"
    if isinstance(value, dict) and set(value) == {"base64"}:
        return "bytes"
    if value is None:
        return None
    return "mixed"


def _json_cell(value, kind: str):
    """A JSON value converted to ``kind``; ValueError when it does not fit."""
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    out: list = []
    for v in items:
        if kind == "int64":
            if isinstance(v, bool) or isinstance(v, int):
                out.append(int(v))
            elif isinstance(v, float) and v.is_integer():
                out.append(int(v))
            else:
                raise ValueError
        elif kind == "float":
            if isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, bool):
                out.append(float(v))
            else:
                raise ValueError
        else:
            if isinstance(v, str):
                out.append(v.encode("utf-8"))
            elif isinstance(v, dict) and set(v) == {"base64"}:
                import base64

                out.append(base64.b64decode(v["base64"]))
            else:
                raise ValueError
    return out if isinstance(value, list) else out[0]


def _sequence_row(obj) -> bool:
    """Whether a JSON object is a SequenceExample as ``tfrecord_to_jsonl`` writes it ({"context", "feature_lists"})."""
    return (len(obj) == 2 and isinstance(obj.get("context"), dict) and isinstance(obj.get("feature_lists"), dict))


def _infer_kind(path: str, name: str, ks: set) -> str:
    ks = ks - {None}
    if ks <= {"int64"}:
        return "int64" if ks else "float"
    if ks <= {"int64", "float"}:
        return "float"
    if ks == {"bytes"}:
        return "bytes"
    raise ValueError(f"{path!r}: key {name!r} mixes kinds {sorted(ks)}; pass spec={{{name!r}: ...}}")


def _encode_sequence_rows(rows: list, kinds: dict, list_kinds: dict):
    """Serialized SequenceExamples of ``(context, feature_lists)`` rows (values already converted to their kinds)."""
    from tfrx.codec import encode_sequence_examples, make_sequence_example
    from tfrx import train

    context_names = sorted({k for c, _ in rows for k in c})
    list_names = sorted({k for _, fl in rows for k in fl})
    if not (context_names or list_names) or any(step is None for _, fl in rows for steps in fl.values() for step in steps):
        # A step whose Feature has no kind (or no column to count the rows by): the columnar encoder has no
        # form for it; protobuf does, and tfrx's encoder writes the same bytes.
        out = []
        for c, fl in rows:
            lists = {k: [train.Feature() if step is None else step for step in steps] for k, steps in fl.items()}
            both = {**{k: list_kinds[k] for k in fl}, **{k: kinds[k] for k in c}}
            out.append(make_sequence_example(c, lists, kinds=both).SerializeToString(deterministic=True))
        return out
    return encode_sequence_examples(
        {k: [c.get(k) for c, _ in rows] for k in context_names},
        {k: [fl.get(k) for _, fl in rows] for k in list_names},
        kinds={**{k: list_kinds[k] for k in list_names}, **{k: kinds[k] for k in context_names}},
        as_batch=True,
    )


def _write_mixed_rows(writer, rows: list, kinds: dict, list_kinds: dict) -> None:
    """Writes rows in order: Example rows (dicts) and SequenceExample rows (``(context, feature_lists)`` pairs)."""
    start = 0
    while start < len(rows):
        sequence = isinstance(rows[start], tuple)
        end = start
        while end < len(rows) and isinstance(rows[end], tuple) == sequence:
            end += 1
        run = rows[start:end]
        if sequence:
            writer.write_many(_encode_sequence_rows(run, kinds, list_kinds))
        else:
            names = sorted({k for r in run for k in r})
            if names:
                _write_rows(writer, run, {k: kinds[k] for k in names})
            else:
                writer.write_many([b""] * len(run))  # empty Examples
        start = end


def _raw_jsonl_to_tfrecord(path, output, summary, errors, t0, chunk_rows, progress, sharding, compression):
    """``{"record": bytes}`` lines (``tfrecord_to_jsonl(raw=True)``) back into records, unchanged."""
    import base64

    writer = _writer(output, sharding, compression)
    ok = False
    try:
        with open(path, "rb") as f, progress_bar(os.path.getsize(path), desc="jsonl", unit="B", enabled=progress) as bar:
            chunk: list[bytes] = []
            for line, text in enumerate(f, 1):
                bar.update(len(text))
                if not text.strip():
                    continue
                try:
                    value = json.loads(text)["record"]
                    record = (value.encode("utf-8") if isinstance(value, str)
                              else base64.b64decode(value["base64"], validate=True))
                except (ValueError, KeyError, TypeError) as e:
                    errors(f'{path}: line {line}: expected {{"record": text or {{"base64": ...}}}} ({e!r})')
                    continue
                chunk.append(record)
                if len(chunk) >= chunk_rows:
                    writer.write_many(chunk)
                    chunk = []
            writer.write_many(chunk)
        ok = True
    finally:
        _finish(writer, summary, t0, ok)
    return summary


def jsonl_to_tfrecord(
    path: str | os.PathLike,
    output: str | os.PathLike,
    *,
    spec: Mapping | None = None,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    max_bytes_per_shard: int | None = None,
    compression: str | None = None,
    naming: str = "tfds",
    infer_rows: int = 1000,
    chunk_rows: int = 8192,
    raw: bool = False,
    on_error: str = "raise",
    progress: bool | None = None,
) -> ConvertSummary:
    """Converts JSON Lines (one object per line) into TFRecord shards, one Example per line.

    Values are numbers, strings (bytes features; ``{"base64": ...}`` for
    binary data, as ``tfrecord_to_jsonl`` writes it), booleans (int64), lists
    of these, or null (left out). A line ``{"context": {...},
    "feature_lists": {name: [step, ...]}}`` (each step a list of values, or
    null for a Feature with no kind), as ``tfrecord_to_jsonl`` writes
    SequenceExamples, becomes a SequenceExample. Kinds come from ``spec``
    (which names context features and feature lists alike) or are inferred
    from the first ``infer_rows`` lines (a column of integers and floats is
    float). A line that is not a JSON object, or a value that does not fit its
    kind, is a bad input (``on_error``); keys first seen after the inference
    rows are bad inputs too unless the spec names them.

    ``raw=True`` reads what ``tfrecord_to_jsonl(raw=True)`` writes: each line
    ``{"record": ...}`` (text, or ``{"base64": ...}``) is written as it is,
    one record per line.
    """
    path = os.fspath(path)
    summary, errors, t0 = _start(on_error)
    if raw:
        return _raw_jsonl_to_tfrecord(path, output, summary, errors, t0, chunk_rows, progress,
                                      _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming),
                                      compression)
    given = _normalize_spec(spec or {})
    kinds = dict(given)
    list_kinds = dict(given)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = []
        for row_bytes in f:
            head.append(row_bytes)
            if len(head) >= infer_rows:
                break
        seen: dict[str, set] = {}
        seen_lists: dict[str, set] = {}
        for row_bytes in head:
            try:
                obj = json.loads(row_bytes)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            if _sequence_row(obj):
                for k, steps in obj["feature_lists"].items():
                    if isinstance(steps, list):
                        seen_lists.setdefault(k, set()).update(_json_kind(s) for s in steps)
                obj = obj["context"]
            for k, v in obj.items():
                seen.setdefault(k, set()).add(_json_kind(v))
        for k, ks in seen.items():
            if k not in given:
                kinds[k] = _infer_kind(path, k, ks)
        for k, ks in seen_lists.items():
            if k not in given:
                list_kinds[k] = _infer_kind(path, k, ks)
        summary.spec = {k: v for k, v in kinds.items() if k in seen or k not in seen_lists}
        if seen_lists:
            summary.spec = {"context": summary.spec, "feature_lists": {k: list_kinds[k] for k in seen_lists}}
        writer = _writer(output, _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression)
        ok = False
        try:
            with progress_bar(size, desc="jsonl", unit="B", enabled=progress) as bar:
                rows: list = []
                line = 0

                def cells(values: dict, known: dict, what: str):
                    out = {}
                    for k, v in values.items():
                        kind = known.get(k)
                        if kind is None:
                            errors(f"{path}: line {line}: {what} {k!r} is not in the spec")
                            return None
                        try:
                            if what == "feature list":
                                if not isinstance(v, list):
                                    raise ValueError
                                out[k] = [None if step is None else _json_cell(step if isinstance(step, list) else [step], kind)
                                          for step in v]
                            else:
                                out[k] = _json_cell(v, kind)
                        except (ValueError, TypeError):
                            errors(f"{path}: line {line}: {what} {k!r}: {json.dumps(v)[:80]} does not fit {kind}")
                            return None
                    return out

                def consume(row_bytes):
                    if not row_bytes.strip():
                        return
                    try:
                        obj = json.loads(row_bytes)
                    except ValueError as e:
                        errors(f"{path}: line {line}: not JSON: {e}")
                        return
                    if not isinstance(obj, dict):
                        errors(f"{path}: line {line}: expected a JSON object, got {type(obj).__name__}")
                        return
                    if _sequence_row(obj):
                        context = cells(obj["context"], kinds, "key")
                        lists = None if context is None else cells(obj["feature_lists"], list_kinds, "feature list")
                        if lists is not None:
                            rows.append(({k: v for k, v in context.items() if v is not None}, lists))
                        return
                    out = cells(obj, kinds, "key")
                    if out is not None:
                        rows.append(out)

                done = 0
                for row_bytes in head:
                    line += 1
                    consume(row_bytes)
                for row_bytes in f:
                    line += 1
                    consume(row_bytes)
                    if len(rows) >= chunk_rows:
                        _write_mixed_rows(writer, rows, kinds, list_kinds)
                        rows = []
                        pos = f.tell()
                        bar.update(pos - done)
                        done = pos
                _write_mixed_rows(writer, rows, kinds, list_kinds)
                bar.update(size - done)
            ok = True
        finally:
            _finish(writer, summary, t0, ok)
    return summary


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ImportError("Parquet needs pyarrow: pip install 'tfrx[arrow]'") from None
    return pyarrow


def _arrow_kind(t, pa) -> str | None:
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t = t.value_type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return "int64"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t) \
            or pa.types.is_fixed_size_binary(t):
        return "bytes"
    if pa.types.is_null(t):  # only nulls: nothing reaches the wire, any kind will do
        return "bytes"
    return None


def parquet_to_tfrecord(
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
    progress: bool | None = None,
    engine: str = "local",
) -> ConvertSummary:
    """Converts a Parquet file into TFRecord shards, one Example per row (needs pyarrow).

    Integer and boolean columns become int64 features, floating point float,
    strings and binary bytes; list columns become multi-valued features and
    nulls are left out. Columns of lists of lists (``list<list<int64>>``),
    and the columns the schema metadata names as feature lists (as
    :func:`tfrecord_to_parquet` and :func:`tfrx.arrow.to_record_batch` write
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
            path, pf, output, summary, errors, t0, batch_rows, progress,
            _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression)
    schema = pf.schema_arrow
    names = columns or schema.names
    given = _normalize_spec(spec or {})
    kinds = {}
    for name in names:
        if name not in schema.names:
            raise ValueError(f"{path!r} has no column {name!r}; columns: {schema.names}")
        kind = given.get(name) or _arrow_kind(schema.field(name).type, pa)
        if kind is None:
            raise ValueError(f"{path!r}: column {name!r} has type {schema.field(name).type}, which has no "
                             "tf.train.Feature kind; cast it or leave it out with columns=")
        kinds[name] = kind
    lists = _feature_list_columns(schema, names, pa)
    summary.spec = dict(kinds)
    total = pf.metadata.num_rows
    writer = _writer(output, _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression, total)
    ok = False
    try:
        with progress_bar(total, desc="parquet", unit="rec", enabled=progress) as bar:
            if engine == "ray":
                groups = pf.metadata.num_row_groups
                starts = np.cumsum([0] + [pf.metadata.row_group(g).num_rows for g in range(groups)])
                jobs = [(path, g, int(starts[g]), names, kinds, lists, _worker_policy(on_error), batch_rows)
                        for g in range(groups)]
                for batches, skipped, messages, rows in _map_jobs(_parquet_group_job, jobs, engine, 1):
                    for batch in batches:
                        writer.write_many(batch)
                    errors.add(skipped, messages)
                    bar.update(rows)
            else:
                row0 = 0
                for batch in pf.iter_batches(batch_size=batch_rows, columns=names):
                    records = _parquet_batch(path, batch, row0, kinds, lists, errors)
                    if records is not None:
                        writer.write_many(records)
                    row0 += batch.num_rows
                    bar.update(batch.num_rows)
        ok = True
    finally:
        _finish(writer, summary, t0, ok)
    return summary


def _raw_parquet_to_tfrecord(path, pf, output, summary, errors, t0, batch_rows, progress, sharding, compression):
    """The ``record`` column (``tfrecord_to_parquet(raw=True)``) back into records, unchanged."""
    pa = _pyarrow()
    if "record" not in pf.schema_arrow.names:
        raise ValueError(f"{path!r} has no column 'record' (raw=True reads what tfrecord_to_parquet(raw=True) "
                         f"writes); columns: {pf.schema_arrow.names}")
    column_type = pf.schema_arrow.field("record").type
    if not (pa.types.is_binary(column_type) or pa.types.is_large_binary(column_type)):
        raise ValueError(f"{path!r}: column 'record' has type {column_type}, expected binary")
    writer = _writer(output, sharding, compression, pf.metadata.num_rows)
    ok = False
    try:
        with progress_bar(pf.metadata.num_rows, desc="parquet", unit="rec", enabled=progress) as bar:
            row0 = 0
            for batch in pf.iter_batches(batch_size=batch_rows, columns=["record"]):
                records = batch.column(0).to_pylist()
                for i in [i for i, r in enumerate(records) if r is None]:
                    errors(f"{path}: row {row0 + i}: 'record' is null")
                writer.write_many([r for r in records if r is not None])
                row0 += batch.num_rows
                bar.update(batch.num_rows)
        ok = True
    finally:
        _finish(writer, summary, t0, ok)
    return summary


def _feature_list_columns(schema, names, pa) -> frozenset:
    """The columns that hold feature lists: named in the schema metadata, or lists of variable-length lists."""
    from tfrx.arrow import FEATURE_LISTS_KEY

    named = set(json.loads((schema.metadata or {}).get(FEATURE_LISTS_KEY, b"[]")))
    out = set()
    for name in names:
        t = schema.field(name).type
        if name in named or ((pa.types.is_list(t) or pa.types.is_large_list(t))
                             and (pa.types.is_list(t.value_type) or pa.types.is_large_list(t.value_type))):
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
    cols = {}
    bad = np.zeros(batch.num_rows, bool)
    for name, kind in kinds.items():
        arr = batch.column(name)
        if name in lists:
            cols[name] = _parquet_steps(path, name, kind, arr.to_pylist(), row0, bad, errors, arr.type, pa)
            continue
        natural = _arrow_kind(arr.type, pa)
        is_list = pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or pa.types.is_fixed_size_list(arr.type)
        if not is_list and natural == kind and arr.null_count == 0 and kind != "bytes":
            cols[name] = arr.to_numpy(zero_copy_only=False)
            continue
        values = arr.to_pylist()
        if natural != kind:
            for i, v in enumerate(values):
                if v is None or bad[i]:
                    continue
                try:
                    values[i] = _arrow_cell(v, kind)
                except (ValueError, TypeError, UnicodeDecodeError):
                    bad[i] = True
                    errors(f"{path}: row {row0 + i}: column {name!r}: {str(v)[:60]!r} does not fit {kind}")
        cols[name] = values
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

        pairs = [({k: cell(cols[k][i]) for k in context_kinds if cols[k][i] is not None},
                  {k: cols[k][i] for k in lists if cols[k][i] is not None}) for i in range(rows)]
        return _encode_sequence_rows(pairs, context_kinds, list_kinds)
    from tfrx.codec import encode_sequence_examples

    return encode_sequence_examples({k: cols[k] for k in context_kinds}, {k: cols[k] for k in lists},
                                    kinds=kinds, as_batch=True)


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


# ================================================================== TFRecords to tables
_SAMPLE = 32  # records per file whose payload kind is checked in full before converting


def _read_batches(paths, compression, on_error, errors, progress, desc):
    """Each RecordBatch of ``paths``; damaged records follow ``on_error`` in the reader and are counted."""
    from tfrx.io.reader import RecordReader

    with RecordReader(paths, compression=compression, on_error=on_error) as reader, \
            progress_bar(None, desc=desc, enabled=progress) as bar:
        for batch in reader.iter_batches():
            yield batch
            bar.update(len(batch))
        # the reader has warned about these already (on_error="warn")
        errors.add(reader.stats.skipped_records, [str(e) for e in reader.stats.errors], warn=False)


def _where(batch, i: int) -> str:
    offset = "" if batch.file_offsets is None else f" at byte {int(batch.file_offsets[i])}"
    return f"{batch.path or '<stream>'}: record {batch.first_index + i}{offset}"


def _decoded_rows(paths, compression, on_error, errors, progress, desc, *, keep_empty: bool = False):
    """``(context, feature_lists)`` of each record; ``feature_lists`` is None for a record to write as an Example.

    The first records of each file are checked in full (:func:`tfrx.tools.sniff.payload_kind`);
    every record's top level is checked too, so a payload that is not an
    Example or SequenceExample (a TensorBoard event, another message, text)
    is a bad input naming its file, record and byte offset, never an empty row.
    A record is written as a SequenceExample when it is one (it has the
    ``feature_lists`` field, even empty), else as an Example.
    """
    from tfrx.codec import decode_sequence_example
    from tfrx.tools.sniff import OTHER, SEQUENCE_EXAMPLE, describe, payload_kind, record_kind, top_level_kind

    samples: dict = {}
    for batch in _read_batches(paths, compression, on_error, errors, progress, desc):
        checked = samples.get(batch.path)
        if checked is None:
            sample = [batch[i] for i in range(min(len(batch), _SAMPLE))]
            checked = samples[batch.path] = (payload_kind(sample) != OTHER, sample)
        clean, sample = checked
        for i in range(len(batch)):
            rec = batch[i]
            kind = top_level_kind(rec)
            if kind != OTHER and (clean or record_kind(rec) != OTHER):
                try:
                    context, lists = decode_sequence_example(rec, keep_empty=keep_empty)
                except TfrxError as e:
                    errors(f"{_where(batch, i)}: not a tf.train.Example or SequenceExample: {e}")
                    continue
                yield context, (lists if kind == SEQUENCE_EXAMPLE else None)
                continue
            errors(f"{_where(batch, i)}: not a tf.train.Example or SequenceExample (the records of this file look "
                   f"like {describe(sample)}); pass raw=True to convert each record's bytes as they are")


def _raw_records(paths, compression, on_error, errors, progress, desc):
    for batch in _read_batches(paths, compression, on_error, errors, progress, desc):
        yield from batch


def _done(summary: ConvertSummary, records: int, output: str, t0: float) -> ConvertSummary:
    """The summary of a conversion that wrote one file."""
    summary.records = records
    summary.paths = [output]
    summary.seconds = time.perf_counter() - t0
    return summary


def tfrecord_to_jsonl(
    paths,
    output: str | os.PathLike,
    *,
    compression="auto",
    bytes_as: str = "auto",
    raw: bool = False,
    on_error: str = "raise",
    progress: bool | None = None,
) -> ConvertSummary:
    """Writes the Examples of TFRecord files as JSON Lines, one object per record.

    Every feature is a list (int64 and float values as numbers, NaN as null;
    bytes as UTF-8 text, or ``{"base64": ...}`` when not valid UTF-8 or with
    ``bytes_as="base64"``); a Feature with no kind set is ``null``.
    A SequenceExample is ``{"context": {...}, "feature_lists": {name: [step,
    ...]}}`` with each step a list as above (``null`` for a step with no kind),
    as ``tfrx inspect --json`` prints it. :func:`jsonl_to_tfrecord` reads
    both back.

    Damaged records, and payloads that are not Examples or SequenceExamples
    (a TensorBoard event file, another message), are bad inputs
    (``on_error``); the error names the file, record and byte offset.
    ``raw=True`` writes every record, whatever it holds, as
    ``{"record": bytes}`` (bytes as above) instead.
    """
    from tfrx.cli._common import json_bytes, json_value

    summary, errors, t0 = _start(on_error)
    output = os.fspath(output)
    tmp = output + ".tmp"
    n = 0
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            if raw:
                for rec in _raw_records(paths, compression, on_error, errors, progress, "jsonl"):
                    out.write(json.dumps({"record": json_bytes(rec, bytes_as)}, ensure_ascii=False))
                    out.write("\n")
                    n += 1
            else:
                for context, lists in _decoded_rows(paths, compression, on_error, errors, progress, "jsonl",
                                                    keep_empty=True):
                    obj = {k: json_value(v, bytes_as) for k, v in context.items()}
                    if lists is not None:
                        obj = {"context": obj, "feature_lists": {
                            k: [json_value(step, bytes_as) for step in steps] for k, steps in lists.items()}}
                    out.write(json.dumps(obj, ensure_ascii=False))
                    out.write("\n")
                    n += 1
        os.replace(tmp, output)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return _done(summary, n, output, t0)


def _value_kind(v) -> str:
    if isinstance(v, np.ndarray):
        return "int64" if v.dtype == np.int64 else "float"
    return "bytes"


def _steps_kind(steps) -> str | None:
    """The kind of a feature list's steps (one kind for all), None when no step has a kind, "mixed" otherwise."""
    kinds = {_value_kind(s) for s in steps if s is not None}
    return kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else None)


def _step_list(steps) -> list:
    return [None if s is None else (s.tolist() if isinstance(s, np.ndarray) else s) for s in steps]


def tfrecord_to_parquet(
    paths,
    output: str | os.PathLike,
    *,
    compression="auto",
    batch_rows: int = 8192,
    raw: bool = False,
    on_error: str = "raise",
    progress: bool | None = None,
) -> ConvertSummary:
    """Writes the Examples of TFRecord files as a Parquet file (needs pyarrow).

    Each feature becomes a list column (``list<int64>``, ``list<float>``,
    ``list<binary>``), columns in name order; a feature missing from a record
    is null. A SequenceExample's feature lists become list-of-list columns
    (``list<list<int64>>``: the steps, each a list of values; a step with no
    kind is null) named in the schema metadata under
    ``tfrx.arrow.FEATURE_LISTS_KEY``, as :func:`tfrx.arrow.to_record_batch`
    writes them; :func:`parquet_to_tfrecord` and
    :func:`tfrx.arrow.to_sequence_examples` read them back.

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
    pa = _pyarrow()
    import pyarrow.parquet as pq

    from tfrx.arrow import FEATURE_LISTS_KEY

    summary, errors, t0 = _start(on_error)
    output = os.fspath(output)
    tmp = output + ".tmp"
    if raw:
        n = 0
        try:
            with pq.ParquetWriter(tmp, pa.schema([("record", pa.binary())])) as writer:
                chunk: list = []
                for rec in _raw_records(paths, compression, on_error, errors, progress, "parquet"):
                    chunk.append(rec)
                    if len(chunk) >= batch_rows:
                        writer.write_table(pa.table({"record": pa.array(chunk, pa.binary())}))
                        n += len(chunk)
                        chunk = []
                writer.write_table(pa.table({"record": pa.array(chunk, pa.binary())}))
                n += len(chunk)
            os.replace(tmp, output)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        return _done(summary, n, output, t0)

    leaf = {"int64": pa.int64(), "float": pa.float32(), "bytes": pa.binary()}
    # name -> kind of a context feature; name -> kind (None while no step has one) of a feature list
    kinds: dict[str, str] = {}
    list_kinds: dict[str, str | None] = {}
    # Parts written under one schema each: the first is the output's temporary
    # file; a feature first seen later starts a new part with the grown schema.
    parts: list[str] = []
    writer = None
    written = None  # the schema of the current part
    n = 0

    def column_type(name):
        if name in list_kinds:
            kind = list_kinds[name]
            return pa.list_(pa.list_(pa.null() if kind is None else leaf[kind]))
        return pa.list_(leaf[kinds[name]])

    def schema():
        names = sorted([*kinds, *list_kinds])
        meta = {FEATURE_LISTS_KEY: json.dumps(sorted(list_kinds)).encode()} if list_kinds else None
        return pa.schema([(k, column_type(k)) for k in names], metadata=meta)

    def flush(rows):
        nonlocal writer, written
        if not rows:
            return
        current = schema()
        if writer is not None and not current.equals(written, check_metadata=True):
            writer.close()
            writer = None
        if writer is None:
            parts.append(tmp if not parts else f"{output}.part{len(parts)}.tmp")
            writer = pq.ParquetWriter(parts[-1], current)
            written = current
        arrays = []
        for f in current:
            col = [r.get(f.name) for r in rows]
            if f.name in list_kinds:
                values = [None if v is None else _step_list(v) for v in col]
            else:
                values = [None if v is None else (v.tolist() if isinstance(v, np.ndarray) else v) for v in col]
            arrays.append(pa.array(values, type=f.type))
        writer.write_table(pa.Table.from_arrays(arrays, schema=current))

    def merge():
        """Rewrites the parts as one file under the final schema, null columns where a part lacks one."""
        final = schema()
        merged = output + ".merge.tmp"
        parts.append(merged)
        with pq.ParquetWriter(merged, final) as out:
            for part in parts[:-1]:
                with pq.ParquetFile(part) as source:
                    batches = list(source.iter_batches(batch_size=batch_rows))
                for batch in batches:
                    columns = [
                        batch.column(batch.schema.get_field_index(f.name)).cast(f.type)
                        if f.name in batch.schema.names else pa.nulls(batch.num_rows, f.type)
                        for f in final
                    ]
                    out.write_table(pa.Table.from_arrays(columns, schema=final))
        os.replace(merged, tmp)
        parts.pop()

    def conflict(context, lists) -> str | None:
        for k, v in context.items():
            if k in list_kinds:
                return f"feature {k!r} is a context feature, earlier records have a feature list of that name"
            if k in kinds and _value_kind(v) != kinds[k]:
                return f"feature {k!r} is {_value_kind(v)}, earlier records have {kinds[k]}"
        for k, steps in (lists or {}).items():
            if k in context:
                return (f"{k!r} is both a context feature and a feature list; one Parquet column cannot hold "
                        "both (convert to JSON Lines instead)")
            if k in kinds:
                return f"feature list {k!r}: earlier records have a context feature of that name"
            kind = _steps_kind(steps)
            if kind == "mixed":
                return f"feature list {k!r} has steps of different kinds"
            if kind is not None and list_kinds.get(k) not in (None, kind):
                return f"feature list {k!r} is {kind}, earlier records have {list_kinds[k]}"
        return None

    try:
        rows = []
        for context, lists in _decoded_rows(paths, compression, on_error, errors, progress, "parquet"):
            bad = conflict(context, lists)
            if bad:
                errors(f"record {n + summary.skipped}: {bad}")
                continue
            for k, v in context.items():
                kinds.setdefault(k, _value_kind(v))
            for k, steps in (lists or {}).items():
                if list_kinds.get(k) is None:
                    list_kinds[k] = _steps_kind(steps)
            rows.append({**context, **(lists or {})})
            n += 1
            if len(rows) >= batch_rows:
                flush(rows)
                rows = []
        flush(rows)
        if writer is None:
            pq.write_table(pa.table({}), tmp)
        else:
            writer.close()
            writer = None
            if len(parts) > 1 or not schema().equals(written, check_metadata=True):
                merge()
        os.replace(tmp, output)
    except BaseException:
        if writer is not None:
            try:
                writer.close()
            except Exception:
                pass
        for path in [tmp, *parts]:
            if os.path.exists(path):
                os.remove(path)
        raise
    finally:
        for path in parts[1:]:
            if os.path.exists(path):
                os.remove(path)
    return _done(summary, n, output, t0)
