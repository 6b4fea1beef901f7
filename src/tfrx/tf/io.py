"""``tf.io``: TFRecord writing, Example parsing, raw/image/tensor codecs and ``gfile``, from tfrx.

The functions are tfrx's (each one's ``__wrapped__``); what TensorFlow
returns as tensors comes back as :class:`tfrx.tf.Tensor`: parsed features as
NumPy arrays with ``.numpy()`` (``VarLenFeature`` as :class:`tfrx.SparseArray`,
``RaggedFeature`` as :class:`tfrx.RaggedArray`), ``read_file``,
``serialize_tensor`` and the encoders as ``bytes`` with ``.numpy()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx import codec as _codec
from tfrx import image as _image
from tfrx import parsing as _parsing
from tfrx.codec import _tensor_proto as _tensor_proto
from tfrx.io import TFRecordOptions, TFRecordWriter, gfile
from tfrx.io import gfile as _gfile
from tfrx.io.gfile import write_file
from tfrx.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
)
from tfrx.tf._tensor import returns_tensors


def _parse_example(serialized: Any, features: Any, example_names: Any = None, name: Any = None, **kwargs: Any) -> Any:
    """``tf.io.parse_example``: a batch of records, or one record (a scalar), whose features then have no
    batch dimension, as TensorFlow gives them (the tutorials map it over single records)."""
    del example_names, name
    single = isinstance(serialized, bytes) or (isinstance(serialized, np.ndarray) and serialized.ndim == 0)
    if single or hasattr(type(serialized), "__tfrx_trace__"):  # (a placeholder of tfrx.data tracing a map)
        return _parsing.parse_single_example(serialized, features)
    return _parsing.parse_example(serialized, features, **kwargs)


decode_raw = returns_tensors(_codec.decode_raw)
parse_tensor = returns_tensors(_tensor_proto.parse_tensor)
serialize_tensor = returns_tensors(_tensor_proto.serialize_tensor)
decode_and_crop_jpeg = returns_tensors(_image.decode_and_crop_jpeg)
extract_jpeg_shape = returns_tensors(_image.extract_jpeg_shape)
decode_bmp = returns_tensors(_image.decode_bmp)
decode_gif = returns_tensors(_image.decode_gif)
decode_image = returns_tensors(_image.decode_image)
decode_jpeg = returns_tensors(_image.decode_jpeg)
decode_png = returns_tensors(_image.decode_png)
encode_jpeg = returns_tensors(_image.encode_jpeg)
encode_png = returns_tensors(_image.encode_png)
read_file = returns_tensors(_gfile.read_file)
parse_example = returns_tensors(_parse_example)
parse_sequence_example = returns_tensors(_parsing.parse_sequence_example)
parse_single_example = returns_tensors(_parsing.parse_single_example)
parse_single_sequence_example = returns_tensors(_parsing.parse_single_sequence_example)

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
