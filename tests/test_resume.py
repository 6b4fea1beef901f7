"""Exact resume with tfrx.testing.assert_resumes_exactly: random-access and streaming chains, torch."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tfrx
from tfrx.data._shard import shard_pipeline
from tfrx.testing import assert_resumes_exactly, elements_equal


def _first_int(b: bytes) -> int:
    return int(bytes(b).split(b";")[0])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("resume")
    out, n = [], 0
    for f, count in enumerate((9, 14, 4)):
        path = str(d / f"r-{f}.tfrecord")
        tfrx.write_records(path, [b"%d;" % (n + i) + b"x" * (n + i) for i in range(count)])
        n += count
        out.append(path)
    return out


def test_random_access_chain_resumes_at_every_step(files):
    def make():
        ds = tfrx.RandomAccessDataset(files)
        return ds.shuffle_global(11, block_size=5, readahead=True).map(_first_int).batch(4).prefetch(2)

    full = assert_resumes_exactly(make)
    assert sorted(int(x) for b in full for x in b) == list(range(27))


def test_random_access_resumes_in_later_epoch_and_repeat(files):
    make = lambda: tfrx.RandomAccessDataset(files).shuffle_global(3, block_size=4).repeat(2).map(_first_int)
    full = assert_resumes_exactly(make, epoch=3)
    assert sorted(full) == sorted(list(range(27)) * 2)


def test_sharded_random_access_resumes(files):
    def make():
        g = tfrx.RandomAccessDataset(files).shuffle_global(7, equal_shards="pad", block_size=3)
        return shard_pipeline(g.map(_first_int), [(2, 1), (2, 0)])

    assert_resumes_exactly(make)


def test_random_access_state_is_small(files):
    it = tfrx.RandomAccessDataset(files).shuffle_global(1).iterator(epoch=2)
    next(it)
    state = it.state_dict()
    assert state == {"seed": 1, "epoch": [2], "shards": [], "position": 1}
    assert len(json.dumps(state)) < 100
    it.close()


def test_state_of_another_shard_is_refused(files):
    g = tfrx.RandomAccessDataset(files).shuffle_global(1)
    it = g._shard_source(2, 0).iterator()
    with pytest.raises(ValueError, match="shards"):
        g.iterator().load_state_dict(it.state_dict())


def test_streaming_chain_resumes_at_every_step(files):
    def make():
        return tfrx.TFRecordDataset(files).shuffle(6, seed=2).map(_first_int).batch(3).prefetch(2)

    full = assert_resumes_exactly(make)
    assert sorted(int(x) for b in full for x in b) == list(range(27))


def test_parsed_random_access_chain(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    tfrx.write_records(path, [tfrx.make_example({"x": [i, 2 * i]}).SerializeToString() for i in range(10)])
    spec = {"x": tfrx.FixedLenFeature([2], tfrx.int64)}
    make = lambda: tfrx.RandomAccessDataset([path], features=spec).shuffle_global(4, block_size=3).batch(3)
    assert_resumes_exactly(make)


def test_helper_catches_a_bad_resume():
    class Bad:
        def iterator(self, epoch):
            return _Forgetful()

    class _Forgetful:
        def __init__(self):
            self.i = 0

        def __iter__(self):
            return self

        def __next__(self):
            if self.i >= 3:
                raise StopIteration
            self.i += 1
            return self.i

        def state_dict(self):
            return {}

        def load_state_dict(self, state):
            pass

        def close(self):
            pass

    with pytest.raises(AssertionError, match="resumed from the state at step 1"):
        assert_resumes_exactly(Bad)


def test_elements_equal():
    assert elements_equal({"a": np.arange(3), "b": [b"x"]}, {"a": np.arange(3), "b": [b"x"]})
    assert not elements_equal({"a": np.arange(3)}, {"a": np.arange(4)})
    assert not elements_equal((1, 2), (1, 3))


# ---------------------------------------------------------------- torch
@pytest.mark.parametrize("num_workers", [0, 2])
def test_stateful_dataloader_iterable_random_access(files, num_workers):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    from tfrx.torch import TorchIterableDataset

    def loader():
        g = tfrx.RandomAccessDataset(files).shuffle_global(5, block_size=4).map(_first_int)
        extra = {"multiprocessing_context": "fork", "timeout": 60} if num_workers else {}
        return stateful.StatefulDataLoader(TorchIterableDataset(g), batch_size=None, num_workers=num_workers, **extra)

    dl = loader()
    it = iter(dl)
    first = [int(next(it)) for _ in range(8)]
    state = dl.state_dict()
    rest = [int(x) for x in it]
    resumed = loader()
    resumed.load_state_dict(state)
    assert [int(x) for x in resumed] == rest
    assert sorted(first + rest) == list(range(27))


def test_stateful_dataloader_map_style(files):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    import torch

    def loader():
        ds = tfrx.RandomAccessDataset(files, transform=_first_int)
        return stateful.StatefulDataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(1))

    dl = loader()
    it = iter(dl)
    first = [int(x) for _ in range(3) for x in next(it)]
    state = dl.state_dict()
    rest = [int(x) for b in it for x in b]
    resumed = loader()
    resumed.load_state_dict(state)
    assert [int(x) for b in resumed for x in b] == rest
    assert sorted(first + rest) == list(range(27))
