"""``to_torch(num_workers=k)``: tfrx's own worker processes, in PyTorch's order, exactly once, resumable."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tfrx

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

from data_helpers import id_files, interrupted_and_resumed  # noqa: E402
from tfrx.data import TFRecordDataset  # noqa: E402


SPEC = {
    "x": tfrx.FixedLenFeature([5], tfrx.float32),
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "s": tfrx.VarLenFeature(tfrx.string),
    "name": tfrx.FixedLenFeature([], tfrx.string),
}


def _pipeline(paths, batch=7):
    return TFRecordDataset(paths).shuffle(16, seed=3).batch(batch).parse(SPEC).prefetch(2)


def _ids(batches):
    return [b["id"].tolist() for b in batches]


def _check(batch):
    assert isinstance(batch["x"], torch.Tensor) and batch["x"].dtype == torch.float32
    np.testing.assert_array_equal(batch["x"][:, 0].numpy(), batch["id"].numpy().astype(np.float32))
    assert type(batch["name"]) is np.ndarray and batch["name"].dtype == object
    assert batch["name"].tolist() == [b"n%d" % i for i in batch["id"].tolist()]
    values = batch["s"].values
    assert type(values) is np.ndarray and all(type(v) is bytes for v in values)


@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_same_batches_in_the_same_order_as_dataloader_workers(tmp_path, num_workers):
    # Files of different lengths: a worker runs out before the others, and the turn skips it, as in PyTorch.
    paths = id_files(tmp_path, (40, 75, 12, 33))
    ds = _pipeline(paths)
    reference = list(
        DataLoader(ds.to_torch(), batch_size=None, num_workers=num_workers, multiprocessing_context="fork", timeout=60)
    )
    own = ds.to_torch(num_workers=num_workers)
    try:
        ours = list(DataLoader(own, batch_size=None))  # every batch held: slots run out, later ones are copied
        assert _ids(ours) == _ids(reference)
        for a, b in zip(ours, reference):
            _check(a)
            assert torch.equal(a["x"], b["x"])
            assert a["s"].values.tolist() == b["s"].values.tolist()
            np.testing.assert_array_equal(a["s"].indices, b["s"].indices)
        expected = sorted(f * 1000 + i for f, n in enumerate((40, 75, 12, 33)) for i in range(n))
        assert sorted(i for b in ours for i in b["id"].tolist()) == expected
        # The next epoch reshuffles, as DataLoader workers do after set_epoch.
        own.set_epoch(1)
        tds = ds.to_torch()
        tds.set_epoch(1)
        reference = DataLoader(
            tds, batch_size=None, num_workers=num_workers, multiprocessing_context="fork", timeout=60
        )
        assert _ids(own) == _ids(reference) != _ids(ours)
    finally:
        own.close()


def test_ranks_split_first_then_the_workers(tmp_path):
    paths = id_files(tmp_path, (20, 20, 20, 20, 20))
    ds = TFRecordDataset(paths).batch(3).parse(SPEC)
    seen = []
    for rank in range(2):
        own = ds.to_torch(rank=rank, world_size=2, num_workers=2)
        reference = ds.to_torch(rank=rank, world_size=2)
        loader = DataLoader(reference, batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=60)
        try:
            batches = _ids(own)
            assert batches == _ids(loader)
        finally:
            own.close()
        seen += [i for b in batches for i in b]
    assert sorted(seen) == sorted(f * 1000 + i for f in range(5) for i in range(20))


def test_breaking_off_stops_the_epoch_and_frees_every_slot(tmp_path):
    before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    paths = id_files(tmp_path, (200, 200))
    own = _pipeline(paths, batch=8).to_torch(num_workers=2, shared_memory_slots=3)
    try:
        for _ in range(3):  # break off early, several times: the workers stop and their slots come back
            for k, batch in enumerate(own):
                _check(batch)
                if k == 5:
                    break
            del batch
        full = _ids(own)
        assert sorted(i for b in full for i in b) == sorted(f * 1000 + i for f in range(2) for i in range(200))
        # A new iteration stops one still running.
        first = iter(own)
        next(first)
        assert _ids(own) == full
        with pytest.raises(RuntimeError, match="newer iteration"):
            next(first)
        workers = list(own._pool._workers)
        assert all(w.is_alive() for w in workers)
    finally:
        own.close()
    assert not any(w.is_alive() for w in workers)
    after = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    assert not [p for p in after - before if p.startswith("tfrx-batches-")]


def test_stateful_dataloader_resumes_exactly(tmp_path):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    paths = id_files(tmp_path, (40, 55, 20))
    ds = _pipeline(paths)

    def loader():
        return stateful.StatefulDataLoader(ds.to_torch(num_workers=2), batch_size=None)

    first, rest, again = interrupted_and_resumed(loader, 5)
    assert _ids(again) == _ids(rest)
    for b in again:
        _check(b)
    ids = sorted(i for b in first + rest for i in b["id"].tolist())
    assert ids == sorted(f * 1000 + i for f, n in enumerate((40, 55, 20)) for i in range(n))
    # A state says how it was saved; it resumes only the same way.
    with pytest.raises(ValueError, match="saved with to_torch"):
        ds.to_torch().load_state_dict(ds.to_torch(num_workers=2).state_dict())
    with pytest.raises(ValueError, match="saved without"):
        ds.to_torch(num_workers=2).load_state_dict(ds.to_torch().state_dict())


def test_a_workers_error_reaches_the_main_process_naming_file_and_offset(tmp_path):
    paths = id_files(tmp_path, (30, 30))
    with open(paths[1], "r+b") as f:  # damage a record's data in the second file
        f.seek(200)
        byte = f.read(1)
        f.seek(200)
        f.write(bytes([byte[0] ^ 0xFF]))
    own = TFRecordDataset(paths).batch(4).parse(SPEC).to_torch(num_workers=2)
    try:
        with pytest.raises(tfrx.errors.CorruptRecordError) as caught:
            list(own)
        assert paths[1] in str(caught.value)
        assert re.search(r"record \d+ at byte \d+", str(caught.value))
        assert any("tfrx worker 1" in note for note in caught.value.__notes__)
        # The workers live on for the next epoch, which fails the same way.
        with pytest.raises(tfrx.errors.CorruptRecordError):
            list(own)
    finally:
        own.close()


def test_a_worker_that_dies_is_an_error_not_a_hang(tmp_path):
    paths = id_files(tmp_path, (200, 200))
    own = _pipeline(paths, batch=4).to_torch(num_workers=2, prefetch_factor=1)
    try:
        it = iter(own)
        next(it)
        os.kill(own._pool._workers[1].pid, signal.SIGKILL)
        with pytest.raises(RuntimeError, match=r"tfrx worker 1 \(pid \d+\) exited unexpectedly"):
            for _ in it:
                pass
    finally:
        own.close()


def test_arguments_are_checked(tmp_path):
    ds = _pipeline(id_files(tmp_path, (5,)))
    with pytest.raises(ValueError, match="shared_memory"):
        ds.to_torch(num_workers=2, shared_memory=False)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="num_workers"):
            ds.to_torch(num_workers=bad)
    with pytest.raises(ValueError, match="prefetch_factor"):
        ds.to_torch(num_workers=1, prefetch_factor=0)
    # Not inside a DataLoader's own workers: one kind of worker or the other.
    loader = DataLoader(
        ds.to_torch(num_workers=1), batch_size=None, num_workers=1, multiprocessing_context="fork", timeout=60
    )
    with pytest.raises(ValueError, match="num_workers=0"):
        list(loader)


@pytest.mark.slow
def test_spawned_workers(tmp_path):
    paths = id_files(tmp_path, (30, 45))
    ds = _pipeline(paths)
    own = ds.to_torch(num_workers=2, multiprocessing_context="spawn")
    reference = DataLoader(ds.to_torch(), batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=60)
    try:
        ours = list(own)
        assert _ids(ours) == _ids(reference)
        for b in ours:
            _check(b)
    finally:
        own.close()


def test_workers_end_with_the_main_process(tmp_path):
    # A script that leaves its workers running mid-epoch and exits without closing anything.
    paths = id_files(tmp_path, (300, 300))
    script = textwrap.dedent(
        f"""
        import tfrx
        from tfrx.data import TFRecordDataset
        spec = {{"id": tfrx.FixedLenFeature([], tfrx.int64)}}
        own = TFRecordDataset({paths!r}).batch(2).parse(spec).to_torch(num_workers=2)
        it = iter(own)
        next(it)
        print(*[w.pid for w in own._pool._workers], flush=True)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by init) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_elements_without_arrays_travel_as_they_are():
    # An in-memory source of scalars: nothing to place in a slot, so each element crosses pickled.
    from tfrx.data import Dataset

    ds = Dataset.range(40).shuffle(8, seed=1).map(lambda x: x * 10)
    own = ds.to_torch(num_workers=2)
    reference = DataLoader(ds.to_torch(), batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=60)
    try:
        ours = [int(x) for x in own]
        assert ours == [int(x) for x in reference]
        assert sorted(ours) == [x * 10 for x in range(40)]
        assert len(own) == 40
    finally:
        own.close()
