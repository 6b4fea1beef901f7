"""The viewer's overview (/api/overview): two datasets side by side, the schema, the anomalies; statistics files.

The inputs are the validation goldens: ``generated.tfrecord`` and its second
span ``generated_b.tfrecord`` (a new category, a new feature, missing and
non-boolean values), and statistics, schemas and anomalies TFDV wrote for
them and for the corpus' penguin files (tests/golden/validate/), so the
flagged features are checked against TFDV's own verdicts.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest

import tfrx
from tfrx.viewer._overview import Side, is_statistics_path, overview
from tfrx.viewer._server import ViewerServer
from tfrx.viewer._source import ViewSource

from test_viewer import _Served

pytest.importorskip("tensorflow_metadata", reason="the overview needs tfrx[validate]")

import tfrx.validate as tv  # noqa: E402

GOLDEN = Path(__file__).parent / "golden" / "validate"
FIRST, SECOND = GOLDEN / "generated.tfrecord", GOLDEN / "generated_b.tfrecord"


def _anomalous(name):
    return set(tv.load_anomalies(GOLDEN / name).anomaly_info)


def _poll(served, records=None, timeout=120):
    query = "" if records is None else f"?records={records}"
    served.post(f"/api/overview{query}", {} if records is None else {"records": records}, status=200)
    deadline = time.monotonic() + timeout
    while True:
        state = served.json(f"/api/overview{query}")
        if state["status"] != "running" or time.monotonic() > deadline:
            return state
        time.sleep(0.05)


def _values(path, feature):
    counts = Counter()
    for r in tfrx.read_records(str(path)):
        for v in tfrx.decode_example(r).get(feature, []):
            counts[bytes(v).decode("utf-8", "replace")] += 1
    return counts


def _cache(tmp_path, name):
    return str(tmp_path / name)


@pytest.fixture()
def compared(tmp_path):
    b = Side("generated_b", source=ViewSource(str(SECOND), index_cache_dir=_cache(tmp_path, "b")))
    s = _Served(str(FIRST), compare=b, label="generated")
    yield s
    s.close()


def test_two_record_datasets_side_by_side_with_tfdvs_anomalies(compared):
    info = compared.json("/api/info")
    assert [d["label"] for d in info["overview"]["datasets"]] == ["generated", "generated_b"]
    # A GET reads the state only: nothing is computed until the page POSTs.
    assert compared.json("/api/overview")["status"] == "idle" and not compared.server._overviews
    state = _poll(compared)
    assert state["status"] == "done", state
    o = state["result"]
    assert [(d["label"], d["kind"], d["records_read"], d["sampled"]) for d in o["datasets"]] == [
        ("generated", "records", 3000, False),
        ("generated_b", "records", 2000, False),
    ]
    rows = {r["feature"]: r for r in o["features"]}
    # Both datasets' distributions: s's value counts are the records' own, feature by feature.
    for k, path in enumerate((FIRST, SECOND)):
        top = dict(map(tuple, rows["s"]["sides"][k]["top_values"]))
        assert top == dict(_values(path, "s"))
        assert rows["f"]["sides"][k]["histograms"][0]["buckets"]
    assert rows["extra"]["sides"][0] is None and rows["extra"]["sides"][1]["num_non_missing"] == 500
    assert rows["s"]["linf"] > 0.1 and rows["label"]["js"] < 0.01
    # The second span's anomalies against the schema inferred from the first: TFDV flags the same features.
    flagged = {r["feature"] for r in o["features"] if r["anomaly"]}
    assert flagged == {a["feature"] for a in o["anomalies"]} == _anomalous("anomalies_generated_b.pbtxt")
    assert rows["s"]["anomaly"]["short_description"] == "Unexpected string values"
    assert o["anomalies_of"] == "generated_b" and o["schema_source"] == "inferred"
    assert 'name: "s"' in o["schema"]


def test_the_records_read_are_capped_and_sampled(tmp_path):
    b = Side("b", source=ViewSource(str(SECOND), index_cache_dir=_cache(tmp_path, "b")))
    served = _Served(str(FIRST), compare=b, overview_records=700)
    try:
        state = _poll(served)
        assert state["status"] == "done" and state["target"] == 1400 and state["progress"] == 1400
        sides = state["result"]["datasets"]
        assert [(d["records_read"], d["total"], d["sampled"]) for d in sides] == [(700, 3000, True), (700, 2000, True)]
        label = {r["feature"]: r for r in state["result"]["features"]}["label"]
        assert [s["num_non_missing"] for s in label["sides"]] == [700, 700]
        # The page may ask for another size, within the bound.
        assert _poll(served, records=100)["result"]["datasets"][0]["records_read"] == 100
        code, answer = served.post("/api/overview", {"records": 10**12})
        assert code == 400 and "records" in answer["error"]
    finally:
        served.close()


def test_tfdv_written_statistics_open_directly(tmp_path):
    # TFDV's statistics of the penguin files (text as TFDV wrote them), one saved as binary stats.pb.
    train = tv.load_statistics(GOLDEN / "stats_penguin_train.pbtxt")
    pb = tmp_path / "stats.pb"
    pb.write_bytes(train.SerializeToString())
    assert is_statistics_path(pb) and is_statistics_path(GOLDEN / "stats_penguin_eval.pbtxt")
    assert not is_statistics_path(FIRST)
    server = ViewerServer(
        None,
        statistics=Side.open(str(pb), "train"),
        compare=Side.open(str(GOLDEN / "stats_penguin_eval.pbtxt"), "eval"),
        schema=tv.load_schema(GOLDEN / "schema_penguin.pbtxt"),
    )
    served = _Served.__new__(_Served)
    served.server = server
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        info = served.json("/api/info")
        assert info["records"] is False and info["total"] == 0
        assert [d["kind"] for d in info["overview"]["datasets"]] == ["statistics", "statistics"]
        state = _poll(served)
        assert state["status"] == "done", state
        o = state["result"]
        assert [d["num_examples"] for d in o["datasets"]] == [234, 100]
        rows = {r["feature"]: r for r in o["features"]}
        species = train.datasets[0].features
        (want,) = [f for f in species if f.path.step[0] == "species"]
        assert rows["species"]["sides"][0]["num_non_missing"] == want.num_stats.common_stats.num_non_missing
        assert rows["body_mass_g"]["sides"][1]["max"] == pytest.approx(
            [
                f
                for f in tv.load_statistics(GOLDEN / "stats_penguin_eval.pbtxt").datasets[0].features
                if f.path.step[0] == "body_mass_g"
            ][0].num_stats.max
        )
        assert o["schema_source"] == "given"
        assert {a["feature"] for a in o["anomalies"]} == _anomalous("anomalies_penguin_eval.pbtxt")
        # A statistics file holds no records: those endpoints say so, as JSON.
        for path in ("/api/records?count=3", "/api/record?n=0", "/api/stats", "/api/health"):
            answer = served.json(path, status=404)
            assert answer["status"] == 404 and "statistics file" in answer["error"], path
        code, answer = served.post("/api/export", {"format": "tfrecord"})
        assert code == 404 and "statistics file" in answer["error"]
    finally:
        server.shutdown()
        server.server_close()


def test_one_dataset_with_a_given_schema_and_a_tfrecord_of_statistics(tmp_path):
    # TFX's StatisticsGen writes FeatureStats.pb as a TFRecord file of DatasetFeatureStatisticsList.
    stats = tv.load_statistics(GOLDEN / "stats_generated_b.pbtxt")
    path = tmp_path / "FeatureStats.pb"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write(stats.SerializeToString())
    side = Side.open(str(path), "span 2")
    o = overview([side], schema=str(GOLDEN / "schema_generated.pbtxt"))
    assert o["datasets"][0]["num_examples"] == 2000
    assert [len(r["sides"]) for r in o["features"]] == [1] * len(o["features"])
    assert {a["feature"] for a in o["anomalies"]} == _anomalous("anomalies_generated_b.pbtxt")
    # Without a schema one dataset has nothing to be checked against: no anomalies, the schema inferred.
    alone = overview([side])
    assert alone["anomalies"] == [] and alone["anomalies_of"] is None and alone["schema_source"] == "inferred"
    json.dumps(o, allow_nan=False)  # strict JSON, NaNs included (f holds one)


def test_unreadable_files_are_named_with_what_to_do(tmp_path):
    bad = tmp_path / "stats.pb"
    bad.write_bytes(b"\xff\x00 not statistics")
    with pytest.raises(ValueError, match="stats.pb"):
        Side.open(str(bad), "x")
    from tfrx.viewer._overview import load_schema_file

    with pytest.raises(ValueError, match=r"schema\.pbtxt"):
        load_schema_file(str(tmp_path / "schema.pbtxt"))


def test_a_failing_overview_is_a_json_error_and_the_server_stays_up(tmp_path):
    # Records that are not Examples beside Examples: the job fails, says why, the server answers on.
    other = tmp_path / "raw.tfrecord"
    with tfrx.TFRecordWriter(str(other)) as w:
        w.write_many([b"\x07not an example"] * 10)
    served = _Served(
        str(FIRST), compare=Side("raw", source=ViewSource(str(other), index_cache_dir=_cache(tmp_path, "r")))
    )
    try:
        state = _poll(served)
        assert state["status"] == "failed" and state["error"]
        assert served.json("/api/info")["total"] == 3000
    finally:
        served.close()


def _copies(tmp_path, *paths):
    """The files copied into tmp_path: indexes are then built there, never beside the goldens."""
    out = []
    for p in paths:
        shutil.copyfile(p, tmp_path / p.name)
        out.append(str(tmp_path / p.name))
    return out


def test_python_view_compares(tmp_path):
    first, second = _copies(tmp_path, FIRST, SECOND)
    v = tfrx.view(first, compare=second)
    o = v.overview()
    assert [d["num_examples"] for d in o["datasets"]] == [3000, 2000]
    html = v._repr_html_()
    assert "Unexpected string values" in html and "generated_b.tfrecord" in html
    s = tfrx.view(str(GOLDEN / "stats_penguin_train.pbtxt"))
    assert s.overview()["datasets"][0]["num_examples"] == 234 and "species" in s._repr_html_()


def _command(*args):
    return subprocess.Popen(
        [sys.executable, "-c", "import sys, tfrx.cli; sys.exit(tfrx.cli.main())", "view", *args, "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_the_command_compares_with_a_schema_and_opens_a_statistics_file(tmp_path):
    pb = tmp_path / "stats.pb"
    pb.write_bytes(tv.load_statistics(GOLDEN / "stats_generated.pbtxt").SerializeToString())
    (second,) = _copies(tmp_path, SECOND)
    proc = _command(second, "--compare", str(pb), "--schema", str(GOLDEN / "schema_generated.pbtxt"))
    try:
        line = proc.stdout.readline()
        assert "compared with stats.pb at http://127.0.0.1:" in line, line + proc.stderr.read()
        parsed = urllib.parse.urlparse(line.split(" at ")[1].split()[0])
        token = {"X-Tfrx-Token": urllib.parse.parse_qs(parsed.query)["token"][0]}
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        info, deadline = {"status": "indexing"}, time.monotonic() + 60
        while info.get("status") == "indexing" and time.monotonic() < deadline:
            conn.request("GET", "/api/info", headers=token)
            info = json.loads(conn.getresponse().read())
        assert info["overview"]["schema"] is True, info
        conn.request("POST", "/api/overview", body=b"{}", headers={**token, "Content-Type": "application/json"})
        state = json.loads(conn.getresponse().read())
        deadline = time.monotonic() + 60
        while state["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.05)
            conn.request("GET", "/api/overview", headers=token)
            state = json.loads(conn.getresponse().read())
        assert state["status"] == "done", state
        o = state["result"]
        assert [(d["label"], d["kind"]) for d in o["datasets"]] == [
            ("generated_b.tfrecord", "records"),
            ("stats.pb", "statistics"),
        ]
        assert o["schema_source"] == "given" and o["anomalies_of"] == "stats.pb"
        conn.close()
    finally:
        proc.terminate()
        proc.wait(30)
    # A statistics file on its own; a schema that is not one is refused before serving, naming the file.
    proc = _command(str(pb))
    try:
        line = proc.stdout.readline()
        assert "statistics stats.pb at http://127.0.0.1:" in line, line + proc.stderr.read()
    finally:
        proc.terminate()
        proc.wait(30)
    bad = tmp_path / "schema.pbtxt"
    bad.write_text("feature { this is not a schema")
    proc = _command(second, "--schema", str(bad))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "schema.pbtxt" in err and "cannot be read as a schema" in err
