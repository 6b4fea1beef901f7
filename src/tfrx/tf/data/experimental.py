"""``tf.data.experimental``: every name of :mod:`tfrx.data.experimental`, and TensorFlow's results.

The names are tfrx's (one implementation, in :mod:`tfrx.data.experimental`);
here the dataset constructors (``load``, ``sample_from_datasets``,
``choose_from_datasets``) make datasets of tensors, as ``tf.data.Dataset``'s
do, and ``cardinality`` returns an int64 tensor. ``dense_to_ragged_batch``
raises ``NotImplementedError`` naming what to use instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tfrx.data.experimental as _experimental
from tfrx.data.experimental import *  # noqa: F403 - this namespace is tfrx's, and a superset of it
from tfrx.tf._tensor import EagerTensor
from tfrx.tf.data import giving_tensors

__all__ = [*_experimental.__all__, "dense_to_ragged_batch"]

load = giving_tensors(_experimental.load)
sample_from_datasets = giving_tensors(_experimental.sample_from_datasets)
choose_from_datasets = giving_tensors(_experimental.choose_from_datasets)


def cardinality(dataset: Any) -> EagerTensor:  # type: ignore[no-redef]  # tfrx's, as a tensor
    """``tf.data.experimental.cardinality``: ``dataset.cardinality()`` as an int64 tensor."""
    return np.asarray(_experimental.cardinality(dataset), dtype=np.int64).view(EagerTensor)


def dense_to_ragged_batch(batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = None) -> Any:
    """Not kept: ragged batches of dense elements; use ``padded_batch`` or ``batch`` of equal shapes."""
    raise NotImplementedError(
        "tf.data.experimental.dense_to_ragged_batch is not supported; use Dataset.padded_batch, "
        "or parse VarLenFeature/RaggedFeature after batch"
    )
