import pytest

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly

CASES = names("choose_")


@pytest.mark.parametrize("name", CASES)
def test_choose_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_choose_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_choose_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


def test_choose_rejects_an_index_out_of_range():
    ds = Dataset.choose_from_datasets([Dataset.range(3)], Dataset.from_tensor_slices([0, 1]))
    with pytest.raises(IndexError, match="outside 0..0"):
        list(ds)


def test_choose_ends_when_every_dataset_is_exhausted():
    choices = Dataset.range(1000).map(lambda i: i % 2)
    ds = Dataset.choose_from_datasets([Dataset.range(2), Dataset.range(5, 6)], choices, stop_on_empty_dataset=False)
    assert [int(x) for x in ds] == [0, 5, 1]


def test_choose_restores_into_an_iterator_whose_input_has_ended_since():
    ds = Dataset.choose_from_datasets(
        [Dataset.range(2), Dataset.range(10, 13)], Dataset.from_tensor_slices([0, 1, 0, 0, 1, 1])
    )
    it = iter(ds)
    assert int(next(it)) == 0
    saved = it.get_state()
    rest = [int(x) for x in it]  # input 0 ends on the way and is closed
    assert rest == [10, 1]
    it.set_state(saved)
    assert [int(x) for x in it] == rest
