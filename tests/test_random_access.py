"""RandomAccessDataset: indexing, batched reads, verification, PyTorch map-style use, global shuffle."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import tfrx
from tfrx.data._global_shuffle import shard_positions


def _write(tmp_path, counts=(10, 13), size=None):
    recs, files = [], []
    for f, n in enumerate(counts):
        part = [(b"%d;" % (len(recs) + i)) * (1 if size is None else size) for i in range(n)]
        path = str(tmp_path / f"part-{f}.tfrecord")
        tfrx.write_records(path, part)
        recs += part
        files.append(path)
    return files, recs


@pytest.fixture
def two_files(tmp_path):
    return _write(tmp_path)


def _ids(elements) -> list[int]:
    return [int(bytes(e).split(b";")[0]) for e in elements]


# ---------------------------------------------------------------- map-style access
@pytest.mark.parametrize("use_mmap", [True, False])
def test_len_getitem_and_batches(two_files, use_mmap):
    files, recs = two_files
    ds = tfrx.RandomAccessDataset(files, use_mmap=use_mmap)
    assert len(ds) == 23 and ds.file_counts() == [10, 13]
    assert [ds[i] for i in range(23)] == recs
    assert ds[-1] == recs[-1] and ds[np.int64(4)] == recs[4]
    req = [22, 0, 10, 9, 9, 3, -2]
    assert ds[req] == [recs[i] for i in req]
    assert ds[np.array(req)] == [recs[i] for i in req]
    assert ds[2:20:5] == recs[2:20:5]
    assert ds[[]] == []
    assert list(ds) == recs
    assert ds.locate(12) == (files[1], 2, 2 * (len(recs[10]) + 16))
    with pytest.raises(IndexError):
        ds[23]
    with pytest.raises(IndexError):
        ds[[0, -24]]
    batch = ds.read_batch([5, 1])
    assert isinstance(batch, tfrx.RecordBatch) and batch.to_list() == [recs[5], recs[1]]


def test_with_index_and_transform(two_files):
    files, recs = two_files
    ds = tfrx.TFRecordDataset(files).with_index()
    assert len(ds) == 23 and ds[11] == recs[11]
    ds = tfrx.RandomAccessDataset(files, transform=len)
    assert ds[[0, 22]] == [len(recs[0]), len(recs[22])]


def test_features_parse(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    tfrx.write_records(
        path, [tfrx.make_example({"x": [i, i + 1], "s": b"k%d" % i}).SerializeToString() for i in range(8)]
    )
    spec = {"x": tfrx.FixedLenFeature([2], tfrx.int64), "s": tfrx.FixedLenFeature([], tfrx.string)}
    ds = tfrx.RandomAccessDataset([path], features=spec)
    one = ds[3]
    np.testing.assert_array_equal(one["x"], [3, 4])
    assert [int(d["x"][0]) for d in ds[[7, 2]]] == [7, 2]
    clone = pickle.loads(pickle.dumps(ds))
    assert clone[5]["s"] == ds[5]["s"]


def test_data_crc_and_stale_index_errors(tmp_path):
    files, recs = _write(tmp_path, counts=(6,), size=20)
    tfrx.build_index(files[0])
    blob = bytearray(open(files[0], "rb").read())
    start = 3 * (len(recs[0]) + 16)
    blob[start + 12 + 4] ^= 1
    open(files[0], "wb").write(bytes(blob))  # same size: the index still loads
    ds = tfrx.RandomAccessDataset(files)
    assert ds[2] == recs[2]
    for reader in (ds, tfrx.RandomAccessDataset(files, use_mmap=False)):
        with pytest.raises(tfrx.CorruptRecordError, match=r"data CRC mismatch in .*record 3 at byte") as e:
            reader[[1, 3]]
        assert e.value.record_index == 3 and e.value.kind == "data_crc"
    assert tfrx.RandomAccessDataset(files, verify=False)[3] != recs[3]
    # An index of another layout: the length field disagrees with the index.
    ix = tfrx.RecordIndex(files[0], np.array([0]), len(blob), lengths=np.array([7]))
    for use_mmap in (True, False):
        with pytest.raises(tfrx.CorruptRecordError, match="stale"):
            tfrx.RandomAccessDataset(files, index=[ix], use_mmap=use_mmap)[0]
    with pytest.raises(tfrx.IndexFileError, match="inconsistent"):
        tfrx.RandomAccessDataset(files, index=[tfrx.RecordIndex(files[0], np.array([0, 10]), len(blob))])


@pytest.mark.parametrize("use_mmap", [True, False])
def test_threads_share_one_dataset(tmp_path, use_mmap):
    files, recs = _write(tmp_path, counts=(200, 57), size=40)
    ds = tfrx.RandomAccessDataset(files, use_mmap=use_mmap)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(50):
            idx = rng.integers(0, len(ds), 16)
            if ds[idx] != [recs[i] for i in idx]:
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_pickles_without_open_files(two_files):
    files, recs = two_files
    ds = tfrx.RandomAccessDataset(files)
    ds[0]
    clone = pickle.loads(pickle.dumps(ds))
    assert clone[[3, 17]] == [recs[3], recs[17]]


def test_torch_dataloader_map_style(two_files):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, DistributedSampler

    files, recs = two_files
    ds = tfrx.RandomAccessDataset(files, transform=lambda b: int(b.split(b";")[0]))
    loader = DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
    got = sorted(int(x) for batch in loader for x in batch)
    assert got == list(range(23))
    seen = []
    for rank in range(2):
        sampler = DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=True, seed=3, drop_last=False)
        seen += [int(x) for batch in DataLoader(ds, sampler=sampler, batch_size=5) for x in batch]
    assert sorted(set(seen)) == list(range(23)) and len(seen) == 24  # DistributedSampler pads


def _first_int(b: bytes) -> int:
    return int(b.split(b";")[0])


def test_torch_dataloader_workers(two_files):
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    files, _ = two_files
    ds = tfrx.RandomAccessDataset(files, transform=_first_int)
    loader = DataLoader(ds, batch_size=3, num_workers=2, multiprocessing_context="fork", timeout=60)
    assert [int(x) for batch in loader for x in batch] == list(range(23))


# ---------------------------------------------------------------- global shuffle
PINNED = {
    (0, 0): [18, 4, 20, 10, 11, 2, 21, 6, 19, 3, 22, 8, 0, 12, 16, 13, 7, 5, 17, 14, 9, 1, 15],
    (0, 1): [15, 19, 18, 16, 14, 1, 22, 3, 4, 0, 11, 21, 10, 17, 9, 13, 7, 20, 6, 8, 12, 2, 5],
    (1234, 0): [3, 8, 21, 17, 9, 15, 5, 13, 22, 0, 12, 16, 11, 2, 7, 10, 6, 4, 18, 14, 20, 1, 19],
}


@pytest.mark.parametrize("seed,epoch", sorted(PINNED))
def test_global_shuffle_order_is_pinned(two_files, seed, epoch):
    files, _ = two_files
    ds = tfrx.RandomAccessDataset(files)
    assert _ids(ds.shuffle_global(seed).iterator(epoch=epoch)) == PINNED[(seed, epoch)]
    assert _ids(ds.shuffle_global(seed, block_size=4, readahead=True).iterator(epoch=epoch)) == PINNED[(seed, epoch)]


def test_global_shuffle_epochs_and_repeat(two_files):
    files, _ = two_files
    g = tfrx.RandomAccessDataset(files).shuffle_global(0)
    assert _ids(iter(g)) == PINNED[(0, 0)]
    assert _ids(iter(g)) == PINNED[(0, 1)]  # the next pass reshuffles
    two = _ids(tfrx.RandomAccessDataset(files).shuffle_global(5).repeat(2))
    assert sorted(two[:23]) == sorted(two[23:]) == list(range(23)) and two[:23] != two[23:]
    assert len(g) == 23


def test_close_ends_iteration_and_keeps_the_position(two_files):
    files, _ = two_files
    it = tfrx.RandomAccessDataset(files).shuffle_global(0, block_size=8).iterator(epoch=0)
    assert _ids([next(it), next(it)]) == PINNED[(0, 0)][:2]
    it.close()
    assert list(it) == [] and it.state_dict()["position"] == 2


def test_file_order_dataset(two_files):
    files, recs = two_files
    ds = tfrx.RandomAccessDataset(files)
    assert list(ds.as_dataset(block_size=5)) == recs
    assert list(ds.iter()) == recs
    assert _ids(ds.iter(seed=0, epoch=1)) == PINNED[(0, 1)]
    parts = [_ids(ds.iter(seed=0, epoch=1, rank=r, world_size=3)) for r in range(3)]
    assert parts[0] == PINNED[(0, 1)][0::3] and sorted(sum(parts, [])) == list(range(23))


@pytest.mark.parametrize("n", [0, 1, 7, 23, 24])
@pytest.mark.parametrize("ranks,workers", [(2, 2), (3, 1), (1, 4), (4, 3)])
def test_exactly_once_over_ranks_and_workers(n, ranks, workers):
    covered = np.concatenate(
        [shard_positions(n, [(ranks, r), (workers, w)]) for r in range(ranks) for w in range(workers)]
    )
    assert sorted(covered.tolist()) == list(range(n))


@pytest.mark.parametrize("mode", ["drop", "pad"])
def test_equal_shards(two_files, mode):
    files, _ = two_files
    g = tfrx.RandomAccessDataset(files).shuffle_global(5, equal_shards=mode)
    parts = [_ids(g._shard_source(2, r).iterator(epoch=0)) for r in range(2)]
    assert len(parts[0]) == len(parts[1]) == (11 if mode == "drop" else 12)
    assert [len(g._shard_source(2, r)) for r in range(2)] == [len(p) for p in parts]
    flat = parts[0] + parts[1]
    if mode == "drop":
        assert len(set(flat)) == 22
    else:
        assert set(flat) == set(range(23)) and len(flat) == 24


def test_shards_through_pipeline_transformations(two_files):
    files, _ = two_files
    from tfrx.data._shard import shard_pipeline

    g = tfrx.RandomAccessDataset(files).shuffle_global(0).map(_first_int).batch(4)
    got = []
    for r in range(2):
        for w in range(2):
            got += [int(x) for b in shard_pipeline(g, [(2, r), (2, w)]).iterator(epoch=0) for x in b]
    assert sorted(got) == list(range(23))
    whole = [int(x) for b in g.iterator(epoch=0) for x in b]
    assert whole == PINNED[(0, 0)]


def test_torch_iterable_adapter_shards_the_permutation(two_files):
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from tfrx.torch import TorchIterableDataset

    files, _ = two_files
    g = tfrx.RandomAccessDataset(files).shuffle_global(0).map(_first_int)
    got = []
    for rank in range(2):
        tds = TorchIterableDataset(g, rank=rank, world_size=2)
        loader = DataLoader(tds, batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=60)
        got += [int(x) for x in loader]
    assert sorted(got) == list(range(23))
    tds = TorchIterableDataset(g, rank=0, world_size=1)
    tds.set_epoch(1)
    assert [int(x) for x in DataLoader(tds, batch_size=None)] == PINNED[(0, 1)]


def test_remote_files_through_fsspec(tmp_path, monkeypatch):
    fsspec = pytest.importorskip("fsspec")
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    recs = [b"%d;" % i * (i + 1) for i in range(30)]
    local = str(tmp_path / "r.tfrecord")
    tfrx.write_records(local, recs)
    url = "memory://tfrx-test/r.tfrecord"
    with fsspec.open(url, "wb") as f:
        f.write(open(local, "rb").read())
    try:
        ds = tfrx.RandomAccessDataset([url])
        assert len(ds) == 30 and list((tmp_path / "cache" / "index").iterdir())
        assert ds[[29, 0, 7, 8]] == [recs[29], recs[0], recs[7], recs[8]]
        assert sorted(ds.shuffle_global(1)) == sorted(recs)
    finally:
        fsspec.filesystem("memory").rm("/tfrx-test", recursive=True)


@pytest.mark.parametrize("use_mmap", [True, False])
def test_bogus_indexes_never_read_out_of_bounds(tmp_path, use_mmap):
    files, recs = _write(tmp_path, counts=(5,), size=10)
    size = len(open(files[0], "rb").read())
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 4))
        offsets = np.sort(rng.integers(0, 2 * size, n)) + np.arange(n) * 16
        lengths = rng.integers(0, 3 * size, n)
        ix = tfrx.RecordIndex(files[0], offsets, int(offsets[-1] + lengths[-1] + 16), lengths=lengths)
        try:
            ds = tfrx.RandomAccessDataset(files, index=[ix], use_mmap=use_mmap)
        except tfrx.IndexFileError:
            continue  # overlapping records: refused up front
        with pytest.raises(tfrx.CorruptRecordError):
            ds[list(range(n))]
