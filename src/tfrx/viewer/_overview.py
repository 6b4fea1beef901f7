"""The viewer's overview, in the spirit of Facets: two datasets' distributions side by side, anomalies, schema.

Each side is either records (a :class:`ViewSource`, whose statistics are
computed here by :mod:`tfrx.validate`, over every record up to ``records``
and over a uniform random sample of that many beyond) or a statistics file
(``stats.pb``: a ``DatasetFeatureStatisticsList`` in binary, TFRecord or
text form, as tfrx, TFDV or TFX's StatisticsGen write it), read as it is.
The schema is the one given (``schema.pbtxt``) or inferred from the first
side as TFDV infers it; the anomalies are the second side's against it,
with drift against the first (or the first side's, when there is only
one and a schema was given). :func:`overview` gives the whole answer as one
JSON-ready dict; :class:`OverviewJob` computes it in the background for
the server, with progress and cancellation.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["OverviewJob", "Side", "is_statistics_path", "overview", "DEFAULT_RECORDS"]

DEFAULT_RECORDS = 100_000  # records read per side; more are sampled down to this many
_BATCH = 1024
_STATS_SUFFIXES = (".pb", ".pbtxt", ".pb.txt")


def is_statistics_path(path) -> bool:
    """Whether ``path`` names a statistics file (``.pb`` / ``.pbtxt``) rather than records."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path).lower().endswith(_STATS_SUFFIXES)


class Side:
    """One dataset of the overview: ``source`` (records) or ``statistics`` (a proto), and its ``label``."""

    def __init__(self, label: str, *, source=None, statistics=None, path: str | None = None) -> None:
        if (source is None) == (statistics is None):
            raise ValueError("a side is either records (source=) or statistics (statistics=)")
        self.label, self.source, self.statistics, self.path = label, source, statistics, path

    @classmethod
    def open(cls, path, label: str, *, storage_options: dict | None = None, index_cache_dir: str | None = None):
        """A side for ``path``: a statistics file when its name says so, else records (paths, globs, URLs)."""
        if is_statistics_path(path) or (
            isinstance(path, (list, tuple)) and len(path) == 1 and is_statistics_path(path[0])
        ):
            one = path[0] if isinstance(path, (list, tuple)) else path
            return cls(label, statistics=load_statistics_file(one), path=os.fspath(one))
        from tfrx.viewer._source import ViewSource

        return cls(label, source=ViewSource(path, storage_options=storage_options, index_cache_dir=index_cache_dir))


def _validate():
    try:
        import tfrx.validate as tv
    except ImportError as e:  # pragma: no cover - the extra is part of the test environment
        raise RuntimeError(f"the overview needs tensorflow-metadata: pip install 'tfrx[validate]' ({e})") from None
    try:
        import tensorflow_metadata  # noqa: F401
    except ImportError:
        raise RuntimeError("the overview needs tensorflow-metadata: pip install 'tfrx[validate]'") from None
    return tv


def load_statistics_file(path):
    """The ``DatasetFeatureStatisticsList`` in ``path``, or a ``ValueError`` naming the file and what to do."""
    tv = _validate()
    try:
        return tv.load_statistics(path)
    except ValueError:
        raise
    except Exception as e:
        raise ValueError(
            f"{os.fspath(path)!r} cannot be read as statistics ({type(e).__name__}: {e}); give a "
            "DatasetFeatureStatisticsList written by tfrx stats --format tfdv, TFDV or TFX's StatisticsGen"
        ) from None


def load_schema_file(path):
    """The ``Schema`` in ``path`` (``schema.pbtxt`` or binary), or a ``ValueError`` naming the file."""
    tv = _validate()
    try:
        return tv.load_schema(path)
    except Exception as e:
        raise ValueError(
            f"{os.fspath(path)!r} cannot be read as a schema ({type(e).__name__}: {e}); give a schema.pbtxt "
            "as tfrx schema --infer or TFDV's write_schema_text writes it"
        ) from None


class _Progress:
    def __init__(self) -> None:
        self.done = 0
        self.target = 0
        self.cancelled = False


def _records_statistics(source, records: int, seed: int, progress: _Progress):
    """Statistics of a records side: every record up to ``records``, else a uniform sample of that many."""
    tv = _validate()
    acc = tv.StatisticsAccumulator(tv.StatsOptions(seed=seed))
    total = source.total()
    if total <= records:
        batches = (b for _, b in source.batches(0, total, _BATCH))
        read = total
    else:
        numbers = source.sample_numbers(records, seed)
        read = int(numbers.size)
        batches = (
            [r[3] for r in source.read_numbers(numbers[lo : lo + _BATCH])] for lo in range(0, numbers.size, _BATCH)
        )
    for batch in batches:
        if progress.cancelled:
            raise _Cancelled
        records_list = batch.to_list() if hasattr(batch, "to_list") else list(batch)
        acc.add_records(records_list)
        progress.done += len(records_list)
    return acc.proto(), read, total


class _Cancelled(Exception):
    pass


def _schema_text(schema) -> str:
    from google.protobuf import text_format

    return text_format.MessageToString(schema)


def overview(
    sides: list[Side],
    *,
    schema=None,
    records: int = DEFAULT_RECORDS,
    seed: int = 0,
    progress: _Progress | None = None,
) -> dict:
    """The overview of one or two sides as a JSON-ready dict.

    ``{"datasets": [{"label", "kind": "records" | "statistics", "path", "num_examples", "records_read",
    "total"}], "features": [{"feature", "type", "sides": [summary or None, ...], "linf", "js",
    "anomaly"}], "anomalies": [...], "anomalies_of": label or None, "schema": text, "schema_source":
    "given" | "inferred"}``. A feature's summaries are :func:`tfrx.validate.feature_summaries`' (counts,
    moments, histograms, top values); ``linf`` / ``js`` the distances of :func:`tfrx.validate.compare_summaries`;
    ``anomaly`` the feature's entry of ``anomalies`` (:func:`tfrx.validate.anomalies_to_dicts`).
    ``schema``: a ``Schema``, a path to one, or ``None`` to infer it from the first side.
    """
    tv = _validate()
    if not 1 <= len(sides) <= 2:
        raise ValueError(f"the overview shows one or two datasets, got {len(sides)}")
    progress = progress or _Progress()
    progress.target = sum(min(s.source.total(), records) for s in sides if s.source is not None)
    stats, datasets = [], []
    for side in sides:
        entry: dict[str, Any] = {"label": side.label, "path": side.path}
        if side.statistics is not None:
            s = side.statistics
            if not len(s.datasets):
                raise ValueError(f"{side.path or side.label}: the statistics file holds no dataset")
            entry.update(kind="statistics", num_examples=int(s.datasets[0].num_examples), datasets=len(s.datasets))
            entry["names"] = [d.name for d in s.datasets]
        else:
            s, read, total = _records_statistics(side.source, records, seed, progress)
            entry.update(kind="records", num_examples=read, records_read=read, total=total, sampled=read < total)
        stats.append(s)
        datasets.append(entry)
    if isinstance(schema, (str, os.PathLike)):
        schema = load_schema_file(schema)
    given = schema is not None
    if schema is None:
        schema = tv.infer_schema(stats[0])
    if len(stats) == 2:
        anomalies = tv.validate_statistics(stats[1], schema, previous_statistics=stats[0])
        anomalies_of: str | None = sides[1].label
    elif given:
        anomalies = tv.validate_statistics(stats[0], schema)
        anomalies_of = sides[0].label
    else:
        anomalies, anomalies_of = None, None
    found = tv.anomalies_to_dicts(anomalies) if anomalies is not None else []
    by_feature = {a["feature"]: a for a in found}
    if len(stats) == 2:
        rows = [
            {
                "feature": r["feature"],
                "type": r["type"],
                "sides": [r["a"], r["b"]],
                "linf": _finite(r["linf"]),
                "js": _finite(r["js"]),
            }
            for r in tv.compare_summaries(stats[0], stats[1])
        ]
    else:
        (first,) = tv.feature_summaries(stats[0])[:1]
        rows = [
            {"feature": f["feature"], "type": f["type"], "sides": [f], "linf": None, "js": None}
            for f in sorted(first["features"], key=lambda f: f["feature"])
        ]
    for r in rows:
        r["anomaly"] = by_feature.get(r["feature"])
        r["sides"] = [_clean(s) for s in r["sides"]]
    return {
        "datasets": datasets,
        "features": rows,
        "anomalies": found,
        "anomalies_of": anomalies_of,
        "schema": _schema_text(schema),
        "schema_source": "given" if given else "inferred",
    }


def _finite(v):
    import math

    return None if v is None or not math.isfinite(v) else float(v)


def _clean(value):
    """Summaries as strict JSON: NaN and infinities become strings (``"nan"``, ``"inf"``, ``"-inf"``)."""
    import math

    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


class OverviewJob:
    """:func:`overview` on a thread: ``start()`` once, ``state()`` to poll (progress in records read)."""

    def __init__(self, sides: list[Side], *, schema=None, records: int = DEFAULT_RECORDS, seed: int = 0) -> None:
        self.sides, self.schema, self.records, self.seed = sides, schema, int(records), int(seed)
        self.status = "idle"
        self.result: dict | None = None
        self.error: str | None = None
        self._progress = _Progress()
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        return self._progress.cancelled

    @cancelled.setter
    def cancelled(self, value: bool) -> None:
        self._progress.cancelled = value

    def start(self) -> None:
        with self._lock:
            if self.status == "idle":
                self.status = "running"
                threading.Thread(target=self._run, daemon=True, name="tfrx-view-overview").start()

    def state(self) -> dict:
        return {
            "status": self.status,
            "progress": self._progress.done,
            "target": self._progress.target,
            "records": self.records,
            "result": self.result,
            "error": self.error,
        }

    def _run(self) -> None:
        try:
            for side in self.sides:  # a compared records side is counted (indexed) here, off the page's way
                if side.source is not None:
                    side.source.prepare()
            self.result = overview(
                self.sides, schema=self.schema, records=self.records, seed=self.seed, progress=self._progress
            )
            self.status = "done"
        except _Cancelled:
            self.status = "cancelled"
        except Exception as e:  # reported to the page, never kills the server
            self.error, self.status = f"{type(e).__name__}: {e}", "failed"
