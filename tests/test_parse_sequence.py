"""tfrx.parse_sequence_example / parse_single_sequence_example against tf.io."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parse_differential import (
    DTYPE_OF,
    KINDS,
    UNKNOWN_FIELDS,
    _maybe_insert,
    assert_same,
    enc_feature,
    ld,
    ld_odd,
    odd_feature,
    payload,
    rare,
    run_both,
    to_tf_spec,
    values_of,
)

import tfrx


def enc_sequence_example(context: list[tuple[str, bytes]], lists: list[tuple[str, list[bytes]]]) -> bytes:
    ctx = b"".join(ld(1, ld(1, k.encode()) + ld(2, f)) for k, f in context)
    fl = b"".join(ld(1, ld(1, k.encode()) + ld(2, b"".join(ld(1, step) for step in steps))) for k, steps in lists)
    return ld(1, ctx) + ld(2, fl)


def check_sequence(tf, records, context, sequence, single=True):
    tf_ctx, tf_seq = to_tf_spec(tf, context), to_tf_spec(tf, sequence)
    expected, actual = run_both(
        tf,
        lambda: tf.io.parse_sequence_example(tf.constant(records, dtype=tf.string), tf_ctx, tf_seq),
        lambda: tfrx.parse_sequence_example(records, context, sequence, num_parallel_calls=1),
    )
    if actual is not None:
        assert len(actual) == 3
        for e, a in zip(expected, actual):
            assert_same(tf, e, a)
    if single:
        for r in records[:2]:
            expected, actual = run_both(
                tf,
                lambda r=r: tf.io.parse_single_sequence_example(r, tf_ctx, tf_seq),
                lambda r=r: tfrx.parse_single_sequence_example(r, context, sequence),
            )
            if actual is not None:
                assert len(actual) == 2
                for e, a in zip(expected, actual):
                    assert_same(tf, e, a, "single")


@st.composite
def step_for(draw, kind: str, count: int | None):
    r = draw(st.integers(0, 24))
    if r == 0:
        return enc_feature(None, [])
    if r == 1:
        other = draw(st.sampled_from([k for k in KINDS if k != kind]))
        return enc_feature(other, draw(values_of(other, draw(st.integers(0, 2)))))
    n = count if count is not None and r > 3 else draw(st.integers(0, 3))
    return enc_feature(kind, draw(values_of(kind, n)), packed=draw(st.booleans()))


@st.composite
def sequence_specs(draw):
    """(context schema, feature-list schema, context_features, sequence_features): keys -> (kind, count)."""
    ctx_names = ["c", "d"][: draw(st.integers(0, 2))]
    seq_names = ["s", "t"][: draw(st.integers(0 if ctx_names else 1, 2))]
    ctx_schema = {n: (draw(st.sampled_from(KINDS)), draw(st.sampled_from([None, 1, 2]))) for n in ctx_names}
    seq_schema = {n: (draw(st.sampled_from(KINDS)), draw(st.sampled_from([None, 1, 2]))) for n in seq_names}
    context = {}
    for n, (kind, count) in ctx_schema.items():
        dtype = DTYPE_OF[kind]
        c = draw(st.sampled_from(["fixed", "var", "ragged"]))
        if c == "fixed":
            k = count or 1
            default = None
            if draw(st.booleans()):
                vals = draw(values_of(kind, k))
                default = vals[0] if k == 1 else vals
            context[n] = tfrx.FixedLenFeature([] if k == 1 else [k], dtype, default)
        elif c == "var":
            context[n] = tfrx.VarLenFeature(dtype)
        else:
            context[n] = tfrx.RaggedFeature(dtype)
    sequence = {}
    for n, (kind, count) in seq_schema.items():
        dtype = DTYPE_OF[kind] if draw(st.integers(0, 9)) else draw(st.sampled_from(list(DTYPE_OF.values())))
        c = draw(st.sampled_from(["fixed", "var", "ragged"]))
        if c == "fixed":
            k = count or 1
            sequence[n] = tfrx.FixedLenSequenceFeature([] if k == 1 else [k], dtype, allow_missing=draw(st.booleans()))
        elif c == "var":
            sequence[n] = tfrx.VarLenFeature(dtype)
        else:
            sequence[n] = tfrx.RaggedFeature(dtype, row_splits_dtype=draw(st.sampled_from([np.int32, np.int64])))
    return ctx_schema, seq_schema, context, sequence


@st.composite
def sequence_batches(draw):
    ctx_schema, seq_schema, context, sequence = draw(sequence_specs())
    records = []
    for _ in range(draw(st.integers(1, 4))):
        ctx_entries = []
        for n, (kind, count) in ctx_schema.items():
            r = draw(st.integers(0, 9))
            if r == 0:
                continue
            if r == 1:
                ctx_entries.append((n, enc_feature(None, [])))
                continue
            k = count if count is not None and r > 3 else draw(st.integers(0, 3))
            ctx_entries.append((n, enc_feature(kind, draw(values_of(kind, k)), packed=draw(st.booleans()))))
        lists = []
        for n, (kind, count) in seq_schema.items():
            if draw(st.integers(0, 5)) == 0:
                continue
            steps = [draw(step_for(kind, count)) for _ in range(draw(st.integers(0, 3)))]
            lists.append((n, steps))
        records.append(enc_sequence_example(ctx_entries, lists))
    return records, context, sequence


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence_batches())
def test_generated_sequence_examples_match_tensorflow(tf, case):
    records, context, sequence = case
    check_sequence(tf, records, context, sequence)


# ------------------------------------------------------------------ generated unusual encodings
# TensorFlow's SequenceExample parser has rules of its own: map entries are
# exactly the key then the value; the last occurrence of a key counts, empty
# or not; a Feature's first byte must be the wanted kind's tag; and a
# FeatureList is read as one stream of fields, so that whatever follows a
# step's values inside the step is read as the list's next fields. These
# batches hold the unusual encodings of test_parse_differential at every
# level of a SequenceExample.
#
# TensorFlow's VarLenFeature of strings crashes the process on a bytes value
# that runs past its list: its first pass over the list only skips the value
# and counts it, its second fails to read it, and the failure's -1 is then
# taken as a count of values. So lengths are never cut, and no bytes follow
# a step's values, in Features read as strings.


@st.composite
def odd_step(draw, kind: str, count: int | None, odds: int, safe: bool):
    """One step of a FeatureList (its field 1), often laid out unusually."""
    if rare(draw, odds):
        return draw(
            st.sampled_from(
                [
                    b"\x0a\x00",
                    b"\x0a\x01\x00",
                    b"\x0a\x02\x1a\x00",
                    b"\x0a\x02\x12\x00",
                    b"\x0a\x02\x0a\x00",
                    b"\x0a\x02\x08\x01",
                    b"\x0a\x02\x1a\x80\x00",
                ]
            )
        )
    feature = draw(odd_feature(kind, count, odds, cut=safe, extra=safe))
    if safe and rare(draw, odds):  # bytes after the step's values: read as the list's next fields
        feature += draw(st.sampled_from([b"\x0a\x00", b"\x0a\x02\x1a\x00", b"\x12\x00", b"\x0a\x00\x0a\x00"]))
    return draw(ld_odd(1, feature, odds, cut=safe))


@st.composite
def odd_sequence_batches(draw):
    odds = draw(st.sampled_from([6, 24, 96]))  # how rare each oddity is in this batch
    ctx_schema, seq_schema, context, sequence = draw(sequence_specs())
    ctx_schema = {**ctx_schema, "zz": ("bytes", None)}  # not requested
    records = []
    for _ in range(draw(st.integers(1, 3))):
        ctx_entries = []
        for n, (kind, count) in ctx_schema.items():
            safe = n not in context or context[n].dtype is not tfrx.string
            for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
                f = draw(odd_feature(kind, count, odds, cut=safe, extra=safe))
                k, v = ld(1, n.encode()), ld(2, f)
                body = k + v
                if rare(draw, 2 * odds):  # an entry TensorFlow rejects here
                    body = draw(st.sampled_from([v + k, k + k, k, k + v + b"\x18\x01"]))
                ctx_entries.append(draw(ld_odd(1, body, 4 * odds)))
        lists = []
        for n, (kind, count) in seq_schema.items():
            safe = sequence[n].dtype is not tfrx.string
            for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
                steps = [draw(odd_step(kind, count, odds, safe)) for _ in range(draw(st.integers(0, 3)))]
                steps = _maybe_insert(draw, steps, UNKNOWN_FIELDS, 4 * odds)
                lists.append(ld(1, ld(1, n.encode()) + ld(2, b"".join(steps))))
        ctx_entries = _maybe_insert(draw, draw(st.permutations(ctx_entries)), UNKNOWN_FIELDS, 4 * odds)
        fields = [ld(1, b"".join(ctx_entries)), ld(2, b"".join(draw(st.permutations(lists))))]
        if draw(st.booleans()):
            fields.reverse()
        if rare(draw, 2 * odds):  # the last one's length runs past the record or stops short (no strings read)
            no_strings = all(s.dtype is not tfrx.string for s in [*context.values(), *sequence.values()])
            fields[-1] = draw(ld_odd(fields[-1][0] >> 3, payload(fields[-1]), cut=no_strings))
        top = UNKNOWN_FIELDS + [b"\x1a\x03xyz", b"\x8a\x00", b"\x0b", b"\x00\x05", b"\x1a\x80\x80\x80\x80\x08"]
        records.append(b"".join(_maybe_insert(draw, fields, top, 2 * odds)))
    return records, context, sequence


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(odd_sequence_batches())
def test_unusual_sequence_encodings_match_tensorflow(tf, case):
    records, context, sequence = case
    check_sequence(tf, records, context, sequence)


def test_sequence_basics(tf):
    recs = [
        enc_sequence_example(
            [("id", enc_feature("bytes", [b"v1"])), ("label", enc_feature("int64", [3, 4]))],
            [
                ("frames", [enc_feature("float", [1, 2]), enc_feature("float", [3, 4])]),
                ("words", [enc_feature("bytes", [b"a", b"b"]), enc_feature(None, []), enc_feature("bytes", [])]),
            ],
        ),
        enc_sequence_example([("id", enc_feature("bytes", [b"v2"]))], [("frames", [])]),
        enc_sequence_example([("id", enc_feature("bytes", [b"v3"]))], [("words", [enc_feature("bytes", [b"z"])])]),
    ]
    context = {
        "id": tfrx.FixedLenFeature([], tfrx.string),
        "label": tfrx.VarLenFeature(tfrx.int64),
        "label_r": tfrx.RaggedFeature(tfrx.int64, value_key="label"),
        "missing": tfrx.FixedLenFeature([2], tfrx.float32, default_value=[1.0, 2.0]),
    }
    sequence = {
        "frames": tfrx.FixedLenSequenceFeature([2], tfrx.float32, allow_missing=True),
        "words": tfrx.VarLenFeature(tfrx.string),
        "words_r": tfrx.RaggedFeature(tfrx.string, value_key="words"),
    }
    check_sequence(tf, recs, context, sequence)


@pytest.mark.parametrize(
    "lists,spec",
    [
        ([], tfrx.FixedLenSequenceFeature([], tfrx.int64)),  # required list missing
        ([("s", [enc_feature("int64", [1]), enc_feature(None, [])])], tfrx.FixedLenSequenceFeature([], tfrx.int64)),
        (
            [("s", [enc_feature("int64", [1]), enc_feature("int64", [2, 3, 4])])],
            tfrx.FixedLenSequenceFeature([2], tfrx.int64),
        ),
        ([("s", [enc_feature("int64", [1]), enc_feature("float", [])])], tfrx.VarLenFeature(tfrx.int64)),
        ([("s", [])], tfrx.FixedLenSequenceFeature([], tfrx.int64)),  # present, zero steps
    ],
)
def test_feature_list_rules(tf, lists, spec):
    check_sequence(tf, [enc_sequence_example([], lists)], {}, {"s": spec})


def _packed_steps(kind: str, n: int, start: int = 0) -> list[bytes]:
    return [enc_feature(kind, [start + 300 * i + j for j in range(i % 4 + 1)]) for i in range(n)]


@pytest.mark.parametrize(
    "steps,spec",
    [
        # numeric steps in the usual layout, then others, then the usual one again
        (
            _packed_steps("int64", 5) + [enc_feature("int64", [7, 8], packed=False)] + _packed_steps("int64", 3, 9),
            tfrx.VarLenFeature(tfrx.int64),
        ),
        ([enc_feature(None, [])] + _packed_steps("float", 4), tfrx.VarLenFeature(tfrx.float32)),
        (_packed_steps("float", 3) + [enc_feature("float", [1.5], packed=False)], tfrx.RaggedFeature(tfrx.float32)),
        (_packed_steps("int64", 3), tfrx.FixedLenSequenceFeature([2], tfrx.int64)),  # wrong count on step 0
        (
            [enc_feature("int64", [1, 2])] * 3 + [enc_feature("int64", [1, 2, 3])],
            tfrx.FixedLenSequenceFeature([2], tfrx.int64),
        ),  # wrong count on step 3
        (_packed_steps("int64", 2) + [enc_feature("float", [1.0])], tfrx.VarLenFeature(tfrx.int64)),  # kind
        (_packed_steps("int64", 2) + [b"\x1a\x03\x0a\x01\x80"], tfrx.VarLenFeature(tfrx.int64)),  # cut varint
        (_packed_steps("float", 2) + [b"\x12\x05\x0a\x03\x00\x00\x80"], tfrx.VarLenFeature(tfrx.float32)),  # 3 bytes
        ([enc_feature("int64", [2**40 + i] * 40) for i in range(3)], tfrx.VarLenFeature(tfrx.int64)),  # long steps
    ],
)
def test_numeric_steps_in_every_layout(tf, steps, spec):
    records = [enc_sequence_example([], [("s", steps)]), enc_sequence_example([], [("s", steps[::-1])])]
    check_sequence(tf, records, {}, {"s": spec})


# TensorFlow's SequenceExample parser reads unusual encodings its own way,
# unlike its Example parser and unlike protobuf; each case states what
# TensorFlow 2.21 returns (None: it raises) and is checked against it too.

I64, F32 = tfrx.int64, tfrx.float32
FLOAT_1 = struct.pack("<f", 1.0)


def _context(*entries: tuple[str, bytes]) -> bytes:
    return enc_sequence_example(list(entries), [])


def _lists(raw: bytes) -> bytes:
    """A SequenceExample whose feature list "s" is `raw` (the FeatureList's bytes)."""
    return ld(2, ld(1, ld(1, b"s") + ld(2, raw)))


def _values(out) -> list:
    if isinstance(out, tfrx.SparseArray):
        return out.values.tolist()
    if isinstance(out, tfrx.RaggedArray):
        return out.to_list()
    return np.asarray(out).tolist()


UNUSUAL_SEQUENCES: list = [
    # context: the first list of the Feature only; its first byte must be the wanted kind's tag
    (_context(("c", ld(3, ld(1, b"\x01\x02")) + ld(3, ld(1, b"\x03")))), {"c": tfrx.VarLenFeature(I64)}, {}, [1, 2]),
    (_context(("c", ld(1, ld(1, b"zz")) + enc_feature("int64", [5]))), {"c": tfrx.VarLenFeature(I64)}, {}, None),
    (_context(("c", ld(3, ld(1, b"\x07") + b"\x08\x09"))), {"c": tfrx.VarLenFeature(I64)}, {}, [7]),
    (_context(("c", ld(3, b"\x08\x09" + ld(1, b"\x07")))), {"c": tfrx.VarLenFeature(I64)}, {}, None),
    (_context(("c", b"\x08\x01")), {"c": tfrx.VarLenFeature(I64)}, {}, None),
    (_context(("c", b"\x1a\x05")), {"c": tfrx.VarLenFeature(I64)}, {}, None),  # a list that holds nothing
    (_context(("c", b"\x0a\x05")), {"c": tfrx.VarLenFeature(tfrx.string)}, {}, []),  # (but a BytesList may)
    (_context(("c", b"\x1a\x03\x0a\x05\x01")), {"c": tfrx.VarLenFeature(I64)}, {}, [1]),  # a cut packed run
    # unlike an Example: a packed float run must be whole floats
    (_context(("c", ld(2, ld(1, FLOAT_1 + b"\x01")))), {"c": tfrx.VarLenFeature(F32)}, {}, None),
    (_context(("c", ld(2, b"\x0d" + FLOAT_1))), {"c": tfrx.VarLenFeature(F32)}, {}, [1.0]),
    # the last occurrence of a key counts, empty or not, and only it is read
    (
        _context(("c", enc_feature("int64", [5])), ("c", b"")),
        {"c": tfrx.FixedLenFeature([], I64, default_value=1)},
        {},
        None,
    ),
    (_context(("c", enc_feature("int64", [5])), ("c", b"")), {"c": tfrx.VarLenFeature(I64)}, {}, []),
    (_context(("c", b"\x08\x01"), ("c", enc_feature("int64", [7]))), {"c": tfrx.FixedLenFeature([], I64)}, {}, [7]),
    # map entries: the key, then the value, nothing else
    (ld(1, ld(1, ld(2, enc_feature("int64", [7])) + ld(1, b"c"))), {"c": tfrx.VarLenFeature(I64)}, {}, None),
    (ld(1, ld(1, ld(1, b"c"))), {"c": tfrx.VarLenFeature(I64)}, {}, None),
    (ld(1, b"\x10\x01"), {"c": tfrx.VarLenFeature(I64)}, {}, None),
    (b"\x1a\x80\x80\x80\x80\x08" + _context(("c", enc_feature("int64", [7]))), {"c": tfrx.VarLenFeature(I64)}, {}, [7]),
    # feature lists: one stream of fields; what follows a step's values is read as the next steps
    (_lists(ld(1, enc_feature("int64", [5]) + b"\x0a\x00")), {}, {"s": tfrx.RaggedFeature(I64)}, [[5], []]),
    (_lists(ld(1, b"\x1a\x00\x0a\x00")), {}, {"s": tfrx.RaggedFeature(I64)}, [[], []]),
    (_lists(ld(1, ld(3, ld(1, b"\x07") + ld(1, b"\x08")))), {}, {"s": tfrx.RaggedFeature(I64)}, None),
    (_lists(ld(1, b"\x1a\x00")), {}, {"s": tfrx.RaggedFeature(I64)}, [[]]),  # a step of two bytes
    (_lists(ld(1, b"\x12\x00")), {}, {"s": tfrx.RaggedFeature(I64)}, None),
    (_lists(b"\x0a\x02\x1a\x80\x00"), {}, {"s": tfrx.RaggedFeature(I64)}, [[]]),
    (_lists(ld(1, b"") + ld(1, enc_feature("int64", [3]))), {}, {"s": tfrx.RaggedFeature(I64)}, [[], [3]]),
    (_lists(ld(1, b"\x1a")), {}, {"s": tfrx.RaggedFeature(I64)}, None),
    (_lists(b"\x10\x01" + ld(1, enc_feature("int64", [5]))), {}, {"s": tfrx.RaggedFeature(I64)}, None),
    (_lists(b"\x0a\x7f" + enc_feature("int64", [5])), {}, {"s": tfrx.RaggedFeature(I64)}, [[5]]),
    (_lists(ld(1, ld(2, ld(1, FLOAT_1 + b"\x01")))), {}, {"s": tfrx.RaggedFeature(F32)}, None),
    (
        _lists(ld(1, enc_feature("int64", [5]) + b"\x0a\x00")),
        {},
        {"s": tfrx.FixedLenSequenceFeature([], I64, allow_missing=True)},
        None,
    ),
]


@pytest.mark.parametrize("record,context,sequence,expected", UNUSUAL_SEQUENCES)
def test_unusual_sequence_encodings(record, context, sequence, expected):
    key = next(iter(context or sequence))
    if expected is None:
        with pytest.raises(tfrx.TfrxError):
            tfrx.parse_sequence_example([record], context, sequence)
    else:
        ctx, fls, _ = tfrx.parse_sequence_example([record], context, sequence)
        got = _values((ctx or fls)[key])
        assert (got[0] if isinstance((ctx or fls)[key], tfrx.RaggedArray) else got) == expected


@pytest.mark.parametrize("record,context,sequence,expected", UNUSUAL_SEQUENCES)
def test_listed_unusual_sequence_encodings_match_tensorflow(tf, record, context, sequence, expected):
    check_sequence(tf, [record], context, sequence)


@pytest.mark.parametrize("feature", [enc_feature(None, []), enc_feature("int64", []), enc_feature("float", [])])
@pytest.mark.parametrize(
    "spec",
    [
        tfrx.FixedLenFeature([], tfrx.int64, default_value=4),
        tfrx.FixedLenFeature([0], tfrx.int64, default_value=[]),
        tfrx.VarLenFeature(tfrx.int64),
        tfrx.RaggedFeature(tfrx.int64),
    ],
)
def test_empty_context_feature_counts_as_present(tf, feature, spec):
    # Unlike an Example, a SequenceExample's context treats an empty Feature as
    # present with zero values (TensorFlow's ParseSequenceExample rules).
    check_sequence(tf, [enc_sequence_example([("c", feature)], [])], {"c": spec}, {})


def test_ragged_sequence_partitions(tf):
    R = tfrx.RaggedFeature
    recs = [
        enc_sequence_example(
            [],
            [
                ("v", [enc_feature("int64", [1, 2, 3]), enc_feature("int64", [4])]),
                ("l", [enc_feature("int64", [2, 1]), enc_feature("int64", [1])]),
            ],
        ),
        enc_sequence_example([], [("v", [enc_feature("int64", [])]), ("l", [enc_feature("int64", [])])]),
    ]
    check_sequence(tf, recs, {}, {"r": R(tfrx.int64, value_key="v", partitions=[R.RowLengths("l")])})
    check_sequence(tf, recs[:1], {}, {"u": R(tfrx.int64, value_key="v", partitions=[R.UniformRowLength(1)])})


def test_spec_errors():
    with pytest.raises(tfrx.SpecError):
        tfrx.parse_sequence_example([], None, None)
    with pytest.raises(tfrx.SpecError, match="default_value must be None"):
        tfrx.SequenceExampleParser(
            sequence_features={"s": tfrx.FixedLenSequenceFeature([], tfrx.int64, default_value=1)}
        )
    with pytest.raises(tfrx.SpecError, match="unsupported FixedLenSequenceFeature"):
        tfrx.SequenceExampleParser({"s": tfrx.FixedLenSequenceFeature([], tfrx.int64, allow_missing=True)})
    with pytest.raises(tfrx.SpecError, match="unsupported SparseFeature"):
        tfrx.SequenceExampleParser(None, {"s": tfrx.SparseFeature("i", "v", tfrx.int64, 3)})


def test_sequence_threads_identical_and_errors_name_step():
    rng = np.random.default_rng(1)
    recs = []
    for i in range(2000):
        steps = int(rng.integers(0, 6))
        recs.append(
            enc_sequence_example(
                [("id", enc_feature("int64", [i]))],
                [
                    ("f", [enc_feature("float", rng.standard_normal(3).tolist()) for _ in range(steps)]),
                    ("w", [enc_feature("bytes", [b"x"] * int(rng.integers(0, 3))) for _ in range(steps)]),
                ],
            )
            + ld(3, b"unknown field" * 40)
        )  # skipped; makes the batch big enough to split
    parser = tfrx.SequenceExampleParser(
        {"id": tfrx.FixedLenFeature([], tfrx.int64)},
        {"f": tfrx.FixedLenSequenceFeature([3], tfrx.float32), "w": tfrx.RaggedFeature(tfrx.string)},
    )
    one = parser.parse(recs, num_parallel_calls=1)
    four = parser.parse(tfrx.RecordBatch.from_records(recs), num_parallel_calls=4)
    np.testing.assert_array_equal(one[0]["id"], four[0]["id"])
    np.testing.assert_array_equal(one[1]["f"], four[1]["f"])
    np.testing.assert_array_equal(one[2]["f"], four[2]["f"])
    assert one[1]["w"] == four[1]["w"]
    recs[1500] = enc_sequence_example(
        [("id", enc_feature("int64", [0]))], [("f", [enc_feature("float", [1, 2, 3]), enc_feature("float", [1])])]
    )
    with pytest.raises(tfrx.ParseError, match=r"feature list 'f' in record 1500, step 1: expected 3 values") as info:
        parser.parse(recs, num_parallel_calls=4)
    assert info.value.feature == "f" and info.value.record_index == 1500


def _misaligned_steps() -> bytes:
    # three steps of values, two of row lengths
    return enc_sequence_example(
        [],
        [
            ("v", [enc_feature("int64", [1, 2]), enc_feature("int64", [3]), enc_feature("int64", [4, 5, 6])]),
            ("l", [enc_feature("int64", [2]), enc_feature("int64", [1])]),
        ],
    )


@pytest.mark.parametrize("validate", [True, False])
def test_ragged_steps_that_do_not_line_up_are_refused_saying_what_tensorflow_does(validate):
    R = tfrx.RaggedFeature
    spec = {"r": R(tfrx.int64, value_key="v", partitions=[R.RowLengths("l")], validate=validate)}
    for parse in (
        lambda: tfrx.parse_sequence_example([_misaligned_steps()], sequence_features=spec),
        lambda: tfrx.parse_single_sequence_example(_misaligned_steps(), sequence_features=spec),
    ):
        with pytest.raises(tfrx.ParseError) as info:
            parse()
        message = str(info.value)
        assert "record 0 has 3 steps of 'v' but 2 of partition 'l'" in message
        assert "rejects this too" not in message
        assert "refuses it with validate=True, but with validate=False" in message


def test_tensorflow_accepts_ragged_steps_that_do_not_line_up_without_validate(tf):
    # What the message above says about TensorFlow (2.21): refused with validate=True,
    # accepted (rows misaligned with their values) with validate=False.
    record = _misaligned_steps()

    def spec(validate):
        R = tf.io.RaggedFeature
        return {"r": R(tf.int64, value_key="v", partitions=[R.RowLengths("l")], validate=validate)}

    with pytest.raises(tf.errors.InvalidArgumentError, match="not aligned"):
        tf.io.parse_sequence_example([record], sequence_features=spec(True))
    _, lists, _ = tf.io.parse_sequence_example([record], sequence_features=spec(False))
    assert lists["r"].to_list() == [[[[1, 2]], [[3]]]]  # the third step's values are dropped
    _, single = tf.io.parse_single_sequence_example(record, sequence_features=spec(False))
    assert single["r"].to_list() == [[[1, 2]], [[3]]]
    R = tf.io.RaggedFeature
    more_ids = enc_sequence_example(
        [],
        [
            ("v", [enc_feature("int64", [1, 2]), enc_feature("int64", [3])]),
            ("i", [enc_feature("int64", [2]), enc_feature("int64", [1]), enc_feature("int64", [0])]),
        ],
    )
    with_ids = {"r": R(tf.int64, value_key="v", partitions=[R.ValueRowIds("i")], validate=True)}
    _, single = tf.io.parse_single_sequence_example(more_ids, sequence_features=with_ids)
    assert single["r"].to_list() == [[[], [], [1]], [[], [2]], [[3]]]
