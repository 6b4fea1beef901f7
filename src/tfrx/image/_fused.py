"""decode_and_resize: ``resize(decode_jpeg(c), size)`` for every image of a batch, stacked, in one native call.

The batch form of the tutorials' ``map(decode_jpeg).map(resize)``. The
result is, bit for bit, what the per-image calls stacked give: each image
is computed by exactly those calls unless the native kernel computes the
same pixels, which it does for JPEGs decoded with TensorFlow's defaults
(the fast integer IDCT, fancy upsampling, ratio 1) and a bilinear resize
without antialiasing: libjpeg-turbo's own decode (the same library
simplejpeg wraps) straight into tfrx's bilinear resize, on tfrx's worker
threads without the GIL, so no decoded image is handed to Python. Any image
the kernel cannot take (another format, CMYK, a decoder that is not
libjpeg-turbo, damaged data) is computed by the per-image calls, so errors
are theirs too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx import _native
from tfrx.image._common import _as_bytes, _check_dtype, _is_single, _map, _stack_if_same, _with_index, jpeg_backend
from tfrx.image._crop_resize import _output
from tfrx.image._any import _decode_image_one
from tfrx.image._jpeg import _check_decode_args, _decode_jpeg_one
from tfrx.image._partial import partial_jpeg_backend
from tfrx.image._resize import _METHODS, _resize_bilinear_into, resize
from tfrx.options import resolve_parallelism

__all__ = ["decode_and_resize"]

_JPEG_SOI = b"\xff\xd8\xff"
# libjpeg's J_COLOR_SPACE values the kernel decodes as decode_jpeg does (CMYK and YCCK take TensorFlow's
# own conversion in the per-image path).
_PLAIN_COLOUR = (1, 2, 3)  # JCS_GRAYSCALE, JCS_RGB, JCS_YCbCr


def _kernel_possible(
    fmt: str, ratio: int, fancy_upscaling: bool, try_recover_truncated: bool, fast: bool, dtype: np.dtype
) -> bool:
    """Whether the native kernel computes the per-image calls' pixels for these decode arguments."""
    return (
        ratio == 1
        and fancy_upscaling
        and not try_recover_truncated
        and fast
        and dtype == np.uint8
        and fmt in ("jpeg", "image")
        and jpeg_backend() == "simplejpeg"  # Pillow's fallback decodes with the accurate IDCT
        and partial_jpeg_backend() is not None
    )


def decode_and_resize(  # noqa: PLR0913  decode_jpeg's and resize's arguments, fused
    contents: Any,
    size: Any,
    *,
    channels: int = 0,
    method: str = "bilinear",
    antialias: bool = False,
    preserve_aspect_ratio: bool = False,
    format: str = "jpeg",  # noqa: A002 - which decoder: decode_jpeg or decode_image
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    dct_method: str = "",
    dtype: Any = np.uint8,
    num_parallel_calls: int | None = None,
) -> np.ndarray:
    """``resize(decode_jpeg(c, channels, ...), size, method, ...)`` for every image ``c``, stacked (n, h, w, c).

    ``format="jpeg"`` decodes with :func:`decode_jpeg` (``ratio``,
    ``fancy_upscaling``, ``try_recover_truncated``, ``dct_method`` are its
    arguments), ``format="image"`` with :func:`decode_image` (any format;
    ``dtype`` is its argument). Equal bit for bit to the per-image calls
    stacked with ``np.stack`` (which raises when the images' shapes differ,
    as ``batch`` does); JPEGs with the default decode arguments and a
    bilinear resize without antialiasing are decoded and resized in one
    native call on ``num_parallel_calls`` threads (default: the usable
    cores). One image (``bytes``) gives (h, w, c).
    """
    if format not in ("jpeg", "image"):
        raise ValueError(f"decode_and_resize: format must be 'jpeg' or 'image', got {format!r}")
    if method not in _METHODS:
        raise ValueError(f"decode_and_resize: method must be one of {', '.join(_METHODS)}, got {method!r}")
    if format == "jpeg":
        fast = _check_decode_args(channels, ratio, dct_method, "decode_and_resize")
        dt = np.dtype(np.uint8)
    else:
        if channels not in (0, 1, 3, 4):
            raise ValueError(f"decode_and_resize: channels must be 0, 1, 3 or 4, got {channels!r}")
        fast, dt = True, _check_dtype(dtype, (np.uint8, np.uint16, np.float32), "decode_and_resize")
    out_h, out_w = (int(d) for d in size)
    if out_h < 1 or out_w < 1:
        raise ValueError(f"decode_and_resize: size must be two positive ints, got {size!r}")

    def decode(c: Any) -> np.ndarray:
        if format == "jpeg":
            return _decode_jpeg_one(c, channels, ratio, fancy_upscaling, try_recover_truncated, fast)
        return _decode_image_one(c, channels, dt, expand_animations=False)

    def one(c: Any) -> np.ndarray:
        return resize(decode(c), (out_h, out_w), method, preserve_aspect_ratio, antialias)

    if _is_single(contents):
        return one(contents)
    items = list(contents.ravel()) if isinstance(contents, np.ndarray) else list(contents)
    threads = resolve_parallelism(num_parallel_calls, default=None)
    kernel = (
        method == "bilinear"
        and not antialias
        and not preserve_aspect_ratio
        and _kernel_possible(format, ratio, fancy_upscaling, try_recover_truncated, fast, dt)
    )
    if items and kernel:
        return _with_kernel(items, one, channels, (out_h, out_w), threads)
    if items and channels and method == "bilinear" and not antialias and not preserve_aspect_ratio:
        # Each image resized straight into its row of the batch: no float32 array per image, no stacking copy.
        rows = np.empty((len(items), out_h, out_w, channels), np.float32)

        def into_row(i: int) -> None:
            _resize_bilinear_into(decode(items[i]), rows[i : i + 1])

        _map(lambda i: _with_index(into_row, i, i), list(range(len(items))), threads)
        return rows
    return _stacked(_map(one, items, threads), (out_h, out_w), channels)


def _stacked(images: list[np.ndarray], size: tuple[int, int], channels: int) -> np.ndarray:
    if not images:
        return np.zeros((0, size[0], size[1], channels or 3), np.float32)
    return np.asarray(_stack_if_same(images, True))


def _kernel_shape(data: Any, channels: int) -> tuple[int, int, int]:
    """(channels, height, width) the kernel decodes ``data`` to as decode_jpeg would; channels 0 when the
    kernel must not take it."""
    if bytes(data[:3]) != _JPEG_SOI:
        return 0, 0, 0
    result = _native.jpeg_header(data, 1, 1)
    if result.status != _native.JPEG_OK or result.header.color_space not in _PLAIN_COLOUR:
        return 0, 0, 0
    h = result.header
    if channels in (1, 3):
        return channels, h.height, h.width
    return (1 if h.components == 1 else 3) if channels == 0 else 0, h.height, h.width


def _with_kernel(items: list[Any], one: Any, channels: int, size: tuple[int, int], threads: int) -> np.ndarray:
    """The batch through the native kernel, images it cannot take through ``one``."""
    datas = [_as_bytes(c) for c in items]
    shapes = np.array([_kernel_shape(d, channels) for d in datas], np.int64).reshape(-1, 3)
    kinds = shapes[:, 0].tolist()
    wanted = {k for k in kinds if k}
    if len(wanted) != 1:  # none for the kernel, or gray and colour mixed (stacking raises, as batch does)
        return _stacked(_map(one, items, threads), size, channels)
    c = wanted.pop()
    n = len(datas)
    out = _output(n, size[0], size[1], c)
    native = [i for i in range(n) if kinds[i]]
    if len(native) == n:
        _run_kernel(datas, list(range(n)), shapes, out, c, threads, one)
    else:
        part = np.empty((len(native), size[0], size[1], c), np.float32)
        _run_kernel([datas[i] for i in native], native, shapes[native], part, c, threads, one)
        out[native] = part
        others = [i for i in range(n) if not kinds[i]]  # the rest on the same threads, named by their index
        for i, image in zip(others, _map(lambda i: _with_index(one, datas[i], i), others, threads)):
            if image.shape != out.shape[1:] or image.dtype != out.dtype:
                return _stacked(_map(one, items, threads), size, channels)
            out[i] = image
    return out


def _run_kernel(
    datas: list[Any], index: list[int], shapes: np.ndarray, out: np.ndarray, channels: int, threads: int, one: Any
) -> None:
    """Whole-image decode + bilinear resize of every JPEG into ``out[i]``; one the kernel refuses goes through ``one``."""
    start = 0
    n = len(datas)
    while start < n:
        part = datas[start:]
        heights, widths = shapes[start:, 1].copy(), shapes[start:, 2].copy()
        m = len(part)
        boxes = np.zeros((m, 4), np.int64)
        boxes[:, 2] = heights
        boxes[:, 3] = widths
        result = _native.jpeg_crop_resize_batch(
            part,
            channels,
            heights,
            widths,
            boxes,
            np.ones(m, np.int64),
            np.zeros(m, bool),
            out[start:],
            None,
            None,
            threads,
            True,  # strict: a warning fails the image, as simplejpeg's strict decode (decode_jpeg's) does
        )
        if result.status == _native.JPEG_OK:
            return
        i = start + int(result.index)
        out[i] = _with_index(one, datas[i], index[i])  # the per-image calls: their pixels or their error
        start = i + 1
