import collections

import numpy as np
import pytest

from data_ops_cases import golden, names, ours, tensorflow
from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly

CASES = names("sample_")


@pytest.mark.parametrize("name", CASES)
def test_sample_deterministic_cases_match_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_sample_deterministic_cases_match_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


BASE = 100_000


def _mix(seed, weights=(0.7, 0.2, 0.1), stop=False, n=(400, 400, 400)):
    datasets = [Dataset.range(i * BASE, i * BASE + k) for i, k in enumerate(n)]
    return Dataset.sample_from_datasets(datasets, weights=list(weights), seed=seed, stop_on_empty_dataset=stop)


def test_sample_is_deterministic_per_seed_and_differs_between_seeds():
    a = [int(x) for x in _mix(1)]
    assert a == [int(x) for x in _mix(1)]
    assert a != [int(x) for x in _mix(2)]


def test_sample_keeps_each_dataset_in_order_and_produces_everything():
    out = [int(x) for x in _mix(7)]
    assert sorted(out) == sorted(
        list(range(400)) + list(range(BASE, BASE + 400)) + list(range(2 * BASE, 2 * BASE + 400))
    )
    for i in range(3):
        mine = [x for x in out if x // BASE == i]
        assert mine == sorted(mine)


def test_sample_draws_with_the_weights():
    # 3000 draws from 0.7/0.2/0.1 before any dataset can run out: binomial bounds of 5 standard deviations.
    out = [int(x) // BASE for x in _mix(11, n=(5000, 5000, 5000)).take(3000)]
    counts = collections.Counter(out)
    for i, w in enumerate((0.7, 0.2, 0.1)):
        sd = (3000 * w * (1 - w)) ** 0.5
        assert abs(counts[i] - 3000 * w) < 5 * sd, counts


def test_sample_stop_on_empty_dataset_ends_at_the_first_exhausted_draw():
    out = [int(x) for x in _mix(3, weights=(0.5, 0.5, 0.0), stop=True, n=(5, 50, 50))]
    assert len([x for x in out if x < BASE]) == 5
    assert len(out) < 55  # dataset 1 was not drained after dataset 0 ran out
    assert all(x // BASE != 2 for x in out)


def test_sample_zero_weight_datasets_are_never_drawn_and_do_not_block_the_end():
    out = [int(x) for x in _mix(4, weights=(1.0, 0.0, 3.0), n=(10, 10, 10))]
    assert sorted(out) == list(range(10)) + list(range(2 * BASE, 2 * BASE + 10))


def test_sample_rerandomize_each_iteration():
    datasets = [Dataset.range(50), Dataset.range(100, 150)]
    fixed = Dataset.sample_from_datasets(datasets, seed=5)
    assert [int(x) for x in fixed] == [int(x) for x in fixed]
    fresh = Dataset.sample_from_datasets(datasets, seed=5, rerandomize_each_iteration=True)
    assert [int(x) for x in fresh] != [int(x) for x in fresh]


def test_sample_resumes_exactly():
    assert_resumes_exactly(lambda: _mix(9, n=(20, 15, 10)))
    assert_resumes_exactly(lambda: _mix(9, stop=True, n=(20, 15, 10)))


def test_sample_checks_weights():
    with pytest.raises(ValueError, match="one weight per dataset"):
        Dataset.sample_from_datasets([Dataset.range(2)], weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="non-negative"):
        Dataset.sample_from_datasets([Dataset.range(2), Dataset.range(2)], weights=[-1, 2])
    with pytest.raises(NotImplementedError, match="list of weights"):
        Dataset.sample_from_datasets([Dataset.range(2)], weights=Dataset.range(1))
    assert np.asarray(list(Dataset.sample_from_datasets([Dataset.range(3)]))).tolist() == [0, 1, 2]


def test_sample_order_for_a_seed_is_pinned():
    # tfrx's own order (not TensorFlow's): pinned so that a change of the draws is noticed.
    ds = Dataset.sample_from_datasets(
        [Dataset.range(0, 100), Dataset.range(100, 200), Dataset.range(200, 300)], weights=[0.5, 0.3, 0.2], seed=42
    )
    assert [int(x) for x in ds.take(20)] == [
        100,
        0,
        200,
        101,
        1,
        201,
        102,
        103,
        2,
        3,
        4,
        202,
        104,
        203,
        5,
        6,
        105,
        7,
        204,
        106,
    ]


def test_sample_over_shuffles_and_repeat_resumes_exactly():
    assert_resumes_exactly(
        lambda: Dataset.sample_from_datasets(
            [Dataset.range(8).shuffle(3, seed=1), Dataset.range(100, 105).map(lambda x: x * 2)],
            weights=[2, 1],
            seed=6,
            rerandomize_each_iteration=True,
        ).repeat(2)
    )
