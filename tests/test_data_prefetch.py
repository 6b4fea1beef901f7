import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
import tfrx
from tfrx.data import Dataset


@pytest.mark.parametrize("size", [0, 1, 3, tfrx.AUTOTUNE])
def test_prefetch_keeps_order(size):
    assert to_py(list(Dataset.range(40).prefetch(size))) == list(range(40))


def test_prefetch_of_slow_elements_is_bounded_by_buffer_size():
    produced = []

    def slow(x):
        time.sleep(0.003)  # slower than the chunking delay: handed over one by one
        produced.append(x)
        return x

    it = iter(Dataset.range(1000).map(slow).prefetch(3))
    next(it)
    time.sleep(0.3)
    assert len(produced) <= 1 + 3 + 1  # consumed + queue + one waiting to be put
    it.close()


def test_prefetch_of_cheap_elements_is_bounded_too():
    produced = []
    it = iter(Dataset.range(100_000).map(lambda x: produced.append(x) or x).prefetch(3))
    next(it)
    time.sleep(0.3)
    assert len(produced) <= 1 + 3 + 1
    it.close()


def test_chunked_hand_over_keeps_exact_state():
    assert_resumes_exactly(lambda: Dataset.range(300).prefetch(2).batch(7), steps=range(44))


def test_prefetch_runs_ahead_on_another_thread():
    threads = set()
    ds = Dataset.range(5).map(lambda x: threads.add(threading.current_thread().name) or x).prefetch(2)
    list(ds)
    assert threads and all(name.startswith("tfrx-prefetch") for name in threads)


def test_upstream_error_is_reraised():
    def boom(x):
        if x == 3:
            raise RuntimeError("upstream failed")
        return x

    got = []
    with pytest.raises(RuntimeError, match="upstream failed"):
        for x in Dataset.range(10).map(boom).prefetch(2):
            got.append(int(x))
    assert got == [0, 1, 2]


def test_prefetch_resumes_at_every_step():
    assert_resumes_exactly(lambda: Dataset.range(15).shuffle(4, seed=2).map(lambda x: x * 3).batch(2).prefetch(2))


def test_object_arrays_are_freed_on_the_prefetch_thread():
    """The objects in arrays the prefetch thread made are freed on it once the consumer drops the arrays."""
    import threading

    freed_on = []
    kept = []

    class Tracked:
        def __init__(self, i):
            self.i = i

        def __del__(self):
            freed_on.append(threading.current_thread().name)

    def make(i):
        return {"s": np.array([Tracked(i)] + [b"x%d" % i] * 7, dtype=object), "n": np.arange(3) + i}

    ds = tfrx.data.Dataset.range(40).map(make).prefetch(2)
    for i, element in enumerate(ds):
        if i == 5:
            kept.append(element["s"])  # the consumer keeps this one: nobody frees it
    del element
    assert kept[0][0].i == 5 and kept[0][1:].tolist() == [b"x5"] * 7
    # Every array the consumer dropped was freed, all but the last few on the prefetch thread.
    assert len(freed_on) == 39
    assert freed_on.count("tfrx-prefetch") >= 30, freed_on


def test_every_object_array_of_an_element_is_freed_on_the_prefetch_thread():
    """Several object arrays, in the dict and in a tuple inside it: all are freed on the prefetch thread."""
    import threading

    freed_on: dict[str, list] = {"a": [], "b": [], "c": []}

    class Tracked:
        def __init__(self, key):
            self.key = key

        def __del__(self):
            freed_on[self.key].append(threading.current_thread().name)

    def make(i):
        a = np.array([Tracked("a"), b"a"], dtype=object)
        b = np.array([Tracked("b")], dtype=object)
        c = np.array([Tracked("c"), i], dtype=object)
        return {"n": np.arange(2) + i, "a": a, "pair": (c, np.arange(3)), "b": b}

    got = []
    for element in tfrx.data.Dataset.range(30).map(make).prefetch(2):
        assert set(element) == {"n", "a", "pair", "b"} and element["pair"][0][1] == element["n"][0]
        got.append(int(element["n"][0]))
    del element
    assert got == list(range(30))
    for key, threads in freed_on.items():
        assert len(threads) == 30, key
        assert threads.count("tfrx-prefetch") >= 20, (key, threads)


# ------------------------------------------------------------------ what the consumer holds, through the handoff
# Records whose every value follows from their id, so a batch checks itself: a value overwritten by a later batch
# (a reused buffer, a recycled record) no longer matches the batch's ids.
_RECORDS = 700
_VEC = 64  # int64 values a record: a batch of 128 rows or more is a pooled output buffer (>= 64 KiB)


def _blob(i: int) -> bytes:
    return b"%d:" % i * (1 + i % 23)  # varying sizes: records of several size classes


@pytest.fixture(scope="module")
def id_records(tmp_path_factory):
    ids = np.arange(_RECORDS, dtype=np.int64)
    records = tfrx.encode_examples(
        {"id": ids, "vec": ids[:, None] * 1000 + np.arange(_VEC), "blob": [_blob(int(i)) for i in ids]}
    )
    path = tmp_path_factory.mktemp("handoff") / "ids.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many(records)
    return str(path), records


_SPEC = {
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "vec": tfrx.FixedLenFeature([_VEC], tfrx.int64),
    "blob": tfrx.FixedLenFeature([], tfrx.string),
}


def _check_parsed(batch: dict) -> list[int]:
    ids = batch["id"]
    assert np.array_equal(batch["vec"], ids[:, None] * 1000 + np.arange(_VEC))
    assert batch["blob"].tolist() == [_blob(int(i)) for i in ids]
    return ids.tolist()


def _check_records(batch, records: list[bytes]) -> list[int]:
    """The ids of a RecordBatch's records (each must be one of ``records``, byte for byte)."""
    got = [bytes(r) for r in batch]
    ids = tfrx.ExampleParser({"id": _SPEC["id"]}).parse(got)["id"].tolist()
    assert got == [records[i] for i in ids]
    return ids


def _pipeline(path: str, batch_size: int, shuffle: int | None, parsed: bool, prefetch: int):
    # A small read size: batches bigger than two chunks are read into the reader's pooled buffers.
    ds: tfrx.data.Dataset = tfrx.TFRecordDataset(path, buffer_size=1024)
    if shuffle is not None:
        ds = ds.shuffle(shuffle, seed=7)
    ds = ds.batch(batch_size)
    native = ds.parse(_SPEC) if parsed else ds._natively_batched()
    assert native is not None
    return native.prefetch(prefetch) if prefetch else native


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batch_size=st.integers(1, 300),
    shuffle=st.none() | st.integers(1, 400),
    parsed=st.booleans(),
    prefetch=st.integers(0, 4),
    holds=st.lists(st.integers(0, 6), min_size=1, max_size=30),
)
def test_a_batch_the_consumer_holds_is_never_overwritten(id_records, batch_size, shuffle, parsed, prefetch, holds):
    """Batches kept for a while (parsed outputs, the reader's and the shuffle's record batches, gathered or not)
    keep their values while later batches reuse what the earlier ones let go, and every record comes exactly
    once, in the order of the pipeline without prefetch."""
    path, records = id_records
    check = _check_parsed if parsed else (lambda b: _check_records(b, records))
    held: list = []  # (batch, its ids, steps left)
    order: list[int] = []
    for k, batch in enumerate(_pipeline(path, batch_size, shuffle, parsed, prefetch)):
        if not parsed and k % 2:
            batch.data  # (a shuffled batch gathers its records into a recycled buffer on this first use)
        ids = check(batch)
        order += ids
        held.append((batch, ids, holds[k % len(holds)]))
        del batch
        for kept, ids, _ in held:
            assert check(kept) == ids
        held = [(b, i, left - 1) for b, i, left in held if left > 0]
    expected = list(range(_RECORDS))
    if shuffle is None:
        assert order == expected
    else:
        assert sorted(order) == expected
        reference = [i for b in _pipeline(path, batch_size, shuffle, True, 0) for i in b["id"].tolist()]
        assert order == reference


@pytest.mark.parametrize("shuffle", [None, 50, 1000])
def test_parsed_batches_resume_exactly_through_prefetch(id_records, shuffle):
    path, _ = id_records
    steps = [0, 1, 2, 5, 10, 11]
    full = assert_resumes_exactly(lambda: _pipeline(path, 64, shuffle, True, 2), steps=steps)
    assert sorted(i for b in full for i in b["id"].tolist()) == list(range(_RECORDS))


def test_a_waiting_thread_is_woken_by_each_take_and_by_stop(monkeypatch):
    """The producer waits for a slot on a lock the consumer releases: with the poll made far longer than the
    test, every element still arrives (no take's wake is lost), and closing ends the thread at once."""
    import tfrx.data._prefetch as prefetch

    monkeypatch.setattr(prefetch, "_POLL_S", 30.0)
    done = threading.Event()
    got: list = []
    stopped: list = []

    def consume():
        it = iter(Dataset.range(3000).prefetch(1))  # one slot: the thread waits for every element
        for _ in range(2000):
            got.append(int(next(it)))
        thread = it._thread
        time.sleep(0.2)  # (the thread is waiting for a slot by now)
        it.close()
        stopped.append(not thread.is_alive())
        done.set()

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    assert done.wait(40), "a wake was lost: the prefetch thread slept through a free slot"
    assert got == list(range(2000))
    assert stopped == [True]  # (woken by the stop, not by its next poll)


def test_a_new_iterator_runs_on_the_thread_an_ended_one_left_idle():
    """Every epoch's iterator would otherwise start a thread (and fault its memory in again): an ended
    iterator's thread waits for the next one, which holds nothing of the previous iterator."""
    import gc
    import weakref

    import tfrx.data._prefetch as prefetch

    seen = []
    ds = Dataset.range(50).map(lambda x: seen.append(threading.get_ident()) or x).prefetch(2)
    first = iter(ds)
    assert int(next(first)) == 0
    job = first._thread
    assert job.is_alive()
    assert [int(x) for x in first] == list(range(1, 50))
    ref = weakref.ref(first)
    del first
    gc.collect()
    assert ref() is None  # the idle thread keeps no reference to the ended iterator
    assert not job.is_alive()
    assert [int(x) for x in ds] == list(range(50))
    assert len(set(seen)) == 1 and seen[0] != threading.get_ident()
    started = []
    real_start = threading.Thread.start

    def counting_start(self):
        started.append(self.name)
        return real_start(self)

    threading.Thread.start = counting_start
    try:
        for _ in range(5):
            assert len(list(ds)) == 50
    finally:
        threading.Thread.start = real_start
    assert started == [] and len(prefetch._THREADS._idle) >= 1
