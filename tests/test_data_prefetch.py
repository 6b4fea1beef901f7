import threading
import time

import numpy as np
import pytest

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
