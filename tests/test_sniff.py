"""The payload classifier (tfrx.codec._sniff over the native classify_records) against the
pure-Python reference walker in ``sniff_oracle.py``: generated Examples and SequenceExamples,
wire bytes built to hit each rule, truncations, mutations, random bytes and every corpus file."""

from __future__ import annotations

import numpy as np
import pytest
import sniff_oracle as oracle
from conftest import load_corpus_sources
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_decode_example import entry, example, varint  # the tiny wire writer

import tfrx
from tfrx import _native
from tfrx._native import RecordKind
from tfrx.codec import _sniff as sniff

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _agree(record: bytes) -> None:
    assert sniff.record_kind(record) == oracle.record_kind(record), record
    assert sniff.top_level_kind(record) == oracle.top_level_kind(record), record


def _agree_batch(records: list[bytes]) -> None:
    assert sniff.record_kinds(records) == [oracle.record_kind(r) for r in records]
    assert sniff.record_kinds(records, top_level_only=True) == [oracle.top_level_kind(r) for r in records]


# ---------------------------------------------------------------- messages built with protobuf
_names = st.one_of(
    st.text(max_size=6),  # any code point but surrogates: controls, format characters, unassigned ones
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=6),
    st.sampled_from(["", "a", "é", "名前", "\u200b", "\u00a0", "a\nb", "\U0001f600", "\ufeff", "\U000e0001"]),
)


@st.composite
def _feature(draw):
    f = tfrx.train.Feature()
    kind = draw(st.integers(0, 3))
    if kind == 1:
        f.bytes_list.value.extend(draw(st.lists(st.binary(max_size=6), max_size=3)))
    elif kind == 2:
        f.float_list.value.extend(draw(st.lists(st.floats(width=32), max_size=3)))
    elif kind == 3:
        f.int64_list.value.extend(draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3)))
    return f


@st.composite
def _example(draw) -> bytes:
    ex = tfrx.train.Example()
    for name in draw(st.lists(_names, max_size=4)):
        ex.features.feature[name].CopyFrom(draw(_feature()))
    return ex.SerializeToString()


@st.composite
def _sequence_example(draw) -> bytes:
    ex = tfrx.train.SequenceExample()
    for name in draw(st.lists(_names, max_size=3)):
        ex.context.feature[name].CopyFrom(draw(_feature()))
    if draw(st.booleans()):
        ex.feature_lists.SetInParent()  # present, possibly empty
    for name in draw(st.lists(_names, max_size=3)):
        ex.feature_lists.feature_list[name].feature.extend(draw(st.lists(_feature(), max_size=3)))
    return ex.SerializeToString()


_messages = st.one_of(_example(), _sequence_example())


@SETTINGS
@given(_messages)
def test_examples_and_sequence_examples_agree(record):
    _agree(record)


@SETTINGS
@given(_messages, st.data())
def test_truncated_records_agree(record, data):
    cut = data.draw(st.integers(0, len(record)))
    _agree(record[:cut])


@SETTINGS
@given(_messages, st.data())
def test_mutated_records_agree(record, data):
    buf = bytearray(record)
    for _ in range(data.draw(st.integers(1, 3))):
        if not buf:
            break
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    _agree(bytes(buf))


@SETTINGS
@given(st.binary(max_size=64))
def test_random_bytes_agree(record):
    _agree(record)


# ---------------------------------------------------------------- wire bytes built field by field
@st.composite
def _varint_bytes(draw, n: int) -> bytes:
    """``n`` as a varint: minimal, padded with continuation bytes, or ten bytes with high bits set
    (always ten bytes from 2^64 on)."""
    how = draw(st.sampled_from(["minimal", "minimal", "padded", "ten"])) if n < 2**64 else "ten"
    raw = varint(n)
    if how == "padded" and len(raw) < 10:
        pad = draw(st.integers(1, 10 - len(raw)))
        return bytes(raw[:-1]) + bytes([raw[-1] | 0x80]) + b"\x80" * (pad - 1) + b"\x00"
    if how == "ten":  # nine continuation bytes, then bits 63..69 (those beyond 64 drawn at random)
        groups = bytes(((n >> (7 * i)) & 0x7F) | 0x80 for i in range(9))
        return groups + bytes([((n >> 63) | draw(st.integers(0, 0x3F)) << 1) & 0x7F])
    return raw


_field_numbers = st.one_of(st.sampled_from([1, 2, 3, 0, 4, 16]), st.integers(1, 2**35))
_wire_types = st.sampled_from([2, 0, 1, 5, 3, 4, 6, 7])
_names_bytes = st.one_of(
    _names.map(lambda s: s.encode("utf-8")),
    st.binary(max_size=6),
    st.sampled_from([b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\x80", b"ok\x7f", b"\xe2\x80"]),
)

# The Example grammar, level by level: the fields each message may hold and what each holds.
_GRAMMAR = {
    "top": {1: "features", 2: "feature_lists"},
    "features": {1: "feature_entry"},
    "feature_lists": {1: "list_entry"},
    "feature_entry": {1: "name", 2: "feature"},
    "list_entry": {1: "name", 2: "feature_list"},
    "feature_list": {1: "feature"},
    "feature": {1: "leaf", 2: "leaf", 3: "leaf"},
}


def _wire_message(level: str = "top", depth: int = 4):
    """Messages that follow the grammar with, at every field, a small chance of breaking a rule
    (another field number or wire type, a length off by one or past 2^64, a non-minimal varint)."""

    @st.composite
    def field(draw) -> bytes:
        allowed = _GRAMMAR.get(level, {})
        deviate = not allowed or draw(st.integers(0, 15)) == 0
        number = draw(_field_numbers) if deviate else draw(st.sampled_from(sorted(allowed)))
        wire = draw(_wire_types) if deviate and draw(st.booleans()) else 2
        key = draw(_varint_bytes(number << 3 | wire))
        if wire == 0:
            return key + draw(_varint_bytes(draw(st.integers(0, 2**64 - 1))))
        if wire == 1:
            return key + draw(st.binary(min_size=8, max_size=8))
        if wire == 5:
            return key + draw(st.binary(min_size=4, max_size=4))
        if wire != 2:
            return key
        child = allowed.get(number, draw(st.sampled_from(["name", "leaf", *_GRAMMAR])))
        if child == "name":
            value = draw(_names_bytes)
        elif child == "leaf" or depth == 0:
            value = draw(st.binary(max_size=6))
        else:
            value = draw(_wire_message(child, depth - 1))
        slack = draw(st.sampled_from([0, 1, -1, 2**64])) if draw(st.integers(0, 15)) == 0 else 0
        return key + draw(_varint_bytes(max(len(value) + slack, 0))) + value

    return st.lists(field(), max_size=3).map(b"".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_wire_message())
def test_wire_built_messages_agree(record):
    _agree(record)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_messages, _wire_message(), st.binary(max_size=16)), max_size=6))
def test_batches_agree(records):
    _agree_batch(records)


# ---------------------------------------------------------------- rules by hand
@pytest.mark.parametrize(
    "name,printable",
    [
        (b"plain", True), (b"", True), ("é名".encode(), True), ("\U0001f600".encode(), True),
        (b"a\nb", False), (b"a\x7f", False), ("\u200b".encode(), False), ("\u00a0".encode(), False),
        (b"\xed\xa0\x80", False), (b"\xc0\x80", False), (b"\x80", False), (b"\xe2\x80", False),
    ],
)  # fmt: skip
def test_feature_names_must_be_printable_utf8(name, printable):
    record = example(entry(name, b"\x1a\x00"))
    assert sniff.record_kind(record) == (sniff.EXAMPLE if printable else sniff.OTHER)
    assert oracle.record_kind(record) == sniff.record_kind(record)
    assert sniff.top_level_kind(record) == sniff.EXAMPLE  # names are below the top level


def test_rules():
    feature = b"\x1a\x02\x08\x01"  # int64_list {1}
    assert sniff.record_kind(example(entry(b"a", feature))) == sniff.EXAMPLE
    assert sniff.record_kind(example(entry(b"a", None))) == sniff.EXAMPLE  # a value is optional
    assert sniff.record_kind(example(b"\x0a\x02\x12\x00")) == sniff.OTHER  # a name is not
    assert sniff.record_kind(example() + example()) == sniff.OTHER  # field 1 twice
    assert sniff.record_kind(example(entry(b"a", b"\x22\x00"))) == sniff.OTHER  # Feature field 4
    assert sniff.record_kind(b"\x12\x00") == sniff.SEQUENCE_EXAMPLE
    assert sniff.record_kind(b"\x12\x00\x0a\x00") == sniff.SEQUENCE_EXAMPLE
    assert sniff.record_kind(b"") == sniff.EMPTY
    assert sniff.top_level_kind(b"") == sniff.EXAMPLE
    assert sniff.record_kinds([b"", b"\x12\x00"], top_level_only=True) == [sniff.EXAMPLE, sniff.SEQUENCE_EXAMPLE]
    batch = tfrx.RecordBatch.from_records([example(entry("é".encode(), None)), b"\x08\x01", b""])
    assert sniff.record_kinds(batch) == [sniff.EXAMPLE, sniff.OTHER, sniff.EMPTY]


def test_non_ascii_names_come_back_as_spans():
    good, bad = example(entry("é".encode(), None)), example(entry(b"\x80", None))
    data = b"xx" + good + bad + b"\x08"
    starts = np.array([2, 2 + len(good), len(data) - 1], np.int64)
    lengths = np.array([len(good), len(bad), 1], np.int64)
    result = _native.classify_records(data, starts, lengths)
    assert result.kinds.tolist() == [RecordKind.EXAMPLE, RecordKind.EXAMPLE, RecordKind.OTHER]
    assert result.name_records.tolist() == [0, 1]
    spans = [data[s : s + n] for s, n in zip(result.name_starts.tolist(), result.name_lengths.tolist())]
    assert spans == ["é".encode(), b"\x80"]
    assert sniff.record_kinds([good, bad]) == [sniff.EXAMPLE, sniff.OTHER]


def test_spans_outside_the_buffer_are_refused():
    one = np.ones(1, np.int64)
    with pytest.raises(ValueError, match="outside"):
        _native.classify_records(b"abc", np.array([3], np.int64), np.array([1], np.int64))
    with pytest.raises(ValueError, match="outside"):
        _native.classify_records(b"abc", np.array([-1], np.int64), one)
    with pytest.raises(ValueError, match="outside"):
        _native.classify_records(b"abc", one, np.array([2**62], np.int64))
    with pytest.raises(ValueError):
        _native.classify_records(b"abc", one, np.ones(2, np.int64))


def test_message_fields():
    event = b"\x09" + b"\x00" * 8 + b"\x10\x05" + b"\x1a\x0dbrain.Event:2"
    fields = _native.message_fields(event)
    assert fields.complete
    assert list(zip(fields.numbers.tolist(), fields.wire_types.tolist())) == [(1, 1), (2, 0), (3, 2)]
    assert not _native.message_fields(b"\x0a\x05ab").complete
    assert sniff.describe([event]) == "TensorBoard Event protos (an event file)"
    assert sniff.describe([b"\x0a\x05ab\x00\x00"]) == "not protocol buffers"
    assert sniff.describe([b"\x08\x01\x20\x02", b"\x00"]) == "another protocol buffer message (top-level fields [1, 4])"


# ---------------------------------------------------------------- the real corpus
ROWS = load_corpus_sources()


@pytest.mark.parametrize("row", ROWS, ids=[r["filename"] for r in ROWS])
def test_corpus_files_agree(corpus_dir, row):
    records: list[bytes] = []
    with tfrx.RecordReader(str(corpus_dir / row["filename"]), on_error="skip") as reader:
        records.extend(reader)
    assert sniff.record_kinds(records) == [oracle.record_kind(r) for r in records]
    assert sniff.record_kinds(records, top_level_only=True) == [oracle.top_level_kind(r) for r in records]
    for r in records[:50]:
        _agree(r)
