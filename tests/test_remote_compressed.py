"""GZIP/ZLIB files over HTTP: random access through the checkpoint index, fetching only the needed intervals."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tfrx
from tfrx.io.inflate_index import (
    CompressedRandomReader,
    build_inflate_index,
    inflate_index_path,
    load_inflate_index,
)

pytest.importorskip("aiohttp")  # fsspec's HTTP filesystem

from http_range_server import RangeServer  # noqa: E402

SPACING = 64 << 10
# Poorly compressible payloads, so the compressed file spans many checkpoint intervals.
RECORDS = [np.random.default_rng(k).integers(0, 64, 3_000 + 41 * k, dtype=np.uint8).tobytes() for k in range(300)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gz")
    tfrx.write_records(str(folder / "a.tfrecord.gz"), RECORDS, compression="GZIP")
    tfrx.write_records(str(folder / "b.tfrecord.zz"), RECORDS[:50], compression="ZLIB")
    tfrx.write_records(str(folder / "plain.tfrecord"), RECORDS[:50])
    server = RangeServer(str(folder), delay=0.01)
    yield server, folder
    server.close()


@pytest.fixture()
def index(served, tmp_path):
    server, _ = served
    return build_inflate_index(server.url("a.tfrecord.gz"), spacing=SPACING, cache_dir=str(tmp_path))


def test_index_of_a_url_equals_the_local_one(served, index, tmp_path):
    _, folder = served
    local = build_inflate_index(str(folder / "a.tfrecord.gz"), spacing=SPACING, cache_dir=str(tmp_path / "l"))
    assert index.records == local.records
    assert np.array_equal(index.points, local.points)
    assert index.windows == local.windows
    assert len(index.points) > 10


def test_a_record_fetches_and_inflates_at_most_its_interval(served, index):
    server, folder = served
    reader = CompressedRandomReader(server.url("a.tfrecord.gz"), index)
    outs = index.out_offsets
    ins = index.points["inp"].astype(np.int64)
    widest_in = int(np.max(np.diff(np.append(ins, index.file_size))))
    for i in (0, 137, 299, 64):
        server.reset()
        before_fetched, before_inflated = reader.fetched_bytes, reader.inflated_bytes
        off, n = int(index.records.offsets[i]), int(index.records.lengths[i]) + 16
        framed = reader.read(off, n)
        assert framed[12 : 12 + len(RECORDS[i])] == RECORDS[i]
        assert server.requests == 1
        # one interval, and the next when the record runs across a checkpoint (plus the record itself)
        crosses = np.searchsorted(outs, off, "right") != np.searchsorted(outs, off + n, "left")
        assert reader.fetched_bytes - before_fetched <= widest_in * (1 + crosses) + 1024
        assert reader.inflated_bytes - before_inflated <= SPACING * 2 + n
    assert server.stats()["bytes_sent"] < (folder / "a.tfrecord.gz").stat().st_size


def test_random_access_dataset_over_a_gzip_url(served, index):
    server, _ = served
    url = server.url("a.tfrecord.gz")
    ds = tfrx.RandomAccessDataset(url, index=[index.records], concurrency=4)
    picks = np.random.default_rng(1).permutation(len(RECORDS))[:40].tolist()
    server.reset()
    assert ds[picks] == [RECORDS[i] for i in picks]
    assert 1 < server.max_in_flight <= 4
    assert server.stats()["bytes_sent"] <= os.path.getsize(served[1] / "a.tfrecord.gz")


def test_index_is_built_once_and_cached(served, tmp_path, monkeypatch):
    server, _ = served
    url = server.url("b.tfrecord.zz")
    cache = str(tmp_path / "cache")
    ds = tfrx.RandomAccessDataset(url, cache_dir=cache)
    assert len(ds) == 50 and ds[[49, 0, 17]] == [RECORDS[49], RECORDS[0], RECORDS[17]]
    assert os.path.exists(inflate_index_path(url, cache_dir=cache))

    def no_pass(*args, **kwargs):
        raise AssertionError("the object was inflated again")

    monkeypatch.setattr("tfrx.io.inflate_index._build", no_pass)
    again = tfrx.RandomAccessDataset(url, cache_dir=cache)  # from the cache: no pass over the object
    assert again[3] == RECORDS[3]


def test_global_shuffle_over_a_gzip_url(served, index):
    server, _ = served
    ds = tfrx.RandomAccessDataset(server.url("a.tfrecord.gz"), index=[index.records])
    got = list(ds.shuffle_global(seed=3, block_size=64))
    assert sorted(got) == sorted(RECORDS) and got != RECORDS


def test_stale_index_of_a_url_is_rebuilt(served, tmp_path):
    server, folder = served
    path = folder / "c.tfrecord.gz"
    tfrx.write_records(str(path), RECORDS[:10], compression="GZIP")
    url = server.url("c.tfrecord.gz")
    cache = str(tmp_path / "cache")
    stale = build_inflate_index(url, cache_dir=cache)
    stale_blob = stale.to_bytes()
    tfrx.write_records(str(path), RECORDS[10:30], compression="GZIP")
    # Cached under the old version's name: a different name now, so rebuilt; an explicit old index raises.
    assert len(load_inflate_index(url, cache_dir=cache).records) == 20
    old = tmp_path / "old.tfrxzidx"
    old.write_bytes(stale_blob)
    with pytest.raises(tfrx.StaleIndexError, match="stale"):
        load_inflate_index(url, index_path=str(old))


def test_plain_url_is_not_given_a_checkpoint_index(served, tmp_path):
    server, _ = served
    with pytest.raises(tfrx.CompressedFileError, match="not GZIP or ZLIB"):
        build_inflate_index(server.url("plain.tfrecord"), cache_dir=str(tmp_path))


def test_written_sidecar_is_read_over_http(served, monkeypatch):
    server, folder = served
    with tfrx.TFRecordWriter(
        str(folder / "w.tfrecord.gz"), compression="GZIP", checkpoint_index="sidecar", checkpoint_spacing=SPACING
    ) as w:
        w.write_many(RECORDS)

    def no_pass(*args, **kwargs):
        raise AssertionError("the object was inflated to index it")

    monkeypatch.setattr("tfrx.io.inflate_index._build", no_pass)
    ds = tfrx.RandomAccessDataset(server.url("w.tfrecord.gz"))  # the sidecar beside the object, read first
    assert len(ds.indexes[0].checkpoints.points) > 10
    assert ds[[250, 2]] == [RECORDS[250], RECORDS[2]]


def test_sidecar_on_a_read_only_store_falls_back_to_the_cache(served, tmp_path):
    server, _ = served
    url = server.url("b.tfrecord.zz")
    with pytest.warns(RuntimeWarning, match="cached in"):
        build_inflate_index(url, sidecar=True, cache_dir=str(tmp_path))
    assert os.path.exists(inflate_index_path(url, cache_dir=str(tmp_path)))


def test_dataset_over_gzip_urls_pickles_and_loads_indexes_together(served, tmp_path):
    import pickle

    server, folder = served
    names = []
    for k in range(4):
        tfrx.write_records(str(folder / f"s{k}.tfrecord.gz"), RECORDS[k::4], compression="GZIP")
        names.append(server.url(f"s{k}.tfrecord.gz"))
    server.reset()
    ds = tfrx.RandomAccessDataset(names, cache_dir=str(tmp_path))
    # The four objects' indexes were looked up and built at once, not one object after another.
    order = [name for name, _, _ in server.ranges]
    assert order.index("s3.tfrecord.gz") < len(order) - 1 - order[::-1].index("s0.tfrecord.gz")
    copy = pickle.loads(pickle.dumps(ds))  # as DataLoader workers get it: the checkpoints travel along
    expected = [r for k in range(4) for r in RECORDS[k::4]]  # the files one after another
    assert copy[[0, 299, 76]] == [expected[0], expected[299], expected[76]]


def test_plan_ranges_splits_a_gzip_url_with_a_checkpoint_index(served, tmp_path, monkeypatch):
    from tfrx.io.ranges import plan_ranges, read_range

    server, folder = served
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path))
    url = server.url("a.tfrecord.gz")
    size = (folder / "a.tfrecord.gz").stat().st_size
    assert len(plan_ranges([url], num_ranges=4, min_split_bytes=1)) == 1  # no index yet: one range
    build_inflate_index(url, spacing=SPACING)  # into the cache, where readers look
    ranges = plan_ranges([url], num_ranges=4, min_split_bytes=1)
    assert len(ranges) == 4
    got = []
    for piece in ranges:
        server.reset()
        for batch in read_range(piece, batch_size=16):
            got += batch.to_list()
        assert server.stats()["bytes_sent"] < size * 0.6  # its own intervals, not the whole object
    assert got == RECORDS


def test_resuming_inside_a_gzip_url_starts_at_its_checkpoint(served, tmp_path, monkeypatch):
    server, folder = served
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path))
    url = server.url("a.tfrecord.gz")
    size = (folder / "a.tfrecord.gz").stat().st_size
    with tfrx.RecordReader(url) as r:
        for _ in range(280):
            next(iter(r))
        position = r.position
    server.reset()
    with tfrx.RecordReader(url, start=position) as r:  # no index: inflated from the start
        assert list(r) == RECORDS[280:]
    assert server.stats()["bytes_sent"] >= size
    build_inflate_index(url, spacing=SPACING)
    server.reset()
    with tfrx.RecordReader(url, start=position, block_size=64 << 10) as r:
        assert list(r) == RECORDS[280:]
    assert server.stats()["bytes_sent"] < size * 0.3  # from the checkpoint before the record on
    with tfrx.RecordReader(url, start=position) as r:
        assert next(iter(r)) == RECORDS[280]
        assert r.position.record_index == 281
