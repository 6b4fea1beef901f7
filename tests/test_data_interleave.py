import numpy as np
import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def _ours(cycle, block, parallel=None):
    return Dataset.range(1, 7).interleave(
        lambda x: Dataset.from_tensors(x).repeat(int(x)),
        cycle_length=cycle,
        block_length=block,
        num_parallel_calls=parallel,
    )


@pytest.mark.parametrize("cycle,block", [(1, 1), (2, 1), (2, 4), (3, 2), (4, 3), (10, 1)])
@pytest.mark.parametrize("parallel", [None, 2])
def test_interleave_order_matches_tf(tf, cycle, block, parallel):
    extra = {} if parallel is None else {"num_parallel_calls": min(parallel, cycle), "deterministic": True}
    theirs = tf.data.Dataset.range(1, 7).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=cycle, block_length=block, **extra
    )
    assert to_py(list(_ours(cycle, block, parallel))) == to_py(list(theirs.as_numpy_iterator()))


def test_interleave_with_empty_inner_datasets_matches_tf(tf):
    ours = Dataset.range(8).interleave(lambda x: Dataset.range(int(x) % 3), cycle_length=3, block_length=2)
    theirs = tf.data.Dataset.range(8).interleave(lambda x: tf.data.Dataset.range(x % 3), cycle_length=3, block_length=2)
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))


def test_flat_map():
    assert to_py(list(Dataset.range(4).flat_map(lambda x: Dataset.range(int(x))))) == [0, 0, 1, 0, 1, 2]


@pytest.mark.parametrize("parallel", [None, 2])
def test_interleave_resumes_at_every_step(parallel):
    assert_resumes_exactly(lambda: _ours(3, 2, parallel))


def test_interleave_requires_dataset():
    with pytest.raises(TypeError, match="must return a Dataset"):
        list(Dataset.range(3).interleave(lambda x: np.arange(3), cycle_length=2))


def test_nondeterministic_interleave_skips_a_slow_slot():
    import time

    def slow_first(x):
        def gen():
            for i in range(3):
                if x == 0:
                    time.sleep(0.1)
                yield x * 10 + i

        return Dataset.from_generator(gen)

    out = to_py(
        list(Dataset.range(3).interleave(slow_first, cycle_length=3, num_parallel_calls=3, deterministic=False))
    )
    assert sorted(out) == [0, 1, 2, 10, 11, 12, 20, 21, 22]
    assert out.index(0) > out.index(10)
    det = to_py(list(Dataset.range(3).interleave(slow_first, cycle_length=3, num_parallel_calls=3)))
    assert det == [0, 10, 20, 1, 11, 21, 2, 12, 22]


def test_nondeterministic_interleave_state_keeps_every_element_once():
    """Sloppy order changes which slot goes next, not what each slot has handed out: the state stays exact as a set."""
    import time

    def jittery(x):
        def gen():
            for i in range(4):
                time.sleep(0.003 * ((x * 7 + i) % 3))
                yield x * 10 + i

        return Dataset.from_generator(gen)

    def ds():
        return Dataset.range(5).interleave(jittery, cycle_length=3, num_parallel_calls=3, deterministic=False)

    for k in (0, 3, 7, 12, 20):
        it = ds().iterator()
        head = [int(next(it)) for _ in range(k)]
        state = it.state_dict()
        it.close()
        restored = ds().iterator()
        restored.load_state_dict(state)
        rest = [int(x) for x in restored]
        assert sorted(head + rest) == sorted(x * 10 + i for x in range(5) for i in range(4)), k
