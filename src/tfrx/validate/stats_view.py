"""Read-only views of statistics protos: what schema inference and validation ask of a feature's statistics.

The questions are TFDV's (statistics_view.cc): how many records hold the
feature, the min / max number of values at each nesting level, the values
of a string feature with their counts (from the rank histogram), whether
any value was not UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FeatureView", "DatasetView", "path_name"]


def path_name(path) -> str:
    """A feature path as TFDV serializes it: its steps joined by dots."""
    return ".".join(path.step)


@dataclass
class FeatureView:
    """One ``FeatureNameStatistics`` and the dataset it belongs to."""

    proto: Any
    num_examples: float
    weighted: bool = False

    @property
    def name(self) -> str:
        return path_name(self.proto.path) if self.proto.path.step else self.proto.name

    @property
    def type(self) -> int:
        return self.proto.type

    def common(self):
        p = self.proto
        which = p.WhichOneof("stats")
        if which == "num_stats":
            return p.num_stats.common_stats
        if which == "string_stats":
            return p.string_stats.common_stats
        if which == "bytes_stats":
            return p.bytes_stats.common_stats
        if which == "struct_stats":
            return p.struct_stats.common_stats
        return None

    @property
    def num_present(self) -> float:
        c = self.common()
        if c is None:
            return 0.0
        return c.weighted_common_stats.num_non_missing if self.weighted else c.num_non_missing

    @property
    def num_missing(self) -> float:
        c = self.common()
        if c is None:
            return self.num_examples
        return c.weighted_common_stats.num_missing if self.weighted else c.num_missing

    def min_max_num_values(self) -> list[tuple[int, int]]:
        c = self.common()
        if c is None:
            return [(0, 0)]
        levels = [(max(int(p.min_num_values), 0), int(p.max_num_values)) for p in c.presence_and_valency_stats]
        return levels or [(max(int(c.min_num_values), 0), int(c.max_num_values))]

    def num_missing_nested(self) -> list[float]:
        c = self.common()
        if c is None:
            return [self.num_examples]
        levels = [float(p.num_missing) for p in c.presence_and_valency_stats]
        return levels or [float(c.num_missing)]

    @property
    def nested(self) -> bool:
        c = self.common()
        return c is not None and len(c.presence_and_valency_stats) > 1

    def string_values_with_counts(self) -> dict[str, float]:
        """Values and counts from the rank histogram (TFDV's GetStringValuesWithCounts); empty for numbers."""
        if self.proto.WhichOneof("stats") != "string_stats":
            return {}
        s = self.proto.string_stats
        h = s.weighted_string_stats.rank_histogram if self.weighted else s.rank_histogram
        out: dict[str, float] = {}
        for b in h.buckets:
            out.setdefault(b.label, b.sample_count)
        return out

    @property
    def has_invalid_utf8(self) -> bool:
        return self.proto.WhichOneof("stats") == "string_stats" and self.proto.string_stats.invalid_utf8_count > 0

    def total_value_count(self) -> float:
        c = self.common()
        if c is None:
            return 0.0
        return c.weighted_common_stats.tot_num_values if self.weighted else c.tot_num_values

    def histogram(self, quantiles: bool = False):
        """The standard (or quantiles) histogram of a numeric feature, or None."""
        if self.proto.WhichOneof("stats") != "num_stats":
            return None
        ns = self.proto.num_stats
        hists = ns.weighted_numeric_stats.histograms if self.weighted else ns.histograms
        want = 1 if quantiles else 0  # Histogram.QUANTILES / STANDARD
        for h in hists:
            if h.type == want:
                return h
        return None


class DatasetView:
    """The features of one ``DatasetFeatureStatistics`` by serialized path."""

    def __init__(self, dataset, weighted: bool = False) -> None:
        self.proto = dataset
        self.weighted = weighted
        n = dataset.weighted_num_examples if weighted else dataset.num_examples
        self.num_examples = float(n)
        self.features: dict[str, FeatureView] = {}
        for f in dataset.features:
            v = FeatureView(f, self.num_examples, weighted)
            self.features[v.name] = v

    def get(self, name: str) -> FeatureView | None:
        return self.features.get(name)


def first_dataset(stats):
    """The first dataset of a ``DatasetFeatureStatisticsList`` (or the ``DatasetFeatureStatistics`` given)."""
    if hasattr(stats, "datasets"):
        if not stats.datasets:
            raise ValueError("the statistics hold no dataset")
        return stats.datasets[0]
    return stats
