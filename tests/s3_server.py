"""A real S3-compatible HTTP server on loopback for the remote-storage tests.

moto's S3 backend served by werkzeug on ``127.0.0.1`` (a free port picked by
the OS), wrapped in a small WSGI layer that counts requests and can fail the
next N requests matching a rule, so retry and error paths are exercised over
real HTTP. Used by ``tests/test_s3.py``; needs ``moto[server]`` and ``s3fs``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

_FAULT_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


@dataclass
class Fault:
    """Fails ``remaining`` requests whose method, path (and Range header, when given) match,
    with ``status``, after letting ``after`` through."""

    method: str = "GET"
    path_contains: str = ""
    range_starts: str | None = None
    remaining: int = 0
    status: int = 503
    after: int = 0
    failed: int = 0


@dataclass
class RequestLog:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)

    def add(self, method: str, path: str, range_header: str | None) -> None:
        with self.lock:
            self.requests.append((method, path, range_header))

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()

    def count(self, method: str, path_contains: str = "") -> int:
        with self.lock:
            return sum(1 for m, p, _ in self.requests if m == method and path_contains in p)


class S3Server:
    """Start with ``start()``, stop with ``stop()``; ``endpoint`` is its URL."""

    key = "testing-key"
    secret = "testing-secret"

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency  # seconds added before answering each request, as a network would
        self.log = RequestLog()
        self.faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server: Any = None  # a werkzeug server while running
        self._thread: threading.Thread | None = None

    def _app(self, inner):
        def app(environ, start_response):
            method = environ.get("REQUEST_METHOD", "")
            path = environ.get("PATH_INFO", "")
            range_header = environ.get("HTTP_RANGE")
            self.log.add(method, path, range_header)
            with self._lock:
                hit = next(
                    (
                        f
                        for f in self.faults
                        if f.remaining > 0
                        and f.method == method
                        and f.path_contains in path
                        and (f.range_starts is None or (range_header or "").startswith(f.range_starts))
                    ),
                    None,
                )
                if hit is not None and hit.after > 0:
                    hit.after -= 1
                    hit = None
                if hit is not None:
                    hit.remaining -= 1
                    hit.failed += 1
            if hit is not None:
                start_response(
                    f"{hit.status} Fault",
                    [("Content-Type", "application/xml"), ("Content-Length", str(len(_FAULT_BODY)))],
                )
                return [_FAULT_BODY]
            if self.latency:
                time.sleep(self.latency)
            return inner(environ, start_response)

        return app

    def start(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import WSGIRequestHandler, make_server

        class QuietHandler(WSGIRequestHandler):
            def log_request(self, *args, **kwargs) -> None:
                pass

        inner = DomainDispatcherApplication(create_backend_app)
        self._server = make_server("127.0.0.1", 0, self._app(inner), threaded=True, request_handler=QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def fail(
        self,
        remaining: int,
        *,
        method: str = "GET",
        path_contains: str = "",
        range_starts: str | None = None,
        status: int = 503,
        after: int = 0,
    ) -> Fault:
        """Fails the next ``remaining`` matching requests; ``range_starts`` (``"bytes=1024-"``)
        picks range requests by where they start."""
        fault = Fault(
            method=method,
            path_contains=path_contains,
            range_starts=range_starts,
            remaining=remaining,
            status=status,
            after=after,
        )
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def storage_options(self, *, retries: int = 4) -> dict:
        """s3fs options for this server; ``retries`` is botocore's total attempts per request."""
        return {
            "key": self.key,
            "secret": self.secret,
            "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "us-east-1"},
            "config_kwargs": {"retries": {"max_attempts": retries, "mode": "standard"}},
        }

    def client(self):
        """A boto3 S3 client for this server (to look at objects independently of s3fs)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.key,
            aws_secret_access_key=self.secret,
            region_name="us-east-1",
        )
