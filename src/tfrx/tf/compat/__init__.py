"""``tf.compat``: only ``tf.compat.v1.python_io`` (TFRecord reading and writing of TensorFlow 1)."""

from __future__ import annotations

from tfrx.tf.compat import v1

__all__ = ["v1"]
