"""Distances between two datasets' statistics of one feature, as TFDV's drift and skew comparators measure them.

- L-infinity distance (categorical features): the largest difference
  between the two normalized value distributions read from the rank
  histograms, and the value where it is reached.
- Normalized absolute difference: the same with both counts divided by the
  sum of both totals.
- Approximate Jensen-Shannon divergence: for string features over the value
  counts of the rank histograms; for numeric features over their standard
  (or quantiles) histograms, re-bucketed onto the union of both sets of
  boundaries (counts spread uniformly within a bucket), point buckets,
  infinite mass and NaNs as buckets of their own. Base-2 logarithms, capped
  at 1.
"""

from __future__ import annotations

import math

__all__ = ["linf_distance", "normalized_abs_difference", "jensen_shannon_divergence", "histogram_js_divergence"]


def _normalize(counts: dict[str, float]) -> dict[str, float]:
    total = sum(counts.values())
    if total == 0:
        return dict(counts)
    return {k: v / total for k, v in counts.items()}


def _max_diff(a: dict[str, float], b: dict[str, float]) -> tuple[str, float]:
    best_key, best = "", 0.0
    for k in sorted(set(a) | set(b)):
        d = abs(a.get(k, 0.0) - b.get(k, 0.0))
        if d >= best:
            best_key, best = k, d
    return best_key, best


def linf_distance(a: dict[str, float], b: dict[str, float]) -> tuple[str, float]:
    """(value with the largest difference, L-infinity distance) of two value -> count maps, each normalized."""
    return _max_diff(_normalize(a), _normalize(b))


def normalized_abs_difference(a: dict[str, float], b: dict[str, float]) -> tuple[str, float]:
    """(value, largest absolute difference) of two value -> count maps scaled by the sum of both totals."""
    scale = sum(a.values()) + sum(b.values())
    if scale == 0:
        return _max_diff(a, b)
    return _max_diff({k: v / scale for k, v in a.items()}, {k: v / scale for k, v in b.items()})


def _js_maps(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        raise ValueError("both distributions must hold values")
    if any(v <= 0 for v in a.values()) or any(v <= 0 for v in b.values()):
        raise ValueError("sample counts must be positive")
    sa, sb = sum(a.values()), sum(b.values())
    kl = 0.0
    for k in set(a) | set(b):
        pa, pb = a.get(k, 0.0) / sa, b.get(k, 0.0) / sb
        m = (pa + pb) / 2
        if pa:
            kl += pa * math.log2(pa / m)
        if pb:
            kl += pb * math.log2(pb / m)
    return min(kl / 2, 1.0)


def _strip(h) -> tuple[list[tuple[float, float, float]], dict[float, float], float, float]:
    """(finite range buckets, point buckets, infinite mass, NaN count) of a Histogram proto."""
    ranges: list[tuple[float, float, float]] = []
    points: dict[float, float] = {}
    inf = 0.0
    for b in h.buckets:
        lo, hi, c = b.low_value, b.high_value, b.sample_count
        if not (math.isfinite(lo) and math.isfinite(hi)):
            inf += c
        elif lo == hi:
            points[lo] = points.get(lo, 0.0) + c
        else:
            ranges.append((lo, hi, c))
    return ranges, points, inf, float(h.num_nan)


def _rebucket(bounds: list[float], ranges: list[tuple[float, float, float]]) -> list[float]:
    """Counts of ``ranges`` on consecutive ``bounds`` (each range's count spread evenly over its width)."""
    out = [0.0] * (len(bounds) - 1)
    for lo, hi, c in ranges:
        width = hi - lo
        for i in range(len(bounds) - 1):
            a, b = bounds[i], bounds[i + 1]
            overlap = min(b, hi) - max(a, lo)
            if overlap > 0:
                out[i] += c * overlap / width
    return out


def histogram_js_divergence(h1, h2) -> float:
    """Approximate Jensen-Shannon divergence of two ``Histogram`` protos (TFDV's histogram alignment)."""
    if h1.type != h2.type:
        raise ValueError("histograms must be of the same type")
    r1, p1, inf1, nan1 = _strip(h1)
    r2, p2, inf2, nan2 = _strip(h2)
    b1 = sorted({x for lo, hi, _ in r1 for x in (lo, hi)})
    b2 = sorted({x for lo, hi, _ in r2 for x in (lo, hi)})
    if b1 == b2:
        c1, c2 = [c for _, _, c in r1], [c for _, _, c in r2]
    else:
        bounds = sorted(set(b1) | set(b2))
        c1, c2 = _rebucket(bounds, r1), _rebucket(bounds, r2)
    for point in sorted(set(p1) | set(p2)):
        c1.append(p1.get(point, 0.0))
        c2.append(p2.get(point, 0.0))
    if inf1:
        c1.append(inf1)
        c2.append(0.0)
    if inf2:
        c1.append(0.0)
        c2.append(inf2)
    if nan1 > 0 or nan2 > 0:
        c1 += [0.0, nan1]
        c2 += [nan2, 0.0]
    s1, s2 = sum(c1), sum(c2)
    if s1 == 0 or s2 == 0:
        raise ValueError("cannot normalize an empty histogram")
    kl = 0.0
    for x, y in zip(c1, c2):
        p, q = x / s1, y / s2
        m = (p + q) / 2
        if p > 0 and m > 0:
            kl += p * math.log2(p / m)
        if q > 0 and m > 0:
            kl += q * math.log2(q / m)
    return min(kl / 2, 1.0)


def jensen_shannon_divergence(a, b, *, quantiles: bool = False) -> float:
    """Approximate JS divergence of two :class:`~tfrx.validate.stats_view.FeatureView`: over the value counts
    for strings, else over the standard (``quantiles=True``: quantiles) histograms."""
    ma, mb = a.string_values_with_counts(), b.string_values_with_counts()
    if ma and mb:
        return _js_maps(ma, mb)
    ha, hb = a.histogram(quantiles), b.histogram(quantiles)
    if ha is not None and hb is not None:
        return histogram_js_divergence(ha, hb)
    raise ValueError("the two statistics are not both numeric or both strings with values")
