"""``tf.data``: :mod:`tfrx.data` under TensorFlow's names (``Dataset``, ``TFRecordDataset``, ``AUTOTUNE``, ``Options``).

Every public name of :mod:`tfrx.data` is reachable here, including ones
added later; ``tf.data.experimental`` holds TensorFlow's experimental aliases.
Elements are NumPy arrays and ``bytes`` rather than tensors.
"""

from __future__ import annotations

import tfrx.data as _data
from tfrx.data import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    Options,
    TFRecordDataset,
)
from tfrx.tf.data import experimental

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "Options",
    "TFRecordDataset",
    "experimental",
]


def __getattr__(name: str):
    try:
        return getattr(_data, name)
    except AttributeError:
        raise AttributeError(f"module 'tfrx.tf.data' has no attribute {name!r} (tfrx.data has no such name)") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(getattr(_data, "__all__", ())))
