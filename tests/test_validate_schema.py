"""tfrx.validate schema inference (TFDV's rules) and schema_to_spec (TFX's mapping)."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorflow_metadata")

from google.protobuf import text_format  # noqa: E402
from tensorflow_metadata.proto.v0 import schema_pb2  # noqa: E402

import tfrx  # noqa: E402
from tfrx.errors import SpecError  # noqa: E402
from tfrx.validate import (  # noqa: E402
    generate_statistics,
    infer_schema,
    load_schema,
    load_statistics,
    schema_to_spec,
    statistics_from_records,
    write_schema,
)


def _ser(features, kinds=None) -> bytes:
    return tfrx.codec.make_example(features, kinds=kinds).SerializeToString()


def _schema_of(rows, **kw):
    return infer_schema(statistics_from_records([_ser(r) for r in rows]), **kw)


def _feature(schema, name):
    return next(f for f in schema.feature if f.name == name)


def test_presence_shape_and_value_counts():
    rows = [
        {"always1": [1], "always3": [1.0, 2.0, 3.0], "var": [b"a"], "some": [1]},
        {"always1": [2], "always3": [4.0, 5.0, 6.0], "var": [b"b", b"c"]},
    ]
    schema = _schema_of(rows)
    a1 = _feature(schema, "always1")
    assert a1.type == schema_pb2.INT
    assert a1.presence.min_fraction == 1.0 and a1.presence.min_count == 1
    assert [d.size for d in a1.shape.dim] == [1]
    assert [d.size for d in _feature(schema, "always3").shape.dim] == [3]
    var = _feature(schema, "var")
    assert not var.HasField("shape") and var.value_count.min == 1 and not var.value_count.HasField("max")
    some = _feature(schema, "some")
    assert not some.presence.HasField("min_fraction") and some.presence.min_count == 1
    assert some.value_count.min == 1 and some.value_count.max == 1 and not some.HasField("shape")
    no_shape = _schema_of(rows, infer_feature_shape=False)
    assert _feature(no_shape, "always1").value_count.max == 1 and not _feature(no_shape, "always1").HasField("shape")


def test_domains():
    rows = [
        {
            "flag": [i % 2],
            "word": [b"yes" if i % 3 else b"no"],
            "num": [b"%d" % i],
            "yn": [b"true" if i % 2 else b"false"],
        }
        for i in range(20)
    ] + [{"bin": [b"\xff\xfe"]}]
    schema = _schema_of(rows)
    assert _feature(schema, "flag").HasField("bool_domain")
    yn = _feature(schema, "yn").bool_domain
    assert (yn.true_value, yn.false_value) == ("true", "false")
    assert _feature(schema, "num").HasField("int_domain")
    word = _feature(schema, "word")
    assert word.domain == "word"
    assert [list(d.value) for d in schema.string_domain if d.name == "word"] == [["no", "yes"]]
    assert _feature(schema, "bin").WhichOneof("domain_info") is None  # not UTF-8: no domain
    many = _schema_of([{"w": [b"v%03d" % i]} for i in range(101)])
    assert _feature(many, "w").WhichOneof("domain_info") is None and not many.string_domain
    assert (
        _feature(_schema_of([{"w": [b"v%03d" % i]} for i in range(101)], max_string_domain_size=200), "w").domain == "w"
    )


def test_sequence_feature_lists_become_a_struct():
    recs = [
        tfrx.codec.make_sequence_example({"id": [i]}, {"tok": [[1, 2], [3, 4]]}).SerializeToString() for i in range(3)
    ]
    schema = infer_schema(statistics_from_records(recs, sequence=True))
    seq = _feature(schema, "##SEQUENCE##")
    assert seq.type == schema_pb2.STRUCT
    tok = seq.struct_domain.feature[0]
    assert tok.name == "tok" and [d.size for d in tok.shape.dim] == [2, 2]
    ctx, lists = schema_to_spec(schema)
    assert ctx == {"id": tfrx.FixedLenFeature([1], tfrx.int64)}
    assert lists == {"tok": tfrx.FixedLenSequenceFeature([2], tfrx.int64)}
    parsed_ctx, parsed_seq, _ = tfrx.parse_sequence_example(recs, ctx, lists)
    assert parsed_seq["tok"].shape == (3, 2, 2)


def test_tfdv_written_statistics_infer(corpus_dir):
    stats = load_statistics(corpus_dir / "mct__tfdv_Split-eval_stats_tfrecord")
    schema = infer_schema(stats)
    channel = _feature(schema, "data_channel")
    assert channel.type == schema_pb2.BYTES and channel.domain == "data_channel"
    assert len(next(d for d in schema.string_domain if d.name == "data_channel").value) == 7
    assert len(schema.feature) == len(stats.datasets[0].features)


def test_schema_round_trip_and_spec_parses_corpus(tmp_path, corpus_dir):
    path = corpus_dir / "tfx__penguin_train_data_tfrecord-00000-of-00001.gz"
    schema = infer_schema(generate_statistics(str(path)))
    write_schema(schema, tmp_path / "schema.pbtxt")
    again = load_schema(tmp_path / "schema.pbtxt")
    assert again == schema
    spec = schema_to_spec(tmp_path / "schema.pbtxt")
    assert spec["species"] == tfrx.FixedLenFeature([1], tfrx.int64)
    records = list(tfrx.io.read_records(str(path)))
    parsed = tfrx.parse_example(records, spec)
    assert parsed["body_mass_g"].shape == (234, 1)


SCHEMA_TEXT = """
feature { name: "fixed" type: FLOAT presence { min_fraction: 1.0 } shape { dim { size: 2 } } }
feature { name: "var" type: BYTES value_count { min: 1 } }
feature { name: "maybe" type: INT presence { min_fraction: 0.5 } value_count { min: 1 max: 1 } }
feature { name: "old" type: INT lifecycle_stage: DEPRECATED }
feature { name: "serving_only" type: INT not_in_environment: "TRAINING" }
feature { name: "idx" type: INT }
feature { name: "val" type: FLOAT }
feature { name: "rv" type: INT }
feature { name: "rl" type: INT }
feature { name: "d" type: INT }
sparse_feature { name: "sp" index_feature { name: "idx" } value_feature { name: "val" } dense_shape { dim { size: 10 } } }
tensor_representation_group {
  key: ""
  value {
    tensor_representation {
      key: "rag"
      value { ragged_tensor { feature_path { step: "rv" } partition { row_length: "rl" } } }
    }
    tensor_representation {
      key: "dense_d"
      value { dense_tensor { column_name: "d" shape { dim { size: 1 } } default_value { int_value: -1 } } }
    }
  }
}
"""


def test_schema_to_spec_follows_tfx_mapping():
    schema = text_format.Parse(SCHEMA_TEXT, schema_pb2.Schema())
    spec = schema_to_spec(schema)
    assert spec["fixed"] == tfrx.FixedLenFeature([2], tfrx.float32)
    assert spec["var"] == tfrx.VarLenFeature(tfrx.string)
    assert spec["maybe"] == tfrx.VarLenFeature(tfrx.int64)
    assert spec["sp"] == tfrx.SparseFeature("idx", "val", tfrx.float32, 10)
    assert spec["dense_d"] == tfrx.FixedLenFeature([1], tfrx.int64, default_value=-1)
    rag = spec["rag"]
    assert isinstance(rag, tfrx.RaggedFeature) and rag.value_key == "rv" and len(rag.partitions) == 1
    assert "old" not in spec and "idx" not in spec and "val" not in spec and "rv" not in spec and "d" not in spec
    assert "serving_only" in spec
    assert "serving_only" not in schema_to_spec(schema, environment="TRAINING")
    # the spec parses records
    rec = _ser({"fixed": [1.0, 2.0], "var": [b"x"], "idx": [3], "val": [0.5], "rv": [1, 2, 3], "rl": [2, 1]})
    out = tfrx.parse_example([rec], {k: v for k, v in spec.items() if k != "serving_only"})
    assert out["dense_d"].tolist() == [[-1]]
    assert out["sp"].to_dense().tolist() == [[0, 0, 0, 0.5, 0, 0, 0, 0, 0, 0]]
    assert out["rag"].to_list() == [[[1, 2], [3]]]
    schema.represent_variable_length_as_ragged = True
    assert schema_to_spec(schema)["var"] == tfrx.RaggedFeature(tfrx.string)


def test_schema_to_spec_refuses_what_tfx_refuses():
    bad = text_format.Parse('feature { name: "x" type: INT shape { dim { size: 1 } } }', schema_pb2.Schema())
    with pytest.raises(SpecError, match="min_fraction"):
        schema_to_spec(bad)
    untyped = text_format.Parse('feature { name: "x" }', schema_pb2.Schema())
    with pytest.raises(SpecError, match="TYPE_UNKNOWN"):
        schema_to_spec(untyped)
    missing = text_format.Parse(
        'tensor_representation_group { key: "" value { tensor_representation { key: "t" value { varlen_sparse_tensor '
        '{ column_name: "nope" } } } } }',
        schema_pb2.Schema(),
    )
    with pytest.raises(SpecError, match="'nope'"):
        schema_to_spec(missing)


def test_load_schema_errors(tmp_path):
    p = tmp_path / "bad.pbtxt"
    p.write_bytes(b"feature { nonsense")
    with pytest.raises(ValueError, match="bad.pbtxt"):
        load_schema(p)
