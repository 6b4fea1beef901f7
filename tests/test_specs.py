"""Feature specs: construction, validation (SpecError where TensorFlow raises ValueError), repr and JSON."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tfrx

R = tfrx.RaggedFeature

SPECS = {
    "a": tfrx.FixedLenFeature([], tfrx.int64),
    "b": tfrx.FixedLenFeature([2, 3], tfrx.float32, default_value=[[1.0, 2.0, math.nan], [math.inf, -0.0, 5.0]]),
    "c": tfrx.FixedLenFeature([], tfrx.string, default_value=b"\x00x"),
    "d": tfrx.FixedLenSequenceFeature([2], tfrx.int64, allow_missing=True, default_value=-1),
    "e": tfrx.VarLenFeature(tfrx.string),
    "f": tfrx.SparseFeature(["i", "j"], "v", tfrx.float32, [10, 4], already_sorted=True),
    "g": tfrx.SparseFeature("i", "v", tfrx.float32, 10),
    "h": R(
        tfrx.int64,
        value_key="v2",
        partitions=[
            R.RowLengths("l"),
            R.UniformRowLength(2),
            R.RowSplits("s"),
            R.RowStarts("t"),
            R.RowLimits("u"),
            R.ValueRowIds("w"),
        ],
        row_splits_dtype="int64",
        validate=True,
    ),
    "k": R(tfrx.float32),
}


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if isinstance(x, list) and isinstance(y, list):
            if np.array(x, dtype=object).tolist() != np.array(y, dtype=object).tolist() and repr(x) != repr(y):
                return False
            continue
        if x != y and repr(x) != repr(y):
            return False
    return True


def test_repr_is_pasteable_python():
    assert repr(tfrx.FixedLenFeature([], tfrx.int64)) == "tfrx.FixedLenFeature(shape=[], dtype=tfrx.int64)"
    for key, spec in SPECS.items():
        rebuilt = eval(repr(spec), {"tfrx": tfrx})  # noqa: S307 - the point of the test
        assert _same(rebuilt, spec), key


def test_json_round_trip():
    text = tfrx.features_to_json(SPECS)
    back = tfrx.features_from_json(text)
    assert back.keys() == SPECS.keys()
    for k in SPECS:
        assert _same(back[k], SPECS[k]), k
    pair = ({"c": SPECS["a"]}, {"s": SPECS["d"]})
    ctx, seq = tfrx.features_from_json(tfrx.features_to_json(pair))
    assert ctx == {"c": SPECS["a"]} and seq == {"s": SPECS["d"]}


def test_dtype_spellings():
    for d in (tfrx.int64, "int64", np.int64, np.dtype("int64"), "INT64"):
        assert tfrx.FixedLenFeature([], d).dtype is tfrx.int64
    for d in (tfrx.float32, "float32", "float", np.float32):
        assert tfrx.VarLenFeature(d).dtype is tfrx.float32
    for d in (tfrx.string, "string", "bytes", bytes, str, np.bytes_, object):
        assert tfrx.VarLenFeature(d).dtype is tfrx.string
    assert tfrx.int64 == "int64" and tfrx.int64 != tfrx.float32
    for bad in ("int32", np.float64, "complex64", 3):
        with pytest.raises(tfrx.SpecError):
            tfrx.FixedLenFeature([], bad)


def test_tensorflow_dtypes_and_partitions_port(tf):
    spec = tfrx.FixedLenFeature([2], tf.float32, default_value=[1.0, 2.0])
    assert spec.dtype is tfrx.float32
    r = tfrx.RaggedFeature(tf.string, partitions=[tf.io.RaggedFeature.RowLengths("l")], row_splits_dtype=tf.int64)
    assert r.partitions == (R.RowLengths("l"),) and r.row_splits_dtype == np.int64


def test_positional_arguments_follow_tensorflow():
    s = tfrx.FixedLenSequenceFeature([3], tfrx.int64, True, 0)
    assert (s.shape, s.allow_missing, s.default_value) == ((3,), True, 0)
    s = tfrx.SparseFeature("i", "v", tfrx.float32, 5, True)
    assert s.already_sorted
    assert tfrx.RaggedFeature(tfrx.int64).row_splits_dtype == np.int32  # TensorFlow's default


@pytest.mark.parametrize(
    "features,match",
    [
        ({"a": tfrx.FixedLenFeature([None], tfrx.int64)}, "FixedLenSequenceFeature"),
        ({"a": tfrx.FixedLenFeature([2, None], tfrx.int64)}, "must be known"),
        ({"a": tfrx.FixedLenFeature([3], tfrx.int64, default_value=0)}, "scalar default"),
        ({"a": tfrx.FixedLenFeature([3], tfrx.int64, default_value=[1, 2])}, "needs 3"),
        ({"a": tfrx.FixedLenFeature([], tfrx.int64, default_value="x")}, "not int64"),
        ({"a": tfrx.FixedLenSequenceFeature([], tfrx.int64)}, "allow_missing=True"),
        ({"a": tfrx.FixedLenSequenceFeature([2], tfrx.int64, True, [1, 2])}, "needs 1"),
        ({"a": tfrx.VarLenFeature(tfrx.int64), "b": R(tfrx.int64, value_key="a")}, "both as a"),
        ({"a": tfrx.FixedLenFeature([], tfrx.int64), "b": tfrx.SparseFeature("a", "v", tfrx.int64, 3)}, "both as a"),
        ({"a": tfrx.VarLenFeature(tfrx.float32), "b": tfrx.SparseFeature("a", "v", tfrx.int64, 3)}, "conflicting"),
        ({"s": tfrx.SparseFeature(["i", "j"], "v", tfrx.int64, 3)}, "equal lengths"),
        ({}, "non-empty"),
    ],
)
def test_invalid_feature_sets_raise_spec_error(features, match):
    with pytest.raises(tfrx.SpecError, match=match):
        tfrx.ExampleParser(features)


@pytest.mark.parametrize(
    "features",
    [
        {"a": tfrx.FixedLenFeature([None], "int64")},
        {"a": tfrx.FixedLenFeature([3], "int64", default_value=0)},
        {"a": tfrx.FixedLenSequenceFeature([], "int64")},
        {"a": tfrx.VarLenFeature("int64"), "b": R("int64", value_key="a")},
        {"s": tfrx.SparseFeature(["i", "j"], "v", "int64", 3)},
    ],
)
def test_tensorflow_rejects_the_same_feature_sets(tf, features):
    from test_parse_differential import enc_example, to_tf_spec

    with pytest.raises(Exception):
        tf.io.parse_example(tf.constant([enc_example([])]), to_tf_spec(tf, features))


def test_bad_constructor_arguments():
    with pytest.raises(tfrx.SpecError):
        R(tfrx.int64, value_key="")
    with pytest.raises(tfrx.SpecError):
        R(tfrx.int64, row_splits_dtype=np.float32)
    with pytest.raises(tfrx.SpecError):
        R(tfrx.int64, partitions=[object()])
    with pytest.raises(tfrx.SpecError):
        R.UniformRowLength(-1)
    with pytest.raises(tfrx.SpecError):
        tfrx.FixedLenFeature(None, tfrx.int64)
    with pytest.raises(tfrx.SpecError):
        tfrx.FixedLenFeature([-1], tfrx.int64)
    with pytest.raises(tfrx.SpecError):
        tfrx.features_from_json('{"features": {"a": {"type": "Nope"}}}')


def test_spec_error_is_a_value_error():
    assert issubclass(tfrx.SpecError, ValueError) and issubclass(tfrx.SpecError, tfrx.TfrxError)
