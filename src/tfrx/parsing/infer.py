"""Schema inference: look at some records, propose the features dict to parse them.

Every feature whose records all hold the same number of values becomes a
``FixedLenFeature`` (``shape=[]`` for one value, ``[n]`` otherwise); the
others become ``VarLenFeature``. The dtype comes from the Feature's kind.
SequenceExamples give ``(context, sequence)`` specs, feature lists becoming
``FixedLenSequenceFeature`` when every step holds the same count, else
``VarLenFeature``.

The records are walked by a small wire-format reader here (inference looks at
a few thousand records at most); only reading files needs the record reader.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import islice
from typing import Any

from tfrx import dtypes as _dt
from tfrx.errors import DecodeError, SpecError
from tfrx.parsing.specs import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature

__all__ = ["infer_features"]

_KIND_DTYPES = {1: _dt.string, 2: _dt.float32, 3: _dt.int64}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise DecodeError("truncated varint", offset=pos)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field, wire_type, value) of a message; value is bytes for wire type 2, else a position."""
    pos, n = 0, len(buf)
    while pos < n:
        key, pos = _varint(buf, pos)
        field, wt = key >> 3, key & 7
        if field == 0:
            raise DecodeError("field number 0", offset=pos)
        if wt == 0:
            v, pos = _varint(buf, pos)
            yield field, wt, v
        elif wt == 1:
            pos += 8
            yield field, wt, None
        elif wt == 5:
            pos += 4
            yield field, wt, None
        elif wt == 2:
            ln, pos = _varint(buf, pos)
            if pos + ln > n:
                raise DecodeError("length past the end of the message", offset=pos)
            yield field, wt, buf[pos : pos + ln]
            pos += ln
        else:
            raise DecodeError(f"unsupported wire type {wt}", offset=pos)
        if pos > n:
            raise DecodeError("field past the end of the message", offset=n)


def _feature_kind_count(buf: bytes) -> tuple[int, int]:
    """(kind, number of values) of a serialized Feature; kind 0 when none is set."""
    kind = 0
    lists: list = []
    for field, wt, v in _fields(buf):
        if wt == 2 and field in (1, 2, 3):
            if field != kind:
                kind, lists = field, []
            lists.append(v)
    count = 0
    for lst in lists:
        for f, wt, v in _fields(lst):
            if f != 1:
                continue
            if kind == 3:
                count += sum(1 for b in v if b < 0x80) if wt == 2 else 1
            elif kind == 2:
                count += len(v) // 4 if wt == 2 else 1
            else:
                count += 1
    return kind, count


def _map_entries(buf: bytes) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for field, wt, entry in _fields(buf):
        if field != 1 or wt != 2:
            continue
        key, value = b"", b""
        for f, w, v in _fields(entry):
            if w == 2 and f == 1:
                key = v
            elif w == 2 and f == 2:
                value = v
        out[key] = value
    return out


def _features_of(buf: bytes) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for field, wt, v in _fields(buf):
        if field == 1 and wt == 2:
            out.update(_map_entries(v))
    return out


def _looks_like_sequence(records: list[bytes]) -> bool:
    for r in records:
        try:
            if any(f == 2 and wt == 2 for f, wt, _ in _fields(r)):
                return True
        except DecodeError:
            return False
    return False


class _Stats:
    """Kinds and value counts seen for one key."""

    def __init__(self) -> None:
        self.kinds: set[int] = set()
        self.counts: set[int] = set()
        self.records = 0

    def add(self, kind: int, count: int) -> None:
        if kind:
            self.kinds.add(kind)
        self.counts.add(count)
        self.records += 1

    def dtype(self, key: str) -> Any:
        if len(self.kinds) > 1:
            names = sorted(_KIND_DTYPES[k].name for k in self.kinds)
            raise SpecError(f"feature {key!r} holds values of several kinds ({', '.join(names)}); no spec fits")
        return _KIND_DTYPES[next(iter(self.kinds))] if self.kinds else None


def _decode_key(k: bytes) -> str:
    return k.decode("utf-8", errors="surrogateescape")


def _infer_example(records: list[bytes]) -> dict:
    stats: dict[bytes, _Stats] = {}
    for r in records:
        for key, value in _features_of(r).items():
            kind, count = _feature_kind_count(value)
            if kind == 0:
                continue  # an empty Feature counts as absent in an Example
            stats.setdefault(key, _Stats()).add(kind, count)
    features: dict[str, Any] = {}
    for key in sorted(stats):
        st, name = stats[key], _decode_key(key)
        dtype = st.dtype(name)
        if st.records == len(records) and len(st.counts) == 1:
            n = next(iter(st.counts))
            features[name] = FixedLenFeature([] if n == 1 else [n], dtype)
        else:
            features[name] = VarLenFeature(dtype)
    return features


def _infer_sequence(records: list[bytes]) -> tuple[dict, dict]:
    ctx: dict[bytes, _Stats] = {}
    lists: dict[bytes, _Stats] = {}
    present: dict[bytes, int] = {}
    for r in records:
        context: dict[bytes, bytes] = {}
        flists: dict[bytes, bytes] = {}
        for field, wt, v in _fields(r):
            if wt == 2 and field == 1:
                context.update(_map_entries(v))
            elif wt == 2 and field == 2:
                flists.update(_map_entries(v))
        for key, value in context.items():
            kind, count = _feature_kind_count(value)
            ctx.setdefault(key, _Stats()).add(kind, count)
        for key, value in flists.items():
            st = lists.setdefault(key, _Stats())
            present[key] = present.get(key, 0) + 1
            for f, wt, step in _fields(value):
                if f == 1 and wt == 2:
                    st.add(*_feature_kind_count(step))
    context_features: dict[str, Any] = {}
    for key in sorted(ctx):
        st, name = ctx[key], _decode_key(key)
        dtype = st.dtype(name)
        if dtype is None:
            continue  # only empty Features: nothing to say about its type
        # In a SequenceExample context an empty Feature is present with zero
        # values, so a key is fixed-length only where every record agrees.
        if st.records == len(records) and len(st.counts) == 1:
            n = next(iter(st.counts))
            context_features[name] = FixedLenFeature([] if n == 1 else [n], dtype)
        else:
            context_features[name] = VarLenFeature(dtype)
    sequence_features: dict[str, Any] = {}
    for key in sorted(lists):
        st, name = lists[key], _decode_key(key)
        dtype = st.dtype(name)
        if dtype is None:
            continue
        if len(st.counts) == 1 and next(iter(st.counts)) > 0:
            n = next(iter(st.counts))
            sequence_features[name] = FixedLenSequenceFeature(
                [] if n == 1 else [n], dtype, allow_missing=present[key] < len(records)
            )
        else:
            sequence_features[name] = VarLenFeature(dtype)
    return context_features, sequence_features


def _expand_paths(source: Any, storage_options: dict | None = None) -> list:
    from tfrx.io.paths import expand_paths

    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    return expand_paths(items, storage_options=storage_options)  # globs on object stores too


def _read_file_records(paths: list, limit: float) -> list[bytes]:
    from tfrx import read_records

    out: list[bytes] = []
    for path in paths:
        records = read_records(path)
        try:
            for rec in records:
                if len(out) >= limit:
                    return out
                out.append(bytes(rec))
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()
    return out


def _is_path_source(source: Any) -> bool:
    if isinstance(source, (str, os.PathLike)):
        return True
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source):
        return True
    return False


def infer_features(
    source: Any, max_records: int = 1000, *, kind: str = "auto", storage_options: dict | None = None
) -> Any:
    """Proposes the features dict that parses the records of ``source``.

    ``source`` is a file path, a glob, a list of those, or an iterable of
    serialized records (``bytes`` or a :class:`tfrx.RecordBatch`). At most
    ``max_records`` records are read. ``kind`` is ``"example"``,
    ``"sequence"`` or ``"auto"`` (SequenceExamples are recognised by their
    feature_lists field). Returns a dict for Examples and a
    ``(context_features, sequence_features)`` pair for SequenceExamples.
    ``storage_options`` go to fsspec for URLs.
    """
    if kind not in ("auto", "example", "sequence"):
        raise SpecError(f"kind must be 'auto', 'example' or 'sequence', got {kind!r}")
    if max_records is not None and max_records <= 0:
        raise SpecError(f"max_records must be positive, got {max_records}")
    limit = max_records if max_records is not None else float("inf")
    if _is_path_source(source):
        records = _read_file_records(_expand_paths(source, storage_options), limit)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        records = [bytes(source)]
    else:
        records = [bytes(r) for r in islice(iter(source), max_records)]
    if not records:
        raise SpecError("no records to infer features from")
    if kind == "auto":
        kind = "sequence" if _looks_like_sequence(records) else "example"
    try:
        if kind == "sequence":
            return _infer_sequence(records)
        return _infer_example(records)
    except (DecodeError, IndexError) as e:
        raise DecodeError(f"records are not serialized {'SequenceExample' if kind == 'sequence' else 'Example'}s: {e}") from None
