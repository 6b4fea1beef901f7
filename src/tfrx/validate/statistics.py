"""Statistics of Example / SequenceExample records in TFDV's format (``DatasetFeatureStatisticsList``).

What is computed follows TFDV's basic and top-k generators: per feature the
presence (``num_non_missing`` / ``num_missing``: an empty list is present),
values per record (min / max / total / average and a quantiles histogram),
for numbers the mean, standard deviation (over all values, population
variance), zeros, min, max, median and a standard and a quantiles histogram
(NaNs counted apart, as TFDV does), for strings the distinct values, the most
frequent ones, a rank histogram, the average length and the values that are
not UTF-8. Counts, min, max, mean, standard deviation, zeros and the value
counts are exact; quantiles, the median and the histograms built from them
come from :class:`~tfrx.validate.sketches.QuantileSketch` (exact below its
``k`` values), the top values from :class:`~tfrx.validate.sketches.TopKSketch`
(exact below its capacity).

A feature list of a SequenceExample is a nested feature (path
``##SEQUENCE##`` / name, as tfx_bsl's SequenceExample decoder names it): its
``presence_and_valency_stats`` hold steps per record then values per step,
and its min / max values and histogram are per step, as TFDV reports nested
lists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfrx.validate.columns import (
    Batch,
    Column,
    batch_columns,
    feature_presence,
    learn_kinds_from_presence,
    record_value_counts,
)
from tfrx.validate.sketches import QuantileSketch, TopKSketch

__all__ = ["StatsOptions", "StatisticsAccumulator", "generate_statistics", "statistics_from_records"]

DEFAULT_SLICE = "All Examples"  # TFDV's name of the unsliced dataset
SEQUENCE_PARENT = "##SEQUENCE##"


@dataclass
class StatsOptions:
    """What to compute; the defaults are TFDV's ``StatsOptions`` defaults.

    ``weight_feature``: a numeric feature holding each record's weight (every
    record must have exactly one value), giving the weighted statistics.
    ``slice_feature``: a feature whose values slice the records (one dataset
    per value, named ``"<feature>_<value>"`` as TFDV's feature-value slicer
    names them, besides ``"All Examples"``). ``seed`` fixes the sketches'
    draws; ``quantile_k`` and ``topk_capacity`` size them.

    ``schema``: a ``Schema`` whose categorical INT features (``int_domain { is_categorical: true }``,
    a ``bool_domain``) get string statistics (distinct values, top values, rank histogram, average
    length of the decimal form) instead of numeric ones, as TFDV's ``StatsOptions.schema`` gives them.

    ``discover_features``: ``"all"`` (default) reads the keys of every
    record with the native presence walk before the batch parser reads the values,
    so every feature is counted wherever it first appears (as TFDV does);
    ``"first_batch"`` learns the features from the first batch of each file
    and skips that pass (faster; a feature that first appears later, in
    records that hold every known feature, is not counted).
    """

    num_top_values: int = 20
    frequency_threshold: int = 1
    weighted_frequency_threshold: float = 1.0
    num_rank_histogram_buckets: int = 1000
    num_values_histogram_buckets: int = 10
    num_histogram_buckets: int = 10
    num_quantiles_histogram_buckets: int = 10
    weight_feature: str | None = None
    slice_feature: str | None = None
    seed: int = 0
    quantile_k: int = 4096
    schema: Any = None
    topk_capacity: int = 100_000
    batch_size: int = 4096
    discover_features: str = "all"

    def __post_init__(self) -> None:
        if self.discover_features not in ("first_batch", "all"):
            raise ValueError(f"discover_features must be 'first_batch' or 'all', got {self.discover_features!r}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {self.batch_size}")


class _Level:
    """Presence and valency of one nesting level (TFDV's _PresenceAndValencyStats)."""

    def __init__(self, opts: StatsOptions) -> None:
        self.num_non_missing = 0
        self.min_num_values: int | None = None
        self.max_num_values = 0
        self.total_num_values = 0
        self.weighted_num_non_missing = 0.0
        self.weighted_total_num_values = 0.0
        self.sketch = QuantileSketch(opts.quantile_k, opts.seed)

    def update(self, present: np.ndarray, counts: np.ndarray, weights: np.ndarray | None) -> None:
        c = counts[present]
        self.num_non_missing += int(c.size)
        if c.size:
            lo, hi = int(c.min()), int(c.max())
            self.min_num_values = lo if self.min_num_values is None else min(self.min_num_values, lo)
            self.max_num_values = max(self.max_num_values, hi)
            self.total_num_values += int(c.sum())
            self.sketch.add(c)
        if weights is not None:
            self.weighted_total_num_values += float(np.sum(counts * weights))
            self.weighted_num_non_missing += float(np.sum(weights[present]))

    def merge(self, o: _Level) -> None:
        self.num_non_missing += o.num_non_missing
        if o.min_num_values is not None:
            self.min_num_values = (
                o.min_num_values if self.min_num_values is None else min(self.min_num_values, o.min_num_values)
            )
        self.max_num_values = max(self.max_num_values, o.max_num_values)
        self.total_num_values += o.total_num_values
        self.weighted_num_non_missing += o.weighted_num_non_missing
        self.weighted_total_num_values += o.weighted_total_num_values
        self.sketch.merge(o.sketch)


class _MeanVar:
    """Mean and population variance, merged by Chan's formula (exact up to float64 rounding)."""

    def __init__(self) -> None:
        self.w = 0.0
        self.mean = 0.0
        self.m2 = 0.0

    def update(self, x: np.ndarray, w: np.ndarray | None = None) -> None:
        if not x.size:
            return
        with np.errstate(invalid="ignore", over="ignore"):  # infinities give an infinite or NaN moment, as in TFDV
            self._update(x, w)

    def _update(self, x: np.ndarray, w: np.ndarray | None) -> None:
        if w is None:
            bw = float(x.size)
            bmean = float(x.mean())
            bm2 = float(np.sum((x - bmean) ** 2))
        else:
            bw = float(w.sum())
            if bw == 0:
                return
            bmean = float(np.sum(x * w) / bw)
            bm2 = float(np.sum(w * (x - bmean) ** 2))
        self._combine(bw, bmean, bm2)

    def _combine(self, bw: float, bmean: float, bm2: float) -> None:
        tw = self.w + bw
        if tw == 0:
            return
        delta = bmean - self.mean
        self.mean += delta * bw / tw
        self.m2 += bm2 + delta * delta * self.w * bw / tw
        self.w = tw

    def merge(self, o: _MeanVar) -> None:
        if o.w:
            self._combine(o.w, o.mean, o.m2)

    @property
    def variance(self) -> float:
        return self.m2 / self.w if self.w else 0.0


class _Feature:
    """Everything gathered about one feature."""

    def __init__(self, opts: StatsOptions, nested: bool, categorical: bool = False) -> None:
        self.opts = opts
        self.categorical = categorical  # an INT feature counted as categories (schema is_categorical)
        self.kind: str | None = None
        self.nested = nested
        self.levels = [_Level(opts) for _ in range(2 if nested else 1)]
        # nested: values per record over all steps (TFDV's innermost valency of the top level)
        self.innermost = _Level(opts) if nested else None
        self.has_weights = opts.weight_feature is not None
        # numbers
        self.num_nan = 0
        self.num_zeros = 0
        self.min = math.inf
        self.max = -math.inf
        self.finite_min = math.inf
        self.finite_max = -math.inf
        self.pos_inf = 0.0
        self.pos_inf_weighted = 0.0
        self.meanvar = _MeanVar()
        self.wmeanvar = _MeanVar()
        self.quantiles = QuantileSketch(opts.quantile_k, opts.seed)
        self.wquantiles = QuantileSketch(opts.quantile_k, opts.seed)
        # strings
        self.total_bytes = 0
        self.invalid_utf8 = 0
        self.topk = TopKSketch(opts.topk_capacity, opts.seed)

    def set_kind(self, name: str, kind: str | None) -> None:
        if kind is None:
            return
        if self.kind is None:
            self.kind = kind
        elif self.kind != kind:
            raise ValueError(
                f"feature {name!r} holds values of two kinds, {self.kind} and {kind}; TFDV refuses this too "
                "(write the feature with one kind in every record)"
            )

    def update(self, name: str, col: Column, weights: np.ndarray | None) -> None:
        self.set_kind(name, col.kind)
        self.levels[0].update(col.present, col.counts, weights)
        vweights = None
        if col.step_counts is not None:
            sw = None if weights is None else np.repeat(weights, col.counts)
            self.levels[1].update(np.ones(col.step_counts.size, bool), col.step_counts, sw)
            if self.innermost is not None:
                self.innermost.update(col.present, record_value_counts(col), None)
            if sw is not None:
                vweights = np.repeat(sw, col.step_counts)
        elif weights is not None:
            vweights = np.repeat(weights, col.counts)
        if not col.values.size:
            return
        if col.kind == "STRING":
            vals = col.values.tolist()
            self.total_bytes += sum(map(len, vals))
            self.invalid_utf8 += _invalid_utf8(vals)
            self.topk.add(vals, vweights)
        else:
            if self.categorical and col.kind == "INT":
                ints = col.values.tolist()
                self.total_bytes += sum(len(str(v)) for v in ints)
                self.topk.add(ints, vweights)
            self._numbers(col.values.astype(np.float64, copy=False), vweights)

    def _numbers(self, v: np.ndarray, w: np.ndarray | None) -> None:
        nan = np.isnan(v)
        self.num_nan += int(nan.sum())
        if nan.any():
            v = v[~nan]
            w = None if w is None else w[~nan]
        if not v.size:
            return
        self.meanvar.update(v)
        lo, hi = float(v.min()), float(v.max())
        self.min, self.max = min(self.min, lo), max(self.max, hi)
        if math.isinf(lo) or math.isinf(hi):
            finite = v[np.isfinite(v)]
            if finite.size:
                self.finite_min = min(self.finite_min, float(finite.min()))
                self.finite_max = max(self.finite_max, float(finite.max()))
        else:
            self.finite_min, self.finite_max = min(self.finite_min, lo), max(self.finite_max, hi)
        posinf = np.isposinf(v)
        self.pos_inf += int(posinf.sum())
        self.num_zeros += int(v.size - np.count_nonzero(v))
        self.quantiles.add(v)
        if w is not None:
            self.wmeanvar.update(v, w)
            self.wquantiles.add(v, w)
            self.pos_inf_weighted += float(w[posinf].sum())

    def merge(self, o: _Feature, name: str) -> None:
        self.set_kind(name, o.kind)
        for a, b in zip(self.levels, o.levels):
            a.merge(b)
        if self.innermost is not None and o.innermost is not None:
            self.innermost.merge(o.innermost)
        self.num_nan += o.num_nan
        self.num_zeros += o.num_zeros
        self.min, self.max = min(self.min, o.min), max(self.max, o.max)
        self.finite_min, self.finite_max = min(self.finite_min, o.finite_min), max(self.finite_max, o.finite_max)
        self.pos_inf += o.pos_inf
        self.pos_inf_weighted += o.pos_inf_weighted
        self.meanvar.merge(o.meanvar)
        self.wmeanvar.merge(o.wmeanvar)
        self.quantiles.merge(o.quantiles)
        self.wquantiles.merge(o.wquantiles)
        self.total_bytes += o.total_bytes
        self.invalid_utf8 += o.invalid_utf8
        self.topk.merge(o.topk)


def _categorical_ints(schema) -> frozenset:
    """The INT features a schema makes categorical: ``int_domain.is_categorical``, a ``bool_domain`` or a
    ``natural_language_domain`` (TFDV's schema_util.is_categorical_feature)."""
    if schema is None:
        return frozenset()
    from tensorflow_metadata.proto.v0 import schema_pb2

    return frozenset(
        f.name
        for f in schema.feature
        if f.type == schema_pb2.INT
        and (
            (f.HasField("int_domain") and f.int_domain.is_categorical)
            or f.WhichOneof("domain_info") in ("bool_domain", "natural_language_domain")
        )
    )


def _invalid_utf8(values: list) -> int:
    if b"".join(values).isascii():
        return 0
    bad = 0
    for b in values:
        if not b.isascii():
            try:
                b.decode("utf-8")
            except UnicodeDecodeError:
                bad += 1
    return bad


class _Dataset:
    def __init__(self, name: str, opts: StatsOptions) -> None:
        self.name = name
        self.opts = opts
        self.num_examples = 0
        self.weighted_num_examples = 0.0
        self.features: dict[str, _Feature] = {}
        self.feature_lists: dict[str, _Feature] = {}

    def update(self, batch: Batch, weights: np.ndarray | None) -> None:
        self.num_examples += batch.n
        if weights is not None:
            self.weighted_num_examples += float(weights.sum())
        for group, target, nested in (
            (batch.features, self.features, False),
            (batch.feature_lists, self.feature_lists, True),
        ):
            for k, col in group.items():
                f = target.get(k)
                if f is None:
                    categorical = not nested and k in _categorical_ints(self.opts.schema)
                    f = target[k] = _Feature(self.opts, nested, categorical)
                f.update(k, col, weights)

    def merge(self, o: _Dataset) -> None:
        self.num_examples += o.num_examples
        self.weighted_num_examples += o.weighted_num_examples
        for src, dst, nested in ((o.features, self.features, False), (o.feature_lists, self.feature_lists, True)):
            for k, f in src.items():
                if k in dst:
                    dst[k].merge(f, k)
                else:
                    dst[k] = f

    def proto(self):
        from tensorflow_metadata.proto.v0 import statistics_pb2

        from tfrx.validate import _protos

        out = statistics_pb2.DatasetFeatureStatistics(name=self.name, num_examples=self.num_examples)
        has_w = self.opts.weight_feature is not None
        if has_w:
            out.weighted_num_examples = self.weighted_num_examples
        for k in sorted(self.features):
            out.features.append(_protos.feature_proto((k,), self.features[k], self, None))
        if self.feature_lists:
            out.features.append(_protos.struct_proto((SEQUENCE_PARENT,), self))
            for k in sorted(self.feature_lists):
                out.features.append(_protos.feature_proto((SEQUENCE_PARENT, k), self.feature_lists[k], self, True))
        return out


class StatisticsAccumulator:
    """Statistics gathered batch by batch; :meth:`proto` gives the ``DatasetFeatureStatisticsList``.

    ``add_batch`` takes :class:`~tfrx.validate.columns.Batch` columns,
    ``add_records`` serialized records; two accumulators :meth:`merge` (in a
    fixed order, the result does not depend on how the input was split into
    batches beyond the sketches' documented error).
    """

    def __init__(self, options: StatsOptions | None = None) -> None:
        self.options = options or StatsOptions()
        self.datasets: dict[str, _Dataset] = {DEFAULT_SLICE: _Dataset(DEFAULT_SLICE, self.options)}
        self._kinds: dict[str, Any] = {}
        self._list_kinds: dict[str, Any] = {}
        self.sequence: bool | None = None

    def add_records(self, records: Sequence, *, sequence: bool | None = None, exhaustive: bool = False) -> None:
        """Adds serialized records (a list of bytes); ``sequence``: SequenceExamples (default: detected from
        the first records); ``exhaustive``: read every record with the decoder (what the first batch of
        each file does, to learn the features)."""
        if not records:
            return
        if sequence is None:
            sequence = self.sequence
        if sequence is None:
            from tfrx.codec._sniff import SEQUENCE_EXAMPLE, payload_kind

            sequence = payload_kind(list(records[:64])) == SEQUENCE_EXAMPLE
        self.sequence = sequence
        if exhaustive or not (self._kinds or self._list_kinds):
            presence = feature_presence(records, sequence)
            learn_kinds_from_presence(presence, self._kinds, self._list_kinds)
            batch = batch_columns(records, self._kinds, self._list_kinds, sequence, presence=presence)
        else:
            exact = self.options.discover_features == "all"
            batch = batch_columns(records, self._kinds, self._list_kinds, sequence, exact=exact)
        for k, c in batch.features.items():
            if self._kinds.get(k) is None:
                self._kinds[k] = c.kind
        for k, c in batch.feature_lists.items():
            if self._list_kinds.get(k) is None:
                self._list_kinds[k] = c.kind
        self.add_batch(batch)

    def add_batch(self, batch: Batch) -> None:
        """Adds a batch of columns (to every dataset: all examples and the slices its records fall in)."""
        opts = self.options
        weights = None
        if opts.weight_feature is not None:
            weights = _weights(batch, opts.weight_feature)
        self.datasets[DEFAULT_SLICE].update(batch, weights)
        if opts.slice_feature is not None:
            for key, rows in _slices(batch, opts.slice_feature):
                if key not in self.datasets:
                    self.datasets[key] = _Dataset(key, opts)
                ds = self.datasets[key]
                ds.update(batch.take(rows), None if weights is None else weights[rows])

    def merge(self, other: StatisticsAccumulator) -> None:
        """Adds ``other``'s statistics to these."""
        for k, ds in other.datasets.items():
            if k in self.datasets:
                self.datasets[k].merge(ds)
            else:
                self.datasets[k] = ds
        for k, v in other._kinds.items():
            if self._kinds.get(k) is None:
                self._kinds[k] = v
        for k, v in other._list_kinds.items():
            if self._list_kinds.get(k) is None:
                self._list_kinds[k] = v
        if self.sequence is None:
            self.sequence = other.sequence

    def proto(self):
        """The statistics as a ``tensorflow_metadata`` ``DatasetFeatureStatisticsList``."""
        from tensorflow_metadata.proto.v0 import statistics_pb2

        out = statistics_pb2.DatasetFeatureStatisticsList()
        names = [DEFAULT_SLICE] + sorted(k for k in self.datasets if k != DEFAULT_SLICE)
        for k in names:
            out.datasets.append(self.datasets[k].proto())
        if self.options.slice_feature is None:
            out.datasets[0].name = ""  # TFDV names the dataset only when there are slices
        return out


def _weights(batch: Batch, name: str) -> np.ndarray:
    col = batch.features.get(name)
    if col is None or col.kind not in ("INT", "FLOAT") or not np.all(col.present & (col.counts == 1)):
        raise ValueError(
            f"weight feature {name!r} must hold exactly one number in every record (as TFDV requires); "
            "check the feature name, or leave weight_feature out"
        )
    return col.values.astype(np.float64)


def _slices(batch: Batch, name: str):
    """(slice name, rows) for each value of the slicing feature in the batch (TFDV's feature-value slicer)."""
    col = batch.features.get(name)
    if col is None:
        return
    parents = col.value_parents
    vals = col.values
    if col.kind == "STRING":
        labels = [v.decode("utf-8", "backslashreplace") for v in vals.tolist()]
    elif col.kind == "FLOAT":
        labels = [repr(float(v)) for v in vals.tolist()]
    else:
        labels = [str(int(v)) for v in vals.tolist()]
    groups: dict[str, list[int]] = {}
    for label, p in zip(labels, parents.tolist()):
        groups.setdefault(label, []).append(p)
    for label in sorted(groups):
        rows = np.zeros(batch.n, bool)
        rows[groups[label]] = True
        yield f"{name}_{label}", rows


def statistics_from_records(records, options: StatsOptions | None = None, *, sequence: bool | None = None):
    """Statistics (``DatasetFeatureStatisticsList``) of an iterable of serialized records or record batches."""
    acc = StatisticsAccumulator(options)
    size = acc.options.batch_size
    buf: list = []
    first = True
    for item in records:
        if isinstance(item, (bytes, bytearray, memoryview)):
            buf.append(bytes(item))
        else:
            buf.extend(bytes(r) for r in item)
        while len(buf) >= size:
            acc.add_records(buf[:size], sequence=sequence, exhaustive=first)
            first = False
            buf = buf[size:]
    if buf:
        acc.add_records(buf, sequence=sequence, exhaustive=first)
    return acc.proto()


def _check_payload(source, batch) -> None:
    """Refuses a file whose records are not Examples or SequenceExamples (the decoder would read them as
    records without features)."""
    from tfrx.errors import DecodeError
    from tfrx.codec._sniff import OTHER, describe, payload_kind

    sample = [bytes(r) for r in batch[:32]]
    if payload_kind(sample) == OTHER:
        name = source if isinstance(source, str) else getattr(source, "name", "<stream>")
        raise DecodeError(
            f"{name}: the records are not tf.train.Example or SequenceExample protos (they look like "
            f"{describe(sample)}); statistics need Examples",
            record_index=0,
        )


def _add_file(acc: StatisticsAccumulator, f, compression: str, on_error: str, limit: int | None) -> int:
    """Adds one file's records (at most ``limit``) to ``acc``; returns how many were read."""
    from tfrx.io import RecordReader

    seen = 0
    first = True
    with RecordReader(f, compression="" if compression == "none" else compression, on_error=on_error) as r:
        for batch in r.iter_batches(acc.options.batch_size):
            if limit is not None and seen + len(batch) > limit:
                batch = batch[: limit - seen]
            if len(batch):
                if first:
                    _check_payload(f, batch)
                acc.add_records(batch, exhaustive=first)
                first = False
            seen += len(batch)
            if limit is not None and seen >= limit:
                break
    return seen


def _file_statistics(job: tuple) -> StatisticsAccumulator:
    """One file's accumulator (run in a worker process)."""
    f, options, compression, on_error = job
    acc = StatisticsAccumulator(options)
    _add_file(acc, f, compression, on_error, None)
    return acc


def generate_statistics(
    paths,
    options: StatsOptions | None = None,
    *,
    compression: str = "auto",
    on_error: str = "raise",
    max_records: int | None = None,
    storage_options: dict | None = None,
    num_workers: int = 1,
):
    """Statistics of TFRecord files of Examples or SequenceExamples, as TFDV's
    ``generate_statistics_from_tfrecord`` computes them: a ``DatasetFeatureStatisticsList``.

    ``paths``: a path, a glob or a list of them (or file objects). Each file
    is read in batches of ``options.batch_size`` records: the native presence walk
    reads the records' keys, the batch parser their values; memory stays
    bounded by the batch and the sketches. ``max_records`` stops after that
    many records in all. ``num_workers`` > 1 reads local files in that many
    processes, one accumulator per file, merged in the files' order (exact
    fields are the same as with one process; sketched ones stay within
    their bounds, deterministic for a given list of files).
    """
    from tfrx.io import expand_paths

    acc = StatisticsAccumulator(options)
    plist = paths if isinstance(paths, (list, tuple)) else [paths]
    files: list = []
    for p in plist:
        files.extend(expand_paths(p, storage_options=storage_options) if isinstance(p, str) else [p])
    if num_workers > 1 and len(files) > 1 and max_records is None and all(type(f) is str for f in files):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        jobs = [(f, acc.options, compression, on_error) for f in files]
        ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads
        with ProcessPoolExecutor(max_workers=min(num_workers, len(files)), mp_context=ctx) as ex:
            for part in ex.map(_file_statistics, jobs):
                acc.merge(part)
        return acc.proto()
    seen = 0
    for f in files:
        seen += _add_file(acc, f, compression, on_error, None if max_records is None else max_records - seen)
        if max_records is not None and seen >= max_records:
            break
    return acc.proto()
