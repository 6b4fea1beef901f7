"""tfrx.image decoders against tf.io.decode_* (the oracle), errors and batching."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

PIL_Image = pytest.importorskip("PIL.Image")

import tfrx  # noqa: E402
from tfrx import image as timg  # noqa: E402
from tfrx.image import _common as image_common  # noqa: E402
from tfrx.errors import DecodeError  # noqa: E402

RNG = np.random.default_rng(20240601)


# ----------------------------------------------------------------- fixtures: encoded images


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def raw_png(pixels: np.ndarray, color_type: int, bit_depth: int, extra: bytes = b"") -> bytes:
    """A PNG written by hand (filter 0), so 16-bit colour and odd chunks are possible."""
    h, w = pixels.shape[:2]
    if bit_depth < 8:
        bits = np.unpackbits(pixels.astype(np.uint8)[..., None], axis=-1)[..., 8 - bit_depth :]
        rows = [np.packbits(bits[y].ravel()).tobytes() for y in range(h)]
    else:
        rows = [pixels[y].astype(">u2" if bit_depth == 16 else np.uint8).tobytes() for y in range(h)]
    raw = b"".join(b"\x00" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + extra
        + _chunk(b"IDAT", zlib.compress(raw))
        + _chunk(b"IEND", b"")
    )


def pil_encode(img, fmt: str = "PNG", **options) -> bytes:
    out = io.BytesIO()
    img.save(out, format=fmt, **options)
    return out.getvalue()


def smooth_rgb(h: int, w: int, seed: int = 0) -> np.ndarray:
    """Smooth gradients plus mild noise: compresses like a photograph, not like noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    base = np.stack(
        [128 + 100 * np.sin(x / 23 + seed), 128 + 100 * np.cos(y / 31), 128 + 90 * np.sin((x + y) / 47)], -1
    )
    return np.clip(base + rng.normal(0, 6, base.shape), 0, 255).astype(np.uint8)


def _png_cases() -> dict[str, bytes]:
    rng = np.random.default_rng(7)
    cases = {}
    for mode, shape in [("L", (17, 23)), ("LA", (17, 23, 2)), ("RGB", (17, 23, 3)), ("RGBA", (17, 23, 4))]:
        cases[mode] = pil_encode(PIL_Image.fromarray(rng.integers(0, 256, shape).astype(np.uint8), mode=mode))
    gray_rgb = np.repeat(rng.integers(0, 256, (17, 23, 1)), 3, 2).astype(np.uint8)
    gray_rgb[0, :5] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [10, 20, 30], [200, 100, 50]]
    cases["RGB with gray pixels"] = pil_encode(PIL_Image.fromarray(gray_rgb))
    cases["1-bit"] = raw_png(rng.integers(0, 2, (17, 23)), 0, 1)
    cases["2-bit gray"] = raw_png(rng.integers(0, 4, (17, 23)), 0, 2)
    cases["4-bit gray"] = raw_png(rng.integers(0, 16, (17, 23)), 0, 4)
    palette = PIL_Image.fromarray(rng.integers(0, 200, (17, 23)).astype(np.uint8), mode="P")
    palette.putpalette([int(v) for v in rng.integers(0, 256, 600)])
    cases["palette"] = pil_encode(palette)
    cases["palette+tRNS"] = pil_encode(palette, transparency=5)
    small = PIL_Image.fromarray(rng.integers(0, 10, (17, 23)).astype(np.uint8), mode="P")
    small.putpalette([int(v) for v in rng.integers(0, 256, 30)])
    cases["4-bit palette"] = pil_encode(small)
    cases["4-bit palette+tRNS"] = pil_encode(small, transparency=bytes([0, 128, 255]))
    cases["16-bit gray"] = pil_encode(PIL_Image.fromarray(rng.integers(0, 65536, (17, 23)).astype(np.uint16)))
    cases["gray+tRNS"] = raw_png(rng.integers(0, 4, (17, 23)) * 60, 0, 8, _chunk(b"tRNS", struct.pack(">H", 60)))
    rgb = rng.integers(0, 4, (17, 23, 3)) * 80
    cases["RGB+tRNS"] = raw_png(rgb, 2, 8, _chunk(b"tRNS", struct.pack(">HHH", *rgb[0, 0])))
    rgb16 = rng.integers(0, 65536, (17, 23, 3))
    rgb16[0, 0] = [5, 5, 5]
    cases["16-bit RGB"] = raw_png(rgb16, 2, 16)
    cases["16-bit RGB+tRNS"] = raw_png(rgb16, 2, 16, _chunk(b"tRNS", struct.pack(">HHH", *rgb16[1, 1])))
    cases["16-bit RGBA"] = raw_png(rng.integers(0, 65536, (17, 23, 4)), 6, 16)
    cases["16-bit gray+alpha"] = raw_png(rng.integers(0, 65536, (17, 23, 2)), 4, 16)
    return cases


PNG_CASES = _png_cases()


def _interlaced_png(pixels: np.ndarray, bit_depth: int) -> bytes:
    """Adam7-interlaced RGB, every row Sub-filtered."""
    h, w, c = pixels.shape
    c = c * bit_depth // 8  # bytes per pixel
    out = b""
    for x0, y0, dx, dy in (
        (0, 0, 8, 8),
        (4, 0, 8, 8),
        (0, 4, 4, 8),
        (2, 0, 4, 4),
        (0, 2, 2, 4),
        (1, 0, 2, 2),
        (0, 1, 1, 2),
    ):
        sub = pixels[y0::dy, x0::dx]
        if sub.size == 0:
            continue
        for row in sub:
            b = np.frombuffer(row.astype(">u2" if bit_depth == 16 else np.uint8).tobytes(), np.uint8).astype(np.int32)
            filtered = (b - np.concatenate([np.zeros(c, np.int32), b[:-c]])) & 255
            out += b"\x01" + filtered.astype(np.uint8).tobytes()
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, 2, 0, 0, 1)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(out)) + _chunk(b"IEND", b"")


def _all_filters_png_16(pixels: np.ndarray) -> bytes:
    """16-bit RGBA whose rows cycle through the five PNG filters (the full-depth decoder's paths)."""
    h, w, c = pixels.shape
    bpp = 2 * c
    raw_rows = [np.frombuffer(row.astype(">u2").tobytes(), np.uint8).astype(np.int32) for row in pixels]
    out, prior = b"", np.zeros(w * bpp, np.int32)
    for y, line in enumerate(raw_rows):
        kind = y % 5
        left = np.concatenate([np.zeros(bpp, np.int32), line[:-bpp]])
        upleft = np.concatenate([np.zeros(bpp, np.int32), prior[:-bpp]])
        if kind == 0:
            pred = np.zeros_like(line)
        elif kind == 1:
            pred = left
        elif kind == 2:
            pred = prior
        elif kind == 3:
            pred = (left + prior) // 2
        else:
            p = left + prior - upleft
            pa, pb, pc = np.abs(p - left), np.abs(p - prior), np.abs(p - upleft)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prior, upleft))
        out += bytes([kind]) + ((line - pred) & 255).astype(np.uint8).tobytes()
        prior = line
    ihdr = struct.pack(">IIBBBBB", w, h, 16, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(out)) + _chunk(b"IEND", b"")


PNG_CASES["16-bit RGBA, all row filters"] = _all_filters_png_16(np.random.default_rng(4).integers(0, 65536, (11, 9, 4)))
PNG_CASES["interlaced RGB"] = _interlaced_png(np.random.default_rng(3).integers(0, 256, (13, 11, 3)), 8)
PNG_CASES["interlaced 16-bit RGB"] = _interlaced_png(np.random.default_rng(3).integers(0, 65536, (13, 11, 3)), 16)


# ----------------------------------------------------------------- PNG


@pytest.mark.parametrize("name", sorted(PNG_CASES))
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_decode_png_matches_tensorflow_exactly(tf, name, channels, dtype):
    data = PNG_CASES[name]
    expected = tf.io.decode_png(data, channels=channels, dtype=tf.as_dtype(dtype)).numpy()
    got = timg.decode_png(data, channels=channels, dtype=dtype)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("gamma", [45455, 100000, 103000, 80000, 220000, "sRGB"])
@pytest.mark.parametrize("channels", [1, 3])
def test_decode_png_rgb_to_gray_with_gamma_chunks(tf, gamma, channels):
    rgb = np.random.default_rng(5).integers(0, 256, (19, 13, 3))
    rgb[0, :3] = [[7, 7, 7], [255, 0, 0], [0, 0, 0]]
    chunk = _chunk(b"sRGB", b"\x00") if gamma == "sRGB" else _chunk(b"gAMA", struct.pack(">I", gamma))
    data = raw_png(rgb, 2, 8, chunk)
    np.testing.assert_array_equal(
        timg.decode_png(data, channels=channels), tf.io.decode_png(data, channels=channels).numpy()
    )


def test_decode_png_real_corpus_matches_tensorflow(tf, corpus_dir):
    n = 0
    for name in (
        "tfmodels_vendored__fsns-00000-of-00001",
        "tfmodels_vendored__deeplab_pascal_voc_seg_val-00000-of-00001.tfrecord",
    ):
        for record in tf.data.TFRecordDataset(str(corpus_dir / name)).take(4):
            ex = tf.train.Example.FromString(record.numpy())
            for key in ("image/encoded", "image/segmentation/class/encoded"):
                if key not in ex.features.feature:
                    continue
                data = ex.features.feature[key].bytes_list.value[0]
                for channels in (0, 1, 3):
                    expected = tf.io.decode_image(data, channels=channels).numpy()
                    np.testing.assert_array_equal(timg.decode_image(data, channels=channels), expected)
                    n += 1
    assert n >= 12


# ----------------------------------------------------------------- JPEG

JPEG_RGB = pil_encode(PIL_Image.fromarray(smooth_rgb(75, 101)), "JPEG", quality=90)
JPEG_444 = pil_encode(PIL_Image.fromarray(smooth_rgb(64, 64, 1)), "JPEG", quality=80, subsampling=0)
JPEG_GRAY = pil_encode(PIL_Image.fromarray(smooth_rgb(50, 70, 2)[..., 0]), "JPEG", quality=85)
JPEG_PROGRESSIVE = pil_encode(PIL_Image.fromarray(smooth_rgb(60, 80, 3)), "JPEG", quality=75, progressive=True)
JPEGS = {"rgb 4:2:0": JPEG_RGB, "rgb 4:4:4": JPEG_444, "gray": JPEG_GRAY, "progressive": JPEG_PROGRESSIVE}

# Measured against tf.io.decode_jpeg (libjpeg-turbo, same settings): simplejpeg is
# bit-identical; Pillow (accurate integer IDCT only) differs by up to 4 with the
# default fast IDCT.
JPEG_TOLERANCE = {"simplejpeg": 0, "pillow": 4}


@pytest.mark.parametrize("name", sorted(JPEGS))
@pytest.mark.parametrize("channels", [0, 1, 3])
@pytest.mark.parametrize("dct_method", ["", "INTEGER_FAST", "INTEGER_ACCURATE"])
def test_decode_jpeg_matches_tensorflow(tf, name, channels, dct_method):
    data = JPEGS[name]
    expected = tf.io.decode_jpeg(data, channels=channels, dct_method=dct_method).numpy()
    got = timg.decode_jpeg(data, channels=channels, dct_method=dct_method)
    assert got.shape == expected.shape and got.dtype == np.uint8
    tolerance = JPEG_TOLERANCE[timg.jpeg_backend()]
    assert np.abs(got.astype(int) - expected.astype(int)).max() <= tolerance


@pytest.mark.parametrize("ratio", [2, 4, 8])
def test_decode_jpeg_ratio_matches_tensorflow(tf, ratio):
    expected = tf.io.decode_jpeg(JPEG_RGB, ratio=ratio).numpy()
    got = timg.decode_jpeg(JPEG_RGB, ratio=ratio)
    assert got.shape == expected.shape
    assert np.abs(got.astype(int) - expected.astype(int)).max() <= JPEG_TOLERANCE[timg.jpeg_backend()]


def test_decode_jpeg_without_fancy_upscaling(tf):
    expected = tf.io.decode_jpeg(JPEG_RGB, fancy_upscaling=False).numpy()
    got = timg.decode_jpeg(JPEG_RGB, fancy_upscaling=False)
    assert np.abs(got.astype(int) - expected.astype(int)).max() <= JPEG_TOLERANCE[timg.jpeg_backend()]


def test_decode_jpeg_try_recover_truncated(tf):
    data = JPEG_RGB[: len(JPEG_RGB) * 2 // 3]
    with pytest.raises(DecodeError):
        timg.decode_jpeg(data)
    expected = tf.io.decode_jpeg(data, try_recover_truncated=True, acceptable_fraction=0.1).numpy()
    got = timg.decode_jpeg(data, try_recover_truncated=True)
    assert got.shape == expected.shape == (75, 101, 3)
    full = timg.decode_jpeg(JPEG_RGB)
    intact = np.flatnonzero(np.all(expected == full, axis=(1, 2)))
    assert len(intact) > 0
    np.testing.assert_array_equal(got[intact], expected[intact])  # rows decoded before the cut
    np.testing.assert_array_equal(got[-1], expected[-1])  # libjpeg's gray fill after it


def test_decode_jpeg_pillow_fallback_within_tolerance(tf, monkeypatch):
    monkeypatch.setitem(image_common._modules, "simplejpeg", None)
    assert timg.jpeg_backend() == "pillow"
    for channels in (0, 1, 3):
        expected = tf.io.decode_jpeg(JPEG_RGB, channels=channels).numpy()
        got = timg.decode_jpeg(JPEG_RGB, channels=channels)
        assert got.shape == expected.shape
        assert np.abs(got.astype(int) - expected.astype(int)).max() <= JPEG_TOLERANCE["pillow"]


@pytest.mark.parametrize("channels", [0, 3])
def test_decode_jpeg_cmyk_goes_through_pillow(tf, channels):
    data = pil_encode(PIL_Image.fromarray(smooth_rgb(40, 48)).convert("CMYK"), "JPEG", quality=95)
    expected = tf.io.decode_jpeg(data, channels=channels).numpy()
    got = timg.decode_jpeg(data, channels=channels)
    assert got.shape == expected.shape == (40, 48, 3)
    assert np.abs(got.astype(int) - expected.astype(int)).max() <= JPEG_TOLERANCE["pillow"]


def test_decode_jpeg_real_corpus(tf, corpus_dir):
    path = corpus_dir / "tfmodels_vendored__deeplab_pascal_voc_seg_val-00000-of-00001.tfrecord"
    n = 0
    for record in tf.data.TFRecordDataset(str(path)).take(3):
        data = tf.train.Example.FromString(record.numpy()).features.feature["image/encoded"].bytes_list.value[0]
        assert timg.image_format(data) == "jpeg"
        for channels in (0, 1, 3):
            expected = tf.io.decode_jpeg(data, channels=channels).numpy()
            got = timg.decode_jpeg(data, channels=channels)
            assert got.shape == expected.shape
            assert np.abs(got.astype(int) - expected.astype(int)).max() <= JPEG_TOLERANCE[timg.jpeg_backend()]
            n += 1
    assert n == 9


# ----------------------------------------------------------------- GIF, BMP, WebP, decode_image


def _gif(frames: int) -> bytes:
    imgs = [
        PIL_Image.fromarray(smooth_rgb(24, 32, i)).quantize(64, dither=PIL_Image.Dither.NONE) for i in range(frames)
    ]
    return pil_encode(imgs[0], "GIF", save_all=frames > 1, append_images=imgs[1:], duration=50, disposal=1)


def test_decode_gif_matches_tensorflow(tf):
    for frames in (1, 3):
        data = _gif(frames)
        expected = tf.io.decode_gif(data).numpy()
        got = timg.decode_gif(data)
        assert got.shape == expected.shape == (frames, 24, 32, 3)
        np.testing.assert_array_equal(got, expected)
        first = timg.decode_image(data, expand_animations=False)
        np.testing.assert_array_equal(first, tf.io.decode_image(data, expand_animations=False).numpy())


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P"])
@pytest.mark.parametrize("channels", [0, 3, 4])
@pytest.mark.parametrize("top_down", [False, True])
def test_decode_bmp_matches_tensorflow(tf, mode, channels, top_down):
    pixels = smooth_rgb(13, 21)
    if mode == "RGBA":
        pixels = np.concatenate([pixels, np.random.default_rng(1).integers(0, 256, (13, 21, 1)).astype(np.uint8)], 2)
    elif mode in ("L", "P"):
        pixels = pixels[..., 0]
    data = bytearray(pil_encode(PIL_Image.fromarray(pixels, mode=mode), "BMP"))
    if top_down:  # flip the rows and mark the height negative
        offset, height = struct.unpack("<I", data[10:14])[0], struct.unpack("<i", data[22:26])[0]
        row = len(data[offset:]) // height
        rows = [data[offset + i * row : offset + (i + 1) * row] for i in range(height)]
        data[offset:] = b"".join(reversed(rows))
        data[22:26] = struct.pack("<i", -height)
    data = bytes(data)
    expected = tf.io.decode_bmp(data, channels=channels).numpy()
    got = timg.decode_bmp(data, channels=channels)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(timg.decode_image(data, channels=channels), expected)


def test_decode_webp_when_pillow_supports_it():
    from PIL import features

    if not features.check("webp"):
        pytest.skip("Pillow built without WebP")
    pixels = smooth_rgb(20, 30)
    data = pil_encode(PIL_Image.fromarray(pixels), "WEBP", lossless=True)
    assert timg.image_format(data) == "webp"
    np.testing.assert_array_equal(timg.decode_image(data), pixels)
    assert timg.decode_image(data, channels=4).shape == (20, 30, 4)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("name", ["png", "png16", "jpeg", "gif"])
def test_decode_image_dtypes_match_tensorflow(tf, dtype, name):
    data = {"png": PNG_CASES["RGBA"], "png16": PNG_CASES["16-bit RGB"], "jpeg": JPEG_RGB, "gif": _gif(2)}[name]
    expected = tf.io.decode_image(data, dtype=tf.as_dtype(dtype)).numpy()
    got = timg.decode_image(data, dtype=dtype)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if dtype == np.float32:
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, expected)


def test_image_format_sniffing():
    assert timg.image_format(JPEG_RGB) == "jpeg"
    assert timg.image_format(PNG_CASES["L"]) == "png"
    assert timg.image_format(_gif(1)) == "gif"
    assert timg.image_format(pil_encode(PIL_Image.fromarray(smooth_rgb(4, 4)), "BMP")) == "bmp"
    assert timg.image_format(b"hello world") is None
    assert timg.image_format(b"") is None


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "fn, data, match",
    [
        (timg.decode_image, b"definitely not an image", "unknown image format"),
        (timg.decode_image, b"", "unknown image format"),
        (timg.decode_png, JPEG_RGB, "not a PNG"),
        (timg.decode_jpeg, PNG_CASES["RGB"], "not a JPEG"),
        (timg.decode_png, PNG_CASES["RGB"][: len(PNG_CASES["RGB"]) // 2], "PNG"),
        (timg.decode_jpeg, JPEG_RGB[: len(JPEG_RGB) // 2], "JPEG"),
        (timg.decode_jpeg, JPEG_RGB[:40], "JPEG"),
        (timg.decode_image, PNG_CASES["16-bit RGB"][:60], "PNG"),
        (timg.decode_gif, b"GIF89a" + b"\x00" * 4, "GIF"),
        (timg.decode_bmp, b"BM" + b"\x00" * 20, "BMP"),
        (timg.decode_bmp, pil_encode(PIL_Image.fromarray(smooth_rgb(8, 8)), "BMP")[:-40], "truncated BMP"),
    ],
)
def test_corrupt_input_raises_decode_error(fn, data, match):
    with pytest.raises(DecodeError, match=match):
        fn(data)


def test_corrupt_16bit_png_data_raises(tf):
    data = bytearray(PNG_CASES["16-bit RGB"])
    data[60] ^= 0xFF  # inside IDAT: the chunk CRC no longer matches
    with pytest.raises(DecodeError, match="CRC"):
        timg.decode_png(bytes(data), dtype=np.uint16)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.decode_png(bytes(data), dtype=tf.uint16)


def test_decode_error_is_a_value_error_and_names_batch_index():
    batch = [JPEG_RGB, b"garbage", JPEG_RGB]
    with pytest.raises(ValueError) as info:
        timg.decode_batch(batch, num_parallel_calls=2)
    assert isinstance(info.value, DecodeError)
    assert info.value.record_index == 1
    assert "image 1 of the batch" in str(info.value)


def test_bad_arguments_raise_value_errors():
    with pytest.raises(ValueError, match="channels"):
        timg.decode_png(PNG_CASES["L"], channels=2)
    with pytest.raises(ValueError, match="channels"):
        timg.decode_jpeg(JPEG_RGB, channels=4)
    with pytest.raises(ValueError, match="dct_method"):
        timg.decode_jpeg(JPEG_RGB, dct_method="FLOAT")
    with pytest.raises(ValueError, match="dtype"):
        timg.decode_png(PNG_CASES["L"], dtype=np.float32)
    with pytest.raises(TypeError, match="bytes"):
        timg.decode_image("a/path.png")


# ----------------------------------------------------------------- batches and threads


def test_batches_stack_when_shapes_agree_and_list_otherwise():
    same = [JPEG_RGB, JPEG_RGB, JPEG_RGB]
    out = timg.decode_jpeg(same, num_parallel_calls=2)
    assert isinstance(out, np.ndarray) and out.shape == (3, 75, 101, 3)
    np.testing.assert_array_equal(out[1], timg.decode_jpeg(JPEG_RGB))
    mixed = timg.decode_image(np.array([JPEG_RGB, PNG_CASES["RGB"]], dtype=object), channels=3)
    assert isinstance(mixed, list) and [m.shape for m in mixed] == [(75, 101, 3), (17, 23, 3)]
    assert timg.decode_batch([JPEG_RGB, JPEG_444], stack=False)[1].shape == (64, 64, 3)
    with pytest.raises(ValueError, match="different shapes"):
        timg.decode_batch([JPEG_RGB, JPEG_444], stack=True)


def test_decode_batch_with_size_resizes_in_the_workers():
    batch = [JPEG_RGB, JPEG_444, PNG_CASES["L"], _gif(2), bytearray(JPEG_GRAY), memoryview(JPEG_RGB)]
    out = timg.decode_batch(batch, channels=3, size=(32, 48), num_parallel_calls=3)
    assert out.shape == (6, 32, 48, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(out[0], timg.resize(timg.decode_jpeg(JPEG_RGB, channels=3), (32, 48)))
    sequential = timg.decode_batch(batch, channels=3, size=(32, 48), num_parallel_calls=1)
    np.testing.assert_array_equal(out, sequential)
    no_gif = batch[:3] + batch[4:]
    nearest = timg.decode_batch(no_gif, channels=1, size=(8, 8), method="nearest")
    assert nearest.dtype == np.uint8 and nearest.shape == (5, 8, 8, 1)
    assert timg.decode_batch([], size=(4, 4)).shape == (0, 4, 4, 3)


@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_decode_batch_resizes_into_the_batch_as_resize_does(channels, dtype):
    """The bilinear size= path writes each image into its row; it equals resize() of decode_image()."""
    batch = [PNG_CASES["RGB"], PNG_CASES["L"], PNG_CASES["RGBA"], PNG_CASES["RGB"]]
    if channels != 4:  # (JPEG has no 4-channel decoding)
        batch[0], batch[2] = JPEG_RGB, JPEG_444
    out = timg.decode_batch(batch, channels=channels, size=(19, 7), dtype=dtype, num_parallel_calls=2)
    expected = np.stack([timg.resize(timg.decode_image(b, channels=channels, dtype=dtype), (19, 7)) for b in batch])
    assert out.dtype == np.float32 and out.shape == (4, 19, 7, channels)
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(tfrx.DecodeError, match="image 2 of the batch"):
        timg.decode_batch(
            [JPEG_RGB, JPEG_RGB, b"not an image", JPEG_RGB], channels=3, size=(8, 8), num_parallel_calls=2
        )
    with pytest.raises(ValueError, match="positive"):
        timg.decode_batch([JPEG_RGB], channels=3, size=(0, 8))


def test_encoded_inputs_as_numpy_uint8_and_object_arrays():
    as_uint8 = np.frombuffer(JPEG_RGB, np.uint8)
    np.testing.assert_array_equal(timg.decode_jpeg(as_uint8), timg.decode_jpeg(JPEG_RGB))
    scalar = np.array(JPEG_RGB, dtype=object)
    assert timg.decode_image(scalar).shape == (75, 101, 3)


# ----------------------------------------------------------------- encoding


@pytest.mark.parametrize("shape", [(9, 11), (9, 11, 1), (9, 11, 2), (9, 11, 3), (9, 11, 4)])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_encode_png_round_trips_through_tensorflow(tf, shape, dtype):
    pixels = np.random.default_rng(2).integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)
    data = timg.encode_png(pixels)
    expected = pixels if pixels.ndim == 3 else pixels[..., None]
    np.testing.assert_array_equal(tf.io.decode_png(data, dtype=tf.as_dtype(dtype)).numpy(), expected)
    np.testing.assert_array_equal(timg.decode_png(data, dtype=dtype), expected)


@pytest.mark.parametrize("channels", [1, 3])
def test_encode_jpeg_is_readable_by_tensorflow(tf, channels):
    pixels = smooth_rgb(40, 56)[..., :channels]
    data = timg.encode_jpeg(pixels, quality=95)
    decoded = tf.io.decode_jpeg(data).numpy()
    assert decoded.shape == pixels.shape
    assert np.abs(decoded.astype(int) - pixels.astype(int)).mean() < 6  # the test image carries pixel noise
    assert timg.encode_jpeg(pixels, progressive=True)[:3] == b"\xff\xd8\xff"


def test_importing_tfrx_does_not_import_pillow():
    code = "import sys, tfrx; assert 'PIL' not in sys.modules and 'simplejpeg' not in sys.modules; from tfrx import image; assert 'PIL' not in sys.modules"
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        env={"PYTHONPATH": str(__import__("pathlib").Path(tfrx.__file__).parent.parent)},
    )


# ----------------------------------------------------------------- property: PNG round trips

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([np.uint8, np.uint16]).flatmap(
        lambda dtype: hnp.arrays(dtype, st.tuples(st.integers(1, 9), st.integers(1, 9), st.sampled_from([1, 2, 3, 4])))
    )
)
def test_png_round_trip_property(pixels):
    data = timg.encode_png(pixels)
    np.testing.assert_array_equal(timg.decode_png(data, dtype=pixels.dtype), pixels)
    np.testing.assert_array_equal(timg.decode_image(data, dtype=pixels.dtype), pixels)
