"""Schema inference: look at some records, propose the features dict to parse them.

Every feature whose records all hold the same number of values becomes a
``FixedLenFeature`` (``shape=[]`` for one value, ``[n]`` otherwise); the
others become ``VarLenFeature``. The dtype comes from the Feature's kind.
SequenceExamples give ``(context, sequence)`` specs, feature lists becoming
``FixedLenSequenceFeature`` when every step holds the same count, else
``VarLenFeature``.

Records are decoded by the native Example decoder (``tfrx.decode_example``),
the one that reads every Example in tfrx; whether a record sets feature_lists
is read from its top-level fields (``_native.message_fields``).
"""

from __future__ import annotations

import os
from itertools import islice
from typing import Any

import numpy as np

from tfrx import _native
from tfrx import dtypes as _dt
from tfrx.errors import DecodeError, SpecError
from tfrx.parsing._specs import FixedLenFeature, FixedLenSequenceFeature, SequenceFeatures, VarLenFeature

__all__ = ["infer_features"]

_KIND_DTYPES = {1: _dt.string, 2: _dt.float32, 3: _dt.int64}


def _kind_count(value: Any) -> tuple[int, int]:
    """(kind, number of values) of a decoded Feature: bytes_list 1, float_list 2, int64_list 3, 0 for none set."""
    if value is None:
        return 0, 0
    if isinstance(value, np.ndarray):
        return (3 if value.dtype == np.int64 else 2), len(value)
    return 1, len(value)


def _has_feature_lists(record: bytes) -> bool:
    """Whether ``record`` sets SequenceExample's feature_lists (field 2, even to an empty message)."""
    fields = _native.message_fields(record)
    return fields.complete and bool(np.any((fields.numbers == 2) & (fields.wire_types == 2)))


def _looks_like_sequence(records: list[bytes]) -> bool:
    for r in records:
        try:
            if _native.decode_sequence_example(r).feature_lists:
                return True
        except DecodeError:
            return False
    return any(_has_feature_lists(r) for r in records)


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


def _infer_example(records: list[bytes]) -> dict:
    stats: dict[str, _Stats] = {}
    for r in records:
        for key, value in _native.decode_example(r, keep_empty=True).items():
            kind, count = _kind_count(value)
            if kind == 0:
                continue  # an empty Feature counts as absent in an Example
            stats.setdefault(key, _Stats()).add(kind, count)
    features: dict[str, Any] = {}
    for name in sorted(stats):
        st = stats[name]
        dtype = st.dtype(name)
        if st.records == len(records) and len(st.counts) == 1:
            n = next(iter(st.counts))
            features[name] = FixedLenFeature([] if n == 1 else [n], dtype)
        else:
            features[name] = VarLenFeature(dtype)
    return features


def _infer_sequence(records: list[bytes]) -> SequenceFeatures:
    ctx: dict[str, _Stats] = {}
    lists: dict[str, _Stats] = {}
    present: dict[str, int] = {}
    for r in records:
        decoded = _native.decode_sequence_example(r, keep_empty=True)
        context, flists = decoded.context, decoded.feature_lists
        for key, value in context.items():
            ctx.setdefault(key, _Stats()).add(*_kind_count(value))
        for key, steps in flists.items():
            st = lists.setdefault(key, _Stats())
            present[key] = present.get(key, 0) + 1
            for step in steps:
                st.add(*_kind_count(step))
    context_features: dict[str, Any] = {}
    for name in sorted(ctx):
        st = ctx[name]
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
    for name in sorted(lists):
        st = lists[name]
        dtype = st.dtype(name)
        if dtype is None:
            continue
        if len(st.counts) == 1 and next(iter(st.counts)) > 0:
            n = next(iter(st.counts))
            sequence_features[name] = FixedLenSequenceFeature(
                [] if n == 1 else [n], dtype, allow_missing=present[name] < len(records)
            )
        else:
            sequence_features[name] = VarLenFeature(dtype)
    return SequenceFeatures(context_features, sequence_features)


def _read_file_records(source: Any, limit: float, storage_options: dict | None) -> list[bytes]:
    from tfrx.io._reader import RecordReader

    out: list[bytes] = []
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    with RecordReader(items, storage_options=storage_options) as reader:
        for rec in reader:
            if len(out) >= limit:
                break
            out.append(bytes(rec))
    return out


def _is_path_source(source: Any) -> bool:
    if isinstance(source, (str, os.PathLike)):
        return True
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source):
        return True
    return False


def infer_features(
    source: Any, max_records: int | None = 1000, *, kind: str = "auto", storage_options: dict | None = None
) -> Any:
    """Proposes the features dict that parses the records of ``source``.

    ``source`` is a file path, a glob, a list of those, or an iterable of
    serialized records (``bytes`` or a :class:`tfrx.RecordBatch`). At most
    ``max_records`` records are read. ``kind`` is ``"example"``,
    ``"sequence"`` or ``"auto"`` (SequenceExamples are recognised by their
    feature_lists field). Returns a dict for Examples and a
    :class:`~tfrx.parsing._specs.SequenceFeatures` ``(context, sequence)`` pair for SequenceExamples.
    ``storage_options`` go to fsspec for URLs.
    """
    if kind not in ("auto", "example", "sequence"):
        raise SpecError(f"kind must be 'auto', 'example' or 'sequence', got {kind!r}")
    if max_records is not None and max_records <= 0:
        raise SpecError(f"max_records must be positive, got {max_records}")
    limit = max_records if max_records is not None else float("inf")
    if _is_path_source(source):
        records = _read_file_records(source, limit, storage_options)
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
        raise DecodeError(
            f"records are not serialized {'SequenceExample' if kind == 'sequence' else 'Example'}s: {e}"
        ) from None
