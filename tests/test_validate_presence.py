"""tfrx.validate's fast paths against their plain references: the native feature presence against the
schema-less decoder, and TopKSketch.top against a heap selection."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("tensorflow_metadata")

from tfrx.validate.sketches import TopKSketch  # noqa: E402


def _reference_top(src: dict, k: int) -> list:
    return heapq.nlargest(k, src.items(), key=lambda kv: (kv[1], kv[0]))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=3), max_size=60),
    st.integers(0, 25),
)
def test_top_equals_heap_selection(values, k):
    t = TopKSketch()
    t.add(values)
    assert t.top(k) == _reference_top(t.counts, k)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(-5, 5),
            st.one_of(st.floats(0, 4), st.sampled_from([0.5, 1.0, 2.0]), st.just(math.inf)),
        ),
        max_size=40,
    ),
    st.integers(0, 12),
)
def test_weighted_top_equals_heap_selection(pairs, k):
    t = TopKSketch()
    t.add([v for v, _ in pairs], np.array([w for _, w in pairs], dtype=np.float64))
    assert t.top(k, weighted=True) == _reference_top(t.weighted or {}, k)
    assert t.top(k) == _reference_top(t.counts, k)
