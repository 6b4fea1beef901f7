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


# ------------------------------------------------------------------ native feature presence vs the decoder
import tfrx  # noqa: E402
from tfrx import _native  # noqa: E402
from tfrx.errors import DecodeError  # noqa: E402
from tfrx.validate.columns import (  # noqa: E402
    batch_columns,
    decode_records,
    decoded_columns,
    feature_presence,
    learn_kinds,
    learn_kinds_from_presence,
)

_KIND_STATE = {"bytes": 2, "float": 3, "int64": 4}

_value: st.SearchStrategy = st.one_of(
    st.tuples(st.just("int64"), st.lists(st.integers(-(2**62), 2**62), max_size=4)),
    st.tuples(st.just("float"), st.lists(st.floats(-1e3, 1e3, width=32), max_size=4)),
    st.tuples(st.just("bytes"), st.lists(st.binary(max_size=3), max_size=4)),
    st.tuples(st.just("none"), st.just([])),
)


def _feature_value(kind_and_values):
    kind, values = kind_and_values
    if kind == "none":
        return tfrx.train.Feature()
    return tfrx.codec.make_example({"v": values}, kinds={"v": kind}).features.feature["v"]


_part = st.dictionaries(st.sampled_from(["a", "b", "c", "é"]), _value, max_size=4)
# a record is one to three serialized Examples concatenated: protobuf merges them, so a key can appear twice
_record = st.lists(_part, min_size=1, max_size=3)


def _example_bytes(parts) -> bytes:
    return b"".join(
        tfrx.train.Example(
            features=tfrx.train.Features(feature={k: _feature_value(v) for k, v in p.items()})
        ).SerializeToString()
        for p in parts
    )


def _decoded_state(value) -> tuple[int, int]:
    if value is None:
        return 1, 0
    if isinstance(value, np.ndarray):
        return (4 if value.dtype == np.int64 else 3), len(value)
    return 2, len(value)


def _presence_by_record(entries, n: int) -> list[dict]:
    out: list[dict] = [{} for _ in range(n)]
    for r, k, s, c in zip(
        entries.records.tolist(), entries.key_ids.tolist(), entries.states.tolist(), entries.counts.tolist()
    ):
        assert entries.keys[k] not in out[r], "one entry per record and key"
        out[r][entries.keys[k]] = (s, c)
    return out


def _masks(entries) -> dict:
    return dict(zip(entries.keys, entries.kind_masks.tolist()))


def _want_masks(per_record: list[dict]) -> dict:
    masks: dict = {}
    for d in per_record:
        for k, (s, _) in d.items():
            masks[k] = masks.get(k, 0) | ((1 << (s - 1)) if s >= 2 else 0)
    return masks


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_record, max_size=12))
def test_presence_equals_decoder_examples(records):
    serialized = [_example_bytes(r) for r in records]
    want = [{k: _decoded_state(v) for k, v in _native.decode_example(s, keep_empty=True).items()} for s in serialized]
    p = feature_presence(serialized, False)
    assert _presence_by_record(p.features, len(serialized)) == want
    assert _masks(p.features) == _want_masks(want)
    assert p.feature_lists.keys == [] and p.feature_lists.records.size == 0


_step: st.SearchStrategy = st.one_of(_value, st.just(("none", [])))
_seq_part = st.tuples(_part, st.dictionaries(st.sampled_from(["t", "u"]), st.lists(_step, max_size=3), max_size=2))


def _sequence_bytes(parts) -> bytes:
    out = b""
    for ctx, lists in parts:
        fl = tfrx.train.FeatureLists(
            feature_list={
                k: tfrx.train.FeatureList(feature=[_feature_value(s) for s in steps]) for k, steps in lists.items()
            }
        )
        ctx_msg = tfrx.train.Features(feature={k: _feature_value(v) for k, v in ctx.items()})
        out += tfrx.train.SequenceExample(context=ctx_msg, feature_lists=fl).SerializeToString()
    return out


def _list_state(steps) -> tuple[int, int]:
    kinds = [_decoded_state(s)[0] for s in steps if s is not None]
    return (kinds[0] if kinds else 1), len(steps)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_seq_part, min_size=1, max_size=3), max_size=10))
def test_presence_equals_decoder_sequence_examples(records):
    serialized = [_sequence_bytes(r) for r in records]
    decoded = [_native.decode_sequence_example(s, keep_empty=True) for s in serialized]
    want_ctx = [{k: _decoded_state(v) for k, v in d.items()} for d, _ in decoded]
    want_lists = [{k: _list_state(steps) for k, steps in fl.items()} for _, fl in decoded]
    p = feature_presence(serialized, True)
    assert _presence_by_record(p.features, len(serialized)) == want_ctx
    assert _presence_by_record(p.feature_lists, len(serialized)) == want_lists
    assert _masks(p.features) == _want_masks(want_ctx)
    list_masks: dict = {}
    for _, fl in decoded:
        for k, steps in fl.items():
            list_masks[k] = list_masks.get(k, 0)
            for s in steps:
                if s is not None:
                    list_masks[k] |= 1 << (_decoded_state(s)[0] - 1)
    assert _masks(p.feature_lists) == list_masks


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_record, min_size=1, max_size=12))
def test_exact_batch_columns_equal_decoder_columns(records):
    serialized = [_example_bytes(r) for r in records]
    try:
        want = decoded_columns(serialized, False)
    except ValueError as e:  # a key with two kinds: refused on both paths
        with pytest.raises(ValueError, match="two kinds"):
            batch_columns(serialized, {}, {}, False, exact=True)
        assert "two kinds" in str(e)
        return
    kinds = {k: c.kind for k, c in want.features.items()}
    got = batch_columns(serialized, kinds, {}, False, exact=True)
    # a key never seen with a kind is present nowhere, and the parser's path may leave its column out
    assert not any(c.present.any() for c in want.features.values() if c.kind is None)
    assert {k for k, c in got.features.items() if c.kind} == {k for k, c in want.features.items() if c.kind}
    for k, w in want.features.items():
        if w.kind is None:
            continue
        g = got.features[k]
        assert g.kind == w.kind
        np.testing.assert_array_equal(g.present, w.present)
        np.testing.assert_array_equal(g.counts, w.counts)
        assert g.values.tolist() == w.values.tolist()


def test_presence_of_damaged_record_names_it():
    good = _example_bytes([{"a": ("int64", [1])}])
    with pytest.raises(DecodeError, match="record 1") as e:
        feature_presence([good, b"\x0a\x05abc"], False)
    assert e.value.record_index == 1
    with pytest.raises(DecodeError, match="not valid UTF-8") as e:
        # Features { feature { key: b"\xff" } }: a map entry whose name is not UTF-8
        feature_presence([good, good, b"\x0a\x05\x0a\x03\x0a\x01\xff"], False)
    assert e.value.record_index == 2


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_seq_part, min_size=1, max_size=2), max_size=8), st.booleans())
def test_kinds_from_presence_equal_kinds_from_decoder(records, sequence):
    if sequence:
        serialized = [_sequence_bytes(r) for r in records]
    else:
        serialized = [_example_bytes([ctx for ctx, _ in r]) for r in records]
    want: tuple[dict, dict] = ({}, {})
    learn_kinds(decode_records(serialized, sequence), *want)
    got: tuple[dict, dict] = ({}, {})
    learn_kinds_from_presence(feature_presence(serialized, sequence), *got)
    assert got == want


# ------------------------------------------------------------------ QuantileSketch's compaction against the stable sort
from tfrx.validate.sketches import QuantileSketch  # noqa: E402


class _StableSortSketch(QuantileSketch):
    """The compaction as first written: always a stable argsort of values and weights."""

    def _compact(self, level: int) -> None:
        values = np.concatenate([v for v, _ in self._levels[level]])
        weights = np.concatenate([w for _, w in self._levels[level]])
        order = np.argsort(values, kind="stable")
        values, weights = values[order], weights[order]
        keep = values.size % 2
        if self._rng is None:
            self._rng = np.random.default_rng(self._seed)
        offset = int(self._rng.integers(2))
        up_v = values[keep:][offset::2]
        up_w = (weights[keep:][offset::2] + weights[keep:][1 - offset :: 2]) if values.size - keep else weights[:0]
        self._levels[level] = [(values[:keep], weights[:keep])]
        self._sizes[level] = keep
        self._push(level + 1, up_v, up_w)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.lists(st.sampled_from([0.0, -0.0, 1.0, -2.5, 3.0, 7.0, 1e9]) | st.integers(-50, 50).map(float), max_size=40),
        min_size=1,
        max_size=12,
    ),
    st.booleans(),
    st.integers(0, 3),
)
def test_quantile_sketch_compaction_equals_stable_sort(batches, weighted, seed):
    fast, ref = QuantileSketch(k=8, seed=seed), _StableSortSketch(k=8, seed=seed)
    for i, b in enumerate(batches):
        v = np.array(b, dtype=np.float64)
        w = np.arange(1, v.size + 1, dtype=np.float64) * (i + 1) if weighted else None
        fast.add(v, w)
        ref.add(v, w)
    fv, fw = fast._items()
    rv, rw = ref._items()
    assert fv.tobytes() == rv.tobytes()  # the same values, -0.0 and 0.0 told apart
    assert fw.tobytes() == rw.tobytes()
    for n in (4, 10):
        assert [a.tobytes() for a in fast.quantiles(n)] == [a.tobytes() for a in ref.quantiles(n)]
