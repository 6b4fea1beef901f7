"""``encode_jpeg`` / ``encode_png`` write TensorFlow's bytes: against golden digests and TensorFlow itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tfrx.image as timg

sys.path.insert(0, str(Path(__file__).parent / "golden"))
from make_encoder_golden import cases, digest, images, key  # noqa: E402 - the script that made the golden file

GOLDEN = json.loads((Path(__file__).parent / "golden" / "encoders.json").read_text())
CASES = cases()


@pytest.mark.parametrize("name,encoder,kwargs", CASES, ids=[key(*c) for c in CASES])
def test_encoding_equals_tensorflow_golden(name, encoder, kwargs):
    if encoder == "encode_jpeg":
        pytest.importorskip("PIL")  # Pillow's libjpeg-turbo writes TensorFlow's bytes
    data = getattr(timg, encoder)(images()[name], **kwargs)
    assert digest(data) == GOLDEN[key(name, encoder, kwargs)]


def test_golden_covers_every_case():
    assert sorted(GOLDEN) == sorted(key(*c) for c in CASES)


images_strategy = st.tuples(
    st.integers(1, 40), st.integers(1, 40), st.sampled_from([1, 2, 3, 4]), st.sampled_from([np.uint8, np.uint16])
).flatmap(lambda t: hnp.arrays(t[3], (t[0], t[1], t[2])))


@settings(max_examples=40, deadline=None)
@given(image=images_strategy, level=st.integers(-1, 9))
def test_encode_png_equals_tensorflow(tf, image, level):
    assert timg.encode_png(image, level) == tf.io.encode_png(image, compression=level).numpy()


@pytest.mark.parametrize("shape", [(1, 2, 1), (1, 7, 3), (5, 1, 1), (6, 1, 4), (1, 1, 2)])
def test_encode_png_of_one_row_or_column_equals_tensorflow(tf, shape):
    # libpng keeps a one-row image off the filters that read the row above, a one-column one off those
    # that read the pixel to the left; the pixels are chosen so that Average would win otherwise.
    image = (np.arange(int(np.prod(shape)), dtype=np.int64)[::-1] % 7 + 1).astype(np.uint8).reshape(shape)
    for level in (-1, 0, 9):
        assert timg.encode_png(image, level) == tf.io.encode_png(image, compression=level).numpy()


@settings(max_examples=40, deadline=None)
@given(
    image=st.tuples(st.integers(1, 40), st.integers(1, 40), st.sampled_from([1, 3])).flatmap(
        lambda t: hnp.arrays(np.uint8, t)
    ),
    quality=st.integers(0, 100),
    chroma=st.booleans(),
)
def test_encode_jpeg_equals_tensorflow(tf, image, quality, chroma):
    pytest.importorskip("PIL")
    got = timg.encode_jpeg(image, quality, chroma_downsampling=chroma)
    assert got == tf.io.encode_jpeg(image, quality=quality, chroma_downsampling=chroma).numpy()


@settings(max_examples=30, deadline=None)
@given(image=images_strategy, level=st.integers(-1, 9))
def test_encode_png_round_trips(image, level):
    np.testing.assert_array_equal(timg.decode_png(timg.encode_png(image, level), dtype=image.dtype), image)


def test_encoders_refuse_bad_arguments():
    with pytest.raises(ValueError, match="compression"):
        timg.encode_png(np.zeros((2, 2, 3), np.uint8), 10)
    with pytest.raises(ValueError, match="uint8 or uint16"):
        timg.encode_png(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(ValueError, match="quality"):
        timg.encode_jpeg(np.zeros((2, 2, 3), np.uint8), 101)
