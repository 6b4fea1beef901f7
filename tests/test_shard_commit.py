"""No silently incomplete shard sets: readers check -NNNNN-of-MMMMM sets and commit journals, and a
writer killed at any step of its commit leaves a state every reader reads completely or refuses."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import tfrx
from tfrx.tools import ShardedWriter

N_SHARDS = 3
N_RECORDS = 30
TEMPLATE = "{prefix}-part{index}.tfrecord"  # no count in the names: only the journal tells


def _records(n=N_RECORDS):
    return [b"record %04d" % i for i in range(n)]


def _all_items(ds):
    return [ds[i] for i in range(len(ds))]


def _readers(pattern, **opts):
    """Every tfrx reader that takes a pattern, each returning the records it reads."""
    readers = {
        "read_records": lambda: list(tfrx.read_records(pattern, **opts)),
        "RecordReader": lambda: list(tfrx.RecordReader(pattern, **opts)),
        "TFRecordDataset": lambda: list(tfrx.data.TFRecordDataset(pattern, **opts).as_numpy_iterator()),
        "list_files": lambda: list(
            tfrx.data.Dataset.list_files(pattern, shuffle=False, **opts)
            .flat_map(tfrx.data.TFRecordDataset)
            .as_numpy_iterator()
        ),
        "RandomAccessDataset": lambda: _all_items(tfrx.RandomAccessDataset(pattern, **opts)),
        "count_records": lambda: [None] * tfrx.count_records(pattern, **opts),
    }
    if "storage_options" in opts:  # list_files takes no storage options (as tf.data's)
        del readers["list_files"], readers["count_records"]
    return readers


# ------------------------------------------------------------------ the reader-side checks
def _write_set(folder, prefix="train", naming="tfds", n=N_RECORDS):
    with ShardedWriter(folder / prefix, num_shards=N_SHARDS, naming=naming) as w:
        w.write_many(_records(n))
    return w.paths


def test_missing_tfds_shard_is_named(tmp_path):
    paths = _write_set(tmp_path)
    os.remove(paths[1])
    for pattern in (str(tmp_path / "train*"), str(tmp_path / "*-of-*"), [str(tmp_path / "*-of-*"), paths[0]]):
        for name, read in _readers(pattern).items():
            with pytest.raises(tfrx.IncompleteShardSetError, match="1 of the 3|2 of the 3") as e:
                read()
            assert e.value.missing == [paths[1]], name
            assert "train.tfrecord-00001-of-00003" in str(e.value) and "require_all_shards=False" in str(e.value)
            assert isinstance(e.value, FileNotFoundError)
    # turned off explicitly: the shards that are there
    for name, read in _readers(str(tmp_path / "train*"), require_all_shards=False).items():
        assert len(read()) == 20, name
    # one shard named on its own is one file, not a set; an explicit list of some shards (a held-out
    # shard, one host's part) is what was asked for
    assert len(list(tfrx.read_records(paths[0]))) == 10
    for name, read in _readers([paths[0], paths[2]]).items():
        assert len(read()) == 20, name


def test_stale_set_mixed_into_a_glob(tmp_path):
    _write_set(tmp_path)
    with ShardedWriter(tmp_path / "train", num_shards=2) as w:  # rewritten with 2 shards, old ones left
        w.write_many(_records())
    with pytest.raises(tfrx.IncompleteShardSetError, match="mix shard sets of different sizes") as e:
        list(tfrx.read_records(str(tmp_path / "train.tfrecord-*")))
    assert "-of-00002 (2 files)" in str(e.value) and "-of-00003 (3 files)" in str(e.value)
    assert len(list(tfrx.read_records(str(tmp_path / "train.tfrecord-*-of-00002")))) == N_RECORDS


def test_cli_refuses_an_incomplete_set(tmp_path, capsys):
    from tfrx.cli import main

    paths = _write_set(tmp_path)
    os.remove(paths[2])
    assert main(["count", str(tmp_path / "train*")]) != 0
    assert "train.tfrecord-00002-of-00003" in capsys.readouterr().err
    assert main(["count", "--allow-incomplete", str(tmp_path / "train*")]) == 0


# ------------------------------------------------------------------ killing the writer at each step
_KILL_SCRIPT = textwrap.dedent(
    """
    import os, sys
    import tfrx.io._commit as commit
    from tfrx.tools import ShardedWriter

    folder, naming, stop = sys.argv[1], sys.argv[2], int(sys.argv[3])
    steps = []

    def before(step):
        steps.append(step)
        if len(steps) == stop:
            os._exit(17)  # dies here: no cleanup, no exception handler runs

    commit._before_step = before
    with ShardedWriter(os.path.join(folder, "train"), num_shards=3, naming=naming, index=True) as w:
        w.write_many([b"record %04d" % i for i in range(30)])
    print(len(steps))
    """
)


def _run(folder, naming, stop):
    src = os.path.dirname(os.path.dirname(os.path.abspath(tfrx.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-c", _KILL_SCRIPT, str(folder), naming, str(stop)],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )


def _check_every_reader(patterns, new, old, *, step, **opts):
    """Each reader reads all of the new set, all of the old one, or raises; returns which (all readers agree)."""
    outcomes = set()
    for pattern in patterns:
        for name, read in _readers(pattern, **opts).items():
            try:
                got = read()
            except tfrx.IncompleteShardSetError:
                outcomes.add("refused")
                continue
            except FileNotFoundError:  # nothing under a final name: the glob matches nothing
                outcomes.add("nothing")
                continue
            if name == "count_records":
                assert len(got) == N_RECORDS, (step, pattern, name)
                continue
            assert sorted(got) in (new, old), (step, pattern, name, got)
            outcomes.add("complete" if sorted(got) == new else "old")
    assert len(outcomes) == 1, (step, outcomes)
    return outcomes.pop()


@pytest.mark.parametrize("naming", ["tfds", TEMPLATE])
def test_writer_killed_at_each_step_of_close(tmp_path, naming):
    full = _run(tmp_path / "full", naming, 0)
    assert full.returncode == 0, full.stderr.decode()
    n_steps = int(full.stdout)
    # journal, clear, one move per shard, index, manifest, unjournal
    assert n_steps == 3 + N_SHARDS + 2
    new, old = _records(), sorted(b"old %04d" % i for i in range(N_RECORDS))
    seen = []
    for stop in range(1, n_steps + 1):
        folder = tmp_path / f"stop{stop}"
        folder.mkdir()
        # a complete older set under the same names: a killed commit must not pass off a mix of old and
        # new shards as a whole set
        with ShardedWriter(folder / "train", num_shards=N_SHARDS, naming=naming) as w:
            w.write_many(old)
        proc = _run(folder, naming, stop)
        assert proc.returncode == 17, proc.stderr.decode()
        patterns = [str(folder / "train*")]
        patterns += (
            [str(folder / "*-of-*"), str(folder / "*.tfrecord*")] if naming == "tfds" else [str(folder / "*.tfrecord")]
        )
        seen.append(_check_every_reader(patterns, new, old, step=stop))
    # killed before the old set is cleared: the old set, whole; after: nothing, then refused while shards
    # move, then the new set, whole (only the index, the manifest or the journal's removal missing)
    assert seen == ["old", "old", "nothing"] + ["refused"] * (N_SHARDS - 1) + ["complete"] * 3


def test_writer_killed_during_an_s3_commit(s3, tmp_path, monkeypatch):
    """On an object store a move is a copy and a delete; a commit stopped at any step is still detected."""
    from conftest import S3_BUCKET

    from tfrx.io import _commit as commit

    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    opts = s3.storage_options()
    expected = _records()
    seen = []
    for stop in range(1, 3 + N_SHARDS + 2 + 1):
        steps = []

        def before(step, stop=stop, steps=steps):
            steps.append(step)
            if len(steps) == stop:
                raise KeyboardInterrupt(step)  # as a process stopped there: nothing after runs

        monkeypatch.setattr(commit, "_before_step", before)
        prefix = f"s3://{S3_BUCKET}/killed-{stop}"
        with pytest.raises(KeyboardInterrupt):
            with ShardedWriter(f"{prefix}/train", num_shards=N_SHARDS, index=True, storage_options=opts) as w:
                w.write_many(expected)
        monkeypatch.undo()
        monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
        seen.append(
            _check_every_reader(
                [f"{prefix}/train*", f"{prefix}/*-of-*"], expected, expected, step=stop, storage_options=opts
            )
        )
    assert seen == ["nothing"] * 3 + ["refused"] * (N_SHARDS - 1) + ["complete"] * 3
