"""tfrx view under attack: DNS rebinding, requests without the token, cross-origin writes, work without bounds.

Each test sends what a hostile page (or a careless client) would send and
expects a refusal, then checks that nothing was done (no export file, no
job started); ordinary use with the token still works.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

import numpy as np
import pytest

import tfrx
from tfrx.viewer import _server as server_module
from tfrx.viewer._source import ViewSource

from test_viewer import _Served


@pytest.fixture(scope="module")
def numbers(tmp_path_factory):
    path = tmp_path_factory.mktemp("secure") / "numbers.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many(tfrx.make_example({"label": i % 7, "x": [i, i + 1]}).SerializeToString() for i in range(3000))
    return path


@pytest.fixture()
def served(numbers):
    s = _Served(str(numbers))
    yield s
    s.close()


def _raw(served, method, path, headers=None, body=None):
    """One request with exactly these headers (http.client adds no Host of its own when one is given)."""
    host, port = served.server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def _host(served):
    return f"127.0.0.1:{served.server.server_address[1]}"


def _exports_written(served):
    return [os.path.join(d, f) for d, _, fs in os.walk(served.server._export_dir) for f in fs]


def test_a_foreign_host_is_refused_even_with_the_token(served):
    port = served.server.server_address[1]
    token = {"X-Tfrx-Token": served.server.token}
    for host in ("evil.example:%d" % port, "evil.example", "127.0.0.1:%d" % (port + 1), "127.0.0.1", "", "[::1"):
        for path in ("/", "/api/info", "/api/records?count=5"):
            status, headers, body = _raw(served, "GET", path, {"Host": host, **token})
            assert status == 403, (host, path, status)
            answer = json.loads(body)
            assert answer["status"] == 403 and "Host" in answer["error"]
    # No Host header at all (HTTP/1.0 style) is refused too.
    assert _raw(served, "GET", "/api/info", token)[0] == 403
    # The names of this machine's loopback reach it.
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert _raw(served, "GET", "/api/info", {"Host": host, **token})[0] == 200, host


def test_allowed_host_names_and_ip_literals_on_a_wildcard_bind(numbers):
    s = _Served(str(numbers), host="0.0.0.0", allowed_hosts=["viewer.lan"])
    try:
        port = s.server.server_address[1]
        token = {"X-Tfrx-Token": s.server.token}
        assert _raw(s, "GET", "/api/info", {"Host": f"viewer.lan:{port}", **token})[0] == 200
        assert _raw(s, "GET", "/api/info", {"Host": f"10.1.2.3:{port}", **token})[0] == 200
        assert _raw(s, "GET", "/api/info", {"Host": f"rebound.example:{port}", **token})[0] == 403
    finally:
        s.close()


def test_every_api_call_needs_the_token(served):
    h = {"Host": _host(served)}
    paths = [
        "/api/info",
        "/api/records?count=5",
        "/api/record?n=0",
        "/api/random?count=3",
        "/api/media?n=0&feature=x&j=0",
        "/api/stats",
        "/api/health",
        "/api/damage",
        "/api/export",
        "/api/export/file",
        "/api/overview",
    ]
    for path in paths:
        status, _, body = _raw(served, "GET", path, h)
        assert status == 401 and "no token" in json.loads(body)["error"], path
        status, _, body = _raw(served, "GET", path, {**h, "X-Tfrx-Token": "not-the-token"})
        assert status == 403 and "wrong token" in json.loads(body)["error"], path
        sep = "&" if "?" in path else "?"
        assert _raw(served, "GET", f"{path}{sep}token=guess", h)[0] == 403, path
    # The health check and the overview were never started by those refused requests.
    assert served.server.health.status == "idle" and not served.server._overviews
    # The page itself holds no data and loads without it (it then asks for the token's address).
    status, headers, body = _raw(served, "GET", "/", h)
    assert status == 200 and b"tfrx view" in body and headers["X-Frame-Options"] == "DENY"
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    # Each launch has its own token.
    other = server_module.ViewerServer(served.server.source, port=0)
    try:
        assert other.token != served.server.token and len(other.token) >= 32 and other.token in other.url
    finally:
        other.server_close()


def test_ordinary_use_with_the_token_works(served):
    info = served.json("/api/info")
    assert info["total"] == 3000 and info["limits"]["max_filter_chars"] == server_module.MAX_FILTER_CHARS
    # The token in the query (as <img src> and download links carry it) works for GETs.
    status, _, body = _raw(served, "GET", f"/api/records?count=2&token={served.server.token}", {"Host": _host(served)})
    assert status == 200 and [r["n"] for r in json.loads(body)["records"]] == [0, 1]
    page = served.json("/api/records?count=5&filter=" + urllib.parse.quote("label == 3"))
    assert [r["n"] for r in page["records"]] == [3, 10, 17, 24, 31]
    code, _, body = served.export("tfrecord", filter="label == 6", limit=4)
    assert code == 200 and len(list(tfrx.read_records(__import__("io").BytesIO(body)))) == 4
    assert served.poll("/api/stats?mode=all")["status"] == "done"


def test_cross_origin_writes_are_refused_and_write_nothing(served):
    h = {"Host": _host(served)}
    token = {"X-Tfrx-Token": served.server.token}
    body = json.dumps({"format": "tfrecord"}).encode()
    # A cross-origin <img src> or link: a GET that once wrote the whole selection to disk.
    for path in ("/api/export?format=tfrecord", f"/api/export?format=jsonl&token={served.server.token}"):
        status, _, answer = _raw(served, "GET", path, h)
        assert status in (200, 401) and json.loads(answer).get("status") in ("idle", 401), path
    # A form POST from another site: no token header (a form cannot set one), text/plain body.
    status, _, answer = _raw(
        served,
        "POST",
        f"/api/export?token={served.server.token}",
        {**h, "Origin": "http://evil.example", "Content-Type": "text/plain"},
        body,
    )
    assert status == 401 and "header" in json.loads(answer)["error"]
    # A fetch from another origin that somehow holds the token: its Origin gives it away.
    for origin in ("http://evil.example", "null", f"http://localhost:{served.server.server_address[1] + 1}"):
        status, _, answer = _raw(
            served,
            "POST",
            "/api/export",
            {**h, **token, "Origin": origin, "Content-Type": "application/json"},
            body,
        )
        assert status == 403 and "origin" in json.loads(answer)["error"], origin
    status, _, _ = _raw(
        served,
        "POST",
        "/api/export",
        {**h, **token, "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
        body,
    )
    assert status == 403
    # A CORS preflight gets no permission.
    status, headers, _ = _raw(
        served,
        "OPTIONS",
        "/api/export",
        {**h, "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert status == 405 and not any(k.lower().startswith("access-control") for k in headers)
    # Statistics start only with a POST: a GET reads their state.
    assert served.json("/api/stats")["status"] == "idle"
    assert served.server.export_job is None and _exports_written(served) == []
    # The page's own POST (same Origin) is accepted.
    status, _, answer = _raw(
        served,
        "POST",
        "/api/export",
        {**h, **token, "Origin": f"http://{_host(served)}", "Content-Type": "application/json"},
        body,
    )
    assert status == 202 and json.loads(answer)["status"] in ("running", "done")


def test_post_bodies_are_bounded_and_typed(served):
    h = {"Host": _host(served), "X-Tfrx-Token": served.server.token}
    big = b"{" + b" " * (server_module.MAX_BODY + 1) + b"}"
    status, _, answer = _raw(served, "POST", "/api/export", {**h, "Content-Type": "application/json"}, big)
    assert status == 413 and json.loads(answer)["status"] == 413
    status, _, _ = _raw(served, "POST", "/api/export", {**h, "Content-Type": "text/plain"}, b'{"format": "jsonl"}')
    assert status == 415
    status, _, answer = _raw(served, "POST", "/api/records", {**h, "Content-Type": "application/json"}, b"{}")
    assert status == 405
    assert served.server.export_job is None


def test_a_huge_filter_is_refused_at_once(served):
    t0 = time.monotonic()
    huge = " or ".join(f"f{i} == 1" for i in range(2000))  # ~20 KB of names
    code, _, body = served.get("/api/records?count=5&filter=" + urllib.parse.quote(huge))
    answer = json.loads(body)
    assert code == 400 and "at most" in answer["error"] and answer["status"] == 400
    nested = "(" * 600 + "label" + ")" * 600
    code, _, body = served.get("/api/records?count=5&filter=" + urllib.parse.quote(nested))
    assert code == 400 and "Traceback" not in body.decode()
    assert time.monotonic() - t0 < 5


def test_a_filter_that_fails_while_running_is_a_400_not_a_500(served):
    for expression in ("label == 'x'", "min(label) == 'a'", "x + 'a' > 1"):
        answer = served.json("/api/records?count=5&filter=" + urllib.parse.quote(expression), 400)
        assert answer["status"] == 400 and "the filter" in answer["error"] and "trace" not in answer


def test_a_filtered_page_keeps_to_its_time_and_scan_budget(served, monkeypatch):
    from tfrx.viewer._query import Filter

    slow = Filter.matches

    def sleepy(self, records, **kwargs):
        time.sleep(0.01)
        return slow(self, records, **kwargs)

    monkeypatch.setattr(Filter, "matches", sleepy)
    monkeypatch.setattr(server_module, "SCAN_SECONDS", 0.2)
    t0 = time.monotonic()
    page = served.json("/api/records?count=50&filter=" + urllib.parse.quote("label == 99"))
    assert time.monotonic() - t0 < 2.0
    assert page["records"] == [] and 0 < page["scanned"] < 3000 and page["next"] == page["scanned"]
    assert page["complete"] is False
    monkeypatch.setattr(server_module, "SCAN_SECONDS", 30)
    monkeypatch.setattr(server_module, "MAX_SCAN_RECORDS", 100)
    page = served.json("/api/records?start=10&count=50&filter=" + urllib.parse.quote("label == 99"))
    assert page["scanned"] == 100 and page["next"] == 110


def test_errors_are_json_without_a_traceback(served, monkeypatch):
    def broken():
        raise RuntimeError("a bug in the server")

    monkeypatch.setattr(served.server, "info", broken)
    code, kind, body = served.get("/api/info")
    answer = json.loads(body)
    assert code == 500 and kind == "application/json" and set(answer) == {"error", "status"}
    assert answer == {"error": "RuntimeError: a bug in the server", "status": 500}
    # The standard library's own refusals are JSON too.
    status, _, body = _raw(served, "GET", "/" + "a" * 70000, {"Host": _host(served)})
    assert status == 414 and json.loads(body)["status"] == 414


def test_one_export_at_a_time_capped_and_cancellable(numbers, monkeypatch):
    s = _Served(str(numbers), export_max_bytes=2000)
    try:
        code, state = s.post("/api/export", {"format": "tfrecord"})
        assert code == 202
        deadline = time.monotonic() + 30
        while state["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.02)
            state = s.json("/api/export")
        assert state["status"] == "failed" and "2,000 bytes" in state["error"] and state["bytes"] <= 2000
        assert _exports_written(s) == []  # the part written is removed
        assert s.json("/api/export/file", 404)["status"] == 404

        release = threading.Event()
        original = server_module.ExportJob._write

        def held(self):
            release.wait(30)
            original(self)

        monkeypatch.setattr(server_module.ExportJob, "_write", held)
        code, state = s.post("/api/export", {"format": "tfrecord", "limit": 3})
        assert code == 202 and state["status"] == "running"
        code, second = s.post("/api/export", {"format": "jsonl"})
        assert code == 409 and "an export is running" in second["error"]
        code, state = s.post("/api/export/cancel")
        assert code == 200
        release.set()
        deadline = time.monotonic() + 30
        while s.json("/api/export")["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert s.json("/api/export")["status"] == "cancelled" and _exports_written(s) == []
        code, _, body = s.export("tfrecord", limit=3)  # after a cancel, the next export runs
        assert code == 200 and len(list(tfrx.read_records(__import__("io").BytesIO(body)))) == 3
    finally:
        s.close()
    assert not os.path.exists(s.server._export_dir)  # closing the server removes its exports


def test_the_command_prints_a_tokened_address_and_opens_tfds_directories(tmp_path):
    from tfrx import tfds

    tfds.write(
        tmp_path / "toy" / "1.0.0",
        features={"label": tfds.ClassLabel(names=["a", "b"]), "x": np.int64},
        splits={"train": [{"label": i % 2, "x": i} for i in range(7)]},
        shard_size=3,
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, tfrx.cli; sys.exit(tfrx.cli.main())",
            "view",
            str(tmp_path / "toy"),
            "--no-browser",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        line = proc.stdout.readline()
        assert "file(s) at http://127.0.0.1:" in line and "?token=" in line, line + proc.stderr.read()
        url = line.split(" at ")[1].split()[0]
        parsed = urllib.parse.urlparse(url)
        token = urllib.parse.parse_qs(parsed.query)["token"][0]
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        info = {"status": "indexing"}
        deadline = time.monotonic() + 60
        while info.get("status") == "indexing" and time.monotonic() < deadline:
            conn.request("GET", "/api/info", headers={"X-Tfrx-Token": token})
            info = json.loads(conn.getresponse().read())
        assert info["total"] == 7 and len(info["shards"]) == 3 and not any(s["error"] for s in info["shards"])
        assert info["labels"] == {"label": ["a", "b"]}
        conn.request("GET", "/api/info")
        assert conn.getresponse().status == 401
        conn.close()
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_list_of_paths_with_a_tfds_directory_opens_its_shards(tmp_path):
    from tfrx import tfds

    tfds.write(
        tmp_path / "toy" / "1.0.0",
        features={"x": np.int64},
        splits={"train": [{"x": i} for i in range(5)]},
        shard_size=2,
    )
    extra = tmp_path / "extra.tfrecord"
    with tfrx.TFRecordWriter(str(extra)) as w:
        w.write(tfrx.make_example({"x": 99}).SerializeToString())
    src = ViewSource([str(tmp_path / "toy"), str(extra)], index_cache_dir=str(tmp_path / "cache"))
    assert src.total() == 6 and [len(s.path) > 0 for s in src.shards] == [True] * 4
    assert [tfrx.decode_example(r[3])["x"][0] for r in src.read(0, 6)] == [0, 1, 2, 3, 4, 99]
    src.close()


def test_the_schema_sample_does_not_stream_through_a_whole_compressed_file(tmp_path, monkeypatch):
    # A compressed file gets a checkpoint index (random reads cost one interval of inflate); one whose stream
    # is cut short cannot be indexed and is streamed: the sample must not read through all of it.
    path = tmp_path / "big.tfrecord.gz"
    with tfrx.TFRecordWriter(str(path), "GZIP") as w:
        w.write_many(tfrx.make_example({"label": i % 5}).SerializeToString() for i in range(3000))
    path.write_bytes(path.read_bytes()[:-64])
    monkeypatch.setattr(server_module, "SAMPLE_STREAMED", 100)
    asked = []
    original = ViewSource.read_numbers

    def spy(self, numbers):
        asked.extend(int(n) for n in numbers)
        return original(self, numbers)

    monkeypatch.setattr(ViewSource, "read_numbers", spy)
    s = _Served(str(path))
    try:
        schema = s.server.schema()
        assert schema["sampled"] and schema["kinds"] == {"label": "int64"}
        assert asked and max(asked) < 100  # not 3000 records deep: the file is not streamed whole
    finally:
        s.close()


def test_a_filter_waits_for_the_schema_sample_only_its_time_budget(served, monkeypatch):
    monkeypatch.setattr(server_module, "SCAN_SECONDS", 0.3)
    # A sample being read, slowly, by another request. Taken first: the sample the page's /api/info started
    # in the background may still be running, and would otherwise put its result back after the reset.
    served.server._sample_lock.acquire()
    served.server._schema = None
    try:
        t0 = time.monotonic()
        page = served.json("/api/records?count=3&filter=" + urllib.parse.quote("label == 2"))
        assert time.monotonic() - t0 < 3 and [r["n"] for r in page["records"]] == [2, 9, 16]
        answer = served.json("/api/records?count=3&filter=" + urllib.parse.quote("lable == 2"), 400)
        assert "still being read" in answer["error"]
    finally:
        served.server._sample_lock.release()


def test_a_refused_post_does_not_poison_the_connection(served):
    """The body of a refused POST is never read as the next request on a kept-alive connection."""
    host, port = served.server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        smuggled = b"GET /api/export/file HTTP/1.1\r\nHost: evil.example\r\n\r\n"
        conn.request("POST", "/api/export", body=smuggled, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 401 and r.getheader("Connection") == "close"
        r.read()
    finally:
        conn.close()


def test_the_overview_starts_only_with_the_token_from_this_origin_and_is_bounded(served):
    h = {"Host": _host(served)}
    token = {"X-Tfrx-Token": served.server.token}
    body = json.dumps({"records": 500}).encode()
    json_body = {"Content-Type": "application/json"}
    # A GET (an <img src> on another site, a prefetch) only reads the state, even with the token.
    status, _, answer = _raw(served, "GET", "/api/overview?records=500", {**h, **token})
    assert status == 200 and json.loads(answer)["status"] == "idle"
    # POSTs without the token header, with a wrong one, from another origin or site, or a foreign Host.
    refusals = [
        ({**h, **json_body}, 401),
        ({**h, **json_body, "X-Tfrx-Token": "guess"}, 403),
        ({**h, **token, **json_body, "Origin": "http://evil.example"}, 403),
        ({**h, **token, **json_body, "Sec-Fetch-Site": "cross-site"}, 403),
        ({"Host": "evil.example:%d" % served.server.server_address[1], **token, **json_body}, 403),
        ({**h, **token, "Content-Type": "text/plain"}, 415),
    ]
    for headers, code in refusals:
        status, _, answer = _raw(served, "POST", f"/api/overview?token={served.server.token}", headers, body)
        assert status == code and json.loads(answer)["status"] == code, headers
    assert not served.server._overviews  # nothing was started
    # The records read are bounded: past the cap is a 400, as JSON.
    big = json.dumps({"records": server_module.MAX_STATS_RECORDS + 1}).encode()
    status, _, answer = _raw(served, "POST", "/api/overview", {**h, **token, **json_body}, big)
    assert status == 400 and "records" in json.loads(answer)["error"] and not served.server._overviews
    # The page's own POST starts it; a second size cancels the first if it still runs.
    status, _, answer = _raw(
        served, "POST", "/api/overview", {**h, **token, **json_body, "Origin": f"http://{_host(served)}"}, body
    )
    assert status == 200 and json.loads(answer)["status"] in ("running", "done")
    deadline = time.monotonic() + 60
    while served.json("/api/overview?records=500")["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    done = served.json("/api/overview?records=500")
    assert done["status"] == "done" and done["result"]["datasets"][0]["records_read"] == 500
