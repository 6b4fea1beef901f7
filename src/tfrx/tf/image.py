"""``tf.image``: resize, crops, flips, dtype conversion and standardization from :mod:`tfrx.image` (NumPy arrays in and out)."""

from __future__ import annotations

from tfrx.image import (
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    decode_and_crop_jpeg,
    extract_jpeg_shape,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    flip_left_right,
    flip_up_down,
    pad_to_bounding_box,
    per_image_standardization,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    resize,
    resize_with_crop_or_pad,
    rgb_to_grayscale,
    sample_distorted_bounding_box,
)


class ResizeMethod:
    """``tf.image.ResizeMethod``: the method names ``resize`` accepts."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


__all__ = [
    "ResizeMethod",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "decode_and_crop_jpeg",
    "extract_jpeg_shape",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_png",
    "flip_left_right",
    "flip_up_down",
    "pad_to_bounding_box",
    "per_image_standardization",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize",
    "resize_with_crop_or_pad",
    "sample_distorted_bounding_box",
    "rgb_to_grayscale",
]
