"""tfrx view: the viewer's API on loopback, its cells and filters, the notebook view, the corpus."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import tfrx
from tfrx.viewer.cells import record_view
from tfrx.viewer.query import Filter, FilterError
from tfrx.viewer.server import ViewerServer
from tfrx.viewer.source import ViewSource

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


def _detection_records(n=30):
    """Object Detection API layout: an image, its boxes and their class names."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        k = i % 4
        xmin = rng.uniform(0, 0.5, k).astype(np.float32)
        ymin = rng.uniform(0, 0.5, k).astype(np.float32)
        rows.append(tfrx.make_example({
            "image/encoded": _png((i * 8 % 256, 40, 90)),
            "image/format": b"png",
            "image/object/bbox/xmin": xmin, "image/object/bbox/ymin": ymin,
            "image/object/bbox/xmax": xmin + 0.3, "image/object/bbox/ymax": ymin + 0.3,
            "image/object/class/text": [b"cat" if j % 2 else b"dog" for j in range(k)],
            "label": i % 5,
            "score": rng.normal(size=20).astype(np.float32),
        }, kinds={"image/object/class/text": "bytes"}).SerializeToString())
    return rows


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("view")
    det = _detection_records()
    with tfrx.TFRecordWriter(str(d / "det-00000-of-00002.tfrecord")) as w:
        w.write_many(det[:20])
    with tfrx.TFRecordWriter(str(d / "det-00001-of-00002.tfrecord"), "GZIP") as w:
        w.write_many(det[20:])
    seq = [tfrx.make_sequence_example({"id": i}, {"tokens": [[j, j + 1] for j in range(i + 1)]}).SerializeToString() for i in range(5)]
    with tfrx.TFRecordWriter(str(d / "seq.tfrecord")) as w:
        w.write_many(seq)
    raw = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    with tfrx.TFRecordWriter(str(d / "raw.tfrecord")) as w:
        w.write(tfrx.make_example({"image_raw": raw.tobytes(), "height": 4, "width": 5, "depth": 3}).SerializeToString())
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
    def __init__(self, paths, **kwargs):
        # Indexes into a temporary cache: nothing is written beside the corpus's files.
        self.server = ViewerServer(ViewSource(paths, index_cache_dir=tempfile.mkdtemp(prefix="tfrx-view-")), **kwargs)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while self.json("/api/info").get("status") == "indexing" and time.monotonic() < deadline:
            time.sleep(0.02)

    def get(self, path):
        try:
            with urllib.request.urlopen(self.server.url + path.lstrip("/"), timeout=60) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read()

    def json(self, path, status=200):
        code, kind, body = self.get(path)
        assert code == status, body[:500]
        assert kind == "application/json"
        return json.loads(body)

    def poll(self, path):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = self.json(path)
            if state["status"] in ("done", "failed"):
                return state
            time.sleep(0.05)
        raise AssertionError(f"{path} did not finish")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


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
    expected = [i for i, r in enumerate(files["det"])
                if (lambda f: int(f["label"][0]) in (1, 3) and len(f["image/object/bbox/xmin"]) > 1)(tfrx.decode_example(r))]
    page = det.json("/api/records?start=0&count=200&filter=" + urllib.parse.quote("label in [1, 3] and len(image/object/bbox/xmin) > 1"))
    assert [r["n"] for r in page["records"]] == expected and page["scanned"] == 30
    text = det.json("/api/records?count=200&filter=" + urllib.parse.quote('"cat" in image/object/class/text'))
    assert [r["n"] for r in text["records"]] == [i for i in range(30) if i % 4 >= 2]
    bad = det.json("/api/records?filter=" + urllib.parse.quote("__import__('os')"), 400)
    assert "calls something other than" in bad["error"]


def test_export_writes_the_selection(det, files):
    code, _, body = det.get("/api/export?format=tfrecord&filter=" + urllib.parse.quote("label == 2"))
    assert code == 200
    got = list(tfrx.read_records(io.BytesIO(body)))
    assert got == [r for i, r in enumerate(files["det"]) if i % 5 == 2]
    code, kind, body = det.get("/api/export?format=jsonl&limit=3")
    lines = body.decode().splitlines()
    assert kind == "application/x-ndjson" and len(lines) == 3 and json.loads(lines[1])["label"] == [1]
    assert det.json("/api/export?format=xml", 400)["error"].startswith("format must be")


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
        assert error["offset"] is not None and "damaged.tfrecord" in error["message"]
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


def test_other_payloads_say_what_they_are(corpus_dir):
    events = sorted(corpus_dir.glob("*tfevents*"))[0]
    served = _Served(str(events))
    try:
        info = served.json("/api/info")
        assert info["payload"] == ["other"] and info["schema"] is None
        r = served.json("/api/records?count=1")["records"][0]
        assert r["kind"] == "other" and "TensorBoard" in r["message"] and r["hex"]
        assert served.poll("/api/stats")["status"] == "failed"
    finally:
        served.close()


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
    proc = subprocess.run([sys.executable, "-c", "import sys, tfrx.cli; sys.exit(tfrx.cli.main())", "view", str(tmp_path / "missing.tfrecord"), "--no-browser"],
                          capture_output=True, text=True, timeout=120)
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
    assert page.count("<tr>") == 4 and "data:image/png;base64," in page and "20 records" in page
    ds_view = tfrx.view(tfrx.TFRecordDataset(str(files["dir"] / "seq.tfrecord")), count=2)
    assert "<table>" in ds_view._repr_html_()
