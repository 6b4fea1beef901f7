"""A loopback HTTP server for files in a folder: byte ranges, a delay per request, a bandwidth cap, counters.

``RangeServer(folder, delay=0.02, bandwidth=50e6)`` serves ``folder`` on ``127.0.0.1`` (a port the
OS picks) from a thread of its own; ``url(name)`` is a file's URL. Every request waits ``delay``
seconds before its answer, as a distant store would (requests in flight together wait together).
``bandwidth`` (bytes per second, ``None``: no cap) is shared by all connections: bodies go out in
pieces of 64 KiB paced by one token bucket (a burst of 256 KiB), so many requests in flight share
the cap rather than each getting it, as they would share a link.

Counters: ``requests`` (GET requests with a ``Range`` header), ``gets`` (every GET of a file),
``bytes_sent`` (body bytes), ``max_in_flight`` (the most requests answered at once). ``GET
/_requests`` answers with ``requests`` and ``GET /_stats`` with all of them as JSON, for a server in
another process (neither is counted). Used by the tests and by ``benchmarks/remote_random.py``.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_PIECE = 64 << 10
_BURST = 256 << 10


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many connections may open at once; none should wait for an accept


class _Bucket:
    """A token bucket shared by every connection: ``take(n)`` returns once ``n`` bytes may be sent."""

    def __init__(self, rate: float) -> None:
        self.rate = float(rate)
        self._lock = threading.Lock()
        self._next = time.monotonic()  # when the bucket is empty again, given what was granted

    def take(self, n: int) -> None:
        with self._lock:
            now = time.monotonic()
            # ``_next``: when everything granted so far has gone out at the rate; up to a burst may be ahead.
            self._next = max(self._next, now) + n / self.rate
            wait = self._next - _BURST / self.rate - now
        if wait > 0:
            time.sleep(wait)


class RangeServer:
    def __init__(self, folder: str, *, delay: float = 0.0, bandwidth: float | None = None) -> None:
        if bandwidth is not None and bandwidth <= 0:
            raise ValueError(f"bandwidth must be > 0 bytes/s or None, got {bandwidth!r}")
        self.folder = folder
        self.delay = delay
        self.bandwidth = bandwidth
        self._bucket = _Bucket(bandwidth) if bandwidth else None
        self.requests = 0
        self.gets = 0
        self.bytes_sent = 0
        self.max_in_flight = 0
        self.ranges: list[tuple[str, int, int]] = []  # (file, start, stop) of every ranged GET
        self._in_flight = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                owner._answer(self, body=False)

            def do_GET(self) -> None:
                owner._answer(self, body=True)

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/{name}"

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.gets = 0
            self.bytes_sent = 0
            self.max_in_flight = 0
            self.ranges = []

    def stats(self) -> dict:
        with self._lock:
            return {
                "requests": self.requests,
                "gets": self.gets,
                "bytes_sent": self.bytes_sent,
                "max_in_flight": self.max_in_flight,
            }

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> RangeServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _reply(self, handler: BaseHTTPRequestHandler, text: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(text)))
        handler.end_headers()
        handler.wfile.write(text)

    def _send(self, handler: BaseHTTPRequestHandler, path: str, start: int, stop: int) -> None:
        with open(path, "rb") as f:
            f.seek(start)
            left = stop - start
            while left > 0:
                piece = f.read(min(_PIECE, left))
                if not piece:
                    break
                if self._bucket is not None:
                    self._bucket.take(len(piece))
                handler.wfile.write(piece)
                left -= len(piece)
                with self._lock:
                    self.bytes_sent += len(piece)

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        if handler.path == "/_requests":
            return self._reply(handler, str(self.requests).encode())
        if handler.path == "/_stats":
            return self._reply(handler, json.dumps(self.stats()).encode())
        ranged = handler.headers.get("Range")
        # a file in the folder or below it (``.tfrx/...``); nothing outside it
        name = os.path.normpath(urllib.parse.unquote(handler.path.split("?")[0]).lstrip("/"))
        if name.startswith(".."):
            name = ""
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if body:
                self.gets += 1
                if ranged:
                    self.requests += 1
        try:
            time.sleep(self.delay)
            path = os.path.join(self.folder, name)
            if not os.path.isfile(path):
                handler.send_response(404)
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            size = os.path.getsize(path)
            start, stop = 0, size
            m = re.fullmatch(r"bytes=(\d+)-(\d*)", ranged or "")
            if m:
                start, stop = int(m[1]), min(int(m[2]) + 1, size) if m[2] else size
                handler.send_response(206)
                handler.send_header("Content-Range", f"bytes {start}-{stop - 1}/{size}")
                if body:
                    with self._lock:
                        self.ranges.append((name, start, stop))
            else:
                handler.send_response(200)
            handler.send_header("Content-Length", str(stop - start))
            handler.send_header("Accept-Ranges", "bytes")
            handler.end_headers()
            if body:
                self._send(handler, path, start, stop)
        finally:
            with self._lock:
                self._in_flight -= 1
