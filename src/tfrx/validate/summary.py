"""Statistics protos as plain, JSON-ready dicts (for a viewer, a report, a notebook)."""

from __future__ import annotations

__all__ = ["feature_summaries", "compare_summaries"]

_TYPES = {0: "INT", 1: "FLOAT", 2: "STRING", 3: "BYTES", 4: "STRUCT"}


def _histogram(h) -> dict:
    return {
        "type": "QUANTILES" if h.type == 1 else "STANDARD",
        "num_nan": int(h.num_nan),
        "buckets": [[b.low_value, b.high_value, b.sample_count] for b in h.buckets],
    }


def _feature(f) -> dict:
    which = f.WhichOneof("stats")
    d: dict = {"feature": ".".join(f.path.step) or f.name, "type": _TYPES.get(f.type, str(f.type))}
    if which == "num_stats":
        s = f.num_stats
        c = s.common_stats
        d.update(
            mean=s.mean,
            std_dev=s.std_dev,
            num_zeros=int(s.num_zeros),
            min=s.min,
            median=s.median,
            max=s.max,
            histograms=[_histogram(h) for h in s.histograms],
        )
    elif which == "string_stats":
        s = f.string_stats
        c = s.common_stats
        d.update(
            unique=int(s.unique),
            avg_length=s.avg_length,
            invalid_utf8_count=int(s.invalid_utf8_count),
            top_values=[[t.value, t.frequency] for t in s.top_values],
        )
    elif which == "struct_stats":
        c = f.struct_stats.common_stats
    elif which == "bytes_stats":
        c = f.bytes_stats.common_stats
    else:
        return d
    d.update(
        num_non_missing=int(c.num_non_missing),
        num_missing=int(c.num_missing),
        min_num_values=int(c.min_num_values),
        max_num_values=int(c.max_num_values),
        avg_num_values=c.avg_num_values,
        tot_num_values=int(c.tot_num_values),
    )
    return d


def feature_summaries(statistics) -> list[dict]:
    """One dict per dataset of a ``DatasetFeatureStatisticsList``: ``{"name", "num_examples", "features":
    [{"feature", "type", "num_non_missing", "num_missing", ... numeric or string fields, histograms as
    [low, high, count] buckets}]}``; two datasets' lists put side by side compare them."""
    out = []
    for ds in statistics.datasets:
        out.append(
            {
                "name": ds.name,
                "num_examples": int(ds.num_examples),
                "weighted_num_examples": ds.weighted_num_examples,
                "features": [_feature(f) for f in ds.features],
            }
        )
    return out


def compare_summaries(a, b) -> list[dict]:
    """Two statistics (``DatasetFeatureStatisticsList``; the first dataset of each) feature by feature, for
    showing them side by side: ``[{"feature", "type", "a": summary or None, "b": summary or None,
    "linf": float or None, "js": float or None}]`` sorted by feature. ``linf``: the L-infinity distance of
    the value distributions (string features); ``js``: the approximate Jensen-Shannon divergence (value
    counts for strings, standard histograms for numbers), as TFDV's drift comparators measure them."""
    from tfrx.validate.comparators import jensen_shannon_divergence, linf_distance
    from tfrx.validate.stats_view import DatasetView, first_dataset

    da, db = first_dataset(a), first_dataset(b)
    va, vb = DatasetView(da), DatasetView(db)
    sa = {s["feature"]: s for s in (_feature(f) for f in da.features)}
    sb = {s["feature"]: s for s in (_feature(f) for f in db.features)}
    out = []
    for name in sorted(set(sa) | set(sb)):
        fa, fb = va.get(name), vb.get(name)
        row: dict = {
            "feature": name,
            "type": (sa.get(name) or sb[name])["type"],
            "a": sa.get(name),
            "b": sb.get(name),
            "linf": None,
            "js": None,
        }
        if fa is not None and fb is not None:
            ca, cb = fa.string_values_with_counts(), fb.string_values_with_counts()
            if ca and cb:
                row["linf"] = linf_distance(ca, cb)[1]
            try:
                row["js"] = jensen_shannon_divergence(fa, fb)
            except ValueError:
                pass
        out.append(row)
    return out
