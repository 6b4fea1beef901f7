"""What a record's payload is: a tf.train.Example, a SequenceExample, or something else.

Protobuf bytes carry no type, so the check is structural: an Example is only
field 1 (Features); a SequenceExample is fields 1 (context) and 2
(FeatureLists); every Features map entry has a printable UTF-8 name and a
Feature that holds only bytes_list (1), float_list (2) or int64_list (3).
TensorBoard events, Waymo frames, TFDV statistics and raw text fail one of
these rules within the first bytes.

The wire walk is the native core's (``_native.classify_records``, GIL
released, every length bounds-checked); it hands back the feature names with
bytes >= 0x80, which are checked here against Python's Unicode database (valid
UTF-8 and ``str.isprintable``).
"""

from __future__ import annotations

import numpy as np

from tfrx import _native
from tfrx._native import RecordKind
from tfrx.io._batch import RecordBatch

EXAMPLE = "Example"
SEQUENCE_EXAMPLE = "SequenceExample"
OTHER = "other"
EMPTY = "empty"

_NAMES = {
    RecordKind.EMPTY: EMPTY,
    RecordKind.EXAMPLE: EXAMPLE,
    RecordKind.SEQUENCE_EXAMPLE: SEQUENCE_EXAMPLE,
    RecordKind.OTHER: OTHER,
}
_ONE_RECORD = np.zeros(1, np.int64)


def _printable(b) -> bool:
    try:
        return bytes(b).decode("utf-8").isprintable()
    except UnicodeDecodeError:
        return False


def _classify(data, starts: np.ndarray, lengths: np.ndarray, top_level_only: bool) -> np.ndarray:
    """The RecordKind (uint8) of each record data[starts[i]:starts[i]+lengths[i]]."""
    result = _native.classify_records(data, starts, lengths, top_level_only=top_level_only)
    kinds = result.kinds
    if len(result.name_records):
        buf = memoryview(data).cast("B")
        for r, s, n in zip(result.name_records.tolist(), result.name_starts.tolist(), result.name_lengths.tolist()):
            if kinds[r] != RecordKind.OTHER and not _printable(buf[s : s + n]):
                kinds[r] = RecordKind.OTHER
    return kinds


def _one(record, top_level_only: bool) -> str:
    view = memoryview(record)
    size = np.array([view.nbytes], np.int64)
    return _NAMES[RecordKind(int(_classify(view, _ONE_RECORD, size, top_level_only)[0]))]


def record_kind(record) -> str:
    """``"Example"``, ``"SequenceExample"``, ``"empty"`` (zero bytes) or ``"other"``."""
    return _one(record, False)


def top_level_kind(record) -> str:
    """``"Example"``, ``"SequenceExample"`` or ``"other"`` from the top level of ``record`` alone.

    A quick per-record check: fields 1 and 2, length-delimited, once each
    (field 2 makes a SequenceExample); it does not look inside the maps as
    :func:`record_kind` does. Zero bytes are an (empty) Example.
    """
    kind = _one(record, True)
    return EXAMPLE if kind == EMPTY else kind


def record_kinds(records, *, top_level_only: bool = False) -> list[str]:
    """:func:`record_kind` (or with ``top_level_only``, :func:`top_level_kind`) of each record.

    ``records`` is a :class:`tfrx.RecordBatch` or a sequence of bytes-like
    records; the whole batch is classified in one native call.
    """
    data: bytes | np.ndarray
    if isinstance(records, RecordBatch):
        data, starts, lengths = records.data, records.starts, records.lengths
    else:
        items = [bytes(r) if not isinstance(r, bytes) else r for r in records]
        data = b"".join(items)
        lengths = np.fromiter(map(len, items), np.int64, count=len(items))
        starts = np.zeros(len(items), np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
    kinds = _classify(
        data, np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(lengths, np.int64), top_level_only
    )
    names = [_NAMES[RecordKind(k)] for k in kinds.tolist()]
    return [EXAMPLE if k == EMPTY else k for k in names] if top_level_only else names


def describe(records) -> str:
    """A guess at what non-Example payloads are, for messages ("plain text", "TensorBoard Event protos", ...)."""
    records = list(records)
    if not records:
        return "no records"
    first = bytes(records[0])
    if all(_printable(r) for r in records[:5]):
        return "plain text"
    top = _native.message_fields(first)
    if not top.complete:
        return "not protocol buffers"
    fields = list(zip(top.numbers.tolist(), top.wire_types.tolist()))
    # file_version "brain.Event:N" (field 3) opens every event file; wall_time (field 1, a double) and step
    # (field 2) start the other events
    if b"brain.Event" in first[:64] or (fields[:1] == [(1, 1)] and (2, 0) in fields):
        return "TensorBoard Event protos (an event file)"
    return f"another protocol buffer message (top-level fields {sorted({f for f, _ in fields})})"


def payload_kind(records) -> str:
    """The kind of a sample of records: one kind for all, else ``"other"``.

    Empty records are ignored (an empty Example serializes to zero bytes);
    Examples among SequenceExamples count as SequenceExamples with no
    feature lists. Returns ``"empty"`` when there is nothing to judge.
    """
    kinds = set(record_kinds(records))
    kinds.discard(EMPTY)
    if not kinds:
        return EMPTY
    if OTHER in kinds:
        return OTHER
    if SEQUENCE_EXAMPLE in kinds:
        return SEQUENCE_EXAMPLE
    return EXAMPLE
