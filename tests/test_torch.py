"""PyTorch adapter: exactly-once sharding over DataLoader workers and DDP ranks, zero-copy tensors."""

import collections
import os
import json
import warnings

import numpy as np

import tfrx
import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

from data_helpers import interrupted_and_resumed, to_py, write_fake_files  # noqa: E402
from tfrx.data import Dataset, TFRecordDataset  # noqa: E402
from tfrx.data._structure import map_structure  # noqa: E402
from tfrx.torch import TorchIterableDataset, to_tensor, to_tensors  # noqa: E402


def _read_all_ranks(ds, world_size=2, num_workers=2, epoch=0):
    seen = []
    for rank in range(world_size):
        tds = ds.to_torch(rank=rank, world_size=world_size)
        tds.set_epoch(epoch)
        loader = DataLoader(tds, batch_size=None, num_workers=num_workers, multiprocessing_context="fork", timeout=60)
        seen += [to_py(x) for x in loader]
    return seen


def test_in_memory_source_exactly_once():
    seen = _read_all_ranks(Dataset.range(101).map(lambda x: x * 3))
    assert sorted(seen) == [x * 3 for x in range(101)]


@pytest.mark.parametrize("sizes", [[7, 3, 5, 1, 9], [10, 10, 10, 10], [13], [4, 0, 6], [2, 3, 4]])
def test_files_exactly_once_even_when_uneven(tmp_path, monkeypatch, sizes):
    files = write_fake_files(tmp_path, sizes)
    ds = TFRecordDataset(files).shuffle(8, seed=1).map(lambda r: np.frombuffer(r, dtype=np.uint8))
    seen = [bytes(x) for x in _read_all_ranks(ds)]
    expected = [f"{f}-{r}".encode() for f, n in enumerate(sizes) for r in range(n)]
    counts = collections.Counter(seen)
    assert sorted(counts) == sorted(expected) and set(counts.values()) == {1}


def test_list_files_shuffle_with_different_seeds_per_rank_is_still_exactly_once(tmp_path, monkeypatch):
    write_fake_files(tmp_path, [3, 4, 5, 6, 7, 8])
    seen = []
    for rank in range(2):  # each rank builds its own pipeline with its own random seed
        ds = TFRecordDataset(Dataset.list_files(str(tmp_path / "*.tfrecord"))).map(lambda r: np.frombuffer(r, np.uint8))
        loader = DataLoader(
            ds.to_torch(rank=rank, world_size=2),
            batch_size=None,
            num_workers=2,
            multiprocessing_context="fork",
            timeout=60,
        )
        seen += [bytes(x.numpy()) for x in loader]
    assert len(seen) == len(set(seen)) == 33


def test_batches_become_tensors_without_copies():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = to_tensor(a)
    a[0, 0] = 99
    assert t[0, 0].item() == 99 and t.dtype == torch.float32
    strings = np.array([b"x"], dtype=object)
    assert to_tensor(strings) is strings
    x, y = next(iter(Dataset.from_tensor_slices((np.ones((8, 2), np.float32), np.arange(8))).batch(4).to_torch()))
    assert x.shape == (4, 2) and y.dtype == torch.int64


def test_to_tensors_is_map_structure_of_to_tensor():
    Pair = collections.namedtuple("Pair", "a b")
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    element = (
        {"x": np.arange(4), "s": np.array([b"a", b"b"], dtype=object), "t": np.array(["u"]), "flag": np.array([True])},
        Pair(np.float32(2.5), [1, 2]),
        (frozen, b"raw", np.zeros((2, 2), np.uint8)),
    )
    fast, slow = to_tensors(element), map_structure(to_tensor, element)
    assert type(fast[1]) is Pair
    for a, b in zip(_leaves(fast), _leaves(slow), strict=True):
        assert type(a) is type(b)
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b)
        elif isinstance(a, np.ndarray):
            assert np.array_equal(a, b)
        else:
            assert a == b
    assert fast[0]["x"].data_ptr() == element[0]["x"].ctypes.data  # shared, not copied
    assert fast[0]["s"] is element[0]["s"]


def _leaves(x):
    out = []
    map_structure(out.append, x)
    return out


def test_pin_memory_and_len():
    ds = Dataset.from_tensor_slices((np.ones((10, 3), np.float32), np.arange(10))).batch(4)
    assert len(ds.to_torch()) == 3
    assert len(ds.to_torch(rank=1, world_size=2)) == 2  # rank 1 holds elements 1,3,5,7,9 -> 2 batches
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no accelerator here: pinning is a no-op with a warning
        batches = list(DataLoader(ds.to_torch(), batch_size=None, pin_memory=True))
    assert [b[0].shape[0] for b in batches] == [4, 4, 2]


def test_len_unknown_raises_typeerror(tmp_path, monkeypatch):
    files = write_fake_files(tmp_path, [2])
    with pytest.raises(TypeError):
        len(TFRecordDataset(files).to_torch())


def test_set_epoch_reshuffles_identically_on_every_rank():
    ds = Dataset.range(40).shuffle(40, seed=5)
    e0 = _read_all_ranks(ds, epoch=0)
    assert _read_all_ranks(ds, epoch=0) == e0
    e1 = _read_all_ranks(ds, epoch=1)
    assert e1 != e0 and sorted(e1) == sorted(e0) == list(range(40))


def test_rank_from_torch_distributed(monkeypatch):
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.distributed, "get_rank", lambda: 1)
    monkeypatch.setattr(torch.distributed, "get_world_size", lambda: 3)
    assert to_py(list(TorchIterableDataset(Dataset.range(10)))) == [1, 4, 7]


def test_state_dict_round_trip_in_process():
    tds = Dataset.range(10).shuffle(5, seed=1).batch(2).to_torch()
    it = iter(tds)
    first = [to_py(next(it)) for _ in range(2)]
    state = json.loads(json.dumps(tds.state_dict()))
    rest = [to_py(x) for x in it]
    resumed = Dataset.range(10).shuffle(5, seed=1).batch(2).to_torch()
    resumed.load_state_dict(state)
    assert [to_py(x) for x in resumed] == rest and len(first + rest) == 5


needs_reader = pytest.mark.skipif(
    not hasattr(__import__("tfrx").io, "RecordReader"), reason="the record reader is not in this build"
)


@needs_reader
@pytest.mark.parametrize("sizes", [[7, 3, 5, 1, 9], [11], [4, 0, 6]])
def test_real_tfrecord_files_exactly_once(tmp_path, sizes):
    # Written by tfrx's writer (byte-identical to TensorFlow's, tests/test_writer.py): TensorFlow never loads beside torch.
    paths = []
    for f, n in enumerate(sizes):
        p = str(tmp_path / f"shard-{f}.tfrecord")
        with tfrx.TFRecordWriter(p) as w:
            for r in range(n):
                w.write(b"%d-%d" % (f, r))
        paths.append(p)
    ds = TFRecordDataset(str(tmp_path / "shard-*.tfrecord")).map(lambda r: np.frombuffer(r, np.uint8))
    seen = [bytes(x) for x in _read_all_ranks(ds)]
    assert sorted(seen) == sorted(b"%d-%d" % (f, r) for f, n in enumerate(sizes) for r in range(n))


def test_file_cache_is_per_shard(tmp_path):
    ds = Dataset.range(40).map(lambda x: x * 2).cache(str(tmp_path / "cache"))
    for _ in range(2):  # the second epoch reads the caches
        seen = _read_all_ranks(ds)
        assert sorted(seen) == [x * 2 for x in range(40)]
    assert len(list(tmp_path.glob("cache.shard-*"))) == 4


@pytest.mark.parametrize("num_workers", [0, 2])
def test_stateful_dataloader_resumes_exactly(num_workers):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")

    def loader():
        ds = Dataset.range(40).shuffle(8, seed=1).map(lambda x: x * 10).to_torch()
        extra = {"multiprocessing_context": "fork", "timeout": 60} if num_workers else {}
        return stateful.StatefulDataLoader(ds, batch_size=None, num_workers=num_workers, **extra)

    dl = loader()
    it = iter(dl)
    first = [int(next(it)) for _ in range(7)]
    state = dl.state_dict()
    rest = [int(x) for x in it]
    resumed = loader()
    resumed.load_state_dict(state)
    assert [int(x) for x in resumed] == rest
    assert sorted(first + rest) == [x * 10 for x in range(40)]


def _parsed_pipeline(tmp_path, files=3, per_file=40):
    spec = {
        "x": tfrx.FixedLenFeature([5], tfrx.float32),
        "id": tfrx.FixedLenFeature([], tfrx.int64),
        "s": tfrx.VarLenFeature(tfrx.string),
        "name": tfrx.FixedLenFeature([], tfrx.string),
    }
    paths = []
    for f in range(files):
        p = str(tmp_path / f"shm-{f}.tfrecord")
        ids = np.arange(f * 1000, f * 1000 + per_file)
        cols = {
            "x": np.repeat(ids[:, None], 5, axis=1).astype(np.float32),
            "id": ids,
            "s": [[b"v%d" % i] for i in ids],
            "name": [b"n%d" % i for i in ids],
        }
        with tfrx.TFRecordWriter(p) as w:
            w.write_many(tfrx.encode_examples(cols))
        paths.append(p)
    return TFRecordDataset(paths).shuffle(16, seed=3).batch(7).parse(spec)


@pytest.mark.parametrize("num_workers", [1, 2])
def test_stateful_dataloader_resumes_exactly_through_the_shared_memory_handoff(tmp_path, num_workers):
    # The workers run the parse into their rings' slots, strings as views and without the trailing
    # prefetch; the saved positions must still be exact.
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    ds = _parsed_pipeline(tmp_path).prefetch(2)

    def loader():
        return stateful.StatefulDataLoader(
            ds.to_torch(), batch_size=None, num_workers=num_workers, multiprocessing_context="fork", timeout=60
        )

    first, rest, again = interrupted_and_resumed(loader, 5)
    assert [b["id"].tolist() for b in again] == [b["id"].tolist() for b in rest]
    assert all(b["name"].tolist() == [b"n%d" % i for i in b["id"].tolist()] for b in again)
    ids = sorted(i for b in first + rest for i in b["id"].tolist())
    assert ids == sorted(f * 1000 + i for f in range(3) for i in range(40))


@pytest.mark.parametrize("num_workers", [1, 2])
def test_workers_hand_batches_over_shared_memory_equal_to_the_ordinary_path(tmp_path, num_workers):
    ds = _parsed_pipeline(tmp_path)

    def batches(shared_memory):
        loader = DataLoader(
            ds.to_torch(shared_memory=shared_memory),
            batch_size=None,
            num_workers=num_workers,
            multiprocessing_context="fork",
            timeout=60,
        )
        return list(loader)  # every batch held at once: slots run out and later batches travel the ordinary way

    from tfrx.integrations import _shm_ring as shm_ring

    shm_ring._attached.clear()
    ours = batches(True)
    assert shm_ring._attached, "no batch came through a shared-memory ring"
    ordinary = batches(False)
    assert len(ours) == len(ordinary) > 6
    for a, b in zip(ours, ordinary):
        assert isinstance(a["x"], torch.Tensor) and a["x"].dtype == torch.float32
        assert torch.equal(a["x"], b["x"]) and torch.equal(a["id"], b["id"])
        assert a["s"].values.tolist() == b["s"].values.tolist()
        # The workers parse bytes as views; what arrives is what the parser gives by default, in the
        # ring and in the batches that travelled the ordinary way once every slot was held.
        assert type(a["s"].values) is np.ndarray and a["s"].values.dtype == object
        assert all(type(v) is bytes for v in a["s"].values) and type(a["name"]) is np.ndarray
        assert a["name"].tolist() == b["name"].tolist() == [b"n%d" % i for i in a["id"].tolist()]
    ids = sorted(int(i) for b in ours for i in b["id"])
    assert ids == sorted(f * 1000 + i for f in range(3) for i in range(40))
    for b in ours:  # no batch was overwritten by a later one while held
        np.testing.assert_array_equal(b["x"].numpy(), np.repeat(b["id"].numpy()[:, None], 5, axis=1).astype(np.float32))


@pytest.mark.slow
def test_spawned_workers_hand_batches_over_their_rings(tmp_path):
    # With spawn the dataset, parser included, is pickled into each worker (a process's own ring is not part of it).
    ds = _parsed_pipeline(tmp_path, files=2, per_file=45)
    loader = DataLoader(
        ds.prefetch(2).to_torch(), batch_size=None, num_workers=2, multiprocessing_context="spawn", timeout=120
    )
    from tfrx.integrations import _shm_ring as shm_ring

    shm_ring._attached.clear()
    batches = list(loader)
    assert shm_ring._attached, "no batch came through a shared-memory ring"
    assert sorted(int(i) for b in batches for i in b["id"]) == sorted(f * 1000 + i for f in range(2) for i in range(45))
    for b in batches:
        np.testing.assert_array_equal(b["x"].numpy(), np.repeat(b["id"].numpy()[:, None], 5, axis=1).astype(np.float32))
        assert b["name"].tolist() == [b"n%d" % i for i in b["id"].tolist()]


def test_shared_memory_slots_are_reused_and_leave_nothing_behind(tmp_path):
    before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    ds = _parsed_pipeline(tmp_path, files=2, per_file=200)
    loader = DataLoader(
        ds.to_torch(shared_memory_slots=2), batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=60
    )
    for _ in range(2):
        seen = []
        for b in loader:  # each batch released before the next: two slots a worker suffice
            seen += b["id"].tolist()
            assert torch.equal(b["x"][:, 0], b["id"].float())
        assert sorted(seen) == sorted(f * 1000 + i for f in range(2) for i in range(200))
    del loader, b
    after = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    assert not [p for p in after - before if p.startswith("tfrx-batches-")]
    with pytest.raises(ValueError, match="shared_memory_slots"):
        ds.to_torch(shared_memory_slots=0)


@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_loader_workers_share_the_cores_between_them(num_workers, monkeypatch):
    # k workers run the same pipeline at once: each sizes its AUTOTUNE stages and
    # parser threads by its share of the cores, not by all of them.
    import tfrx.options
    from tfrx.parsing._parser import _threads

    monkeypatch.setattr(tfrx.options, "_affinity", lambda: 12)
    ds = Dataset.from_tensor_slices(np.arange(num_workers * 4)).map(
        lambda x: (x, tfrx.options.usable_cores(), _threads(None))
    )
    loader = DataLoader(
        ds.to_torch(), batch_size=None, num_workers=num_workers, multiprocessing_context="fork", timeout=60
    )
    seen = {(int(c), int(d)) for _, c, d in loader}
    assert seen == {(12 // num_workers, 12 // num_workers)}
    assert tfrx.options.usable_cores() == 12  # the main process keeps all of them
    assert _threads(tfrx.AUTOTUNE) == 12


def test_share_cores_with_rejects_nonsense():
    import tfrx.options

    for bad in (0, -1, 1.5, None, True):
        with pytest.raises(ValueError):
            tfrx.options.share_cores_with(bad)


def test_workers_parse_bytes_as_views_only_where_no_stage_of_the_users_sees_it(tmp_path):
    from tfrx.parsing._bytes_array import BytesArray
    from tfrx.integrations._worker_pool import Slots, for_handoff

    ds = _parsed_pipeline(tmp_path, files=1, per_file=5)
    rewritten, views = for_handoff(ds.prefetch(2), Slots())
    assert views and type(next(iter(rewritten))["name"]) is BytesArray
    assert type(next(iter(ds))["name"]) is np.ndarray  # the user's pipeline is left as it was
    for other in (ds.map(lambda b: b), ds.unbatch()):
        assert for_handoff(other, Slots()) == (other, False)
    spec = {"name": tfrx.FixedLenFeature([], tfrx.string)}
    own = TFRecordDataset(str(tmp_path / "shm-0.tfrecord")).batch(2).parse(tfrx.ExampleParser(spec, bytes_as="views"))
    rewritten, views = for_handoff(own, Slots())
    assert not views  # the user asked for views: they get BytesArray, kept as such
    assert type(next(iter(rewritten))["name"]) is BytesArray
