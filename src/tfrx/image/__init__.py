"""Image decoding, encoding, resizing and dtype conversion with TensorFlow's semantics.

``tfrx.image`` mirrors ``tf.io.decode_*`` / ``tf.image.*`` without TensorFlow:

* ``decode_png`` matches ``tf.io.decode_png`` exactly, including its channel
  conversions (libpng's integer RGB->gray weights 0.299/0.587, tRNS handling,
  the alpha filler, 16-bit stripping and 8->16 bit widening). One known
  difference: 16-bit colour PNGs with a gAMA/sRGB chunk converted to gray
  (libpng mixes those through 16-bit gamma tables).
* ``decode_jpeg`` uses libjpeg-turbo through simplejpeg with the DCT and
  upsampling TensorFlow uses by default, so on the same libjpeg-turbo build the
  output is bit-identical; Pillow is the fallback when simplejpeg is missing
  (max abs difference 4 with the default ``dct_method``, since Pillow always
  uses the accurate integer DCT). CMYK and YCCK JPEGs are converted to RGB by
  TensorFlow's integer rule from libjpeg's CMYK samples (Adobe-marked files store
  them inverted), bit-exact with TensorFlow when libjpeg-turbo or simplejpeg is present.
* ``resize_with_crop_or_pad``, ``central_crop``, ``crop_to_bounding_box``,
  ``pad_to_bounding_box`` and the flips equal ``tf.image``'s exactly;
  ``random_crop``/``random_flip_*`` draw from NumPy (same distributions,
  different draws than TensorFlow for a seed); ``decode_and_crop_jpeg``
  decodes only the window through libjpeg-turbo (Pillow's bundled copy or
  the system's ``libjpeg.so.62``, loaded at run time) by TensorFlow's steps,
  bit-exact with ``tf.io.decode_and_crop_jpeg``.
* ``sample_distorted_bounding_box`` is TensorFlow's crop sampler (NumPy
  draws); ``decode_random_crop_and_resize`` fuses it with a partial decode
  that uses libjpeg-turbo's DCT scaling for crops at least twice the target
  size, the bilinear resize and a random flip (the ImageNet training input).
* ``resize`` reproduces ``tf.image.resize`` (half-pixel centres) for
  bilinear, nearest, bicubic, area and the antialiased kernels in vectorised
  NumPy, to float32 rounding (see ``docs/benchmarks.md`` for the tolerances).

Every decoder accepts one encoded image (``bytes``-like) or a batch (a list,
tuple or object array of them). A batch is decoded on a thread pool (the
decoders release the GIL) and comes back stacked when all shapes agree, as a
list otherwise; ``decode_batch(..., size=(h, w))`` resizes each image in the
worker and always stacks.

``decode_jpeg`` and ``decode_random_crop_and_resize`` take ``device="cuda"``:
the whole batch decoded on the GPU in one call (nvImageCodec, else
torchvision's nvJPEG) and cropped, resized, flipped and normalised there in
batched tensor ops, with the crops and flips of the CPU path for the same
seed (``sample_crops`` draws them); ``device_jpeg_backend`` names the decoder.

Pillow and simplejpeg are optional (``pip install tfrx[image]``), and so are
PyTorch, torchvision and nvImageCodec (``pip install tfrx[gpu]``); all are
imported on first use, never by ``import tfrx``.
"""

from __future__ import annotations

from tfrx.image._common import image_format, jpeg_backend
from tfrx.image._decode import decode_batch, decode_image
from tfrx.image._dtype import convert_image_dtype, normalize, per_image_standardization, rgb_to_grayscale
from tfrx.image._formats import decode_bmp, decode_gif, decode_webp
from tfrx.image._crop import central_crop, crop_to_bounding_box, pad_to_bounding_box, resize_with_crop_or_pad
from tfrx.image._boxes import sample_distorted_bounding_box
from tfrx.image._crop_resize import decode_crop_and_resize
from tfrx.image._device import decode_jpeg, decode_random_crop_and_resize, device_jpeg_backend, sample_crops
from tfrx.image._fused import decode_and_resize
from tfrx.image._jpeg import decode_and_crop_jpeg, encode_jpeg, extract_jpeg_shape
from tfrx.image._partial import partial_jpeg_backend
from tfrx.image._png import decode_png, encode_png
from tfrx.image._random import flip_left_right, flip_up_down, random_crop, random_flip_left_right, random_flip_up_down
from tfrx.image._resize import resize

__all__ = [
    "decode_jpeg",
    "decode_png",
    "decode_gif",
    "decode_bmp",
    "decode_webp",
    "decode_image",
    "decode_batch",
    "image_format",
    "encode_jpeg",
    "encode_png",
    "resize",
    "resize_with_crop_or_pad",
    "crop_to_bounding_box",
    "pad_to_bounding_box",
    "central_crop",
    "random_crop",
    "flip_left_right",
    "flip_up_down",
    "random_flip_left_right",
    "random_flip_up_down",
    "decode_and_crop_jpeg",
    "extract_jpeg_shape",
    "decode_crop_and_resize",
    "decode_random_crop_and_resize",
    "decode_and_resize",
    "sample_distorted_bounding_box",
    "partial_jpeg_backend",
    "convert_image_dtype",
    "per_image_standardization",
    "normalize",
    "rgb_to_grayscale",
    "jpeg_backend",
    "device_jpeg_backend",
    "sample_crops",
]
