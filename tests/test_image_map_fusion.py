"""Image maps fused with batch (data/_image_map.py) and decode_and_resize: the same batches as the per-element maps."""

from __future__ import annotations

import functools
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
import tfrx.image
import tfrx.tf as tf
from tfrx.data import Dataset
from tfrx.data._image_map import ImageMapBatchDataset
from tfrx.errors import DecodeError

pytest.importorskip("PIL")


def _jpeg(h: int, w: int, channels: int = 3, seed: int = 0, quality: int = 90) -> bytes:
    from PIL import Image

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = (128 + 100 * np.sin(x / 7.0 + seed) * np.cos(y / 5.0)).astype(np.float32)
    img = np.clip(base[..., None] + rng.normal(0, 20, (h, w, channels)), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img[..., 0] if channels == 1 else img).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


SPEC = {"image/encoded": tfrx.FixedLenFeature([], tfrx.string), "label": tfrx.FixedLenFeature([], tfrx.int64)}


@pytest.fixture(scope="module")
def records_file(tmp_path_factory):
    jpegs = [_jpeg(40 + 7 * i, 50 + 5 * (i % 3), seed=i) for i in range(10)]
    path = tmp_path_factory.mktemp("fusion") / "images.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many(tfrx.encode_examples({"image/encoded": jpegs, "label": np.arange(10)}))
    return str(path), jpegs


def _unfused(ds: Dataset, n: int, drop_remainder: bool = False) -> Dataset:
    """``ds.batch(n)`` without the fusion: the registered batch transformation itself."""
    return Dataset.batch(ds, n, drop_remainder)


def _equal(a, b) -> None:
    a, b = tfrx.tf._tensor.as_plain(a), tfrx.tf._tensor.as_plain(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _equal(a[k], b[k])
    elif isinstance(a, tuple):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _equal(x, y)
    else:
        x, y = np.asarray(a), np.asarray(b)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y)


def _check_fused_equal(mapped: Dataset, n: int = 4) -> None:
    fused = mapped.batch(n)
    assert isinstance(fused, ImageMapBatchDataset), fused._plan()
    got, want = list(fused), list(_unfused(mapped, n))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        _equal(a, b)


# ---------------------------------------------------------------- decode_and_resize
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.tuples(st.integers(8, 70), st.integers(8, 70)), min_size=1, max_size=4),
    target=st.tuples(st.integers(1, 48), st.integers(1, 48)),
    method=st.sampled_from(["bilinear", "nearest", "bicubic", "area"]),
    antialias=st.booleans(),
    channels=st.sampled_from([0, 1, 3]),
    gray=st.booleans(),
)
def test_decode_and_resize_equals_the_per_image_calls(sizes, target, method, antialias, channels, gray):
    jpegs = [_jpeg(h, w, 1 if gray else 3, seed=i) for i, (h, w) in enumerate(sizes)]
    want = np.stack(
        [tfrx.image.resize(tfrx.image.decode_jpeg(j, channels), target, method, antialias=antialias) for j in jpegs]
    )
    got = tfrx.image.decode_and_resize(jpegs, target, channels=channels, method=method, antialias=antialias)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)
    image = tfrx.image.decode_and_resize(
        jpegs, target, channels=channels, method=method, antialias=antialias, format="image"
    )
    assert np.array_equal(image, want)


def test_decode_and_resize_on_corpus_jpegs_or_imagenet_sized_ones():
    import os
    import pathlib

    root = pathlib.Path(os.environ.get("TFRX_CORPUS", "")) if os.environ.get("TFRX_CORPUS") else None
    files = sorted(root.rglob("*.jpg"))[:40] + sorted(root.rglob("*.jpeg"))[:40] if root and root.exists() else []
    jpegs = [f.read_bytes() for f in files]
    if not jpegs:
        jpegs = [_jpeg(375, 500, seed=s, quality=94) for s in range(4)]
    for j in jpegs:
        try:
            want = tfrx.image.resize(tfrx.image.decode_jpeg(j, 3), (224, 224))
        except DecodeError:
            with pytest.raises(DecodeError):
                tfrx.image.decode_and_resize([j, j], (224, 224), channels=3)
            continue
        got = tfrx.image.decode_and_resize([j, j], (224, 224), channels=3)
        assert np.array_equal(got[0], want) and np.array_equal(got[1], want)


def test_decode_and_resize_mixes_formats_and_reports_the_bad_image():
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.full((20, 30, 3), 77, np.uint8)).save(buf, format="PNG")
    items = [_jpeg(30, 40), buf.getvalue(), _jpeg(25, 35, seed=3)]
    want = np.stack([tfrx.image.resize(tfrx.image.decode_image(c, 3), (16, 16)) for c in items])
    assert np.array_equal(tfrx.image.decode_and_resize(items, (16, 16), channels=3, format="image"), want)
    with pytest.raises(DecodeError, match="image 1 of the batch"):
        tfrx.image.decode_and_resize(items, (16, 16), channels=3)  # decode_jpeg refuses the PNG
    damaged = items[0][: len(items[0]) // 2]
    with pytest.raises(DecodeError, match="image 2 of the batch"):
        tfrx.image.decode_and_resize([items[0], items[2], damaged], (16, 16), channels=3)


@pytest.mark.parametrize("channels,dtype", [(3, np.uint16), (4, np.uint8), (1, np.float32)])
def test_images_the_kernel_does_not_take_are_resized_into_their_rows_as_per_image(channels, dtype):
    from PIL import Image

    items = []
    for k, (h, w) in enumerate([(20, 30), (33, 17), (8, 9)]):
        buf = io.BytesIO()
        pixels = np.random.default_rng(k).integers(0, 256, (h, w, 4), np.uint8)
        Image.fromarray(pixels, "RGBA").save(buf, format="PNG")
        items.append(buf.getvalue())
    want = np.stack([tfrx.image.resize(tfrx.image.decode_image(c, channels, dtype=dtype), (16, 12)) for c in items])
    got = tfrx.image.decode_and_resize(items, (16, 12), channels=channels, format="image", dtype=dtype)
    assert got.dtype == np.float32 and np.array_equal(got, want)
    assert np.array_equal(tfrx.image.decode_batch(items, channels, size=(16, 12), dtype=dtype), want)


def test_decode_and_resize_gray_and_colour_with_channels_0_do_not_stack():
    items = [_jpeg(30, 40, 1), _jpeg(30, 40, 3)]
    with pytest.raises(ValueError, match="cannot stack"):
        tfrx.image.decode_and_resize(items, (16, 16))
    assert tfrx.image.decode_and_resize(items[:1], (16, 16)).shape == (1, 16, 16, 1)


# ---------------------------------------------------------------- recognition of the tutorial forms
def test_one_map_under_tfrx_tf(records_file):
    path, _ = records_file
    spec = {"image/encoded": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

    def prep(record):
        x = tf.io.parse_single_example(record, spec)
        image = tf.io.decode_jpeg(x["image/encoded"], channels=3)
        image = tf.image.resize(image, [32, 24])
        return image, x["label"]

    _check_fused_equal(tf.data.TFRecordDataset(path).map(prep, num_parallel_calls=tf.data.AUTOTUNE))


def test_three_maps_with_tfrx_image(records_file):
    path, _ = records_file

    def parse(record):
        return tfrx.parse_single_example(record, SPEC)

    def decode(features):
        return {"image": tfrx.image.decode_jpeg(features["image/encoded"], channels=3), "label": features["label"]}

    def resize(x):
        return tfrx.image.resize(x["image"], (20, 20), method="bicubic"), x["label"]

    _check_fused_equal(tfrx.TFRecordDataset(path).map(parse).map(decode).map(resize), 3)


def test_decode_image_cast_and_scale_under_tfrx_tf(records_file):
    path, _ = records_file

    def prep(record):
        x = tf.io.parse_single_example(record, SPEC)
        image = tf.image.resize(tf.io.decode_image(x["image/encoded"], channels=3, expand_animations=False), (16, 16))
        return {"image": tf.cast(image, tf.float32) / 255.0, "label": tf.cast(x["label"], tf.int32), "one": 1}

    _check_fused_equal(tf.data.TFRecordDataset(path).shuffle(5, seed=1).map(prep))


def test_maps_over_encoded_images_and_tuples(records_file):
    _, jpegs = records_file
    decode = functools.partial(tfrx.image.decode_jpeg, channels=3)
    images = Dataset.from_tensor_slices(np.array(jpegs, dtype=object))
    _check_fused_equal(images.map(decode).map(lambda im: tfrx.image.resize(im, (12, 18))))
    pairs = Dataset.from_tensor_slices((np.array(jpegs, dtype=object), np.arange(len(jpegs))))
    mapped = pairs.map(
        lambda x, y: (tfrx.image.convert_image_dtype(tfrx.image.resize(decode(x), (10, 10)), np.float32), y * 2)
    )
    _check_fused_equal(mapped, 4)


def test_fused_pipeline_resumes_exactly(records_file):
    path, _ = records_file
    ds = (
        tfrx.TFRecordDataset(path)
        .map(lambda r: tfrx.parse_single_example(r, SPEC))
        .map(lambda x: (tfrx.image.resize(tfrx.image.decode_jpeg(x["image/encoded"], 3), (8, 8)), x["label"]))
    )
    fused = ds.batch(3)
    assert isinstance(fused, ImageMapBatchDataset)
    it = iter(fused)
    next(it)
    state = it.get_state()
    rest = list(it)
    again = iter(fused)
    again.set_state(state)
    for a, b in zip(list(again), rest, strict=True):
        _equal(a, b)


def test_a_damaged_image_raises_in_the_fused_pipeline_as_unfused(tmp_path):
    good = _jpeg(30, 30)
    path = str(tmp_path / "bad.tfrecord")
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(tfrx.encode_examples({"image/encoded": [good, b"\xff\xd8\xff garbage"], "label": [0, 1]}))
    mapped = tfrx.TFRecordDataset(path).map(
        lambda r: tfrx.image.resize(tfrx.image.decode_jpeg(tfrx.parse_single_example(r, SPEC)["image/encoded"]), (8, 8))
    )
    with pytest.raises(DecodeError):
        list(_unfused(mapped, 2))
    with pytest.raises(DecodeError, match="image 1 of the batch"):
        list(mapped.batch(2))


# ---------------------------------------------------------------- what is not fused, and explain()
def test_explain_says_why_a_map_was_not_fused_and_what_to_write(records_file):
    path, _ = records_file

    def prep(record):
        x = tf.io.parse_single_example(record, SPEC)
        image = tf.io.decode_jpeg(x["image/encoded"], channels=3)
        image = tf.image.random_flip_left_right(image)  # not recorded: needs the pixels
        return tf.image.resize(image, (8, 8)), x["label"]

    mapped = tf.data.TFRecordDataset(path).map(prep)
    ds = mapped.batch(2)
    assert not isinstance(ds, ImageMapBatchDataset)
    out = io.StringIO()
    ds.explain(file=out)
    text = out.getvalue()
    assert "map(prep)" in text and "not fused with batch" in text
    assert "uses a value in Python" in text and "tf.io.decode_jpeg" in text
    assert [b[0].shape for b in ds] == [(2, 8, 8, 3)] * 5  # run per element, as before


def test_explain_shows_the_fused_plan(records_file):
    path, _ = records_file
    ds = tfrx.TFRecordDataset(path).map(
        lambda r: tfrx.image.resize(tfrx.image.decode_jpeg(tfrx.parse_single_example(r, SPEC)["image/encoded"]), (8, 8))
    )
    out = io.StringIO()
    ds.batch(4).explain(file=out)
    text = out.getvalue()
    assert "fused with map(<lambda>)" in text and "resize(decode_jpeg(feature 'image/encoded'), 8x8, bilinear)" in text
    assert "batch-native" in text


def test_maps_that_decode_nothing_are_not_called_at_batch():
    calls = []

    def count(x):
        calls.append(x)
        return x * 2

    ds = Dataset.range(6).map(count).batch(2)
    assert calls == [] and not isinstance(ds, ImageMapBatchDataset)
    assert [list(b) for b in ds] == [[0, 2], [4, 6], [8, 10]]


def test_a_decode_without_resize_or_of_a_varlen_feature_is_not_fused(records_file):
    path, _ = records_file
    spec = dict(SPEC, extra=tfrx.VarLenFeature(tfrx.int64))

    def prep(record):
        x = tfrx.parse_single_example(record, spec)
        return tfrx.image.resize(tfrx.image.decode_jpeg(x["image/encoded"]), (8, 8)), x["extra"]

    ds = tfrx.TFRecordDataset(path).map(prep)
    assert not isinstance(ds.batch(2), ImageMapBatchDataset)
    assert "VarLenFeature" in ds._not_fused


def test_corrupt_entropy_data_raises_as_the_per_image_decode_does():
    # Flipped bytes inside the scan: libjpeg warns and goes on; decode_jpeg (strict) raises, so the batch does too.
    good = _jpeg(120, 160, seed=5)
    rng = np.random.default_rng(3)
    for _ in range(10):
        damaged = bytearray(good)
        for at in rng.integers(len(good) // 3, len(good) - 64, 3):
            damaged[at] ^= 0xA5
        try:
            want = tfrx.image.resize(tfrx.image.decode_jpeg(bytes(damaged), 3), (32, 32))
        except DecodeError:
            with pytest.raises(DecodeError, match="image 1 of the batch"):
                tfrx.image.decode_and_resize([good, bytes(damaged)], (32, 32), channels=3)
        else:
            assert np.array_equal(tfrx.image.decode_and_resize([good, bytes(damaged)], (32, 32), channels=3)[1], want)


def test_elements_of_another_arity_fail_as_the_map_would(records_file):
    _, jpegs = records_file
    pairs = Dataset.from_tensor_slices((np.array(jpegs, dtype=object), np.arange(len(jpegs))))
    mapped = pairs.map(lambda x: tfrx.image.resize(tfrx.image.decode_jpeg(x), (8, 8)))
    with pytest.raises(TypeError):
        list(_unfused(mapped, 2))
    fused = mapped.batch(2)
    assert isinstance(fused, ImageMapBatchDataset)  # traced with one argument
    with pytest.raises(TypeError, match="traced with 1 argument"):
        list(fused)


def test_parse_example_of_one_record_as_tensorflow_gives_it_and_fused(records_file):
    # TensorFlow's parse_example takes a scalar record too (no batch dimension): the tutorials map it.
    path, _ = records_file
    record = next(iter(tfrx.TFRecordDataset(path)))
    one = tf.io.parse_example(tf.constant(record), SPEC)
    assert one["label"].shape == () and one["label"].numpy() == 0
    assert tf.io.parse_example(np.array([record, record], dtype=object), SPEC)["label"].shape == (2,)

    def prep(r):
        x = tf.io.parse_example(r, SPEC)
        return tf.image.resize(tf.io.decode_jpeg(x["image/encoded"], channels=3), (16, 16)), x["label"]

    _check_fused_equal(tf.data.TFRecordDataset(path).map(prep))


def test_explain_suggests_batch_after_an_image_map_without_one(records_file):
    _, jpegs = records_file
    ds = Dataset.from_tensor_slices(np.array(jpegs, dtype=object)).map(
        lambda x: tfrx.image.resize(tfrx.image.decode_jpeg(x, 3), (8, 8))
    )
    out = io.StringIO()
    ds.prefetch(2).explain(file=out)
    assert "decodes images one element at a time: with batch(n) right after the map" in out.getvalue()
    out = io.StringIO()
    Dataset.range(3).map(lambda x: x + 1).explain(file=out)
    assert "decodes images" not in out.getvalue()
