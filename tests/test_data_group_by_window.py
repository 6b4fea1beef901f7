import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly

CASES = names("group_by_window_")


@pytest.mark.parametrize("name", CASES)
def test_group_by_window_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_group_by_window_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_group_by_window_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


def test_group_by_window_keeps_every_element_once():
    ds = Dataset.range(50).shuffle(10, seed=5).group_by_window(lambda x: x % 7, lambda k, g: g.batch(3), window_size=3)
    got = np.concatenate(list(ds))
    assert sorted(got.tolist()) == list(range(50))


def test_group_by_window_resumes_with_variable_shapes():
    make = lambda: (
        Dataset.range(15)
        .map(lambda i: np.arange(i % 4))
        .group_by_window(  # noqa: E731
            lambda x: len(x) % 2, lambda k, g: g.padded_batch(2), window_size=3
        )
    )
    assert_resumes_exactly(make)


def test_group_by_window_needs_one_size():
    with pytest.raises(ValueError, match="exactly one"):
        Dataset.range(3).group_by_window(lambda x: 0, lambda k, g: g)
    with pytest.raises(TypeError, match="integer"):
        list(Dataset.range(3).group_by_window(lambda x: 0.5, lambda k, g: g, window_size=2))


def _model(keys, size):
    """tf.data's group_by_window with reduce_func=batch(size): full groups as they fill, then the rest by key."""
    groups, out = {}, []
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
        if len(groups[k]) == size:
            out.append(groups.pop(k))
    out.extend(groups[k] for k in sorted(groups))
    return out


@settings(max_examples=50, deadline=None)
@given(keys=st.lists(st.integers(-3, 3), max_size=30), size=st.integers(1, 4))
def test_group_by_window_equals_the_definition(keys, size):
    table = np.asarray(keys + [0], dtype=np.int64)
    ds = Dataset.range(len(keys)).group_by_window(lambda i: table[i], lambda k, g: g.batch(size), window_size=size)
    assert [b.tolist() for b in ds] == _model(keys, size)
