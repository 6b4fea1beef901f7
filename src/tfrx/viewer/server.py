"""``tfrx view``: a small HTTP server (the standard library's) over a :class:`ViewSource`.

The page (``static/``) asks for JSON: ``/api/info`` (files, counts, the
inferred spec), ``/api/records?start=&count=&filter=`` (a page of records, or
of the records that match a filter), ``/api/record?n=`` (one record),
``/api/random?count=&seed=`` (records drawn uniformly by number),
``/api/media?n=&feature=&j=`` (an image or audio value as its file type;
raw arrays as PNG), ``/api/stats?mode=sample|all&records=&seed=`` and
``/api/health`` (computed in the background, polled for progress:
per-feature statistics over a random sample or every record, and every
record's CRC), ``/api/export?format=tfrecord|parquet|jsonl&filter=&limit=``
(the matching records, written through tfrx's converters and streamed from a
temporary file). Errors come back as ``{"error": message}`` with a 4xx/5xx
status; the server stays up.

It binds to 127.0.0.1 unless told otherwise and serves nothing but the page
and the records of the paths it was given.
"""

from __future__ import annotations

import io
import json
import mimetypes
import os
import shutil
import tempfile
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

from tfrx.viewer.cells import raw_image_shape, record_view
from tfrx.viewer.query import Filter, FilterError
from tfrx.viewer.source import ViewSource
from tfrx.viewer.stats import StatsJob

__all__ = ["ViewerServer", "serve"]

MAX_PAGE = 200
SCAN_SECONDS = 1.5  # a filtered page answers with what it found after this long (and says how far it got)
MAX_STATS_RECORDS = 10_000_000
MAX_EXPORT = 1 << 40
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


def _kind_name(spec) -> str | None:
    dtype = getattr(spec, "dtype", None)
    name = getattr(dtype, "name", None)
    return {"int64": "int64", "float32": "float", "string": "bytes"}.get(name) if isinstance(name, str) else None


class ViewerServer(ThreadingHTTPServer):
    """The viewer's HTTP server over ``source``; ``serve_forever()`` runs it."""

    daemon_threads = True

    def __init__(
        self, source: ViewSource, host: str = "127.0.0.1", port: int = 0, *, stats_records: int = 10_000
    ) -> None:
        super().__init__((host, port), _Handler)
        self.source = source
        self.stats_records = stats_records
        self.health = _Background(self._compute_health)
        self.preparing = _Background(self._prepare)
        self.preparing.state()  # counts the files (building missing indexes) while the page loads
        self._lock = threading.Lock()
        self._stats: dict[tuple, StatsJob] = {}
        self._schema: dict | None = None
        self._sampling = False

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if isinstance(host, bytes):
            host = host.decode()
        return f"http://{host}:{port}/"

    # ------------------------------------------------------------------ answers
    def _prepare(self, job: _Background) -> None:
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

    def info(self) -> dict:
        job = self.preparing
        if job.status == "running":
            return {
                "status": "indexing",
                "progress": job.progress,
                "size": job.size,
                "message": _progress_text(job),
                "shards": [
                    {
                        "path": s.path,
                        "compression": s.compression or "none",
                        "size": s.size,
                        "count": s.count,
                        "error": s.error,
                    }
                    for s in self.source.shards
                ],
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
            "shards": [
                {
                    "path": s.path,
                    "compression": s.compression or "none",
                    "size": s.size,
                    "count": s.count,
                    "error": s.error,
                }
                for s in src.shards
            ],
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
        }

    def schema(self, *, sampled: bool = True) -> dict:
        """The payload kinds, the inferred spec (as code) and each feature's kind.

        The page's first answer comes from the first 64 records; filters and
        statistics use the kinds seen in those and in 256 records drawn at
        random (features that appear only later in the files are found so;
        reading the sample costs random reads, so it is not on the way to
        the first page).
        """
        schema = self._schema
        if schema is None or (sampled and not schema["sampled"]):
            with self._lock:
                if self._schema is None:
                    self._schema = self._infer(sampled=False)
                if sampled and not self._schema["sampled"]:
                    self._schema = self._infer(sampled=True, first=self._schema)
                schema = self._schema
        return schema

    def _infer(self, *, sampled: bool, first: dict | None = None) -> dict:
        from tfrx.parsing.specs import features_to_python
        from tfrx.parsing import infer_features

        src = self.source
        head = src.read(0, 64)
        records = [r[3] for r in head]
        payloads = first["payload"] if first else sorted({record_view(r)["kind"] for r in records[:32]})
        out = {
            "payload": payloads,
            "code": first and first["code"],
            "kinds": {},
            "sequence_kinds": None,
            "sampled": sampled,
        }
        if not records or not payloads or "other" in payloads:
            return out
        kind = "sequence" if "SequenceExample" in payloads else "example"
        try:
            if out["code"] is None:
                out["code"] = features_to_python(infer_features(records, kind=kind))
            if sampled:
                seen = {r[0] for r in head}
                picks = [n for n in src.sample_numbers(256, 0).tolist() if n not in seen]
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

    def _row(self, number: int, path: str, index: int, record: bytes) -> dict:
        return {"n": number, "shard": path, "i": index, **record_view(record)}

    def records(self, start: int, count: int, expression: str | None) -> dict:
        total = self.source.total()
        if not expression:
            rows = [self._row(*r) for r in self.source.read(start, count)]
            return {"start": start, "total": total, "records": rows, "next": start + len(rows)}
        match, sequence = self._filter(expression)
        rows, n = [], start
        deadline = time.monotonic() + SCAN_SECONDS
        for first, batch in self.source.batches(start, total, 256):  # small batches: the deadline is kept
            hits = match.matches(batch, sequence=sequence)
            n = first + len(batch)
            for j in np.flatnonzero(hits).tolist():
                if len(rows) < count:
                    rows.append(self._row(first + j, *self._where(first + j), batch[j]))
                if len(rows) >= count:
                    n = first + j + 1
                    break
            if len(rows) >= count or time.monotonic() > deadline:
                break
        return {"start": start, "total": total, "records": rows, "next": n, "scanned": n - start, "filter": expression}

    def _where(self, number: int) -> tuple[str, int]:
        k, local = self.source.locate(number)
        return self.source.shards[k].path, local

    def _filter(self, expression: str) -> tuple[Filter, bool]:
        schema = self.schema()
        if "other" in schema["payload"]:
            raise _ApiError(
                400, "these records are not tf.train.Example or SequenceExample: there are no features to filter on"
            )
        try:
            f = Filter(expression, schema["kinds"], sequence_kinds=schema["sequence_kinds"])
        except FilterError as e:
            raise _ApiError(400, str(e)) from None
        return f, schema["sequence_kinds"] is not None

    def media(self, n: int, feature: str, j: int) -> tuple[bytes, str]:
        from tfrx.codec import decode_example, decode_sequence_example
        from tfrx.errors import DecodeError
        from tfrx.codec.sniff import SEQUENCE_EXAMPLE, record_kind

        try:
            record = self.source.record(n)
        except IndexError as e:
            raise _ApiError(404, str(e)) from None
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
        from tfrx.viewer.cells import media_kind

        kind = media_kind(value)
        if kind:
            return value, kind[1]
        shape = raw_image_shape(features, feature, value)
        if shape is None:
            return value, "application/octet-stream"
        return _png(value, shape), "image/png"

    def stats(self, mode: str, records: int, seed: int) -> dict:
        """The state of the statistics job for these parameters (started on first ask; another job is cancelled)."""
        schema = self.schema()
        if "other" in schema["payload"]:
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
                for other in self._stats.values():
                    if other.status == "running":
                        other.cancelled = True
                self._stats = {k: v for k, v in self._stats.items() if v.status == "done"}
                job = self._stats[key] = StatsJob(
                    self.source, schema["kinds"], schema["sequence_kinds"], mode=mode, records=records, seed=seed
                )
        job.start()
        return job.state()

    def _compute_health(self, job: _Background) -> dict:
        from tfrx.tools.verify import verify_files

        def progress(records: int, _bytes: int) -> None:
            job.progress += records

        files = []
        for shard in self.source.shards:
            if shard.error and shard.count is None:
                files.append({"path": shard.path, "ok": False, "records": 0, "errors": [{"message": shard.error}]})
                continue
            (check,) = verify_files(shard.path, progress=progress)
            files.append(
                {
                    "path": check.path,
                    "ok": check.ok,
                    "records": check.records,
                    "errors": [
                        {
                            "kind": getattr(e, "kind", type(e).__name__),
                            "record": getattr(e, "record_index", None),
                            "offset": getattr(e, "offset", None),
                            "message": str(e),
                        }
                        for e in check.errors
                    ],
                }
            )
        return {"files": files, "damaged": sum(not f["ok"] for f in files)}

    def export(self, fmt: str, expression: str | None, limit: int, folder: str) -> str:
        """Writes the matching records (up to ``limit``) to a file in ``folder`` as ``fmt``; returns its path.

        The selection is streamed into a TFRecord file a batch at a time;
        Parquet and JSON Lines are then written from it by
        :func:`tfrx.tools.convert.tfrecord_to_parquet` / ``tfrecord_to_jsonl``.
        """
        if fmt not in EXPORT_FORMATS:
            raise _ApiError(400, f"format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
        match, sequence = self._filter(expression) if expression else (None, False)
        other = "other" in self.schema()["payload"]
        from tfrx.io.writer import TFRecordWriter

        selection = os.path.join(folder, "selection.tfrecord")
        written = 0
        with TFRecordWriter(selection) as w:
            for _, batch in self.source.batches(0, None, 1024):
                rows = np.flatnonzero(match.matches(batch, sequence=sequence)) if match else range(len(batch))
                for j in rows:
                    if written >= limit:
                        break
                    w.write(batch[int(j)])
                    written += 1
                if written >= limit:
                    break
        if fmt == "tfrecord":
            return selection
        from tfrx.tools import convert

        out = os.path.join(folder, EXPORT_FORMATS[fmt][1])
        if fmt == "parquet":
            convert.tfrecord_to_parquet(selection, out, raw=other, progress=False)
        else:
            convert.tfrecord_to_jsonl(selection, out, raw=other, progress=False)
        return out


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
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj, allow_nan=False, default=str).encode(), "application/json")

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):  # noqa: C901  one branch per route of the viewer's HTTP API
        url = urlparse(self.path)
        q = parse_qs(url.query)
        srv = self.server
        try:
            if url.path == "/favicon.ico":
                return self._send(204, b"", "image/x-icon")
            if url.path in ("/", "/index.html"):
                return self._static("index.html")
            if url.path.startswith("/static/"):
                return self._static(url.path[len("/static/") :])
            if url.path == "/api/info":
                return self._json(200, srv.info())
            if url.path.startswith("/api/"):
                srv.require_ready()
            if url.path == "/api/records":
                start = _int(q, "start", 0)
                count = _int(q, "count", 50, 1, MAX_PAGE)
                return self._json(200, srv.records(start, count, q.get("filter", [""])[0].strip() or None))
            if url.path == "/api/record":
                n = _int(q, "n")
                rows = srv.source.read(n, 1)
                if not rows:
                    raise _ApiError(404, f"record {n} is past the last record ({srv.source.total()} records)")
                return self._json(200, srv._row(*rows[0]))
            if url.path == "/api/random":
                count = _int(q, "count", 20, 1, MAX_PAGE)
                picks = srv.source.sample_numbers(count, _int(q, "seed", 0))
                return self._json(
                    200,
                    {"records": [srv._row(*r) for r in srv.source.read_numbers(picks)], "total": srv.source.total()},
                )
            if url.path == "/api/media":
                body, mime = srv.media(_int(q, "n"), q.get("feature", [""])[0], _int(q, "j", 0))
                return self._send(200, body, mime)
            if url.path == "/api/stats":
                return self._json(
                    200,
                    srv.stats(
                        q.get("mode", ["sample"])[0],
                        _int(q, "records", srv.stats_records, 1, MAX_STATS_RECORDS),
                        _int(q, "seed", 0),
                    ),
                )
            if url.path == "/api/health":
                return self._json(200, srv.health.state())
            if url.path == "/api/export":
                fmt = q.get("format", ["tfrecord"])[0]
                limit = _int(q, "limit", MAX_EXPORT, 1, MAX_EXPORT)
                return self._export(fmt, q.get("filter", [""])[0].strip() or None, limit)
            raise _ApiError(404, f"no such page: {url.path}")
        except _ApiError as e:
            self._json(e.status, {"error": str(e)})
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # a bad record or file must not take the server down
            self._json(500, {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(limit=3)})

    def _export(self, fmt: str, expression: str | None, limit: int) -> None:
        folder = tempfile.mkdtemp(prefix="tfrx-view-export-")
        try:
            path = self.server.export(fmt, expression, limit, folder)
            mime, name = EXPORT_FORMATS[fmt]
            self.send_response(200)
            self.send_header("Content-Type", mime)
            self.send_header("Content-Length", str(os.path.getsize(path)))
            self.send_header("Content-Disposition", f'attachment; filename="{name}"')
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if self.command != "HEAD":
                with open(path, "rb") as f:
                    shutil.copyfileobj(f, self.wfile, 1 << 20)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _static(self, name: str) -> None:
        if name not in _STATIC:
            raise _ApiError(404, f"no such file: {name}")
        body = resources.files("tfrx.viewer").joinpath("static", name).read_bytes()
        self._send(200, body, _STATIC[name] or mimetypes.guess_type(name)[0] or "application/octet-stream")


def serve(
    paths,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    storage_options: dict | None = None,
    stats_records: int = 10_000,
    index_cache_dir: str | None = None,
) -> None:
    """Serves the viewer for ``paths`` until interrupted (Ctrl-C).

    The page opens at once; while missing record indexes are built it shows
    their progress (and so does a bar on the terminal).
    """
    source = ViewSource(paths, storage_options=storage_options, index_cache_dir=index_cache_dir)
    server = ViewerServer(source, host, port, stats_records=stats_records)
    print(f"tfrx view: {len(source.shards)} file(s) at {server.url} (Ctrl-C to stop)", flush=True)
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
        source.close()


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
