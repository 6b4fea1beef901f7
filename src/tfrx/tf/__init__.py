"""``import tfrx.tf as tf``: TensorFlow's namespace for the TFRecord stack, backed by tfrx.

The names, signatures and semantics are TensorFlow's for the subset that
reads, writes and parses TFRecords: ``tf.io`` (with ``tf.io.gfile``),
``tf.data`` (with ``tf.data.experimental``), ``tf.train``, ``tf.image``,
``tf.compat.v1.python_io``, the dtypes, ``tf.TensorSpec`` and a few array
helpers (``cast``, ``reshape``, ``shape``, ``constant``, ``stack``,
``concat``, ``squeeze``, ``expand_dims``, ``one_hot``).

Every name here is tfrx's own implementation re-exported; this package holds
no copies. Where TensorFlow returns a ``tf.Tensor`` these return
:class:`tfrx.tf.Tensor` values: NumPy arrays (strings as object arrays of
``bytes``) and scalar strings as ``bytes``, each also answering ``.numpy()``
with the plain value, without a copy. Where TensorFlow's semantics cannot be
kept, the name raises ``NotImplementedError`` naming the supported
alternative (see ``docs/porting.md``).
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
from tfrx.tf._tensor import Tensor
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

newaxis = None  # tf.newaxis, as NumPy's


def print(*inputs: object, **kwargs: object) -> None:  # noqa: A001 - tf.print
    """``tf.print``: Python's ``print`` (values here are concrete; ``output_stream`` and ``summarize`` are ignored)."""
    import builtins

    kwargs = {k: v for k, v in kwargs.items() if k in ("sep", "end")}
    builtins.print(*inputs, **kwargs)  # type: ignore[call-overload]


globals()["bool"] = _bool  # tf.bool, without shadowing the builtin inside this module
half = float16
double = float64

__all__ = [
    "DType",
    "Tensor",
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
    "newaxis",
    "one_hot",
    "print",
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


def __getattr__(name: str):
    if name == "keras":
        # tf.keras: Keras 3 itself (any backend), with tfrx datasets accepted by fit/evaluate/predict.
        import keras

        import tfrx.integrations.keras  # noqa: F401 - registers tfrx datasets with Keras's adapter lookup

        return keras
    raise AttributeError(f"module 'tfrx.tf' has no attribute {name!r}; see docs/porting.md for what tfrx.tf has")
