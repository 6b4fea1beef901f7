"""``tf.io``: TFRecord writing, Example parsing, raw/image/tensor codecs and ``gfile``, from tfrx.

Values TensorFlow returns as tensors come back as NumPy arrays: parsed
features as arrays (``VarLenFeature`` as :class:`tfrx.SparseArray`,
``RaggedFeature`` as :class:`tfrx.RaggedArray`), ``read_file`` and
``serialize_tensor`` as ``bytes``.
"""

from __future__ import annotations

from tfrx.codec import decode_raw
from tfrx.codec.tensor_proto import parse_tensor, serialize_tensor
from tfrx.image import (
    decode_and_crop_jpeg,
    extract_jpeg_shape,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
)
from tfrx.io import TFRecordOptions, TFRecordWriter, gfile
from tfrx.io.gfile import read_file, write_file
from tfrx.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "SparseFeature",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "decode_and_crop_jpeg",
    "extract_jpeg_shape",
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_raw",
    "encode_jpeg",
    "encode_png",
    "gfile",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "parse_tensor",
    "read_file",
    "serialize_tensor",
    "write_file",
]
