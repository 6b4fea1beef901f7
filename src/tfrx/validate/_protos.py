"""Accumulated statistics -> ``FeatureNameStatistics`` protos, and the histograms TFDV derives from quantiles."""

from __future__ import annotations

import math

import numpy as np

_NUM_QUANTILES_FACTOR = 100  # TFDV: quantiles behind the standard histogram, per quantiles bucket

NON_UTF8_PLACEHOLDER = "__BYTES_VALUE__"  # TFDV's label of a top value that is not UTF-8


def _bin_weights(bounds: np.ndarray, cum: np.ndarray):
    """Bucket (low, high, weight) from boundaries and cumulative weights; the weight of buckets with the same
    bounds is spread evenly over them, and the weight at the first boundary goes to the first buckets."""
    cum = cum.astype(np.float64)
    low, high = bounds[:-1], bounds[1:]
    counts = np.diff(cum)
    i = 0
    while i < low.size:
        j = i + 1
        while j < low.size and high[i] == high[j]:
            j += 1
        if j > i + 1:
            counts[i:j] = counts[i:j].sum() / (j - i)
        i = j
    i = 0
    while i < low.size and low[0] == low[i] and high[0] == high[i]:
        i += 1
    if i > 0:
        counts[0:i] += cum[0] / i
    return low, high, counts


def quantiles_histogram(bounds: np.ndarray, cum: np.ndarray):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    h = statistics_pb2.Histogram(type=statistics_pb2.Histogram.QUANTILES)
    low, high, w = _bin_weights(bounds, cum)
    for a, b, c in zip(low.tolist(), high.tolist(), w.tolist()):
        h.buckets.add(low_value=a, high_value=b, sample_count=c)
    return h


def _rebin(bounds: np.ndarray, cum: np.ndarray, factor: int):
    return np.concatenate([[bounds[0]], bounds[factor::factor]]), np.concatenate([[cum[0]], cum[factor::factor]])


def standard_histogram(bounds, cum, finite_min: float, finite_max: float, num_buckets: int, num_pos_inf: float):
    """An equal-width histogram from quantiles, counts spread linearly within each quantile bucket (TFDV's
    generate_equi_width_histogram); infinities go to buckets of their own at the ends."""
    from tensorflow_metadata.proto.v0 import statistics_pb2

    h = statistics_pb2.Histogram(type=statistics_pb2.Histogram.STANDARD)
    if not math.isfinite(finite_min) and not math.isfinite(finite_max):
        h.buckets.add(low_value=finite_min, high_value=finite_max, sample_count=float(cum[-1]))
        return h
    # strip infinite quantile buckets
    neg = int(np.searchsorted(bounds, -np.inf, side="right"))
    num_neg_inf = 0.0
    if neg:
        num_neg_inf = float(cum[neg - 1])
        bounds, cum = bounds[neg:], cum[neg:] - num_neg_inf
    if num_pos_inf:
        pos = int(np.searchsorted(bounds, np.inf, side="left"))
        top = cum[-1] - num_pos_inf
        bounds = np.concatenate([bounds[:pos], [finite_max]])
        cum = np.concatenate([cum[:pos], [top]])
    low, high, w = _bin_weights(bounds, cum)
    if finite_min == finite_max:
        edges = np.array([finite_min, finite_max])
    else:
        edges = np.linspace(finite_min, finite_max, num_buckets + 1)
        if not np.isfinite(edges).all():
            return h
    if num_neg_inf:
        h.buckets.add(low_value=-np.inf, high_value=-np.inf, sample_count=num_neg_inf)
    for i in range(edges.size - 1):
        lo, hi = float(edges[i]), float(edges[i + 1])
        total = float(np.dot(w, _overlaps(low, high, lo, hi, i == 0)))
        h.buckets.add(low_value=lo, high_value=hi, sample_count=total)
    if num_pos_inf:
        h.buckets.add(low_value=np.inf, high_value=np.inf, sample_count=float(num_pos_inf))
    return h


def _overlaps(bl: np.ndarray, bh: np.ndarray, lo: float, hi: float, first: bool) -> np.ndarray:
    """The share of each quantile bucket [bl, bh] inside [lo, hi], counts spread evenly within a bucket; a
    point bucket belongs to the bucket whose upper edge it sits on, except at the first bucket's lower edge
    (TFDV's _overlap)."""
    point = bl == bh
    width = np.where(point, 1.0, bh - bl)
    share = np.clip((np.minimum(bh, hi) - np.maximum(bl, lo)) / width, 0.0, 1.0)
    share[(bh < lo) | (bl > hi)] = 0.0
    at_low = point & (bl == lo)
    inside = point & (bl > lo) & (bl <= hi)
    share[point] = 0.0
    share[inside] = 1.0
    share[at_low] = 1.0 if first else 0.0
    return share


def _find_median(q: np.ndarray) -> float:
    n = q.size
    mid = n // 2
    return float((q[mid - 1] + q[mid]) / 2.0) if n % 2 == 0 else float(q[mid])


def _presence_protos(levels, num_examples: int):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    out = []
    prev = None
    for s in levels:
        p = statistics_pb2.PresenceAndValencyStatistics()
        p.num_missing = (prev.total_num_values if prev is not None else num_examples) - s.num_non_missing
        p.num_non_missing = s.num_non_missing
        if s.num_non_missing > 0:
            p.min_num_values = s.min_num_values
            p.max_num_values = s.max_num_values
            p.tot_num_values = s.total_num_values
        out.append(p)
        prev = s
    return out


def _weighted_presence_protos(levels, weighted_num_examples: float):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    out = []
    prev = None
    for s in levels:
        p = statistics_pb2.WeightedCommonStatistics()
        base = prev.weighted_total_num_values if prev is not None else weighted_num_examples
        p.num_missing = base - s.weighted_num_non_missing
        p.num_non_missing = s.weighted_num_non_missing
        p.tot_num_values = s.weighted_total_num_values
        if s.weighted_num_non_missing > 0:
            p.avg_num_values = s.weighted_total_num_values / s.weighted_num_non_missing
        out.append(p)
        prev = s
    return out


def common_proto(f, ds):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    opts = f.opts
    out = statistics_pb2.CommonStatistics()
    pv = _presence_protos(f.levels, ds.num_examples)
    if len(pv) > 1:
        out.presence_and_valency_stats.extend(pv)
    out.num_non_missing = pv[0].num_non_missing
    out.num_missing = pv[0].num_missing
    out.tot_num_values = pv[-1].tot_num_values
    if out.num_non_missing:
        # a nested feature reports values per record over all its steps (TFDV's innermost valency)
        counts_level = f.innermost if f.innermost is not None else f.levels[0]
        if counts_level.num_non_missing:
            out.min_num_values = counts_level.min_num_values
            out.max_num_values = counts_level.max_num_values
        out.avg_num_values = out.tot_num_values / out.num_non_missing
        bounds, cum = counts_level.sketch.quantiles(opts.num_values_histogram_buckets)
        if bounds.size:
            out.num_values_histogram.CopyFrom(quantiles_histogram(bounds, cum))
    if opts.weight_feature is not None:
        wpv = _weighted_presence_protos(f.levels, ds.weighted_num_examples)
        if len(wpv) > 1:
            out.weighted_presence_and_valency_stats.extend(wpv)
        w = statistics_pb2.WeightedCommonStatistics(
            num_non_missing=wpv[0].num_non_missing,
            num_missing=wpv[0].num_missing,
            tot_num_values=wpv[-1].tot_num_values,
        )
        if wpv[0].num_non_missing:
            w.avg_num_values = wpv[-1].tot_num_values / wpv[0].num_non_missing
        out.weighted_common_stats.CopyFrom(w)
    return out


def _numeric_histograms(sketch, f, num_pos_inf: float):
    opts = f.opts
    bounds, cum = sketch.quantiles(_NUM_QUANTILES_FACTOR * opts.num_quantiles_histogram_buckets)
    std = standard_histogram(bounds, cum, f.finite_min, f.finite_max, opts.num_histogram_buckets, num_pos_inf)
    std.num_nan = f.num_nan
    q = quantiles_histogram(*_rebin(bounds, cum, _NUM_QUANTILES_FACTOR))
    q.num_nan = f.num_nan
    return _find_median(bounds), std, q


def numeric_proto(f, common):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    out = statistics_pb2.NumericStatistics(common_stats=common)
    total = common.tot_num_values - f.num_nan
    if total == 0:
        if f.num_nan:
            out.histograms.add(type=statistics_pb2.Histogram.STANDARD).num_nan = f.num_nan
            out.histograms.add(type=statistics_pb2.Histogram.QUANTILES).num_nan = f.num_nan
        return out
    if math.isinf(f.min) or math.isinf(f.max):
        # TFDV merges per-batch means, and an infinite one turns the merged mean into NaN (inf - inf)
        # and the variance with it, which its max(0, variance) makes a standard deviation of 0
        out.mean, out.std_dev = math.nan, 0.0
    else:
        out.mean = f.meanvar.mean
        out.std_dev = math.sqrt(max(0.0, f.meanvar.variance))
    out.num_zeros = f.num_zeros
    out.min = f.min
    out.max = f.max
    median, std, q = _numeric_histograms(f.quantiles, f, f.pos_inf)
    out.median = median
    out.histograms.extend([std, q])
    if f.opts.weight_feature is not None:
        w = statistics_pb2.WeightedNumericStatistics(mean=f.wmeanvar.mean)
        w.std_dev = math.sqrt(max(0.0, f.wmeanvar.variance))
        if math.isinf(f.min) or math.isinf(f.max):
            w.mean, w.std_dev = math.nan, 0.0
        if f.wquantiles.total_weight > 0:
            wmedian, wstd, wq = _numeric_histograms(f.wquantiles, f, f.pos_inf_weighted)
            w.median = wmedian
            w.histograms.extend([wstd, wq])
        out.weighted_numeric_stats.CopyFrom(w)
    return out


def _label(v) -> str:
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return NON_UTF8_PLACEHOLDER
    return str(v)


def _labels(values: list) -> list:
    try:
        return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values]
    except UnicodeDecodeError:
        return [_label(v) for v in values]


def _top_into(target, pairs, opts, threshold) -> None:
    pairs = pairs[: max(opts.num_top_values, opts.num_rank_histogram_buckets)]
    n = next((i for i, (_, c) in enumerate(pairs) if c < threshold), len(pairs))
    counts = [c for _, c in pairs[:n]]
    labels = _labels([v for v, _ in pairs[:n]])
    add_top = target.top_values.add
    for label, c in zip(labels[: opts.num_top_values], counts):
        add_top(value=label, frequency=c)
    add_rank = target.rank_histogram.buckets.add
    for i, (label, c) in enumerate(zip(labels[: opts.num_rank_histogram_buckets], counts)):
        add_rank(low_rank=i, high_rank=i, sample_count=c, label=label)


def string_proto(f, common):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    opts = f.opts
    out = statistics_pb2.StringStatistics(common_stats=common)
    total = common.tot_num_values
    if total > 0:
        out.avg_length = f.total_bytes / total
    out.invalid_utf8_count = f.invalid_utf8
    out.unique = f.topk.unique()
    n = max(opts.num_top_values, opts.num_rank_histogram_buckets)
    _top_into(out, f.topk.top(n), opts, opts.frequency_threshold)
    if opts.weight_feature is not None and f.topk.weighted is not None:
        _top_into(out.weighted_string_stats, f.topk.top(n, weighted=True), opts, opts.weighted_frequency_threshold)
    return out


def level_custom_stats(f) -> list:
    """TFDV's ``level_N_value_list_length_quantiles`` / ``_standard`` histograms of the inner levels."""
    from tensorflow_metadata.proto.v0 import statistics_pb2

    out = []
    n = f.opts.num_histogram_buckets
    for level, s in enumerate(f.levels[1:], start=2):
        bounds, cum = s.sketch.quantiles(n)
        if not bounds.size:
            continue
        q = statistics_pb2.CustomStatistic(name=f"level_{level}_value_list_length_quantiles")
        q.histogram.CopyFrom(quantiles_histogram(bounds, cum))
        std = statistics_pb2.CustomStatistic(name=f"level_{level}_value_list_length_standard")
        std.histogram.CopyFrom(standard_histogram(bounds, cum, s.min_num_values, s.max_num_values, n, 0))
        out += [q, std]
    return out


def feature_proto(path: tuple, f, ds, nested):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    FNS = statistics_pb2.FeatureNameStatistics
    out = FNS()
    out.path.step.extend(path)
    common = common_proto(f, ds)
    if f.kind == "INT" and f.categorical:
        out.type = FNS.INT
        out.string_stats.CopyFrom(string_proto(f, common))
    elif f.kind in ("INT", "FLOAT"):
        out.type = FNS.INT if f.kind == "INT" else FNS.FLOAT
        out.num_stats.CopyFrom(numeric_proto(f, common))
    else:
        out.type = FNS.STRING
        out.string_stats.CopyFrom(string_proto(f, common))
    if f.nested:
        out.custom_stats.extend(level_custom_stats(f))
    return out


def struct_proto(path: tuple, ds):
    """The ``##SEQUENCE##`` struct of the feature lists: tfx_bsl's SequenceExample source gives every record
    one (possibly empty), so it is present once in every record."""
    from tensorflow_metadata.proto.v0 import statistics_pb2

    FNS = statistics_pb2.FeatureNameStatistics
    out = FNS(type=FNS.STRUCT)
    out.path.step.extend(path)
    c = out.struct_stats.common_stats
    n = ds.num_examples
    c.num_non_missing = n
    if n:
        c.min_num_values = c.max_num_values = 1
        c.avg_num_values = 1.0
        c.tot_num_values = n
        b = ds.opts.num_values_histogram_buckets
        c.num_values_histogram.CopyFrom(quantiles_histogram(np.ones(b + 1), np.arange(b + 1) * n / b))
    return out
