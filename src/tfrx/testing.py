"""Test helpers for code built on tfrx: exact-resume checks for pipelines."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["assert_resumes_exactly", "elements_equal"]


def elements_equal(a: Any, b: Any) -> bool:
    """Structural equality of pipeline elements (dicts, tuples, lists, NumPy arrays, bytes, scalars)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(elements_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (
            isinstance(a, (tuple, list))
            and isinstance(b, (tuple, list))
            and len(a) == len(b)
            and all(elements_equal(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype == object:
            return all(elements_equal(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if hasattr(a, "to_list") and hasattr(b, "to_list"):  # RecordBatch, ragged results
        return elements_equal(a.to_list(), b.to_list())
    return bool(a == b)


def _iterator(dataset, epoch: int):
    if hasattr(dataset, "iterator"):
        return dataset.iterator(epoch=epoch)
    return iter(dataset)


def assert_resumes_exactly(
    make_dataset: Callable[[], Any],
    *,
    epoch: int = 0,
    steps: list[int] | None = None,
    max_elements: int = 10_000,
    json_roundtrip: bool = True,
) -> list:
    """Checks that a pipeline's iterator resumes exactly from its state at every step.

    ``make_dataset()`` builds the pipeline (called afresh for every restore,
    as a restarted job would). For each ``k`` in ``steps`` (default: every
    step ``0..len``), an iterator is advanced ``k`` elements, its
    ``state_dict()`` taken (through JSON when ``json_roundtrip``), a fresh
    iterator of a new pipeline is given ``load_state_dict(state)``, and what
    it yields must equal the uninterrupted run's elements after ``k``. The
    original iterator must also continue unchanged after its state was taken.
    Returns the uninterrupted run's elements. Raises ``AssertionError``.
    """
    it = _iterator(make_dataset(), epoch)
    try:
        full = []
        for element in it:
            full.append(element)
            if len(full) > max_elements:
                raise AssertionError(f"the pipeline yields more than max_elements={max_elements} elements")
    finally:
        it.close()
    for k in range(len(full) + 1) if steps is None else steps:
        if not 0 <= k <= len(full):
            raise ValueError(f"step {k} outside 0..{len(full)}")
        it = _iterator(make_dataset(), epoch)
        try:
            for j in range(k):
                if not elements_equal(next(it), full[j]):
                    raise AssertionError(f"a second run of the pipeline differs at element {j}: not deterministic")
            state = it.state_dict()
            if json_roundtrip:
                state = json.loads(json.dumps(state))
            rest_original = list(it)
        finally:
            it.close()
        restored = _iterator(make_dataset(), epoch)
        try:
            restored.load_state_dict(state)
            rest = list(restored)
        finally:
            restored.close()
        _compare(full[k:], rest_original, f"continuing after state_dict() at step {k}")
        _compare(full[k:], rest, f"resumed from the state at step {k} (state {state!r:.300})")
    return full


def _compare(expected: list, actual: list, what: str) -> None:
    if len(expected) != len(actual):
        raise AssertionError(f"{what}: {len(actual)} elements, expected {len(expected)}")
    for j, (a, b) in enumerate(zip(expected, actual)):
        if not elements_equal(a, b):
            raise AssertionError(f"{what}: element {j} differs: {b!r:.200} != expected {a!r:.200}")
