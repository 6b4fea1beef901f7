"""Reading never writes into the data's folder: indexes go to the user's cache, keyed by path, size and mtime."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import warnings
from pathlib import Path

import numpy as np
import pytest
from tfds_helpers import golden_dir

import tfrx
import tfrx.io.index as index_mod
import tfrx.tfds as tt
from tfrx.io.index import index_cache_dir


def _snapshot(folder) -> dict[str, tuple]:
    """Every entry under ``folder`` (hidden ones too) with its size, mtime and contents' hash."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            digest = hashlib.sha256(Path(p).read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            out[os.path.relpath(p, folder)] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def _write(folder: Path, names=("a.tfrecord", "b.tfrecord"), n=20) -> tuple[list[str], list[bytes]]:
    folder.mkdir(parents=True, exist_ok=True)
    paths, recs = [], []
    for k, name in enumerate(names):
        r = [b"%d-%d;" % (k, i) * (i % 7 + 1) for i in range(n)]
        tfrx.write_records(str(folder / name), r)
        paths.append(str(folder / name))
        recs += r
    return paths, recs


@pytest.fixture
def builds(monkeypatch):
    """The paths scanned to build an index, in order (each build scans its file once)."""
    scanned: list[str] = []
    real = index_mod._scan_index  # what scan_index and build_index both call

    def counting(path, *args):
        scanned.append(os.fsdecode(os.fspath(path)))
        return real(path, *args)

    monkeypatch.setattr(index_mod, "_scan_index", counting)
    return scanned


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "index"


def _read_only(folder: Path, monkeypatch) -> None:
    """Makes ``folder`` read-only; as root (whom permissions do not stop) writes into it fail with EROFS."""
    for root, dirs, _ in os.walk(folder):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o555)
    os.chmod(folder, 0o555)
    probe = folder / ".probe"
    try:
        probe.write_bytes(b"")
    except OSError:
        return  # the permissions hold
    probe.unlink()
    real = index_mod.write_index
    inside = str(folder.resolve()) + os.sep

    def refuse(index, index_path, **kwargs):
        if os.path.abspath(os.fsdecode(index_path)).startswith(inside):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(index_path))
        return real(index, index_path, **kwargs)

    monkeypatch.setattr(index_mod, "write_index", refuse)


@pytest.fixture
def restore_permissions(tmp_path):
    yield
    for root, dirs, _ in os.walk(tmp_path):
        os.chmod(root, 0o755)
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)


# ---------------------------------------------------------------- nothing beside the data
def test_random_access_leaves_the_data_folder_unchanged_and_reuses_the_cache(tmp_path, cache, builds):
    paths, recs = _write(tmp_path / "data")
    before = _snapshot(tmp_path / "data")
    ds = tfrx.RandomAccessDataset(str(tmp_path / "data" / "*.tfrecord"))
    assert sorted(ds[i] for i in range(len(ds))) == sorted(recs)
    assert tfrx.count_records(paths) == 40
    assert _snapshot(tmp_path / "data") == before  # byte for byte, no .tfrx/ folder
    assert builds == paths
    assert len(list(cache.iterdir())) == 2
    # A second open, and a new process's view of the same cache, build nothing.
    ds2 = tfrx.RandomAccessDataset(paths)
    assert len(ds2) == 40 and ds2[[39, 0]] == [ds[39], ds[0]]
    assert builds == paths
    assert _snapshot(tmp_path / "data") == before


def test_a_changed_file_is_indexed_again_and_its_old_entry_removed(tmp_path, cache, builds):
    paths, recs = _write(tmp_path / "data")
    assert len(tfrx.RandomAccessDataset(paths)) == 40
    old = sorted(p.name for p in cache.iterdir())
    with open(paths[1], "ab") as f:
        f.write(tfrx._native.frame_records([b"appended"]))
    ds = tfrx.RandomAccessDataset(paths)
    assert len(ds) == 41 and ds[40] == b"appended"
    assert builds == [*paths, paths[1]]  # only the changed file
    new = sorted(p.name for p in cache.iterdir())
    assert len(new) == 2 and [n for n in new if n in old] == [n for n in old if n.endswith("-a.tfrecord.tfrxidx")]
    # Rewritten with the same size: the mtime tells the versions apart.
    recs0 = list(tfrx.read_records(paths[0]))
    tfrx.write_records(paths[0], [bytes(reversed(r)) for r in recs0])
    os.utime(paths[0], ns=(1, 1))
    assert list(tfrx.RandomAccessDataset(paths[0])) == [bytes(reversed(r)) for r in recs0]
    assert builds[-1] == paths[0] and len(builds) == 4


def test_tfds_directory_is_left_unchanged(tmp_path, cache, builds):
    d = tmp_path / "ds"
    shutil.copytree(golden_dir("tfrx_tensors"), d)
    before = _snapshot(d)
    b = tt.builder(str(d))
    src = b.as_data_source("train")
    first = src[[0, len(src) - 1]]
    assert len(list(tt.load(str(d), split="test"))) == 4
    assert _snapshot(d) == before
    n = len(builds)
    assert n >= 1
    again = tt.builder(str(d)).as_data_source("train")
    assert len(again) == len(src)
    np.testing.assert_equal(again[[0, len(src) - 1]], first)
    assert len(builds) == n  # the cached indexes were used


def test_tfds_1x_directory_counts_without_writing(tmp_path, cache, builds):
    """TFDS 1.x wrote only numShards: tfrx counts records through indexes, which go to the cache."""
    d = tmp_path / "ds"
    shutil.copytree(golden_dir("tfrx_tensors"), d)
    info = json.loads((d / "dataset_info.json").read_text())
    for s in info["splits"]:
        s["numShards"] = str(len(s.pop("shardLengths")))
        s.pop("filepathTemplate")
    (d / "dataset_info.json").write_text(json.dumps(info))
    before = _snapshot(d)
    assert tt.builder(str(d)).info.splits["train"].num_examples == 7
    assert _snapshot(d) == before and builds


# ---------------------------------------------------------------- sidecars, when asked
def test_sidecars_only_when_asked(tmp_path, cache, builds):
    paths, _ = _write(tmp_path / "data")
    ds = tfrx.RandomAccessDataset(paths, index="sidecar")
    assert len(ds) == 40
    side = tmp_path / "data" / ".tfrx"
    assert sorted(p.name for p in side.iterdir()) == ["a.tfrecord.tfrxidx", "b.tfrecord.tfrxidx"]
    assert not cache.exists()
    with pytest.raises(ValueError, match='"sidecar"'):
        tfrx.RandomAccessDataset(paths, index="sidecars")


def test_existing_sidecars_are_read_and_stale_ones_left_alone(tmp_path, cache, builds):
    paths, _ = _write(tmp_path / "data")
    for p in paths:
        tfrx.build_index(p, sidecar=True)
    del builds[:]
    before = _snapshot(tmp_path / "data")
    assert len(tfrx.RandomAccessDataset(paths)) == 40
    assert builds == [] and not cache.exists()  # the valid sidecars were used
    with open(paths[0], "ab") as f:
        f.write(tfrx._native.frame_records([b"x"]))
    before = _snapshot(tmp_path / "data")
    assert len(tfrx.RandomAccessDataset(paths)) == 41
    assert builds == [paths[0]] and len(list(cache.iterdir())) == 1
    assert _snapshot(tmp_path / "data") == before  # the stale sidecar was not rewritten
    assert len(tfrx.RandomAccessDataset(paths)) == 41 and builds == [paths[0]]


# ---------------------------------------------------------------- unwritable locations
def test_read_only_data_folder(tmp_path, cache, builds, monkeypatch, restore_permissions):
    paths, recs = _write(tmp_path / "data")
    _read_only(tmp_path / "data", monkeypatch)
    before = _snapshot(tmp_path / "data")
    assert sorted(tfrx.RandomAccessDataset(paths)) == sorted(recs)  # the default writes nothing there
    with pytest.warns(RuntimeWarning, match="beside it.*cached in"):
        ds = tfrx.RandomAccessDataset(paths, index="sidecar", cache_dir=str(tmp_path / "c2"))
    assert len(ds) == 40 and len(os.listdir(tmp_path / "c2")) == 2
    assert _snapshot(tmp_path / "data") == before
    d = tmp_path / "ro-ds"  # the TFDS reader on a read-only dataset directory
    shutil.copytree(golden_dir("tfrx_tensors"), d)
    _read_only(d, monkeypatch)
    assert len(tt.builder(str(d)).as_data_source("train")) == 7


def test_unwritable_cache_keeps_the_index_in_memory(tmp_path, builds, monkeypatch):
    paths, recs = _write(tmp_path / "data")
    (tmp_path / "a-file").write_bytes(b"")
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "a-file" / "cache"))  # under a regular file: no one can write
    before = _snapshot(tmp_path / "data")
    with pytest.warns(RuntimeWarning, match=r"could not keep the index of .*\.tfrecord.*TFRX_CACHE_DIR"):
        ds = tfrx.RandomAccessDataset(paths)
    assert sorted(ds[i] for i in range(len(ds))) == sorted(recs)
    assert _snapshot(tmp_path / "data") == before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        tfrx.RandomAccessDataset(paths)
    assert builds == paths + paths  # nothing cached: built again


def test_explicit_index_path_that_cannot_be_written_raises(tmp_path):
    paths, _ = _write(tmp_path / "data")
    (tmp_path / "a-file").write_bytes(b"")
    with pytest.raises(OSError):
        tfrx.build_index(paths[0], index_path=str(tmp_path / "a-file" / "x.tfrxidx"))


def test_remote_files_are_keyed_by_their_version(tmp_path, cache, builds):
    fsspec = pytest.importorskip("fsspec")
    url = "memory://tfrx-cache-test/r.tfrecord"
    fs = fsspec.filesystem("memory")
    try:
        local = str(tmp_path / "r.tfrecord")
        tfrx.write_records(local, [b"a", b"bb"])
        fs.pipe(url, Path(local).read_bytes())
        assert len(tfrx.RandomAccessDataset(url)) == 2
        assert len(tfrx.RandomAccessDataset(url)) == 2 and builds == [url]
        tfrx.write_records(local, [b"a", b"bb", b"ccc"])
        fs.pipe(url, Path(local).read_bytes())
        assert len(tfrx.RandomAccessDataset(url)) == 3 and builds == [url, url]
        assert len(list(cache.iterdir())) == 1
        assert fs.ls("/tfrx-cache-test", detail=False) == ["/tfrx-cache-test/r.tfrecord"]
    finally:
        fs.rm("/tfrx-cache-test", recursive=True)


def test_the_suite_caches_outside_the_home_folder():
    assert not index_cache_dir().startswith(os.path.join(os.path.expanduser("~"), ".cache"))
    assert os.environ.get("TFRX_TEST_CACHE_OWNER")
