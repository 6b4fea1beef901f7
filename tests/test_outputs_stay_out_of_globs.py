"""Every kind of output tfrx writes leaves only record files where a glob of the records looks.

TensorFlow's ``TFRecordDataset("out*")`` (and ``tf.io.gfile.glob``, DALI's, fsspec's)
lists every entry a pattern matches, dot files included: a metadata, index or manifest
file beside the records would be read as a damaged record file. So each writer below
runs in its own folder and ``<prefix>*`` (and ``<prefix>.tfrecord*``) are matched against
the folder's full listing, hidden entries included; every match must be a record file
that reads whole.
"""

from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path

import numpy as np
import pytest

import tfrx
from tfrx.cli import main as cli_main
from tfrx.tools import ShardedWriter

BERT = Path(__file__).resolve().parent / "golden" / "bert"


def _matches(folder: Path, pattern: str) -> list[str]:
    """What a glob that does not hide dot files matches: fnmatch over the folder's whole listing."""
    return sorted(name for name in os.listdir(folder) if fnmatch.fnmatchcase(name, pattern))


def _assert_only_records(folder: Path, prefix: str, expected_files: int) -> None:
    for pattern in (f"{prefix}*", f"{prefix}.tfrecord*"):
        names = _matches(folder, pattern)
        if pattern == f"{prefix}*":
            assert len(names) == expected_files, names
        for name in names:
            data = (folder / name).read_bytes()
            compression = "GZIP" if data[:2] == b"\x1f\x8b" else ""
            assert not name.endswith((".json", ".tfrxidx", ".idx", ".part", ".tmp")), names
            list(tfrx.read_records(str(folder / name), compression=compression))  # every byte in whole records


def _rows(n: int) -> list[dict]:
    return [{"id": i, "name": f"row {i}", "score": [0.5 * i]} for i in range(n)]


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    tfrx.write_examples(src / "in.tfrecord", _rows(30))
    return src / "in.tfrecord"


def test_tfrecord_writer(tmp_path):
    out = tmp_path / "w"
    out.mkdir()
    with tfrx.TFRecordWriter(str(out / "data.tfrecord")) as w:
        w.write(b"x")
    with tfrx.TFRecordWriter(str(out / "data.tfrecord.gz"), "GZIP") as w:
        w.write(b"y")
    _assert_only_records(out, "data", 2)


def test_sharded_writer_and_its_manifest(tmp_path):
    out = tmp_path / "s"
    out.mkdir()
    with ShardedWriter(str(out / "train"), num_shards=3) as w:
        for i in range(10):
            w.write(b"%d" % i)
    assert any(name.endswith(".manifest.json") for name in os.listdir(out / ".tfrx"))
    _assert_only_records(out, "train", 3)


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_bert_data_and_its_metadata(tmp_path, mode):
    out = tmp_path / "b"
    out.mkdir()
    from tfrx.text import create_pretraining_data

    common = dict(mode=mode, max_seq_length=32, max_predictions_per_seq=4, dupe_factor=1)
    create_pretraining_data(BERT / "corpus_a.txt", BERT / "vocab.txt", str(out / "bert"), num_shards=2, **common)
    create_pretraining_data(BERT / "corpus_a.txt", BERT / "vocab.txt", [str(out / "ref.tfrecord")], **common)
    assert sorted(n for n in os.listdir(out / ".tfrx") if n.endswith(".bert.json")) == [
        "bert.bert.json",
        "ref.tfrecord.bert.json",
    ]
    _assert_only_records(out, "bert", 2)
    _assert_only_records(out, "ref", 1)
    assert len(list(tfrx.TFRecordDataset(str(out / "ref.tfrecord*")))) > 0


def test_bert_data_command(tmp_path):
    out = tmp_path / "bc"
    argv = [
        "bert-data",
        str(BERT / "corpus_a.txt"),
        "--vocab_file",
        str(BERT / "vocab.txt"),
        "-o",
        str(out / "train"),
        "--num-shards",
        "2",
        "--max_seq_length",
        "32",
        "--dupe_factor",
        "1",
    ]
    assert cli_main(argv) == 0
    assert (out / ".tfrx" / "train.bert.json").exists()
    _assert_only_records(out, "train", 2)


def test_reshard_convert_and_index_commands(tmp_path, capsys):
    source = _source(tmp_path)
    out = tmp_path / "cli"
    assert cli_main(["reshard", str(source), "-o", str(out / "rs"), "--num-shards", "2"]) == 0
    assert cli_main(["reshard", str(source), "-o", str(out / "gz"), "--output-compression", "gzip"]) == 0
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in _rows(12)))
    assert cli_main(["convert", str(jsonl), str(out / "cv"), "--num-shards", "2"]) == 0
    shard = sorted(out.glob("rs*"))[0]
    assert cli_main(["index", str(shard)]) == 0
    assert cli_main(["index", "--format", "dali", str(shard)]) == 0
    capsys.readouterr()
    _assert_only_records(out, "rs", 2)
    _assert_only_records(out, "gz", 1)
    _assert_only_records(out, "cv", 2)


def test_python_index_and_random_access(tmp_path):
    from tfrx.index import build_index, default_index_path, write_index

    out = tmp_path / "ra"
    out.mkdir()
    tfrx.write_examples(out / "data.tfrecord", _rows(20))
    index = build_index(str(out / "data.tfrecord"))
    write_index(index, default_index_path(str(out / "data.tfrecord")))
    ds = tfrx.RandomAccessDataset(str(out / "data.tfrecord"))
    assert len(ds) == 20
    _assert_only_records(out, "data", 1)


def test_tfds_write(tmp_path):
    from tfrx import tfds

    root = tmp_path / "toy" / "1.0.0"
    tfds.write(root, features={"x": np.int64}, splits={"train": [{"x": i} for i in range(10)]}, shard_size=4)
    prefix = next(n for n in os.listdir(root) if n.endswith("-train.tfrecord-00000-of-00003")).split(".tfrecord")[0]
    _assert_only_records(root, prefix, 3)
