import threading
import time

import numpy as np
import pytest

from data_helpers import assert_resumes_exactly, to_py
import tfrx
from tfrx.data import Dataset


@pytest.mark.parametrize("parallel", [None, 1, 3, tfrx.AUTOTUNE])
def test_map_in_order(parallel):
    assert to_py(list(Dataset.range(50).map(lambda x: x * 2, num_parallel_calls=parallel))) == list(range(0, 100, 2))


def test_tuple_elements_are_unpacked_like_tf(tf):
    ours = Dataset.from_tensor_slices((np.arange(3), np.arange(3) * 10)).map(lambda a, b: a + b)
    theirs = tf.data.Dataset.from_tensor_slices((np.arange(3), np.arange(3) * 10)).map(lambda a, b: a + b)
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))


def test_parallel_map_runs_concurrently():
    active, peak = [0], [0]
    lock = threading.Lock()

    def slow(x):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        return x

    assert to_py(list(Dataset.range(12).map(slow, num_parallel_calls=4))) == list(range(12))
    assert peak[0] > 1


def test_nondeterministic_returns_everything():
    def jitter(x):
        time.sleep(0.01 if int(x) % 3 == 0 else 0)
        return x

    out = to_py(list(Dataset.range(30).map(jitter, num_parallel_calls=4, deterministic=False)))
    assert sorted(out) == list(range(30))


@pytest.mark.parametrize("parallel", [None, 2])
def test_error_reaches_caller_with_element(parallel):
    def boom(x):
        if x == 5:
            raise KeyError("bad element")
        return x

    it = iter(Dataset.range(10).map(boom, num_parallel_calls=parallel))
    got = []
    with pytest.raises(KeyError) as info:
        for x in it:
            got.append(int(x))
    assert got == [0, 1, 2, 3, 4]
    assert any("element 5" in n for n in getattr(info.value, "__notes__", []))
    it.close()


@pytest.mark.parametrize("parallel", [None, 3])
def test_map_resumes_at_every_step(parallel):
    assert_resumes_exactly(lambda: Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=parallel).batch(3))


def test_cardinality_preserved():
    assert Dataset.range(7).map(lambda x: x).cardinality() == 7


@pytest.mark.parametrize("parallel", [None, 2])
def test_stop_iteration_in_user_function_is_an_error(parallel):
    def stop(x):
        if x == 2:
            raise StopIteration
        return x

    with pytest.raises(RuntimeError, match="StopIteration"):
        list(Dataset.range(5).map(stop, num_parallel_calls=parallel))


def test_state_of_a_nondeterministic_map_warns_once():
    import warnings

    it = iter(Dataset.range(10).map(lambda x: x, num_parallel_calls=2, deterministic=False))
    next(it)
    with pytest.warns(RuntimeWarning, match="deterministic=False"):
        it.state_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        it.state_dict()  # once per iterator
        det = iter(Dataset.range(10).map(lambda x: x, num_parallel_calls=2))
        next(det)
        det.state_dict()
        opt = iter(Dataset.range(10).map(lambda x: x, num_parallel_calls=2).with_options(deterministic=False))
    next(opt)
    with pytest.warns(RuntimeWarning, match="deterministic=False"):
        opt.state_dict()
    for i in (it, det, opt):
        i.close()
