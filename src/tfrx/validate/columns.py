"""Batches of Example / SequenceExample records as per-feature columns for the statistics.

A :class:`Column` is one feature over a batch: which records hold it
(``present``: the Feature is there and has a kind; an empty list counts,
as in TFDV), how many values (or, for a feature list, steps) each record
holds, the flat values, and for feature lists the values of each step.

The values come from tfrx's spec-driven batch parser (every feature parsed as
a ``RaggedFeature`` of the kind the records use); which keys the records
hold, and whether a record whose list is empty holds the feature at all,
come from the native ``feature_presence`` walk (the schema-less decoder's
view of each record: keys, kinds and value counts, no values). A batch the parser cannot take (a
feature that changes kind, a feature not in the spec) is read record by
record with the decoder instead, so every feature of every record is counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tfrx import _native
from tfrx import dtypes as _dt

__all__ = [
    "Column",
    "Batch",
    "KINDS",
    "batch_columns",
    "decoded_columns",
    "decode_records",
    "feature_presence",
    "learn_kinds_from_presence",
    "record_value_counts",
]

KINDS = {1: "STRING", 2: "FLOAT", 3: "INT"}
_DTYPES = {"STRING": _dt.string, "FLOAT": _dt.float32, "INT": _dt.int64}


@dataclass
class Column:
    """One feature over a batch of ``n`` records."""

    kind: str | None  # "INT", "FLOAT", "STRING", or None for a key only ever seen without a kind
    present: np.ndarray  # bool [n]
    counts: np.ndarray  # int64 [n]: values per record; for a feature list, steps per record
    values: np.ndarray  # flat values: float64 / int64 numbers, or an object array of bytes
    step_counts: np.ndarray | None = None  # feature lists: int64 values per step, over all steps

    def take(self, rows: np.ndarray) -> Column:
        """The column for the records where ``rows`` (bool [n]) is set."""
        outer = np.repeat(rows, self.counts)
        if self.step_counts is None:
            return Column(self.kind, self.present[rows], self.counts[rows], self.values[outer])
        inner = np.repeat(outer, self.step_counts)
        return Column(self.kind, self.present[rows], self.counts[rows], self.values[inner], self.step_counts[outer])

    @property
    def value_parents(self) -> np.ndarray:
        """For each flat value, the record it belongs to."""
        n = self.counts.size
        per_record = self.counts if self.step_counts is None else record_value_counts(self)
        return np.repeat(np.arange(n), per_record)


def record_value_counts(col: Column) -> np.ndarray:
    """Values per record of a feature list column, over all its steps."""
    assert col.step_counts is not None
    ends = np.cumsum(col.counts)
    cum = np.concatenate([[0], np.cumsum(col.step_counts)])
    return cum[ends] - cum[ends - col.counts]


@dataclass
class Batch:
    """``n`` records as columns: ``features`` (Example / context) and ``feature_lists``."""

    n: int
    features: dict[str, Column]
    feature_lists: dict[str, Column]

    def take(self, rows: np.ndarray) -> Batch:
        return Batch(
            int(rows.sum()),
            {k: c.take(rows) for k, c in self.features.items()},
            {k: c.take(rows) for k, c in self.feature_lists.items()},
        )


def decode_records(records: Sequence, sequence: bool) -> list[tuple[dict, dict]]:
    """Each record's (features, feature_lists) from the schema-less decoder (empty Features kept as None)."""
    if sequence:
        return [_decoded_sequence(r) for r in records]
    return [(_native.decode_example(r, keep_empty=True), {}) for r in records]


def _decoded_sequence(record) -> tuple[dict, dict]:
    decoded = _native.decode_sequence_example(record, keep_empty=True)
    return decoded.context, decoded.feature_lists


def learn_kinds(decoded: list, kinds: dict, list_kinds: dict) -> None:
    """Adds the keys of decoded records, with their kinds ("INT", "FLOAT", "STRING"; None while only seen
    without a kind), to ``kinds`` / ``list_kinds``; a key seen with two kinds keeps the first (the batch then
    goes to the decoder, which reports the conflict)."""
    keys: set = set()
    list_keys: set = set()
    for d, fl in decoded:
        keys.update(d)
        list_keys.update(fl)
    for k in keys:
        if kinds.get(k) is None:
            kinds[k] = next((_kind_of(d[k]) for d, _ in decoded if d.get(k) is not None), None)
    for k in list_keys:
        if list_kinds.get(k) is None:
            steps = (s for _, fl in decoded for s in fl.get(k, ()) if s is not None)
            list_kinds[k] = next((_kind_of(s) for s in steps), None)


def feature_presence(records: Sequence, sequence: bool):
    """Which features each record holds, with their kinds and value counts (for a feature list: steps), read
    by the native walk without decoding any value: a ``FeaturePresence`` whose ``features`` and
    ``feature_lists`` are ``PresenceEntries`` (one entry per record and key, in record order, as the decoder
    sees the record: a later entry with the same key replaces an earlier one). ``records``: a
    :class:`~tfrx.io.RecordBatch` or a sequence of bytes. A record the decoder refuses raises
    :class:`~tfrx.errors.DecodeError` with its ``record_index``."""
    from tfrx.io import RecordBatch

    if isinstance(records, RecordBatch):
        batch = records
    else:
        batch = RecordBatch.from_records([r if isinstance(r, bytes) else bytes(r) for r in records])
    return _native.feature_presence(batch.data, batch.starts, batch.lengths, sequence=sequence)


def _first_kinds(entries) -> dict:
    """Each key of ``entries`` (``PresenceEntries``) -> the kind of its first entry that has one, or None."""
    out: dict = dict.fromkeys(entries.keys)
    states = entries.states
    with_kind = np.flatnonzero(states >= 2)
    first = np.full(len(entries.keys), states.size, np.int64)
    np.minimum.at(first, entries.key_ids[with_kind], with_kind)
    for i in np.flatnonzero(first < states.size).tolist():
        out[entries.keys[i]] = KINDS[int(states[first[i]]) - 1]
    return out


def learn_kinds_from_presence(presence, kinds: dict, list_kinds: dict) -> None:
    """:func:`learn_kinds` from a :func:`feature_presence` answer instead of decoded records (the same kinds:
    each key's first kind in record order)."""
    for target, entries in ((kinds, presence.features), (list_kinds, presence.feature_lists)):
        for k, kind in _first_kinds(entries).items():
            if target.get(k) is None:
                target[k] = kind


def _presence_fits(entries, kinds: dict) -> bool:
    """Whether the spec ``kinds`` names every key of ``entries`` and every kind the key holds is its kind."""
    for key, mask in zip(entries.keys, entries.kind_masks.tolist()):
        if key not in kinds:
            return False
        kind = kinds[key]
        if mask and (kind is None or mask != 1 << _KIND_CODES[kind]):
            return False
    return True


_KIND_CODES = {v: k for k, v in KINDS.items()}


def batch_columns(
    records: Sequence,
    kinds: dict,
    list_kinds: dict | None,
    sequence: bool,
    *,
    exact: bool = True,
    decoded: list | None = None,
    presence=None,
) -> Batch:
    """The columns of ``records`` (bytes) for the features in ``kinds`` / ``list_kinds`` (key -> "INT",
    "FLOAT" or "STRING"), read by the batch parser.

    ``exact``: first read every record's keys with :func:`feature_presence`
    (or take ``decoded``, from :func:`decode_records`), so that a feature the spec
    does not name is still counted (the batch is then read by the decoder).
    Without it only records that lack a known feature are decoded. The
    decoder also reads batches the parser refuses. ``presence``: the
    records' :func:`feature_presence` (read when ``exact`` and neither it nor
    ``decoded`` is given)."""
    from tfrx.errors import TfrxError

    list_kinds = list_kinds or {}
    if exact and decoded is None and presence is None:
        presence = feature_presence(records, sequence)
    if presence is not None:
        if not (_presence_fits(presence.features, kinds) and _presence_fits(presence.feature_lists, list_kinds)):
            return decoded_columns(records, sequence)
    elif decoded is not None:
        keys: set = set()
        list_keys: set = set()
        for d, fl in decoded:
            keys.update(d)
            list_keys.update(fl)
        if not keys <= kinds.keys() or not list_keys <= list_kinds.keys():
            return decoded_columns(records, sequence, decoded)
    try:
        return _parsed(records, kinds, list_kinds, sequence, decoded, presence)
    except (TfrxError, ValueError):
        return decoded_columns(records, sequence, decoded)


def _parsed(
    records: Sequence, kinds: dict, list_kinds: dict, sequence: bool, decoded: list | None, presence=None
) -> Batch:
    from tfrx.parsing import ExampleParser, RaggedFeature, SequenceExampleParser

    n = len(records)
    ctx_spec = {k: RaggedFeature(dtype=_DTYPES[v]) for k, v in kinds.items() if v is not None}
    seq_spec = {k: RaggedFeature(dtype=_DTYPES[v]) for k, v in list_kinds.items() if v is not None}
    if sequence:
        if not ctx_spec and not seq_spec:
            return decoded_columns(records, sequence, decoded)
        ctx, seq, _ = SequenceExampleParser(ctx_spec, seq_spec).parse(records)
    else:
        if not ctx_spec:
            return decoded_columns(records, sequence, decoded)
        ctx, seq = ExampleParser(ctx_spec).parse(records), {}
    features = {}
    for k, rt in ctx.items():
        counts = np.diff(rt.row_splits).astype(np.int64)
        features[k] = Column(kinds[k], counts > 0, counts, _values(rt.flat_values))
    lists = {}
    for k, rt in seq.items():
        outer, inner = rt.nested_row_splits
        counts = np.diff(outer).astype(np.int64)
        lists[k] = Column(list_kinds[k], counts > 0, counts, _values(rt.flat_values), np.diff(inner).astype(np.int64))
    # Presence of records with no values (missing, or present and empty), and keys the spec did not name.
    unsure = np.zeros(n, bool)
    for c in list(features.values()) + list(lists.values()):
        unsure |= c.counts == 0
    if presence is not None:
        _mark_present(features, presence.features, unsure, 2)
        _mark_present(lists, presence.feature_lists, unsure, 1)
        return Batch(n, features, lists)
    _mark_present_by_decoding(records, sequence, decoded, features, lists, unsure)
    return Batch(n, features, lists)


def _mark_present_by_decoding(records, sequence: bool, decoded, features: dict, lists: dict, unsure) -> None:
    """``present`` of the records without values for some column, read from each decoded record (the path
    without a presence walk); ValueError when such a record holds a key no column reads."""
    for i in np.flatnonzero(unsure).tolist():
        if decoded is not None:
            d, fl = decoded[i]
        elif sequence:
            d, fl = _decoded_sequence(records[i])
        else:
            d, fl = _native.decode_example(records[i], keep_empty=True), {}
        for k, c in features.items():
            if c.counts[i] == 0:
                c.present[i] = d.get(k) is not None
        for k, c in lists.items():
            if c.counts[i] == 0:
                c.present[i] = k in fl
        if any(k not in features for k in d) or any(k not in lists for k in fl):
            raise ValueError("a record holds a feature the spec does not name")


def _mark_present(columns: dict, entries, unsure: np.ndarray, min_state: int) -> None:
    """Sets ``present`` of the records whose entry of a column's key is there but empty (state >= ``min_state``:
    a Feature with a kind; any feature list); ValueError, as from the decoder's path, when a record without
    values for some column holds a key no column reads."""
    ids = {k: i for i, k in enumerate(entries.keys)}
    read = np.zeros(len(entries.keys), bool)
    read[[ids[k] for k in columns if k in ids]] = True
    key_ids, records = entries.key_ids, entries.records
    if not read.all() and np.any(~read[key_ids] & unsure[records]):
        raise ValueError("a record holds a feature the spec does not name")
    empty = np.flatnonzero((entries.counts == 0) & (entries.states >= min_state))
    if not empty.size:
        return
    for i in np.unique(key_ids[empty]).tolist():
        key = entries.keys[i]
        if key in columns:
            columns[key].present[records[empty[key_ids[empty] == i]]] = True


def _values(v) -> np.ndarray:
    if isinstance(v, np.ndarray):
        if v.dtype == np.float32:
            return v.astype(np.float64)
        return v
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=object)


def _kind_of(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return "INT" if value.dtype == np.int64 else "FLOAT"
    return "STRING"


class _Builder:
    def __init__(self, n: int, nested: bool) -> None:
        self.n = n
        self.nested = nested
        self.kind: str | None = None
        self.present = np.zeros(n, bool)
        self.counts = np.zeros(n, np.int64)
        self.parts: list = []
        self.steps: list[int] = []

    def set_kind(self, key: str, kind: str | None) -> None:
        if kind is None:
            return
        if self.kind is None:
            self.kind = kind
        elif self.kind != kind:
            raise ValueError(
                f"feature {key!r} holds values of two kinds, {self.kind} and {kind}; TFDV refuses this too"
            )

    def column(self) -> Column:
        if self.kind == "STRING":
            flat = [b for p in self.parts for b in p]
            values = np.empty(len(flat), dtype=object)
            values[:] = flat
        elif self.parts:
            values = np.concatenate(self.parts).astype(np.float64 if self.kind == "FLOAT" else np.int64)
        else:
            values = np.zeros(0, np.float64 if self.kind == "FLOAT" else np.int64)
        steps = np.asarray(self.steps, np.int64) if self.nested else None
        return Column(self.kind, self.present, self.counts, values, steps)


def decoded_columns(records: Sequence, sequence: bool, decoded: list | None = None) -> Batch:
    """The columns of ``records`` read one by one with the schema-less decoder (every key, any kind);
    ``decoded``: the records already decoded (:func:`decode_records`)."""
    n = len(records)
    ctx: dict[str, _Builder] = {}
    lists: dict[str, _Builder] = {}
    if decoded is None:
        decoded = decode_records(records, sequence)
    for i, (d, fl) in enumerate(decoded):
        for k, v in d.items():
            b = ctx.get(k) or ctx.setdefault(k, _Builder(n, False))
            b.set_kind(k, _kind_of(v))
            if v is not None:
                b.present[i] = True
                b.counts[i] = len(v)
                b.parts.append(v)
        for k, steps in fl.items():
            b = lists.get(k) or lists.setdefault(k, _Builder(n, True))
            b.present[i] = True
            b.counts[i] = len(steps)
            for s in steps:
                b.set_kind(k, _kind_of(s))
                if s is None:
                    b.steps.append(0)
                else:
                    b.steps.append(len(s))
                    b.parts.append(s)
    # Builders created at a later record start with the records before it as missing; steps of records
    # before the first are none, so the flat step list lines up with counts.
    return Batch(n, {k: b.column() for k, b in ctx.items()}, {k: b.column() for k, b in lists.items()})
