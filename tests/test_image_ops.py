"""tfrx.image.resize / convert_image_dtype / per_image_standardization against tf.image."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrx import image as timg

# Max abs difference to tf.image.resize on 0..255 inputs. Bilinear and nearest
# repeat TensorFlow's float32 arithmetic step for step; the kernel methods sum
# the same weights in a different order (float32 rounding).
RESIZE_TOLERANCE = {
    "bilinear": 1e-4,
    "nearest": 0,
    "bicubic": 2e-3,
    "area": 2e-3,
    "lanczos3": 2e-3,
    "lanczos5": 2e-3,
    "gaussian": 2e-3,
    "mitchellcubic": 2e-3,
}

SHAPES = [((23, 31), (7, 11)), ((23, 31), (64, 50)), ((40, 40), (40, 40)), ((5, 9), (17, 3)), ((1, 7), (4, 4))]


def _image(shape, channels=3, dtype=np.uint8, seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape + (channels,)).astype(dtype)


@pytest.mark.parametrize("method", sorted(RESIZE_TOLERANCE))
@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}->{b}" for a, b in SHAPES])
@pytest.mark.parametrize("antialias", [False, True])
def test_resize_matches_tensorflow(tf, method, shapes, antialias):
    src, dst = shapes
    img = _image(src)
    expected = tf.image.resize(img, dst, method=method, antialias=antialias).numpy()
    got = timg.resize(img, dst, method=method, antialias=antialias)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    tolerance = RESIZE_TOLERANCE[method] if not antialias or method in ("nearest", "area") else 2e-3
    np.testing.assert_allclose(got, expected, rtol=0, atol=tolerance)


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic", "area"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64, np.int32])
def test_resize_dtypes_and_batches(tf, method, dtype):
    batch = np.stack([_image((13, 17), 2, dtype, seed) for seed in range(3)])
    expected = tf.image.resize(batch, (6, 9), method=method).numpy()
    got = timg.resize(batch, (6, 9), method=method)
    assert got.dtype == expected.dtype and got.shape == expected.shape == (3, 6, 9, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=RESIZE_TOLERANCE[method] * 4)


def test_resize_preserve_aspect_ratio(tf):
    img = _image((30, 45))
    expected = tf.image.resize(img, (20, 20), preserve_aspect_ratio=True).numpy()
    got = timg.resize(img, (20, 20), preserve_aspect_ratio=True)
    assert got.shape == expected.shape == (13, 20, 3)
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_resize_list_of_images_stacks():
    out = timg.resize([_image((10, 12)), _image((30, 5))], (8, 8))
    assert out.shape == (2, 8, 8, 3) and out.dtype == np.float32


def test_resize_bad_arguments():
    with pytest.raises(ValueError, match="method"):
        timg.resize(_image((4, 4)), (2, 2), method="cubic")
    with pytest.raises(ValueError, match="shape"):
        timg.resize(np.zeros((4, 4)), (2, 2))
    with pytest.raises(ValueError, match="positive"):
        timg.resize(_image((4, 4)), (0, 2))


@settings(max_examples=40, deadline=None)
@given(
    src=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    dst=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    method=st.sampled_from(["bilinear", "nearest", "bicubic", "area"]),
    antialias=st.booleans(),
)
def test_resize_property_matches_tensorflow(tf, src, dst, method, antialias):
    img = _image(src, 1, seed=src[0] * 41 + src[1])
    expected = tf.image.resize(img, dst, method=method, antialias=antialias).numpy()
    got = timg.resize(img, dst, method=method, antialias=antialias)
    tolerance = RESIZE_TOLERANCE[method] if not antialias or method in ("nearest", "area") else 2e-3
    np.testing.assert_allclose(got, expected, rtol=0, atol=tolerance)


@settings(max_examples=150, deadline=None)
@given(
    src=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    dst=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    channels=st.sampled_from([1, 2, 3, 4, 5]),
    # uint8 with 3 or 4 channels takes the SIMD x-interpolation: drawn more often.
    dtype=st.sampled_from([np.uint8, np.uint8, np.float32, np.float64, np.int32]),
    batch=st.integers(1, 3),
)
def test_native_bilinear_equals_numpy_reference(src, dst, channels, dtype, batch):
    from tfrx.image import _resize

    img = np.random.default_rng(src[0] * 41 + src[1]).random((batch,) + src + (channels,)) * 255
    img = img.astype(dtype)
    expected = _resize._resize_bilinear(img, *dst)
    got = _resize._resize_bilinear_native(img, *dst)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=60, deadline=None)
@given(
    src=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    dst=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    channels=st.sampled_from([1, 2, 3, 4, 5]),
    dtype=st.sampled_from([np.uint8, np.uint16, np.float32, np.float64, np.int32, np.float16]),
    batch=st.integers(1, 3),
)
def test_native_nearest_equals_numpy_reference(src, dst, channels, dtype, batch):
    from tfrx.image import _resize

    img = (np.random.default_rng(src[0] * 41 + src[1]).random((batch,) + src + (channels,)) * 255).astype(dtype)
    expected = img[:, _resize._nearest_axis(src[0], dst[0])][:, :, _resize._nearest_axis(src[1], dst[1])]
    got = _resize._resize_nearest_native(img, *dst)
    assert got.dtype == img.dtype
    np.testing.assert_array_equal(got, expected)


def test_native_nearest_checks_indices():
    from tfrx import _native

    img = np.zeros((1, 4, 5 * 3), np.uint8)
    rows, cols = np.array([0, 3], np.int64), np.array([0, 4], np.int64)
    _native.resize_nearest(img, np.empty((1, 2, 6), np.uint8), 3, rows, cols)
    with pytest.raises(ValueError, match="out must be"):
        _native.resize_nearest(img, np.empty((1, 2, 5), np.uint8), 3, rows, cols)
    with pytest.raises(ValueError, match="whole number"):
        _native.resize_nearest(img, np.empty((1, 2, 8), np.uint8), 4, rows, cols)
    with pytest.raises(ValueError, match="column out of range"):
        _native.resize_nearest(img, np.empty((1, 2, 6), np.uint8), 3, rows, np.array([0, 5], np.int64))
    with pytest.raises(ValueError, match="row out of range"):
        _native.resize_nearest(img, np.empty((1, 2, 6), np.uint8), 3, np.array([0, 4], np.int64), cols)


def test_native_bilinear_checks_shapes_and_plans():
    from tfrx import _native
    from tfrx.image import _resize

    img = _image((6, 5))[None]
    plan = _resize._native_bilinear_plan(6, 5, 3, 4, 4)
    with pytest.raises(ValueError, match="out must be"):
        _native.resize_bilinear(img, np.empty((1, 4, 4, 1), np.float32), *plan)
    with pytest.raises(ValueError, match="column plan"):
        _native.resize_bilinear(img, np.empty((1, 4, 3, 3), np.float32), *plan)
    rows_lo, rows_hi, ly, left, right, lx = plan
    bad = left.copy()
    bad[-3:] = 15  # one pixel past the end of a 5-pixel row
    with pytest.raises(ValueError, match="out of range"):
        _native.resize_bilinear(img, np.empty((1, 4, 4, 3), np.float32), rows_lo, rows_hi, ly, bad, right, lx)
    bad_rows = rows_hi.copy()
    bad_rows[-1] = 6
    with pytest.raises(ValueError, match="out of range"):
        _native.resize_bilinear(img, np.empty((1, 4, 4, 3), np.float32), rows_lo, bad_rows, ly, left, right, lx)


# ----------------------------------------------------------------- convert_image_dtype

INT_DTYPES: list[type] = [np.uint8, np.uint16, np.int8, np.int16, np.int32]
FLOAT_DTYPES: list[type] = [np.float16, np.float32, np.float64]


def _samples(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.array([0.0, 0.25, 0.5, 0.999, 1.0, -0.5, 1.5, 1e-3], dt)
    info = np.iinfo(dt)
    values = [info.min, info.min + 1, -1, 0, 1, 2, 3, 127, 128, 255, info.max - 1, info.max]
    return np.array([v for v in values if info.min <= v <= info.max], dt)


@pytest.mark.parametrize("src", INT_DTYPES + FLOAT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", INT_DTYPES + FLOAT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("saturate", [False, True])
def test_convert_image_dtype_matches_tensorflow(tf, src, dst, saturate):
    x = _samples(src)
    if np.dtype(src).kind == "f" and np.dtype(dst).kind in "iu" and not saturate:
        x = x[(x >= 0) & (x <= 1)]  # out-of-range float -> int casts are undefined in TensorFlow
    expected = tf.image.convert_image_dtype(x, tf.as_dtype(dst), saturate=saturate).numpy()
    got = timg.convert_image_dtype(x, dst, saturate=saturate)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_convert_image_dtype_uint8_to_float32_is_exactly_tensorflows(tf):
    x = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(
        timg.convert_image_dtype(x, np.float32), tf.image.convert_image_dtype(x, tf.float32).numpy()
    )
    back = timg.convert_image_dtype(timg.convert_image_dtype(x, np.float32), np.uint8)
    np.testing.assert_array_equal(back, x)


def test_convert_image_dtype_rejects_unsupported():
    with pytest.raises(TypeError):
        timg.convert_image_dtype(np.zeros(3, bool), np.float32)


# ----------------------------------------------------------------- standardization, normalize, grayscale


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int32])
@pytest.mark.parametrize("shape", [(5, 7, 3), (2, 6, 4, 1), (1, 1, 1), (3, 3, 2)])
def test_per_image_standardization_matches_tensorflow(tf, dtype, shape):
    x = np.random.default_rng(1).integers(0, 256, shape).astype(dtype)
    if shape == (3, 3, 2):
        x[:] = 7  # zero variance: the 1/sqrt(N) floor applies
    expected = tf.image.per_image_standardization(x).numpy()
    got = timg.per_image_standardization(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_normalize_uses_unit_range_statistics():
    x = np.full((2, 2, 3), 255, np.uint8)
    out = timg.normalize(x, (0.5, 0.5, 0.5), (0.25, 0.5, 1.0))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0, 0], [2.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="std"):
        timg.normalize(x, 0, 0)


def test_rgb_to_grayscale_matches_tensorflow(tf):
    for dtype in (np.uint8, np.float32):
        x = np.random.default_rng(3).integers(0, 256, (4, 5, 3)).astype(dtype)
        expected = tf.image.rgb_to_grayscale(x).numpy()
        got = timg.rgb_to_grayscale(x)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, atol=1e-4 if dtype == np.float32 else 0)
