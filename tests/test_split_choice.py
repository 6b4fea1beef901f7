"""Whether the parser's copies of large bytes values are split over threads: chosen from measured wall times.

``SplitChoice`` is driven here with made-up timings (the rule), and the
parser's own instance through real parses (what it records, that the output
never depends on it, and that a forked child measures for itself).
"""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest

import tfrx
from tfrx import _native

MiB = 1 << 20


def _drive(choice, jobs: int, one_s: float, split_s: float, wanted: int = 2) -> list[int]:
    """Runs ``jobs`` jobs of 1 MiB that take ``one_s`` on one thread and ``split_s`` split; the threads used."""
    used = []
    for _ in range(jobs):
        k = choice.threads(wanted)
        used.append(k)
        choice.record(k, MiB, one_s if k == 1 else split_s)
    return used


def test_tries_both_then_keeps_one_thread_when_splitting_gains_little():
    choice = _native.SplitChoice(min_speedup=1.5, explore_every=32)
    used = _drive(choice, 70, one_s=1e-3, split_s=0.8e-3)  # 1.25x: not worth twice the threads
    assert used[:6].count(1) == 3 and used[:6].count(2) == 3  # three of each first
    after = used[6:]
    assert after.count(2) == 2  # then only the periodic look at the other choice (jobs 32 and 64)
    assert choice.state.split is False
    assert choice.state.one_samples == 70 - 5 and choice.state.split_samples == 5


def test_splits_when_the_split_is_fast_enough():
    choice = _native.SplitChoice(min_speedup=1.5, explore_every=32)
    used = _drive(choice, 70, one_s=1e-3, split_s=0.4e-3, wanted=8)
    assert set(used) == {1, 8}
    assert used[6:].count(1) == 2  # one thread only when looking at the other choice
    state = choice.state
    assert state.split is True
    assert state.one_ns_per_byte == pytest.approx(1e-3 * 1e9 / MiB)
    assert state.split_ns_per_byte == pytest.approx(0.4e-3 * 1e9 / MiB)


def test_follows_a_change_and_shrugs_off_single_outliers():
    choice = _native.SplitChoice(min_speedup=1.5, explore_every=4)
    _drive(choice, 40, one_s=1e-3, split_s=0.4e-3)
    assert choice.state.split is True
    choice.record(2, MiB, 50e-3)  # one split copy preempted: the median of the last 8 holds
    assert choice.state.split is True
    _drive(choice, 80, one_s=1e-3, split_s=0.9e-3)  # the machine got busier: splitting stops paying
    assert choice.state.split is False
    used = _drive(choice, 8, one_s=1e-3, split_s=0.9e-3)
    assert used.count(2) == 2  # every 4th job still looks


def test_one_thread_wanted_is_never_split_or_counted():
    choice = _native.SplitChoice()
    assert [choice.threads(1) for _ in range(5)] == [1] * 5
    choice.record(1, 0, 1.0)  # nothing copied: nothing learned
    choice.record(2, MiB, 0.0)
    state = choice.state
    assert (state.one_samples, state.split_samples, state.split) == (0, 0, False)


def _image_batch(records: int, value_bytes: int) -> tuple[tfrx.ExampleParser, list[bytes]]:
    rng = np.random.default_rng(0)
    values = [rng.integers(0, 256, value_bytes, dtype=np.uint8).tobytes() for _ in range(records)]
    encoded = tfrx.encode_examples({"image": values, "label": np.arange(records)})
    spec = {"image": tfrx.FixedLenFeature([], tfrx.string), "label": tfrx.FixedLenFeature([], tfrx.int64)}
    return tfrx.ExampleParser(spec), encoded


def test_the_parsers_copies_are_measured_and_the_output_never_depends_on_the_choice():
    parser, records = _image_batch(12, MiB)  # 12 MiB of values: wanted = 2 threads (4 MiB a thread)
    one = parser.parse(records, num_parallel_calls=1)
    before = _native.copy_split_state()
    for _ in range(8):
        out = parser.parse(records, num_parallel_calls=2)
        assert list(out["image"]) == list(one["image"])
        np.testing.assert_array_equal(out["label"], one["label"])
    after = _native.copy_split_state()
    counted = (after.one_samples - before.one_samples) + (after.split_samples - before.split_samples)
    assert counted == 8  # each split-capable parse measured its copy
    assert after.one_samples >= 3 and after.split_samples >= 3  # both ways were tried
    # One thread asked for: no choice made, nothing measured.
    parser.parse(records, num_parallel_calls=1)
    assert _native.copy_split_state().one_samples == after.one_samples


def _child_state(queue) -> None:
    state = _native.copy_split_state()
    queue.put((state.one_samples, state.split_samples))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_measures_for_itself():
    parser, records = _image_batch(12, MiB)
    for _ in range(6):
        parser.parse(records, num_parallel_calls=2)
    assert _native.copy_split_state().one_samples > 0
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_state, args=(queue,))
    child.start()
    state = queue.get(timeout=60)
    child.join(60)
    assert state == (0, 0)
