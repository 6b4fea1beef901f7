"""Cropping and padding with ``tf.image``'s offsets: crop/pad to a bounding box, central crop, crop-or-pad.

Each takes one image ``(h, w, c)`` or a batch ``(n, h, w, c)`` and returns a
NumPy array of the same dtype (a view's copy, never a view).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["central_crop", "crop_to_bounding_box", "pad_to_bounding_box", "resize_with_crop_or_pad"]


def _image(image: Any, what: str) -> np.ndarray:
    arr = np.asarray(image)
    if arr.ndim not in (3, 4):
        raise ValueError(
            f"{what}: image must be 3-D (height, width, channels) or 4-D (batch, height, width, channels), got shape {arr.shape}"
        )
    return arr


def _hw(arr: np.ndarray) -> tuple[int, int]:
    return (arr.shape[0], arr.shape[1]) if arr.ndim == 3 else (arr.shape[1], arr.shape[2])


def _window(arr: np.ndarray, top: int, left: int, height: int, width: int) -> np.ndarray:
    if arr.ndim == 3:
        return arr[top : top + height, left : left + width].copy()
    return arr[:, top : top + height, left : left + width].copy()


def crop_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> np.ndarray:
    """``tf.image.crop_to_bounding_box``: the window at (offset_height, offset_width) of the target size."""
    arr = _image(image, "crop_to_bounding_box")
    h, w = _hw(arr)
    if offset_height < 0 or offset_width < 0:
        raise ValueError(f"crop_to_bounding_box: offsets must be >= 0, got ({offset_height}, {offset_width})")
    if target_height <= 0 or target_width <= 0:
        raise ValueError(f"crop_to_bounding_box: target size must be > 0, got ({target_height}, {target_width})")
    if offset_height + target_height > h or offset_width + target_width > w:
        raise ValueError(
            f"crop_to_bounding_box: window ({offset_height}, {offset_width}) + ({target_height}, {target_width}) "
            f"does not fit the image of size ({h}, {w})"
        )
    return _window(arr, offset_height, offset_width, target_height, target_width)


def pad_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> np.ndarray:
    """``tf.image.pad_to_bounding_box``: zeros around the image, which starts at (offset_height, offset_width)."""
    arr = _image(image, "pad_to_bounding_box")
    h, w = _hw(arr)
    after_h, after_w = target_height - offset_height - h, target_width - offset_width - w
    if offset_height < 0 or offset_width < 0:
        raise ValueError(f"pad_to_bounding_box: offsets must be >= 0, got ({offset_height}, {offset_width})")
    if after_h < 0 or after_w < 0:
        raise ValueError(
            f"pad_to_bounding_box: the image of size ({h}, {w}) at ({offset_height}, {offset_width}) does not fit ({target_height}, {target_width})"
        )
    pads = [(offset_height, after_h), (offset_width, after_w), (0, 0)]
    if arr.ndim == 4:
        pads.insert(0, (0, 0))
    return np.pad(arr, pads)


def central_crop(image: Any, central_fraction: float) -> np.ndarray:
    """``tf.image.central_crop``: the centre ``central_fraction`` of each side, offsets rounded down as TensorFlow's."""
    arr = _image(image, "central_crop")
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError(f"central_crop: central_fraction must be within (0, 1], got {central_fraction}")
    if central_fraction == 1.0:
        return arr.copy()
    h, w = _hw(arr)
    top = int((float(h) - float(h) * central_fraction) / 2)
    left = int((float(w) - float(w) * central_fraction) / 2)
    return _window(arr, top, left, h - 2 * top, w - 2 * left)


def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> np.ndarray:
    """``tf.image.resize_with_crop_or_pad``: centre-crops the sides that are too long, zero-pads those too short."""
    arr = _image(image, "resize_with_crop_or_pad")
    if target_height <= 0 or target_width <= 0:
        raise ValueError(f"resize_with_crop_or_pad: target size must be > 0, got ({target_height}, {target_width})")
    h, w = _hw(arr)
    dh, dw = target_height - h, target_width - w
    cropped = _window(arr, max(-dh // 2, 0), max(-dw // 2, 0), min(target_height, h), min(target_width, w))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), target_height, target_width)
