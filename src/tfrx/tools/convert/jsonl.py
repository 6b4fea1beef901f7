"""JSON Lines to TFRecord shards and TFRecords back to JSON Lines."""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Mapping

import numpy as np

from tfrx.tools.convert._common import ConvertSummary, _committing, _sharding, _start, _writer
from tfrx.tools.convert._records import _decoded_rows, _done, _raw_records
from tfrx.tools.convert._values import (
    _infer_kind,
    _json_cell,
    _json_kind,
    _normalize_spec,
    _sequence_row,
    _write_mixed_rows,
)
from tfrx._progress import progress_bar
from tfrx.options import ProgressOption


def _raw_jsonl_to_tfrecord(path, output, summary, errors, t0, chunk_rows, progress, sharding, compression):
    """``{"record": bytes}`` lines (``tfrecord_to_jsonl(raw=True)``) back into records, unchanged."""
    writer = _writer(output, sharding, compression)
    with _committing(writer, summary, t0):
        with (
            open(path, "rb") as f,
            progress_bar(os.path.getsize(path), desc="jsonl", unit="B", enabled=progress) as bar,
        ):
            chunk: list[bytes] = []
            for line, text in enumerate(f, 1):
                bar.update(len(text))
                if not text.strip():
                    continue
                try:
                    value = json.loads(text)["record"]
                    record = (
                        value.encode("utf-8")
                        if isinstance(value, str)
                        else base64.b64decode(value["base64"], validate=True)
                    )
                except (ValueError, KeyError, TypeError) as e:
                    errors(f'{path}: line {line}: expected {{"record": text or {{"base64": ...}}}} ({e!r})')
                    continue
                chunk.append(record)
                if len(chunk) >= chunk_rows:
                    writer.write_many(chunk)
                    chunk = []
            writer.write_many(chunk)
    return summary


def jsonl_to_tfrecord(  # noqa: PLR0913  the converters' shared options (sharding, compression, on_error)
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
    progress: ProgressOption = None,
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
        return _raw_jsonl_to_tfrecord(
            path,
            output,
            summary,
            errors,
            t0,
            chunk_rows,
            progress,
            _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming),
            compression,
        )
    given = _normalize_spec(spec or {})
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = []
        for row_bytes in f:
            head.append(row_bytes)
            if len(head) >= infer_rows:
                break
        kinds, list_kinds, summary.spec = _inferred_kinds(path, head, given)
        writer = _writer(output, _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression)
        with _committing(writer, summary, t0):
            with progress_bar(size, desc="jsonl", unit="B", enabled=progress) as bar:
                lines = _JsonlLines(path, kinds, list_kinds, errors)
                done = 0
                for row_bytes in head:
                    lines.consume(row_bytes)
                for row_bytes in f:
                    lines.consume(row_bytes)
                    if len(lines.rows) >= chunk_rows:
                        _write_mixed_rows(writer, lines.rows, kinds, list_kinds)
                        lines.rows = []
                        pos = f.tell()
                        bar.update(pos - done)
                        done = pos
                _write_mixed_rows(writer, lines.rows, kinds, list_kinds)
                bar.update(size - done)
    return summary


def _inferred_kinds(path: str, head: list[bytes], given: dict) -> tuple[dict, dict, dict]:
    """The kinds of context features and of feature lists (``given``'s, else inferred from the lines ``head``),
    and the spec the summary reports."""
    kinds = dict(given)
    list_kinds = dict(given)
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
    reported: dict = {k: v for k, v in kinds.items() if k in seen or k not in seen_lists}
    if seen_lists:
        reported = {"context": reported, "feature_lists": {k: list_kinds[k] for k in seen_lists}}
    return kinds, list_kinds, reported


class _JsonlLines:
    """Lines of a JSON Lines file as rows for :func:`_write_mixed_rows`: an Example's cells, or a
    SequenceExample's ``(context, feature_lists)``; a bad line is reported to ``errors`` and left out."""

    def __init__(self, path: str, kinds: dict, list_kinds: dict, errors) -> None:
        self.path = path
        self.kinds = kinds
        self.list_kinds = list_kinds
        self.errors = errors
        self.rows: list = []
        self.line = 0

    def cells(self, values: dict, known: dict, what: str):
        out = {}
        for k, v in values.items():
            kind = known.get(k)
            if kind is None:
                self.errors(f"{self.path}: line {self.line}: {what} {k!r} is not in the spec")
                return None
            try:
                if what == "feature list":
                    if not isinstance(v, list):
                        raise ValueError
                    out[k] = [
                        None if step is None else _json_cell(step if isinstance(step, list) else [step], kind)
                        for step in v
                    ]
                else:
                    out[k] = _json_cell(v, kind)
            except (ValueError, TypeError):
                self.errors(f"{self.path}: line {self.line}: {what} {k!r}: {json.dumps(v)[:80]} does not fit {kind}")
                return None
        return out

    def consume(self, row_bytes: bytes) -> None:
        """The next line."""
        self.line += 1
        if not row_bytes.strip():
            return
        try:
            obj = json.loads(row_bytes)
        except ValueError as e:
            self.errors(f"{self.path}: line {self.line}: not JSON: {e}")
            return
        if not isinstance(obj, dict):
            self.errors(f"{self.path}: line {self.line}: expected a JSON object, got {type(obj).__name__}")
            return
        if _sequence_row(obj):
            context = self.cells(obj["context"], self.kinds, "key")
            lists = None if context is None else self.cells(obj["feature_lists"], self.list_kinds, "feature list")
            if lists is not None:
                self.rows.append(({k: v for k, v in context.items() if v is not None}, lists))
            return
        out = self.cells(obj, self.kinds, "key")
        if out is not None:
            self.rows.append(out)


def json_value(value, bytes_as: str = "auto"):
    """A decoded feature value as JSON: numbers as lists, bytes as text (or {"base64": ...})."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            # the shortest text that reads back as the same float32, as TensorFlow prints it
            return [None if v != v else v for v in map(float, value.astype(str))]
        return value.tolist()
    return [json_bytes(b, bytes_as) for b in value]


def json_bytes(b: bytes, bytes_as: str = "auto"):
    if bytes_as == "base64":
        return {"base64": base64.b64encode(b).decode("ascii")}
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and (text.isprintable() or not _CONTROL.search(text)):
        return text
    return {"base64": base64.b64encode(b).decode("ascii")}


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def tfrecord_to_jsonl(
    paths,
    output: str | os.PathLike,
    *,
    compression="auto",
    bytes_as: str = "auto",
    raw: bool = False,
    on_error: str = "raise",
    progress: ProgressOption = None,
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
                for context, lists in _decoded_rows(
                    paths, compression, on_error, errors, progress, "jsonl", keep_empty=True
                ):
                    obj = {k: json_value(v, bytes_as) for k, v in context.items()}
                    if lists is not None:
                        obj = {
                            "context": obj,
                            "feature_lists": {
                                k: [json_value(step, bytes_as) for step in steps] for k, steps in lists.items()
                            },
                        }
                    out.write(json.dumps(obj, ensure_ascii=False))
                    out.write("\n")
                    n += 1
        os.replace(tmp, output)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return _done(summary, n, output, t0)
