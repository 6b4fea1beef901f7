"""tfrx.validate files: statistics, schema and anomalies written and read back, TFDV's and TFX's files read,
TFDV's schemas driving tfrx's parser, and the sketches' merges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("tensorflow_metadata")

import tfrx  # noqa: E402
from tfrx.cli import main  # noqa: E402
from tfrx.validate import (  # noqa: E402
    StatsOptions,
    feature_summaries,
    generate_statistics,
    infer_schema,
    load_anomalies,
    load_schema,
    load_statistics,
    schema_to_spec,
    validate_statistics,
    write_anomalies,
    write_schema,
    write_statistics,
)
from tfrx.validate.sketches import QuantileSketch, TopKSketch  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "golden" / "validate"


def test_statistics_binary_text_and_tfrecord_round_trip(tmp_path):
    stats = generate_statistics(str(GOLDEN / "generated.tfrecord"), StatsOptions(slice_feature="label"))
    write_statistics(stats, tmp_path / "stats.pb")
    write_statistics(stats, tmp_path / "stats.pbtxt")
    assert load_statistics(tmp_path / "stats.pb") == stats
    assert load_statistics(tmp_path / "stats.pbtxt") == stats
    assert (tmp_path / "stats.pbtxt").read_text().startswith("datasets {")
    # a TFRecord file of DatasetFeatureStatisticsList shards (TFX StatisticsGen's FeatureStats.pb): joined in order
    parts = []
    for ds in stats.datasets:
        one = type(stats)()
        one.datasets.append(ds)
        parts.append(one.SerializeToString())
    tfrx.io.write_records(str(tmp_path / "FeatureStats.pb"), parts)
    assert load_statistics(tmp_path / "FeatureStats.pb") == stats


def test_schema_and_anomalies_round_trip(tmp_path):
    schema = load_schema(GOLDEN / "schema_generated.pbtxt")
    write_schema(schema, tmp_path / "schema.pb", text=False)
    assert load_schema(tmp_path / "schema.pb") == schema
    anomalies = validate_statistics(generate_statistics(str(GOLDEN / "generated_b.tfrecord")), schema)
    write_anomalies(anomalies, tmp_path / "anomalies.pbtxt")
    write_anomalies(anomalies, tmp_path / "anomalies.pb", text=False)
    assert load_anomalies(tmp_path / "anomalies.pbtxt") == anomalies == load_anomalies(tmp_path / "anomalies.pb")


def test_bad_statistics_file_names_the_file(tmp_path):
    bad = tmp_path / "notstats.bin"
    bad.write_bytes(b"\x0a\xff\xff\xff")
    with pytest.raises(ValueError, match="notstats.bin"):
        load_statistics(bad)


def test_tfx_written_statistics_load(corpus_dir):
    stats = load_statistics(corpus_dir / "mct__tfdv_Split-eval_stats_tfrecord")
    assert stats.datasets[0].num_examples == 13115
    summary = feature_summaries(stats)[0]
    channel = next(f for f in summary["features"] if f["feature"] == "data_channel")
    assert channel["type"] == "STRING" and channel["unique"] == 7 and channel["top_values"][0] == ["World", 2793]
    iris = load_statistics(corpus_dir / "spotify__iris_train__stats.pb")  # a plain binary stats.pb
    assert iris.datasets[0].num_examples == 130


def test_tfdv_inferred_schemas_drive_the_parser(corpus_dir):
    """A schema.pbtxt that TFDV wrote parses the data it describes through schema_to_spec."""
    spec = schema_to_spec(GOLDEN / "schema_generated.pbtxt")
    assert spec["f"] == tfrx.FixedLenFeature([1], tfrx.float32)
    assert spec["i"] == tfrx.VarLenFeature(tfrx.int64)  # sometimes missing: VarLen, as TFX maps it
    assert spec["text"] == tfrx.VarLenFeature(tfrx.string)
    records = list(tfrx.io.read_records(str(GOLDEN / "generated.tfrecord")))
    out = tfrx.parse_example(records, spec)
    assert out["label"].shape == (3000, 1) and out["i"].dense_shape[0] == 3000
    penguin = schema_to_spec(GOLDEN / "schema_penguin.pbtxt")
    path = corpus_dir / "tfx__penguin_eval_data_tfrecord-00000-of-00001.gz"
    parsed = tfrx.parse_example(list(tfrx.io.read_records(str(path))), penguin)
    assert set(parsed) == {"body_mass_g", "culmen_depth_mm", "culmen_length_mm", "flipper_length_mm", "species"}


def test_cli_weighted_and_text_output(tmp_path, capsys):
    out = tmp_path / "stats.pbtxt"
    assert (
        main(["stats", "--format", "tfdv", "--weight-feature", "w", "-o", str(out), str(GOLDEN / "generated.tfrecord")])
        == 0
    )
    stats = load_statistics(out)
    assert stats.datasets[0].weighted_num_examples > 0
    assert main(["stats", "--format", "tfdv", "--weight-feature", "nope", str(GOLDEN / "generated.tfrecord")]) == 2
    assert "weight feature 'nope'" in capsys.readouterr().err


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=1, max_size=300), st.integers(1, 299))
def test_quantile_sketch_split_and_merged_equals_whole_below_k(values, cut):
    whole = QuantileSketch(k=512)
    whole.add(np.array(values))
    a, b = QuantileSketch(k=512), QuantileSketch(k=512)
    a.add(np.array(values[:cut]))
    b.add(np.array(values[cut:]))
    a.merge(b)
    for n in (1, 4, 10):
        np.testing.assert_array_equal(a.quantiles(n)[0], whole.quantiles(n)[0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"c", b"d", b"e"]), max_size=200), st.integers(0, 200))
def test_topk_split_and_merged_equals_whole(values, cut):
    whole, a, b = TopKSketch(), TopKSketch(), TopKSketch()
    whole.add(values)
    a.add(values[:cut])
    b.add(values[cut:])
    a.merge(b)
    assert a.top(5) == whole.top(5) and a.unique() == whole.unique()


def test_infer_then_validate_is_clean_on_every_golden_input():
    for name in ("generated.tfrecord", "generated_b.tfrecord"):
        stats = generate_statistics(str(GOLDEN / name))
        assert not validate_statistics(stats, infer_schema(stats)).anomaly_info, name


def test_cli_reads_standard_input(monkeypatch, capsys):
    import io
    import sys

    data = (GOLDEN / "generated_b.tfrecord").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["stats", "--format", "tfdv", "-"]) == 0
    assert "num_examples: 2000" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["validate", "--schema", str(GOLDEN / "schema_generated.pbtxt"), "-"]) == 1
    assert "Unexpected string values" in capsys.readouterr().out


def test_compare_summaries_side_by_side():
    import json

    from tfrx.validate import compare_summaries

    a = generate_statistics(str(GOLDEN / "generated.tfrecord"))
    b = generate_statistics(str(GOLDEN / "generated_b.tfrecord"))
    rows = {r["feature"]: r for r in compare_summaries(a, b)}
    assert set(rows) == {"blob", "extra", "f", "flag01", "i", "label", "s", "text", "w"}
    assert rows["extra"]["a"] is None and rows["extra"]["b"]["num_non_missing"] == 500
    assert rows["s"]["linf"] == pytest.approx(0.219333, abs=1e-5)  # TFDV's drift golden measures 0.219333
    assert rows["f"]["linf"] is None and 0.03 < rows["f"]["js"] < 0.09
    same = {r["feature"]: r["js"] for r in compare_summaries(a, a)}
    assert all(js == 0.0 for name, js in same.items() if name != "f")
    # TFDV's histogram alignment puts each side's NaNs in a bucket of its own, so a feature with NaNs
    # diverges from itself by the NaN share (f: 30 NaNs of 3000 values); tfrx measures as TFDV does
    assert same["f"] > 0
    json.dumps(list(rows.values()))


def test_empty_and_non_example_files(corpus_dir):
    from tfrx.errors import DecodeError

    empty = generate_statistics(str(GOLDEN.parent / "empty.tfrecord"))
    assert empty.datasets[0].num_examples == 0 and not empty.datasets[0].features
    assert validate_statistics(empty, load_schema(GOLDEN / "schema_generated.pbtxt")).data_missing
    events = corpus_dir / "guild__events.out.tfevents.1548797801.omaha"
    with pytest.raises(DecodeError, match=r"guild__events.*not tf.train.Example.*TensorBoard Event"):
        generate_statistics(str(events))


def test_cli_stats_with_a_schema_of_categorical_ints(tmp_path, capsys):
    schema = load_schema(GOLDEN / "schema_generated.pbtxt")
    for f in schema.feature:
        if f.name == "label":
            f.int_domain.is_categorical = True
    write_schema(schema, tmp_path / "schema.pbtxt")
    out = tmp_path / "stats.pb"
    args = ["stats", "--format", "tfdv", "--schema", str(tmp_path / "schema.pbtxt"), "-o", str(out)]
    assert main([*args, str(GOLDEN / "generated.tfrecord")]) == 0
    label = next(f for f in load_statistics(out).datasets[0].features if list(f.path.step) == ["label"])
    assert label.HasField("string_stats") and label.string_stats.unique == 3
    assert main(["stats", "--schema", str(tmp_path / "schema.pbtxt"), str(GOLDEN / "generated.tfrecord")]) == 2
    assert "--format tfdv" in capsys.readouterr().err


def test_files_in_worker_processes_give_the_same_exact_fields(tmp_path):
    import shutil

    a, b = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    shutil.copy(GOLDEN / "generated.tfrecord", a)
    shutil.copy(GOLDEN / "generated_b.tfrecord", b)
    one = generate_statistics([str(a), str(b)])
    two = generate_statistics([str(a), str(b)], num_workers=2)
    assert generate_statistics([str(a), str(b)], num_workers=2) == two  # deterministic
    fields = ("num_non_missing", "num_missing", "min_num_values", "max_num_values", "tot_num_values")
    for fa, fb in zip(one.datasets[0].features, two.datasets[0].features):
        assert fa.path == fb.path and fa.type == fb.type
        which = fa.WhichOneof("stats")
        ca, cb = getattr(fa, which).common_stats, getattr(fb, which).common_stats
        assert [getattr(ca, x) for x in fields] == [getattr(cb, x) for x in fields]
        if which == "num_stats":
            na, nb = fa.num_stats, fb.num_stats
            assert (na.min, na.max, na.num_zeros) == (nb.min, nb.max, nb.num_zeros)
            assert na.mean == pytest.approx(nb.mean, rel=1e-12, nan_ok=True)
        elif which == "string_stats":
            assert fa.string_stats.top_values == fb.string_stats.top_values
            assert fa.string_stats.unique == fb.string_stats.unique


def test_cli_workers(tmp_path, capsys):
    files = [str(GOLDEN / "generated.tfrecord"), str(GOLDEN / "generated_b.tfrecord")]
    assert main(["stats", "--format", "tfdv", "--workers", "2", "-o", str(tmp_path / "s.pb"), *files]) == 0
    assert load_statistics(tmp_path / "s.pb").datasets[0].num_examples == 5000


def test_cli_tfdv_formats_on_a_tfds_directory(capsys):
    """A TFDS dataset directory gives TFDV's statistics / schema of its shards, not the TFDS view."""
    from tfds_helpers import golden_dir

    directory = golden_dir("tfrx_tensors")
    assert main(["stats", "--format", "tfdv", directory]) == 0
    out = capsys.readouterr().out
    assert out.startswith("datasets {") and "num_examples: 11" in out  # train 7 + test 4
    assert main(["schema", "--infer", directory]) == 0
    assert 'name: "label"' in capsys.readouterr().out
