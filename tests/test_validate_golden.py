"""tfrx.validate against TFDV's own outputs on the same inputs (golden files made by
tests/golden/validate/make_validate_golden.py with TFDV 1.16; TFRX_VALIDATE_GOLDEN points at fresh ones).

Bounds (docs/validate.md): counts, value counts, min / max, zeros, NaNs, string statistics and top
values exact; mean and standard deviation to float64 rounding (relative 1e-9; TFDV sums in another
order); quantile-derived numbers (median, quantile and standard histograms) within the rank error of
the two sketches: a boundary's rank within 2% of the values, a bucket's count within 2% of the values
plus one.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorflow_metadata")

from google.protobuf import text_format  # noqa: E402
from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2  # noqa: E402

import tfrx  # noqa: E402
from tfrx.validate import (  # noqa: E402
    StatsOptions,
    generate_statistics,
    infer_schema,
    validate_statistics,
)

HERE = Path(__file__).resolve().parent / "golden" / "validate"
GOLDEN = Path(os.environ.get("TFRX_VALIDATE_GOLDEN", HERE))
RANK_TOL = 0.02


def _golden(name: str, message):
    path = GOLDEN / name
    if not path.exists():
        pytest.skip(f"no golden file {name} (make_validate_golden.py makes it when given the corpus)")
    return text_format.Parse(path.read_text(), message)


def _golden_script():
    """tests/golden/validate/make_validate_golden.py as a module (its schema edits are shared with the tests)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_validate_golden", HERE / "make_validate_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stats(name):
    return _golden(name, statistics_pb2.DatasetFeatureStatisticsList())


def _values(path: Path, feature: str) -> np.ndarray:
    """Every non-NaN number of a feature, sorted (to place quantiles by rank)."""
    out = []
    for r in tfrx.io.read_records(str(path)):
        v = tfrx.decode_example(r).get(feature)
        if v is not None and isinstance(v, np.ndarray):
            out.extend(v.astype(np.float64).tolist())
    arr = np.array(out)
    return np.sort(arr[~np.isnan(arr)])


def _rank(sorted_values: np.ndarray, x: float) -> tuple[float, float]:
    n = sorted_values.size
    return np.searchsorted(sorted_values, x, side="left") / n, np.searchsorted(sorted_values, x, side="right") / n


def _same_rank(sorted_values, a: float, b: float) -> bool:
    """Whether two quantile boundaries lie within RANK_TOL of each other in rank."""
    la, ha = _rank(sorted_values, a)
    lb, hb = _rank(sorted_values, b)
    return max(la, lb) - min(ha, hb) <= RANK_TOL


def _by_path(ds):
    return {".".join(f.path.step): f for f in ds.features}


def _common(f):
    which = f.WhichOneof("stats")
    return getattr(f, which).common_stats


def compare_common(ours, theirs, name):
    a, b = _common(ours), _common(theirs)
    for field in ("num_non_missing", "num_missing", "min_num_values", "max_num_values", "tot_num_values"):
        assert getattr(a, field) == getattr(b, field), (name, field)
    assert a.avg_num_values == pytest.approx(b.avg_num_values, rel=1e-9), name
    assert [
        (p.num_non_missing, p.num_missing, p.min_num_values, p.max_num_values, p.tot_num_values)
        for p in a.presence_and_valency_stats
    ] == [
        (p.num_non_missing, p.num_missing, p.min_num_values, p.max_num_values, p.tot_num_values)
        for p in b.presence_and_valency_stats
    ], name
    ha, hb = a.num_values_histogram, b.num_values_histogram
    assert len(ha.buckets) == len(hb.buckets), name
    assert sum(x.sample_count for x in ha.buckets) == pytest.approx(sum(x.sample_count for x in hb.buckets)), name
    if a.HasField("weighted_common_stats") or b.HasField("weighted_common_stats"):
        wa, wb = a.weighted_common_stats, b.weighted_common_stats
        for field in ("num_non_missing", "num_missing", "tot_num_values", "avg_num_values"):
            assert getattr(wa, field) == pytest.approx(getattr(wb, field), rel=1e-6), (name, field)


def compare_histograms(ours, theirs, sorted_values, name):
    assert [h.type for h in ours] == [h.type for h in theirs], name
    total = sorted_values.size
    for ha, hb in zip(ours, theirs):
        assert ha.num_nan == hb.num_nan, name
        assert len(ha.buckets) == len(hb.buckets), (name, ha.type)
        for x, y in zip(ha.buckets, hb.buckets):
            if ha.type == statistics_pb2.Histogram.STANDARD:
                assert x.low_value == pytest.approx(y.low_value, rel=1e-9), name
                assert x.high_value == pytest.approx(y.high_value, rel=1e-9), name
                assert abs(x.sample_count - y.sample_count) <= RANK_TOL * total + 1, (name, x, y)
            else:
                for u, v in ((x.low_value, y.low_value), (x.high_value, y.high_value)):
                    assert _same_rank(sorted_values, u, v), (name, u, v)


def compare_numeric(ours, theirs, sorted_values, name, weighted=False):
    a, b = ours.num_stats, theirs.num_stats
    for field in ("num_zeros", "min", "max"):
        assert getattr(a, field) == getattr(b, field), (name, field)
    for field in ("mean", "std_dev"):
        x, y = getattr(a, field), getattr(b, field)
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-9), (name, field, x, y)
    if sorted_values.size and math.isfinite(b.median):
        assert _same_rank(sorted_values, a.median, b.median), (name, a.median, b.median)
    compare_histograms(a.histograms, b.histograms, sorted_values, name)
    if weighted:
        wa, wb = a.weighted_numeric_stats, b.weighted_numeric_stats
        for field in ("mean", "std_dev"):
            x, y = getattr(wa, field), getattr(wb, field)
            assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-6), (name, field)


def compare_string(ours, theirs, name, weighted=False):
    a, b = ours.string_stats, theirs.string_stats
    assert a.unique == b.unique, name
    assert a.invalid_utf8_count == b.invalid_utf8_count, name
    assert a.avg_length == pytest.approx(b.avg_length, rel=1e-9), name
    assert [(t.value, t.frequency) for t in a.top_values] == [(t.value, t.frequency) for t in b.top_values], name
    ra = [(x.low_rank, x.high_rank, x.label, x.sample_count) for x in a.rank_histogram.buckets]
    rb = [(x.low_rank, x.high_rank, x.label, x.sample_count) for x in b.rank_histogram.buckets]
    assert ra == rb, name
    if weighted:
        wa, wb = a.weighted_string_stats, b.weighted_string_stats
        assert [t.value for t in wa.top_values] == [t.value for t in wb.top_values], name
        for x, y in zip(wa.top_values, wb.top_values):
            assert x.frequency == pytest.approx(y.frequency, rel=1e-6), name


def compare_stats(ours, theirs, data: Path, weighted=False):
    assert [d.name for d in ours.datasets] == [d.name for d in theirs.datasets]
    for i, (da, db) in enumerate(zip(ours.datasets, theirs.datasets)):
        assert da.num_examples == db.num_examples, da.name
        # TFDV sums the float32 weights in float32, tfrx in float64
        assert da.weighted_num_examples == pytest.approx(db.weighted_num_examples, rel=1e-6)
        fa, fb = _by_path(da), _by_path(db)
        assert sorted(fa) == sorted(fb), da.name
        for name, f in fb.items():
            mine = fa[name]
            assert mine.type == f.type, name
            compare_common(mine, f, name)
            if f.HasField("num_stats"):
                values = _values(data, name) if i == 0 else np.zeros(0)  # slices: counts and ranges only
                if values.size:
                    compare_numeric(mine, f, values, name, weighted)
                else:
                    assert mine.num_stats.min == f.num_stats.min and mine.num_stats.max == f.num_stats.max
            else:
                compare_string(mine, f, name, weighted)


def _corpus(name: str) -> Path:
    from conftest import CORPUS_DIR

    path = Path(CORPUS_DIR) / name
    if not path.exists():
        pytest.skip(f"corpus file {name} not found")
    return path


GENERATED = HERE / "generated.tfrecord"
GENERATED_B = HERE / "generated_b.tfrecord"


def test_generated_statistics_match_tfdv():
    compare_stats(generate_statistics(str(GENERATED)), _stats("stats_generated.pbtxt"), GENERATED)
    compare_stats(generate_statistics(str(GENERATED_B)), _stats("stats_generated_b.pbtxt"), GENERATED_B)


def test_weighted_statistics_match_tfdv():
    ours = generate_statistics(str(GENERATED), StatsOptions(weight_feature="w"))
    compare_stats(ours, _stats("stats_generated_weighted.pbtxt"), GENERATED, weighted=True)


def test_categorical_int_statistics_match_tfdv():
    """A schema declaring ``label`` a categorical int gives it string statistics, as StatsOptions.schema does."""
    make_golden = _golden_script()
    schema = _golden("schema_generated.pbtxt", schema_pb2.Schema())
    make_golden.mark_categorical(schema)
    ours = generate_statistics(str(GENERATED), StatsOptions(schema=schema))
    label = _by_path(ours.datasets[0])["label"]
    assert label.type == statistics_pb2.FeatureNameStatistics.INT and label.HasField("string_stats")
    compare_stats(ours, _stats("stats_generated_categorical.pbtxt"), GENERATED)
    golden_schema = _golden("schema_generated_categorical.pbtxt", schema_pb2.Schema())
    assert _sorted_schema(infer_schema(ours)) == _sorted_schema(golden_schema)


def test_sliced_statistics_match_tfdv():
    ours = generate_statistics(str(GENERATED), StatsOptions(slice_feature="label"))
    compare_stats(ours, _stats("stats_generated_sliced.pbtxt"), GENERATED)


@pytest.mark.parametrize("split", ["train", "eval"])
def test_corpus_statistics_match_tfdv(split):
    path = _corpus(f"tfx__penguin_{split}_data_tfrecord-00000-of-00001.gz")
    compare_stats(generate_statistics(str(path)), _stats(f"stats_penguin_{split}.pbtxt"), path)


def _sorted_schema(schema):
    out = schema_pb2.Schema()
    out.CopyFrom(schema)
    features = sorted(out.feature, key=lambda f: f.name)
    del out.feature[:]
    out.feature.extend(features)
    return out


@pytest.mark.parametrize("name", ["generated", "penguin"])
def test_inferred_schema_matches_tfdv(name):
    golden = _golden(f"schema_{name}.pbtxt", schema_pb2.Schema())
    theirs_stats = _stats("stats_generated.pbtxt" if name == "generated" else "stats_penguin_train.pbtxt")
    # the rules alone: tfrx's inference on TFDV's statistics
    assert _sorted_schema(infer_schema(theirs_stats)) == _sorted_schema(golden)
    # end to end: tfrx's inference on tfrx's statistics
    data = GENERATED if name == "generated" else _corpus("tfx__penguin_train_data_tfrecord-00000-of-00001.gz")
    assert _sorted_schema(infer_schema(generate_statistics(str(data)))) == _sorted_schema(golden)


def _anomaly_summary(anomalies):
    return {
        k: (v.short_description, v.description, [(r.type, r.short_description, r.description) for r in v.reason])
        for k, v in anomalies.anomaly_info.items()
    }


def test_anomalies_match_tfdv():
    schema = _golden("schema_generated.pbtxt", schema_pb2.Schema())
    golden = _golden("anomalies_generated_b.pbtxt", anomalies_pb2.Anomalies())
    ours = validate_statistics(generate_statistics(str(GENERATED_B)), schema)
    assert _anomaly_summary(ours) == _anomaly_summary(golden)
    assert ours.baseline == golden.baseline


def test_penguin_anomalies_match_tfdv():
    schema = _golden("schema_penguin.pbtxt", schema_pb2.Schema())
    golden = _golden("anomalies_penguin_eval.pbtxt", anomalies_pb2.Anomalies())
    path = _corpus("tfx__penguin_eval_data_tfrecord-00000-of-00001.gz")
    assert _anomaly_summary(validate_statistics(generate_statistics(str(path)), schema)) == _anomaly_summary(golden)


def test_drift_matches_tfdv():
    make_golden = _golden_script()
    schema = _golden("schema_generated.pbtxt", schema_pb2.Schema())
    make_golden.add_comparators(schema)
    golden = _golden("anomalies_drift.pbtxt", anomalies_pb2.Anomalies())
    ours = validate_statistics(
        generate_statistics(str(GENERATED_B)), schema, previous_statistics=generate_statistics(str(GENERATED))
    )
    assert sorted(ours.anomaly_info) == sorted(golden.anomaly_info)
    for k, g in golden.anomaly_info.items():
        assert [r.type for r in ours.anomaly_info[k].reason] == [r.type for r in g.reason], k
    theirs = {tuple(d.path.step): d.drift_measurements for d in golden.drift_skew_info}
    mine = {tuple(d.path.step): d.drift_measurements for d in ours.drift_skew_info}
    assert sorted(mine) == sorted(theirs)
    for path, ms in theirs.items():
        for a, b in zip(mine[path], ms):
            assert a.type == b.type and a.threshold == pytest.approx(b.threshold)
            # L-infinity reads exact counts; Jensen-Shannon reads sketched histograms
            tol = 1e-9 if a.type == anomalies_pb2.DriftSkewInfo.Measurement.L_INFTY else 0.01
            assert a.value == pytest.approx(b.value, abs=tol), path


SEQUENCE = HERE / "sequence.tfrecord"


def _sequence_values(feature: str) -> np.ndarray:
    out: list[float] = []
    for r in tfrx.io.read_records(str(SEQUENCE)):
        _, lists = tfrx.decode_sequence_example(r)
        for step in lists.get(feature, []):
            out.extend(np.asarray(step, dtype=np.float64).tolist())
    return np.sort(np.array(out))


def test_sequence_example_statistics_match_tfdv():
    """Feature lists under ##SEQUENCE##, as tfx_bsl's SequenceExample source gives them to TFDV."""
    theirs = _stats("stats_sequence.pbtxt")
    ours = generate_statistics(str(SEQUENCE))
    da, db = ours.datasets[0], theirs.datasets[0]
    assert da.num_examples == db.num_examples
    fa, fb = _by_path(da), _by_path(db)
    assert sorted(fa) == sorted(fb)
    for name, f in fb.items():
        mine = fa[name]
        assert mine.type == f.type, name
        if name == "##SEQUENCE##":
            # TFDV counts the struct missing in some records without feature lists depending on how Beam
            # batched them (two runs on the same file differed); tfrx counts it present in every record
            continue
        compare_common(mine, f, name)
        if f.HasField("num_stats"):
            values = (
                _sequence_values(name.split(".")[-1]) if name.startswith("##SEQUENCE##.") else _values(SEQUENCE, name)
            )
            compare_numeric(mine, f, values, name)
        elif f.HasField("string_stats"):
            compare_string(mine, f, name)
        assert [c.name for c in mine.custom_stats] == [c.name for c in f.custom_stats], name
    schema = _sorted_schema(_golden("schema_sequence.pbtxt", schema_pb2.Schema()))
    mine = _sorted_schema(infer_schema(ours))
    for sch in (schema, mine):  # the struct's presence follows its batch-dependent count (above)
        for f in sch.feature:
            if f.name == "##SEQUENCE##":
                f.presence.ClearField("min_fraction")
    assert mine == schema


def _workloads() -> list[tuple[str, str]]:
    """NAME=PATH pairs of benchmark workload files whose TFDV statistics the live oracle wrote."""
    spec = os.environ.get("TFRX_VALIDATE_WORKLOADS", "")
    return [tuple(w.split("=", 1)) for w in spec.split(",") if w]  # type: ignore[misc]


@pytest.mark.parametrize("workload", _workloads() or [pytest.param(None, marks=pytest.mark.skip("live oracle only"))])
def test_benchmark_workload_statistics_match_tfdv(workload):
    """tests/tfdv_oracle.sh only: the benchmark workloads (criteo, bert, image) against TFDV."""
    name, path = workload
    compare_stats(generate_statistics(path), _stats(f"stats_workload_{name}.pbtxt"), Path(path))
