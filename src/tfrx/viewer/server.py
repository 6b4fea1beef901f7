"""``tfrx view``: a small HTTP server (the standard library's) over a :class:`ViewSource`.

The page (``static/``) asks for JSON: ``/api/info`` (files, counts, the
inferred spec), ``/api/records?start=&count=&filter=`` (a page of records, or
of the records that match a filter), ``/api/record?n=`` (one record),
``/api/random?count=&seed=``, ``/api/media?n=&feature=&j=`` (an image or
audio value as its file type; raw arrays as PNG), ``/api/stats`` and
``/api/health`` (computed once in the background: per-feature statistics
over a sample, and every record's CRC), ``/api/export?format=&filter=``
(TFRecord or JSON Lines of the matching records). Errors come back as
``{"error": message}`` with a 4xx/5xx status; the server stays up.

It binds to 127.0.0.1 unless told otherwise and serves nothing but the page
and the records of the paths it was given.
"""

from __future__ import annotations

import io
import json
import mimetypes
import random
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlparse

from tfrx.viewer.cells import raw_image_shape, record_view
from tfrx.viewer.query import Filter, FilterError
from tfrx.viewer.source import ViewSource

__all__ = ["ViewerServer", "serve"]

MAX_PAGE = 200
MAX_SCAN = 20_000  # records a filtered page request looks at before it answers with what it found
_STATIC = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}


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

    def state(self) -> dict:
        with self._lock:
            if self.status == "idle":
                self.status = "running"
                threading.Thread(target=self._run, daemon=True, name="tfrx-view-bg").start()
        return {"status": self.status, "progress": self.progress, "result": self.result, "error": self.error}

    def _run(self) -> None:
        try:
            self.result = self._fn(self)
            self.status = "done"
        except Exception as e:  # reported to the page, never kills the server
            self.error, self.status = f"{type(e).__name__}: {e}", "failed"


class ViewerServer(ThreadingHTTPServer):
    """The viewer's HTTP server over ``source``; ``serve_forever()`` runs it."""

    daemon_threads = True

    def __init__(self, source: ViewSource, host: str = "127.0.0.1", port: int = 0, *, stats_records: int = 10_000) -> None:
        super().__init__((host, port), _Handler)
        self.source = source
        self.stats_records = stats_records
        self.stats = _Background(self._compute_stats)
        self.health = _Background(self._compute_health)
        self._names: set[str] = set()
        self._schema: str | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if isinstance(host, bytes):
            host = host.decode()
        return f"http://{host}:{port}/"

    # ------------------------------------------------------------------ answers
    def info(self) -> dict:
        src = self.source
        total = src.total()
        first = src.read(0, 32) if total else []
        payloads = sorted({record_view(r[3])["kind"] for r in first})
        return {
            "shards": [{"path": s.path, "compression": s.compression or "none", "size": s.size, "count": s.count,
                        "error": s.error} for s in src.shards],
            "total": total,
            "payload": payloads,
            "schema": self.schema_code([r[3] for r in first], payloads),
        }

    def schema_code(self, records: list[bytes], payloads: list[str]) -> str | None:
        if self._schema is None and records and payloads and "other" not in payloads:
            from tfrx.cli.schema import python_code
            from tfrx.parsing import infer_features

            try:
                spec = infer_features(records, kind="sequence" if "SequenceExample" in payloads else "example")
                self._schema = python_code(spec)
            except Exception as e:
                self._schema = f"# could not infer a spec: {e}"
        return self._schema

    def feature_names(self) -> set[str]:
        if not self._names:
            for _, _, _, rec in self.source.read(0, 64):
                view = record_view(rec)
                self._names.update(view.get("features", {}))
                self._names.update(view.get("feature_lists", {}))
        return self._names

    def _row(self, number: int, path: str, index: int, record: bytes) -> dict:
        return {"n": number, "shard": path, "i": index, **record_view(record)}

    def records(self, start: int, count: int, expression: str | None) -> dict:
        total = self.source.total()
        if not expression:
            rows = [self._row(*r) for r in self.source.read(start, count)]
            return {"start": start, "total": total, "records": rows, "next": start + len(rows)}
        match = self._filter(expression)
        rows, n = [], start
        while len(rows) < count and n < total and n - start < MAX_SCAN:
            for number, path, index, rec in self.source.read(n, min(256, MAX_SCAN)):
                n = number + 1
                if match.matches(rec):
                    rows.append(self._row(number, path, index, rec))
                    if len(rows) >= count:
                        break
        return {"start": start, "total": total, "records": rows, "next": n, "scanned": n - start, "filter": expression}

    def _filter(self, expression: str) -> _RecordFilter:
        try:
            return _RecordFilter(Filter(expression, self.feature_names()))
        except FilterError as e:
            raise _ApiError(400, str(e)) from None

    def media(self, n: int, feature: str, j: int) -> tuple[bytes, str]:
        from tfrx.codec import decode_example, decode_sequence_example
        from tfrx.errors import DecodeError
        from tfrx.tools.sniff import SEQUENCE_EXAMPLE, record_kind

        try:
            record = self.source.record(n)
        except IndexError as e:
            raise _ApiError(404, str(e)) from None
        try:
            features = (decode_sequence_example(record)[0] if record_kind(record) == SEQUENCE_EXAMPLE
                        else decode_example(record))
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

    def _compute_stats(self, job: _Background) -> dict:
        from tfrx.tools.stats import compute_stats

        records = self.source.read(0, self.stats_records)
        kinds = {record_view(r[3])["kind"] for r in records[:32]}
        if "other" in kinds:
            raise ValueError("the records are not tf.train.Example or SequenceExample")
        stats = compute_stats((r[3] for r in records), sequence="SequenceExample" in kinds)
        job.progress = stats.records
        out = stats.to_dict(top_k=10)
        out["sampled"] = len(records)
        out["total"] = self.source.total()
        return out

    def _compute_health(self, job: _Background) -> dict:
        from tfrx.tools.verify import verify_files

        files = []
        for shard in self.source.shards:
            if shard.error and shard.count is None:
                files.append({"path": shard.path, "ok": False, "records": 0, "errors": [{"message": shard.error}]})
                continue
            (check,) = verify_files(shard.path)
            job.progress += check.records
            files.append({"path": check.path, "ok": check.ok, "records": check.records, "errors": [
                {"kind": getattr(e, "kind", type(e).__name__), "record": getattr(e, "record_index", None),
                 "offset": getattr(e, "offset", None), "message": str(e)} for e in check.errors]})
        return {"files": files, "damaged": sum(not f["ok"] for f in files)}

    def export(self, fmt: str, expression: str | None, limit: int) -> tuple[bytes, str, str]:
        match = self._filter(expression) if expression else None
        total = self.source.total()
        chosen: list[bytes] = []
        n = 0
        while n < total and len(chosen) < limit:
            for _, _, _, rec in self.source.read(n, 1024):
                n += 1
                if match is None or match.matches(rec):
                    chosen.append(rec)
                    if len(chosen) >= limit:
                        break
        if fmt == "tfrecord":
            from tfrx.io.writer import TFRecordWriter

            buf = io.BytesIO()
            with TFRecordWriter(buf) as w:
                for rec in chosen:
                    w.write(rec)
            return buf.getvalue(), "application/octet-stream", "selection.tfrecord"
        if fmt == "jsonl":
            from tfrx.cli._common import json_value
            from tfrx.codec import decode_example

            lines = []
            for rec in chosen:
                feats = decode_example(rec)
                lines.append(json.dumps({k: json_value(v) for k, v in sorted(feats.items())}))
            return ("\n".join(lines) + ("\n" if lines else "")).encode(), "application/x-ndjson", "selection.jsonl"
        raise _ApiError(400, f"format must be 'tfrecord' or 'jsonl', got {fmt!r}")


class _RecordFilter:
    def __init__(self, f: Filter) -> None:
        self.filter = f

    def matches(self, record: bytes) -> bool:
        from tfrx.codec import decode_example
        from tfrx.errors import DecodeError

        try:
            return self.filter(decode_example(record))
        except DecodeError:
            return False


def _png(value: bytes, shape) -> bytes:
    try:
        from PIL import Image
    except ImportError:
        raise _ApiError(415, "showing raw image arrays needs Pillow (pip install 'tfrx[image]')") from None
    import numpy as np

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

    def do_GET(self):
        url = urlparse(self.path)
        q = parse_qs(url.query)
        srv = self.server
        try:
            if url.path == "/favicon.ico":
                return self._send(204, b"", "image/x-icon")
            if url.path in ("/", "/index.html"):
                return self._static("index.html")
            if url.path.startswith("/static/"):
                return self._static(url.path[len("/static/"):])
            if url.path == "/api/info":
                return self._json(200, srv.info())
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
                rng = random.Random(_int(q, "seed", 0))
                total = srv.source.total()
                picks = sorted(rng.sample(range(total), min(count, total)))
                return self._json(200, {"records": [srv._row(*srv.source.read(n, 1)[0]) for n in picks], "total": total})
            if url.path == "/api/media":
                body, mime = srv.media(_int(q, "n"), q.get("feature", [""])[0], _int(q, "j", 0))
                return self._send(200, body, mime)
            if url.path == "/api/stats":
                return self._json(200, srv.stats.state())
            if url.path == "/api/health":
                return self._json(200, srv.health.state())
            if url.path == "/api/export":
                fmt = q.get("format", ["tfrecord"])[0]
                limit = _int(q, "limit", 1_000_000, 1, 10_000_000)
                body, mime, name = srv.export(fmt, q.get("filter", [""])[0].strip() or None, limit)
                return self._send(200, body, mime, {"Content-Disposition": f'attachment; filename="{name}"'})
            raise _ApiError(404, f"no such page: {url.path}")
        except _ApiError as e:
            self._json(e.status, {"error": str(e)})
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # a bad record or file must not take the server down
            self._json(500, {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(limit=3)})

    def _static(self, name: str) -> None:
        if name not in _STATIC:
            raise _ApiError(404, f"no such file: {name}")
        body = resources.files("tfrx.viewer").joinpath("static", name).read_bytes()
        self._send(200, body, _STATIC[name] or mimetypes.guess_type(name)[0] or "application/octet-stream")


def serve(paths, *, host: str = "127.0.0.1", port: int = 0, open_browser: bool = True, storage_options: dict | None = None,
          stats_records: int = 10_000) -> None:
    """Serves the viewer for ``paths`` until interrupted (Ctrl-C)."""
    source = ViewSource(paths, storage_options=storage_options)
    server = ViewerServer(source, host, port, stats_records=stats_records)
    print(f"tfrx view: {len(source.shards)} file(s) at {server.url} (Ctrl-C to stop)", flush=True)
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
