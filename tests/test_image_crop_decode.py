"""Partial JPEG decoding: decode_and_crop_jpeg, sample_distorted_bounding_box and the fused crop-and-resize decodes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crop_jpeg_cases import FILES, GOLDEN, OPTIONS, cases, digest, jpeg, key, windows
from tfrx import image as timg
from tfrx.errors import DecodeError
from tfrx.image import _partial

pytest.importorskip("PIL")
needs_libjpeg = pytest.mark.skipif(timg.partial_jpeg_backend() is None, reason="no libjpeg-turbo to load")
DIGESTS = json.loads(GOLDEN.read_text())["digests"]


def _crop(name, window, channels=0, fancy=True, dct="", ratio=1):
    return timg.decode_and_crop_jpeg(
        jpeg(name), window, channels=channels, fancy_upscaling=fancy, dct_method=dct, ratio=ratio
    )


# ------------------------------------------------------------------ decode_and_crop_jpeg
@needs_libjpeg
def test_decode_and_crop_jpeg_equals_golden():
    """Every file (4:2:0, 4:2:2, 4:4:4, gray, progressive, CMYK, odd sizes) x window x option, as TensorFlow decoded it."""
    got = {key(*case): digest(_crop(*case)) for case in cases()}
    assert len(got) == len(DIGESTS)
    wrong = [k for k in DIGESTS if got[k] != DIGESTS[k]]
    assert not wrong, wrong[:5]


@needs_libjpeg
@pytest.mark.parametrize("name", sorted(FILES))
def test_decode_and_crop_jpeg_equals_tensorflow(tf, name):
    h, w = FILES[name][:2]
    for channels, fancy, dct, ratio in OPTIONS:
        if name.startswith("cmyk") and channels == 1:
            continue
        for window in windows(-(-h // ratio), -(-w // ratio)):
            want = tf.io.decode_and_crop_jpeg(
                jpeg(name), window, channels=channels, fancy_upscaling=fancy, dct_method=dct, ratio=ratio
            )
            np.testing.assert_array_equal(
                _crop(name, window, channels, fancy, dct, ratio), want.numpy(), err_msg=f"{name} {window}"
            )


@needs_libjpeg
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(FILES)), st.data())
def test_decode_and_crop_jpeg_any_window_equals_tensorflow(tf, name, data):
    h, w = FILES[name][:2]
    y = data.draw(st.integers(0, h - 1))
    x = data.draw(st.integers(0, w - 1))
    window = [y, x, data.draw(st.integers(1, h - y)), data.draw(st.integers(1, w - x))]
    channels = data.draw(st.sampled_from([0, 3] if name.startswith("cmyk") else [0, 1, 3]))
    fancy = data.draw(st.booleans())
    want = tf.io.decode_and_crop_jpeg(jpeg(name), window, channels=channels, fancy_upscaling=fancy).numpy()
    np.testing.assert_array_equal(_crop(name, window, channels, fancy), want)


@needs_libjpeg
@settings(max_examples=80, deadline=None)
@given(st.sampled_from(sorted(n for n in FILES if not n.startswith("cmyk"))), st.data())
def test_decode_and_crop_jpeg_matches_full_decode_away_from_the_window_edges(name, data):
    """Without TensorFlow: inside the window the pixels are the full decode's; only upsampled chroma at the
    window's left (when iMCU-aligned) and right edges may differ, as in TensorFlow's partial decode."""
    h, w = FILES[name][:2]
    y = data.draw(st.integers(0, h - 1))
    x = data.draw(st.integers(0, w - 1))
    window = [y, x, data.draw(st.integers(1, h - y)), data.draw(st.integers(1, w - x))]
    full = timg.decode_jpeg(jpeg(name), channels=3)[y : y + window[2], x : x + window[3]]
    got = _crop(name, window, 3)
    assert got.shape == full.shape
    subsampled = FILES[name][3] != 0 and FILES[name][2] != "L"
    if not subsampled:
        np.testing.assert_array_equal(got, full)
    else:
        np.testing.assert_array_equal(got[:, 1:-1], full[:, 1:-1])
        np.testing.assert_array_equal(
            _crop(name, window, 3, fancy=False),
            timg.decode_jpeg(jpeg(name), channels=3, fancy_upscaling=False)[y : y + window[2], x : x + window[3]],
        )


@needs_libjpeg
def test_decode_and_crop_jpeg_rejects_windows_outside_the_image():
    name = "420_37x53.jpg"
    for window in (
        [0, 0, 38, 10],
        [0, 0, 10, 54],
        [-1, 0, 5, 5],
        [0, -1, 5, 5],
        [0, 0, 0, 5],
        [0, 0, 5, 0],
        [36, 52, 2, 1],
    ):
        with pytest.raises(ValueError, match="not inside the image of size \\[37, 53\\]"):
            _crop(name, window)
    with pytest.raises(ValueError, match="not inside the image of size \\[19, 27\\]"):
        _crop(name, [0, 0, 20, 5], ratio=2)
    with pytest.raises(ValueError, match="crop_window must be"):
        _crop(name, [0, 0, 5])


@needs_libjpeg
def test_decode_and_crop_jpeg_rejects_bad_data_and_arguments(tf):
    data = jpeg("420_64x48.jpg")
    with pytest.raises(DecodeError, match="invalid JPEG|not a JPEG"):
        timg.decode_and_crop_jpeg(data[:300], [0, 0, 4, 4])
    with pytest.raises(ValueError, match="not a JPEG"):
        timg.decode_and_crop_jpeg(b"\x89PNG\r\n\x1a\n", [0, 0, 1, 1])
    for bad in ({"channels": 2}, {"ratio": 3}, {"dct_method": "FLOAT"}):
        with pytest.raises(ValueError):
            timg.decode_and_crop_jpeg(data, [0, 0, 4, 4], **bad)
    # Cut short: TensorFlow fails where the window or the header is missing, and returns windows it could decode.
    outcomes = set()
    for cut in (100, 300, 600, len(data) // 2, len(data) - 2, len(data) - 1):
        for window in ([0, 0, 4, 4], [60, 0, 4, 4]):
            try:
                want = tf.io.decode_and_crop_jpeg(data[:cut], window).numpy()
            except tf.errors.InvalidArgumentError:
                with pytest.raises(DecodeError, match="premature end of JPEG data"):
                    timg.decode_and_crop_jpeg(data[:cut], window)
                outcomes.add("error")
            else:
                np.testing.assert_array_equal(timg.decode_and_crop_jpeg(data[:cut], window), want)
                outcomes.add("decoded")
    assert outcomes == {"error", "decoded"}


@needs_libjpeg
def test_decode_and_crop_jpeg_recovers_truncated_data_as_tensorflow(tf):
    data = jpeg("420_progressive_61x83.jpg")[:-600]
    want = tf.io.decode_and_crop_jpeg(data, [5, 7, 40, 50], channels=3, try_recover_truncated=True).numpy()
    np.testing.assert_array_equal(
        timg.decode_and_crop_jpeg(data, [5, 7, 40, 50], channels=3, try_recover_truncated=True), want
    )


def test_decode_and_crop_jpeg_without_libjpeg_falls_back_to_a_whole_decode(monkeypatch):
    pytest.importorskip("simplejpeg")
    import tfrx.image._jpeg as jpeg_module

    monkeypatch.setattr(jpeg_module, "partial_jpeg_backend", lambda: None)
    gray, color = jpeg("gray_31x45.jpg"), jpeg("420_37x53.jpg")
    np.testing.assert_array_equal(timg.decode_and_crop_jpeg(gray, [3, 4, 10, 20]), timg.decode_jpeg(gray)[3:13, 4:24])
    with pytest.raises(NotImplementedError, match="fancy_upscaling=False"):
        timg.decode_and_crop_jpeg(color, [0, 0, 5, 5], channels=3)
    with pytest.raises(ValueError, match="not inside the image"):
        timg.decode_and_crop_jpeg(gray, [30, 0, 10, 5])
    if timg.partial_jpeg_backend() is not None:  # the fallback's exact cases equal the partial decoder
        monkeypatch.undo()
        got = timg.decode_and_crop_jpeg(color, [3, 5, 10, 12], channels=1)
        monkeypatch.setattr(jpeg_module, "partial_jpeg_backend", lambda: None)
        np.testing.assert_array_equal(timg.decode_and_crop_jpeg(color, [3, 5, 10, 12], channels=1), got)


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="uses Linux sonames")
def test_libraries_that_cannot_decode_windows_are_refused():
    """In a fresh interpreter (the first library loaded stays): a missing file, a library without libjpeg's symbols."""
    import subprocess
    import sys

    code = (
        "from tfrx import _native; "
        "print(_native.jpeg_load_library('/nonexistent/libjpeg.so.62')); "
        "print(_native.jpeg_load_library('libm.so.6')); "
        "print(_native.jpeg_library_loaded())"
    )
    env = {**__import__("os").environ, "PYTHONPATH": __import__("os").pathsep.join(sys.path)}
    lines = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.splitlines()
    assert "nonexistent" in lines[0]
    assert lines[1] == "libm.so.6 is not a libjpeg library"
    assert lines[2] == "False"


def test_backend_candidates_honour_tfrx_libjpeg(monkeypatch):
    monkeypatch.setenv("TFRX_LIBJPEG", "/opt/custom/libjpeg.so.62")
    assert _partial._candidates() == ["/opt/custom/libjpeg.so.62"]
    monkeypatch.delenv("TFRX_LIBJPEG")
    assert _partial._candidates()[-1] in ("libjpeg.so.62", "libjpeg.62.dylib")


@pytest.mark.parametrize("name", sorted(FILES))
def test_extract_jpeg_shape_equals_tensorflow(tf, name):
    want = tf.io.extract_jpeg_shape(jpeg(name)).numpy()
    got = timg.extract_jpeg_shape(jpeg(name))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    assert list(got[:2]) == list(FILES[name][:2])


def test_extract_jpeg_shape_reads_only_the_header():
    data = jpeg("cmyk_24x30.jpg")
    assert timg.extract_jpeg_shape(data, np.int64).tolist() == [24, 30, 4]
    assert timg.extract_jpeg_shape(jpeg("gray_31x45.jpg")).tolist() == [31, 45, 1]
    with pytest.raises(DecodeError, match="not a JPEG"):
        timg.extract_jpeg_shape(b"GIF89a....")
    with pytest.raises(ValueError, match="output_type"):
        timg.extract_jpeg_shape(data, np.float32)


# ------------------------------------------------------------------ sample_distorted_bounding_box
def _sample(h, w, n, seed, **kw):
    kw.setdefault("use_image_if_no_bounding_boxes", True)
    out = []
    for _ in range(n):
        begin, size, bbox = timg.sample_distorted_bounding_box([h, w, 3], seed=seed, **kw)
        out.append((int(begin[0]), int(begin[1]), int(size[0]), int(size[1])))
        assert begin[2] == 0 and size[2] == -1 and bbox.shape == (1, 1, 4) and bbox.dtype == np.float32
        np.testing.assert_allclose(
            bbox[0, 0], [begin[0] / h, begin[1] / w, (begin[0] + size[0]) / h, (begin[1] + size[1]) / w], rtol=1e-6
        )
    return out


@given(
    st.integers(1, 600),
    st.integers(1, 600),
    st.floats(0.01, 1.0),
    st.floats(0.01, 1.0),
    st.floats(0.2, 5.0),
    st.floats(0.2, 5.0),
)
@settings(max_examples=60, deadline=None)
def test_sampled_boxes_respect_the_constraints(h, w, a0, a1, r0, r1):
    area = (min(a0, a1), max(a0, a1))
    aspect = (min(r0, r1), max(r0, r1))
    for y, x, bh, bw in _sample(
        h, w, 5, 7, area_range=area, aspect_ratio_range=aspect, max_attempts=20, min_object_covered=0.0
    ):
        assert 0 <= y and 0 <= x and bh >= 1 and bw >= 1 and y + bh <= h and x + bw <= w
        if (bh, bw) != (h, w):  # a sampled crop, not the whole-image fallback
            assert area[0] * h * w * (1 - 1e-6) <= bh * bw <= area[1] * h * w * (1 + 1e-6)


def test_sampled_boxes_cover_the_object_and_fall_back_to_the_image():
    box = [[[0.25, 0.5, 0.5, 0.75]]]  # 25x25 pixels of a 100x100 image at (25, 50)
    for y, x, bh, bw in _sample(100, 100, 200, 3, bounding_boxes=box, min_object_covered=1.0, area_range=(0.05, 1.0)):
        assert y <= 25 and x <= 50 and y + bh >= 50 and x + bw >= 75
    # An aspect ratio of 10 cannot fit a 20x20 image at any area of at least half: the whole image.
    assert set(_sample(20, 20, 20, 3, aspect_ratio_range=(10, 10), area_range=(0.5, 1.0))) == {(0, 0, 20, 20)}


def test_sample_distorted_bounding_box_seeds_and_errors():
    assert _sample(300, 400, 10, 5) != _sample(300, 400, 10, 5)  # one seed goes on along one sequence
    assert len(set(_sample(300, 400, 50, 11))) > 40
    with pytest.raises(ValueError, match="use_image_if_no_bounding_boxes"):
        timg.sample_distorted_bounding_box([10, 10, 3])
    for bad in (
        {"area_range": (0.5, 0.1)},
        {"area_range": (0, 1)},
        {"area_range": (0.5, 1.5)},
        {"aspect_ratio_range": (0, 1)},
        {"max_attempts": 0},
    ):
        with pytest.raises(ValueError):
            timg.sample_distorted_bounding_box([10, 10, 3], use_image_if_no_bounding_boxes=True, **bad)
    with pytest.raises(ValueError, match="in \\[0.0, 1.0\\]"):
        timg.sample_distorted_bounding_box([10, 10, 3], [[[0, 0, 1.5, 1]]])
    with pytest.raises(ValueError, match="image_size"):
        timg.sample_distorted_bounding_box([10, 10], use_image_if_no_bounding_boxes=True)


def _float32_crop(width, height, min_frac, max_frac, aspect, rng):
    """GenerateRandomCrop in NumPy float32 scalars, step for step as TensorFlow's C++ (the sampler's oracle)."""
    f = np.float32
    min_area, max_area = f(min_frac) * f(width) * f(height), f(max_frac) * f(width) * f(height)
    crop_h = int(round(float(np.sqrt(min_area / aspect, dtype=f))))
    max_h = int(round(float(np.sqrt(max_area / aspect, dtype=f))))
    if int(round(float(f(max_h) * aspect))) > width:
        max_h = int((width + 0.5 - float(f(0.0000001))) / float(aspect))
        max_h -= int(round(float(f(max_h) * aspect))) > width
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += int(rng.integers(0, max_h - crop_h + 1))
    area = lambda: (int(round(float(f(crop_h) * aspect))), f(int(round(float(f(crop_h) * aspect))) * crop_h))  # noqa: E731
    crop_w, a = area()
    if a < min_area:
        crop_h += 1
        crop_w, a = area()
    if a > max_area:
        crop_h -= 1
        crop_w, a = area()
    if a < min_area or a > max_area or crop_w > width or crop_h > height or crop_w <= 0 or crop_h <= 0:
        return None
    y = int(rng.integers(0, height - crop_h)) if crop_h < height else 0
    x = int(rng.integers(0, width - crop_w)) if crop_w < width else 0
    return (y, x, crop_h, crop_w)


@settings(max_examples=300, deadline=None)
@given(
    st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-(2.0**60), max_value=2.0**60),
    st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=2.0**-60, max_value=2.0**60),
)
def test_float32_rounding_of_double_results_equals_float32_arithmetic(a, b):
    from tfrx.image._boxes import _f32

    x, y = np.float32(a), np.float32(b)
    assert _f32(a * b) == float(x * y)
    assert _f32(a / b) == float(x / y)
    assert _f32(a + b) == float(x + y) and _f32(a - b) == float(x - y)
    assert _f32(math.sqrt(b)) == float(np.sqrt(y, dtype=np.float32))


@settings(max_examples=400, deadline=None)
@given(
    st.integers(1, 5000),
    st.integers(1, 5000),
    st.floats(0.001, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0625, 4.0, width=32),
    st.integers(0, 2**32),
)
def test_sampler_float32_steps_equal_numpy_float32(height, width, min_frac, more, aspect, seed):
    # The sampler follows TensorFlow's float32 arithmetic with Python floats rounded to float32 at each step.
    from tfrx.image._boxes import _random_crop

    max_frac = min_frac + (1.0 - min_frac) * more
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        got = _random_crop(width, height, min_frac, max_frac, float(np.float32(aspect)), ours)
        want = _float32_crop(width, height, min_frac, max_frac, np.float32(aspect), theirs)
        assert (None if got is None else tuple(got)) == want
    assert ours.random() == theirs.random()  # the same draws were taken


@pytest.mark.parametrize(
    "shape, area, aspect", [((375, 500), (0.05, 1.0), (0.75, 1.33)), ((100, 60), (0.3, 0.6), (0.5, 2.0))]
)
def test_sampled_box_distribution_matches_tensorflow(tf, shape, area, aspect):
    """Same algorithm, other random streams: the crops' heights, widths and offsets agree in distribution."""
    h, w = shape
    kw = {
        "area_range": area,
        "aspect_ratio_range": aspect,
        "min_object_covered": 0.1,
        "use_image_if_no_bounding_boxes": True,
    }
    ours = np.array(_sample(h, w, 2000, 1, **kw), np.float64)
    theirs = []
    for i in range(2000):
        begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
            [h, w, 3], tf.zeros([1, 0, 4]), seed=[i, 7], **kw
        )
        theirs.append((int(begin[0]), int(begin[1]), int(size[0]), int(size[1])))
    theirs = np.array(theirs, np.float64)
    for column in range(4):
        scale = [h, w, h, w][column]
        assert abs(ours[:, column].mean() - theirs[:, column].mean()) < 0.04 * scale, column
        assert abs(np.median(ours[:, column]) - np.median(theirs[:, column])) < 0.06 * scale, column
    # Every crop either of them made is one the other's constraints allow.
    for y, x, bh, bw in np.concatenate([ours, theirs]).astype(int):
        assert y + bh <= h and x + bw <= w and (area[0] * h * w <= bh * bw * (1 + 1e-6) or (bh, bw) == (h, w))


# ------------------------------------------------------------------ fused crop + resize
def _photo(h=120, w=160, seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = (
        128 + 60 * np.sin(x[..., None] / 9.0 + np.arange(3)) * np.cos(y[..., None] / 7.0) + rng.normal(0, 8, (h, w, 3))
    )
    return timg.encode_jpeg(np.clip(img, 0, 255).astype(np.uint8), quality=90)


@needs_libjpeg
@pytest.mark.parametrize("window", [[0, 0, 120, 160], [10, 17, 50, 61], [119, 159, 1, 1], [3, 0, 117, 33]])
@pytest.mark.parametrize("size", [(24, 24), (64, 40), (200, 300)])
def test_decode_crop_and_resize_without_dct_scaling_is_crop_then_resize(window, size):
    data = _photo()
    want = timg.resize(timg.decode_and_crop_jpeg(data, window, channels=3), size)
    np.testing.assert_array_equal(timg.decode_crop_and_resize(data, window, size, dct_scaling=False), want)
    np.testing.assert_array_equal(
        timg.decode_crop_and_resize(data, window, size, dct_scaling=False, flip=True), want[:, ::-1]
    )
    gray = timg.resize(timg.decode_and_crop_jpeg(data, window, channels=1), size)
    np.testing.assert_array_equal(timg.decode_crop_and_resize(data, window, size, channels=1, dct_scaling=False), gray)


@needs_libjpeg
def test_decode_crop_and_resize_equals_tensorflow(tf):
    data = _photo()
    for window in ([0, 0, 120, 160], [10, 17, 50, 61]):
        want = tf.image.resize(tf.io.decode_and_crop_jpeg(data, window, channels=3), (32, 48)).numpy()
        np.testing.assert_allclose(
            timg.decode_crop_and_resize(data, window, (32, 48), dct_scaling=False), want, atol=1e-3
        )


@pytest.mark.parametrize("window", [[0, 0, 120, 160], [5, 9, 100, 140], [1, 3, 61, 97]])
def test_dct_scaled_crops_stay_close_to_the_full_size_decode(window):
    data = _photo()
    exact = timg.decode_crop_and_resize(data, window, (24, 30), dct_scaling=False)
    for flip in (False, True):
        scaled = timg.decode_crop_and_resize(data, window, (24, 30), flip=flip)
        reference = exact[:, ::-1] if flip else exact
        assert scaled.shape == exact.shape and scaled.dtype == np.float32
        # DCT scaling is another downsampling filter than the bilinear resize: on this photo, encoded as
        # tf.io.encode_jpeg encodes it (4:2:0 chroma, what encode_jpeg writes since it matches TensorFlow),
        # the mean differences are 4.02, 3.01 and 2.42 levels for the three windows.
        assert np.abs(scaled - reference).mean() < 4.5
        assert np.abs(scaled - reference).max() < 48.0


def test_fused_normalisation_equals_numpy():
    data = [_photo(seed=i) for i in range(3)]
    mean, std = np.float32([123.675, 116.28, 103.53]), np.float32([58.395, 57.12, 57.375])
    for size in [(20, 24), (7, 13), (31, 150)]:  # rows of 72, 39 and 450 samples: whole vectors and remainders
        plain = timg.decode_crop_and_resize(data, [4, 6, 90, 100], size, flip=[False, True, False])
        fused = timg.decode_crop_and_resize(data, [4, 6, 90, 100], size, flip=[False, True, False], mean=mean, std=std)
        np.testing.assert_array_equal(fused, (plain - mean) / std)
    plain = timg.decode_crop_and_resize(data, [4, 6, 90, 100], (20, 24))
    np.testing.assert_array_equal(
        timg.decode_crop_and_resize(data, [4, 6, 90, 100], (20, 24), mean=100.0), plain - np.float32(100)
    )
    with pytest.raises(ValueError, match="std must be non-zero"):
        timg.decode_random_crop_and_resize(data, (8, 8), std=[1, 0, 1])


def test_large_fused_outputs_reuse_memory_only_once_released(monkeypatch):
    # Outputs of 1 MiB and more come from recycled blocks: an output still
    # referred to (even through a view) is never handed out again, and one
    # released is.
    from tfrx.io._buffers import RecycledBuffers
    from tfrx.image import _crop_resize

    monkeypatch.setattr(_crop_resize, "_outputs", RecycledBuffers(keep=2))
    data = [_photo(seed=i) for i in range(4)]
    size = (256, 256)  # 4 x 256 x 256 x 3 float32: 3 MiB
    first = timg.decode_crop_and_resize(data, [4, 6, 90, 100], size)
    kept = first[1:3]
    want = kept.copy()
    del first
    second = timg.decode_crop_and_resize(data[::-1], [0, 0, 100, 120], size, flip=True)
    assert not np.shares_memory(kept, second)
    np.testing.assert_array_equal(kept, want)
    address = second.ctypes.data
    del second
    third = timg.decode_crop_and_resize(data, [4, 6, 90, 100], size)
    np.testing.assert_array_equal(third[1:3], want)
    assert third.flags.writeable and third.flags.c_contiguous and third.dtype == np.float32
    assert third.ctypes.data == address
    small = timg.decode_crop_and_resize(data, [4, 6, 90, 100], (8, 8))
    assert small.base is None  # under the size that is worth recycling: a plain array


def test_dct_denominator_needs_twice_the_target():
    from tfrx.image._crop_resize import _dct_denominator

    assert _dct_denominator(447, 600, 224, 224, True) == 1
    assert _dct_denominator(448, 448, 224, 224, True) == 2
    assert _dct_denominator(900, 1800, 224, 224, True) == 4
    assert _dct_denominator(4000, 4000, 224, 224, True) == 8
    assert _dct_denominator(4000, 4000, 224, 224, False) == 1


def test_decode_random_crop_and_resize_is_reproducible_and_batched():
    from tfrx.image import _random

    data = [_photo(seed=i) for i in range(6)]
    _random._generators.pop(123, None)
    a = timg.decode_random_crop_and_resize(data, (32, 32), seed=123, num_parallel_calls=1)
    b = timg.decode_random_crop_and_resize(data, (32, 32), seed=123, num_parallel_calls=3)
    assert a.shape == (6, 32, 32, 3) and a.dtype == np.float32
    assert not np.array_equal(a, b)  # the seed's sequence went on
    _random._generators.pop(123, None)
    c = timg.decode_random_crop_and_resize(data, (32, 32), seed=123, num_parallel_calls=1)
    _random._generators.pop(123, None)
    d = timg.decode_random_crop_and_resize(data, (32, 32), seed=123, num_parallel_calls=3)
    np.testing.assert_array_equal(c, d)
    np.testing.assert_array_equal(a, c)
    one = timg.decode_random_crop_and_resize(data[0], (16, 20), seed=5)
    assert one.shape == (16, 20, 3)
    assert 0 <= a.min() and a.max() <= 255


def test_decode_random_crop_and_resize_uses_the_sampler_and_flips():
    from tfrx.image import _random
    from tfrx.image._boxes import _sample_box

    data = [_photo(seed=i) for i in range(4)]
    _random._generators.pop(77, None)
    got = timg.decode_random_crop_and_resize(
        data, (20, 20), seed=77, area_range=(0.2, 0.9), max_attempts=5, num_parallel_calls=1
    )
    _random._generators.pop(77, None)
    rng = _random._rng(77)
    for i in range(4):
        box = _sample_box(120, 160, [], 0.1, (0.2, 0.9), (0.75, 1.33), 5, rng)
        flip = rng.random() < 0.5
        want = timg.decode_crop_and_resize(data[i], list(box), (20, 20), flip=flip)
        np.testing.assert_array_equal(got[i], want)


def test_fused_decodes_reject_bad_arguments():
    data = _photo()
    with pytest.raises(ValueError, match="not inside the image"):
        timg.decode_crop_and_resize(data, [0, 0, 121, 10], (8, 8))
    with pytest.raises(ValueError, match="size"):
        timg.decode_crop_and_resize(data, [0, 0, 10, 10], (0, 8))
    with pytest.raises(ValueError, match="channels"):
        timg.decode_random_crop_and_resize(data, (8, 8), channels=0)
    with pytest.raises(ValueError, match="crop_window must be"):
        timg.decode_crop_and_resize(data, [0, 0, 10, 10, 3], (8, 8))
    with pytest.raises(ValueError, match="2 crop windows for 3 images"):
        timg.decode_crop_and_resize([data] * 3, [[0, 0, 5, 5]] * 2, (8, 8))
    with pytest.raises(ValueError, match="area_range"):
        timg.decode_random_crop_and_resize(data, (8, 8), area_range=(0.9, 0.1))
    with pytest.raises(DecodeError):
        timg.decode_random_crop_and_resize([data, data[:200]], (8, 8))


def test_fused_decodes_without_libjpeg_match_the_library_path(monkeypatch):
    pytest.importorskip("simplejpeg")
    import tfrx.image._crop_resize as fused

    data = [_photo(seed=i) for i in range(3)]
    windows_ = [[0, 0, 120, 160], [7, 11, 60, 70], [100, 3, 20, 150]]
    with_lib = timg.decode_crop_and_resize(data, windows_, (16, 24), dct_scaling=False)
    monkeypatch.setattr(fused, "partial_jpeg_backend", lambda: None)
    without = timg.decode_crop_and_resize(data, windows_, (16, 24), dct_scaling=False)
    if timg.partial_jpeg_backend() is not None:
        # A whole decode differs from the partial one only in chroma upsampled at the window's edges.
        assert np.abs(without - with_lib).mean() < 0.5 and np.abs(without - with_lib).max() < 32
    scaled = timg.decode_crop_and_resize(data, windows_, (16, 24))
    assert scaled.shape == (3, 16, 24, 3)
