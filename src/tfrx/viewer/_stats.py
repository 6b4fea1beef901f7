"""Per-feature statistics for the viewer, computed a batch at a time by the native parser.

Every feature of the inferred schema is parsed as a ``VarLenFeature`` of its
kind by :class:`tfrx.ExampleParser` (a SequenceExample's context and
feature lists by :class:`tfrx.SequenceExampleParser`), over batches of
records, and the columns are summarised with NumPy: how many records hold
values (``present``), the number of values per record (and of steps per
feature list) with a histogram, numeric min/max/mean with a histogram, and
the most common values (integers and bytes values up to 64 bytes).

A batch the parser rejects (a record whose feature has another kind than
the schema's, a damaged record) is decoded record by record instead, and
the values of another kind are counted under that kind. Numeric histograms
are drawn from a uniform sample of up to 65,536 values per feature (a
random key per value, the smallest keys kept), between the exact minimum and
maximum; everything else is exact over the records read.
"""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np

from tfrx.tools._stats import FeatureStats

__all__ = ["ColumnStats", "StatsJob"]

BINS = 20
RESERVOIR = 65_536
TOP_TRACKED = 10_000
_WHOLE = 64
_DTYPES = {"int64": "int64", "float": "float32", "bytes": "string"}


def _histogram(values: np.ndarray, scale: float = 1.0, lo=None, hi=None, *, integer: bool = False) -> dict | None:
    values = values[np.isfinite(values)] if values.dtype.kind == "f" else values
    if not values.size:
        return None
    lo = float(values.min()) if lo is None else lo
    hi = float(values.max()) if hi is None else hi
    if (integer or values.dtype.kind in "iu") and hi - lo < BINS:
        edges = np.arange(lo, hi + 2, dtype=np.float64) - 0.5  # one bin per integer
    else:
        edges = np.linspace(lo, hi if hi > lo else lo + 1, BINS + 1)
    counts, edges = np.histogram(values, bins=edges)
    return {"edges": [round(float(e), 6) for e in edges], "counts": [int(round(c * scale)) for c in counts]}


class ColumnStats:
    """One feature's statistics, fed column by column (``add(values, splits)``)."""

    def __init__(self, name: str, kind: str, *, feature_list: bool = False, seed: int = 0) -> None:
        self.name, self.kind, self.feature_list = name, kind, feature_list
        self.kinds: Counter = Counter()
        self.present = 0
        self.lengths: Counter = Counter()
        self.steps: Counter = Counter()
        self.numbers = FeatureStats(name)  # numeric min/max/sum/count, as `tfrx stats` keeps them
        self.finite = 0  # values the histogram covers (not NaN, not infinite)
        self.top: Counter = Counter()
        self.long_values = 0
        self._rng = np.random.default_rng(seed)
        self._sample = np.zeros(0, np.float64)
        self._keys = np.zeros(0, np.float64)

    def add(
        self, values: np.ndarray, splits: np.ndarray, steps: np.ndarray | None = None, kind: str | None = None
    ) -> None:
        lengths = np.diff(splits)
        present = lengths > 0 if steps is None else steps > 0
        self.present += int(present.sum())
        self.kinds[kind or self.kind] += int(present.sum())
        self._count(self.lengths, lengths[present])
        if steps is not None:
            self._count(self.steps, steps[present])
        if not values.size:
            return
        if values.dtype == object:
            short = [v for v in values.tolist() if len(v) <= _WHOLE]
            self.long_values += values.size - len(short)
            self._top(Counter(short))
            return
        finite = self.numbers.add_numbers(values)
        finite = finite[np.isfinite(finite)]
        self.finite += int(finite.size)
        if finite.size:
            keys = self._rng.random(finite.size)
            sample, keys = np.concatenate([self._sample, finite]), np.concatenate([self._keys, keys])
            if sample.size > RESERVOIR:
                keep = np.argpartition(keys, RESERVOIR)[:RESERVOIR]
                sample, keys = sample[keep], keys[keep]
            self._sample, self._keys = sample, keys
        if values.dtype.kind == "i":
            uniq, counts = np.unique(values, return_counts=True)
            self._top(dict(zip(uniq.tolist(), counts.tolist())))

    @staticmethod
    def _count(counter: Counter, lengths: np.ndarray) -> None:
        if lengths.size:
            uniq, counts = np.unique(lengths, return_counts=True)
            counter.update(dict(zip(uniq.tolist(), counts.tolist())))

    def _top(self, counts) -> None:
        for key, c in counts.items():
            if key in self.top or len(self.top) < TOP_TRACKED:  # bounded memory on high-cardinality features
                self.top[key] += c

    def to_dict(self, top_k: int = 10) -> dict:
        from tfrx.tools._stats import _show

        def spread(counter: Counter) -> dict | None:
            if not counter:
                return None
            keys = np.fromiter(counter.keys(), np.int64)
            counts = np.fromiter(counter.values(), np.int64)
            total = int(counts.sum())
            hist = _histogram(np.repeat(keys, counts)) if total <= 5_000_000 else None
            return {
                "min": int(keys.min()),
                "max": int(keys.max()),
                "mean": float((keys * counts).sum() / total),
                "histogram": hist,
            }

        kinds = [k for k, n in self.kinds.most_common() if n]
        d = {
            "name": self.name,
            "kind": "/".join(kinds) if kinds else "none",
            "kinds": dict(self.kinds),
            "present": self.present,
            "num_values": spread(self.lengths),
        }
        if self.feature_list:
            d["steps"] = spread(self.steps)
        n = self.numbers
        if n.value_count or n.nan_count:
            scale = self.finite / max(1, self._sample.size)
            lo, hi = (n.value_min, n.value_max) if self._sample.size else (None, None)
            if (
                lo is not None and not np.isfinite(lo) or hi is not None and not np.isfinite(hi)
            ):  # infinities: the finite span
                lo, hi = float(self._sample.min()), float(self._sample.max())
            d["values"] = {
                "min": _number(n.value_min),
                "max": _number(n.value_max),
                "mean": _number(n.value_mean),
                "nan": n.nan_count,
                "histogram": _histogram(self._sample, scale, lo, hi, integer=self.kind == "int64"),
            }
        if self.top:
            d["top"] = [[_show(k) if isinstance(k, bytes) else k, c] for k, c in self.top.most_common(top_k)]
        if self.long_values:
            d["long_values"] = self.long_values
        return d


def _number(x):
    """A statistic for JSON: infinities as text."""
    return x if x is None or np.isfinite(x) else str(x)


def _kind_of(value) -> str:
    if isinstance(value, np.ndarray):
        return "int64" if value.dtype.kind == "i" else "float"
    return "bytes"


class StatsJob:
    """Statistics over ``source`` in the background: ``mode="all"`` reads every record, ``"sample"`` ``records`` drawn at random."""

    def __init__(
        self,
        source,
        kinds: dict,
        sequence_kinds: dict | None = None,
        *,
        mode: str = "sample",
        records: int = 10_000,
        seed: int = 0,
        batch: int = 1024,
    ) -> None:
        if mode not in ("all", "sample"):
            raise ValueError(f"mode must be 'all' or 'sample', got {mode!r}")
        self.source, self.mode, self.records, self.seed, self.batch = source, mode, int(records), int(seed), batch
        self.sequence = sequence_kinds is not None
        self.kinds = {k: v for k, v in kinds.items() if v in _DTYPES}
        self.sequence_kinds = {k: v for k, v in (sequence_kinds or {}).items() if v in _DTYPES}
        self.features = {k: ColumnStats(k, v, seed=seed + i) for i, (k, v) in enumerate(sorted(self.kinds.items()))}
        self.lists = {
            k: ColumnStats(k, v, feature_list=True, seed=seed + 1000 + i)
            for i, (k, v) in enumerate(sorted(self.sequence_kinds.items()))
        }
        self.done = 0
        self.unreadable = 0
        self.target = 0
        self.status = "idle"
        self.result: dict | None = None
        self.error: str | None = None
        self.cancelled = False
        self._lock = threading.Lock()
        self._parser = self._make_parser()

    def _make_parser(self):
        from tfrx import dtypes
        from tfrx.parsing import ExampleParser, SequenceExampleParser, VarLenFeature

        dt = {"int64": dtypes.int64, "float": dtypes.float32, "bytes": dtypes.string}
        context = {k: VarLenFeature(dt[v]) for k, v in self.kinds.items()}
        if self.sequence:
            lists = {k: VarLenFeature(dt[v]) for k, v in self.sequence_kinds.items()}
            if not context and not lists:
                return None
            return SequenceExampleParser(context or None, lists or None, num_parallel_calls=1)
        return ExampleParser(context, num_parallel_calls=1) if context else None

    # ------------------------------------------------------------------ running
    def start(self) -> None:
        with self._lock:
            if self.status == "idle":
                self.status = "running"
                threading.Thread(target=self._run, daemon=True, name="tfrx-view-stats").start()

    def state(self) -> dict:
        return {
            "status": self.status,
            "progress": self.done,
            "target": self.target,
            "mode": self.mode,
            "result": self.result,
            "error": self.error,
        }

    def _run(self) -> None:
        try:
            for batch in self._batches():
                if self.cancelled:
                    self.status = "cancelled"
                    return
                self.add(batch)
            self.result = self.to_dict()
            self.status = "done"
            self.features, self.lists = {}, {}  # the result is all that is kept of a finished job
        except Exception as e:  # reported to the page, never kills the server
            self.error, self.status = f"{type(e).__name__}: {e}", "failed"

    def _batches(self):
        total = self.source.total()
        if self.mode == "all" or self.records >= total:
            self.target = total
            for _, batch in self.source.batches(0, total, self.batch):
                yield batch
            return
        numbers = self.source.sample_numbers(self.records, self.seed)
        self.target = int(numbers.size)
        for lo in range(0, numbers.size, self.batch):
            yield [r[3] for r in self.source.read_numbers(numbers[lo : lo + self.batch])]

    # ------------------------------------------------------------------ counting
    def add(self, records) -> None:
        """Adds one batch of serialized records."""
        from tfrx.errors import TfrxError

        n = len(records)
        if self._parser is not None and n:
            try:
                self._add_parsed(self._parser.parse(records))
            except (TfrxError, ValueError):
                self._add_decoded(records.to_list() if hasattr(records, "to_list") else list(records))
        self.done += n

    def _add_parsed(self, parsed) -> None:
        if self.sequence:
            context, lists, _ = parsed
        else:
            context, lists = parsed, {}
        for k, sp in context.items():
            self.features[k].add(sp.values, sp.nested_row_splits[0])
        for k, sp in lists.items():
            record_splits, step_splits = sp.nested_row_splits
            self.lists[k].add(sp.values, step_splits[record_splits], steps=np.diff(record_splits))

    def _add_decoded(self, records: list) -> None:
        """The slow path for a batch the parser rejected: each record decoded on its own."""
        from tfrx.codec import decode_example, decode_sequence_example
        from tfrx.errors import DecodeError

        for rec in records:
            try:
                if self.sequence:
                    context, lists = decode_sequence_example(rec)
                else:
                    context, lists = decode_example(rec), {}
            except DecodeError:
                self.unreadable += 1
                continue
            for table, values in ((self.features, context), (self.lists, lists)):
                for name, value in values.items():
                    stats = table.get(name)
                    if stats is None or value is None:
                        continue
                    if table is self.lists:
                        steps = [s for s in value if s is not None]
                        kind = _kind_of(steps[0]) if steps else stats.kind
                        flat = _flat(steps, kind)
                        stats.add(flat, np.array([0, len(flat)]), steps=np.array([len(value)]), kind=kind)
                    else:
                        kind = _kind_of(value)
                        stats.add(_flat([value], kind), np.array([0, len(value)]), kind=kind)

    def to_dict(self) -> dict:
        out = {
            "records": self.done,
            "total": self.source.total(),
            "mode": self.mode,
            "unreadable": self.unreadable,
            "features": [s.to_dict() for _, s in sorted(self.features.items())],
        }
        if self.sequence:
            out["feature_lists"] = [s.to_dict() for _, s in sorted(self.lists.items())]
        return out


def _flat(parts: list, kind: str) -> np.ndarray:
    if kind == "bytes":
        items = [bytes(v) for p in parts for v in p]
        out = np.empty(len(items), object)
        out[:] = items
        return out
    return np.concatenate([np.asarray(p) for p in parts]) if parts else np.zeros(0)
