"""One encoded image of any supported format, decoded as ``decode_image`` does (format sniffed from magic bytes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.errors import DecodeError
from tfrx.image._common import _as_bytes, _describe, image_format
from tfrx.image._dtype import convert_image_dtype
from tfrx.image._formats import _decode_bmp_one, _decode_gif_one, _decode_pil_one
from tfrx.image._jpeg import _decode_jpeg_one
from tfrx.image._png import _decode_png_one


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
