"""``sample_distorted_bounding_box``: TensorFlow's random crop sampler (the Inception/ResNet training crop).

The algorithm is TensorFlow's (``sample_distorted_bounding_box_op.cc``): per
attempt an aspect ratio drawn uniformly from ``aspect_ratio_range``, a height
drawn uniformly between the heights whose areas bound ``area_range`` (the same
float32 arithmetic and rounding), a uniform offset, and the crop kept when it
covers at least ``min_object_covered`` of one bounding box; after
``max_attempts`` failures, the whole image. The draws come from NumPy, not
TensorFlow's Philox streams, so a seed gives other crops than TensorFlow's (the
distribution is the same); as with ``random_crop``, calls with one ``seed`` go
on along one reproducible sequence and ``seed=None`` or ``0`` draws from OS
entropy.
"""

from __future__ import annotations

import math
import struct
from typing import Any, NamedTuple

import numpy as np

from tfrx.image._random import _rng

__all__ = ["sample_distorted_bounding_box"]


class DistortedBoundingBox(NamedTuple):
    """:func:`sample_distorted_bounding_box`'s result: unpacks as ``begin, size, bboxes``, as in TensorFlow."""

    begin: np.ndarray
    size: np.ndarray
    bboxes: np.ndarray


_F = np.float32


class Box(NamedTuple):
    """A crop in pixels: top row, left column, height, width."""

    y: int
    x: int
    height: int
    width: int


_FLOAT32 = struct.Struct("f")


def _f32(value: float) -> float:
    """``value`` rounded to the nearest float32 (ties to even), as a Python float.

    One float32 operation on float32 operands equals the double-precision
    result rounded once to float32 (a double holds more than twice float32's
    significand, so +, -, *, / and sqrt round correctly this way), which lets
    the sampler below follow TensorFlow's float32 arithmetic with Python
    floats: several times cheaper per draw than NumPy scalars.
    """
    return _FLOAT32.unpack(_FLOAT32.pack(value))[0]


def _lrintf(value: float) -> int:
    # C's lrintf under the default rounding mode: to nearest, ties to even (as Python's round).
    return int(round(value))


def _random_crop(
    width: int, height: int, min_area_frac: float, max_area_frac: float, aspect: float, rng: np.random.Generator
) -> Box | None:
    """TensorFlow's GenerateRandomCrop: a crop of the drawn aspect ratio within the area bounds, or None.

    ``aspect`` is a float32 value; every step rounds to float32 where TensorFlow computes in float32.
    """
    if max_area_frac <= 0 or aspect <= 0 or width <= 0 or height <= 0 or min_area_frac > max_area_frac:
        return None
    min_area = _f32(_f32(_f32(min_area_frac) * width) * height)
    max_area = _f32(_f32(_f32(max_area_frac) * width) * height)
    crop_h = _lrintf(_f32(math.sqrt(_f32(min_area / aspect))))
    max_h = _lrintf(_f32(math.sqrt(_f32(max_area / aspect))))
    if _lrintf(_f32(_f32(max_h) * aspect)) > width:
        # The largest height with round(height * aspect) <= width.
        max_h = int((width + 0.5 - _f32(0.0000001)) / aspect)
        if _lrintf(_f32(_f32(max_h) * aspect)) > width:
            max_h -= 1
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += int(rng.integers(0, max_h - crop_h + 1))
    crop_w = _lrintf(_f32(_f32(crop_h) * aspect))
    area = _f32(crop_w * crop_h)
    if area < min_area:  # rounding left the area just outside the bounds: try one row more, then one less
        crop_h += 1
        crop_w = _lrintf(_f32(_f32(crop_h) * aspect))
        area = _f32(crop_w * crop_h)
    if area > max_area:
        crop_h -= 1
        crop_w = _lrintf(_f32(_f32(crop_h) * aspect))
        area = _f32(crop_w * crop_h)
    if area < min_area or area > max_area or crop_w > width or crop_h > height or crop_w <= 0 or crop_h <= 0:
        return None
    y = int(rng.integers(0, height - crop_h)) if crop_h < height else 0
    x = int(rng.integers(0, width - crop_w)) if crop_w < width else 0
    return Box(y, x, crop_h, crop_w)


def _covers(crop: Box, boxes: list[Box], min_object_covered: float) -> bool:
    """TensorFlow's SatisfiesOverlapConstraints: the crop holds pixels and enough of one box."""
    if crop.height * crop.width < 1:
        return False
    threshold = _f32(min_object_covered)
    for box in boxes:
        area = _f32(box.height * box.width)
        if area < 1:
            continue
        ih = min(crop.y + crop.height, box.y + box.height) - max(crop.y, box.y)
        iw = min(crop.x + crop.width, box.x + box.width) - max(crop.x, box.x)
        inter = _f32(ih * iw) if ih >= 0 and iw >= 0 else 0.0
        if _f32(inter / area) >= threshold:
            return True
    return False


def _pixel_boxes(bounding_boxes: Any, height: int, width: int) -> list[Box]:
    if bounding_boxes is None:
        return []
    arr = np.asarray(bounding_boxes, dtype=np.float32)
    if arr.size == 0:
        return []
    if arr.shape[-1] != 4:
        raise ValueError(
            f"sample_distorted_bounding_box: bounding_boxes must have 4 values per box [ymin, xmin, ymax, xmax], got shape {arr.shape}"
        )
    arr = arr.reshape(-1, 4)
    if np.any(arr < 0) or np.any(arr > 1):
        raise ValueError("sample_distorted_bounding_box: all bounding box coordinates must be in [0.0, 1.0]")
    out = []
    for ymin, xmin, ymax, xmax in arr:
        # C++'s truncating int casts of float32 products, as TensorFlow's op.
        y0, x0 = int(_F(ymin) * _F(height)), int(_F(xmin) * _F(width))
        y1, x1 = int(_F(ymax) * _F(height)), int(_F(xmax) * _F(width))
        out.append(Box(y0, x0, y1 - y0, x1 - x0))
    return out


def _check_ranges(
    area_range: Any, aspect_ratio_range: Any, max_attempts: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    area = tuple(float(v) for v in area_range)
    aspect = tuple(float(v) for v in aspect_ratio_range)
    if len(area) != 2 or len(aspect) != 2:
        raise ValueError("sample_distorted_bounding_box: area_range and aspect_ratio_range take two values each")
    if not (0 < area[0] <= area[1] <= 1):
        raise ValueError(f"sample_distorted_bounding_box: area_range must satisfy 0 < min <= max <= 1, got {area}")
    if not (0 < aspect[0] <= aspect[1]) or not math.isfinite(aspect[1]):
        raise ValueError(f"sample_distorted_bounding_box: aspect_ratio_range must satisfy 0 < min <= max, got {aspect}")
    if int(max_attempts) < 1:
        raise ValueError(f"sample_distorted_bounding_box: max_attempts must be positive, got {max_attempts}")
    return area, aspect


def _sample_box(
    height: int,
    width: int,
    boxes: list[Box],
    min_object_covered: float,
    area: tuple[float, float],
    aspect: tuple[float, float],
    max_attempts: int,
    rng: np.random.Generator,
) -> Box:
    if not boxes:
        boxes = [Box(0, 0, height, width)]
    lo = _f32(aspect[0])
    span = _f32(_f32(aspect[1]) - lo)
    for _ in range(max_attempts):
        ratio = _f32(_f32(float(rng.random(dtype=np.float32)) * span) + lo)
        crop = _random_crop(width, height, area[0], area[1], ratio, rng)
        if crop is not None and _covers(crop, boxes, min_object_covered):
            return crop
    return Box(0, 0, height, width)


def sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any = None,
    seed: int | None = None,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: int | None = None,
    use_image_if_no_bounding_boxes: bool | None = None,
    name: str | None = None,
) -> DistortedBoundingBox:
    """``tf.image.sample_distorted_bounding_box``: :class:`DistortedBoundingBox` ``(begin, size, bboxes)`` of a random crop.

    ``image_size`` is ``[height, width, channels]``; ``bounding_boxes`` holds
    boxes ``[ymin, xmin, ymax, xmax]`` in [0, 1] (any leading shape). ``begin``
    is ``[y, x, 0]``, ``size`` is ``[height, width, -1]`` (int32, ready for
    ``tf.slice``-style use or ``decode_and_crop_jpeg``'s window), ``bboxes``
    is the crop as a normalised box of shape (1, 1, 4). ``None`` arguments
    take TensorFlow's defaults: aspect ratios (0.75, 1.33), areas (0.05, 1.0),
    100 attempts, no whole-image box.
    """
    aspect_ratio_range = (0.75, 1.33) if aspect_ratio_range is None else aspect_ratio_range
    area_range = (0.05, 1.0) if area_range is None else area_range
    max_attempts = 100 if max_attempts is None else max_attempts
    dims = [int(v) for v in np.asarray(image_size).reshape(-1)]
    if len(dims) != 3 or dims[0] <= 0 or dims[1] <= 0:
        raise ValueError(
            f"sample_distorted_bounding_box: image_size must be [height, width, channels] with positive sizes, got {dims}"
        )
    height, width = dims[0], dims[1]
    area, aspect = _check_ranges(area_range, aspect_ratio_range, max_attempts)
    boxes = _pixel_boxes(bounding_boxes, height, width)
    if not boxes and not use_image_if_no_bounding_boxes:
        raise ValueError(
            "sample_distorted_bounding_box: no bounding boxes provided; pass use_image_if_no_bounding_boxes=True to sample from the whole image"
        )
    crop = _sample_box(
        height, width, boxes, float(min_object_covered), area, aspect, int(max_attempts), _rng(seed or None)
    )
    begin = np.array([crop.y, crop.x, 0], np.int32)
    size = np.array([crop.height, crop.width, -1], np.int32)
    bbox = np.array(
        [
            [
                [
                    _F(crop.y) / _F(height),
                    _F(crop.x) / _F(width),
                    _F(crop.y + crop.height) / _F(height),
                    _F(crop.x + crop.width) / _F(width),
                ]
            ]
        ],
        np.float32,
    )
    return DistortedBoundingBox(begin, size, bbox)
