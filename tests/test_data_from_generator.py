import numpy as np
import pytest

from data_ops_cases import golden, names, ours, pipeline, tensorflow
from tfrx.data import Dataset, TensorSpec
from tfrx.testing import assert_resumes_exactly

CASES = names("from_generator_")


@pytest.mark.parametrize("name", CASES)
def test_from_generator_matches_golden(name):
    assert ours(name) == golden(name)


@pytest.mark.parametrize("name", CASES)
def test_from_generator_matches_tf(name, tf):
    assert ours(name) == tensorflow(name, tf)


@pytest.mark.parametrize("name", CASES)
def test_from_generator_resumes_exactly(name):
    assert_resumes_exactly(pipeline(name))


def gen():
    for i in range(4):
        yield {"x": [i] * i, "y": i / 2}


def test_output_signature_dict_converts_dtypes():
    sig = {"x": TensorSpec([None], "int64"), "y": TensorSpec([], np.float32)}
    out = list(Dataset.from_generator(gen, output_signature=sig))
    assert [e["x"].dtype for e in out] == [np.int64] * 4
    assert out[3]["y"] == np.float32(1.5) and out[3]["y"].dtype == np.float32


def test_output_types_and_shapes_are_the_older_form():
    out = list(
        Dataset.from_generator(gen, output_types={"x": np.int32, "y": np.float64}, output_shapes={"x": [None], "y": []})
    )
    assert out[2]["x"].tolist() == [2, 2] and out[2]["x"].dtype == np.int32


def test_output_signature_shape_mismatch_names_the_shapes():
    ds = Dataset.from_generator(gen, output_signature={"x": TensorSpec([2], np.int64), "y": TensorSpec([], np.float32)})
    with pytest.raises(ValueError, match=r"shape=\[2\]\): got a value of shape \[0\]"):
        list(ds)


def test_output_signature_rejects_text_for_numbers():
    ds = Dataset.from_generator(lambda: iter(["a"]), output_signature=TensorSpec([], np.int32))
    with pytest.raises(TypeError, match="int32"):
        list(ds)


def test_tensor_spec_accepts_dtype_objects_with_as_numpy_dtype():
    class Int16:
        as_numpy_dtype = np.int16

    spec = TensorSpec([None, 3], Int16, name="pixels")
    assert spec.dtype == np.int16 and spec.shape == (None, 3)
    assert spec.is_compatible_with(np.zeros((5, 3), np.int16)) and not spec.is_compatible_with(
        np.zeros((5, 2), np.int16)
    )
    assert not spec.is_compatible_with(np.zeros((5, 3)))  # float64: the dtype must match too, as in TensorFlow
    assert spec == TensorSpec((None, 3), np.int16, "pixels")
    assert "string" in repr(TensorSpec([], "string"))
