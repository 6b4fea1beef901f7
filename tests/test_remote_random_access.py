"""Random reads over HTTP: coalesced range requests, a bounded number in flight, request order kept."""

from __future__ import annotations

import numpy as np
import pytest

import tfrx

pytest.importorskip("aiohttp")  # fsspec's HTTP filesystem

from http_range_server import RangeServer  # noqa: E402

RECORDS = [bytes([k % 251]) * (20_000 + 37 * k) for k in range(120)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("http")
    path = str(folder / "a.tfrecord")
    tfrx.write_records(path, RECORDS)
    server = RangeServer(str(folder), delay=0.02)
    yield server, path
    server.close()


@pytest.fixture()
def dataset(served, tmp_path):
    server, path = served
    index = tfrx.build_index(path, cache_dir=str(tmp_path))
    return server, lambda **kw: tfrx.RandomAccessDataset(server.url("a.tfrecord"), index=[index], **kw)


def test_random_reads_are_coalesced_and_bounded(dataset):
    server, make = dataset
    ds = make(concurrency=4, coalesce_gap=0)
    indices = np.random.default_rng(0).permutation(len(RECORDS))[:60]
    server.reset()
    assert ds[indices.tolist()] == [RECORDS[i] for i in indices]  # request order, not file order
    # No gap allowed: one request per run of back-to-back records, never more than 4 at once.
    runs = np.count_nonzero(np.diff(np.sort(indices)) != 1) + 1
    assert server.requests == runs
    assert 1 < server.max_in_flight <= 4


def test_gap_merges_nearby_records(dataset):
    server, make = dataset
    ds = make(coalesce_gap=10 << 20)
    indices = [100, 3, 57, 11, 90]
    server.reset()
    assert ds.read(indices) == [RECORDS[i] for i in indices]
    assert server.requests == 1  # within 10 MB of each other: one range


def test_one_request_per_record_when_read_one_by_one(dataset):
    server, make = dataset
    ds = make()
    server.reset()
    for i in (5, 80, 40):
        assert ds[i] == RECORDS[i]
    assert server.requests == 3


def test_options_are_checked(dataset):
    _, make = dataset
    with pytest.raises(ValueError, match="concurrency must be a positive int"):
        make(concurrency=0)
    with pytest.raises(ValueError, match="coalesce_gap must be an int >= 0"):
        make(coalesce_gap=-1)


def test_global_shuffle_fetches_each_window_together(served, dataset, monkeypatch):
    import tfrx.data._random_access as ra

    server, make = dataset
    ds = make(coalesce_gap=0, concurrency=8)
    calls = []
    real = ra._cat_ranges

    def counted(fs, paths, starts, stops, concurrency):
        calls.append(len(paths))
        return real(fs, paths, starts, stops, concurrency)

    monkeypatch.setattr(ra, "_cat_ranges", counted)
    source = ds.shuffle_global(seed=5, block_size=32)
    assert source._readahead  # over a URL the next window is fetched while this one is read
    server.reset()
    got = list(source)
    assert sorted(got) == sorted(RECORDS) and got != RECORDS
    # One cat_ranges per window of 32 positions, each range one request, a window's requests in flight together.
    assert len(calls) == -(-len(RECORDS) // 32)
    assert server.requests == sum(calls) <= len(RECORDS)
    assert server.max_in_flight > 1
    local = tfrx.RandomAccessDataset(served[1], index=[ds.indexes[0]])
    assert not local.shuffle_global(seed=1)._readahead


def test_readahead_keeps_two_windows_in_flight_and_resumes_exactly(dataset):
    server, make = dataset
    ds = make(coalesce_gap=0, concurrency=2)
    source = ds.shuffle_global(seed=9, block_size=6)
    server.reset()
    full = list(source.iterator(epoch=0))
    # A window's requests are at most 2 at once; more in flight means the next window was fetching too.
    assert server.max_in_flight > 2
    for cut in (0, 5, 6, 7, 40, 119):
        it = source.iterator(epoch=0)
        head = [next(it) for _ in range(cut)]
        state = it.get_state()
        it.close()
        again = source.iterator(epoch=0)
        again.set_state(state)
        assert head + list(again) == full
