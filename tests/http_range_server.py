"""A loopback HTTP server for files in a folder, with byte ranges, a delay per request and counters.

``RangeServer(folder, delay=0.02)`` serves ``folder`` on ``127.0.0.1`` (a port the OS picks) from
a thread of its own; ``url(name)`` is a file's URL. Every request waits ``delay`` seconds before
its answer, as a distant store would (requests in flight together wait together). ``requests``
counts GET requests with a ``Range`` header, ``max_in_flight`` the most requests answered at once
(``GET /_requests`` answers with the count, for a server in another process; it is not counted).
"""

from __future__ import annotations

import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many connections may open at once; none should wait for an accept


class RangeServer:
    def __init__(self, folder: str, *, delay: float = 0.0) -> None:
        self.folder = folder
        self.delay = delay
        self.requests = 0
        self.max_in_flight = 0
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
            self.max_in_flight = 0

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        if handler.path == "/_requests":
            text = str(self.requests).encode()
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(text)))
            handler.end_headers()
            handler.wfile.write(text)
            return
        ranged = handler.headers.get("Range")
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if body and ranged:
                self.requests += 1
        try:
            time.sleep(self.delay)
            path = os.path.join(self.folder, os.path.basename(handler.path.split("?")[0]))
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
            else:
                handler.send_response(200)
            handler.send_header("Content-Length", str(stop - start))
            handler.send_header("Accept-Ranges", "bytes")
            handler.end_headers()
            if body:
                with open(path, "rb") as f:
                    f.seek(start)
                    handler.wfile.write(f.read(stop - start))
        finally:
            with self._lock:
                self._in_flight -= 1
