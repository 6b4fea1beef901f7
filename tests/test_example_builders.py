"""Builders: Python/NumPy values -> Feature kinds, overrides, raw tensors."""

from __future__ import annotations

import numpy as np
import pytest

import tfrx
from tfrx import train


def kinds_and_values(example: train.Example) -> dict:
    out = {}
    for name, f in example.features.feature.items():
        kind = f.WhichOneof("kind")
        out[name] = (kind, list(getattr(f, kind).value))
    return out


def test_type_mapping():
    ex = tfrx.make_example(
        {
            "b": b"\x00raw\xff",
            "s": "héllo",
            "bl": [b"a", "b"],
            "flag": True,
            "i": 7,
            "npi": np.uint16(9),
            "f": 0.5,
            "npf": np.float16(1.5),
            "arr": np.arange(6, dtype=np.int8).reshape(2, 3),
            "farr": np.array([[1.0, 2.0], [3.0, 4.0]]),
            "u64": np.array([2**63 - 1], dtype=np.uint64),
            "mixed": [1, 2.5],
            "nested": [[1, 2], [3]],
            "absent": None,
            "sarr": np.array([b"x", b"yy"]),
            "uarr": np.array(["é", "z"]),
        }
    )
    got = kinds_and_values(ex)
    assert got["b"] == ("bytes_list", [b"\x00raw\xff"])
    assert got["s"] == ("bytes_list", ["héllo".encode()])
    assert got["bl"] == ("bytes_list", [b"a", b"b"])
    assert got["flag"] == ("int64_list", [1])
    assert got["i"] == ("int64_list", [7])
    assert got["npi"] == ("int64_list", [9])
    assert got["f"] == ("float_list", [0.5])
    assert got["npf"] == ("float_list", [1.5])
    assert got["arr"] == ("int64_list", [0, 1, 2, 3, 4, 5])  # row-major
    assert got["farr"] == ("float_list", [1.0, 2.0, 3.0, 4.0])
    assert got["u64"] == ("int64_list", [2**63 - 1])
    assert got["mixed"] == ("float_list", [1.0, 2.5])
    assert got["nested"] == ("int64_list", [1, 2, 3])
    assert "absent" not in got
    assert got["sarr"] == ("bytes_list", [b"x", b"yy"])
    assert got["uarr"] == ("bytes_list", ["é".encode(), b"z"])


def test_float_values_are_float32_on_the_wire():
    ex = tfrx.make_example({"x": 0.1, "big": 1e300})
    d = tfrx.decode_example(ex)
    assert d["x"].dtype == np.float32 and d["x"][0] == np.float32(0.1)
    assert np.isinf(d["big"][0])


def test_overrides_and_helpers():
    ex = tfrx.make_example({"e": [], "i": [1.0, 2.0], "s": 3}, kinds={"e": "int64", "i": "float", "s": "float"})
    got = kinds_and_values(ex)
    assert got == {"e": ("int64_list", []), "i": ("float_list", [1.0, 2.0]), "s": ("float_list", [3.0])}
    assert tfrx.int64_feature([]) == train.Feature(int64_list=train.Int64List())
    assert tfrx.float_feature(np.ones(2)).float_list.value == [1.0, 1.0]
    assert tfrx.bytes_feature("a").bytes_list.value == [b"a"]
    assert tfrx.make_example({"x": tfrx.int64_feature(5)}).features.feature["x"].int64_list.value == [5]


@pytest.mark.parametrize(
    ("value", "kinds", "error", "match"),
    [
        ([], None, ValueError, "empty list"),
        (np.array([2**63], dtype=np.uint64), None, OverflowError, "does not fit in int64"),
        ([2**64], None, OverflowError, "does not fit in int64"),
        ([1.5], {"x": "int64"}, TypeError, "expected integers"),
        (b"a", {"x": "float"}, TypeError, "expected numbers"),
        ({"a": 1}, None, TypeError, "cannot store"),
        (object(), None, TypeError, "cannot store"),
        (np.array([1j]), None, TypeError, "dtype"),
        (1, {"x": "complex"}, ValueError, "unknown feature kind"),
    ],
)
def test_errors_are_clear(value, kinds, error, match):
    with pytest.raises(error, match=match):
        tfrx.make_example({"x": value}, kinds=kinds)


def test_foreign_feature_messages_are_accepted(tf):
    f = tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))
    ex = tfrx.make_example({"x": f})
    assert ex.features.feature["x"].int64_list.value == [1, 2]
    assert tfrx.decode_example(tf.train.Example(features=tf.train.Features(feature={"x": f})))["x"].tolist() == [1, 2]


def test_make_sequence_example():
    seq = tfrx.make_sequence_example(
        {"id": b"v1"},
        {"frames": np.arange(6).reshape(3, 2), "words": [[b"a"], [b"b", b"c"]], "none": None},
        kinds={"empty": "float"},
    )
    context, lists = tfrx.decode_sequence_example(seq)
    assert context == {"id": [b"v1"]}
    assert [s.tolist() for s in lists["frames"]] == [[0, 1], [2, 3], [4, 5]]
    assert lists["words"] == [[b"a"], [b"b", b"c"]]
    with pytest.raises(TypeError, match="sequence of steps"):
        tfrx.make_sequence_example(feature_lists={"x": 5})


# ---------------------------------------------------------------- columnar input forms
def test_encode_examples_input_forms_match_builders():
    n = 3
    columns = {
        "dense": np.arange(n * 4, dtype=np.uint8).reshape(n, 2, 2),
        "scalar": np.array([0.5, 1.5, 2.5]),
        "flags": np.array([True, False, True]),
        "ragged": tfrx.Ragged(np.arange(3, dtype=np.int32), row_lengths=[2, 0, 1]),
        "ragged2d": tfrx.Ragged(np.ones((2, 2), np.float32), row_splits=[0, 1, 1, 2]),
        "nested": tfrx.Ragged(tfrx.Ragged([b"a", b"b", b"c"], row_lengths=[1, 2]), row_lengths=[1, 0, 1]),
        "texts": np.array(["a", "bé", ""]),
        "objs": np.array([b"x", None, b"z"], dtype=object),
        "lists": [[1, 2], None, 3],
        "masked": np.ma.MaskedArray([1, 2, 3], mask=[False, True, False]),
    }
    encoded = tfrx.encode_examples(columns, present={"scalar": [True, True, False]})
    expected_rows = [
        {"dense": [0, 1, 2, 3], "scalar": [0.5], "flags": [1], "ragged": [0, 1], "ragged2d": [1.0, 1.0],
         "nested": [b"a"], "texts": [b"a"], "objs": [b"x"], "lists": [1, 2], "masked": [1]},
        {"dense": [4, 5, 6, 7], "scalar": [1.5], "flags": [0], "ragged": [], "ragged2d": [],
         "nested": [], "texts": ["bé".encode()]},
        {"dense": [8, 9, 10, 11], "flags": [1], "ragged": [2], "ragged2d": [1.0, 1.0],
         "nested": [b"b", b"c"], "texts": [b""], "objs": [b"z"], "lists": [3], "masked": [3]},
    ]  # fmt: skip
    kinds = {
        "scalar": "float",
        "ragged2d": "float",
        "nested": "bytes",
        "texts": "bytes",
        "objs": "bytes",
        "ragged": "int64",
    }
    for data, row in zip(encoded, expected_rows):
        assert data == tfrx.make_example(row, kinds=kinds).SerializeToString(deterministic=True)


def test_encode_examples_batch_and_errors():
    batch = tfrx.encode_examples({"a": np.arange(4)}, as_batch=True)
    assert isinstance(batch, tfrx.RecordBatch) and len(batch) == 4 and batch.is_contiguous()
    assert [tfrx.decode_example(r)["a"][0] for r in batch] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="has 2 examples"):
        tfrx.encode_examples({"a": np.arange(3), "b": np.arange(2)})
    with pytest.raises(OverflowError):
        tfrx.encode_examples({"a": np.array([2**64 - 1], np.uint64)})
    with pytest.raises(TypeError, match="mixes"):
        tfrx.encode_examples({"a": [1, b"x"]})
    mixed = tfrx.encode_examples({"a": [1, [2.5, 3]]})  # ints beside floats: a float column
    assert [tfrx.decode_example(r)["a"].tolist() for r in mixed] == [[1.0], [2.5, 3.0]]
    with pytest.raises(ValueError, match="row_splits"):
        tfrx.Ragged(np.arange(3), row_splits=[0, 2])
    with pytest.raises(ValueError, match="present"):
        tfrx.encode_examples({"a": np.arange(3)}, present={"a": [True]})
    assert tfrx.encode_examples({}) == []


def test_native_encoder_rejects_inconsistent_columns():
    from tfrx._native import EncodeColumn, FeatureKind, encode_examples, encode_sequence_examples

    vals = np.arange(3, dtype=np.int64)

    def int64_column(splits, steps=None):
        return EncodeColumn(
            "a",
            FeatureKind.INT64,
            values=vals,
            splits=np.array(splits, np.int64),
            steps=None if steps is None else np.array(steps, np.int64),
        )

    with pytest.raises(ValueError, match="row splits"):
        encode_examples([int64_column([0, 5])], 1)
    with pytest.raises(ValueError, match="row splits"):
        encode_examples([int64_column([2, 1])], 1)
    with pytest.raises(ValueError, match="offsets"):
        encode_examples(
            [
                EncodeColumn(
                    "a",
                    FeatureKind.BYTES,
                    values=b"ab",
                    offsets=np.array([0, 9], np.int64),
                    splits=np.array([0, 1], np.int64),
                )
            ],
            1,
        )
    with pytest.raises(ValueError, match="step"):
        encode_sequence_examples([], [int64_column([0, 3], steps=[0, 2])], 1)
    with pytest.raises(ValueError, match="unknown kind"):
        encode_examples([EncodeColumn("a", FeatureKind.NONE, values=vals, splits=np.array([0, 3], np.int64))], 1)
    with pytest.raises(TypeError, match="EncodeColumn"):  # the positional tuples of before are refused
        encode_examples([("a", 3, vals, None, np.array([0, 3], np.int64), None, None)], 1)


def test_encode_sequence_examples_forms():
    frames = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    words = tfrx.Ragged(tfrx.Ragged([b"a", b"b", b"c"], row_lengths=[1, 0, 2]), row_lengths=[2, 1])
    out = tfrx.encode_sequence_examples(
        context={"id": [b"x", b"y"]}, feature_lists={"frames": frames, "words": words, "tags": [[1, [2, 3]], None]}
    )
    for i, data in enumerate(out):
        expect = tfrx.make_sequence_example(
            {"id": [b"x", b"y"][i]},
            {
                "frames": frames[i],
                "words": [[[b"a"], []], [[b"b", b"c"]]][i],
                "tags": [[1, [2, 3]], None][i],
            },
            kinds={"words": "bytes"},
        )
        assert data == expect.SerializeToString(deterministic=True)
    batch = tfrx.encode_sequence_examples(feature_lists={"f": frames}, as_batch=True)
    assert batch.to_list() == tfrx.encode_sequence_examples(feature_lists={"f": frames})


def test_key_order_matches_protobuf_deterministic_order():
    keys = ["", "a", "ab", "a\x00", "b", "B", "é", "😀"]
    data = tfrx.encode_examples({k: [1] for k in keys})[0]
    msg = tfrx.make_example({k: 1 for k in keys})
    assert data == msg.SerializeToString(deterministic=True)


# ---------------------------------------------------------------- raw tensors
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", ">i4"])
def test_encode_tensor_round_trip(dtype):
    arr = (np.arange(24) % 3).astype(dtype).reshape(2, 3, 4)
    ex = tfrx.make_example({**tfrx.encode_tensor(arr, "image"), "label": 1})
    back = tfrx.decode_tensor(tfrx.decode_example(ex), "image")
    assert back.shape == arr.shape and back.dtype == arr.dtype.newbyteorder("=")
    np.testing.assert_array_equal(back, arr)


def test_decode_raw_matches_tensorflow(tf):
    data = np.arange(6, dtype=np.int32).tobytes()
    for dtype, little in [(np.int32, True), (np.int16, False), (np.float32, True), (np.uint8, True)]:
        ours = tfrx.decode_raw(data, dtype, little_endian=little)
        theirs = tf.io.decode_raw(data, tf.as_dtype(dtype), little_endian=little).numpy()
        np.testing.assert_array_equal(ours, theirs)
    batch = [data, data[::-1]]
    np.testing.assert_array_equal(tfrx.decode_raw(batch, tf.float32), tf.io.decode_raw(batch, tf.float32).numpy())
    np.testing.assert_array_equal(
        tfrx.decode_raw([b"abc", b"d"], "uint8", fixed_length=2),
        tf.io.decode_raw([b"abc", b"d"], tf.uint8, fixed_length=2).numpy(),
    )


def test_decode_raw_errors():
    with pytest.raises(tfrx.DecodeError, match="multiple"):
        tfrx.decode_raw(b"abc", "int32")
    with pytest.raises(tfrx.DecodeError, match="equal length"):
        tfrx.decode_raw([b"ab", b"abcd"], "uint8")
    out = tfrx.decode_raw(np.array([[b"ab", b"cd"]], dtype=object), "uint8")
    assert out.shape == (1, 2, 2)
    with pytest.raises(TypeError):
        tfrx.encode_tensor(np.array(["a"]), "x")


def test_encoded_batch_goes_through_the_writer(tmp_path, tf):
    ids = np.arange(20, dtype=np.int64).reshape(5, 4)
    batch = tfrx.encode_examples({"ids": ids, "name": [b"a", b"b", None, b"d", b"e"]}, as_batch=True)
    path = tmp_path / "x.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as writer:
        assert writer.write_many(batch) == 5
    records = list(tfrx.read_records(path))
    assert records == batch.to_list()
    assert [tfrx.decode_example(r)["ids"].tolist() for r in records] == ids.tolist()
    theirs = [r.numpy() for r in tf.data.TFRecordDataset(str(path))]
    assert theirs == records
