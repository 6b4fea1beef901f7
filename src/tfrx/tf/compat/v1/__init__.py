"""``tf.compat.v1``: ``python_io`` and the ``io``/``train`` namespaces TensorFlow 1 code uses."""

from __future__ import annotations

from tfrx.tf import io, train
from tfrx.tf.compat.v1 import python_io

__all__ = ["io", "python_io", "train"]
