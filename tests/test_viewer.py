"""tfrx view: the viewer's API on loopback, its cells and filters, the notebook view, the corpus."""

from __future__ import annotations

import io
import json
import urllib.parse
from collections import Counter
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.viewer._cells import record_view
from tfrx.viewer._query import Filter, FilterError
from tfrx.viewer._server import ViewerServer
from tfrx.viewer._source import ViewSource

PIL = pytest.importorskip("PIL.Image")


def _png(color, size=(96, 64)) -> bytes:
    """A small picture: a gradient in ``color`` with a lighter square."""
    w, h = size
    y, x = np.mgrid[0:h, 0:w]
    image = np.empty((h, w, 3), np.uint8)
    for c in range(3):
        image[..., c] = (color[c] * (0.4 + 0.6 * x / w)).astype(np.uint8)
    image[h // 4 : h // 2, w // 3 : w // 2] = 230
    out = io.BytesIO()
    PIL.fromarray(image).save(out, format="PNG")
    return out.getvalue()


def _mask(size=(96, 64)) -> bytes:
    w, h = size
    out = io.BytesIO()
    PIL.fromarray(np.where(np.mgrid[0:h, 0:w][1] < w // 2, 255, 0).astype(np.uint8)).save(out, format="PNG")
    return out.getvalue()


def _detection_records(n=30, masks=False):
    """Object Detection API layout: an image, its boxes and their class names (and masks, one a box)."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        k = i % 4
        xmin = rng.uniform(0, 0.5, k).astype(np.float32)
        ymin = rng.uniform(0, 0.5, k).astype(np.float32)
        rows.append(
            tfrx.make_example(
                {
                    "image/encoded": _png((i * 8 % 256, 40, 90)),
                    "image/format": b"png",
                    "image/object/bbox/xmin": xmin,
                    "image/object/bbox/ymin": ymin,
                    "image/object/bbox/xmax": xmin + 0.3,
                    "image/object/bbox/ymax": ymin + 0.3,
                    "image/object/class/text": [b"cat" if j % 2 else b"dog" for j in range(k)],
                    "label": i % 5,
                    "score": rng.normal(size=20).astype(np.float32),
                    **({"image/object/mask": [_mask() for _ in range(k)]} if masks else {}),
                },
                kinds={"image/object/class/text": "bytes", "image/object/mask": "bytes"},
            ).SerializeToString()
        )
    return rows


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("view")
    det = _detection_records()
    with tfrx.TFRecordWriter(str(d / "det-00000-of-00002.tfrecord")) as w:
        w.write_many(det[:20])
    with tfrx.TFRecordWriter(str(d / "det-00001-of-00002.tfrecord"), "GZIP") as w:
        w.write_many(det[20:])
    seq = [
        tfrx.make_sequence_example({"id": i}, {"tokens": [[j, j + 1] for j in range(i + 1)]}).SerializeToString()
        for i in range(5)
    ]
    with tfrx.TFRecordWriter(str(d / "seq.tfrecord")) as w:
        w.write_many(seq)
    raw = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    with tfrx.TFRecordWriter(str(d / "raw.tfrecord")) as w:
        w.write(
            tfrx.make_example({"image_raw": raw.tobytes(), "height": 4, "width": 5, "depth": 3}).SerializeToString()
        )
    # A damaged file: the second of three records loses a payload byte.
    good = [tfrx.make_example({"i": i}).SerializeToString() for i in range(3)]
    blob = io.BytesIO()
    with tfrx.TFRecordWriter(blob) as w:
        w.write_many(good)
    data = bytearray(blob.getvalue())
    second = 16 + len(good[0])
    del data[second + 12 + 2]
    (d / "damaged.tfrecord").write_bytes(bytes(data))
    return {"dir": d, "det": det, "seq": seq, "raw": raw}


class _Served:
    """A viewer on loopback, asked as its page asks: with this launch's token."""

    def __init__(self, paths, **kwargs):
        # Indexes into a temporary cache: nothing is written beside the corpus's files.
        self._cache = tempfile.TemporaryDirectory(prefix="tfrx-view-")  # removed by close()
        self.server = ViewerServer(ViewSource(paths, index_cache_dir=self._cache.name), **kwargs)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while self.json("/api/info").get("status") == "indexing" and time.monotonic() < deadline:
            time.sleep(0.02)

    def request(self, path, *, method="GET", body=None, headers=None, token=True):
        request = urllib.request.Request(self.server.base_url + path.lstrip("/"), data=body, method=method)
        if token:
            request.add_header("X-Tfrx-Token", self.server.token)
        for k, v in (headers or {}).items():
            request.add_header(k, v)
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read()

    def get(self, path, **kwargs):
        return self.request(path, **kwargs)

    def post(self, path, params=None, status=None, **kwargs):
        body = json.dumps(params or {}).encode()
        headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
        code, kind, raw = self.request(path, method="POST", body=body, headers=headers, **kwargs)
        if status is not None:
            assert code == status, raw[:500]
        return code, json.loads(raw) if kind == "application/json" else raw

    def json(self, path, status=200):
        code, kind, body = self.get(path)
        assert code == status, body[:500]
        assert kind == "application/json"
        return json.loads(body)

    def poll(self, path):
        if path.startswith("/api/stats"):
            self.post(path, status=200)  # statistics start with a POST, then are polled
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = self.json(path)
            if state["status"] in ("done", "failed"):
                return state
            time.sleep(0.05)
        raise AssertionError(f"{path} did not finish")

    def export(self, fmt="tfrecord", filter=None, limit=None):
        """Starts an export as the page does (POST), waits for it, and returns (status code, type, file bytes)."""
        params = {"format": fmt, "filter": filter, "limit": limit}
        code, state = self.post("/api/export", {k: v for k, v in params.items() if v is not None})
        if code != 202:
            return code, "application/json", json.dumps(state).encode()
        deadline = time.monotonic() + 60
        while state["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.02)
            state = self.json("/api/export")
        assert state["status"] == "done", state
        return self.get("/api/export/file")

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self._cache.cleanup()


@pytest.fixture()
def det(files):
    served = _Served(str(files["dir"] / "det-*-of-*.tfrecord"))
    yield served
    served.close()


def test_info_pages_and_jumps_across_plain_and_gzip_shards(det, files):
    info = det.json("/api/info")
    assert info["total"] == 30 and info["payload"] == ["Example"]
    assert [s["compression"] for s in info["shards"]] == ["none", "GZIP"]
    assert [s["count"] for s in info["shards"]] == [20, 10]
    assert "tfrx.FixedLenFeature" in info["schema"] and "'image/encoded'" in info["schema"]
    page = det.json("/api/records?start=15&count=10")
    assert [r["n"] for r in page["records"]] == list(range(15, 25)) and page["next"] == 25
    assert [r["i"] for r in page["records"]] == [15, 16, 17, 18, 19, 0, 1, 2, 3, 4]  # into the GZIP shard
    for r in page["records"]:
        expected = tfrx.decode_example(files["det"][r["n"]])
        assert r["features"]["label"] == {"t": "num", "kind": "int64", "v": [int(expected["label"][0])]}
        assert r["features"]["score"]["t"] == "numlist" and r["features"]["score"]["n"] == 20
        assert len(r["boxes"]) == r["n"] % 4
        assert [b.get("label") for b in r["boxes"]] == [("cat" if j % 2 else "dog") for j in range(r["n"] % 4)]
        assert r["features"]["image/encoded"]["items"][0]["t"] == "image"
    one = det.json("/api/record?n=29")
    assert one["n"] == 29 and one["i"] == 9
    assert det.json("/api/records?start=30&count=5")["records"] == []


def test_media_serves_the_image_bytes(det, files):
    code, kind, body = det.get("/api/media?n=7&feature=image/encoded&j=0")
    assert code == 200 and kind == "image/png"
    assert body == tfrx.decode_example(files["det"][7])["image/encoded"][0]
    assert det.json("/api/media?n=7&feature=nope&j=0", 404)["error"].startswith("record 7 has no bytes value")
    assert "past the last record" in det.json("/api/media?n=99&feature=image/encoded&j=0", 404)["error"]


def test_raw_arrays_with_shape_features_show_as_png(files):
    served = _Served(str(files["dir"] / "raw.tfrecord"))
    try:
        cell = served.json("/api/record?n=0")["features"]["image_raw"]["items"][0]
        assert cell == {"t": "raw_image", "shape": [4, 5, 3], "bytes": 60, "j": 0}
        code, kind, body = served.get("/api/media?n=0&feature=image_raw&j=0")
        assert code == 200 and kind == "image/png"
        np.testing.assert_array_equal(np.asarray(PIL.open(io.BytesIO(body))), files["raw"])
    finally:
        served.close()


def test_filter_matches_what_python_computes(det, files):
    expected = [
        i
        for i, r in enumerate(files["det"])
        if (lambda f: int(f["label"][0]) in (1, 3) and len(f["image/object/bbox/xmin"]) > 1)(tfrx.decode_example(r))
    ]
    page = det.json(
        "/api/records?start=0&count=200&filter="
        + urllib.parse.quote("label in [1, 3] and len(image/object/bbox/xmin) > 1")
    )
    assert [r["n"] for r in page["records"]] == expected and page["scanned"] == 30
    text = det.json("/api/records?count=200&filter=" + urllib.parse.quote('"cat" in image/object/class/text'))
    assert [r["n"] for r in text["records"]] == [i for i in range(30) if i % 4 >= 2]
    bad = det.json("/api/records?filter=" + urllib.parse.quote("__import__('os')"), 400)
    assert "calls something other than" in bad["error"]


def test_export_writes_the_selection(det, files):
    code, _, body = det.export("tfrecord", filter="label == 2")
    assert code == 200
    got = list(tfrx.read_records(io.BytesIO(body)))
    assert got == [r for i, r in enumerate(files["det"]) if i % 5 == 2]
    state = det.json("/api/export")
    assert state["status"] == "done" and state["written"] == len(got) and state["bytes"] == len(body)
    assert state["scanned"] == 30 and state["total"] == 30
    code, kind, body = det.export("jsonl", limit=3)
    lines = body.decode().splitlines()
    assert kind == "application/x-ndjson" and len(lines) == 3 and json.loads(lines[1])["label"] == [1]
    code, state = det.post("/api/export", {"format": "xml"})
    assert code == 400 and state["error"].startswith("format must be") and state["status"] == 400


def test_bad_parameters_answer_with_errors_and_the_server_stays_up(det):
    assert "whole number" in det.json("/api/records?start=abc", 400)["error"]
    assert det.json("/api/records?count=100000", 400)["error"].startswith("parameter 'count' must be in")
    assert det.json("/api/record", 400)["error"] == "missing parameter 'n'"
    assert det.json("/api/nothing", 404)["error"].startswith("no such page")
    assert det.get("/static/../../etc/passwd")[0] == 404
    assert det.json("/api/info")["total"] == 30


def test_stats_and_health_run_in_the_background(det):
    stats = det.poll("/api/stats")
    assert stats["status"] == "done", stats
    by_name = {f["name"]: f for f in stats["result"]["features"]}
    assert by_name["label"]["present"] == 30 and by_name["label"]["values"]["max"] == 4
    assert stats["result"]["records"] == 30
    health = det.poll("/api/health")
    assert health["result"]["damaged"] == 0 and [f["records"] for f in health["result"]["files"]] == [20, 10]


def test_damaged_file_shows_every_intact_record_and_where_it_is_damaged(files):
    served = _Served(str(files["dir"] / "damaged.tfrecord"))
    try:
        info = served.json("/api/info")
        assert info["shards"][0]["error"] and "damaged" in info["shards"][0]["error"]
        shown = [r["features"]["i"]["v"][0] for r in served.json("/api/records?count=10")["records"]]
        assert 0 in shown and 1 not in shown  # the record that lost a byte is not shown as data
        health = served.poll("/api/health")["result"]
        assert health["damaged"] == 1
        error = health["files"][0]["errors"][0]
        assert error["offset"] is not None and error["path"].endswith("damaged.tfrecord")
        # Numbered as the Records tab numbers the intact records: the damage lies between records 0 and 1.
        page = served.json("/api/records?count=10")
        assert [(r["n"], r["features"]["i"]["v"][0]) for r in page["records"]] == [(0, 0), (1, 2)]
        assert error["before"] == 1 and [d["before"] for d in page["damage"]] == [1]
        assert 0 < error["start"] < error["end"] and page["damage"][0]["end"] == error["end"]
        # Listed once, and the same under Files as under Health.
        assert error["message"] in info["shards"][0]["error"] and len(health["files"][0]["errors"]) == 1
    finally:
        served.close()


def test_sequence_examples_show_their_steps(files):
    served = _Served(str(files["dir"] / "seq.tfrecord"))
    try:
        r = served.json("/api/record?n=3")
        assert r["kind"] == "SequenceExample" and r["features"]["id"]["v"] == [3]
        steps = r["feature_lists"]["tokens"]
        assert steps["steps"] == 4 and [c["v"] for c in steps["cells"]] == [[j, j + 1] for j in range(4)]
        assert "sequence_features" in served.json("/api/info")["schema"]
    finally:
        served.close()


def test_events_files_show_steps_tags_and_values(corpus_dir):
    """Every corpus events file: each record's step and tags as tfrx.events.read decodes them."""
    for events in sorted(corpus_dir.glob("*tfevents*")):
        expected = tfrx.events.read(str(events))
        served = _Served(str(events))
        try:
            info = served.json("/api/info")
            assert info["payload"] == ["Event"] and info["schema"] is None, events.name
            page = served.json(f"/api/records?count={MAX}")
            got = {}
            for r in page["records"]:
                assert r["kind"] == "Event"
                step = r["features"]["step"]["v"][0]
                for tag, cell in r["features"].items():
                    if cell["t"] == "num" and tag != "step":
                        got[(tag, step)] = cell["v"][0]
            want = {(s.tag, s.step): s.value for s in expected.scalars if s.step is not None}
            shown = {k: v for k, v in want.items() if k in got}
            assert len(shown) >= min(len(want), 1), events.name
            for key, value in shown.items():
                assert got[key] == pytest.approx(value, rel=1e-6), (events.name, key)
            assert "wall_time" in page["records"][0]["features"]
            assert "no features to filter on" in served.json("/api/records?filter=step%20%3E%201", 400)["error"]
            assert served.poll("/api/stats")["status"] == "failed"
        finally:
            served.close()


MAX = 200


def test_every_corpus_file_opens(corpus_dir, tmp_path):
    for path in sorted(p for p in corpus_dir.iterdir() if p.name != "SOURCES.tsv"):
        src = ViewSource(str(path), index_cache_dir=str(tmp_path))  # nothing written beside the corpus
        total = src.total()
        rows = src.read(0, 5)
        assert len(rows) == min(5, total), path.name
        for _, _, _, rec in rows:
            view = record_view(rec)
            assert view["kind"] in ("Example", "SequenceExample", "other")
            json.dumps(view, allow_nan=False)
        if not src.shards[0].error:
            with tfrx.RecordReader(str(path)) as reader:
                assert total == sum(len(b) for b in reader.iter_batches()), path.name
        src.close()


def test_missing_file_and_cli_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        ViewSource(str(tmp_path / "nothing-*.tfrecord"))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tfrx.cli; sys.exit(tfrx.cli.main())",
            "view",
            str(tmp_path / "missing.tfrecord"),
            "--no-browser",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "missing.tfrecord" in proc.stderr


def test_filter_expressions():
    f = Filter("len(a/b) > 1 and `c d` == 'x'", ["a/b", "c d"])
    assert f({"a/b": np.array([1, 2]), "c d": [b"x"]})
    assert not f({"a/b": np.array([1]), "c d": [b"x"]})
    assert not Filter("missing > 2")({})  # None > 2 does not match, and does not raise
    for bad in ["x.__class__", "open('f')", "lambda: 1", "label +"]:
        with pytest.raises(FilterError):
            Filter(bad, ["label", "x"])


def test_notebook_view_renders_a_static_page(files):
    v = tfrx.view(str(files["dir"] / "det-00000-of-00002.tfrecord"), count=3)
    page = v._repr_html_()
    assert page.count("<tr>") == 4 and "data:image/jpeg;base64," in page and "20 records" in page
    ds_view = tfrx.view(tfrx.TFRecordDataset(str(files["dir"] / "seq.tfrecord")), count=2)
    assert "<table>" in ds_view._repr_html_()


# ---------------------------------------------------------------------- filters on the native parser
def _mixed_records(n=300, seed=3):
    """Examples with one int, a float list, bytes lists, an int list and a feature most records lack."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        feats = {
            "label": int(rng.integers(0, 6)),
            "score": rng.normal(size=int(rng.integers(1, 5))).astype(np.float32),
            "text": [b"cat" if rng.random() < 0.5 else b"dog" for _ in range(int(rng.integers(0, 3)))],
            "ids": rng.integers(0, 3, int(rng.integers(0, 4))),
        }
        if i % 7 == 0:
            feats["rare"] = 1
        out.append(tfrx.make_example(feats, kinds={"text": "bytes", "ids": "int64"}).SerializeToString())
    return out


def _one(v):
    return v[0] if len(v) == 1 else None


# (expression, the same written in Python over decode_example's dict)
_REFERENCE = [
    ("label == 3", lambda f: _one(f["label"]) == 3),
    ("label != 3", lambda f: _one(f["label"]) != 3),
    ("label in [1, 3] and not score[0] > 0", lambda f: _one(f["label"]) in (1, 3) and not f["score"][0] > 0),
    ('"cat" in text', lambda f: b"cat" in list(f.get("text", []))),
    ("text == 'dog'", lambda f: list(f.get("text", [])) == [b"dog"]),
    ("max(score) >= 1 or min(score) < -1.5", lambda f: f["score"].max() >= 1 or f["score"].min() < -1.5),
    ("sum(ids) % 2 == 0", lambda f: int(np.sum(f.get("ids", []))) % 2 == 0),
    ("score[-1] > 0", lambda f: f["score"][-1] > 0),
    ("score[2] < 0", lambda f: len(f["score"]) > 2 and f["score"][2] < 0),
    ("abs(score) < 0.5", lambda f: len(f["score"]) == 1 and abs(f["score"][0]) < 0.5),
    ("any(ids) and not all(ids)", lambda f: len(f.get("ids", [])) > 0 and any(f["ids"]) and not all(f["ids"])),
    ("len(rare) == 0", lambda f: "rare" not in f),
    ("rare", lambda f: "rare" in f),
    ("label * 2 + 1 >= 7 and len(text) > 1", lambda f: _one(f["label"]) * 2 + 1 >= 7 and len(f.get("text", [])) > 1),
    ("label / 0 > 1", lambda f: False),
    ("2 < label <= 4", lambda f: 2 < _one(f["label"]) <= 4),
    ("label not in [0, 5]", lambda f: _one(f["label"]) not in (0, 5)),
    ("len(ids) == len(text)", lambda f: len(f.get("ids", [])) == len(f.get("text", []))),
    ("min(ids) == 2", lambda f: len(f.get("ids", [])) > 0 and min(f["ids"]) == 2),
]


@pytest.mark.parametrize("expression,reference", _REFERENCE, ids=[e for e, _ in _REFERENCE])
def test_filter_on_parsed_batches_matches_python(expression, reference):
    records = _mixed_records()
    kinds = {"label": "int64", "score": "float", "text": "bytes", "ids": "int64", "rare": "int64"}
    f = Filter(expression, kinds)
    got = f.matches(tfrx.RecordBatch.from_records(records))
    expected = np.array([bool(reference(tfrx.decode_example(r))) for r in records])
    np.testing.assert_array_equal(got, expected)
    assert 0 < expected.sum() < len(records) or expression == "label / 0 > 1"
    # The same one record at a time, from decoded features.
    assert [f(tfrx.decode_example(r)) for r in records[:40]] == expected[:40].tolist()


def test_filter_parses_only_the_features_it_names(monkeypatch):
    from tfrx.parsing import ExampleParser

    seen = []
    original = ExampleParser.__init__

    def spy(self, features, **kwargs):
        seen.append(sorted(features))
        original(self, features, **kwargs)

    monkeypatch.setattr(ExampleParser, "__init__", spy)
    f = Filter("label > 2 and len(text) == 1", {"label": "int64", "score": "float", "text": "bytes"})
    f.matches(_mixed_records(20))
    assert seen == [["label", "text"]]


def test_filter_batch_with_records_the_parser_rejects_is_read_record_by_record():
    records = _mixed_records(20)
    bad = [b"\x0a\x05garbage", tfrx.make_example({"label": 2.5}).SerializeToString()]  # not an Example; a float label
    batch = records[:10] + bad + records[10:]
    got = Filter("label >= 3", {"label": "int64"}).matches(batch)
    expected = [_one(tfrx.decode_example(r)["label"]) >= 3 for r in records]
    assert got.tolist() == expected[:10] + [False, False] + expected[10:]


def test_filter_errors_say_what_is_wrong():
    kinds = {"label": "int64", "image/object/bbox/xmin": "float", "text": "bytes"}
    cases = {
        "lable == 3": "names 'lable', which the records do not have; did you mean 'label'",
        "label == 'x'": "between bytes and a number",
        "text > 3": "write text in quotes",
        "min(text) == 1": "of the bytes feature 'text'",
        "label.real": "Attribute",
        "__import__('os')": "calls something other than",
        "label[label]": "indexes with something other than a whole number",
        "label in [label]": "list of something other than constants",
        "label == None": "len(feature) == 0",
        "": "empty",
        "label ==": "cannot read the filter",
        "[1, 2]": "a list is not a condition",
    }
    for expression, message in cases.items():
        with pytest.raises(FilterError) as e:
            Filter(expression, kinds).matches(_mixed_records(3))
        assert message in str(e.value), (expression, str(e.value))
    # Names with slashes are recognised as they are, the longest first.
    assert Filter("len(image/object/bbox/xmin) > 2", kinds).names == ["image/object/bbox/xmin"]


def test_filter_on_sequence_examples_reads_context_and_feature_lists():
    records = [
        tfrx.make_sequence_example({"id": i}, {"tokens": [[j, j + 1] for j in range(i)]}).SerializeToString()
        for i in range(8)
    ]
    f = Filter("len(tokens) > 3 and id != 6 and 5 in tokens", {"id": "int64"}, sequence_kinds={"tokens": "int64"})
    assert np.flatnonzero(f.matches(records, sequence=True)).tolist() == [5, 7]


def test_filtered_pages_scan_across_shards_and_report_progress(det, files):
    page = det.json("/api/records?start=5&count=3&filter=" + urllib.parse.quote("label == 4"))
    expected = [i for i in range(5, 30) if i % 5 == 4]
    assert [r["n"] for r in page["records"]] == expected[:3]
    assert page["next"] == expected[2] + 1 and page["scanned"] == expected[2] + 1 - 5
    rest = det.json(f"/api/records?start={page['next']}&count=50&filter=" + urllib.parse.quote("label == 4"))
    assert [r["n"] for r in rest["records"]] == expected[3:] and rest["next"] == 30
    assert all(r["shard"].endswith(".tfrecord") and r["features"]["label"]["v"] == [4] for r in rest["records"])
    bad = det.json("/api/records?filter=" + urllib.parse.quote("lable == 4"), 400)
    assert "did you mean 'label'" in bad["error"]


# ---------------------------------------------------------------------- statistics
def test_stats_over_every_record_agree_with_tools_stats(files):
    from tfrx.tools._stats import compute_stats

    records = _mixed_records(500)
    path = files["dir"] / "mixed.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many(records)
    served = _Served(str(path))
    try:
        state = served.poll("/api/stats?mode=all")
        assert state["status"] == "done" and state["target"] == 500, state
        got = {f["name"]: f for f in state["result"]["features"]}
        expected = {f["name"]: f for f in compute_stats(records).to_dict(top_k=10)["features"]}
        assert state["result"]["records"] == 500 and state["result"]["mode"] == "all"
        for name, want in expected.items():
            have = got[name]
            assert have["kind"] == want["kind"], name
            assert have["present"] == want["present"] - (want["num_values"]["min"] == 0) * sum(
                1 for r in records if name in tfrx.decode_example(r) and len(tfrx.decode_example(r)[name]) == 0
            ), name
            if "values" in want:
                assert have["values"]["min"] == pytest.approx(want["values"]["min"])
                assert have["values"]["max"] == pytest.approx(want["values"]["max"])
                assert have["values"]["mean"] == pytest.approx(want["values"]["mean"])
                hist = have["values"]["histogram"]
                assert sum(hist["counts"]) == sum(len(tfrx.decode_example(r).get(name, [])) for r in records)
            if name == "text":
                assert dict(map(tuple, have["top"])) == dict(map(tuple, want["top"]))
        labels = Counter(int(tfrx.decode_example(r)["label"][0]) for r in records)
        assert dict(map(tuple, got["label"]["top"])) == dict(labels)
        lengths = got["score"]["num_values"]
        assert (lengths["min"], lengths["max"]) == (1, 4) and sum(lengths["histogram"]["counts"]) == 500
    finally:
        served.close()


def test_stats_of_a_random_sample_pick_records_by_index(files):
    path = files["dir"] / "numbered.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many(tfrx.make_example({"i": i}).SerializeToString() for i in range(5000))
    served = _Served(str(path))
    try:
        a = served.poll("/api/stats?mode=sample&records=200&seed=1")["result"]
        b = served.poll("/api/stats?mode=sample&records=200&seed=2")["result"]
        assert a["records"] == b["records"] == 200 and a["mode"] == "sample"
        ia, ib = a["features"][0]["values"], b["features"][0]["values"]
        # Drawn from the whole file, not its head: the sample's maximum lies far past record 200.
        assert ia["max"] > 4000 and ia["min"] < 1000 and (ia["min"], ia["max"]) != (ib["min"], ib["max"])
        src = served.server.source
        picks = src.sample_numbers(200, 1)
        assert len(set(picks.tolist())) == 200 and picks.tolist() == sorted(picks.tolist())
        assert ia["mean"] == pytest.approx(picks.mean())
        assert served.json("/api/stats?mode=everything", 400)["error"].startswith("mode must be")
    finally:
        served.close()


def test_stats_of_sequence_examples_count_steps(files):
    served = _Served(str(files["dir"] / "seq.tfrecord"))
    try:
        result = served.poll("/api/stats?mode=all")["result"]
        tokens = result["feature_lists"][0]
        assert tokens["name"] == "tokens" and tokens["steps"]["min"] == 1 and tokens["steps"]["max"] == 5
        assert tokens["values"]["min"] == 0 and tokens["values"]["max"] == 5
        assert result["features"][0]["name"] == "id" and result["features"][0]["present"] == 5
    finally:
        served.close()


# ---------------------------------------------------------------------- export
def test_export_to_parquet_and_jsonl_goes_through_the_converters(det, files, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    from tfrx.tools.convert import tfrecord_to_jsonl, tfrecord_to_parquet

    chosen = [r for i, r in enumerate(files["det"]) if i % 5 == 1]
    with tfrx.TFRecordWriter(str(tmp_path / "chosen.tfrecord")) as w:
        w.write_many(chosen)
    tfrecord_to_parquet(str(tmp_path / "chosen.tfrecord"), tmp_path / "want.parquet", progress=False)
    tfrecord_to_jsonl(str(tmp_path / "chosen.tfrecord"), tmp_path / "want.jsonl", progress=False)
    code, kind, body = det.export("parquet", filter="label == 1")
    assert code == 200 and kind == "application/vnd.apache.parquet"
    got = pq.read_table(io.BytesIO(body))
    assert got.num_rows == len(chosen) and got.equals(pq.read_table(tmp_path / "want.parquet"))
    code, kind, body = det.export("jsonl", filter="label == 1")
    assert body == (tmp_path / "want.jsonl").read_bytes()
    code, state = det.post("/api/export", {"format": "parquet", "filter": "label ==="})
    assert code == 400 and state["error"]


# ---------------------------------------------------------------------- bad input, endpoint by endpoint
_ENDPOINTS = [
    "/api/info",
    "/api/records?count=5",
    "/api/records?count=5&filter=len(x)>0",
    "/api/record?n=0",
    "/api/random?count=3",
    "/api/media?n=0&feature=x&j=0",
    "/api/stats",
    "/api/health",
    "/api/export?format=tfrecord",
    "/api/export?format=jsonl",
    "/api/export?format=parquet",
]


def _answers(served):
    """Each endpoint's status and body: JSON with an error for 4xx/5xx, never a dropped connection."""
    out = {}
    for path in _ENDPOINTS:
        if path.startswith("/api/export?"):
            code, kind, body = served.export(urllib.parse.parse_qs(path.split("?")[1])["format"][0])
        else:
            code, kind, body = served.get(path)
        if code >= 400 or kind == "application/json":
            assert kind == "application/json", (path, code, body[:200])
            parsed = json.loads(body)
            assert code < 400 or (parsed["error"] and parsed["status"] == code and set(parsed) == {"error", "status"})
            out[path] = (code, parsed)
        else:
            out[path] = (code, body)
    return out


def test_every_endpoint_on_a_damaged_file(files):
    pytest.importorskip("pyarrow")
    served = _Served(str(files["dir"] / "damaged.tfrecord"))
    try:
        got = _answers(served)
        assert got["/api/info"][0] == 200 and "damaged" in got["/api/info"][1]["shards"][0]["error"]
        assert got["/api/records?count=5"][1]["records"][0]["features"]["i"]["v"] == [0]
        assert got["/api/media?n=0&feature=x&j=0"][0] == 404
        assert got["/api/records?count=5&filter=len(x)>0"][0] == 400  # x is not a feature of these records
        health = served.poll("/api/health")["result"]["files"][0]
        assert not health["ok"] and health["errors"][0]["offset"] is not None
        exported = list(tfrx.read_records(io.BytesIO(got["/api/export?format=tfrecord"][1])))
        assert exported == [r[3] for r in served.server.source.read(0, 10)]  # the intact records
        assert served.poll("/api/stats")["status"] == "done"
    finally:
        served.close()


def test_every_endpoint_on_another_payload(files):
    path = files["dir"] / "text.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many([b"plain text line %d" % i for i in range(4)])
    served = _Served(str(path))
    try:
        got = _answers(served)
        assert got["/api/info"][1]["payload"] == ["other"]
        assert got["/api/records?count=5"][1]["records"][0]["kind"] == "other"
        assert "no features to filter on" in got["/api/records?count=5&filter=len(x)>0"][1]["error"]
        assert got["/api/media?n=0&feature=x&j=0"][0] == 422
        assert "not tf.train.Example" in served.poll("/api/stats")["error"]
        assert list(tfrx.read_records(io.BytesIO(got["/api/export?format=tfrecord"][1])))[3] == b"plain text line 3"
        lines = got["/api/export?format=jsonl"][1].decode().splitlines()
        assert json.loads(lines[0]) == {"record": "plain text line 0"}
    finally:
        served.close()


def test_a_huge_record_is_summarised_not_sent_whole(files):
    big = bytes(np.random.default_rng(0).integers(0, 256, 24 << 20, dtype=np.uint8))
    path = files["dir"] / "huge.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write(tfrx.make_example({"blob": big, "floats": np.arange(1 << 20, dtype=np.float32)}).SerializeToString())
    served = _Served(str(path))
    try:
        code, _, body = served.get("/api/record?n=0")
        assert code == 200 and len(body) < 10_000
        cells = json.loads(body)["features"]
        assert cells["blob"]["items"][0] == {"t": "bytes", "hex": big[:32].hex(), "bytes": len(big)}
        assert cells["floats"]["n"] == 1 << 20 and len(cells["floats"]["spark"]) == 32
        assert served.get("/api/media?n=0&feature=blob&j=0")[2] == big
        assert served.json("/api/records?filter=" + urllib.parse.quote("max(floats) > 1000"))["records"][0]["n"] == 0
        assert served.poll("/api/stats?mode=all")["result"]["features"][0]["long_values"] == 1
    finally:
        served.close()


def test_the_page_shows_index_progress_and_the_api_waits(files, monkeypatch, tmp_path):
    release = threading.Event()
    original = ViewSource.prepare

    def slow(self, progress=None):
        progress(5, 10)
        release.wait(30)
        original(self, progress)

    monkeypatch.setattr(ViewSource, "prepare", slow)
    server = ViewerServer(ViewSource(str(files["dir"] / "seq.tfrecord"), index_cache_dir=str(tmp_path / "cache")))
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def ask(path):
        request = urllib.request.Request(server.base_url + path, headers={"X-Tfrx-Token": server.token})
        return urllib.request.urlopen(request, timeout=30)

    try:
        with ask("api/info") as r:
            info = json.loads(r.read())
        assert info["status"] == "indexing" and info["message"].startswith("50%")
        with pytest.raises(urllib.error.HTTPError) as e:
            ask("api/records")
        assert e.value.code == 503 and "building the record index: 50%" in json.loads(e.value.read())["error"]
        release.set()
        deadline = time.monotonic() + 30
        while server.preparing.status != "done" and time.monotonic() < deadline:
            time.sleep(0.02)
        with ask("api/info") as r:
            assert json.loads(r.read())["total"] == 5
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def test_index_build_reports_progress_in_steps(tmp_path, monkeypatch):
    import tfrx.index as index_module

    records = [bytes([i % 251]) * 3000 for i in range(400)]
    with tfrx.TFRecordWriter(str(tmp_path / "a.tfrecord")) as w:
        w.write_many(records)
    monkeypatch.setattr(index_module, "_PROGRESS_STEP", 100_000)  # steps that split records
    seen = []
    index = tfrx.build_index(
        str(tmp_path / "a.tfrecord"),
        cache_dir=str(tmp_path / "c"),
        progress=lambda p: seen.append((p.done, p.total)),
    )
    size = (tmp_path / "a.tfrecord").stat().st_size
    assert len(seen) > 5 and seen[-1] == (size, size) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert np.array_equal(
        index.offsets, tfrx.build_index(str(tmp_path / "a.tfrecord"), cache_dir=str(tmp_path / "d")).offsets
    )


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.lists(st.integers(-5, 5), max_size=4), min_size=1, max_size=30),
    v=st.integers(-5, 5),
    k=st.integers(0, 4),
)
def test_filter_property_vectorised_equals_per_record(rows, v, k):
    records = [tfrx.make_example({"x": np.array(r, np.int64)} if r else {"y": 1}).SerializeToString() for r in rows]
    cases = {
        f"len(x) > {k}": lambda r: len(r) > k,
        f"x == {v}": lambda r: r == [v],
        f"{v} in x": lambda r: v in r,
        f"max(x) >= {v} and not x[1] < {v}": lambda r: bool(r) and max(r) >= v and not (len(r) > 1 and r[1] < v),
        f"sum(x) * 2 != {v} or len(x) == {k}": lambda r: sum(r) * 2 != v or len(r) == k,
    }
    for expression, reference in cases.items():
        got = Filter(expression, {"x": "int64", "y": "int64"}).matches(records)
        assert got.tolist() == [reference(r) for r in rows], expression


def test_stats_with_infinities_and_nans_stay_valid_json(tmp_path):
    path = tmp_path / "inf.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many(
            tfrx.make_example({"v": np.array([np.inf, -1.0, np.nan, 2.0], np.float32)}).SerializeToString()
            for _ in range(3)
        )
    served = _Served(str(path))
    try:
        values = served.poll("/api/stats?mode=all")["result"]["features"][0]["values"]
        assert values["max"] == "inf" and values["min"] == -1.0 and values["nan"] == 3
        assert sum(values["histogram"]["counts"]) == 6 and values["histogram"]["edges"][-1] == 2.0
    finally:
        served.close()


def test_urls_plain_and_gzip_read_by_batches_and_numbers(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    import gzip

    fs = fsspec.filesystem("memory")
    records = [tfrx.make_example({"i": i}).SerializeToString() for i in range(50)]
    blob = io.BytesIO()
    with tfrx.TFRecordWriter(blob) as w:
        w.write_many(records)
    fs.pipe({"/viewer-test/a.tfrecord": blob.getvalue(), "/viewer-test/b.tfrecord.gz": gzip.compress(blob.getvalue())})
    try:
        src = ViewSource("memory://viewer-test/*", index_cache_dir=str(tmp_path))
        seen = []
        src.prepare(lambda done, size: seen.append((done, size)))
        assert [(s.compression, s.count) for s in src.shards] == [("", 50), ("GZIP", 50)] and seen[-1][0] == seen[-1][1]
        got = [(n, len(b)) for n, b in src.batches(40, 65, 7)]
        assert got == [(40, 7), (47, 3), (50, 7), (57, 7), (64, 1)]
        assert b"".join(b"".join(b.to_list()) for _, b in src.batches(40, 65, 7)) == b"".join((records * 2)[40:65])
        picked = src.read_numbers([3, 49, 50, 99])
        assert [(n, i, r) for n, _, i, r in picked] == [
            (3, 3, records[3]),
            (49, 49, records[49]),
            (50, 0, records[0]),
            (99, 49, records[49]),
        ]
    finally:
        fs.rm("/viewer-test", recursive=True)


def test_a_tfds_directory_opens_as_its_shards_with_its_class_names(tmp_path):
    from tfrx import tfds

    root = tmp_path / "toy" / "1.0.0"
    tfds.write(
        root,
        features={"label": tfds.ClassLabel(names=["cat", "dog", "eel"]), "x": np.int64},
        splits={"train": [{"label": i % 3, "x": i} for i in range(10)]},
        shard_size=4,
    )
    served = _Served(str(tmp_path / "toy"))
    try:
        info = served.json("/api/info")
        assert info["total"] == 10 and len(info["shards"]) == 3
        assert info["labels"] == {"label": ["cat", "dog", "eel"]}
        assert [r["features"]["x"]["v"][0] for r in served.json("/api/records?count=10")["records"]] == list(range(10))
    finally:
        served.close()
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.tfrecord").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="not a TFDS dataset"):
        ViewSource(str(tmp_path / "plain"))  # a folder without dataset_info.json


# ---------------------------------------------------------------------- TFDS boxes, depth and float images
def test_tfds_boxes_are_drawn_with_their_class_names(tmp_path):
    from tfrx import tfds

    rng = np.random.default_rng(1)
    rows = []
    for i in range(6):
        k = i % 3
        ymin, xmin = rng.uniform(0, 0.5, (2, k)).astype(np.float32)
        rows.append(
            {
                "image": rng.integers(0, 255, (20, 30, 3), dtype=np.uint8),
                "objects": {
                    "bbox": np.stack([ymin, xmin, ymin + 0.4, xmin + 0.3], axis=1).reshape(k, 4),
                    "label": np.arange(k) % 2,
                },
            }
        )
    tfds.write(
        tmp_path / "boxes" / "1.0.0",
        features={
            "image": tfds.Image(),
            "objects": tfds.Sequence({"bbox": tfds.BBoxFeature(), "label": tfds.ClassLabel(names=["cat", "dog"])}),
        },
        splits={"train": rows},
    )
    served = _Served(str(tmp_path / "boxes"))
    try:
        for r in served.json("/api/records?count=6")["records"]:
            want = rows[r["n"]]["objects"]
            got = r["boxes"]
            assert [b["label"] for b in got] == [["cat", "dog"][c] for c in want["label"]]
            for b, (ymin, xmin, ymax, xmax) in zip(got, want["bbox"]):
                assert (b["ymin"], b["xmin"], b["ymax"], b["xmax"]) == pytest.approx((ymin, xmin, ymax, xmax), abs=1e-5)
    finally:
        served.close()


def _viridis_ends():
    from tfrx.viewer._cells import _VIRIDIS

    return _VIRIDIS[0].astype(np.uint8), _VIRIDIS[-1].astype(np.uint8)


def test_float_and_depth_images_go_through_a_colour_map(tmp_path):
    from tfrx import tfds
    from tfrx.image import decode_image, encode_png

    h, w = 24, 40
    ramp = np.tile(np.linspace(-3.0, 5.0, w, dtype=np.float32), (h, 1))[..., None]  # increases left to right
    tfds.write(
        tmp_path / "depth" / "1.0.0",
        features={"depth": tfds.Image(shape=(h, w, 1), dtype=np.float32), "id": np.int64},
        splits={"train": [{"depth": ramp, "id": 0}]},
    )
    deep = np.tile(np.linspace(0, 60000, w).astype(np.uint16), (h, 1))[..., None]
    path16 = tmp_path / "mm.tfrecord"
    with tfrx.TFRecordWriter(str(path16)) as w16:
        w16.write(tfrx.make_example({"depth/encoded": encode_png(deep)}).SerializeToString())
    low, high = _viridis_ends()
    for folder, feature in ((tmp_path / "depth", "depth"), (path16, "depth/encoded")):
        served = _Served(str(folder))
        try:
            item = served.json("/api/record?n=0")["features"][feature]["items"][0]
            assert item["t"] == "image" and item["colormap"] is True
            code, kind, body = served.get(f"/api/media?n=0&feature={urllib.parse.quote(feature)}&j=0")
            assert code == 200 and kind == "image/png"
            rgb = np.asarray(decode_image(body, channels=3))
            assert rgb.shape == (h, w, 3)
            np.testing.assert_array_equal(rgb[:, 0], np.broadcast_to(low, (h, 3)))  # the smallest values
            np.testing.assert_array_equal(rgb[:, -1], np.broadcast_to(high, (h, 3)))  # the largest
            assert (np.diff(rgb[0, :, 1].astype(int)) >= 0).all()  # viridis' green rises with the value
            assert (rgb[0] == rgb[-1]).all()  # the same value down each column: no noise
        finally:
            served.close()


def test_notebook_thumbnails_are_capped_in_size(tmp_path):
    import base64
    import re

    from tfrx.image import decode_image, encode_png

    rng = np.random.default_rng(0)
    path = tmp_path / "big.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        for i in range(20):
            photo = rng.integers(0, 255, (600, 800, 3), dtype=np.uint8)  # noise: ~1.4 MB of PNG each
            w.write(tfrx.make_example({"image": encode_png(photo), "label": i}).SerializeToString())
    page = tfrx.view(str(path), count=20)._repr_html_()
    images = re.findall(r"src='data:(image/\w+);base64,([^']+)'", page)
    assert len(page) < 1_500_000  # 20 full images would be ~38 MB of base64
    assert images and len(images) + page.count("&lt;image,") == 20
    for _, data in images:
        thumb = np.asarray(decode_image(base64.b64decode(data)))
        assert max(thumb.shape[:2]) <= tfrx.viewer.THUMBNAIL


# ---------------------------------------------------------------------- damage: one numbering for every tab
def test_corpus_damage_agrees_with_the_records_tab(corpus_dir, tmp_path):
    import shutil

    path = tmp_path / "pets.record"
    shutil.copyfile(corpus_dir / "tfmodels_vendored__pets_examples.CORRUPTED.record", path)
    from tfrx.tools._verify import verify_files

    (check,) = verify_files(str(path))
    intact = list(tfrx.read_records(str(path), on_error="skip"))
    raw = path.read_bytes()
    served = _Served(str(path))
    try:
        info = served.json("/api/info")
        page = served.json("/api/records?count=50")
        health = served.poll("/api/health")["result"]
        errors = health["files"][0]["errors"]
        assert info["total"] == len(intact) == len(page["records"]) == health["files"][0]["records"]
        assert len(errors) == len(check.errors) == len(check.regions)  # each region once
        for e, region in zip(errors, check.regions):
            assert (e["start"], e["end"]) == (region.start, region.end)
            # The record that starts where the damage ends is the one the Records tab numbers e["before"].
            if e["before"] < len(intact):
                length = int.from_bytes(raw[region.end : region.end + 8], "little")
                following = raw[region.end + 12 : region.end + 12 + length]
                assert intact[e["before"]] == following
                assert served.json(f"/api/record?n={e['before']}")["size"] == length
        assert [d["before"] for d in page["damage"]] == [e["before"] for e in errors]
        assert [(d["start"], d["end"]) for d in page["damage"]] == [(e["start"], e["end"]) for e in errors]
        # The Files tab's problem is one of Health's rows, in the same words.
        first = info["shards"][0]["error"]
        assert any(e["message"] in first for e in errors)
        assert "record 1 at byte" not in first  # not the index builder's numbering of the file
    finally:
        served.close()


def test_damage_the_index_did_not_see_is_found_and_renumbered(tmp_path):
    records = [tfrx.make_example({"i": i}).SerializeToString() for i in range(5)]
    blob = io.BytesIO()
    with tfrx.TFRecordWriter(blob) as w:
        w.write_many(records)
    data = bytearray(blob.getvalue())
    third = 2 * (16 + len(records[0]))
    data[third + 12 + 2] ^= 0xFF  # a payload byte: the lengths still frame, the data CRC fails
    path = tmp_path / "flipped.tfrecord"
    path.write_bytes(bytes(data))
    served = _Served(str(path))
    try:
        # The index frames 5 records; the first read through it meets the bad CRC, and the file is streamed.
        info = served.json("/api/info")
        assert info["total"] == 4 and info["shards"][0]["damaged"] == 1
        health = served.poll("/api/health")["result"]
        (error,) = health["files"][0]["errors"]
        assert error["kind"] == "data_crc" and error["before"] == 2 and error["start"] == third
        assert error["message"] in info["shards"][0]["error"]
        page = served.json("/api/records?count=10")
        assert [r["features"]["i"]["v"][0] for r in page["records"]] == [0, 1, 3, 4] and page["total"] == 4
        assert [d["before"] for d in page["damage"]] == [2]
    finally:
        served.close()
    # Health finds it too when no page was read first (only the index was built).
    src = ViewSource(str(path), index_cache_dir=str(tmp_path / "cache"))
    server = ViewerServer(src)
    try:
        assert src.total() == 5
        job = server.health
        job.state()
        deadline = time.monotonic() + 30
        while job.status == "running" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert job.result["files"][0]["errors"][0]["before"] == 2 and src.total() == 4
    finally:
        server.server_close()
