"""Shutdown: abandoned iterators, closed iterators and errors leave no thread behind."""

import gc
import subprocess
import sys
import time

import pytest

from data_helpers import working_threads
from tfrx.data import Dataset


def _settle(baseline: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        gc.collect()
        if working_threads() <= baseline:
            break
        time.sleep(0.02)
    return working_threads()


def _threaded_pipeline():
    return (
        Dataset.range(10_000)
        .map(lambda x: x * 2, num_parallel_calls=4)
        .prefetch(4)
        .interleave(lambda x: Dataset.range(3), cycle_length=2, num_parallel_calls=2)
        .prefetch(2)
    )


def test_abandoned_iterator_stops_threads():
    baseline = working_threads()
    it = iter(_threaded_pipeline())
    for _ in range(20):
        next(it)
    assert working_threads() > baseline
    del it
    assert _settle(baseline) == baseline


def test_close_stops_threads_and_ends_iteration():
    baseline = working_threads()
    it = iter(_threaded_pipeline())
    next(it)
    it.close()
    assert _settle(baseline) == baseline
    with pytest.raises(StopIteration):
        next(it)


def test_break_in_a_for_loop_with_context_manager():
    baseline = working_threads()
    with iter(_threaded_pipeline()) as it:
        for i, _ in enumerate(it):
            if i == 5:
                break
    assert _settle(baseline) == baseline


@pytest.mark.parametrize("where", ["map", "prefetch"])
def test_error_in_user_function_stops_threads(where):
    baseline = working_threads()

    def boom(x):
        if x == 50:
            raise ZeroDivisionError("user code failed")
        return x

    ds = Dataset.range(1000).map(boom, num_parallel_calls=3) if where == "map" else Dataset.range(1000).map(boom)
    ds = ds.prefetch(3)
    with pytest.raises(ZeroDivisionError):
        for _ in ds:
            pass
    assert _settle(baseline) == baseline


def test_full_iteration_leaves_no_threads():
    baseline = working_threads()
    assert len(list(Dataset.range(200).map(lambda x: x, num_parallel_calls=3).prefetch(2))) == 200
    assert _settle(baseline) == baseline


def test_interpreter_exits_with_an_abandoned_iterator():
    code = (
        "import tfrx.data as d\n"
        "it = iter(d.Dataset.range(10**9).map(lambda x: x, num_parallel_calls=2).prefetch(8))\n"
        "next(it)\n"
        "print('done')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
