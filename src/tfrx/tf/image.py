"""``tf.image``: resize, crops, flips, dtype conversion and standardization from :mod:`tfrx.image`.

NumPy arrays in; out as :class:`tfrx.tf.Tensor` (NumPy arrays with ``.numpy()``); each function's ``__wrapped__`` is tfrx's.
"""

from __future__ import annotations

from tfrx import image as _image
from tfrx.tf._tensor import returns_tensors

central_crop = returns_tensors(_image.central_crop)
convert_image_dtype = returns_tensors(_image.convert_image_dtype)
crop_to_bounding_box = returns_tensors(_image.crop_to_bounding_box)
decode_and_crop_jpeg = returns_tensors(_image.decode_and_crop_jpeg)
extract_jpeg_shape = returns_tensors(_image.extract_jpeg_shape)
decode_image = returns_tensors(_image.decode_image)
decode_jpeg = returns_tensors(_image.decode_jpeg)
decode_png = returns_tensors(_image.decode_png)
encode_jpeg = returns_tensors(_image.encode_jpeg)
encode_png = returns_tensors(_image.encode_png)
flip_left_right = returns_tensors(_image.flip_left_right)
flip_up_down = returns_tensors(_image.flip_up_down)
pad_to_bounding_box = returns_tensors(_image.pad_to_bounding_box)
per_image_standardization = returns_tensors(_image.per_image_standardization)
random_crop = returns_tensors(_image.random_crop)
random_flip_left_right = returns_tensors(_image.random_flip_left_right)
random_flip_up_down = returns_tensors(_image.random_flip_up_down)
resize = returns_tensors(_image.resize)
resize_with_crop_or_pad = returns_tensors(_image.resize_with_crop_or_pad)
rgb_to_grayscale = returns_tensors(_image.rgb_to_grayscale)
sample_distorted_bounding_box = returns_tensors(_image.sample_distorted_bounding_box)


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
