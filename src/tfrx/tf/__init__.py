"""``import tfrx.tf as tf``: TensorFlow's namespace for the TFRecord stack, backed by tfrx.

The names, signatures and semantics are TensorFlow's for the subset that
reads, writes and parses TFRecords: ``tf.io`` (with ``tf.io.gfile``),
``tf.data`` (with ``tf.data.experimental``), ``tf.train``, ``tf.image``,
``tf.compat.v1.python_io``, the dtypes, ``tf.TensorSpec`` and a few array
helpers (``cast``, ``reshape``, ``shape``, ``constant``, ``stack``,
``concat``, ``squeeze``, ``expand_dims``, ``one_hot``).

Every name here is tfrx's own implementation re-exported; this package holds
no copies. Where TensorFlow returns a ``tf.Tensor`` these return NumPy arrays
(strings as ``bytes`` or object arrays of ``bytes``), so ``.numpy()`` is not
needed and not available. Where TensorFlow's semantics cannot be kept, the
name raises ``NotImplementedError`` naming the supported alternative (see
``docs/porting.md``).
"""

from __future__ import annotations

from tfrx.dtypes import (
    DType,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tfrx.dtypes import bool_ as _bool
from tfrx.tf import compat, data, image, io, train
from tfrx.tf._arrays import (
    TensorSpec,
    as_dtype,
    cast,
    concat,
    constant,
    convert_to_tensor,
    expand_dims,
    one_hot,
    py_function,
    reshape,
    shape,
    squeeze,
    stack,
)

globals()["bool"] = _bool  # tf.bool, without shadowing the builtin inside this module
half = float16
double = float64

__all__ = [
    "DType",
    "TensorSpec",
    "as_dtype",
    "bool",
    "cast",
    "compat",
    "concat",
    "constant",
    "convert_to_tensor",
    "data",
    "double",
    "expand_dims",
    "float16",
    "float32",
    "float64",
    "half",
    "image",
    "int8",
    "int16",
    "int32",
    "int64",
    "io",
    "one_hot",
    "py_function",
    "reshape",
    "shape",
    "squeeze",
    "stack",
    "string",
    "train",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
