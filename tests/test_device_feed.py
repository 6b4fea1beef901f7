"""``to_torch(device=...)``: batches fed to a device through reused pinned memory, one copy each, prefetched.

The feeder runs here on ``StandInBackend``, a CPU stand-in whose copies
complete later (in order or shuffled) and read the host memory only when
they complete: a batch handed out before its copy ended, or a slot written
again before the copy that reads it ended, shows up as wrong values. The
``cuda``-marked tests run the same checks on a real GPU.
"""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

from data_helpers import id_files  # noqa: E402
from tfrx.data import TFRecordDataset  # noqa: E402
from tfrx.options import usable_cores  # noqa: E402
from tfrx.integrations import _device_feed  # noqa: E402
from tfrx.integrations._device_feed import DeviceFeeder, StandInBackend  # noqa: E402
from tfrx.integrations.torch import DeviceBytes  # noqa: E402
from tfrx.integrations._worker_pool import WorkerCosts, workers_for  # noqa: E402

SPEC = {
    "x": tfrx.FixedLenFeature([5], tfrx.float32),
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "name": tfrx.FixedLenFeature([], tfrx.string),
}
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


def _pipeline(paths, batch=7):
    return TFRecordDataset(paths).shuffle(16, seed=3).batch(batch).parse(SPEC)


def _same(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.keys() == b.keys()
        for k in a:
            if isinstance(b[k], torch.Tensor):
                assert isinstance(a[k], torch.Tensor) and a[k].dtype == b[k].dtype
                assert torch.equal(a[k].cpu(), b[k]), k
            else:
                assert type(a[k]) is type(b[k]) and a[k].tolist() == b[k].tolist()


def test_no_device_and_cpu_keep_todays_batches(tmp_path):
    paths = id_files(tmp_path)
    want = list(_pipeline(paths).to_torch())
    for device in (None, "cpu", torch.device("cpu")):
        tds = _pipeline(paths).to_torch(device=device)
        _same(list(tds), want)
        assert tds._feeder is None and tds.state_dict().keys() == {"epoch", "iterator"}


@pytest.mark.parametrize("order", ["fifo", "random"])
def test_batches_arrive_whole_one_copy_each_bytes_on_host(tmp_path, order):
    paths = id_files(tmp_path)
    want = list(_pipeline(paths).to_torch())
    backend = StandInBackend(order=order, seed=1)
    tds = _pipeline(paths).to_torch(device=backend, device_prefetch=3)
    got = list(tds)
    _same(got, want)
    assert backend.copies == len(want)  # one host-to-device copy per batch
    assert backend.handed_over == sorted(backend.handed_over)  # in the order issued
    # the first batch is staged (it sizes the pinned buffers); the parse writes the others into them
    assert tds._feeder.staged == 1 and tds._feeder.direct == len(want) - 1
    assert all(b["name"].dtype == object for b in got)  # bytes stay on the host


@pytest.mark.parametrize("workers", [0, 2])
def test_bytes_on_the_device_when_asked(tmp_path, workers):
    paths = id_files(tmp_path)
    extra = {"num_workers": workers, "multiprocessing_context": "fork"} if workers else {}
    want = list(_pipeline(paths).to_torch(**extra))
    tds = _pipeline(paths).to_torch(device=StandInBackend(order="random"), bytes_on_device=True, **extra)
    got = list(tds)
    tds.close()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        names = g["name"]
        assert isinstance(names, DeviceBytes) and names.shape == w["name"].shape
        assert isinstance(names.values, torch.Tensor) and names.values.dtype == torch.uint8
        values, offsets = names.values.numpy().tobytes(), names.offsets.tolist()
        assert [values[a:b] for a, b in zip(offsets[:-1], offsets[1:])] == w["name"].tolist()
        assert torch.equal(g["id"], w["id"])  # (in the same copy as the numbers)


@pytest.mark.parametrize("lazy", [False, True])
def test_parse_into_pinned_buffers_never_reused_before_the_copy(tmp_path, lazy):
    # A prefetch thread parses ahead into the pinned buffers while copies complete late (lazy: only
    # when someone waits), in a random order: a buffer rewritten before its copy read it shows here.
    paths = id_files(tmp_path, (90, 70, 80))
    want = list(_pipeline(paths, batch=5).to_torch())
    backend = StandInBackend(order="random", seed=3)
    if lazy:
        backend.done = lambda event: event.complete
    tds = _pipeline(paths, batch=5).prefetch(3).to_torch(device=backend, device_prefetch=2)
    got = list(tds)
    _same(got, want)
    assert tds._feeder.direct > 0 and tds._feeder.staged + tds._feeder.direct == len(want)


def test_prefetches_k_batches_ahead(tmp_path):
    paths = id_files(tmp_path)
    total = len(list(_pipeline(paths)))
    for k in (1, 2, 4):
        backend = StandInBackend()
        issued = [backend.copies for _ in _pipeline(paths).to_torch(device=backend, device_prefetch=k)]
        assert issued == [min(i + 1 + k, total) for i in range(total)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefetch=st.integers(1, 4),
    seed=st.integers(0, 1000),
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=12),
)
def test_a_slot_is_reused_only_after_its_copy_completes(prefetch, seed, sizes):
    # Batches of varying size (growing slots), copies completing in a random order: each
    # staging slot is rewritten while earlier copies are pending, and must wait for its own.
    rng = np.random.default_rng(seed)
    batches = [{"a": rng.integers(0, 1 << 40, n), "b": rng.random((n, 3)).astype(np.float32)} for n in sizes]
    backend = StandInBackend(order="random", seed=seed, torch_views=False)
    feeder = DeviceFeeder(backend, prefetch=prefetch)
    got = [x for x, _ in feeder.feed((b, i) for i, b in enumerate(batches))]
    feeder.close()  # (a synchronize)
    for g, b in zip(got, batches):
        np.testing.assert_array_equal(g["a"], b["a"])
        np.testing.assert_array_equal(g["b"], b["b"])


def test_the_stand_in_catches_a_slot_reused_too_early(monkeypatch):
    # The check above can fail: a feeder that does not wait for the copy before rewriting a slot
    # hands out batches holding a later batch's values.
    def no_wait(self):
        slot = self._staging[self._next]
        self._next = (self._next + 1) % len(self._staging)
        slot.event = None
        return slot

    monkeypatch.setattr(DeviceFeeder, "_free_staging", no_wait)
    batches = [{"a": np.full(8, i)} for i in range(12)]
    backend = StandInBackend(torch_views=False)
    backend.done = lambda event: event.complete  # (no copy completes on its own)
    feeder = DeviceFeeder(backend, prefetch=2)
    got = [x for x, _ in feeder.feed((b, None) for b in batches)]
    backend.drain()
    assert [x["a"][0] for x in got] != list(range(12))


def test_a_batch_is_handed_over_only_after_the_consumer_waits_for_its_copy():
    backend = StandInBackend(torch_views=False)
    backend.done = lambda event: event.complete  # copies complete only when someone waits
    feeder = DeviceFeeder(backend, prefetch=3)
    got = []
    for x, i in feeder.feed(({"a": np.full(4, i)}, i) for i in range(6)):
        assert backend.handed_over == list(range(i + 1))  # this batch's copy is waited for before it is read
        got.append(x)
    feeder.close()  # (a synchronize: every copy has completed)
    assert [x["a"].tolist() for x in got] == [[i] * 4 for i in range(6)]


@pytest.mark.parametrize("workers", [0, 2])
def test_resume_from_state_dict(tmp_path, workers):
    paths = id_files(tmp_path)
    extra = {"num_workers": workers, "multiprocessing_context": "fork"} if workers else {}
    want = list(_pipeline(paths).to_torch(**extra))
    for stop in (0, 1, 5, len(want) - 1):
        tds = _pipeline(paths).to_torch(device=StandInBackend(order="random"), device_prefetch=2, **extra)
        it = iter(tds)
        head = [next(it) for _ in range(stop)]
        state = tds.state_dict()  # after the batches handed out, not those prefetched
        it.close()
        tds.close()
        again = _pipeline(paths).to_torch(device=StandInBackend(), **extra)
        again.load_state_dict(state)
        _same(head + list(again), want)
        again.close()


def test_own_workers_copy_from_their_slots_registered_as_pinned(tmp_path):
    paths = id_files(tmp_path, (60, 60))
    want = list(_pipeline(paths).to_torch(num_workers=2, multiprocessing_context="fork"))
    backend = StandInBackend(order="random", seed=5)
    tds = _pipeline(paths).to_torch(
        device=backend, num_workers=2, multiprocessing_context="fork", shared_memory_slots=3
    )
    _same(list(tds), want)  # the slots were held until their copies had read them
    assert tds._feeder.direct == len(want) and tds._feeder.staged == 0
    assert backend.registered == []  # unregistered when the epoch ended
    tds.close()


def test_device_in_dataloader_workers_is_refused(tmp_path):
    loader = DataLoader(_pipeline(id_files(tmp_path)).to_torch(device="cuda"), batch_size=None, num_workers=1)
    with pytest.raises(ValueError, match="num_workers=0"):
        next(iter(loader))


def test_bad_device_and_prefetch_are_refused(tmp_path):
    ds = _pipeline(id_files(tmp_path))
    with pytest.raises(ValueError, match="device must be"):
        ds.to_torch(device="tpu")
    with pytest.raises(ValueError, match="device_prefetch"):
        ds.to_torch(device="cuda", device_prefetch=0)
    with pytest.raises(ValueError, match="num_workers"):
        ds.to_torch(num_workers="many")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error of a machine without CUDA")
def test_cuda_without_a_gpu_says_so(tmp_path):
    tds = _pipeline(id_files(tmp_path)).to_torch(device="cuda")
    with pytest.raises(RuntimeError, match="torch.cuda.is_available"):
        next(iter(tds))


def test_no_cuda_at_import_or_construction(tmp_path):
    paths = id_files(tmp_path)
    code = (
        "import torch, tfrx, tfrx.integrations.torch, tfrx.integrations._device_feed\n"
        f"tds = tfrx.TFRecordDataset({paths!r}).batch(4).to_torch(device='cuda')\n"
        "print(torch.cuda.is_initialized())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_auto_worker_count_from_costs():
    cheap_handoff = WorkerCosts(make=0.010, handoff=0.001, batches=4)
    assert workers_for(cheap_handoff, cores=16) == 10
    assert workers_for(cheap_handoff, cores=4) == 3  # one core left to the main process
    assert workers_for(cheap_handoff, cores=2) == 0  # one worker would only add the handoff
    assert workers_for(cheap_handoff, cores=1) == 0
    assert workers_for(WorkerCosts(make=0.0015, handoff=0.001, batches=4), cores=16) == 2
    assert workers_for(WorkerCosts(make=0.001, handoff=0.001, batches=4), cores=16) == 0  # no gain
    assert workers_for(WorkerCosts(make=0.0, handoff=0.0, batches=0), cores=16) == 0


def test_auto_workers_resolve_and_resume(tmp_path):
    paths = id_files(tmp_path)
    want = list(_pipeline(paths).to_torch())
    tds = _pipeline(paths).to_torch(num_workers="auto", multiprocessing_context="fork")
    got = list(tds)
    count = tds._workers()
    assert 0 <= count < max(2, usable_cores())
    assert sorted(i for b in got for i in b["id"].tolist()) == sorted(i for b in want for i in b["id"].tolist())
    state = tds.state_dict()
    tds.close()
    again = _pipeline(paths).to_torch(num_workers="auto", multiprocessing_context="fork")
    again.load_state_dict(state)
    assert again._workers() == count and list(again) == []  # the state was at the end of the epoch
    again.close()


# ------------------------------------------------------------------ a real GPU


@pytest.mark.cuda
@cuda
@pytest.mark.parametrize("workers", [0, 2])
def test_cuda_batches_land_on_the_gpu(tmp_path, workers):
    paths = id_files(tmp_path)
    extra = {"num_workers": workers, "multiprocessing_context": "fork"} if workers else {}
    want = list(_pipeline(paths).to_torch(**extra))
    tds = _pipeline(paths).to_torch(device="cuda", **extra)
    got = list(tds)
    assert all(b["x"].is_cuda and b["id"].is_cuda for b in got)
    torch.cuda.synchronize()
    _same(got, want)
    tds.close()


@pytest.mark.cuda
@cuda
def test_cuda_staging_is_pinned_and_reused(tmp_path):
    backend = _device_feed.CudaBackend("cuda")
    host, array = backend.pinned(1 << 16)
    assert host.is_pinned()
    feeder = DeviceFeeder(backend, prefetch=2)
    batches = [{"a": np.full(1000, i, np.int64)} for i in range(20)]
    got = [x["a"][0].item() for x, _ in feeder.feed((b, None) for b in batches)]
    assert got == list(range(20)) and feeder.staged == 20
    assert len({id(s.array) for s in feeder._staging}) == len(feeder._staging)
    feeder.close()
