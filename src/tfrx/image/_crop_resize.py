"""Fused crop + resize decodes: ``decode_crop_and_resize`` and ``decode_random_crop_and_resize``.

The training input of Inception/ResNet-style models (a random crop resized
to 224x224, flipped) in one step per image that does less work than decoding
the whole image: libjpeg-turbo decodes only the crop's rows and iMCU columns
(rows below the crop are not even entropy-decoded), and when the crop is at
least twice the target size on both sides the IDCT itself scales it down by
1/2, 1/4 or 1/8 (libjpeg-turbo's DCT scaling), so a quarter or less of the
pixels are made. The scaled window is then resized with tfrx's bilinear
resize (``tf.image.resize`` semantics) straight into the batch, the flip
folded into the resize plan.

Without DCT scaling (``dct_scaling=False``, or a crop smaller than twice the
target) the result equals ``resize(decode_and_crop_jpeg(...), size)``
(flipped) bit for bit. With it, the crop is resampled from the scaled
decode at the same geometry; pixels differ from a full-size decode by the
scaled IDCT's smoothing (see docs/images.md for measured differences).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx import _native
from tfrx.io._buffers import RecycledBuffers
from tfrx.image._boxes import Box, _check_ranges, _pixel_boxes, _sample_box
from tfrx.image._common import _as_bytes, _is_single, _map, _with_index
from tfrx.options import resolve_parallelism
from tfrx.image._jpeg import decode_jpeg
from tfrx.image._partial import jpeg_header, partial_jpeg_backend, raise_for_status
from tfrx.image._random import _rng

__all__ = ["decode_crop_and_resize", "decode_random_crop_and_resize"]


# Batches of float32 crops are large (64 x 224 x 224 x 3 is 38.5 MB, above the
# largest mmap threshold glibc allows): a fresh array is a fresh mapping whose
# pages the kernel zeroes on first touch, for every batch. Outputs of at least
# _RECYCLE_BYTES come from blocks reused once nothing refers to an earlier
# output any more (two kept waiting at most).
_RECYCLE_BYTES = 1 << 20
_outputs = RecycledBuffers(keep=2)


def _output(n: int, out_h: int, out_w: int, channels: int) -> np.ndarray:
    shape = (n, out_h, out_w, channels)
    nbytes = 4 * n * out_h * out_w * channels
    if nbytes < _RECYCLE_BYTES:
        return np.empty(shape, np.float32)
    return _outputs.take(nbytes)[:nbytes].view(np.float32).reshape(shape)


def _dct_denominator(height: int, width: int, out_h: int, out_w: int, dct_scaling: bool) -> int:
    """The largest of 1, 2, 4, 8 whose scaled crop is still at least the target size on both sides."""
    denom = 1
    if dct_scaling:
        while denom < 8 and height >= 2 * denom * out_h and width >= 2 * denom * out_w:
            denom *= 2
    return denom


class _Header:
    """Height and width of an encoded JPEG, from the native header reader or the full decoder."""

    __slots__ = ("height", "width")

    def __init__(self, data: Any) -> None:
        if partial_jpeg_backend() is not None:
            h = jpeg_header(data)
            self.height, self.width = int(h.height), int(h.width)
        else:
            from tfrx.image._common import _optional

            sj = _optional("simplejpeg")
            if sj is not None:
                self.height, self.width = (int(v) for v in sj.decode_jpeg_header(bytes(data))[:2])
            else:
                self.height, self.width = decode_jpeg(data).shape[:2]


def _items(contents: Any) -> tuple[list[Any], bool]:
    if _is_single(contents):
        return [contents], True
    if isinstance(contents, str):
        raise TypeError("expected encoded image bytes, got str (open the file in binary mode or pass its bytes)")
    return (list(contents.ravel()) if isinstance(contents, np.ndarray) else list(contents)), False


def _check_size(size: Any, what: str) -> tuple[int, int]:
    try:
        out_h, out_w = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: size must be (height, width), got {size!r}") from None
    if out_h < 1 or out_w < 1:
        raise ValueError(f"{what}: size must be two positive ints, got {size!r}")
    return out_h, out_w


def _check_channels(channels: int, what: str) -> int:
    if channels not in (1, 3):
        raise ValueError(f"{what}: channels must be 1 or 3, got {channels!r}")
    return channels


def _stats(mean: Any, std: Any, channels: int, what: str) -> tuple[list[float] | None, list[float] | None]:
    """Per-channel mean and std for the native normalisation, or (None, None)."""
    if mean is None and std is None:
        return None, None
    m = np.broadcast_to(np.asarray(0.0 if mean is None else mean, np.float32), (channels,))
    s = np.broadcast_to(np.asarray(1.0 if std is None else std, np.float32), (channels,))
    if np.any(s == 0):
        raise ValueError(f"{what}: std must be non-zero")
    return m.tolist(), s.tolist()


def _run(
    items: list[Any],
    boxes: list[Box],
    headers: list[Any],
    flips: list[bool],
    out: np.ndarray,
    channels: int,
    dct_scaling: bool,
    stats: Any,
    num_parallel_calls: int | None,
    what: str,
) -> None:
    """Every image's crop decoded at its DCT scale and resized into ``out[i]``."""
    out_h, out_w = out.shape[1], out.shape[2]
    denoms = [_dct_denominator(b.height, b.width, out_h, out_w, dct_scaling) for b in boxes]
    threads = resolve_parallelism(num_parallel_calls, default=None)
    datas = [_as_bytes(c) for c in items]
    if partial_jpeg_backend() is not None:
        # One native call for the batch: the images run on tfrx's worker threads without the GIL.
        result = _native.jpeg_crop_resize_batch(
            datas,
            channels,
            np.array([h.height for h in headers], np.int64),
            np.array([h.width for h in headers], np.int64),
            np.array(boxes, np.int64).reshape(-1, 4),
            np.array(denoms, np.int64),
            np.array(flips, bool),
            out,
            stats[0],
            stats[1],
            threads,
        )
        if result.status != _native.JPEG_OK:
            i = int(result.index)
            _with_index(lambda _: raise_for_status(result, datas[i], list(boxes[i]), what), None, i)
        return

    def work(i: int) -> None:
        # No libjpeg-turbo: the whole image at the crop's scale, from which the native code takes the window.
        pixels = decode_jpeg(datas[i], channels, denoms[i])
        result = _native.jpeg_crop_resize(
            datas[i],
            channels,
            headers[i].height,
            headers[i].width,
            list(boxes[i]),
            denoms[i],
            flips[i],
            out[i],
            pixels,
            *stats,
        )
        if result.status != _native.JPEG_OK:
            raise_for_status(result, datas[i], list(boxes[i]), what)

    _map(work, list(range(len(items))), threads)


def decode_crop_and_resize(
    contents: Any,
    crop_window: Any,
    size: Any,
    *,
    channels: int = 3,
    flip: Any = False,
    dct_scaling: bool = True,
    mean: Any = None,
    std: Any = None,
    num_parallel_calls: int | None = None,
) -> np.ndarray:
    """Decode the ``crop_window`` ``[y, x, height, width]`` of JPEGs, resized (bilinear) to ``size``, float32.

    One image gives (h, w, c), a batch (list or object array) (n, h, w, c)
    with one window per image ((4,) for all or (n, 4)). ``flip`` (a bool or
    one per image) mirrors the result left-right. With ``dct_scaling`` a crop
    at least twice ``size`` is decoded at 1/2, 1/4 or 1/8 scale; without it
    the result equals ``resize(decode_and_crop_jpeg(c, window, channels), size)``.
    ``mean`` / ``std`` (per channel, on the 0-255 scale) make it
    ``(resized - mean) / std``, computed while each image is in cache.
    """
    what = "decode_crop_and_resize"
    out_h, out_w = _check_size(size, what)
    channels = _check_channels(channels, what)
    items, single = _items(contents)
    windows = np.asarray(crop_window, dtype=np.int64)
    if windows.size % 4 or windows.ndim > 2:
        raise ValueError(
            f"{what}: crop_window must be [y, x, height, width] or one such row per image, got shape {windows.shape}"
        )
    windows = windows.reshape(-1, 4)
    if len(windows) == 1 and len(items) > 1:
        windows = np.repeat(windows, len(items), axis=0)
    if len(windows) != len(items):
        raise ValueError(f"{what}: {len(windows)} crop windows for {len(items)} images")
    flips = [bool(f) for f in np.broadcast_to(np.asarray(flip, dtype=bool), (len(items),))]
    headers = [_Header(_as_bytes(c)) for c in items]
    boxes = []
    for (y, x, h, w), header in zip(windows.tolist(), headers):
        if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > header.height or x + w > header.width:
            raise ValueError(
                f"{what}: crop window {[y, x, h, w]} is not inside the image of size [{header.height}, {header.width}]"
            )
        boxes.append(Box(y, x, h, w))
    out = _output(len(items), out_h, out_w, channels)
    _run(
        items,
        boxes,
        headers,
        flips,
        out,
        channels,
        dct_scaling,
        _stats(mean, std, channels, what),
        num_parallel_calls,
        what,
    )
    return out[0] if single else out


def _draw_crops(  # noqa: PLR0913  sample_distorted_bounding_box's arguments
    items: list[Any],
    bounding_boxes: Any,
    min_object_covered: Any,
    area: Any,
    aspect: Any,
    max_attempts: Any,
    random_flip: bool,
    seed: int | None,
    what: str,
) -> tuple[list[_Header], list[Box], list[bool]]:
    """Each image's header, crop (``sample_distorted_bounding_box``) and flip, drawn in order from
    ``seed``'s sequence: the one sampler of the CPU path and the device path, so both draw the same."""
    per_image_boxes = [None] * len(items) if bounding_boxes is None else list(bounding_boxes)
    if len(per_image_boxes) != len(items):
        raise ValueError(f"{what}: {len(per_image_boxes)} lists of bounding boxes for {len(items)} images")
    rng = _rng(seed or None)
    headers: list[_Header] = []
    boxes: list[Box] = []
    flips: list[bool] = []
    for c, image_boxes in zip(items, per_image_boxes):
        header = _Header(_as_bytes(c))
        pixel_boxes = _pixel_boxes(image_boxes, header.height, header.width)
        boxes.append(
            _sample_box(
                header.height,
                header.width,
                pixel_boxes,
                float(min_object_covered),
                area,
                aspect,
                int(max_attempts),
                rng,
            )
        )
        flips.append(bool(random_flip) and bool(rng.random() < 0.5))
        headers.append(header)
    return headers, boxes, flips


def decode_random_crop_and_resize(  # noqa: PLR0913  sample_distorted_bounding_box's and decode_jpeg's arguments, fused
    contents: Any,
    size: Any,
    *,
    bounding_boxes: Any = None,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Any = (0.75, 1.33),
    area_range: Any = (0.05, 1.0),
    max_attempts: int = 100,
    random_flip: bool = True,
    seed: int | None = None,
    channels: int = 3,
    dct_scaling: bool = True,
    mean: Any = None,
    std: Any = None,
    num_parallel_calls: int | None = None,
) -> np.ndarray:
    """The Inception/ResNet training crop, fused: sample, decode only the crop, resize, flip.

    Per image: a crop drawn by ``sample_distorted_bounding_box`` (same
    arguments and defaults, the whole image as the box unless
    ``bounding_boxes`` gives one list of boxes per image), decoded and resized
    as ``decode_crop_and_resize`` does, mirrored with probability 1/2 when
    ``random_flip``. Returns float32 (h, w, c) for one image, (n, h, w, c)
    for a batch, with values in [0, 255], or ``(x - mean) / std`` with
    ``mean`` / ``std`` given per channel on that scale. Draws
    are made in order in the calling thread, so a ``seed`` gives the same
    crops and flips whatever ``num_parallel_calls`` is.
    """
    what = "decode_random_crop_and_resize"
    out_h, out_w = _check_size(size, what)
    channels = _check_channels(channels, what)
    area, aspect = _check_ranges(area_range, aspect_ratio_range, max_attempts)
    items, single = _items(contents)
    stats = _stats(mean, std, channels, what)
    headers, boxes, flips = _draw_crops(
        items, bounding_boxes, min_object_covered, area, aspect, max_attempts, random_flip, seed, what
    )
    out = _output(len(items), out_h, out_w, channels)
    _run(items, boxes, headers, flips, out, channels, dct_scaling, stats, num_parallel_calls, what)
    return out[0] if single else out
