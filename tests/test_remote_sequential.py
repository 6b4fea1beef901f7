"""Sequential scans over HTTP: blocks read ahead, a bounded number in flight, records as read locally."""

from __future__ import annotations

import numpy as np
import pytest

import tfrx

pytest.importorskip("aiohttp")  # fsspec's HTTP filesystem

from http_range_server import RangeServer  # noqa: E402

RECORDS = [np.random.default_rng(k).bytes(5_000 + 97 * k) for k in range(200)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("seq")
    tfrx.write_records(str(folder / "a.tfrecord"), RECORDS)
    tfrx.write_records(str(folder / "a.tfrecord.gz"), RECORDS, compression="GZIP")
    tfrx.write_records(str(folder / "small.tfrecord"), RECORDS[:3])
    tfrx.write_records(str(folder / "empty.tfrecord"), [])
    server = RangeServer(str(folder), delay=0.05)
    yield server, folder
    server.close()


def _read(url, **kw):
    with tfrx.RecordReader(url, **kw) as r:
        return list(r)


@pytest.mark.parametrize("name", ["a.tfrecord", "a.tfrecord.gz"])
def test_blocks_and_requests_in_flight(served, name):
    server, folder = served
    size = (folder / name).stat().st_size
    server.reset()
    assert _read(server.url(name), block_size=64 << 10, readahead=1 << 20, concurrency=3) == RECORDS
    assert server.requests == -(-size // (64 << 10))  # one range request per block, none twice
    assert 1 < server.max_in_flight <= 3  # the size lookup and blocks share the 3


def test_window_bounds_requests_in_flight(served):
    server, _ = served
    server.reset()
    # 4 blocks of memory: never more than 4 requests although 16 may run
    assert _read(server.url("a.tfrecord"), block_size=64 << 10, readahead=256 << 10, concurrency=16) == RECORDS
    assert server.max_in_flight <= 4


def test_first_block_goes_out_with_the_size_lookup(served):
    server, _ = served
    server.reset()
    assert _read(server.url("small.tfrecord")) == RECORDS[:3]
    # The HEAD (size) and the GET of the first block were answered together, not one after the other.
    assert server.max_in_flight == 2
    assert server.requests == 1


def test_empty_object(served):
    server, _ = served
    assert _read(server.url("empty.tfrecord")) == []


def test_resume_inside_an_object(served):
    server, _ = served
    url = server.url("a.tfrecord")
    with tfrx.RecordReader(url, block_size=64 << 10) as r:
        for _ in range(57):
            next(iter(r))
        pos = r.position
    assert _read(url, start=pos, block_size=64 << 10) == RECORDS[57:]


def test_options_are_checked(served):
    server, _ = served
    with pytest.raises(ValueError, match="concurrency must be a positive int"):
        tfrx.RecordReader(server.url("a.tfrecord"), concurrency=0)
    with pytest.raises(ValueError, match="block_size must be a positive int"):
        tfrx.RecordReader(server.url("a.tfrecord"), block_size=-5)


@pytest.mark.parametrize("name", ["a.tfrecord", "a.tfrecord.gz"])
@pytest.mark.parametrize("batched", [False, True])
def test_tfrecord_dataset_passes_the_readahead_options_to_its_readers(served, name, batched, request):
    _, folder = served
    size = (folder / name).stat().st_size
    server = RangeServer(str(folder), delay=0.05)  # its own: no request of another test still in flight
    request.addfinalizer(server.close)
    url = server.url(name)
    block, concurrency = (32 << 10, 2) if batched else (64 << 10, 3)
    server.reset()
    ds = tfrx.data.TFRecordDataset(url, block_size=block, readahead=1 << 20, concurrency=concurrency)
    if batched:
        got = [r for b in ds.batch(64)._natively_batched() for r in b.to_list()]
    else:
        got = list(ds)
    assert got == RECORDS
    assert server.requests == -(-size // block)  # the dataset's block size, not the reader's default
    assert 1 < server.max_in_flight <= concurrency


def test_tfrecord_dataset_checks_the_readahead_options(served):
    server, _ = served
    for name, value in (("concurrency", 0), ("block_size", -1), ("readahead", 1.5)):
        with pytest.raises(ValueError, match=name):
            tfrx.data.TFRecordDataset(server.url("a.tfrecord"), **{name: value})
