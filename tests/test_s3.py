"""Object storage over real HTTP: an S3-compatible server on loopback (moto), read and written through s3fs."""

from __future__ import annotations

import numpy as np
import pytest

import tfrx

pytest.importorskip("s3fs")
pytest.importorskip("moto.moto_server.werkzeug_app")
pytest.importorskip("boto3")

from conftest import S3_BUCKET as BUCKET  # noqa: E402  (the session's `s3` server fixture is in conftest)


@pytest.fixture
def opts(s3):
    s3.clear_faults()
    s3.log.clear()
    yield s3.storage_options()
    s3.clear_faults()


@pytest.fixture
def prefix(request, s3):
    """A fresh key prefix per test: ``s3://bucket/<test name>``."""
    name = request.node.name.replace("[", "-").replace("]", "")
    return f"s3://{BUCKET}/{name}"


def _records(shard: int, n: int, size: int = 1) -> list[bytes]:
    return [(b"%d-%d;" % (shard, i)) * size for i in range(n)]


def _write_shards(prefix: str, opts: dict, counts=(7, 0, 12), size: int = 1) -> list[bytes]:
    out = []
    for k, n in enumerate(counts):
        recs = _records(k, n, size)
        tfrx.write_records(f"{prefix}/part-{k}.tfrecord", recs, storage_options=opts)
        out += recs
    return out


def _keys(s3, prefix: str) -> list[str]:
    key = prefix.split("/", 3)[3]
    listing = s3.client().list_objects_v2(Bucket=BUCKET, Prefix=key)
    return sorted(o["Key"] for o in listing.get("Contents", []))


# ---------------------------------------------------------------- reading
def test_read_records_glob(s3, opts, prefix):
    expected = _write_shards(prefix, opts)
    assert list(tfrx.read_records(f"{prefix}/part-*.tfrecord", storage_options=opts)) == expected
    reader = tfrx.RecordReader(f"{prefix}/part-*.tfrecord", storage_options=opts)
    assert [str(p) for p in reader.paths] == [f"{prefix}/part-{k}.tfrecord" for k in range(3)]
    reader.close()


def test_glob_matching_nothing_and_missing_object(opts, prefix):
    with pytest.raises(FileNotFoundError, match="no files match"):
        list(tfrx.read_records(f"{prefix}/nothing-*.tfrecord", storage_options=opts))
    with pytest.raises(FileNotFoundError, match="missing.tfrecord"):
        list(tfrx.read_records(f"{prefix}/missing.tfrecord", storage_options=opts))


def test_compressed_objects(opts, prefix):
    recs = _records(0, 50, size=20)
    tfrx.write_records(f"{prefix}/a.tfrecord.gz", recs, compression="gzip", storage_options=opts)
    assert list(tfrx.read_records(f"{prefix}/a.tfrecord.gz", storage_options=opts)) == recs


def test_tfrecord_dataset(opts, prefix):
    expected = _write_shards(prefix, opts)
    ds = tfrx.data.TFRecordDataset(f"{prefix}/part-*.tfrecord", storage_options=opts)
    assert [bytes(r) for r in ds] == expected
    parallel = tfrx.data.TFRecordDataset(f"{prefix}/part-*.tfrecord", num_parallel_reads=2, storage_options=opts)
    assert sorted(bytes(r) for r in parallel) == sorted(expected)


def test_tfrecord_dataset_reads_ahead_into_the_next_objects(s3, opts, prefix):
    """One reader over a window of remote shards: the next object is requested while one is read."""
    urls = [f"{prefix}/part-{k:02d}.tfrecord" for k in range(20)]  # more than one window of 16
    expected = []
    for k, url in enumerate(urls):
        recs = _records(k, 0 if k == 3 else 30 + k, size=40)
        tfrx.write_records(url, recs, storage_options=opts)
        expected += recs
    s3.log.clear()
    ds = tfrx.data.TFRecordDataset(urls, buffer_size=4096, storage_options=opts)
    it = ds.iterator()
    assert next(it) == expected[0]
    assert _wait_for(lambda: s3.log.count("GET", "part-01") >= 1)  # before part-00 is finished
    assert [bytes(r) for r in it] == expected[1:]
    it.close()
    batches = tfrx.data.TFRecordDataset(urls, storage_options=opts).record_batches(64)
    assert [r for b in batches for r in b.to_list()] == expected


def test_tfrecord_dataset_remote_state_resumes_and_matches_local_form(opts, prefix, tmp_path):
    from tfrx.testing import assert_resumes_exactly

    local = tmp_path / "local-0.tfrecord"
    tfrx.write_records(local, _records(9, 5))
    urls = []
    for k, n in enumerate((6, 0, 4, 9)):
        urls.append(f"{prefix}/part-{k}.tfrecord")
        tfrx.write_records(urls[-1], _records(k, n), storage_options=opts)
    files = [urls[0], urls[1], str(local), urls[2], urls[3]]  # a local file between remote ones
    expected = _records(0, 6) + _records(9, 5) + _records(2, 4) + _records(3, 9)
    full = assert_resumes_exactly(lambda: tfrx.data.TFRecordDataset(files, storage_options=opts), steps=range(25))
    assert full == expected
    it = tfrx.data.TFRecordDataset(files, storage_options=opts).iterator()
    for _ in range(8):
        next(it)
    state = it.state_dict()
    it.close()
    # The state names the file being read and the position in it, as for local files.
    assert state["file"]["path"] == str(local) and state["file"]["record"] == 2
    assert_resumes_exactly(lambda: tfrx.data.TFRecordDataset(files, storage_options=opts).batch(4), steps=range(7))


def test_parallel_reads_open_remote_files_ahead_in_the_same_order(s3, opts, prefix, tmp_path):
    from tfrx.testing import assert_resumes_exactly

    counts = (5, 0, 9, 3, 7, 1, 6)
    local, urls = [], []
    for k, n in enumerate(counts):
        local.append(str(tmp_path / f"part-{k}.tfrecord"))
        urls.append(f"{prefix}/part-{k}.tfrecord")
        tfrx.write_records(local[-1], _records(k, n, size=30))
        tfrx.write_records(urls[-1], _records(k, n, size=30), storage_options=opts)

    def remote(**kw):
        return tfrx.data.TFRecordDataset(urls, num_parallel_reads=3, storage_options=opts, **kw)

    expected = [bytes(r) for r in tfrx.data.TFRecordDataset(local, num_parallel_reads=3)]
    s3.log.clear()
    it = remote().iterator()
    assert next(it) == expected[0]
    # The slots' files and the next three (opened ahead) have been requested (part-1 is empty: no GET).
    assert _wait_for(lambda: all(s3.log.count("GET", f"part-{k}.") >= 1 for k in (0, 2, 3, 4, 5)))
    assert [next(it)] + [bytes(r) for r in it] == expected[1:]
    it.close()
    batches = [b.to_list() for b in remote().record_batches(4)]
    assert [r for b in batches for r in b] == expected
    assert assert_resumes_exactly(remote, steps=range(13)) == expected


# ---------------------------------------------------------------- writing
def test_writer_commits_only_on_close(s3, opts, prefix):
    url = f"{prefix}/out.tfrecord"
    opts = {**opts, "default_block_size": 5 << 20}  # multipart parts go up while writing
    recs = _records(0, 4000, size=400)  # about 12 MiB
    s3.log.clear()
    w = tfrx.TFRecordWriter(url, storage_options=opts)
    for r in recs:
        w.write(r)
    assert s3.log.count("PUT", "out.tfrecord") >= 1  # parts uploaded before close
    assert _keys(s3, prefix) == []  # yet no object: a reader cannot see a half-written shard
    w.close()
    assert _keys(s3, prefix) == [url.split("/", 3)[3]]
    assert list(tfrx.read_records(url, storage_options=opts)) == recs


def test_writer_failure_leaves_no_object(s3, opts, prefix):
    url = f"{prefix}/out.tfrecord"
    with pytest.raises(RuntimeError, match="producer failed"):
        with tfrx.TFRecordWriter(url, storage_options=opts) as w:
            w.write(b"partial")
            raise RuntimeError("producer failed")
    assert _keys(s3, prefix) == []
    w = tfrx.TFRecordWriter(url, storage_options=opts)
    w.write(b"x")
    w.abort()
    assert _keys(s3, prefix) == []


# ---------------------------------------------------------------- random access
def test_random_access_coalesces_range_requests(s3, opts, prefix, tmp_path, monkeypatch):
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    expected = _write_shards(prefix, opts, counts=(40, 25), size=8)
    ds = tfrx.RandomAccessDataset(f"{prefix}/part-*.tfrecord", storage_options=opts)
    assert len(ds) == 65
    s3.log.clear()
    idx = np.arange(5, 30)
    got = ds.read_batch(idx)
    assert [bytes(r) for r in got] == [expected[i] for i in idx]
    # 25 neighbouring records of one object: one range request, not 25.
    assert s3.log.count("GET", "part-0") == 1
    s3.log.clear()
    idx = np.array([64, 0, 41, 3, 39])
    assert [bytes(r) for r in ds.read_batch(idx)] == [expected[i] for i in idx]
    assert s3.log.count("GET", "part-0") == 1 and s3.log.count("GET", "part-1") == 1
    assert bytes(ds[-1]) == expected[-1]
    # Worker processes get the dataset pickled: the URLs keep their storage options.
    import pickle

    clone = pickle.loads(pickle.dumps(ds))
    assert clone.paths[0].storage_options == opts
    assert [bytes(r) for r in clone.read_batch(np.arange(3))] == expected[:3]


def test_random_access_fetches_all_shards_of_a_batch_in_one_call(s3, opts, prefix, tmp_path, monkeypatch):
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    counts = (30, 0, 20, 25)
    expected = _write_shards(prefix, opts, counts=counts, size=8)
    ds = tfrx.RandomAccessDataset(f"{prefix}/part-*.tfrecord", storage_options=opts)
    local = []
    for k in range(len(counts)):
        tfrx.write_records(str(tmp_path / f"part-{k}.tfrecord"), _records(k, counts[k], 8))
        local.append(str(tmp_path / f"part-{k}.tfrecord"))
    local_ds = tfrx.RandomAccessDataset(local)
    fs = ds._handle(0)[0]
    calls = []
    original = fs.cat_ranges  # fsspec puts the sync wrappers on the instance

    def counting(paths, starts, ends, **kwargs):
        calls.append(sorted(set(paths)))
        return original(paths, starts, ends, **kwargs)

    monkeypatch.setattr(fs, "cat_ranges", counting)
    rng = np.random.default_rng(0)
    for idx in (np.array([74, 0, 31, 50, 29, 12, 60]), rng.permutation(len(ds))[:40], np.arange(len(ds))[::-1]):
        s3.log.clear()
        calls.clear()
        got = ds.read_batch(idx)
        assert [bytes(r) for r in got] == [expected[i] for i in idx]
        assert [bytes(r) for r in got] == [bytes(r) for r in local_ds.read_batch(idx)]
        assert len(calls) == 1 and len(calls[0]) == len(
            {int(np.searchsorted(np.cumsum(counts), i, "right")) for i in idx}
        )
        # small shards: one range request per shard touched, as when they were fetched one after another
        assert all(s3.log.count("GET", f"part-{k}") <= 1 for k in range(len(counts)))
        assert sum(s3.log.count("GET", f"part-{k}") for k in range(len(counts))) == len(calls[0])


def test_random_access_verifies_crc(s3, opts, prefix, tmp_path, monkeypatch):
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    url = f"{prefix}/bad.tfrecord"
    tfrx.write_records(url, _records(0, 5, size=10), storage_options=opts)
    ds = tfrx.RandomAccessDataset(url, storage_options=opts)
    key = url.split("/", 3)[3]
    blob = bytearray(s3.client().get_object(Bucket=BUCKET, Key=key)["Body"].read())
    blob[12 + 3] ^= 0xFF  # first record's payload, index already built
    s3.client().put_object(Bucket=BUCKET, Key=key, Body=bytes(blob))
    ds = tfrx.RandomAccessDataset(url, index=[ds.indexes[0]], storage_options=opts)
    assert bytes(ds[1]) == _records(0, 5, size=10)[1]
    with pytest.raises(tfrx.CorruptRecordError, match="bad.tfrecord"):
        ds[0]


# ---------------------------------------------------------------- failures
def test_transient_failures_are_retried(s3, opts, prefix):
    expected = _write_shards(prefix, opts)
    fault = s3.fail(2, path_contains="part-2")
    assert list(tfrx.read_records(f"{prefix}/part-*.tfrecord", storage_options=opts)) == expected
    assert fault.failed == 2


def test_exhausted_retries_name_the_object(s3, prefix, monkeypatch):
    import s3fs

    opts = s3.storage_options(retries=2)
    expected = _write_shards(prefix, opts)
    monkeypatch.setattr(s3fs.S3FileSystem, "retries", 1)
    fault = s3.fail(1000, path_contains="part-2")
    seen = []
    with pytest.raises(OSError, match=r"reading 's3://.*/part-2\.tfrecord' at byte 0"):
        for r in tfrx.read_records(f"{prefix}/part-*.tfrecord", storage_options=opts):
            seen.append(r)
    s3.clear_faults()
    # Everything before the failing object was read, nothing after it was invented.
    assert seen == expected[:7] and fault.failed >= 2


# ---------------------------------------------------------------- sharded writing
def test_sharded_writer_commits_on_close(s3, opts, prefix, tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    recs = _records(0, 30, size=5)
    w = tfrx.ShardedWriter(f"{prefix}/train", num_shards=3, index=True, storage_options=opts)
    w.write_many(recs)
    assert _keys(s3, prefix) == []  # nothing uploaded yet: a reader sees no shard
    paths = w.close()
    key = prefix.split("/", 3)[3]
    assert [str(p) for p in paths] == [f"{prefix}/train.tfrecord-{i:05d}-of-00003" for i in range(3)]
    shards = [f"{key}/train.tfrecord-{i:05d}-of-00003" for i in range(3)]
    side = [f"{key}/.tfrx/train.tfrecord-{i:05d}-of-00003.tfrxidx" for i in range(3)]
    assert _keys(s3, prefix) == sorted([f"{key}/.tfrx/train.manifest.json", *shards, *side])  # no journal, no .part
    got = list(tfrx.read_records(paths, storage_options=opts))
    assert sorted(got) == sorted(recs)
    # the usual patterns match the shards only
    for pattern in ("train*", "*-of-*", "*.tfrecord*", "*"):
        assert sorted(tfrx.read_records(f"{prefix}/{pattern}", storage_options=opts)) == sorted(recs), pattern
    manifest = json.loads(s3.client().get_object(Bucket=BUCKET, Key=f"{key}/.tfrx/train.manifest.json")["Body"].read())
    assert manifest["shardLengths"] == [10, 10, 10] and manifest["num_records"] == 30
    s3.log.clear()
    ds = tfrx.RandomAccessDataset(paths, storage_options=opts)
    idx_gets = s3.log.count("GET", ".tfrxidx")
    assert idx_gets == 3  # the indexes beside the shards are used, not rebuilt ...
    assert not (tmp_path / "cache").exists()  # ... nothing built into the local cache
    assert sorted(bytes(ds[i]) for i in range(len(ds))) == sorted(recs)


def test_sharded_writer_rolls_and_aborts(s3, opts, prefix):
    recs = _records(1, 25, size=3)
    paths = tfrx.write_examples(f"{prefix}/rows", recs, max_records_per_shard=10, storage_options=opts)
    assert len(paths) == 3
    assert list(tfrx.read_records(paths, storage_options=opts)) == recs
    before = _keys(s3, prefix)
    with pytest.raises(RuntimeError, match="source failed"):
        with tfrx.ShardedWriter(f"{prefix}/broken", max_records_per_shard=4, storage_options=opts) as w:
            w.write_many(recs)  # completes a few ".part" uploads
            raise RuntimeError("source failed")
    assert _keys(s3, prefix) == before  # completed parts removed, open uploads discarded


def test_read_tfrecord_to_arrow(opts, prefix):
    pytest.importorskip("pyarrow")
    cols = {"id": np.arange(30, dtype=np.int64), "v": np.arange(60, dtype=np.float32).reshape(30, 2)}
    tfrx.write_examples(f"{prefix}/t", cols, num_shards=2, storage_options=opts)
    table = tfrx.read_tfrecord(f"{prefix}/t.tfrecord-*", storage_options=opts)
    assert sorted(table.column("id").to_pylist()) == list(range(30))
    assert table.column("v").type.list_size == 2


def test_infer_features_on_a_remote_glob(opts, prefix):
    cols = {"id": np.arange(4, dtype=np.int64), "name": [b"a", b"b", b"c", b"d"]}
    tfrx.write_examples(f"{prefix}/x", cols, num_shards=2, storage_options=opts)
    feats = tfrx.infer_features(f"{prefix}/x.tfrecord-*", storage_options=opts)
    assert feats == {"id": tfrx.FixedLenFeature([], tfrx.int64), "name": tfrx.FixedLenFeature([], tfrx.string)}


def test_failure_mid_object_stops_reading_there(s3, prefix, monkeypatch):
    import s3fs

    recs = _records(0, 3000, size=100)  # about 2.5 MiB: several 1 MiB block reads
    url = f"{prefix}/big.tfrecord"
    tfrx.write_records(url, recs, storage_options=s3.storage_options())
    opts = {**s3.storage_options(retries=2), "default_block_size": 1 << 20}
    monkeypatch.setattr(s3fs.S3FileSystem, "retries", 1)
    s3.fail(1000, path_contains="big.tfrecord", after=1)  # the first block arrives, then the store fails
    seen = []
    with pytest.raises(OSError, match=r"reading 's3://.*/big\.tfrecord' at byte [1-9]\d*"):
        with tfrx.RecordReader(url, chunk_size=256 << 10, readahead=0, storage_options=opts) as reader:
            for r in reader:
                seen.append(r)
    s3.clear_faults()
    assert 0 < len(seen) < len(recs) and seen == recs[: len(seen)]


# ---------------------------------------------------------------- readahead
def _wait_for(predicate, timeout: float = 10.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _readahead_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name.startswith("tfrx-readahead")]


@pytest.mark.parametrize("compression", ["", "gzip"])
def test_readahead_keeps_order_positions_and_resume(opts, prefix, compression):
    urls = []
    for k, n in enumerate((300, 0, 1, 450)):
        urls.append(f"{prefix}/part-{k}.tfrecord")
        tfrx.write_records(urls[-1], _records(k, n, size=9), compression=compression, storage_options=opts)

    def walk(**kw):
        out = []
        with tfrx.RecordReader(urls, chunk_size=4096, storage_options=opts, **kw) as r:
            while (batch := r.read_batch(max_records=37)) is not None:
                out.append((r.position, batch.to_list()))
        return out

    plain = walk(readahead=0)
    ahead = walk(readahead=5 * 4096)  # several blocks per object, running into the next objects
    assert ahead == plain and sum(len(b) for _, b in plain) == 751
    # Resume at every 5th batch boundary (inside objects, at their ends) and read the rest.
    expected = [r for _, b in plain for r in b]
    done = 0
    for k, (pos, batch) in enumerate(plain):
        done += len(batch)
        if k % 5 == 0:
            with tfrx.RecordReader(urls, start=pos, chunk_size=4096, readahead=3 * 4096, storage_options=opts) as r:
                assert list(r) == expected[done:]


def test_readahead_requests_the_next_objects_early_and_stays_bounded(s3, opts, prefix):
    urls = [f"{prefix}/part-{k}.tfrecord" for k in range(6)]
    for k, url in enumerate(urls):
        tfrx.write_records(url, _records(k, 50, size=40), storage_options=opts)  # about 12 KiB each
    reader = tfrx.RecordReader(urls, chunk_size=4096, readahead=4 * 4096, storage_options=opts)
    s3.log.clear()  # what follows counts reads, not the listing that checks the shard set
    assert next(reader) == _records(0, 50, size=40)[0]
    # While object 0 is read, its later blocks are in flight, and so on into part-1 (four blocks at most).
    assert _wait_for(lambda: s3.log.count("GET", "part-1") >= 1)
    assert s3.log.count("GET", "part-2") == 0 and s3.log.count("GET") <= 5
    assert list(reader) == [r for k in range(6) for r in _records(k, 50, size=40)][1:]
    reader.close()


def test_readahead_threads_end_when_the_reader_is_dropped(opts, prefix):
    import gc

    urls = [f"{prefix}/part-{k}.tfrecord" for k in range(3)]
    for k, url in enumerate(urls):
        tfrx.write_records(url, _records(k, 200, size=30), storage_options=opts)
    it = tfrx.read_records(urls, storage_options=opts)
    assert next(it) == _records(0, 200, size=30)[0]
    assert _readahead_threads()
    del it
    gc.collect()
    assert _wait_for(lambda: not _readahead_threads())
    reader = tfrx.RecordReader(urls, chunk_size=1024, storage_options=opts)
    next(reader)
    del reader
    gc.collect()
    assert _wait_for(lambda: not _readahead_threads())


def test_readahead_with_failing_requests_loses_nothing(s3, opts, prefix):
    urls = [f"{prefix}/part-{k}.tfrecord" for k in range(4)]
    expected = []
    for k, url in enumerate(urls):
        recs = _records(k, 120, size=25)
        tfrx.write_records(url, recs, storage_options=opts)
        expected += recs
    # Requests in flight together fail: a later block of one object, the first of another.
    faults = [
        s3.fail(1, path_contains="part-1", range_starts="bytes=2048-"),
        s3.fail(1, path_contains="part-2", range_starts="bytes=0-"),
    ]
    got = list(tfrx.RecordReader(urls, chunk_size=2048, readahead=6 * 2048, storage_options=opts))
    assert got == expected
    assert all(f.failed == 1 for f in faults)


def test_readahead_failure_after_retries_names_the_block(s3, prefix, monkeypatch):
    import s3fs

    opts = s3.storage_options(retries=2)
    urls = [f"{prefix}/part-{k}.tfrecord" for k in range(3)]
    expected = []
    for k, url in enumerate(urls):
        recs = _records(k, 100, size=40)
        tfrx.write_records(url, recs, storage_options=opts)
        expected.append(recs)
    monkeypatch.setattr(s3fs.S3FileSystem, "retries", 1)
    s3.fail(1000, path_contains="part-1", range_starts="bytes=1024-")  # part-1's second block fails
    seen = []
    reader = tfrx.RecordReader(urls, chunk_size=1024, readahead=4 * 1024, storage_options=opts)
    with pytest.raises(OSError, match=r"reading 's3://.*/part-1\.tfrecord' at byte 1024 failed"):
        for r in reader:
            seen.append(r)
    assert seen == expected[0] + expected[1][: len(seen) - 100] and len(seen) > 100
    # Once the store recovers, the same reader goes on where it stopped.
    s3.clear_faults()
    assert seen + list(reader) == expected[0] + expected[1] + expected[2]
    reader.close()


# ---------------------------------------------------------------- command line
def _cli_options(s3) -> list[str]:
    """The server's storage options as the CLI takes them: a JSON object plus KEY=VALUE entries on top."""
    import json

    return [
        "--storage-options",
        json.dumps({"key": s3.key, "secret": s3.secret}),
        "--storage-option",
        f"client_kwargs.endpoint_url={s3.endpoint}",
        "--storage-option",
        "client_kwargs.region_name=us-east-1",
        "--storage-option",
        "config_kwargs.retries.max_attempts=3",
    ]


def test_cli_reads_and_writes_object_stores(s3, opts, prefix, capsys, tmp_path, monkeypatch):
    import json

    from tfrx.cli import main

    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    cols = {"id": np.arange(12, dtype=np.int64), "name": [b"r%d" % i for i in range(12)]}
    tfrx.write_examples(f"{prefix}/d", cols, num_shards=2, storage_options=opts)
    glob = f"{prefix}/d.tfrecord-*-of-00002"  # not the index objects written beside the shards below
    cli = _cli_options(s3)

    def run(*argv) -> str:
        capsys.readouterr()
        assert main([*argv, *cli]) == 0, capsys.readouterr().err
        return capsys.readouterr().out

    rows = [json.loads(line) for line in run("inspect", "--json", "-n", "2", glob).splitlines()]
    assert [r["id"] for r in rows] == [[0], [1], [6], [7]] and rows[0]["name"] == ["r0"]
    shards = [f"{prefix}/d.tfrecord-0000{i}-of-00002" for i in range(2)]
    assert run("count", glob).splitlines() == [f"6\t{shards[0]}", f"6\t{shards[1]}", "12\ttotal"]
    assert run("verify", glob).splitlines()[-1] == "2 of 2 files intact, 12 records read"
    stats = json.loads(run("stats", "--json", glob))
    assert stats["records"] == 12
    assert json.loads(run("schema", "--json", glob))
    assert run("index", glob).splitlines() == [f"{shard}\t6 records" for shard in shards]
    s3.log.clear()
    ds = tfrx.RandomAccessDataset(glob, storage_options=opts)
    assert s3.log.count("GET", ".tfrxidx") == 2 and len(ds) == 12  # the indexes went beside the shards
    out = run("reshard", glob, "-o", f"{prefix}/re", "--num-shards", "3")
    assert len(out.split()) == 3
    got = list(tfrx.read_records(out.split(), storage_options=opts))
    assert sorted(got) == sorted(tfrx.read_records(glob, storage_options=opts))


def test_cli_rejects_malformed_storage_options(capsys):
    from tfrx.cli import main

    assert main(["count", "s3://bucket/x", "--storage-option", "no-equals-sign"]) == 2
    assert "--storage-option expects KEY=VALUE" in capsys.readouterr().err
    assert main(["count", "s3://bucket/x", "--storage-options", "[1, 2]"]) == 2
    assert "must be a JSON object" in capsys.readouterr().err
    assert main(["count", "s3://bucket/x", "--storage-options", "{bad"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
