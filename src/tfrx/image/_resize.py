"""resize with tf.image.resize semantics (half-pixel centres): bilinear and nearest in the native core,
the other methods in vectorised NumPy (the NumPy bilinear and nearest stay as the test reference)."""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from tfrx import _native
from tfrx.image._common import _traced


def _scale(in_size: int, out_size: int) -> np.float32:
    return np.float32(in_size) / np.float32(out_size)


def _bilinear_axis(in_size: int, out_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    scale = _scale(in_size, out_size)
    pos = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    low = np.floor(pos)
    lerp = (pos - low).astype(np.float32)
    lo = np.clip(low.astype(np.int64), 0, in_size - 1)
    hi = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
    return lo, hi, lerp


@functools.lru_cache(maxsize=64)
def _bilinear_plan(h: int, w: int, c: int, out_h: int, out_w: int) -> tuple[np.ndarray, ...]:
    """Source rows to x-interpolate, where top/bottom rows sit among them, sample indices and weights.

    Indices address samples (pixel * c + channel) and the x weights repeat per
    channel, so every NumPy pass below runs over long contiguous rows.
    """
    y0, y1, ly = _bilinear_axis(h, out_h)
    x0, x1, lx = _bilinear_axis(w, out_w)
    rows, which = np.unique(np.concatenate([y0, y1]), return_inverse=True)
    lanes = np.arange(c)
    left = (x0[:, None] * c + lanes).ravel()
    right = (x1[:, None] * c + lanes).ravel()
    return rows, which[:out_h], which[out_h:], left, right, np.repeat(lx, c), ly[:, None]


def _resize_bilinear(img: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """tf.image.resize bilinear, same float32 steps: lerp along x on the two source rows, then along y.

    Each source row needed is x-interpolated once, then rows are blended.
    """
    n, h, w, c = img.shape
    rows, top_at, bottom_at, left_at, right_at, lx, ly = _bilinear_plan(h, w, c, out_h, out_w)
    sub = img.reshape(n, h, w * c)[:, rows]
    left = np.take(sub, left_at, axis=2).astype(np.float32)
    lerped = np.take(sub, right_at, axis=2).astype(np.float32)
    lerped -= left
    lerped *= lx
    lerped += left
    top = np.take(lerped, top_at, axis=1)
    out = np.take(lerped, bottom_at, axis=1)
    out -= top
    out *= ly
    out += top
    return out.reshape(n, out_h, out_w, c)


@functools.lru_cache(maxsize=64)
def _native_bilinear_plan(h: int, w: int, c: int, out_h: int, out_w: int) -> tuple[np.ndarray, ...]:
    """The per-size plan for ``_native.resize_bilinear``: source rows and y weights per output row,
    source sample offsets (pixel * c + channel) and x weights per output sample."""
    y0, y1, ly = _bilinear_axis(h, out_h)
    x0, x1, lx = _bilinear_axis(w, out_w)
    lanes = np.arange(c)
    left = (x0[:, None] * c + lanes).ravel()
    right = (x1[:, None] * c + lanes).ravel()
    plan = (y0, y1, ly, left, right, np.repeat(lx, c))
    for a in plan:
        a.flags.writeable = False
    return plan


def _resize_bilinear_native(img: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """``_resize_bilinear`` in the native core (same float32 steps), GIL released.

    uint8 and float32 are read directly; other dtypes go through float32 first,
    as the NumPy path does.
    """
    if img.dtype != np.uint8 and img.dtype != np.float32:
        img = img.astype(np.float32)
    img = np.ascontiguousarray(img)
    n, h, w, c = img.shape
    out = np.empty((n, out_h, out_w, c), np.float32)
    _native.resize_bilinear(img, out, *_native_bilinear_plan(h, w, c, out_h, out_w))
    return out


def _resize_bilinear_into(img: np.ndarray, out: np.ndarray) -> None:
    """``_resize_bilinear_native`` of one (h, w, c) image written into ``out`` (1, out_h, out_w, c) float32."""
    if img.dtype != np.uint8 and img.dtype != np.float32:
        img = img.astype(np.float32)
    img = np.ascontiguousarray(img)[None]
    _, h, w, c = img.shape
    _native.resize_bilinear(img, out, *_native_bilinear_plan(h, w, c, out.shape[1], out.shape[2]))


def _nearest_axis(in_size: int, out_size: int) -> np.ndarray:
    scale = _scale(in_size, out_size)
    pos = np.floor((np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale).astype(np.int64)
    return np.clip(pos, 0, in_size - 1)


@functools.lru_cache(maxsize=128)
def _nearest_axis_cached(in_size: int, out_size: int) -> np.ndarray:
    index = _nearest_axis(in_size, out_size)
    index.flags.writeable = False
    return index


def _resize_nearest_native(img: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """Nearest neighbour in the native core as a dtype-agnostic pixel gather, GIL released;
    same indices as the NumPy path, keeps the dtype."""
    img = np.ascontiguousarray(img)
    n, h, w, c = img.shape
    out = np.empty((n, out_h, out_w, c), img.dtype)
    if out.size == 0 or img.size == 0:
        return img[:, _nearest_axis(h, out_h)][:, :, _nearest_axis(w, out_w)]
    pixel = c * img.dtype.itemsize
    _native.resize_nearest(
        img.reshape(n, h, w * c).view(np.uint8),
        out.reshape(n, out_h, out_w * c).view(np.uint8),
        pixel,
        _nearest_axis_cached(h, out_h),
        _nearest_axis_cached(w, out_w),
    )
    return out


def _keys_cubic(x: np.ndarray, a: float = -0.5) -> np.ndarray:
    x = np.abs(x)
    return np.where(
        x <= 1,
        ((a + 2) * x - (a + 3)) * x * x + 1,
        np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0),
    )


def _bicubic_matrix(in_size: int, out_size: int) -> np.ndarray:
    """tf.image.resize bicubic: Keys cubic (a=-0.5) sampled from a 1024-entry table with half-pixel centres;
    taps outside the image drop out and the rest renormalise."""
    scale = _scale(in_size, out_size)
    pos = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    base = np.floor(pos)
    offset = np.rint((pos - base) * np.float32(1024)).astype(np.int64)
    weights = np.stack(
        [
            _CUBIC_TABLE[offset, 1],
            _CUBIC_TABLE[offset, 0],
            _CUBIC_TABLE[1024 - offset, 0],
            _CUBIC_TABLE[1024 - offset, 1],
        ],
        1,
    )
    index = base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
    weights = np.where((index >= 0) & (index < in_size), weights, np.float32(0))
    total = weights.sum(axis=1, keepdims=True, dtype=np.float32)
    weights = weights * (np.float32(1) / total)
    w = np.zeros((out_size, in_size), np.float32)
    np.add.at(w, (np.repeat(np.arange(out_size), 4), np.clip(index, 0, in_size - 1).ravel()), weights.ravel())
    return w


def _cubic_table(a: float = -0.5, size: int = 1024) -> np.ndarray:
    x = np.arange(size + 1, dtype=np.float32) / np.float32(size)
    a32 = np.float32(a)
    near = ((a32 + 2) * x - (a32 + 3)) * x * x + 1
    x1 = x + np.float32(1)
    far = ((a32 * x1 - 5 * a32) * x1 + 8 * a32) * x1 - 4 * a32
    return np.stack([near, far], 1).astype(np.float32)


_CUBIC_TABLE = _cubic_table()


def _area_matrix(in_size: int, out_size: int) -> np.ndarray:
    """tf.image.resize area: box coverage of [i*s, (i+1)*s) (no half-pixel offset), divided by s."""
    scale = float(_scale(in_size, out_size))
    start = np.arange(out_size) * scale
    end = start + scale
    cells = np.arange(in_size)
    overlap = np.minimum(cells[None, :] + 1, end[:, None]) - np.maximum(cells[None, :], start[:, None])
    return np.clip(overlap, 0, None) / scale


def _abs32(x: np.ndarray) -> np.ndarray:
    return np.abs(x).astype(np.float32)


def _lanczos(radius: float) -> Callable[[np.ndarray], np.ndarray]:
    def kernel(x: np.ndarray) -> np.ndarray:
        x = _abs32(x).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi * np.pi * x * x)
        return np.where(x > radius, 0.0, np.where(x <= 1e-3, 1.0, value))

    return kernel


# tf.image.resize's ScaleAndTranslate kernels: (radius, function of |distance|).
_KERNELS: dict[str, tuple[float, Callable[[np.ndarray], np.ndarray]]] = {
    "bilinear": (1.0, lambda x: np.where(_abs32(x) < 1, 1 - _abs32(x), 0.0)),
    "bicubic": (
        2.0,
        lambda x: np.where(
            _abs32(x) >= 2,
            0.0,
            np.where(
                _abs32(x) >= 1,
                ((-0.5 * _abs32(x) + 2.5) * _abs32(x) - 4.0) * _abs32(x) + 2.0,
                (1.5 * _abs32(x) - 2.5) * _abs32(x) * _abs32(x) + 1.0,
            ),
        ),
    ),
    "lanczos3": (3.0, _lanczos(3.0)),
    "lanczos5": (5.0, _lanczos(5.0)),
    "gaussian": (
        1.5,
        lambda x: np.where(_abs32(x) >= 1.5, 0.0, np.exp(-(_abs32(x).astype(np.float64) ** 2) / (2 * 0.5 * 0.5))),
    ),
    "mitchellcubic": (
        2.0,
        lambda x: np.where(
            _abs32(x) >= 2,
            0.0,
            np.where(
                _abs32(x) >= 1,
                (((-7.0 / 18.0) * _abs32(x) + 2.0) * _abs32(x) - 10.0 / 3.0) * _abs32(x) + 16.0 / 9.0,
                (((7.0 / 6.0) * _abs32(x) - 2.0) * _abs32(x)) * _abs32(x) + 8.0 / 9.0,
            ),
        ),
    ),
}


def _kernel_matrix(in_size: int, out_size: int, method: str, antialias: bool) -> np.ndarray:
    """tf.raw_ops.ScaleAndTranslate weights (translation 0) in TensorFlow's float32 arithmetic;
    antialiasing widens the kernel by the downscale factor."""
    radius, kernel = _KERNELS[method]
    scale = np.float32(out_size) / np.float32(in_size)
    inv_scale = np.float32(1.0 / float(scale))
    kernel_scale = max(inv_scale, np.float32(1)) if antialias else np.float32(1)
    reach = np.float32(radius) * kernel_scale
    sample = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * inv_scale
    start = np.clip(np.ceil(sample - reach - np.float32(0.5)).astype(np.int64), 0, in_size - 1)
    end = np.clip(np.floor(sample + reach - np.float32(0.5)).astype(np.int64), 0, in_size - 1) + 1
    span = int((end - start).max())
    index = start[:, None] + np.arange(span)[None, :]
    position = (index.astype(np.float32) + np.float32(0.5) - sample[:, None]) * (np.float32(1) / kernel_scale)
    weights = np.where(index < end[:, None], kernel(position), 0.0).astype(np.float32)
    total = weights.sum(axis=1, keepdims=True, dtype=np.float32)
    normalise = np.abs(total) >= 1000 * np.finfo(np.float32).tiny
    weights = np.where(normalise, weights * (np.float32(1) / np.where(normalise, total, 1)), weights)
    w = np.zeros((out_size, in_size), np.float32)
    np.add.at(w, (np.repeat(np.arange(out_size), span), np.clip(index, 0, in_size - 1).ravel()), weights.ravel())
    return w


def _separable(img: np.ndarray, wy: np.ndarray, wx: np.ndarray) -> np.ndarray:
    x = img.astype(np.float32)
    x = np.einsum("oh,nhwc->nowc", wy.astype(np.float32), x, optimize=True)
    return np.einsum("pw,nowc->nopc", wx.astype(np.float32), x, optimize=True)


_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _target_size(h: int, w: int, size: tuple[int, int], preserve_aspect_ratio: bool) -> tuple[int, int]:
    th, tw = int(size[0]), int(size[1])
    if th <= 0 or tw <= 0:
        raise ValueError(f"resize: size must be two positive integers, got {size!r}")
    if not preserve_aspect_ratio:
        return th, tw
    factor = min(np.float32(th) / np.float32(h), np.float32(tw) / np.float32(w))
    return int(np.round(np.float32(factor) * np.float32(h))), int(np.round(np.float32(factor) * np.float32(w)))


def resize(
    images: Any,
    size: tuple[int, int],
    method: str = "bilinear",
    preserve_aspect_ratio: bool = False,
    antialias: bool = False,
) -> Any:
    """``tf.image.resize``: (h, w, c) or (n, h, w, c) to ``size=(new_h, new_w)``.

    Half-pixel centres as in TF2. Returns float32, except ``method="nearest"``
    which keeps the input dtype. A list of differently sized images is resized
    one by one and stacked. ``method``: bilinear, nearest, bicubic, area,
    lanczos3, lanczos5, gaussian, mitchellcubic; ``antialias=True`` widens the
    bilinear/bicubic kernel when downscaling (nearest and area ignore it).
    """
    if method not in _METHODS:
        raise ValueError(f"resize: method must be one of {', '.join(_METHODS)}, got {method!r}")
    if _traced(images):
        th, tw = (int(d) for d in np.asarray(size).reshape(-1))
        return images.__tfrx_trace__(
            "resize",
            size=(th, tw),
            method=method,
            preserve_aspect_ratio=bool(preserve_aspect_ratio),
            antialias=bool(antialias),
        )
    if isinstance(images, (list, tuple)):
        return np.stack([resize(im, size, method, preserve_aspect_ratio, antialias) for im in images])
    img = np.asarray(images)
    if img.ndim not in (3, 4):
        raise ValueError(f"resize: expected (h, w, c) or (n, h, w, c), got shape {img.shape}")
    if img.dtype.kind not in "iuf" or img.dtype.kind == "b":
        raise TypeError(f"resize: expected a numeric image, got {img.dtype}")
    batch = img if img.ndim == 4 else img[None]
    out_h, out_w = _target_size(batch.shape[1], batch.shape[2], size, preserve_aspect_ratio)
    if method == "nearest":
        out = _resize_nearest_native(batch, out_h, out_w)
    elif method == "bilinear" and not antialias:
        out = _resize_bilinear_native(batch, out_h, out_w)
    elif method == "bicubic" and not antialias:
        out = _separable(batch, _bicubic_matrix(batch.shape[1], out_h), _bicubic_matrix(batch.shape[2], out_w))
    elif method == "area":
        out = _separable(batch, _area_matrix(batch.shape[1], out_h), _area_matrix(batch.shape[2], out_w))
    else:
        out = _separable(
            batch,
            _kernel_matrix(batch.shape[1], out_h, method, antialias),
            _kernel_matrix(batch.shape[2], out_w, method, antialias),
        )
    if method != "nearest":
        out = out.astype(np.float32, copy=False)
    out = np.ascontiguousarray(out)
    return out if img.ndim == 4 else out[0]
