"""ShardedWriter and write_examples: names, spreading, limits, manifest, crash safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tfrx
from tfrx.tools import ShardedWriter, shard_name, write_examples


def _records(n, size=10):
    return [(b"%05d" % i).ljust(size, b"x") for i in range(n)]


def _read(paths):
    return [list(tfrx.read_records(p)) for p in paths]


def test_tfds_names_and_manifest(tmp_path):
    recs = _records(10)
    with ShardedWriter(tmp_path / "mnist-train", num_shards=3) as w:
        w.write_many(recs)
    names = sorted(os.listdir(tmp_path))
    assert names == [
        ".tfrx",
        "mnist-train.tfrecord-00000-of-00003",
        "mnist-train.tfrecord-00001-of-00003",
        "mnist-train.tfrecord-00002-of-00003",
    ]
    assert os.listdir(tmp_path / ".tfrx") == ["mnist-train.manifest.json"]  # no temporaries, no journal left
    assert w.manifest_path == str(tmp_path / ".tfrx" / "mnist-train.manifest.json")
    manifest = json.loads((tmp_path / ".tfrx" / "mnist-train.manifest.json").read_text())
    assert manifest["shardLengths"] == [4, 3, 3]
    assert manifest["num_records"] == 10
    assert [s["name"] for s in manifest["shards"]] == names[1:]
    assert [s["bytes"] for s in manifest["shards"]] == [os.path.getsize(tmp_path / n) for n in names[1:]]
    assert w.paths == [str(tmp_path / n) for n in names[1:]]


def test_round_robin_write_and_write_many_agree(tmp_path):
    recs = _records(11)
    with ShardedWriter(tmp_path / "a", num_shards=4) as w1:
        for r in recs:
            w1.write(r)
    with ShardedWriter(tmp_path / "b", num_shards=4) as w2:
        w2.write_many(recs[:3])
        w2.write_many(tfrx.RecordBatch.from_records(recs[3:]))
    got1, got2 = _read(w1.paths), _read(w2.paths)
    assert got1 == got2 == [recs[k::4] for k in range(4)]


def test_contiguous_with_known_total(tmp_path):
    recs = _records(10)
    with ShardedWriter(tmp_path / "c", num_shards=3, total_records=10) as w:
        w.write_many(recs[:4])
        w.write_many(recs[4:])
    got = _read(w.paths)
    assert [len(g) for g in got] == [4, 3, 3]
    assert sum(got, []) == recs


def test_max_records_per_shard(tmp_path):
    recs = _records(25)
    with ShardedWriter(tmp_path / "d", max_records_per_shard=10) as w:
        w.write_many(recs[:7])
        for r in recs[7:12]:
            w.write(r)
        w.write_many(recs[12:])
    assert [os.path.basename(p) for p in w.paths] == [f"d.tfrecord-0000{i}-of-00003" for i in range(3)]
    got = _read(w.paths)
    assert [len(g) for g in got] == [10, 10, 5]
    assert sum(got, []) == recs


@pytest.mark.parametrize("limit", [26, 60, 100, 1000])
def test_max_bytes_per_shard(tmp_path, limit):
    recs = _records(30, size=10)  # 26 bytes per framed record
    w = ShardedWriter(tmp_path / "e", max_bytes_per_shard=limit)
    w.write_many(recs[:13])
    w.write_many(recs[13:])
    w.close()
    sizes = [os.path.getsize(p) for p in w.paths]
    assert all(s <= limit for s in sizes)
    assert sum(_read(w.paths), []) == recs
    assert len(w.paths) == -(-30 // max(1, limit // 26))


def test_oversized_record_gets_its_own_shard(tmp_path):
    recs = [b"a" * 10, b"b" * 500, b"c" * 10]
    with ShardedWriter(tmp_path / "f", max_bytes_per_shard=100) as w:
        w.write_many(recs)
    assert _read(w.paths) == [[recs[0]], [recs[1]], [recs[2]]]


def test_read_manifest_new_and_legacy_location(tmp_path):
    with ShardedWriter(tmp_path / "t", num_shards=2) as w:
        w.write_many(_records(5))
    assert tfrx.tools.read_manifest(tmp_path / "t") == w.manifest
    os.replace(w.manifest_path, tmp_path / "t.manifest.json")  # where earlier versions wrote it
    assert tfrx.tools.read_manifest(str(tmp_path / "t"))["shardLengths"] == [3, 2]
    with pytest.raises(FileNotFoundError, match="no manifest"):
        tfrx.tools.read_manifest(tmp_path / "other")


def test_compression_and_template(tmp_path):
    recs = _records(6)
    tmpl = "{prefix}-{index:03d}-of-{total:03d}.tfrecord.gz"
    with ShardedWriter(tmp_path / "g", num_shards=2, compression="gzip", naming=tmpl) as w:
        w.write_many(recs)
    assert sorted(os.listdir(tmp_path)) == [".tfrx", "g-000-of-002.tfrecord.gz", "g-001-of-002.tfrecord.gz"]
    assert os.listdir(tmp_path / ".tfrx") == ["g.manifest.json"]
    with open(w.paths[0], "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    assert _read(w.paths) == [recs[0::2], recs[1::2]]
    assert w.manifest["compression"] == "GZIP"


def test_single_shard_by_default(tmp_path):
    with ShardedWriter(tmp_path / "h") as w:
        w.write_many(_records(3))
    assert [os.path.basename(p) for p in w.paths] == ["h.tfrecord-00000-of-00001"]


def test_exception_removes_temporary_files(tmp_path):
    with pytest.raises(RuntimeError):
        with ShardedWriter(tmp_path / "i", max_records_per_shard=2) as w:
            w.write_many(_records(5))
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_shards": 0},
        {"num_shards": 2, "max_records_per_shard": 3},
        {"max_bytes_per_shard": -1},
        {"naming": "{prefix}-{nope}"},
        {"naming": "{prefix}-shard"},
    ],
)
def test_bad_arguments(tmp_path, kwargs):
    with pytest.raises(ValueError):
        ShardedWriter(tmp_path / "j", **kwargs)


def test_write_after_close(tmp_path):
    w = ShardedWriter(tmp_path / "k")
    w.close()
    with pytest.raises(ValueError):
        w.write(b"x")
    with pytest.raises(TypeError):
        ShardedWriter(tmp_path / "l").write("text")


def test_shard_name():
    assert shard_name("data/mnist-train", 3, 16) == "data/mnist-train.tfrecord-00003-of-00016"


def test_index_sidecars(tmp_path):
    if not hasattr(tfrx, "build_index"):
        with pytest.raises(tfrx.TfrxError, match="build_index"):
            ShardedWriter(tmp_path / "m", index=True)
        return
    with ShardedWriter(tmp_path / "m", num_shards=2, index=True) as w:
        w.write_many(_records(4))
    assert sorted(os.listdir(tmp_path)) == [".tfrx", "m.tfrecord-00000-of-00002", "m.tfrecord-00001-of-00002"]
    assert sorted(os.listdir(tmp_path / ".tfrx")) == [
        "m.manifest.json",
        "m.tfrecord-00000-of-00002.tfrxidx",
        "m.tfrecord-00001-of-00002.tfrxidx",
    ]
    # the usual patterns read the shards only, and the indexes are found
    assert list(tfrx.read_records(str(tmp_path / "m*"))) == list(tfrx.read_records(w.paths))
    assert tfrx.count_records(str(tmp_path / "*-of-*")) == 4


# ------------------------------------------------------------------ write_examples
def test_write_examples_columns_sharded(tmp_path):
    cols = {
        "id": np.arange(100),
        "x": np.random.default_rng(0).random((100, 3)).astype(np.float32),
        "name": [b"n%d" % i for i in range(100)],
    }
    paths = write_examples(tmp_path / "cols", cols, num_shards=4)
    assert len(paths) == 4
    rows = [tfrx.decode_example(r) for r in tfrx.read_records(paths)]
    assert [int(r["id"][0]) for r in rows] == list(range(100))  # columns are split contiguously
    np.testing.assert_array_equal(np.stack([r["x"] for r in rows]), cols["x"])
    assert [r["name"] for r in rows] == [[n] for n in cols["name"]]


def test_write_examples_rows_single_file(tmp_path, tf):
    rows = [{"label": i, "text": f"row {i}", "score": [0.5, i]} for i in range(20)]
    paths = write_examples(tmp_path / "rows.tfrecord", rows)
    assert paths == [str(tmp_path / "rows.tfrecord")]
    got = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(paths)]
    assert [e.features.feature["label"].int64_list.value[0] for e in got] == list(range(20))
    assert got[3].features.feature["text"].bytes_list.value[0] == b"row 3"


def test_write_examples_large_columns_chunked(tmp_path):
    n = 20000
    paths = write_examples(tmp_path / "big", {"v": np.arange(n)}, max_records_per_shard=7000)
    assert [len(g) for g in _read(paths)] == [7000, 7000, 6000]


def test_write_examples_bad_rows(tmp_path):
    with pytest.raises(TypeError, match="rows must be dicts"):
        write_examples(tmp_path / "bad", [1, 2, 3], num_shards=2)
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ crash safety
_CRASH_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from tfrx.tools import ShardedWriter
    w = ShardedWriter(sys.argv[1], max_records_per_shard=100)
    for i in range(250):
        w.write(b"record %05d" % i)
    w._open[0].writer.flush()
    print("ready", flush=True)
    time.sleep(60)
    """
)


def test_killed_writer_leaves_no_complete_looking_shard(tmp_path):
    src = os.path.dirname(os.path.dirname(os.path.abspath(tfrx.__file__)))  # wherever the tested tfrx is installed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-c", _CRASH_SCRIPT, str(tmp_path / "crash-train")], stdout=subprocess.PIPE, env=env
    )
    try:
        assert proc.stdout.readline().strip() == b"ready"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # nothing carries a final "-of-" name, no manifest
    assert os.listdir(tmp_path) == [".tfrx"]
    names = sorted(os.listdir(tmp_path / ".tfrx"))
    assert names == ["crash-train-00000.part", "crash-train-00001.part", "crash-train-00002.tmp"]
    # the finished shards are intact
    for k in (0, 1):
        recs = list(tfrx.read_records(tmp_path / ".tfrx" / names[k]))
        assert recs == [b"record %05d" % i for i in range(100 * k, 100 * k + 100)]


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_index_of_compressed_shards_is_their_checkpoint_index(tmp_path, compression):
    # A GZIP/ZLIB shard cannot have a record index; index=True gives each its checkpoint index beside it,
    # so a shard has random access (one interval inflated per record) and splits into record ranges.
    from tfrx.io.inflate_index import inflate_index_path, load_inflate_index

    records = [b"record %05d " % i + bytes(i % 97) for i in range(3000)]
    with ShardedWriter(tmp_path / "n", num_shards=2, compression=compression, index=True) as w:
        w.write_many(records)
    assert len(w.paths) == 2
    got = []
    for path in w.paths:
        assert os.path.exists(inflate_index_path(path, sidecar=True))
        index = load_inflate_index(path, build=False, sidecar=True)  # found, not built again
        assert index.file_size == os.path.getsize(path)
        ds = tfrx.RandomAccessDataset(path)
        n = len(ds)
        assert [ds[i] for i in (n - 1, 0, n // 2)] == [list(tfrx.read_records(path))[i] for i in (n - 1, 0, n // 2)]
        got += list(tfrx.read_records(path))
    assert sorted(got) == sorted(records)  # (every record in exactly one shard)


def test_lazy_tool_names():
    import tfrx.tools as tools

    assert tools.csv_to_tfrecord.__module__ == "tfrx.tools.convert.delimited"
    assert callable(tools.verify_files) and callable(tools.compute_stats)
    with pytest.raises(AttributeError):
        tools.nope  # noqa: B018
