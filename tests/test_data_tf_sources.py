"""range, from_tensor_slices and flat_map against tf.data (the golden cases of golden/make_data_ops.py)."""

import pytest

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.testing import assert_resumes_exactly

CASES = names("range_") + names("from_tensor_slices_") + names("from_tensors_") + names("flat_map_")


@pytest.mark.parametrize("name", CASES)
def test_source_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_source_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_source_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))
