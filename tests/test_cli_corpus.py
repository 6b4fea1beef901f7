"""The tfrx command on every file of the real-world corpus, checked against SOURCES.tsv."""

from __future__ import annotations

import json

import pytest

from conftest import load_corpus_sources
from tfrx.cli import main

ROWS = load_corpus_sources()
DAMAGED = {
    "tfmodels_vendored__pets_examples.CORRUPTED.record",
    "tfmodels_vendored__snapshot_serengeti_sequence_examples.TRUNCATED.record",
}


def _payload(row) -> str:
    p = row["payload"].split()[0] if row["payload"].split() else ""
    if p == "SequenceExample":
        return "SequenceExample"
    if p == "Example":
        return "Example"
    if p in ("-", ""):
        return "none"
    return "other"


def _ids(row):
    return row["filename"]


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_every_corpus_file_is_covered(corpus_dir):
    on_disk = {p.name for p in corpus_dir.iterdir() if p.name != "SOURCES.tsv"}
    assert on_disk == {r["filename"] for r in ROWS}
    assert DAMAGED <= on_disk


@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_count_and_verify(corpus_dir, capsys, row):
    path = corpus_dir / row["filename"]
    status, out, err = run(capsys, "verify", path)
    if row["filename"] in DAMAGED:
        assert status == 1
        assert out.startswith("DAMAGED")
        # every damaged region is listed with the file and a byte offset
        assert f"{path}: " in out and " at byte " in out
        status, out, err = run(capsys, "count", path)
        assert status == 1 and "error:" in err and "Traceback" not in err
        return
    assert status == 0, out + err
    assert out == f"OK\t{row['records']} records\t{path}\n"
    status, out, err = run(capsys, "count", path)
    assert status == 0, err
    assert out == f"{row['records']}\t{path}\n"


@pytest.mark.parametrize("row", [r for r in ROWS if r["filename"] not in DAMAGED], ids=_ids)
def test_inspect_and_schema(corpus_dir, capsys, row):
    path = corpus_dir / row["filename"]
    kind = _payload(row)
    status, out, err = run(capsys, "inspect", path, "-n", "2")
    assert status == 0, err
    status_s, out_s, err_s = run(capsys, "schema", path, "--json")
    if kind == "other":
        if "tfevents" in row["filename"]:  # TensorBoard events: shown decoded, one event a line
            assert out.startswith("# ") and "TensorBoard event file" in out.splitlines()[0]
            assert out.splitlines()[1].startswith("record 0: step ")
        else:
            assert "not tf.train.Example" in err  # inspect says so, then shows bytes
            assert out.startswith("record 0: ")
        assert status_s == 2 and "not tf.train.Example or SequenceExample" in err_s and "Traceback" not in err_s
        return
    if kind == "none":  # an empty file: inspect says so
        assert out == f"# {path}: empty file (0 bytes), no records\n"
        assert status_s == 0
        return
    assert "not tf.train.Example" not in err
    top = "context {" if kind == "SequenceExample" else "features {"
    assert top in out.splitlines()
    assert status_s == 0, err_s
    spec = json.loads(out_s)
    if kind == "SequenceExample":
        assert set(spec) == {"context", "sequence"}
    else:
        assert "features" in spec
    status, out, err = run(capsys, "inspect", "--json", path, "-n", "3")
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == min(3, int(row["records"]))
    for line in lines:
        obj = json.loads(line)
        assert isinstance(obj, dict)
        if kind == "SequenceExample":
            assert set(obj) == {"context", "feature_lists"}


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r["filename"] not in DAMAGED and _payload(r) in ("Example", "SequenceExample")], ids=_ids
)
def test_stats(corpus_dir, capsys, row):
    path = corpus_dir / row["filename"]
    status, out, err = run(capsys, "stats", "--json", path)
    assert status == 0, err
    stats = json.loads(out)
    assert stats["records"] == int(row["records"])
    assert stats["payload"] == _payload(row)
    for f in stats["features"]:
        assert 0 <= f["present"] <= stats["records"]


def test_event_files_are_named_as_such(corpus_dir, capsys):
    status, out, err = run(capsys, "schema", corpus_dir / "lingvo__events.out.tfevents.test")
    assert status == 2
    assert "TensorBoard Event" in err
    status, out, err = run(
        capsys, "inspect", "--raw", "--hex", corpus_dir / "grain__morris_sequence_first_5.tfrecord", "-n", "2"
    )
    assert status == 0
    assert out.splitlines()[:2] == ["record 0: 1 bytes", "  00000000  31" + " " * 47 + "1"]


def test_verify_all_files_at_once(corpus_dir, capsys):
    files = sorted(corpus_dir / r["filename"] for r in ROWS)
    status, out, err = run(capsys, "verify", "--json", *files)
    assert status == 1
    results = [json.loads(line) for line in out.splitlines()]
    assert {r["path"].rsplit("/", 1)[-1] for r in results if not r["ok"]} == DAMAGED
    corrupted = next(r for r in results if "CORRUPTED" in r["path"])
    # Bytes were deleted all through this file (CRLF -> LF): the first record whose
    # length and data CRCs both verify again starts at byte 165555.
    assert corrupted["errors"][0] == {
        "kind": "data_crc",
        "record": 0,
        "offset": 0,
        "message": corrupted["errors"][0]["message"],
        "end": 165555,
        "records": 1,
    }
