import numpy as np
import pytest

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset
from tfrx.testing import assert_resumes_exactly

CASES = names("bucket_")


@pytest.mark.parametrize("name", CASES)
def test_bucket_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_bucket_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", ["bucket_padded", "bucket_pad_to_boundary", "bucket_dict"])
def test_bucket_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


def test_bucket_batches_hold_lengths_of_their_bucket_only():
    ds = Dataset.range(40).map(lambda i: np.ones(i % 9 + 1, np.int32)).bucket_by_sequence_length(len, [3, 6], [4, 4, 4])
    for batch in ds:
        lengths = (batch != 0).sum(axis=1)
        buckets = np.searchsorted([3, 6], lengths, side="right")
        assert len(set(buckets.tolist())) == 1


def test_bucket_pad_to_boundary_rejects_the_last_bucket():
    ds = (
        Dataset.range(5)
        .map(lambda i: np.ones(i + 1))
        .bucket_by_sequence_length(len, [3], [2, 2], pad_to_bucket_boundary=True)
    )
    with pytest.raises(ValueError, match="max\\(bucket_boundaries\\)"):
        list(ds)


def test_bucket_checks_arguments():
    with pytest.raises(ValueError, match=r"len\(bucket_boundaries\) \+ 1"):
        Dataset.range(3).bucket_by_sequence_length(len, [2, 4], [1, 2])
    with pytest.raises(ValueError, match="increasing"):
        Dataset.range(3).bucket_by_sequence_length(len, [4, 2], [1, 2, 3])
