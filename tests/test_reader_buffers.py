"""The reader's buffer pool: a buffer comes back only once nothing made from it is alive (no refcounts)."""

import gc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
import tfrx.io._scanner
from tfrx.io._buffer_pool import BufferPool


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def write(path, records):
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(records)
    return str(path)


@pytest.fixture
def pool(monkeypatch):
    """A fresh pool for the readers of one test."""
    fresh = BufferPool()
    monkeypatch.setattr(tfrx.io._scanner, "READ_BUFFERS", fresh)
    return fresh


@pytest.mark.parametrize(
    "hold",
    [
        lambda a: a[10:20],  # a NumPy view
        lambda a: memoryview(a)[500:],  # a memoryview
        lambda a: np.asarray(memoryview(a)),  # an array over a memoryview
        lambda a: tfrx.RecordBatch(a, [0], [3]),  # a batch
    ],
)
def test_a_block_comes_back_only_after_what_holds_it_is_gone(hold):
    pool = BufferPool()
    first = pool.take(1000)
    first[:] = 7
    address = _address(first)
    held = hold(first)
    del first
    gc.collect()
    others = [pool.take(1000) for _ in range(3)]  # the first block is held: fresh ones
    assert address not in {_address(o) for o in others}
    for o in others:
        o[:] = 9
    assert bytes(memoryview(held if not isinstance(held, tfrx.RecordBatch) else held.data)[:3]) == b"\x07" * 3
    del held
    gc.collect()
    again = pool.take(900)  # now the first block is free again (the others are still taken)
    assert _address(again) == address and again.shape[0] >= 900
    assert pool.allocations == 4


def test_the_smallest_fitting_block_and_the_bound_on_kept_bytes():
    pool = BufferPool(max_bytes=10_000)
    a, b, c = pool.take(1000), pool.take(5000), pool.take(8000)
    addresses = {_address(x): x.shape[0] for x in (a, b, c)}
    del a, b, c
    gc.collect()
    assert pool.free_bytes == 6000  # the 8000-byte block did not fit beside the other two
    got = pool.take(2000)
    assert addresses.get(_address(got)) == 5000  # the smallest that fits
    assert pool.free_bytes == 1000
    big = pool.take(20_000, fresh=30_000)
    assert big.shape[0] == 30_000 and pool.allocations == 4


def test_whole_batch_buffers_are_reused_within_and_across_readers(tmp_path, pool):
    rng = np.random.default_rng(1)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 3000, 2000)]  # ~3 MB, ~180 KB a batch of 120
    path = write(tmp_path / "x", records)
    for _ in range(4):  # every pass opens a new reader: it takes the buffers the last one left
        got = []
        with tfrx.RecordReader(path, chunk_size=16 << 10) as r:
            for batch in r.iter_batches(120, exact=True):
                got.extend(batch.to_list())
                del batch
        assert got == records
    assert 0 < pool.allocations <= 4
    # Buffers of one or two chunks come afresh from malloc, never from the pool.
    with tfrx.RecordReader(path, chunk_size=64 << 10) as r:
        assert [x for b in r.iter_batches() for x in b] == records
    assert pool.allocations <= 4


def test_a_held_batch_keeps_its_buffer_out_of_the_pool(tmp_path, pool):
    records = [bytes([i % 251]) * 1000 for i in range(400)]
    path = write(tmp_path / "x", records)
    kept = []
    with tfrx.RecordReader(path, chunk_size=2048) as r:
        for i, batch in enumerate(r.iter_batches(7, exact=True)):
            if i % 3 == 0:
                kept.append(batch)  # held batches pin their buffers
    after_first = pool.allocations
    assert after_first >= len(kept)  # every held batch pinned a buffer of its own
    with tfrx.RecordReader(path, chunk_size=2048) as r:  # another pass overwrites whatever is free
        assert [x for b in r.iter_batches(7, exact=True) for x in b] == records
    for b in kept:
        assert b.to_list() == records[b.first_index : b.first_index + len(b)]


@pytest.mark.parametrize("exact", [None, 7])
def test_held_batches_of_records_larger_than_two_chunks(tmp_path, pool, exact):
    records = [bytes([i % 251]) * 3000 for i in range(60)]  # every buffer comes from the pool
    path = write(tmp_path / "x", records)
    held = []
    with tfrx.RecordReader(path, chunk_size=64) as r:
        held.extend(r.iter_batches(exact, exact=exact is not None))
    gc.collect()
    with tfrx.RecordReader(path, chunk_size=64) as r:  # a second reader takes whatever is free
        assert [x for b in r.iter_batches() for x in b] == records
    assert [x for b in held for x in b] == records
    assert pool.allocations >= len(held)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 5000), min_size=1, max_size=120),
    chunk=st.sampled_from([64, 1000, 8192]),
    hold=st.lists(st.sampled_from(["drop", "batch", "view", "memoryview", "array"]), min_size=1, max_size=8),
    exact=st.sampled_from([None, 7, 40]),
)
def test_nothing_handed_out_is_ever_overwritten(tmp_path_factory, pool, sizes, chunk, hold, exact):
    records = [bytes([(i * 7 + j) % 251 for j in range(3)]) * (n // 3) for i, n in enumerate(sizes)]
    path = write(tmp_path_factory.mktemp("b") / "x", records)
    held = []  # (what the user kept, the records it must still show)
    for k in range(2):  # a second reader takes whatever the first left free
        with tfrx.RecordReader(path, chunk_size=chunk) as r:
            for i, batch in enumerate(r.iter_batches(exact, exact=exact is not None)):
                want = records[batch.first_index : batch.first_index + len(batch)]
                how = hold[(i + k) % len(hold)]
                if how == "batch":
                    held.append((batch, want))
                elif how == "view" and len(batch):
                    s, n = int(batch.starts[0]), int(batch.lengths[0])
                    held.append((batch.data[s : s + n], want[:1]))
                elif how == "memoryview":
                    held.append((memoryview(batch.data), (batch.starts.copy(), batch.lengths.copy(), want)))
                elif how == "array":
                    held.append((np.asarray(batch.data)[:], (batch.starts.copy(), batch.lengths.copy(), want)))
                del batch
        gc.collect()
    for obj, want in held:
        if isinstance(obj, tfrx.RecordBatch):
            assert obj.to_list() == want
        elif isinstance(want, list):
            assert bytes(obj) == want[0]
        else:
            starts, lengths, recs = want
            data = bytes(obj)
            assert [data[s : s + n] for s, n in zip(starts, lengths)] == recs


def test_a_whole_batch_of_large_records_is_read_into_one_buffer(tmp_path, pool, monkeypatch):
    # Sizes unknown at first: a small first read learns them, so no batch's buffer is grown (and copied) again.
    rng = np.random.default_rng(3)
    records = [rng.bytes(int(n)) for n in rng.integers(40_000, 60_000, 48)]
    path = write(tmp_path / "x", records)
    taken = []
    take = pool.take
    monkeypatch.setattr(pool, "take", lambda n, fresh=None: taken.append(n) or take(n, fresh))
    with tfrx.RecordReader(path, chunk_size=64 << 10) as r:
        batches = list(r.iter_batches(8, exact=True))
    assert [len(b) for b in batches] == [8] * 6
    assert [x for b in batches for x in b] == records
    assert len(taken) == len(batches)  # one buffer per batch


def test_reads_go_after_handed_out_batches_in_the_same_buffer(tmp_path):
    records = [bytes([i]) * 900 for i in range(60)]
    path = write(tmp_path / "x", records)
    with tfrx.RecordReader(path, chunk_size=8192) as r:
        first = r.read_batch(8, exact=True)  # probe: a first read of one chunk, 8 records of it
        scanner = r._scanner
        buffer = scanner._buf
        second = r.read_batch(6, exact=True)  # needs more bytes: read into the same buffer, after the first
        assert scanner._buf is buffer and first.data.base is buffer and second.data.base is buffer
        rest = list(r.iter_batches(20, exact=True))
    assert first.to_list() == records[:8] and second.to_list() == records[8:14]
    assert [x for b in rest for x in b] == records[14:]
