"""tfrx.validate anomalies (TFDV's validate_statistics rules), comparators, and the tfrx CLI commands."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("tensorflow_metadata")

from google.protobuf import text_format  # noqa: E402
from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2  # noqa: E402

import tfrx  # noqa: E402
from tfrx.cli import main  # noqa: E402
from tfrx.validate import (  # noqa: E402
    StatsOptions,
    anomalies_to_dicts,
    format_anomalies,
    infer_schema,
    load_anomalies,
    load_statistics,
    statistics_from_records,
    validate_statistics,
)
from tfrx.validate.comparators import histogram_js_divergence, linf_distance, normalized_abs_difference  # noqa: E402

A = anomalies_pb2.AnomalyInfo


def _ser(features, kinds=None) -> bytes:
    return tfrx.codec.make_example(features, kinds=kinds).SerializeToString()


def _stats(rows, **kw):
    return statistics_from_records([_ser(r) for r in rows], StatsOptions(**kw))


def _types(anomalies, name):
    return [r.type for r in anomalies.anomaly_info[name].reason]


TRAIN = [
    {"color": [b"red" if i % 3 else b"blue"], "n": [i % 5], "x": [float(i)], "tags": [b"a", b"b"]} for i in range(30)
]


def test_no_anomalies_on_the_data_the_schema_came_from():
    stats = _stats(TRAIN)
    anomalies = validate_statistics(stats, infer_schema(stats))
    assert not anomalies.anomaly_info and not anomalies.data_missing
    assert anomalies.baseline == infer_schema(stats)
    assert format_anomalies(anomalies) == "No anomalies found.\n"


def test_missing_new_type_domain_and_value_count_anomalies():
    schema = infer_schema(_stats(TRAIN))
    serving = [{"color": [b"green"], "n": [1.5], "tags": [b"a", b"b", b"c"], "extra": [1]} for _ in range(4)]
    serving += [{"color": [b"red"], "n": [2.5], "tags": [b"a", b"b"]} for _ in range(6)]
    anomalies = validate_statistics(_stats(serving), schema)
    assert _types(anomalies, "x") == [A.SCHEMA_MISSING_COLUMN]
    assert _types(anomalies, "extra") == [A.SCHEMA_NEW_COLUMN]
    assert _types(anomalies, "n") == [A.UNEXPECTED_DATA_TYPE]
    assert anomalies.anomaly_info["n"].description == "Expected data of type: INT but got FLOAT"
    assert _types(anomalies, "color") == [A.ENUM_TYPE_UNEXPECTED_STRING_VALUES]
    assert anomalies.anomaly_info["color"].description == (
        "Examples contain values missing from the schema: green (~40%). "
    )
    assert _types(anomalies, "tags") == [A.INVALID_FEATURE_SHAPE, A.ENUM_TYPE_UNEXPECTED_STRING_VALUES]
    dicts = anomalies_to_dicts(anomalies)
    assert [d["feature"] for d in dicts] == ["color", "extra", "n", "tags", "x"]
    assert dicts[0]["reasons"][0]["type"] == "ENUM_TYPE_UNEXPECTED_STRING_VALUES"
    json.dumps(dicts)
    table = format_anomalies(anomalies)
    assert "Unexpected string values" in table and "Column dropped" in table


def test_presence_value_count_and_ranges():
    schema = text_format.Parse(
        """
        feature { name: "a" type: INT presence { min_fraction: 1.0 min_count: 1 } value_count { min: 1 max: 2 }
                  int_domain { min: 0 max: 10 } }
        feature { name: "f" type: FLOAT float_domain { min: 0 max: 1 disallow_nan: true } }
        feature { name: "b" type: INT bool_domain { } }
        feature { name: "u" type: BYTES unique_constraints { min: 5 } }
        feature { name: "gone" type: INT presence { min_count: 1 } }
        feature { name: "opt" type: INT }
        """,
        schema_pb2.Schema(),
    )
    rows = [
        {"a": [1, 2, 30], "f": [2.0, math.nan], "b": [2], "u": [b"k"]},
        {"a": [-1], "f": [0.5], "b": [0], "u": [b"k"]},
    ]
    rows.append({"f": [0.1]})
    anomalies = validate_statistics(_stats(rows), schema)
    assert _types(anomalies, "a") == [
        A.FEATURE_TYPE_HIGH_NUMBER_VALUES,
        A.FEATURE_TYPE_LOW_FRACTION_PRESENT,
        A.INT_TYPE_SMALL_INT,
        A.INT_TYPE_BIG_INT,
    ]
    info = anomalies.anomaly_info["a"]
    assert info.short_description == "Multiple errors"
    assert "Unexpectedly small value: -1." in info.description and "Unexpectedly large value: 30." in info.description
    assert _types(anomalies, "f") == [A.FLOAT_TYPE_BIG_FLOAT, A.FLOAT_TYPE_HAS_NAN]
    assert _types(anomalies, "b") == [A.BOOL_TYPE_BIG_INT]
    assert _types(anomalies, "u") == [A.FEATURE_TYPE_LOW_UNIQUE]
    assert _types(anomalies, "gone") == [A.SCHEMA_MISSING_COLUMN]
    assert "opt" not in anomalies.anomaly_info  # not required


def test_data_missing():
    empty = statistics_pb2.DatasetFeatureStatisticsList()
    empty.datasets.add(name="All Examples", num_examples=0)
    anomalies = validate_statistics(empty, schema_pb2.Schema())
    assert anomalies.data_missing
    assert format_anomalies(anomalies).startswith("No data")


def _with_comparators(schema, linf=None, js=None, skew=False):
    for f in schema.feature:
        comp = f.skew_comparator if skew else f.drift_comparator
        if linf is not None and f.type == schema_pb2.BYTES:
            comp.infinity_norm.threshold = linf
        if js is not None and f.type == schema_pb2.FLOAT:
            comp.jensen_shannon_divergence.threshold = js
    return schema


def test_drift_and_skew_comparators():
    rng = np.random.default_rng(0)
    base = [{"c": [b"a" if i % 2 else b"b"], "v": [float(rng.normal())]} for i in range(400)]
    same = [{"c": [b"a" if i % 2 else b"b"], "v": [float(rng.normal())]} for i in range(400)]
    moved = [{"c": [b"a" if i % 5 else b"b"], "v": [float(rng.normal(3, 1))]} for i in range(400)]
    s_base, s_same, s_moved = _stats(base), _stats(same), _stats(moved)
    schema = _with_comparators(infer_schema(s_base), linf=0.1, js=0.1)
    calm = validate_statistics(s_same, schema, previous_statistics=s_base)
    assert not calm.anomaly_info
    assert len(calm.drift_skew_info) == 2
    drift = validate_statistics(s_moved, schema, previous_statistics=s_base)
    assert _types(drift, "c") == [A.COMPARATOR_L_INFTY_HIGH]
    assert drift.anomaly_info["c"].description.startswith(
        "The Linfty distance between current and previous is 0.3 (up to six significant digits), above the threshold 0.1."
    )
    assert _types(drift, "v") == [A.COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH]
    m = {tuple(i.path.step): i.drift_measurements[0] for i in drift.drift_skew_info}
    assert m[("c",)].value == pytest.approx(0.3) and m[("c",)].threshold == pytest.approx(0.1)
    assert m[("v",)].value > 0.5
    skew_schema = _with_comparators(infer_schema(s_base), linf=0.1, skew=True)
    skew = validate_statistics(s_base, skew_schema, serving_statistics=s_moved)
    assert "between training and serving" in skew.anomaly_info["c"].description
    assert skew.drift_skew_info[0].skew_measurements[0].type == anomalies_pb2.DriftSkewInfo.Measurement.L_INFTY
    # a comparator with no control data at all measures nothing; with control data lacking the feature, says so
    assert not validate_statistics(s_moved, schema).anomaly_info
    other = _stats([{"zzz": [1]}])
    missing = validate_statistics(s_moved, schema, previous_statistics=other)
    assert _types(missing, "c") == [A.COMPARATOR_CONTROL_DATA_MISSING]


def test_comparator_values():
    # a: 0.5 vs 0.75, b: 0.5 vs 0.25; a tie goes to the last value in order, as in TFDV
    assert linf_distance({"a": 1, "b": 1}, {"a": 3, "b": 1}) == ("b", pytest.approx(0.25))
    assert linf_distance({"a": 1, "b": 1}, {"a": 4, "b": 1, "c": 5}) == ("c", pytest.approx(0.5))
    assert normalized_abs_difference({"a": 2}, {"a": 6}) == ("a", pytest.approx(0.5))
    h = statistics_pb2.Histogram()
    for lo in range(10):
        h.buckets.add(low_value=lo, high_value=lo + 1, sample_count=10)
    assert histogram_js_divergence(h, h) == pytest.approx(0.0)
    far = statistics_pb2.Histogram()
    far.buckets.add(low_value=100, high_value=101, sample_count=5)
    assert histogram_js_divergence(h, far) == pytest.approx(1.0)
    shifted = statistics_pb2.Histogram()
    for lo in range(10):
        shifted.buckets.add(low_value=lo + 0.5, high_value=lo + 1.5, sample_count=10)
    js = histogram_js_divergence(h, shifted)
    assert 0 < js < 0.1


def test_corpus_tfdv_statistics_validate(corpus_dir):
    stats = load_statistics(corpus_dir / "mct__tfdv_Split-eval_stats_tfrecord")
    schema = infer_schema(stats)
    assert not validate_statistics(stats, schema).anomaly_info
    # tighten one domain: the values TFDV counted now fall outside it
    for d in schema.string_domain:
        if d.name == "data_channel":
            del d.value[:3]
    anomalies = validate_statistics(stats, schema)
    assert _types(anomalies, "data_channel") == [A.ENUM_TYPE_UNEXPECTED_STRING_VALUES]


# ------------------------------------------------------------------ the CLI
def _write_records(path, rows):
    tfrx.io.write_records(str(path), [_ser(r) for r in rows])


def test_cli_stats_schema_validate(tmp_path, capsys):
    train, serve = tmp_path / "train.tfrecord", tmp_path / "serve.tfrecord"
    _write_records(train, TRAIN)
    _write_records(serve, [{"color": [b"green"], "n": [1], "x": [1.0], "tags": [b"a", b"b"]}] * 3)
    assert main(["stats", "--format", "tfdv", "-o", str(tmp_path / "stats.pb"), str(train)]) == 0
    stats = load_statistics(tmp_path / "stats.pb")
    assert stats.datasets[0].num_examples == 30
    assert main(["schema", "--infer", "-o", str(tmp_path / "schema.pbtxt"), str(train)]) == 0
    assert main(["schema", "--infer", "--from-stats", str(tmp_path / "stats.pb")]) == 0
    assert 'name: "color"' in capsys.readouterr().out
    assert main(["validate", "--schema", str(tmp_path / "schema.pbtxt"), str(train)]) == 0
    assert "No anomalies found." in capsys.readouterr().out
    assert main(["validate", "--schema", str(tmp_path / "schema.pbtxt"), str(tmp_path / "stats.pb")]) == 0
    capsys.readouterr()
    out_file = tmp_path / "anomalies.pbtxt"
    assert main(["validate", "--schema", str(tmp_path / "schema.pbtxt"), "-o", str(out_file), str(serve)]) == 1
    assert "Unexpected string values" in capsys.readouterr().out
    assert list(load_anomalies(out_file).anomaly_info) == ["color"]
    assert main(["validate", "--json", "--schema", str(tmp_path / "schema.pbtxt"), str(serve)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["anomalies"][0]["feature"] == "color"
    assert main(["stats", "--format", "tfdv", "--slice-feature", "n", str(train)]) == 0
    assert 'name: "n_4"' in capsys.readouterr().out


def test_cli_drift_and_usage_errors(tmp_path, capsys):
    a, b = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    _write_records(a, [{"c": [b"x" if i % 2 else b"y"]} for i in range(20)])
    _write_records(b, [{"c": [b"x"]} for i in range(20)])
    schema = _with_comparators(infer_schema(statistics_from_records(tfrx.io.read_records(str(a)))), linf=0.2)
    path = tmp_path / "schema.pbtxt"
    path.write_text(text_format.MessageToString(schema))
    assert main(["validate", "--schema", str(path), "--previous", str(a), str(b)]) == 1
    assert "High Linfty distance between current and previous" in capsys.readouterr().out
    assert main(["validate", "--schema", str(tmp_path / "none.pbtxt"), str(a)]) == 2
    assert "no such schema file" in capsys.readouterr().err
    assert main(["stats", "-o", str(tmp_path / "x.pb"), str(a)]) == 2
    assert "--format tfdv" in capsys.readouterr().err
    junk = tmp_path / "junk.pb"
    junk.write_bytes(b"\x00\x01garbage")
    assert main(["validate", "--schema", str(path), str(junk)]) == 2
    assert "junk.pb" in capsys.readouterr().err
