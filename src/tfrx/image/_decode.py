"""decode_image (format sniffed from magic bytes) and decode_batch (decode + resize on a thread pool)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.errors import DecodeError
from tfrx.options import renamed_arguments
from tfrx.image._common import (
    _as_bytes,
    _batched,
    _check_dtype,
    _describe,
    _is_single,
    _map,
    _stack_if_same,
    image_format,
)
from tfrx.image._dtype import convert_image_dtype
from tfrx.image._formats import _decode_bmp_one, _decode_gif_one, _decode_pil_one
from tfrx.image._jpeg import _decode_jpeg_one
from tfrx.image._png import _decode_png_one
from tfrx.image._resize import _resize_bilinear_into, resize


def _decode_image_one(contents: Any, channels: int, dtype: np.dtype, expand_animations: bool) -> np.ndarray:
    data = _as_bytes(contents)
    fmt = image_format(data)
    if fmt == "jpeg":
        if channels == 4:
            raise ValueError("decode_image: a JPEG cannot be decoded with channels=4 (use 0, 1 or 3)")
        img = _decode_jpeg_one(data, channels, 1, True, False, True)
    elif fmt == "png":
        # TensorFlow decodes PNGs at 16 bits when the result is not uint8.
        img = _decode_png_one(data, channels, np.dtype(np.uint8) if dtype == np.uint8 else np.dtype(np.uint16))
    elif fmt == "gif":
        if channels not in (0, 3):
            raise ValueError(f"decode_image: a GIF has 3 channels; channels={channels} is not supported (use 0 or 3)")
        img = _decode_gif_one(data, expand_animations)
        if not expand_animations:
            img = img[0]
    elif fmt == "bmp":
        if channels == 1:
            raise ValueError("decode_image: channels must be 0, 3 or 4 for BMP, got 1")
        img = _decode_bmp_one(data, channels)
    elif fmt == "webp":
        img = _decode_pil_one(data, "WEBP", channels)
    else:
        raise DecodeError(f"unknown image format ({_describe(data)}): expected JPEG, PNG, GIF, BMP or WebP magic bytes")
    if img.dtype != dtype:
        img = convert_image_dtype(img, dtype)
    return img


@renamed_arguments(num_threads="num_parallel_calls")
def decode_image(
    contents: Any,
    channels: int | None = None,
    dtype: Any = np.uint8,
    expand_animations: bool = True,
    *,
    num_parallel_calls: int | None = None,
) -> Any:
    """``tf.io.decode_image``: sniff the format from magic bytes and decode.

    JPEG, PNG and BMP give (h, w, c); GIF gives (frames, h, w, 3) unless
    ``expand_animations=False`` (first frame, 3-D). WebP is decoded when
    Pillow supports it. ``dtype`` uint8, uint16 or float32 (scaled to [0, 1]
    like TensorFlow).
    """
    ch = 0 if channels is None else channels
    if ch not in (0, 1, 3, 4):
        raise ValueError(f"decode_image: channels must be None, 0, 1, 3 or 4, got {channels!r}")
    dt = _check_dtype(dtype, (np.uint8, np.uint16, np.float32), "decode_image")
    return _batched(lambda c: _decode_image_one(c, ch, dt, expand_animations), contents, num_parallel_calls)


@renamed_arguments(num_threads="num_parallel_calls")
def decode_batch(
    contents: Any,
    channels: int | None = 3,
    *,
    size: tuple[int, int] | None = None,
    method: str = "bilinear",
    antialias: bool = False,
    dtype: Any = np.uint8,
    num_parallel_calls: int | None = None,
    stack: bool | str = "auto",
) -> Any:
    """Decode many encoded images (any supported format) on a thread pool.

    With ``size=(h, w)`` each image is resized in the worker (``resize``
    semantics, float32 except for ``method="nearest"``) and the batch is
    stacked into (n, h, w, c). Without it the batch is stacked when all shapes
    agree (``stack="auto"``), always (``True``, raising otherwise) or never.
    ``num_parallel_calls`` defaults to the usable cores.
    """
    ch = 0 if channels is None else channels
    dt = _check_dtype(dtype, (np.uint8, np.uint16, np.float32), "decode_batch")
    if _is_single(contents):
        contents = [contents]
    items = list(contents.ravel()) if isinstance(contents, np.ndarray) else list(contents)

    if size is not None and ch in (1, 3, 4) and method == "bilinear" and not antialias and items:
        # Each worker resizes straight into its row of the batch: no per-image
        # float32 array and no stacking copy.
        h, w = (int(d) for d in size)
        if h < 1 or w < 1:
            raise ValueError(f"decode_batch: size must be two positive ints, got {size!r}")
        batch = np.empty((len(items), h, w, ch), np.float32)

        def work_into(item: tuple[int, Any]) -> None:
            i, c = item
            _resize_bilinear_into(_decode_image_one(c, ch, dt, expand_animations=False), batch[i : i + 1])

        _map(work_into, list(enumerate(items)), num_parallel_calls)
        return batch

    def work(c: Any) -> np.ndarray:
        img = _decode_image_one(c, ch, dt, expand_animations=False)
        return img if size is None else resize(img, size, method=method, antialias=antialias)

    images = _map(work, items, num_parallel_calls)
    if not images and size is not None:
        return np.zeros((0, size[0], size[1], ch or 3), np.float32)
    return _stack_if_same(images, True if size is not None else stack)
