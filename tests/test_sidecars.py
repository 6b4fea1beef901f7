"""Files tfrx writes beside data never match shard patterns, and are refused when named as data."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from pathlib import Path

import pytest

import tfrx
from tfrx.tools import ShardedWriter

# Patterns users write for shards (tfrx, TensorFlow, DALI, TFDS tutorials).
PATTERNS = ["train*", "train.tfrecord-*", "*-of-*", "*.tfrecord*", "train.tfrecord-?????-of-00003"]


def _records(n):
    return [b"record %04d" % i for i in range(n)]


@pytest.fixture
def indexed(tmp_path):
    """Three shards written with every sidecar tfrx writes: indexes, manifest; plus indexes built on read."""
    recs = _records(30)
    with ShardedWriter(tmp_path / "train", num_shards=3, index=True) as w:
        w.write_many(recs)
    tfrx.count_records(w.paths)
    tfrx.build_index(w.paths[0], format="dali")
    return tmp_path, w.paths, recs


def _all_files(folder):
    """Every file and folder under ``folder``, relative to it."""
    out = []
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            out.append(os.path.relpath(os.path.join(root, name), folder))
    return out


def test_no_sidecar_matches_a_shard_pattern(indexed):
    folder, paths, _ = indexed
    shards = sorted(os.path.basename(p) for p in paths)
    everything = _all_files(folder)
    assert len(everything) > len(shards) + 3  # the sidecars are there
    for pattern in PATTERNS:
        # Glob semantics of TensorFlow's and fsspec's globs: a folder's entries, dot files included
        # (fnmatchcase does not hide them), "*" never crossing a "/".
        top = sorted(n for n in os.listdir(folder) if fnmatch.fnmatchcase(n, pattern))
        assert top == shards, pattern


def test_readers_read_exactly_the_shards(indexed):
    folder, paths, recs = indexed
    for pattern in [*PATTERNS, "*"]:
        glob = str(folder / pattern)
        assert sorted(tfrx.read_records(glob)) == recs, pattern
        assert sorted(tfrx.data.TFRecordDataset(glob).as_numpy_iterator()) == recs, pattern
        assert sorted(tfrx.data.Dataset.list_files(glob, shuffle=False).as_numpy_iterator()) == sorted(
            p.encode() for p in paths
        ), pattern
        assert tfrx.count_records(glob) == 30, pattern
        ds = tfrx.RandomAccessDataset(glob)
        assert sorted(ds[i] for i in range(len(ds))) == recs, pattern


def test_legacy_sidecars_beside_the_data_are_skipped_and_still_load(indexed):
    folder, paths, recs = indexed
    # As earlier versions left them: <shard>.tfrxidx and <prefix>.manifest.json beside the shards.
    for p in paths:
        side = os.path.join(folder, ".tfrx", os.path.basename(p) + ".tfrxidx")
        shutil.move(side, p + ".tfrxidx")
    shutil.move(folder / ".tfrx" / "train.manifest.json", folder / "train.manifest.json")
    for pattern in PATTERNS:
        assert sorted(tfrx.read_records(str(folder / pattern))) == recs, pattern
    # the old index is found and used (not rebuilt into .tfrx/)
    ix = tfrx.load_index(paths[1], build=False)
    assert len(ix) == 10
    assert not os.path.exists(os.path.join(folder, ".tfrx", os.path.basename(paths[1]) + ".tfrxidx"))


@pytest.mark.parametrize("which", ["index", "legacy index", "manifest", "legacy manifest", "folder"])
def test_a_sidecar_named_explicitly_says_what_it_is(indexed, which):
    folder, paths, _ = indexed
    side = {
        "index": os.path.join(folder, ".tfrx", os.path.basename(paths[0]) + ".tfrxidx"),
        "legacy index": paths[0] + ".tfrxidx",
        "manifest": os.path.join(folder, ".tfrx", "train.manifest.json"),
        "legacy manifest": os.path.join(folder, "train.manifest.json"),
        "folder": os.path.join(folder, ".tfrx"),
    }[which]
    if which.startswith("legacy"):
        shutil.copy(os.path.join(folder, ".tfrx", os.path.basename(side)), side)
    kind = which.split()[-1] if which != "folder" else "sidecar directory"
    for read in (
        lambda: list(tfrx.read_records(side)),
        lambda: tfrx.RecordReader(side),
        lambda: tfrx.data.TFRecordDataset(side),
        lambda: tfrx.data.Dataset.list_files(side),
        lambda: tfrx.RandomAccessDataset(side),
        lambda: tfrx.count_records([paths[1], side]),
    ):
        with pytest.raises(tfrx.SidecarFileError, match="is not a TFRecord file") as e:
            read()
        assert e.value.kind == kind and e.value.path == side
        assert isinstance(e.value, ValueError)
    if which.endswith("index"):
        assert "read " + repr(paths[0]) in str(e.value)  # names the data file it belongs to


def test_a_glob_of_sidecars_only_says_so(indexed):
    folder, _, _ = indexed
    with pytest.raises(FileNotFoundError, match="only files tfrx keeps"):
        list(tfrx.read_records(str(folder / ".tfrx" / "*")))


def test_uncommitted_part_files_may_be_read_explicitly(tmp_path):
    w = ShardedWriter(tmp_path / "t", max_records_per_shard=5)
    w.write_many(_records(12))
    # two shards complete under their ".part" names, as a killed writer leaves them
    parts = sorted(str(p) for p in (tmp_path / ".tfrx").glob("*.part"))
    assert len(parts) == 2
    assert list(tfrx.read_records(parts[0])) == _records(5)  # recovering a killed writer's output
    with pytest.raises(FileNotFoundError):
        list(tfrx.read_records(str(tmp_path / "t*")))  # never part of the data set
    w.abort()


GOLDEN = json.loads((Path(__file__).parent / "golden" / "glob" / "tf_glob.json").read_text())


def _layout(folder):
    for name in GOLDEN["files"]:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()


def test_tensorflow_glob_golden(tmp_path):
    """What TensorFlow's glob matched (tests/golden/glob/make_glob_golden.py) reaches nothing in .tfrx/."""
    shards = [n for n in GOLDEN["files"] if "/" not in n and n.endswith("-of-00003")]
    legacy = {"train.manifest.json", shards[0] + ".tfrxidx", ".train-00001.part"}
    top = sorted({n.split("/")[0] for n in GOLDEN["files"]})
    for pattern, matched in GOLDEN["matches"].items():
        assert not [m for m in matched if "/" in m], pattern  # nothing inside the sidecar folder
        assert (".tfrx" in matched) == (pattern == "*"), pattern  # the folder itself only for a bare "*"
        assert sorted(set(matched) - legacy - {".tfrx"}) == shards, pattern
        # the model of such globs used in test_no_sidecar_matches_a_shard_pattern is TensorFlow's
        assert sorted(n for n in top if fnmatch.fnmatchcase(n, pattern)) == matched, pattern
    # tfrx's readers, on the same folder, list the shards only (also for a bare "*")
    _layout(tmp_path)
    from tfrx.io._data_files import expand_paths

    for pattern in GOLDEN["matches"]:
        assert [os.path.basename(p) for p in expand_paths(str(tmp_path / pattern))] == shards, pattern


def test_tensorflow_glob_oracle(tmp_path, tf):
    _layout(tmp_path)
    for pattern, matched in GOLDEN["matches"].items():
        got = sorted(os.path.relpath(m, tmp_path) for m in tf.io.gfile.glob(str(tmp_path / pattern)))
        assert got == matched, pattern


def test_tensorflow_reads_what_tfrx_writes_under_shard_patterns(indexed, tf):
    folder, paths, _ = indexed
    for pattern in PATTERNS:
        got = sorted(tf.io.gfile.glob(str(folder / pattern)))
        assert got == sorted(paths), pattern
        assert sum(1 for _ in tf.data.TFRecordDataset(got)) == 30


def test_s3_sidecars(s3, tmp_path, monkeypatch):
    from conftest import S3_BUCKET

    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    opts = s3.storage_options()
    prefix = f"s3://{S3_BUCKET}/sidecars"
    recs = _records(20)
    with ShardedWriter(f"{prefix}/train", num_shards=2, index=True, storage_options=opts) as w:
        w.write_many(recs)
    for pattern in ["train*", "*-of-*", "*.tfrecord*", "*"]:
        assert sorted(tfrx.read_records(f"{prefix}/{pattern}", storage_options=opts)) == recs, pattern
        assert tfrx.RandomAccessDataset(f"{prefix}/{pattern}", storage_options=opts).paths == [str(p) for p in w.paths]
    assert tfrx.tools.read_manifest(f"{prefix}/train", storage_options=opts)["shardLengths"] == [10, 10]
    index = f"{prefix}/.tfrx/train.tfrecord-00000-of-00002.tfrxidx"
    with pytest.raises(tfrx.SidecarFileError, match="record index"):
        tfrx.data.TFRecordDataset(index, storage_options=opts)
