"""Per-feature statistics of Example and SequenceExample records."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

__all__ = ["FeatureStats", "DatasetStats", "compute_stats"]

_KIND = {np.dtype(np.int64): "int64", np.dtype(np.float32): "float"}


@dataclass
class FeatureStats:
    """Statistics of one feature over the records that were read.

    ``present``: records where the feature is set (a Feature with no kind
    counts as ``empty``, not present); ``kinds``: how often each kind was
    seen; ``num_values`` min/max/mean over present records (for a feature
    list: values over all steps, ``steps`` min/max/mean); numeric min/max/mean
    over all values, NaNs ignored; ``top``: the most common bytes values.

    Values are counted whole: a value longer than 64 bytes is counted under
    its length and BLAKE2b digest (images that share a header are different
    values) and shown truncated, with its length and digest.
    """

    name: str
    present: int = 0
    empty: int = 0
    kinds: Counter = field(default_factory=Counter)
    num_values_min: int | None = None
    num_values_max: int | None = None
    num_values_sum: int = 0
    steps_min: int | None = None
    steps_max: int | None = None
    steps_sum: int = 0
    is_sequence: bool = False
    value_min: float | None = None
    value_max: float | None = None
    value_sum: float = 0.0
    value_count: int = 0
    nan_count: int = 0
    top_counter: Counter = field(default_factory=Counter)
    max_tracked: int = 10000
    # key of a long value in top_counter -> how it is shown
    shown: dict = field(default_factory=dict, repr=False)

    @property
    def kind(self) -> str:
        if not self.kinds:
            return "none"
        if len(self.kinds) == 1:
            return next(iter(self.kinds))
        return "/".join(sorted(self.kinds))

    @property
    def num_values_mean(self) -> float | None:
        return self.num_values_sum / self.present if self.present else None

    @property
    def steps_mean(self) -> float | None:
        return self.steps_sum / self.present if self.present and self.is_sequence else None

    @property
    def value_mean(self) -> float | None:
        return self.value_sum / self.value_count if self.value_count else None

    def top(self, k: int = 5) -> list[tuple[bytes, int]]:
        """The ``k`` most common values and their counts (a long value as its first 64 bytes)."""
        return [
            (key if isinstance(key, bytes) else self.shown[key] + b"...", n)
            for key, n in self.top_counter.most_common(k)
        ]

    def _values(self, value) -> int:
        if isinstance(value, np.ndarray):
            self.kinds[_KIND.get(value.dtype, str(value.dtype))] += 1
            if value.size:
                self.add_numbers(value)
            return len(value)
        self.kinds["bytes"] += 1
        counter = self.top_counter
        for b in value:
            key = b if len(b) <= _WHOLE else _long_key(b)
            if key in counter or len(counter) < self.max_tracked:  # bounded memory on high-cardinality features
                counter[key] += 1
                if key is not b and key not in self.shown:
                    self.shown[key] = b[:_WHOLE]
        return len(value)

    def add_numbers(self, value: np.ndarray) -> np.ndarray:
        """Adds numeric values to min/max/sum/count (NaNs counted apart); returns them as float64 without NaNs."""
        v = value.astype(np.float64, copy=False)
        finite = v[~np.isnan(v)]
        self.nan_count += int(v.size - finite.size)
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            self.value_min = lo if self.value_min is None else min(self.value_min, lo)
            self.value_max = hi if self.value_max is None else max(self.value_max, hi)
            self.value_sum += float(finite.sum())
            self.value_count += int(finite.size)
        return finite

    def _count(self, n: int) -> None:
        self.present += 1
        self.num_values_sum += n
        self.num_values_min = n if self.num_values_min is None else min(self.num_values_min, n)
        self.num_values_max = n if self.num_values_max is None else max(self.num_values_max, n)

    def add(self, value) -> None:
        if value is None:
            self.empty += 1
            return
        self._count(self._values(value))

    def add_steps(self, steps: list) -> None:
        self.is_sequence = True
        n = 0
        for step in steps:
            if step is not None:
                n += self._values(step)
        self._count(n)
        s = len(steps)
        self.steps_sum += s
        self.steps_min = s if self.steps_min is None else min(self.steps_min, s)
        self.steps_max = s if self.steps_max is None else max(self.steps_max, s)

    def to_dict(self, top_k: int = 5) -> dict:
        d = {
            "name": self.name,
            "kind": self.kind,
            "present": self.present,
            "empty": self.empty,
            "num_values": {"min": self.num_values_min, "max": self.num_values_max, "mean": self.num_values_mean},
        }
        if self.is_sequence:
            d["steps"] = {"min": self.steps_min, "max": self.steps_max, "mean": self.steps_mean}
        if self.value_count or self.nan_count:
            d["values"] = {"min": self.value_min, "max": self.value_max, "mean": self.value_mean, "nan": self.nan_count}
        if self.top_counter:
            d["top"] = [[_label(key, self.shown), c] for key, c in self.top_counter.most_common(top_k)]
        return d


_WHOLE = 64  # values up to this many bytes are kept as they are; longer ones by digest


def _long_key(b: bytes) -> tuple[int, bytes]:
    """A long value's counting key: its length and a 16-byte BLAKE2b digest of all of it."""
    return (len(b), hashlib.blake2b(b, digest_size=16).digest())


def _label(key, shown: dict) -> str:
    """A counted value as text; a long one as its first bytes, its length and the start of its digest."""
    if isinstance(key, bytes):
        return _show(key)
    head = _show(shown[key])
    return f"{head.removesuffix('...')}... ({key[0]} bytes, blake2b {key[1][:4].hex()})"


def _show(b: bytes) -> str:
    try:
        s = b.decode("utf-8")
        if s.isprintable():
            return s
    except UnicodeDecodeError:
        pass
    return "0x" + b[:32].hex() + ("..." if len(b) > 32 else "")


@dataclass
class DatasetStats:
    """Statistics of every feature: ``features`` (context / Example features) and ``feature_lists``."""

    records: int = 0
    payload: str = "Example"
    features: dict[str, FeatureStats] = field(default_factory=dict)
    feature_lists: dict[str, FeatureStats] = field(default_factory=dict)

    def to_dict(self, top_k: int = 5) -> dict:
        d = {
            "records": self.records,
            "payload": self.payload,
            "features": [s.to_dict(top_k) for _, s in sorted(self.features.items())],
        }
        if self.feature_lists:
            d["feature_lists"] = [s.to_dict(top_k) for _, s in sorted(self.feature_lists.items())]
        return d


def compute_stats(
    records, *, sequence: bool = False, max_records: int | None = None, stats: DatasetStats | None = None
) -> DatasetStats:
    """Statistics of ``records`` (an iterable of ``RecordBatch`` objects or of bytes).

    ``sequence=True`` reads SequenceExamples (context features in
    ``features``, feature lists in ``feature_lists``). Pass ``stats`` to keep
    adding to an earlier result.
    """
    from tfrx.codec import decode_example, decode_sequence_example

    out = stats or DatasetStats(payload="SequenceExample" if sequence else "Example")
    for item in records:
        batch = [item] if isinstance(item, (bytes, bytearray, memoryview)) else item
        for record in batch:
            if max_records is not None and out.records >= max_records:
                return out
            out.records += 1
            if sequence:
                context, lists = decode_sequence_example(record, keep_empty=True)
                for name, steps in lists.items():
                    fs = out.feature_lists.get(name) or out.feature_lists.setdefault(name, FeatureStats(name))
                    fs.add_steps(steps)
            else:
                context = decode_example(record, keep_empty=True)
            for name, value in context.items():
                fs = out.features.get(name) or out.features.setdefault(name, FeatureStats(name))
                fs.add(value)
    return out
