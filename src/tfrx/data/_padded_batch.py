"""padded_batch: batches elements of different shapes, padding each component.

``padded_shapes`` (per component, ``None`` / ``-1`` for "the longest in the
batch") defaults to padding every dimension to the batch maximum;
``padding_values`` defaults to 0 for numbers and ``b""`` for bytes, as in
``tf.data``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.data._batch import BatchDataset
from tfrx.data._dataset import Dataset, transformation

__all__ = ["PaddedBatchDataset"]


def _pad_component(values: list, padded_shape: Any, padding_value: Any) -> np.ndarray:
    arrays = [np.asarray(v, dtype=object) if isinstance(v, bytes) else np.asarray(v) for v in values]
    rank = arrays[0].ndim
    for a in arrays:
        if a.ndim != rank:
            raise ValueError(f"padded_batch: components have different ranks ({rank} and {a.ndim})")
    longest = [max(a.shape[d] for a in arrays) for d in range(rank)]
    if padded_shape is None:
        target = longest
    else:
        shape = list(np.atleast_1d(np.asarray(padded_shape, dtype=object))) if rank else []
        if len(shape) != rank:
            raise ValueError(f"padded_batch: padded shape {padded_shape!r} does not match rank {rank}")
        target = []
        for d, s in enumerate(shape):
            if s is None or int(s) == -1:
                target.append(longest[d])
            else:
                if longest[d] > int(s):
                    raise ValueError(
                        f"padded_batch: dimension {d} has size {longest[d]}, larger than the padded size {int(s)}"
                    )
                target.append(int(s))
    is_text = any(a.dtype == object or a.dtype.kind in "SU" for a in arrays)
    dtype = object if is_text else np.result_type(*arrays)
    if padding_value is None:
        padding_value = b"" if is_text else 0
    out = np.full((len(arrays), *target), padding_value, dtype=object if is_text else dtype)
    for i, a in enumerate(arrays):
        where: tuple[int | slice, ...] = (i, *(slice(0, n) for n in a.shape))
        out[where] = a
    return out


class PaddedBatchDataset(BatchDataset):
    def __init__(
        self, input_dataset: Dataset, batch_size: int, padded_shapes, padding_values, drop_remainder: bool
    ) -> None:
        super().__init__(input_dataset, batch_size, drop_remainder)
        self._padded_shapes = padded_shapes
        self._padding_values = padding_values

    def _combine(self, elements: list):
        shapes = self._padded_shapes
        values = self._padding_values
        # None (the default) stays None for every component: a tuple of Nones would read as a padded shape.

        def is_shape(x):
            return (
                x is None
                or isinstance(x, (int, np.integer))
                or (isinstance(x, (list, tuple)) and all(s is None or isinstance(s, (int, np.integer)) for s in x))
            )

        def pad(path_values, shape, value):
            return _pad_component(path_values, shape, value)

        # Walk the element structure, picking the matching shape and value entries.
        def walk(elems, shape, value):
            head = elems[0]
            if isinstance(head, dict):
                return {k: walk([e[k] for e in elems], _get(shape, k), _get_value(value, k)) for k in head}
            if isinstance(head, tuple):
                return tuple(
                    walk([e[i] for e in elems], _get(shape, i), _get_value(value, i)) for i in range(len(head))
                )
            return pad(elems, shape if is_shape(shape) else None, value)

        def _get(container, key):
            if container is None:
                return None
            if isinstance(container, dict):
                return container[key]
            if isinstance(container, (tuple, list)) and not is_shape(container):
                return container[key]
            return container

        def _get_value(container, key):
            # Padding values mirror the element's structure (a tuple of Nones is one None per component,
            # not a shape as _get would take it); a scalar applies to every component.
            if isinstance(container, (dict, tuple, list)):
                return container[key]
            return container

        return walk(elements, shapes, values)


@transformation
def padded_batch(
    self: Dataset, batch_size: int, padded_shapes=None, padding_values=None, drop_remainder: bool = False
) -> Dataset:
    """Batches of ``batch_size`` with every component padded to a common shape."""
    return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)
