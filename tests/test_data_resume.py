"""Exact resume through chains of transformations, at every step, with JSON round trips."""

import numpy as np
import pytest

from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset

CHAINS = {
    "shuffle-map-batch-prefetch": lambda: (
        Dataset.range(30).shuffle(7, seed=1).map(lambda x: x * x).batch(4).prefetch(2)
    ),
    "parallel-map-shuffle-batch": lambda: (
        Dataset.range(30).map(lambda x: x + 1, num_parallel_calls=3).shuffle(5, seed=2).batch(3)
    ),
    "repeat-shuffle": lambda: Dataset.range(8).repeat(3).shuffle(4, seed=3),
    "shuffle-repeat-take": lambda: Dataset.range(8).shuffle(4, seed=3).repeat().take(20),
    "interleave-shuffle-batch-prefetch": lambda: (
        Dataset.range(5)
        .interleave(lambda x: Dataset.range(int(x) * 2), cycle_length=2, block_length=2, num_parallel_calls=2)
        .shuffle(3, seed=4)
        .batch(2)
        .prefetch(1)
    ),
    "filter-padded_batch-unbatch": lambda: (
        Dataset.range(20).filter(lambda x: x % 3 != 0).map(lambda x: np.arange(int(x) % 4)).padded_batch(3).unbatch()
    ),
    "zip-enumerate-skip": lambda: (
        Dataset.zip((Dataset.range(12), Dataset.range(12).shuffle(4, seed=5))).enumerate().skip(3)
    ),
    "generator-cache-shuffle": lambda: Dataset.from_generator(lambda: iter(range(10))).cache().shuffle(3, seed=6),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_chain_resumes_at_every_step(name):
    assert_resumes_exactly(CHAINS[name])


def test_resume_in_a_later_epoch():
    assert_resumes_exactly(CHAINS["shuffle-map-batch-prefetch"], epoch=4)


def test_state_is_small_and_json():
    import json

    it = (
        Dataset.range(10**6)
        .shuffle(1000, seed=1)
        .map(lambda x: x, num_parallel_calls=2)
        .batch(64)
        .prefetch(4)
        .iterator()
    )
    for _ in range(50):
        next(it)
    assert len(json.dumps(it.state_dict())) < 500
    it.close()


def test_aliases():
    it = iter(Dataset.range(5))
    next(it)
    assert it.get_state() == it.state_dict()
    other = iter(Dataset.range(5))
    other.set_state(it.get_state())
    assert [int(x) for x in other] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Dataset.range(6).shuffle(6, seed=1).repeat(3),
        lambda: Dataset.range(3).interleave(lambda x: Dataset.range(4).shuffle(4, seed=int(x)), cycle_length=2),
        lambda: Dataset.range(4).shuffle(4, seed=2).concatenate(Dataset.range(4).shuffle(4, seed=3)),
    ],
)
def test_state_restores_into_an_iterator_of_another_epoch(make):
    """A new process restores into iter(ds) of its own epoch 0; the saved epoch must win."""
    import json

    full = [int(x) for x in make().iterator(epoch=5)]
    for k in range(len(full) + 1):
        it = make().iterator(epoch=5)
        for _ in range(k):
            next(it)
        state = json.loads(json.dumps(it.state_dict()))
        restored = make().iterator(epoch=0)
        restored.load_state_dict(state)
        assert [int(x) for x in restored] == full[k:], k
