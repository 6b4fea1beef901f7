"""tfrx.infer_features: specs proposed from records parse those records."""

from __future__ import annotations

import pytest
from test_parse_differential import enc_example, enc_feature
from test_parse_sequence import enc_sequence_example

import tfrx


def test_example_inference():
    recs = [
        enc_example(
            [
                ("id", enc_feature("int64", [1])),
                ("emb", enc_feature("float", [1, 2, 3])),
                ("tags", enc_feature("bytes", [b"a"])),
                ("opt", enc_feature("int64", [4])),
                ("gone", enc_feature(None, [])),
            ]
        ),
        enc_example(
            [
                ("id", enc_feature("int64", [2])),
                ("emb", enc_feature("float", [4, 5, 6], packed=False)),
                ("tags", enc_feature("bytes", [b"b", b"c"])),
                ("opt", enc_feature(None, [])),
            ]
        ),
    ]
    spec = tfrx.infer_features(recs)
    assert spec == {
        "emb": tfrx.FixedLenFeature([3], tfrx.float32),
        "id": tfrx.FixedLenFeature([], tfrx.int64),
        "opt": tfrx.VarLenFeature(tfrx.int64),
        "tags": tfrx.VarLenFeature(tfrx.string),
    }
    out = tfrx.parse_example(recs, spec)
    assert out["emb"].shape == (2, 3) and out["id"].tolist() == [1, 2]
    assert repr(spec["id"]) == "tfrx.FixedLenFeature(shape=[], dtype=tfrx.int64)"
    assert tfrx.features_from_json(tfrx.features_to_json(spec)) == spec
    assert tfrx.infer_features(iter(recs), max_records=1)["tags"] == tfrx.FixedLenFeature([], tfrx.string)
    assert tfrx.infer_features(tfrx.RecordBatch.from_records(recs)) == spec


def test_sequence_inference():
    recs = [
        enc_sequence_example(
            [("id", enc_feature("bytes", [b"x"])), ("n", enc_feature(None, []))],
            [
                ("f", [enc_feature("float", [1, 2]), enc_feature("float", [3, 4])]),
                ("w", [enc_feature("bytes", [b"a"]), enc_feature("bytes", [])]),
            ],
        ),
        enc_sequence_example([("id", enc_feature("bytes", [b"y"])), ("n", enc_feature("int64", [3]))], [("w", [])]),
    ]
    ctx, seq = tfrx.infer_features(recs)
    assert ctx == {"id": tfrx.FixedLenFeature([], tfrx.string), "n": tfrx.VarLenFeature(tfrx.int64)}
    assert seq == {
        "f": tfrx.FixedLenSequenceFeature([2], tfrx.float32, allow_missing=True),
        "w": tfrx.VarLenFeature(tfrx.string),
    }
    c, f, lengths = tfrx.parse_sequence_example(recs, ctx, seq)
    assert lengths["f"].tolist() == [2, 0]
    assert tfrx.features_from_json(tfrx.features_to_json((ctx, seq))) == (ctx, seq)


def test_kind_option_and_errors():
    rec = enc_example([("a", enc_feature("int64", [1]))])
    assert tfrx.infer_features([rec], kind="example") == {"a": tfrx.FixedLenFeature([], tfrx.int64)}
    with pytest.raises(tfrx.SpecError):
        tfrx.infer_features([], kind="example")
    with pytest.raises(tfrx.SpecError):
        tfrx.infer_features([rec], kind="nope")
    mixed = [rec, enc_example([("a", enc_feature("float", [1]))])]
    with pytest.raises(tfrx.SpecError, match="several kinds"):
        tfrx.infer_features(mixed)
    with pytest.raises(tfrx.DecodeError):
        tfrx.infer_features([b"\x0a\x05ab"], kind="example")


def test_paths_and_globs_read_through_read_records(tf, tmp_path):
    recs = [enc_example([("a", enc_feature("int64", [i]))]) for i in range(5)]
    for shard in range(2):
        with tf.io.TFRecordWriter(str(tmp_path / f"part-{shard}.tfrecord")) as w:
            for r in recs:
                w.write(r)
    spec = tfrx.infer_features(str(tmp_path / "part-*.tfrecord"), max_records=7)
    assert spec == {"a": tfrx.FixedLenFeature([], tfrx.int64)}
    assert tfrx.infer_features([tmp_path / "part-0.tfrecord"]) == spec
    with pytest.raises(FileNotFoundError):
        tfrx.infer_features(str(tmp_path / "nothing-*.tfrecord"))


def test_an_empty_feature_lists_field_still_makes_a_sequence_example():
    # feature_lists set to an empty message: nothing to decode, but the record is a SequenceExample
    rec = tfrx.make_sequence_example({"id": 1}, {}).SerializeToString() + b"\x12\x00"
    assert tfrx.infer_features([rec]) == ({"id": tfrx.FixedLenFeature([], tfrx.int64)}, {})
    assert tfrx.infer_features([rec], kind="example") == {"id": tfrx.FixedLenFeature([], tfrx.int64)}


def test_feature_lists_presence_follows_protobuf():
    from tfrx.parsing._infer import _has_feature_lists
    from tfrx.train import SequenceExample

    base = tfrx.make_example({"id": 1}).SerializeToString()
    cases = [
        base + b"\x12\x00",  # set, empty
        base + b"\x12\x00\x12\x00",  # set twice (messages merge)
        base + b"\x18\x05\x12\x00",  # beside an unknown varint field
        base + b"\x10\x01",  # field 2 as a varint: an unknown field, not feature_lists
        base,
        base + b"\x12\x05\x00",  # truncated
    ]
    for rec in cases:
        try:
            want = SequenceExample.FromString(rec).HasField("feature_lists")
        except Exception:  # protobuf's DecodeError
            want = False
        assert _has_feature_lists(rec) == want, rec
