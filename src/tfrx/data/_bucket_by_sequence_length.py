"""bucket_by_sequence_length: batches of elements of similar length, padded per bucket.

As ``tf.data.Dataset.bucket_by_sequence_length``: ``element_length_func``
gives each element's length; bucket ``b`` takes lengths in
``[boundaries[b-1], boundaries[b])`` (the first from minus infinity, the last
to infinity) and is batched by ``bucket_batch_sizes[b]`` (one more size
than boundaries). A bucket's batch is produced when it is full; when the
input ends the partial buckets follow in bucket order (dropped with
``drop_remainder``). Batches are padded as ``padded_batch`` pads them
(``padded_shapes``, ``padding_values``), or stacked unpadded with
``no_padding``. With ``pad_to_bucket_boundary`` the unknown dimensions are
padded to the bucket's boundary minus 1 (an element of the last bucket then
raises ``ValueError``, as TensorFlow's check does).

TensorFlow knows which dimensions are static from the graph; tfrx does not,
so with ``pad_to_bucket_boundary`` and no ``padded_shapes`` only the first
dimension of each component is padded to the boundary (others to the
longest in the batch); pass ``padded_shapes`` with ``None`` for the
dimensions to pad to the boundary.

Built on ``group_by_window`` (its state and restore), as TensorFlow builds it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from tfrx.data._batch import BatchDataset
from tfrx.data._dataset import Dataset, transformation
from tfrx.data._group_by_window import GroupByWindowDataset
from tfrx.data._map import call_with_element
from tfrx.data._padded_batch import PaddedBatchDataset
from tfrx.data._structure import map_structure

__all__ = ["bucket_id"]


def bucket_id(length, boundaries: Sequence[int]) -> int:
    """The bucket of a length: the number of boundaries ``<= length``."""
    n = int(np.asarray(length).reshape(()))
    return int(np.searchsorted(np.asarray(boundaries, dtype=np.int64), n, side="right"))


def _is_shape(x) -> bool:
    return x is None or (isinstance(x, (list, tuple)) and all(s is None or isinstance(s, (int, np.integer)) for s in x))


def _fill_unknown(shapes, filler: int):
    """``padded_shapes`` with every ``None``/-1 dimension set to ``filler``."""
    if isinstance(shapes, dict):
        return {k: _fill_unknown(v, filler) for k, v in shapes.items()}
    if isinstance(shapes, tuple) and not _is_shape(shapes):
        return tuple(_fill_unknown(v, filler) for v in shapes)
    if isinstance(shapes, list) and shapes and not _is_shape(shapes):
        return [_fill_unknown(v, filler) for v in shapes]
    return [filler if s is None or int(s) == -1 else int(s) for s in shapes]


class _BoundaryPaddedBatch(PaddedBatchDataset):
    """padded_batch whose default shapes pad the first dimension to a fixed size."""

    def __init__(self, input_dataset, batch_size, padding_values, drop_remainder, first_dim: int) -> None:
        super().__init__(input_dataset, batch_size, None, padding_values, drop_remainder)
        self._first_dim = first_dim

    def _combine(self, elements: list):
        self._padded_shapes = map_structure(
            lambda a: [self._first_dim] + [None] * (np.ndim(a) - 1) if np.ndim(a) else [], elements[0]
        )
        return super()._combine(elements)


@transformation
def bucket_by_sequence_length(
    self: Dataset,
    element_length_func: Callable,
    bucket_boundaries: Sequence[int],
    bucket_batch_sizes: Sequence[int],
    padded_shapes=None,
    padding_values=None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
    name: str | None = None,
) -> Dataset:
    """Batches of elements bucketed by ``element_length_func``, ``bucket_batch_sizes[b]`` per bucket ``b``."""
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(s) for s in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(
            f"bucket_by_sequence_length: len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1, "
            f"got {len(sizes)} and {len(boundaries)}"
        )
    if any(b2 <= b1 for b1, b2 in itertools.pairwise(boundaries)):
        raise ValueError(f"bucket_by_sequence_length: bucket_boundaries must be increasing, got {boundaries}")
    if any(s < 1 for s in sizes):
        raise ValueError(f"bucket_by_sequence_length: bucket_batch_sizes must be positive, got {sizes}")

    def key_func(*args):
        value = args[0] if len(args) == 1 else args
        return np.int64(bucket_id(call_with_element(element_length_func, value), boundaries))

    def window_size_func(key):
        return sizes[int(key)]

    def batching_fn(key, grouped: Dataset) -> Dataset:
        b = int(key)
        if no_padding:
            return BatchDataset(grouped, sizes[b], drop_remainder)
        if pad_to_bucket_boundary:
            if b >= len(boundaries):
                raise ValueError(
                    "bucket_by_sequence_length: when pad_to_bucket_boundary=True, elements must have "
                    f"length < max(bucket_boundaries) = {boundaries[-1] if boundaries else None}"
                )
            filler = boundaries[b] - 1
            if padded_shapes is None:
                return _BoundaryPaddedBatch(grouped, sizes[b], padding_values, drop_remainder, filler)
            return PaddedBatchDataset(
                grouped, sizes[b], _fill_unknown(padded_shapes, filler), padding_values, drop_remainder
            )
        return PaddedBatchDataset(grouped, sizes[b], padded_shapes, padding_values, drop_remainder)

    return GroupByWindowDataset(self, key_func, batching_fn, None, window_size_func)
