"""``tfrx view``: a small HTTP server (the standard library's) over a :class:`ViewSource`.

The page (``static/``) asks for JSON: ``/api/info`` (files, counts, the
inferred spec), ``/api/records?start=&count=&filter=`` (a page of records, or
of the records that match a filter), ``/api/record?n=`` (one record),
``/api/random?count=&seed=`` (records drawn uniformly by number),
``/api/media?n=&feature=&j=`` (an image or audio value as its file type;
raw arrays as PNG, depth and float images through a colour map),
``/api/stats`` (``POST`` starts per-feature statistics over a random sample
or every record, ``GET`` polls them), ``/api/overview`` (``POST`` starts
the overview: the statistics of this dataset and of the one it is compared
with, side by side, the schema and the anomalies, over at most ``records``
records a side; ``GET`` polls it), ``/api/health`` (every record's CRC,
computed in the background and polled) and ``/api/export`` (``POST`` starts
writing the matching records through tfrx's converters, ``GET`` polls its
progress, ``POST /api/export/cancel`` stops it, ``GET /api/export/file``
sends the result). Errors come back as ``{"error": message, "status": code}``;
the server stays up and never sends a traceback.

Safe by default, as Jupyter is: it binds to 127.0.0.1 unless told otherwise;
it answers only requests whose ``Host`` names the address it listens on
(loopback names, IP literals, or names allowed with ``allowed_hosts``), so a
page of another site that rebinds its DNS name to 127.0.0.1 is refused;
every API call carries the per-launch token (the ``X-Tfrx-Token`` header, or
``?token=`` on a ``GET`` for images and downloads) that ``tfrx view`` prints
and opens the page with; anything that starts work or writes files is a
``POST`` with the token in its header and, when the browser sends one, an
``Origin`` of this server. Work per request is bounded: a filtered page
scans for at most ``SCAN_SECONDS`` and ``MAX_SCAN_RECORDS``, filters are at
most ``MAX_FILTER_CHARS`` long, one export runs at a time, is capped in size
and can be cancelled.
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import json
import mimetypes
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, cast
from urllib.parse import parse_qs, urlparse

import numpy as np

from tfrx.codec.events import is_event_file
from tfrx.viewer._cells import colormap_png, event_media, is_deep_png, raw_image_shape, record_view
from tfrx.viewer._overview import DEFAULT_RECORDS, OverviewJob, Side
from tfrx.viewer._query import Filter, FilterError
from tfrx.viewer._source import ViewSource
from tfrx.viewer._stats import StatsJob

__all__ = ["ViewerServer", "serve"]

MAX_PAGE = 200
SCAN_SECONDS = 1.5  # a filtered page answers with what it found after this long (and says how far it got)
MAX_SCAN_RECORDS = 1_000_000  # and after scanning this many records
MAX_FILTER_CHARS = 2_000
MAX_SCANS = 2  # filtered pages scanned at once; more wait, then get a 503
MAX_STATS_RECORDS = 10_000_000
SAMPLE_STREAMED = 10_000  # the schema's random sample reads streamed files only this far
MAX_EXPORT = 1 << 40
EXPORT_MAX_BYTES = 2 << 30  # the default cap on an export's file
MAX_BODY = 64 << 10
TOKEN_HEADER = "X-Tfrx-Token"
EXPORT_FORMATS = {
    "tfrecord": ("application/octet-stream", "selection.tfrecord"),
    "parquet": ("application/vnd.apache.parquet", "selection.parquet"),
    "jsonl": ("application/x-ndjson", "selection.jsonl"),
}
_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}


class _ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _not_examples(payloads) -> bool:
    return any(p not in ("Example", "SequenceExample") for p in payloads)


def _loopback(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``); ``None`` if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        close = value.find("]")
        if close < 0:
            return None
        name, rest = value[1:close], value[close + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, _, port_text = value.partition(":")
        port_text = port_text or None
    if not name:
        return None
    if port_text is None:
        return name, None
    if not port_text.isdigit():
        return None
    return name, int(port_text)


def _int(query: dict, name: str, default: int | None = None, lo: int = 0, hi: int | None = None) -> int:
    raw = query.get(name, [None])[0]
    if raw is None or raw == "":
        if default is None:
            raise _ApiError(400, f"missing parameter {name!r}")
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _ApiError(400, f"parameter {name!r} must be a whole number, got {raw!r}") from None
    if value < lo or (hi is not None and value > hi):
        raise _ApiError(400, f"parameter {name!r} must be in [{lo}, {hi if hi is not None else 'inf'}], got {value}")
    return value


class _Background:
    """A result computed once on a thread; ``state()`` is what the page polls."""

    def __init__(self, fn) -> None:
        self._fn = fn
        self._lock = threading.Lock()
        self.status, self.progress = "idle", 0
        self.result: Any = None
        self.error: str | None = None
        self.size: int | None = None  # what progress counts up to, when known

    def state(self) -> dict:
        with self._lock:
            if self.status == "idle":
                self.status = "running"
                threading.Thread(target=self._run, daemon=True, name="tfrx-view-bg").start()
        return {
            "status": self.status,
            "progress": self.progress,
            "size": self.size,
            "result": self.result,
            "error": self.error,
        }

    def _run(self) -> None:
        try:
            self.result = self._fn(self)
            self.status = "done"
        except Exception as e:  # reported to the page, never kills the server
            self.error, self.status = f"{type(e).__name__}: {e}", "failed"


def _progress_text(job: _Background) -> str:
    done, size = job.progress or 0, job.size
    if not size:
        return "starting"
    return f"{100 * done / size:.0f}% ({done / 1e9:.2f} of {size / 1e9:.2f} GB)"


def _label(source: ViewSource) -> str:
    """A short name for a dataset: its file's name, or the first file's and how many more."""
    names = [s.path.rstrip("/").split("/")[-1] for s in source.shards]
    if not names:
        return "records"
    return names[0] if len(names) == 1 else f"{names[0]} (+{len(names) - 1} files)"


def _kind_name(spec) -> str | None:
    dtype = getattr(spec, "dtype", None)
    name = getattr(dtype, "name", None)
    return {"int64": "int64", "float32": "float", "string": "bytes"}.get(name) if isinstance(name, str) else None


class ViewerServer(ThreadingHTTPServer):
    """The viewer's HTTP server over ``source``; ``serve_forever()`` runs it.

    ``token`` is the launch's secret (a fresh random one by default; ``url``
    carries it); ``allowed_hosts`` are host names accepted in ``Host``
    headers besides loopback names (and IP literals when bound to another
    address); ``export_max_bytes`` caps an export's file.

    The overview: ``compare`` is the dataset shown beside this one (a
    :class:`~tfrx.viewer._overview.Side`: records or a statistics file),
    ``schema`` a ``Schema`` (or ``schema.pbtxt`` path) to check against
    (else inferred from this dataset), ``overview_records`` the records read
    per side (a uniform sample beyond), ``label`` this dataset's name. With
    ``source=None`` and ``statistics`` a statistics file is shown on its own
    (no records: only the overview answers).
    """

    daemon_threads = True

    def __init__(
        self,
        source: ViewSource | None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        stats_records: int = 10_000,
        token: str | None = None,
        allowed_hosts: tuple[str, ...] | list[str] = (),
        export_max_bytes: int = EXPORT_MAX_BYTES,
        statistics: Side | None = None,
        compare: Side | None = None,
        schema=None,
        overview_records: int = DEFAULT_RECORDS,
        label: str | None = None,
    ) -> None:
        if source is None and statistics is None:
            raise ValueError("give the records (source) or a statistics file (statistics=Side(...))")
        if ":" in host:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__((host, port), _Handler)
        # Without records (a statistics file on its own) only the overview answers: has_records says so.
        self.has_records = source is not None
        self.source = cast(ViewSource, source)
        self.stats_records = stats_records
        # A fresh secret every launch (as Jupyter's): the page gets it from the URL tfrx view opens.
        self.token = token or secrets.token_urlsafe(24)
        self.allowed_hosts = {h.strip().lower() for h in allowed_hosts if h.strip()}
        self.export_max_bytes = int(export_max_bytes)
        self.health = _Background(self._compute_health)
        self.preparing = _Background(self._prepare)
        if source is None:
            self.preparing.status = "done"  # a statistics file: no records to count
        self.preparing.state()  # counts the files (building missing indexes) while the page loads
        self._lock = threading.Lock()
        self._stats: dict[tuple, StatsJob] = {}
        self._schema: dict | None = None
        self._sampling = False
        self._scans = threading.BoundedSemaphore(MAX_SCANS)
        self._sample_lock = threading.Lock()
        self._export_lock = threading.Lock()
        self.export_job: ExportJob | None = None
        self._export_dir = tempfile.mkdtemp(prefix="tfrx-view-export-")
        # The overview (docs/viewer.md): this dataset, and the one it is compared with.
        first = statistics if source is None else Side(label or _label(source), source=source)
        assert first is not None
        self.sides = [first] + ([compare] if compare is not None else [])
        self.overview_schema = schema
        self.overview_records = int(overview_records)
        self._overviews: dict[int, OverviewJob] = {}

    @property
    def base_url(self) -> str:
        """The server's address, without the token."""
        host, port = self.server_address[:2]
        if isinstance(host, bytes):
            host = host.decode()
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1" if host == "0.0.0.0" else "::1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}/"

    @property
    def url(self) -> str:
        """The address to open: the page, with this launch's token."""
        return f"{self.base_url}?token={self.token}"

    def server_close(self) -> None:
        job = self.export_job
        if job is not None:
            job.cancelled = True
        for ov in self._overviews.values():
            ov.cancelled = True
        super().server_close()
        shutil.rmtree(self._export_dir, ignore_errors=True)
        for side in self.sides[1:]:
            if side.source is not None:
                side.source.close()

    # ------------------------------------------------------------------ who may ask
    def host_allowed(self, header: str | None) -> bool:
        """Whether a request's ``Host`` header names this server (DNS rebinding sends another name)."""
        if not header:
            return False
        parts = _split_host(header)
        if parts is None:
            return False
        name, port = parts
        if port != self.server_address[1]:
            return False
        if name in self.allowed_hosts or _loopback(name):
            return True
        address = self.server_address[0]
        bound = address if isinstance(address, str) else bytes(address).decode()
        if _loopback(bound):
            return False  # listening on loopback: only loopback names reach it honestly
        return _ip_literal(name) and (bound in ("0.0.0.0", "::") or name == bound.lower())

    def token_ok(self, given: str | None) -> bool:
        return given is not None and given != "" and hmac.compare_digest(given.encode(), self.token.encode())

    # ------------------------------------------------------------------ answers
    def _prepare(self, job: _Background) -> None:
        if not self.has_records:
            return

        def progress(done: int, size: int) -> None:
            job.progress, job.size = done, size

        self.source.prepare(progress)

    def require_ready(self) -> None:
        """Raises a 503 answer, with the progress, while the files are being indexed."""
        job = self.preparing
        if job.status != "done":
            if job.status == "failed":
                raise _ApiError(500, f"cannot open the files: {job.error}")
            raise _ApiError(503, f"building the record index: {_progress_text(job)}")

    def _overview_info(self) -> dict:
        return {
            "datasets": [
                {"label": s.label, "kind": "records" if s.source is not None else "statistics", "path": s.path}
                for s in self.sides
            ],
            "records": self.overview_records,
            "schema": self.overview_schema is not None,
        }

    def info(self) -> dict:
        if not self.has_records:  # a statistics file: the overview is all there is
            return {
                "status": "ready",
                "shards": [],
                "total": 0,
                "records": False,
                "stats_records": self.stats_records,
                "payload": [],
                "schema": None,
                "features": {},
                "feature_lists": None,
                "labels": {},
                "limits": {
                    "export_max_bytes": self.export_max_bytes,
                    "scan_seconds": SCAN_SECONDS,
                    "max_filter_chars": MAX_FILTER_CHARS,
                },
                "overview": self._overview_info(),
            }
        job = self.preparing
        if job.status == "running":
            return {
                "status": "indexing",
                "progress": job.progress,
                "size": job.size,
                "message": _progress_text(job),
                "shards": _shards_info(self.source.shards),
            }
        self.require_ready()
        src = self.source
        total = src.total()
        schema = self.schema(sampled=False)
        if not schema["sampled"] and not self._sampling:  # the random sample, for filters, after this answer
            self._sampling = True
            threading.Thread(target=self.schema, daemon=True, name="tfrx-view-schema").start()
        return {
            "status": "ready",
            "records": True,
            "overview": self._overview_info(),
            "shards": _shards_info(src.shards),
            "total": total,
            "stats_records": self.stats_records,
            "payload": schema["payload"],
            "schema": schema["code"],
            "features": schema["kinds"],
            "feature_lists": schema["sequence_kinds"],
            # A TFDS directory's class names, by the Example key of the ClassLabel ("objects/label").
            "labels": {
                k: src.label_names[k.replace("/", "-")]
                for k in schema["kinds"]
                if k.replace("/", "-") in src.label_names
            },
            "limits": {
                "export_max_bytes": self.export_max_bytes,
                "scan_seconds": SCAN_SECONDS,
                "max_filter_chars": MAX_FILTER_CHARS,
            },
        }

    def schema(self, *, sampled: bool = True, wait: float | None = None) -> dict:
        """The payload kinds, the inferred spec (as code) and each feature's kind.

        The page's first answer comes from the first 64 records; filters and
        statistics use the kinds seen in those and in 256 records drawn at
        random (features that appear only later in the files are found so;
        reading the sample costs random reads, so it is not on the way to
        the first page). ``wait`` bounds how long to wait for the sample
        another thread is reading (a filtered page then goes on with the
        first records' kinds).
        """
        schema = self._schema
        if schema is None:
            with self._lock:
                if self._schema is None:
                    self._schema = self._infer(sampled=False)
                schema = self._schema
        if sampled and not schema["sampled"] and self._sample_lock.acquire(timeout=-1 if wait is None else wait):
            try:
                schema = self._schema
                assert schema is not None
                if not schema["sampled"]:
                    schema = self._schema = self._infer(sampled=True, first=schema)
            finally:
                self._sample_lock.release()
        return schema

    def _infer(self, *, sampled: bool, first: dict | None = None) -> dict:
        from tfrx.parsing._specs import features_to_python
        from tfrx.parsing import infer_features

        src = self.source
        head = src.read(0, 64)
        records = [r[3] for r in head]
        payloads = first["payload"] if first else sorted({self._view(r[1], r[3])["kind"] for r in head[:32]})
        out = {
            "payload": payloads,
            "code": first and first["code"],
            "kinds": {},
            "sequence_kinds": None,
            "sampled": sampled,
        }
        if not records or not payloads or _not_examples(payloads):
            return out
        kind = "sequence" if "SequenceExample" in payloads else "example"
        try:
            if out["code"] is None:
                out["code"] = features_to_python(infer_features(records, kind=kind))
            if sampled:
                seen = {r[0] for r in head}
                picks = [n for n in src.sample_numbers(256, 0).tolist() if n not in seen and self._cheap(n)]
                records += [r[3] for r in src.read_numbers(picks)]
            spec = infer_features(records, max_records=None, kind=kind)
        except Exception as e:
            out["code"] = f"# could not infer a spec: {e}"
            return out
        context, lists = spec if kind == "sequence" else (spec, None)
        out["kinds"] = {k: _kind_name(v) for k, v in sorted(context.items())}
        if lists is not None:
            out["sequence_kinds"] = {k: _kind_name(v) for k, v in sorted(lists.items())}
        return out

    def _view(self, path: str, record: bytes) -> dict:
        return record_view(record, tfds=self.source.tfds, events=is_event_file(path))

    def _cheap(self, number: int) -> bool:
        """Whether record ``number`` can be read without streaming far into a compressed or damaged file."""
        k, local = self.source.locate(number)
        return not self.source.shards[k].streamed or local < SAMPLE_STREAMED

    def _row(self, number: int, path: str, index: int, record: bytes) -> dict:
        return {"n": number, "shard": path, "i": index, **self._view(path, record)}

    def damage(self) -> list[dict]:
        """Every damaged region known so far, placed by the intact records' global numbers.

        ``before`` is the number (as the Records tab shows it) of the first
        intact record after the damage: it lies between records ``before - 1``
        and ``before``.
        """
        out, base = [], 0
        for k, shard in enumerate(self.source.shards):
            for d in shard.damage:
                out.append({**d, "path": shard.path, "before": base + d["before"], "file_before": d["before"]})
            base += self.source.count(k)
        return out

    def records(self, start: int, count: int, expression: str | None) -> dict:
        total = self.source.total()
        if not expression:
            rows = [self._row(*r) for r in self.source.read(start, count)]
            nxt = start + len(rows)
            return {
                "start": start,
                "total": self.source.total(),
                "records": rows,
                "next": nxt,
                "damage": self._damage_between(start, nxt),
            }
        match, sequence = self._filter(expression)
        if not self._scans.acquire(timeout=2 * SCAN_SECONDS):
            raise _ApiError(503, "the server is busy scanning for other filtered pages; try again")
        try:
            return self._scan(match, sequence, expression, start, count, total)
        finally:
            self._scans.release()

    def _scan(self, match: Filter, sequence: bool, expression: str, start: int, count: int, total: int) -> dict:
        """Records from ``start`` that match, until ``count`` are found, the time is up or the scan cap is met."""
        rows: list[dict] = []
        n = start
        deadline = time.monotonic() + SCAN_SECONDS
        stop = min(total, start + MAX_SCAN_RECORDS)
        size = 16  # small first batches: a file of huge records keeps to the deadline too
        done = False
        while n < stop and not done:
            t0 = time.monotonic()
            window = min(stop, n + size)
            for first, batch in self.source.batches(n, window, size):
                try:
                    hits = match.matches(batch, sequence=sequence)
                except FilterError as e:
                    raise _ApiError(400, str(e)) from None
                n = first + len(batch)
                for j in np.flatnonzero(hits).tolist():
                    rows.append(self._row(first + j, *self._where(first + j), batch[j]))
                    if len(rows) >= count:
                        n, done = first + j + 1, True
                        break
                if done or time.monotonic() > deadline:
                    done = True
                    break
            else:
                if window >= stop or n < window:  # the end (or the files held fewer records than counted)
                    break
            if time.monotonic() - t0 < SCAN_SECONDS / 20:
                size = min(256, size * 2)
        return {
            "start": start,
            "total": total,
            "records": rows,
            "next": n,
            "scanned": n - start,
            "filter": expression,
            "complete": n >= total,
        }

    def _damage_between(self, first: int, nxt: int) -> list[dict]:
        total = self.source.total()
        return [d for d in self.damage() if first <= d["before"] < nxt or d["before"] == nxt == total]

    def _where(self, number: int) -> tuple[str, int]:
        k, local = self.source.locate(number)
        return self.source.shards[k].path, local

    def _filter(self, expression: str) -> tuple[Filter, bool]:
        if len(expression) > MAX_FILTER_CHARS:
            raise _ApiError(
                400, f"the filter is {len(expression):,} characters long; filters are at most {MAX_FILTER_CHARS:,}"
            )
        schema = self.schema(wait=SCAN_SECONDS)
        if _not_examples(schema["payload"]):
            raise _ApiError(
                400, "these records are not tf.train.Example or SequenceExample: there are no features to filter on"
            )
        try:
            f = Filter(expression, schema["kinds"], sequence_kinds=schema["sequence_kinds"])
        except FilterError as e:
            later = "" if schema["sampled"] else " (a random sample of the files is still being read: try again soon)"
            raise _ApiError(400, f"{e}{later}") from None
        except (RecursionError, MemoryError):
            raise _ApiError(400, "the filter is nested too deeply to read") from None
        return f, schema["sequence_kinds"] is not None

    def media(self, n: int, feature: str, j: int) -> tuple[bytes, str]:
        from tfrx.codec import decode_example, decode_sequence_example
        from tfrx.errors import DecodeError
        from tfrx.codec._sniff import SEQUENCE_EXAMPLE, record_kind
        from tfrx.viewer._cells import media_kind

        rows = self.source.read(n, 1)
        if not rows:
            raise _ApiError(404, f"record {n} is past the last record ({self.source.total()} records)")
        _, path, _, record = rows[0]
        if is_event_file(path):
            found = event_media(record, feature, j)
            if found is None:
                raise _ApiError(404, f"event {n} has no image or audio {j} under the tag {feature!r}")
            return found
        try:
            features = (
                decode_sequence_example(record)[0]
                if record_kind(record) == SEQUENCE_EXAMPLE
                else decode_example(record)
            )
        except DecodeError as e:
            raise _ApiError(422, f"record {n} is not an Example: {e}") from None
        values = features.get(feature)
        if not isinstance(values, list) or not 0 <= j < len(values):
            raise _ApiError(404, f"record {n} has no bytes value {j} in feature {feature!r}")
        value = bytes(values[j])
        kind = media_kind(value)
        if kind:
            deep = self.source.tfds.colormap.get(feature)
            if kind[0] == "image" and (deep is not None or is_deep_png(value)):
                try:
                    return colormap_png(value, deep), "image/png"
                except Exception as e:  # a damaged image: say so rather than send noise
                    raise _ApiError(422, f"record {n}: feature {feature!r} value {j} cannot be decoded: {e}") from None
            return value, kind[1]
        shape = raw_image_shape(features, feature, value)
        if shape is None:
            return value, "application/octet-stream"
        return _png(value, shape), "image/png"

    def stats(self, mode: str, records: int, seed: int, *, start: bool = True) -> dict:
        """The state of the statistics job for these parameters.

        ``start`` (a ``POST``) starts it when it is not there yet, cancelling
        any other that runs; a ``GET`` only reads its state (``idle`` when
        none was started with these parameters).
        """
        schema = self.schema()
        if _not_examples(schema["payload"]):
            return {
                "status": "failed",
                "progress": 0,
                "result": None,
                "error": "the records are not tf.train.Example or SequenceExample: no statistics",
            }
        if mode not in ("sample", "all"):
            raise _ApiError(400, f"mode must be 'sample' or 'all', got {mode!r}")
        key = (mode, records if mode == "sample" else 0, seed if mode == "sample" else 0)
        with self._lock:
            job = self._stats.get(key)
            if job is None:
                if not start:
                    return {"status": "idle", "progress": 0, "result": None, "error": None}
                for other in self._stats.values():
                    if other.status == "running":
                        other.cancelled = True
                self._stats = {k: v for k, v in self._stats.items() if v.status == "done"}
                job = self._stats[key] = StatsJob(
                    self.source, schema["kinds"], schema["sequence_kinds"], mode=mode, records=records, seed=seed
                )
        job.start()
        return job.state()

    def overview(self, records: int, *, start: bool = True) -> dict:
        """The state of the overview job for ``records`` records per side (docs/viewer.md).

        ``start`` (a ``POST``) starts it when it is not there yet, cancelling
        any other that runs; a ``GET`` only reads its state (``idle`` when
        none was started for ``records``).
        """
        with self._lock:
            job = self._overviews.get(records)
            if job is None:
                if not start:
                    return {"status": "idle", "progress": 0, "target": 0, "result": None, "error": None}
                for other in self._overviews.values():
                    if other.status == "running":
                        other.cancelled = True
                self._overviews = {k: v for k, v in self._overviews.items() if v.status == "done"}
                job = self._overviews[records] = OverviewJob(self.sides, schema=self.overview_schema, records=records)
        job.start()
        return job.state()

    def _compute_health(self, job: _Background) -> dict:
        """Every file's damage, placed by the record numbers the Records tab shows.

        Streamed files (compressed or damaged) were checked when they were
        counted; an indexed file is read once checking every CRC, and when
        that finds damage the file is streamed from then on, so its records
        are numbered as the page shows them and its damage listed once.
        """
        from tfrx.tools._verify import verify_files

        src = self.source
        for k, shard in enumerate(src.shards):
            if shard.count is None and shard.error:
                continue
            if shard.streamed:
                job.progress += src.count(k)
                continue
            (check,) = verify_files(shard.path, progress=False)
            job.progress += check.records  # the job counts records checked, file by file
            if not check.ok:
                src.demote(k)
        files, base = [], 0
        for k, shard in enumerate(src.shards):
            count = src.count(k)
            errors = [
                {**d, "before": base + d["before"], "file_before": d["before"], "path": shard.path}
                for d in shard.damage
            ]
            if shard.error and not errors:  # unreadable, or a problem other than damaged records
                errors = [{"kind": "error", "message": shard.error, "before": None, "path": shard.path}]
            files.append({"path": shard.path, "ok": not errors, "records": count, "first": base, "errors": errors})
            base += count
        return {"files": files, "damaged": sum(not f["ok"] for f in files), "total": base}

    # ------------------------------------------------------------------ export
    def start_export(self, fmt: str, expression: str | None, limit: int) -> dict:
        """Starts writing the matching records (up to ``limit``) as ``fmt`` on a thread; one export at a time."""
        if fmt not in EXPORT_FORMATS:
            raise _ApiError(400, f"format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
        match, sequence = self._filter(expression) if expression else (None, False)
        other = _not_examples(self.schema()["payload"])
        with self._export_lock:
            job = self.export_job
            if job is not None and job.status == "running":
                raise _ApiError(409, "an export is running; cancel it or wait for it to finish")
            if job is not None:
                job.remove()
            folder = tempfile.mkdtemp(prefix="export-", dir=self._export_dir)
            job = ExportJob(self, fmt, match, sequence, expression, limit, folder, raw=other)
            self.export_job = job
        job.start()
        return job.state()

    def export(self, fmt: str, expression: str | None, limit: int, folder: str) -> str:
        """Writes the matching records (up to ``limit``) to a file in ``folder`` as ``fmt``; returns its path.

        The same work as an export started from the page, on this thread,
        within the same size cap (``export_max_bytes``).
        """
        if fmt not in EXPORT_FORMATS:
            raise _ApiError(400, f"format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
        match, sequence = self._filter(expression) if expression else (None, False)
        job = ExportJob(
            self, fmt, match, sequence, expression, limit, folder, raw=_not_examples(self.schema()["payload"])
        )
        job.run()
        if job.status != "done":
            raise _ApiError(413 if job.too_big else 500, job.error or job.status)
        assert job.path is not None
        return job.path


class ExportJob:
    """One export: the matching records streamed into a TFRecord file, then converted; progress, cap, cancel.

    The selection is written a batch at a time; Parquet and JSON Lines are then
    written from it by :func:`tfrx.tools.convert.tfrecord_to_parquet` /
    ``tfrecord_to_jsonl``. The file may not grow past the server's
    ``export_max_bytes``: an export that would is stopped and says so.
    """

    def __init__(self, server: ViewerServer, fmt, match, sequence, expression, limit, folder, *, raw) -> None:
        self.server, self.fmt, self.match, self.sequence = server, fmt, match, sequence
        self.expression, self.limit, self.folder, self.raw = expression, limit, folder, raw
        self.status = "idle"
        self.scanned = self.written = self.bytes = 0
        self.total = server.source.total()
        self.error: str | None = None
        self.path: str | None = None
        self.cancelled = False
        self.too_big = False
        self.started = time.monotonic()
        self.seconds: float | None = None

    def start(self) -> None:
        self.status = "running"
        threading.Thread(target=self.run, daemon=True, name="tfrx-view-export").start()

    def state(self) -> dict:
        return {
            "status": self.status,
            "format": self.fmt,
            "filter": self.expression,
            "scanned": self.scanned,
            "total": self.total,
            "written": self.written,
            "bytes": self.bytes,
            "seconds": round(self.seconds if self.seconds is not None else time.monotonic() - self.started, 2),
            "error": self.error,
            "name": EXPORT_FORMATS[self.fmt][1],
        }

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(self) -> None:
        self.status = "running"
        try:
            self._write()
            if self.cancelled:
                self.status = "cancelled"
                self.remove()
            else:
                self.status = "done"
        except Exception as e:  # reported to the page, never kills the server
            self.error = str(e) if isinstance(e, _ApiError) else f"{type(e).__name__}: {e}"
            self.status = "failed"
            self.remove()
        finally:
            self.seconds = time.monotonic() - self.started

    def _cap(self, size: int) -> None:
        cap = self.server.export_max_bytes
        if size > cap:
            self.too_big = True
            raise _ApiError(
                413,
                f"the export would pass {cap:,} bytes (the server's export cap; tfrx view --export-max-bytes "
                "raises it): narrow the filter or set a limit",
            )

    def _write(self) -> None:
        from tfrx.io._writer import TFRecordWriter

        selection = os.path.join(self.folder, "selection.tfrecord")
        with TFRecordWriter(selection) as w:
            for first, batch in self.server.source.batches(0, None, 1024):
                if self.cancelled:
                    return
                if self.match is not None:
                    try:
                        rows = np.flatnonzero(self.match.matches(batch, sequence=self.sequence))
                    except FilterError as e:
                        raise _ApiError(400, str(e)) from None
                else:
                    rows = np.arange(len(batch))
                for j in rows.tolist():
                    if self.written >= self.limit:
                        break
                    record = batch[j]
                    self._cap(self.bytes + len(record) + 16)
                    w.write(record)
                    self.written += 1
                    self.bytes += len(record) + 16
                self.scanned = first + len(batch)
                if self.written >= self.limit:
                    break
        self.scanned = max(self.scanned, 0)
        if self.fmt == "tfrecord":
            self.path = selection
            return
        from tfrx.tools import convert

        out = os.path.join(self.folder, EXPORT_FORMATS[self.fmt][1])
        if self.fmt == "parquet":
            convert.tfrecord_to_parquet(selection, out, raw=self.raw, progress=False)
        else:
            convert.tfrecord_to_jsonl(selection, out, raw=self.raw, progress=False)
        os.remove(selection)
        self.bytes = os.path.getsize(out)
        self._cap(self.bytes)
        self.path = out


def _png(value: bytes, shape) -> bytes:
    try:
        from PIL import Image
    except ImportError:
        raise _ApiError(415, "showing raw image arrays needs Pillow (pip install 'tfrx[image]')") from None
    h, w, c = shape
    array = np.frombuffer(value, np.uint8).reshape(h, w, c)
    image = Image.fromarray(array[:, :, 0] if c == 1 else array)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",  # the token in the page's address never leaves in a Referer
    "Cross-Origin-Resource-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: blob:; media-src 'self'; style-src 'self' 'unsafe-inline'; "
        "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'none'"
    ),
}


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet: the terminal shows only the URL
        pass

    def _send(self, status: int, body: bytes, content_type: str, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in {**_SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj, allow_nan=False, default=str).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        if self.command == "POST":
            self.close_connection = True  # its body may not have been read: the connection cannot be reused
        self._json(status, {"error": message, "status": status})

    def send_error(self, code, message=None, explain=None):
        """The standard library's own refusals (a malformed request, a line too long) as JSON too."""
        self.close_connection = True
        try:
            self._error(int(code), message or self.responses.get(code, ("error",))[0])
        except OSError:
            pass

    # ------------------------------------------------------------------ checks
    def _check_host(self) -> None:
        if not self.server.host_allowed(self.headers.get("Host")):
            raise _ApiError(
                403,
                f"the Host header {self.headers.get('Host')!r} does not name this server (DNS rebinding "
                "is refused); open the address tfrx view printed, or pass --allow-host NAME",
            )

    def _check_token(self, query: dict, *, header_only: bool) -> None:
        given = self.headers.get(TOKEN_HEADER)
        if given is None and not header_only:
            given = query.get("token", [None])[0]
        if not self.server.token_ok(given):
            where = f"the {TOKEN_HEADER} header" if header_only else f"the {TOKEN_HEADER} header or ?token="
            raise _ApiError(
                403 if given else 401,
                ("a wrong token" if given else "no token")
                + f" in {where}: open the address tfrx view printed (it carries this launch's token)",
            )

    def _check_origin(self) -> None:
        """A POST must come from this server's own page (CSRF): its Origin, when sent, is this server's."""
        origin = self.headers.get("Origin")
        if origin is not None:
            parsed = urlparse(origin)
            if parsed.scheme != "http" or parsed.netloc.lower() != (self.headers.get("Host") or "").lower():
                raise _ApiError(403, f"a request from another origin ({origin}) is refused")
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            raise _ApiError(403, f"a {site} request is refused")

    def _body(self) -> dict:
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding"):
            raise _ApiError(411, "send the body with a Content-Length")
        n = int(length) if length and length.isdigit() else 0
        if n > MAX_BODY:
            raise _ApiError(413, f"a request body of {n:,} bytes; at most {MAX_BODY:,}")
        raw = self.rfile.read(n) if n else b""
        if not raw.strip():
            return {}
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise _ApiError(415, "send the parameters as application/json")
        try:
            body = json.loads(raw)
        except ValueError as e:
            raise _ApiError(400, f"the body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise _ApiError(400, "the body must be a JSON object")
        return {k: [str(v)] for k, v in body.items() if v is not None}

    # ------------------------------------------------------------------ methods
    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        self._handle(post=False)

    def do_POST(self):
        self._handle(post=True)

    def _refuse_method(self):
        self.close_connection = True
        self._error(405, f"{self.command} is not allowed (GET and POST only)")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse_method

    def _handle(self, *, post: bool) -> None:
        url = urlparse(self.path)
        q = parse_qs(url.query)
        try:
            self._check_host()
            if post:
                self._check_token(q, header_only=True)
                self._check_origin()
                q = {**q, **self._body()}
                return self._post(url.path, q)
            if url.path == "/favicon.ico":
                return self._send(204, b"", "image/x-icon")
            if url.path in ("/", "/index.html"):
                return self._static("index.html")
            if url.path.startswith("/static/"):
                return self._static(url.path[len("/static/") :])
            if not url.path.startswith("/api/"):
                raise _ApiError(404, f"no such page: {url.path}")
            self._check_token(q, header_only=False)
            self._get(url.path, q)
        except _ApiError as e:
            self._error(e.status, str(e))
        except FilterError as e:
            self._error(400, str(e))
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # a bad record or file must not take the server down; no traceback to the page
            traceback.print_exc(file=sys.stderr)
            self._error(500, f"{type(e).__name__}: {e}")

    def _get(self, path: str, q: dict) -> None:
        srv = self.server
        if path == "/api/info":
            return self._json(200, srv.info())
        srv.require_ready()
        if path == "/api/overview":
            return self._json(200, srv.overview(self._overview_records(q), start=False))
        self._require_records(path)
        if path == "/api/records":
            start = _int(q, "start", 0)
            count = _int(q, "count", 50, 1, MAX_PAGE)
            return self._json(200, srv.records(start, count, q.get("filter", [""])[0].strip() or None))
        if path == "/api/record":
            n = _int(q, "n")
            rows = srv.source.read(n, 1)
            if not rows:
                raise _ApiError(404, f"record {n} is past the last record ({srv.source.total()} records)")
            return self._json(200, srv._row(*rows[0]))
        if path == "/api/random":
            count = _int(q, "count", 20, 1, MAX_PAGE)
            picks = srv.source.sample_numbers(count, _int(q, "seed", 0))
            return self._json(
                200,
                {"records": [srv._row(*r) for r in srv.source.read_numbers(picks)], "total": srv.source.total()},
            )
        if path == "/api/media":
            body, mime = srv.media(_int(q, "n"), q.get("feature", [""])[0], _int(q, "j", 0))
            return self._send(200, body, mime)
        if path == "/api/stats":
            return self._json(200, srv.stats(*self._stats_args(q), start=False))
        if path == "/api/health":
            return self._json(200, srv.health.state())
        if path == "/api/damage":
            return self._json(200, {"damage": srv.damage()})
        if path == "/api/export":
            job = srv.export_job
            return self._json(200, job.state() if job is not None else {"status": "idle"})
        if path == "/api/export/file":
            return self._export_file()
        if path in _POST_ONLY:
            raise _ApiError(405, f"{path} starts work or writes files: POST it, with the {TOKEN_HEADER} header")
        raise _ApiError(404, f"no such page: {path}")

    def _overview_records(self, q: dict) -> int:
        return _int(q, "records", self.server.overview_records, 1, MAX_STATS_RECORDS)

    def _require_records(self, path: str) -> None:
        if not self.server.has_records and path.startswith("/api/"):
            raise _ApiError(
                404,
                f"{path}: this view opened a statistics file, which holds no records; the overview "
                "(/api/overview) is what it shows (open the records themselves with tfrx view DATA)",
            )

    def _stats_args(self, q: dict) -> tuple[str, int, int]:
        return (
            q.get("mode", ["sample"])[0],
            _int(q, "records", self.server.stats_records, 1, MAX_STATS_RECORDS),
            _int(q, "seed", 0),
        )

    def _post(self, path: str, q: dict) -> None:
        srv = self.server
        if path not in _POST_ONLY:
            raise _ApiError(
                404 if not path.startswith("/api/") or path not in _GET_ONLY else 405, f"cannot POST {path}"
            )
        srv.require_ready()
        if path == "/api/overview":
            return self._json(200, srv.overview(self._overview_records(q), start=True))
        self._require_records(path)
        if path == "/api/stats":
            return self._json(200, srv.stats(*self._stats_args(q), start=True))
        if path == "/api/export":
            fmt = q.get("format", ["tfrecord"])[0]
            limit = _int(q, "limit", MAX_EXPORT, 1, MAX_EXPORT)
            return self._json(202, srv.start_export(fmt, q.get("filter", [""])[0].strip() or None, limit))
        if path == "/api/export/cancel":
            job = srv.export_job
            if job is None:
                return self._json(200, {"status": "idle"})
            if job.status == "running":
                job.cancelled = True
            return self._json(200, job.state())

    def _export_file(self) -> None:
        job = self.server.export_job
        if job is None or job.status != "done" or job.path is None or not os.path.exists(job.path):
            raise _ApiError(404, "no finished export to send: POST /api/export first and wait for it")
        mime, name = EXPORT_FORMATS[job.fmt]
        self.send_response(200)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(os.path.getsize(job.path)))
        self.send_header("Content-Disposition", f'attachment; filename="{name}"')
        self.send_header("Cache-Control", "no-store")
        for k, v in _SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            with open(job.path, "rb") as f:
                shutil.copyfileobj(f, self.wfile, 1 << 20)

    def _static(self, name: str) -> None:
        if name not in _STATIC:
            raise _ApiError(404, f"no such file: {name}")
        body = resources.files("tfrx.viewer").joinpath("static", name).read_bytes()
        self._send(200, body, _STATIC[name] or mimetypes.guess_type(name)[0] or "application/octet-stream")


_POST_ONLY = {"/api/export/cancel", "/api/stats", "/api/export", "/api/overview"}
_GET_ONLY = {
    "/api/info",
    "/api/records",
    "/api/record",
    "/api/random",
    "/api/media",
    "/api/health",
    "/api/damage",
    "/api/export/file",
}


def serve(
    paths,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    storage_options: dict | None = None,
    stats_records: int = 10_000,
    index_cache_dir: str | None = None,
    allowed_hosts: tuple[str, ...] | list[str] = (),
    export_max_bytes: int = EXPORT_MAX_BYTES,
    compare=None,
    schema=None,
    overview_records: int = DEFAULT_RECORDS,
) -> None:
    """Serves the viewer for ``paths`` until interrupted (Ctrl-C).

    Prints (and opens) the page's address with this launch's token, as
    Jupyter does. The page opens at once; while missing record indexes are
    built it shows their progress (and so does a bar on the terminal).
    ``paths`` may be a statistics file (``stats.pb``, ``.pbtxt``): the page
    then shows its overview. ``compare``: records or a statistics file shown
    beside them in the overview; ``schema``: a ``schema.pbtxt`` to check
    them against (default: inferred from ``paths``).
    """
    from tfrx.viewer._overview import load_schema_file

    opened: dict[str, Any] = {"storage_options": storage_options, "index_cache_dir": index_cache_dir}
    main = Side.open(paths, _path_label(paths), **opened)
    other = Side.open(compare, _path_label(compare), **opened) if compare is not None else None
    if isinstance(schema, (str, os.PathLike)):
        schema = load_schema_file(schema)
    source = main.source
    server = ViewerServer(
        source,
        host,
        port,
        stats_records=stats_records,
        allowed_hosts=allowed_hosts,
        export_max_bytes=export_max_bytes,
        statistics=main if source is None else None,
        compare=other,
        schema=schema,
        overview_records=overview_records,
        label=main.label,
    )
    what = f"{len(source.shards)} file(s)" if source is not None else f"statistics {main.label}"
    if other is not None:
        what += f" compared with {other.label}"
    print(f"tfrx view: {what} at {server.url} (Ctrl-C to stop)", flush=True)
    threading.Thread(target=_terminal_progress, args=(server,), daemon=True).start()
    if open_browser:
        import webbrowser

        threading.Timer(0.3, webbrowser.open, args=(server.url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if source is not None:
            source.close()


def _path_label(paths) -> str:
    """A dataset's name from what the command line gave: the file (or glob) name."""
    items = list(paths) if isinstance(paths, (list, tuple)) else [paths]
    names = [os.fspath(p).rstrip("/").split("/")[-1] for p in items if isinstance(p, (str, os.PathLike))]
    if not names:
        return "dataset"
    return names[0] if len(names) == 1 else f"{names[0]} (+{len(names) - 1})"


def _terminal_progress(server: ViewerServer) -> None:
    from tfrx._progress import progress_bar

    job = server.preparing
    time.sleep(0.5)
    if job.status != "running":
        return
    with progress_bar(job.size, desc="indexing", unit="B") as bar:
        while job.status == "running":
            bar.update(max(0, job.progress - bar.n))
            time.sleep(0.2)
        bar.update(max(0, job.progress - bar.n))


def _shards_info(shards) -> list[dict]:
    """What the status answer says of each shard: path, compression, size, count, error, damaged records."""
    return [
        {
            "path": s.path,
            "compression": s.compression or "none",
            "size": s.size,
            "count": s.count,
            "error": s.error,
            "damaged": len(s.damage),
        }
        for s in shards
    ]
