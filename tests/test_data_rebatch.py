import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly

CASES = names("rebatch_")


@pytest.mark.parametrize("name", CASES)
def test_rebatch_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_rebatch_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_rebatch_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 30),
    batch=st.integers(1, 7),
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    drop=st.booleans(),
)
def test_rebatch_equals_unbatch_then_batch(n, batch, sizes, drop):
    got = [b.tolist() for b in Dataset.range(n).batch(batch).rebatch(sizes, drop_remainder=drop)]
    flat, expected, i, k = list(range(n)), [], 0, 0
    while i < n:
        size = sizes[k % len(sizes)]
        if drop and i + size > n:
            break
        expected.append(flat[i : i + size])
        i, k = i + size, k + 1
    assert got == expected


def test_rebatch_rejects_bad_sizes():
    with pytest.raises(ValueError, match="positive"):
        Dataset.range(3).batch(2).rebatch(0)
    assert np.concatenate(list(Dataset.range(5).batch(2).rebatch([1]))).tolist() == [0, 1, 2, 3, 4]


def test_rebatch_over_a_shuffle_resumes_exactly():
    assert_resumes_exactly(lambda: Dataset.range(23).shuffle(6, seed=4).batch(5).rebatch([3, 4]).repeat(2))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), pieces=st.integers(1, 6), size=st.integers(1, 9), drop=st.booleans())
def test_batch_and_rebatch_cut_alike(n, pieces, size, drop):
    # One loop batches elements and cuts pieces: batching n elements equals re-cutting any batches of them.
    batched = [b.tolist() for b in Dataset.range(n).batch(size, drop_remainder=drop)]
    recut = [b.tolist() for b in Dataset.range(n).batch(pieces).rebatch(size, drop_remainder=drop)]
    assert recut == batched
    assert_resumes_exactly(lambda: Dataset.range(n).batch(pieces).rebatch([size, 2], drop_remainder=drop).map(list))
