"""convert_image_dtype, per_image_standardization, normalize and rgb_to_grayscale with tf.image semantics."""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.image._common import _traced

_CONVERTIBLE = tuple(
    np.dtype(t)
    for t in (
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.float16,
        np.float32,
        np.float64,
    )
)


def _saturate_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """tf.dtypes.saturate_cast: clamp to the range both dtypes share (in the input dtype), then cast."""
    src = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
    dst = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    lo = np.array(
        max(float(src.min), float(dst.min)) if x.dtype.kind == "f" else max(int(src.min), int(dst.min))
    ).astype(x.dtype)
    hi = np.array(
        min(float(src.max), float(dst.max)) if x.dtype.kind == "f" else min(int(src.max), int(dst.max))
    ).astype(x.dtype)
    if x.dtype.kind == "f" and dtype.kind in "iu" and float(hi) >= float(dst.max) + 1:
        hi = np.nextafter(hi, np.array(0, x.dtype))  # float(max) may round above max, e.g. float32(2**31 - 1)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.clip(x, lo, hi).astype(dtype)


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False) -> np.ndarray:
    """``tf.image.convert_image_dtype``: rescale between integer ranges and [0, 1] floats.

    Integers scale by their maximum (uint8 -> float32 multiplies by float32(1/255);
    float -> uint8 multiplies by 255.5 and truncates); integer -> integer shifts
    by whole powers of two; float -> float only casts. ``saturate=True`` clamps
    before casting where the cast could overflow.
    """
    dt = np.dtype(dtype)
    if _traced(image):
        return image.__tfrx_trace__("convert_image_dtype", dtype=dt.name, saturate=bool(saturate))
    img = np.asarray(image)
    if img.dtype not in _CONVERTIBLE or dt not in _CONVERTIBLE:
        raise TypeError(f"convert_image_dtype: unsupported dtypes {img.dtype} -> {dt}")
    if img.dtype == dt:
        return img
    src_int, dst_int = img.dtype.kind in "iu", dt.kind in "iu"
    if src_int and dst_int:
        max_in, max_out = int(np.iinfo(img.dtype).max), int(np.iinfo(dt).max)
        if max_in > max_out:
            scaled = img // np.array((max_in + 1) // (max_out + 1), img.dtype)
            return _saturate_cast(scaled, dt) if saturate else scaled.astype(dt)
        cast = _saturate_cast(img, dt) if saturate else img.astype(dt)
        return cast * np.array((max_out + 1) // (max_in + 1), dt)
    if not src_int and not dst_int:
        return img.astype(dt)
    if src_int:
        with np.errstate(over="ignore", invalid="ignore"):  # uint16/int32 -> float16 overflows, as in TensorFlow
            return img.astype(dt) * np.array(1.0 / np.iinfo(img.dtype).max, dt)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = img * np.array(np.iinfo(dt).max + 0.5).astype(img.dtype)  # inf in float16, as in TensorFlow
    if saturate:
        return _saturate_cast(scaled, dt)
    with np.errstate(invalid="ignore"):
        return scaled.astype(dt)


def per_image_standardization(image: Any) -> np.ndarray:
    """``tf.image.per_image_standardization``: (x - mean) / max(std, 1/sqrt(N)) over each image's last 3 axes.

    Other dtypes are cast to float32 (the result does not depend on their
    scale); float16 stays float16, like TensorFlow 2.
    """
    img = np.asarray(image)
    if img.ndim < 3:
        raise ValueError(f"per_image_standardization: expected (..., h, w, c), got shape {img.shape}")
    if img.dtype not in (np.float16, np.float32):
        img = img.astype(np.float32)
    axes = (-3, -2, -1)
    n = img.shape[-3] * img.shape[-2] * img.shape[-1]
    mean = img.mean(axis=axes, keepdims=True, dtype=np.float32).astype(img.dtype)
    std = np.sqrt(np.square(img - mean, dtype=np.float32).mean(axis=axes, keepdims=True)).astype(img.dtype)
    min_std = np.array(1.0 / np.sqrt(np.float32(n)), img.dtype)
    return ((img - mean) / np.maximum(std, min_std)).astype(img.dtype)


def normalize(image: Any, mean: Any = 0.0, std: Any = 1.0, *, dtype: Any = np.float32) -> np.ndarray:
    """``(convert_image_dtype(image, dtype) - mean) / std`` per channel (mean/std broadcast over the last axis).

    Integer images are first scaled to [0, 1], so ImageNet statistics are
    given on that scale: ``normalize(x, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))``.
    """
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise ValueError(f"normalize: dtype must be a float dtype, got {dt}")
    img = convert_image_dtype(image, dt) if np.asarray(image).dtype.kind in "iu" else np.asarray(image, dt)
    m, s = np.asarray(mean, dt), np.asarray(std, dt)
    if np.any(s == 0):
        raise ValueError("normalize: std must be non-zero")
    return (img - m) / s


def rgb_to_grayscale(images: np.ndarray) -> np.ndarray:
    """``tf.image.rgb_to_grayscale``: float weights 0.2989/0.587/0.114, result rounded back to integer dtypes."""
    images = np.asarray(images)
    if images.shape[-1:] != (3,):
        raise ValueError(f"rgb_to_grayscale: last dimension must be 3 (RGB), got shape {images.shape}")
    flt = convert_image_dtype(images, np.float32)
    gray = np.tensordot(flt, np.array([0.2989, 0.587, 0.114], np.float32), axes=([-1], [0]))[..., None]
    return convert_image_dtype(gray.astype(np.float32), images.dtype)
