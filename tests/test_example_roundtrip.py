"""Random Examples / SequenceExamples through every path: builders, native
encoder, native decoder, protobuf (tfrx.train) and TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx import train

KINDS = ("bytes", "float", "int64")
keys = st.text(max_size=6)
values_of = {
    "bytes": st.lists(st.binary(max_size=5) | st.just(b"\x00\xff\x00"), max_size=4),
    "float": st.lists(
        st.floats(width=32) | st.sampled_from([float("nan"), float("inf"), -float("inf"), -0.0]), max_size=4
    ),
    "int64": st.lists(st.integers(-(2**63), 2**63 - 1) | st.sampled_from([-(2**63), 2**63 - 1, -1, 0]), max_size=4),
}


@st.composite
def feature_values(draw, kind=None):
    kind = kind or draw(st.sampled_from(KINDS))
    return kind, draw(values_of[kind])


def same_values(a, b) -> bool:
    """Equality of decoded values, bit-exact for floats (NaN payloads aside, -0.0 kept)."""
    if isinstance(a, list) or isinstance(b, list):
        return list(a) == list(b)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == np.float32:
        nan = np.isnan(a)
        return bool(
            np.array_equal(nan, np.isnan(b)) and np.array_equal(a.view(np.uint32)[~nan], b.view(np.uint32)[~nan])
        )
    return bool(np.array_equal(a, b))


def same_dict(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)


def feature_message(kind, values, module=train):
    if kind == "bytes":
        return module.Feature(bytes_list=module.BytesList(value=values))
    if kind == "float":
        return module.Feature(float_list=module.FloatList(value=values))
    if kind == "none":
        return module.Feature()
    return module.Feature(int64_list=module.Int64List(value=values))


def expected_value(kind, values):
    if kind == "bytes":
        return list(values)
    if kind == "float":
        return np.array(values, dtype=np.float32)
    return np.array(values, dtype=np.int64)


def oracle_dict(features_message) -> dict:
    """Pure-protobuf oracle: the dict decode_example should return for a Features message."""
    out = {}
    for name, feature in features_message.feature.items():
        kind = feature.WhichOneof("kind")
        if kind is None:
            continue
        out[name] = expected_value(kind.split("_")[0], list(getattr(feature, kind).value))
    return out


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(keys, feature_values(), max_size=5))
def test_example_message_builder_encoder_decoder_agree(features):
    message = train.Example(
        features=train.Features(feature={k: feature_message(kind, v) for k, (kind, v) in features.items()})
    )
    data = message.SerializeToString(deterministic=True)
    expected = {k: expected_value(kind, v) for k, (kind, v) in features.items()}
    assert same_dict(tfrx.decode_example(data), expected)
    assert same_dict(tfrx.decode_example(message), expected)
    built = tfrx.make_example(
        {k: v for k, (_, v) in features.items()}, kinds={k: kind for k, (kind, _) in features.items()}
    )
    assert built == message or data == built.SerializeToString(deterministic=True)
    columns = {k: [v] for k, (_, v) in features.items()}
    encoded = tfrx.encode_examples(columns, kinds={k: kind for k, (kind, _) in features.items()})
    assert encoded == ([data] if features else [])  # no columns: no rows


@st.composite
def example_table(draw):
    """A schema and rows: each row maps a subset of the names to values of the name's kind."""
    schema = draw(st.dictionaries(keys, st.sampled_from(KINDS), min_size=1, max_size=4))
    n = draw(st.integers(0, 4))
    rows = [{k: draw(values_of[kind]) for k, kind in schema.items() if draw(st.booleans())} for _ in range(n)]
    return schema, rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example_table())
def test_encode_examples_is_byte_identical_to_protobuf(table):
    schema, rows = table
    expected = [
        train.Example(
            features=train.Features(feature={k: feature_message(schema[k], v) for k, v in row.items()})
        ).SerializeToString(deterministic=True)
        for row in rows
    ]
    columns = {k: [row.get(k) for row in rows] for k in schema}
    assert tfrx.encode_examples(columns, kinds=schema) == expected
    batch = tfrx.encode_examples(columns, kinds=schema, as_batch=True)
    assert isinstance(batch, tfrx.RecordBatch) and batch.to_list() == expected
    for data, row in zip(expected, rows):
        assert same_dict(tfrx.decode_example(data), {k: expected_value(schema[k], v) for k, v in row.items()})


@st.composite
def sequence_table(draw):
    ctx_schema = draw(st.dictionaries(keys, st.sampled_from(KINDS), max_size=3))
    fl_schema = draw(st.dictionaries(keys, st.sampled_from(KINDS), min_size=1, max_size=3))
    n = draw(st.integers(0, 3))
    rows = []
    for _ in range(n):
        ctx = {k: draw(values_of[kind]) for k, kind in ctx_schema.items() if draw(st.booleans())}
        fl = {k: draw(st.lists(values_of[kind], max_size=3)) for k, kind in fl_schema.items() if draw(st.booleans())}
        rows.append((ctx, fl))
    return ctx_schema, fl_schema, rows


def sequence_message(ctx_schema, fl_schema, ctx, fl, module=train):
    return module.SequenceExample(
        context=module.Features(feature={k: feature_message(ctx_schema[k], v, module) for k, v in ctx.items()}),
        feature_lists=module.FeatureLists(
            feature_list={
                k: module.FeatureList(feature=[feature_message(fl_schema[k], s, module) for s in steps])
                for k, steps in fl.items()
            }
        ),
    )


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence_table())
def test_sequence_examples_all_paths(table):
    ctx_schema, fl_schema, rows = table
    messages = [sequence_message(ctx_schema, fl_schema, c, f) for c, f in rows]
    expected = [m.SerializeToString(deterministic=True) for m in messages]
    kinds = {**ctx_schema, **fl_schema}
    kinds_ok = all(ctx_schema[k] == fl_schema[k] for k in set(ctx_schema) & set(fl_schema))
    if kinds_ok:
        got = tfrx.encode_sequence_examples(
            context={k: [c.get(k) for c, _ in rows] for k in ctx_schema},
            feature_lists={k: [f.get(k) for _, f in rows] for k in fl_schema},
            kinds=kinds,
        )
        assert got == expected
    for data, message, (ctx, fl) in zip(expected, messages, rows):
        context, lists = tfrx.decode_sequence_example(data)
        assert same_dict(context, {k: expected_value(ctx_schema[k], v) for k, v in ctx.items()})
        assert lists.keys() == fl.keys()
        for k, steps in fl.items():
            assert len(lists[k]) == len(steps)
            assert all(same_values(a, expected_value(fl_schema[k], s)) for a, s in zip(lists[k], steps))
        if kinds_ok:
            built = tfrx.make_sequence_example(ctx, fl, kinds=kinds)
            assert built.SerializeToString(deterministic=True) == data
        assert tfrx.decode_sequence_example(message)[1].keys() == fl.keys()


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example_table(), sequence_table())
def test_tensorflow_agrees(tf, table, seq_table):
    schema, rows = table
    columns = {k: [row.get(k) for row in rows] for k in schema}
    for data, row in zip(tfrx.encode_examples(columns, kinds=schema), rows):
        theirs = tf.train.Example(
            features=tf.train.Features(feature={k: feature_message(schema[k], v, tf.train) for k, v in row.items()})
        )
        assert theirs.SerializeToString(deterministic=True) == data
        assert tf.train.Example.FromString(data) == theirs
        assert same_dict(tfrx.decode_example(theirs.SerializeToString()), oracle_dict(theirs.features))
    ctx_schema, fl_schema, seq_rows = seq_table
    for ctx, fl in seq_rows:
        theirs = sequence_message(ctx_schema, fl_schema, ctx, fl, tf.train)
        ours = sequence_message(ctx_schema, fl_schema, ctx, fl)
        assert theirs.SerializeToString(deterministic=True) == ours.SerializeToString(deterministic=True)
        assert train.SequenceExample.FromString(theirs.SerializeToString()) == ours


@pytest.fixture(scope="module")
def tf_parse(tf):
    return tf.io.parse_single_example


def test_tf_io_parses_our_encoding(tf):
    ids = np.arange(12, dtype=np.int64).reshape(3, 4)
    data = tfrx.encode_examples(
        {
            "ids": ids,
            "w": np.linspace(0, 1, 3),
            "s": ["a", "bé", ""],
            "r": tfrx.Ragged([b"x", b"y"], row_lengths=[0, 2, 0]),
        }
    )
    spec = {
        "ids": tf.io.FixedLenFeature([4], tf.int64),
        "w": tf.io.FixedLenFeature([], tf.float32),
        "s": tf.io.FixedLenFeature([], tf.string),
        "r": tf.io.VarLenFeature(tf.string),
    }
    parsed = tf.io.parse_example(data, spec)
    np.testing.assert_array_equal(parsed["ids"].numpy(), ids)
    np.testing.assert_allclose(parsed["w"].numpy(), np.linspace(0, 1, 3).astype(np.float32))
    assert parsed["s"].numpy().tolist() == [b"a", "bé".encode(), b""]
    assert parsed["r"].values.numpy().tolist() == [b"x", b"y"]
