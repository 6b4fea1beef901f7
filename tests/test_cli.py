"""The tfrx command on generated files: in-process calls, and a few real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tfrx
from tfrx.cli import COMMANDS, main

SRC = os.path.dirname(os.path.dirname(os.path.abspath(tfrx.__file__)))  # wherever the tested tfrx is installed


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def examples_file(tmp_path):
    path = tmp_path / "data.tfrecord"
    rows = [{"id": i, "name": f"item {i % 3}", "score": [0.5 * i, 1.0]} for i in range(30)]
    tfrx.write_examples(path, rows)
    return path


def _damage(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


# ------------------------------------------------------------------ help and errors
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_everywhere(capsys, command):
    argv = ["--help"] if command is None else [command, "--help"]
    status, out, err = run(capsys, *argv)
    assert status == 0
    assert out.startswith("usage: tfrx")


@pytest.mark.parametrize("command", ["inspect", "count", "schema", "stats", "verify", "reshard", "preview"])
def test_missing_file_is_one_line(capsys, tmp_path, command):
    extra = ["-o", tmp_path / "o"] if command == "reshard" else []
    status, out, err = run(capsys, command, tmp_path / "nope.tfrecord", *extra)
    assert status == 2
    assert err.count("\n") == 1 and "no such file" in err and "Traceback" not in err


def test_not_a_tfrecord_file(capsys, tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello, this is not a TFRecord file at all\n")
    status, out, err = run(capsys, "inspect", p)
    assert status == 2 and "is not a TFRecord file" in err and err.count("\n") == 1


def test_wrong_compression(capsys, examples_file):
    status, out, err = run(capsys, "count", "-c", "gzip", examples_file)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err
    status, out, err = run(capsys, "count", "-c", "brotli", examples_file)
    assert status == 2 and "invalid choice" in err


def test_unknown_command(capsys):
    status, out, err = run(capsys, "frobnicate")
    assert status == 2


# ------------------------------------------------------------------ inspect
def test_inspect_text_format_is_protobufs(capsys, examples_file):
    status, out, err = run(capsys, "inspect", examples_file, "-n", "1")
    assert status == 0
    first = next(iter(tfrx.read_records(examples_file)))
    assert out == str(tfrx.train.Example.FromString(first))


def test_inspect_text_format_matches_tensorflow(capsys, examples_file, tf):
    status, out, err = run(capsys, "head", examples_file, "-n", "1", "--skip", "4")
    rec = list(tf.data.TFRecordDataset(str(examples_file)).skip(4).take(1))[0].numpy()
    assert out == str(tf.train.Example.FromString(rec))


def test_inspect_json_and_skip(capsys, examples_file):
    status, out, err = run(capsys, "inspect", "--json", examples_file, "-n", "2", "--skip", "3")
    assert [json.loads(x) for x in out.splitlines()] == [
        {"id": [3], "name": ["item 0"], "score": [1.5, 1.0]},
        {"id": [4], "name": ["item 1"], "score": [2.0, 1.0]},
    ]
    status, out, err = run(capsys, "inspect", "--json", examples_file, "-n", "-1")
    assert len(out.splitlines()) == 30


def test_inspect_says_a_file_is_empty(capsys, tmp_path, examples_file):
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    status, out, err = run(capsys, "inspect", empty)
    assert status == 0 and out == f"# {empty}: empty file (0 bytes), no records\n"
    gz = tmp_path / "empty.tfrecord.gz"
    tfrx.TFRecordWriter(str(gz), "GZIP").close()
    status, out, _ = run(capsys, "inspect", gz)
    assert status == 0 and out == f"# {gz}: no records\n"
    status, out, _ = run(capsys, "inspect", examples_file, "--skip", "30")
    assert status == 0 and out == f"# {examples_file}: no records after the first 30\n"
    status, out, err = run(capsys, "inspect", "--json", empty)
    assert status == 0 and out == "" and f"{empty}: empty file (0 bytes), no records" in err


def test_inspect_many_files_and_raw(capsys, tmp_path, examples_file):
    other = tmp_path / "raw.tfrecord"
    tfrx.write_records(other, [b"\x00\x01plain", b"more"])
    status, out, err = run(capsys, "inspect", examples_file, other, "-n", "1")
    assert status == 0
    assert f"==> {examples_file} <==" in out and f"==> {other} <==" in out
    assert "record 0: 7 bytes: b'\\x00\\x01plain'" in out
    assert "not tf.train.Example" in err


def test_inspect_stdin_subprocess(examples_file):
    env = dict(os.environ, PYTHONPATH=SRC)
    data = examples_file.read_bytes()
    p = subprocess.run(
        [sys.executable, "-m", "tfrx", "inspect", "--json", "-n", "1", "-"],
        input=data,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"id": [0], "name": ["item 0"], "score": [0.0, 1.0]}


def test_sequence_examples(capsys, tmp_path):
    path = tmp_path / "seq.tfrecord"
    recs = [tfrx.make_sequence_example({"len": 2}, {"tok": [[1, 2], [3]]}).SerializeToString() for _ in range(3)]
    tfrx.write_records(path, recs)
    status, out, err = run(capsys, "inspect", path, "-n", "1")
    assert out == str(tfrx.train.SequenceExample.FromString(recs[0]))
    status, out, err = run(capsys, "schema", "--json", path)
    spec = tfrx.features_from_json(out)
    assert isinstance(spec, tuple) and "tok" in spec[1]
    status, out, err = run(capsys, "stats", "--json", path)
    stats = json.loads(out)
    assert stats["payload"] == "SequenceExample"
    (tok,) = stats["feature_lists"]
    assert tok["steps"] == {"min": 2, "max": 2, "mean": 2.0} and tok["num_values"]["max"] == 3


# ------------------------------------------------------------------ count, schema, stats
def test_count(capsys, tmp_path, examples_file):
    gz = tmp_path / "data.tfrecord.gz"
    tfrx.write_records(gz, list(tfrx.read_records(examples_file))[:7], compression="gzip")
    status, out, err = run(capsys, "count", examples_file, gz)
    assert out == f"30\t{examples_file}\n7\t{gz}\n37\ttotal\n"
    status, out, err = run(capsys, "count", "--total", str(tmp_path / "*.tfrecord*"))
    assert out == "37\n"


def test_schema_python_code_runs(capsys, examples_file):
    status, out, err = run(capsys, "schema", examples_file)
    assert status == 0
    namespace = {}
    exec(out, namespace)
    features = namespace["features"]
    assert features == tfrx.infer_features(examples_file)
    parsed = tfrx.parse_example(list(tfrx.read_records(examples_file)), features)
    assert parsed["id"].tolist() == list(range(30))


def test_schema_json_round_trips(capsys, examples_file):
    status, out, err = run(capsys, "schema", "--json", examples_file)
    assert tfrx.features_from_json(out) == tfrx.infer_features(examples_file)


def test_stats(capsys, examples_file):
    status, out, err = run(capsys, "stats", "--json", examples_file)
    stats = json.loads(out)
    by = {f["name"]: f for f in stats["features"]}
    assert stats["records"] == 30
    assert by["id"]["values"] == {"min": 0.0, "max": 29.0, "mean": 14.5, "nan": 0}
    assert by["score"]["num_values"] == {"min": 2, "max": 2, "mean": 2.0}
    assert by["name"]["top"][0] == ["item 0", 10] and by["name"]["kind"] == "bytes"
    status, out, err = run(capsys, "stats", examples_file)
    assert status == 0 and "30 records (Example)" in out and "'item 0'x10" in out


# ------------------------------------------------------------------ verify
def test_verify_lists_each_corruption(capsys, tmp_path, examples_file):
    status, out, err = run(capsys, "verify", examples_file)
    assert status == 0 and out.startswith("OK\t30 records")
    offsets = [int(o) for o in next(tfrx.RecordReader(examples_file).iter_batches()).file_offsets]
    _damage(examples_file, offsets[3] + 14)  # data of record 3
    _damage(examples_file, offsets[20] + 13)  # data of record 20
    status, out, err = run(capsys, "verify", examples_file)
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("DAMAGED\t28 readable records, 2 damaged regions")
    assert f"data_crc at byte {offsets[3]} (record 3)" in lines[1]
    assert f"data_crc at byte {offsets[20]} " in lines[2]
    assert "on_error" not in out


def test_verify_subprocess_exit_status(tmp_path, examples_file):
    env = dict(os.environ, PYTHONPATH=SRC)
    good = subprocess.run(
        [sys.executable, "-m", "tfrx", "verify", str(examples_file)], capture_output=True, env=env, timeout=60
    )
    assert good.returncode == 0
    data = examples_file.read_bytes()
    (tmp_path / "cut.tfrecord").write_bytes(data[:-5])
    bad = subprocess.run(
        [sys.executable, "-m", "tfrx", "verify", str(tmp_path / "cut.tfrecord")],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert bad.returncode == 1 and b"truncated" in bad.stdout and not bad.stderr


# ------------------------------------------------------------------ reshard
@pytest.mark.parametrize(
    "how", [["--num-shards", "4"], ["--max-records-per-shard", "7"], ["--max-bytes-per-shard", "300"]]
)
def test_reshard_round_trip(capsys, tmp_path, examples_file, how):
    first = tmp_path / "first"
    status, out, err = run(capsys, "reshard", examples_file, "-o", first, *how, "--output-compression", "gzip")
    assert status == 0, err
    shards = out.split()
    assert all("-of-" in s for s in shards)
    assert json.loads((tmp_path / ".tfrx" / "first.manifest.json").read_text())["num_records"] == 30
    status, out, err = run(capsys, "reshard", *shards, "-o", tmp_path / "back")
    (merged,) = out.split()
    assert list(tfrx.read_records(merged)) == list(tfrx.read_records(examples_file))
    assert merged.endswith("back.tfrecord-00000-of-00001")


def test_reshard_rejects_two_limits(capsys, tmp_path, examples_file):
    status, out, err = run(
        capsys, "reshard", examples_file, "-o", tmp_path / "x", "--num-shards", "2", "--max-records-per-shard", "3"
    )
    assert status == 2 and "not both" in err


# ------------------------------------------------------------------ convert and preview
@pytest.fixture
def image_folder(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    root = tmp_path / "photos"
    for c, cls in enumerate(["ant", "bee"]):
        (root / cls).mkdir(parents=True)
        for i in range(3):
            arr = np.full((12 + i, 16, 3), 60 * (c + i), np.uint8)
            Image.fromarray(arr).save(root / cls / f"{i}.png")
    return root


def test_convert_images_then_preview(capsys, tmp_path, image_folder):
    Image = pytest.importorskip("PIL.Image")
    (image_folder / "bee" / "bad.jpg").write_bytes(b"\xff\xd8 not really")
    status, out, err = run(capsys, "convert", image_folder, tmp_path / "out" / "photos-train", "--num-shards", "2")
    assert status == 2 and "bad.jpg" in err and err.count("\n") == 1
    status, out, err = run(
        capsys, "convert", image_folder, tmp_path / "out" / "photos-train", "--num-shards", "2", "--on-error", "skip"
    )
    assert status == 0, err
    assert "6 records written to 2 file(s), 1 inputs skipped" in err and "bad.jpg" in err
    shards = out.split()
    status, out, err = run(capsys, "verify", *shards)
    assert status == 0
    grid = tmp_path / "grid.png"
    status, out, err = run(capsys, "preview", *shards, "-o", grid, "-n", "4", "--cell", "32")
    assert status == 0, err
    with Image.open(grid) as im:
        assert im.size == (64, 2 * (32 + 14))
    assert "labels from 'image/class/text'" in err


def test_preview_needs_images(capsys, tmp_path, examples_file):
    status, out, err = run(capsys, "preview", examples_file, "-o", tmp_path / "g.png")
    assert status == 2 and "--image-key" in err


def test_convert_csv_and_back(capsys, tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("a,b\n1,x\n2,y\n3\n")
    with pytest.warns(UserWarning, match="line 4: 1 fields"):
        status, out, err = run(capsys, "convert", src, tmp_path / "t", "--on-error", "warn")
    assert status == 0 and "2 records" in err and "1 inputs skipped" in err
    status, out, err = run(capsys, "convert", *out.split(), tmp_path / "t.jsonl")
    assert status == 0
    assert [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()] == [
        {"a": [1], "b": ["x"]},
        {"a": [2], "b": ["y"]},
    ]
    status, out, err = run(capsys, "convert", tmp_path / "t.jsonl", tmp_path / "u", "--spec", '{"a": "float"}')
    assert status == 0
    assert tfrx.decode_example(next(iter(tfrx.read_records(out.split()))))["a"].dtype == np.float32


def test_convert_compression_flags_mean_what_they_mean_everywhere(capsys, tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("a\n1\n2\n")
    status, out, _ = run(capsys, "convert", src, tmp_path / "gz", "--output-compression", "gzip")
    (shard,) = out.split()
    assert status == 0 and open(shard, "rb").read(2) == b"\x1f\x8b"
    # --compression is the TFRecord input's compression, as in count, verify, reshard ...
    status, _, _ = run(capsys, "convert", shard, tmp_path / "t.jsonl", "--compression", "gzip")
    assert status == 0 and len((tmp_path / "t.jsonl").read_text().splitlines()) == 2
    status, _, err = run(capsys, "convert", shard, tmp_path / "u.jsonl", "--compression", "none")
    assert status != 0 and "GZIP" in err
    # the former spellings: one release more, with a warning
    with pytest.warns(FutureWarning, match="pass --output-compression zlib for the TFRecord output"):
        status, out, _ = run(capsys, "convert", src, tmp_path / "zl", "--compression", "zlib")
    (shard,) = out.split()
    assert status == 0 and tfrx.io.detect_compression(open(shard, "rb").read(12)) == "ZLIB"
    with pytest.warns(FutureWarning, match="--input-compression is deprecated.*pass --compression"):
        status, _, _ = run(capsys, "convert", shard, tmp_path / "v.jsonl", "--input-compression", "zlib")
    assert status == 0


def test_convert_usage_errors(capsys, tmp_path):
    status, out, err = run(capsys, "convert", tmp_path / "missing.csv", tmp_path / "o")
    assert status == 2 and "missing.csv" in err
    src = tmp_path / "t.csv"
    src.write_text("a\n1\n")
    status, out, err = run(capsys, "convert", src, tmp_path / "o", "--spec", "{nope")
    assert status == 2 and "--spec is not valid JSON" in err
    status, out, err = run(capsys, "convert", src, tmp_path / "o.parquet")
    assert status == 2 and "converts to TFRecord only" in err


def test_demo_delegates_to_tfrx_demo(capsys):
    status, out, err = run(capsys, "demo", "--help")
    assert status == 0 and "--records" in out and "--framework" in out


def test_console_entry_point_subprocess():
    env = dict(os.environ, PYTHONPATH=SRC)
    p = subprocess.run([sys.executable, "-m", "tfrx", "--version"], capture_output=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout.decode().startswith("tfrx ")


def test_index_command(capsys, tmp_path, examples_file):
    if not hasattr(tfrx, "build_index"):
        status, out, err = run(capsys, "index", examples_file)
        assert status == 2 and "build_index" in err
        return
    status, out, err = run(capsys, "index", examples_file)
    assert status == 0, err
    assert out.startswith(f"{examples_file}\t30 records")
    status, out, err = run(capsys, "index", examples_file, "--format", "dali", "-o", tmp_path / "x.idx")
    assert status == 0 and (tmp_path / "x.idx").exists()


def test_progress_bars_respect_non_tty(monkeypatch, capsys):
    from tfrx import _progress as progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    bar = progress.progress_bar(10)
    assert isinstance(bar, progress._Silent)
    assert isinstance(progress.progress_bar(10, enabled=False), progress._Silent)
    pytest.importorskip("tqdm")
    forced = progress.progress_bar(10, enabled=True)
    forced.update(3)
    forced.close()
    assert type(forced).__name__ != "_Silent"


def test_progress_without_tqdm(monkeypatch):
    from tfrx import _progress as progress

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.warns(UserWarning, match="needs tqdm"):  # asked for explicitly: said, not silently dropped
        assert isinstance(progress.progress_bar(10, enabled=True), progress._Silent)
    assert isinstance(progress.progress_bar(10, enabled=None), progress._Silent)


def test_json_floats_are_float32_exact(capsys, tmp_path):
    path = tmp_path / "f.tfrecord"
    values = np.array([0.1, 1 / 3, 1e-30, -2.5], np.float32)
    tfrx.write_examples(path, [{"x": values}])
    status, out, err = run(capsys, "inspect", "--json", path)
    assert json.loads(out) == {"x": [0.1, 0.33333334, 1e-30, -2.5]}
    assert np.array_equal(np.array(json.loads(out)["x"], np.float32), values)


def test_parquet_without_pyarrow_is_a_clear_error(capsys, monkeypatch, tmp_path, examples_file):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    status, out, err = run(capsys, "convert", examples_file, tmp_path / "x.parquet")
    assert status == 2
    assert err == "tfrx convert: error: Parquet needs pyarrow: pip install 'tfrx[arrow]'\n"
