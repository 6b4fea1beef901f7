"""tfrx.validate statistics: exact fields against a pure-Python oracle, sketches within their bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("tensorflow_metadata")

import tfrx  # noqa: E402
from tfrx.validate import StatsOptions, statistics_from_records  # noqa: E402
from tfrx.validate.columns import batch_columns, decoded_columns  # noqa: E402
from tfrx.validate.sketches import QuantileSketch, TopKSketch  # noqa: E402
from tfrx.validate.summary import feature_summaries  # noqa: E402


def _ser(features: dict, kinds: dict | None = None) -> bytes:
    return tfrx.codec.make_example(features, kinds=kinds).SerializeToString()


def _feature(stats, name: str, dataset: int = 0):
    for f in stats.datasets[dataset].features:
        if ".".join(f.path.step) == name:
            return f
    raise KeyError(name)


def _common(f):
    return f.num_stats.common_stats if f.HasField("num_stats") else f.string_stats.common_stats


# ------------------------------------------------------------------ records and a pure-Python oracle
_value_lists = {
    "i": st.lists(st.integers(-(2**40), 2**40), max_size=4),
    "f": st.lists(
        st.one_of(st.floats(-1e6, 1e6, width=32), st.sampled_from([0.0, math.nan, math.inf, -math.inf])), max_size=4
    ),
    "s": st.lists(st.sampled_from([b"a", b"bb", b"", b"\xff\xfe", "é".encode(), b"zz"]), max_size=4),
}
_record = st.fixed_dictionaries({}, optional={k: v for k, v in _value_lists.items()})


def _serialize(rec: dict) -> bytes:
    kinds = {"i": "int64", "f": "float", "s": "bytes"}
    return _ser(rec, {k: kinds[k] for k in rec})


def _oracle(records: list[dict], name: str) -> dict:
    present = [r[name] for r in records if name in r]
    values = [v for p in present for v in p]
    out: dict[str, float] = {
        "num_non_missing": len(present),
        "num_missing": len(records) - len(present),
        "tot_num_values": len(values),
    }
    if present:
        out["min_num_values"] = min(map(len, present))
        out["max_num_values"] = max(map(len, present))
    if name in ("i", "f"):
        vals = [float(np.float32(v)) if name == "f" else float(v) for v in values]
        finite = [v for v in vals if not math.isnan(v)]
        out["num_nan"] = len(vals) - len(finite)
        if finite:
            arr = np.array(finite)
            with np.errstate(invalid="ignore"):
                out["mean"] = float(arr.mean())
            out["min"], out["max"] = float(arr.min()), float(arr.max())
            out["num_zeros"] = int(np.sum(arr == 0))
    else:
        out["unique"] = len(set(values))
        if values:
            out["avg_length"] = sum(map(len, values)) / len(values)
        out["invalid_utf8_count"] = sum(1 for v in values if not _utf8(v))
    return out


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_record, min_size=1, max_size=25), st.integers(1, 7))
def test_exact_fields_match_oracle(records, batch_size):
    stats = statistics_from_records([_serialize(r) for r in records], StatsOptions(batch_size=batch_size))
    ds = stats.datasets[0]
    assert ds.num_examples == len(records)
    names = {".".join(f.path.step) for f in ds.features}
    assert names == {k for r in records for k in r}
    for name in names:
        f = _feature(stats, name)
        want = _oracle(records, name)
        c = _common(f)
        assert c.num_non_missing == want["num_non_missing"]
        assert c.num_missing == want["num_missing"]
        assert c.tot_num_values == want["tot_num_values"]
        if "min_num_values" in want:
            assert (c.min_num_values, c.max_num_values) == (want["min_num_values"], want["max_num_values"])
        if name in ("i", "f"):
            ns = f.num_stats
            if "min" in want:
                assert ns.min == want["min"] and ns.max == want["max"]
                assert ns.num_zeros == want["num_zeros"]
                if math.isfinite(want["mean"]):
                    assert ns.mean == pytest.approx(want["mean"], rel=1e-9, abs=1e-6)
        else:
            ss = f.string_stats
            assert ss.unique == want["unique"]
            assert ss.invalid_utf8_count == want["invalid_utf8_count"]
            if "avg_length" in want:
                assert ss.avg_length == pytest.approx(want["avg_length"])


@settings(max_examples=40, deadline=None)
@given(st.lists(_record, min_size=1, max_size=20))
def test_batch_parser_columns_equal_decoder_columns(records):
    serialized = [_serialize(r) for r in records]
    kinds = {"i": "INT", "f": "FLOAT", "s": "STRING"}
    want = decoded_columns(serialized, False)
    got = batch_columns(serialized, {k: kinds[k] for k in want.features}, {}, False, exact=False)
    assert set(got.features) == set(want.features)
    for k, w in want.features.items():
        g = got.features[k]
        assert g.kind == w.kind
        np.testing.assert_array_equal(g.present, w.present)
        np.testing.assert_array_equal(g.counts, w.counts)
        if w.kind == "STRING":
            assert g.values.tolist() == w.values.tolist()
        else:
            np.testing.assert_array_equal(g.values, w.values)


def test_empty_list_is_present_and_kindless_feature_is_missing():
    f = tfrx.train.Feature()  # no kind set
    records = [
        _ser({"x": [1, 2]}),
        _ser({"x": []}, {"x": "int64"}),
        _ser({"x": f}),
        _ser({}),
    ]
    for batch_size in (1, 4):
        stats = statistics_from_records(records * 3, StatsOptions(batch_size=batch_size))
        c = _common(_feature(stats, "x"))
        assert (c.num_non_missing, c.num_missing) == (6, 6)
        assert (c.min_num_values, c.max_num_values, c.tot_num_values) == (0, 2, 6)
        assert c.avg_num_values == pytest.approx(1.0)


def test_a_feature_changing_kind_is_refused():
    records = [_ser({"x": [1]}), _ser({"x": [1.5]})]
    with pytest.raises(ValueError, match="two kinds"):
        statistics_from_records(records)


def test_feature_first_seen_late_is_counted():
    records = [_ser({"a": [1]})] * 4 + [_ser({"a": [2], "late": [b"x"]})] * 4
    exact = statistics_from_records(records, StatsOptions(batch_size=4))
    assert "late" in {".".join(f.path.step) for f in exact.datasets[0].features}
    assert _common(_feature(exact, "late")).num_non_missing == 4
    # "first_batch" learns features from the first batch of each file only (documented)
    fast = statistics_from_records(records, StatsOptions(batch_size=4, discover_features="first_batch"))
    assert "late" not in {".".join(f.path.step) for f in fast.datasets[0].features}
    # ... but a record missing a known feature while holding an unknown one still sends the batch to the decoder
    records2 = [_ser({"a": [1]})] * 4 + [_ser({"new": [3]})] + [_ser({"a": [2]})] * 3
    s2 = statistics_from_records(records2, StatsOptions(batch_size=4, discover_features="first_batch"))
    assert _common(_feature(s2, "new")).num_non_missing == 1


def test_numeric_stats_std_median_histograms():
    rng = np.random.default_rng(0)
    values = rng.normal(10, 3, size=1000).astype(np.float32)
    values[:7] = 0
    values[7:10] = np.nan
    records = [_ser({"v": [float(v)]}) for v in values]
    stats = statistics_from_records(records, StatsOptions(batch_size=128))
    ns = _feature(stats, "v").num_stats
    finite = values[~np.isnan(values)].astype(np.float64)
    assert ns.mean == pytest.approx(finite.mean(), rel=1e-12)
    assert ns.std_dev == pytest.approx(finite.std(), rel=1e-9)
    assert ns.num_zeros == 7
    assert ns.median == pytest.approx(np.median(finite), abs=0.05)
    std, quant = ns.histograms
    assert std.type == 0 and quant.type == 1
    assert std.num_nan == 3 and quant.num_nan == 3
    assert len(std.buckets) == 10 and len(quant.buckets) == 10
    assert sum(b.sample_count for b in std.buckets) == pytest.approx(997)
    assert sum(b.sample_count for b in quant.buckets) == pytest.approx(997)
    assert std.buckets[0].low_value == finite.min() and std.buckets[-1].high_value == finite.max()
    # the standard histogram agrees with exact equal-width counts within the quantile resolution
    exact, _ = np.histogram(finite, bins=10, range=(finite.min(), finite.max()))
    for b, n in zip(std.buckets, exact):
        assert abs(b.sample_count - n) <= 0.01 * 997 + 1


def test_string_top_values_rank_histogram_order():
    values = [b"b"] * 5 + [b"a"] * 5 + [b"c"] * 2 + [b"\xff"] * 1
    records = [_ser({"s": [v]}) for v in values]
    ss = _feature(statistics_from_records(records), "s").string_stats
    assert [(t.value, t.frequency) for t in ss.top_values] == [
        ("b", 5),
        ("a", 5),
        ("c", 2),
        ("__BYTES_VALUE__", 1),
    ]
    assert [(b.low_rank, b.label, b.sample_count) for b in ss.rank_histogram.buckets][:2] == [(0, "b", 5), (1, "a", 5)]
    assert ss.unique == 4 and ss.invalid_utf8_count == 1
    assert ss.avg_length == pytest.approx(1.0)


def test_weighted_statistics():
    rows = [({"x": [1.0, 3.0], "w": [2.0]}), ({"x": [5.0], "w": [1.0]}), ({"w": [4.0], "s": [b"k"]})]
    stats = statistics_from_records([_ser(r) for r in rows], StatsOptions(weight_feature="w"))
    ds = stats.datasets[0]
    assert ds.weighted_num_examples == 7.0
    x = _feature(stats, "x").num_stats
    assert x.weighted_numeric_stats.mean == pytest.approx((1 * 2 + 3 * 2 + 5 * 1) / 5)
    wc = x.common_stats.weighted_common_stats
    assert (wc.num_non_missing, wc.num_missing, wc.tot_num_values) == (3.0, 4.0, 5.0)
    s = _feature(stats, "s").string_stats
    assert [(t.value, t.frequency) for t in s.weighted_string_stats.top_values] == [("k", 4.0)]
    with pytest.raises(ValueError, match="weight feature 'nope'"):
        statistics_from_records([_ser(r) for r in rows], StatsOptions(weight_feature="nope"))


def test_slices_by_feature_value():
    rows = [{"label": [0], "x": [1]}, {"label": [1], "x": [2]}, {"label": [1], "x": [3]}, {"x": [4]}]
    stats = statistics_from_records([_ser(r) for r in rows], StatsOptions(slice_feature="label"))
    names = [d.name for d in stats.datasets]
    assert names == ["All Examples", "label_0", "label_1"]
    assert [d.num_examples for d in stats.datasets] == [4, 1, 2]
    assert _feature(stats, "x", 2).num_stats.mean == pytest.approx(2.5)


def test_sequence_example_nested_value_counts():
    def seq(ctx, lists):
        return tfrx.codec.make_sequence_example(ctx, lists).SerializeToString()

    records = [
        seq({"id": [1]}, {"tok": [[1, 2], [3]]}),
        seq({"id": [2]}, {"tok": [[4, 5, 6]]}),
        seq({"id": [3]}, {}),
    ]
    for batch_size in (1, 3):
        stats = statistics_from_records(records, StatsOptions(batch_size=batch_size), sequence=True)
        names = [".".join(f.path.step) for f in stats.datasets[0].features]
        assert names == ["id", "##SEQUENCE##", "##SEQUENCE##.tok"]
        tok = _feature(stats, "##SEQUENCE##.tok").num_stats.common_stats
        assert (tok.num_non_missing, tok.num_missing, tok.tot_num_values) == (2, 1, 6)
        # values per record over all steps (TFDV's innermost valency); per step in presence_and_valency_stats
        assert (tok.min_num_values, tok.max_num_values) == (3, 3)
        levels = [
            (p.num_non_missing, p.num_missing, p.min_num_values, p.max_num_values)
            for p in tok.presence_and_valency_stats
        ]
        assert levels == [(2, 1, 1, 2), (3, 0, 1, 3)]
        custom = [c.name for c in _feature(stats, "##SEQUENCE##.tok").custom_stats]
        assert custom == ["level_2_value_list_length_quantiles", "level_2_value_list_length_standard"]


def test_corpus_file_statistics(corpus_dir):
    from tfrx.validate import generate_statistics

    path = corpus_dir / "tfx__penguin_train_data_tfrecord-00000-of-00001.gz"
    small = generate_statistics(str(path), StatsOptions(batch_size=50))
    big = generate_statistics(str(path))
    assert small.datasets[0].num_examples == 234
    for a, b in zip(small.datasets[0].features, big.datasets[0].features):
        assert a.num_stats.mean == pytest.approx(b.num_stats.mean, rel=1e-12)
        assert a.num_stats.min == b.num_stats.min and a.num_stats.common_stats == b.num_stats.common_stats
    limited = generate_statistics(str(path), max_records=10)
    assert limited.datasets[0].num_examples == 10
    summary = feature_summaries(big)
    assert summary[0]["num_examples"] == 234 and summary[0]["features"][0]["num_non_missing"] == 234


# ------------------------------------------------------------------ sketches
def test_quantile_sketch_exact_below_k_and_deterministic():
    rng = np.random.default_rng(1)
    x = rng.normal(size=1000)
    s = QuantileSketch(k=4096)
    s.add(x[:500])
    s.add(x[500:])
    bounds, cum = s.quantiles(10)
    xs = np.sort(x)
    assert bounds[0] == xs[0] and bounds[-1] == xs[-1]
    for i in range(1, 10):
        assert bounds[i] == xs[int(np.ceil(i * 100)) - 1]
    np.testing.assert_allclose(cum, np.arange(11) * 100.0)


@pytest.mark.parametrize("seed", [0, 7])
def test_quantile_sketch_rank_error_bound(seed):
    rng = np.random.default_rng(seed)
    x = rng.exponential(size=200_000)
    s = QuantileSketch(k=1024, seed=seed)
    for chunk in np.array_split(x, 37):
        s.add(chunk)
    bounds, _ = s.quantiles(100)
    xs = np.sort(x)
    ranks = np.searchsorted(xs, bounds[1:-1], side="right") / x.size
    err = np.max(np.abs(ranks - np.arange(1, 100) / 100))
    assert err < np.log2(x.size / 1024) / 1024 * 2  # the documented bound, with slack for the draw
    again = QuantileSketch(k=1024, seed=seed)
    for chunk in np.array_split(x, 37):
        again.add(chunk)
    np.testing.assert_array_equal(again.quantiles(100)[0], bounds)


def test_quantile_sketch_merge_and_weights():
    a, b = QuantileSketch(k=64), QuantileSketch(k=64)
    a.add(np.arange(100.0))
    b.add(np.arange(100.0, 200.0), np.full(100, 3.0))
    a.merge(b)
    assert a.total_weight == 400.0
    bounds, _ = a.quantiles(4)
    assert bounds[0] == 0 and bounds[-1] == 199
    assert 90 <= bounds[1] <= 115  # a quarter of the weight lies below ~100 (weight 100 of 400)


def test_topk_sketch_exact_then_bounded():
    t = TopKSketch(capacity=1000)
    t.add([b"x"] * 50 + [bytes([i % 256, i // 256]) for i in range(500)])
    assert not t.pruned and t.unique() == 501
    assert t.top(1) == [(b"x", 50)]
    rng = np.random.default_rng(0)
    big = TopKSketch(capacity=2000, seed=3)
    ids = rng.integers(0, 50_000, size=200_000)
    heavy = [b"h%d" % i for i in range(5)]
    for start in range(0, ids.size, 10_000):
        big.add([b"v%d" % v for v in ids[start : start + 10_000].tolist()] + heavy * 400)
    assert big.pruned
    top = big.top(5)
    assert sorted(v for v, _ in top) == sorted(heavy)
    for _, c in top:
        assert 8000 - big.max_error <= c <= 8000
    true_unique = len(set(ids.tolist())) + 5
    assert abs(big.unique() - true_unique) / true_unique < 0.06  # K-minimum values, k=4096: ~1.6% standard error


def test_options_are_checked():
    with pytest.raises(ValueError, match="discover_features"):
        StatsOptions(discover_features="some")
    with pytest.raises(ValueError, match="k >= 2"):
        QuantileSketch(k=1)
