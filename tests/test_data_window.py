import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly

CASES = names("window_")


@pytest.mark.parametrize("name", CASES)
def test_window_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_window_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_window_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


def test_window_yields_datasets_per_component():
    (w,) = list(Dataset.range(2).map(lambda x: {"a": x, "b": (x, -x)}).window(2))
    assert set(w) == {"a", "b"}
    assert [int(v) for v in w["a"]] == [0, 1]
    assert [int(v) for v in w["b"][1]] == [0, -1]


@pytest.mark.parametrize(
    ("n", "size", "shift", "stride", "drop"),
    [
        (0, 2, 1, 1, False),
        (7, 3, 2, 1, False),
        (7, 3, 2, 2, True),
        (10, 4, 3, 1, True),
        (10, 2, 5, 3, False),
        (3, 5, 1, 1, True),
    ],
)
def test_window_cardinality_is_the_count(n, size, shift, stride, drop):
    ds = Dataset.range(n).window(size, shift, stride, drop_remainder=drop)
    assert ds.cardinality() == len(list(ds))


def test_window_rejects_bad_sizes():
    with pytest.raises(ValueError, match="shift"):
        Dataset.range(3).window(2, 0)
    with pytest.raises(ValueError, match="size"):
        Dataset.range(3).window(0)


def _model(n, size, shift, stride, drop):
    """Windows as tf.data defines them: one per start k*shift < n, elements start + j*stride < n."""
    out = []
    for start in range(0, n, shift):
        w = [i for i in range(start, start + (size - 1) * stride + 1, stride) if i < n]
        if drop and len(w) < size:
            break
        out.append(w)
    return out


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 25), size=st.integers(1, 5), shift=st.integers(1, 6), stride=st.integers(1, 4), drop=st.booleans()
)
def test_window_equals_the_definition(n, size, shift, stride, drop):
    ds = Dataset.range(n).window(size, shift, stride, drop_remainder=drop)
    got = [[int(x) for x in w] for w in ds]
    assert got == _model(n, size, shift, stride, drop)
    assert ds.cardinality() == len(got)


def test_window_over_a_shuffle_under_repeat_resumes_exactly():
    assert_resumes_exactly(
        lambda: Dataset.range(15).shuffle(4, seed=1).window(3, 2, 2).flat_map(lambda w: w.batch(3)).repeat(2)
    )


@pytest.mark.parametrize(
    ("n", "size", "shift", "stride", "drop"),
    [(13, 3, 2, 2, False), (13, 2, 5, 3, True), (9, 4, 1, 1, False), (10, 1, 3, 1, False)],
)
def test_window_resumes_exactly_for_gaps_and_overlaps(n, size, shift, stride, drop):
    assert_resumes_exactly(
        lambda: Dataset.range(n).shuffle(3, seed=1).window(size, shift, stride, drop).flat_map(lambda w: w.batch(size))
    )
