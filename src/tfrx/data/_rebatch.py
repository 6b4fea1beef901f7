"""rebatch: batches cut again to other sizes without unbatching element by element.

As ``tf.data.Dataset.rebatch(batch_size, drop_remainder=False)``: the
input's batches are concatenated and cut into batches of ``batch_size``
rows; a list of sizes is used in turn, round robin. The last, smaller batch
is kept unless ``drop_remainder``. Equal to ``unbatch().batch(n)`` but works
on whole arrays (NumPy slicing and one concatenate per output batch).
The same iterator cuts the reader's ``RecordBatch`` es of raw records into
the batches of ``TFRecordDataset(...).batch(n)`` (:func:`record_rebatcher`).

The cutting loop is ``batch``'s (:class:`tfrx.data._batch.BatchIterator`),
given pieces instead of single elements. State: the input's state before
the batch being cut, the row offset in it, the number of batches produced
(which size comes next) and whether the input ended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tfrx.data._batch import BatchIterator
from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._structure import flatten, leading_dim, map_structure
from tfrx.io._batch import RecordBatch

__all__ = ["RebatchDataset", "rebatcher", "record_rebatcher"]


def _concat(parts: list):
    if len(parts) == 1:
        return parts[0]
    return map_structure(lambda *xs: np.concatenate(xs, axis=0), *parts)


def _rows(piece) -> int:
    if not flatten(piece):
        raise ValueError("rebatch: an input element has no components")
    return leading_dim(piece)


def _cut(piece, start: int, stop: int):
    return map_structure(lambda a: np.asarray(a)[start:stop], piece)


def rebatcher(
    parent: DatasetIterator,
    sizes: list[int],
    drop: bool,
    rows: Callable = _rows,
    cut: Callable = _cut,
    join: Callable = _concat,
) -> BatchIterator:
    """Cuts the batches of ``parent`` into batches of ``sizes[k % len(sizes)]`` rows.

    ``rows(piece)``, ``cut(piece, start, stop)`` and ``join(parts)`` say how
    to count, slice and concatenate a piece: structures of arrays by default,
    ``RecordBatch`` es for the batch-native ``batch`` over records
    (:func:`record_rebatcher`). The loop is ``batch``'s
    (:class:`tfrx.data._batch.BatchIterator`) over pieces instead of elements.
    """
    return BatchIterator(parent, sizes, drop, join, (rows, cut))


def _cut_records(batch: RecordBatch, start: int, stop: int) -> RecordBatch:
    return batch if start == 0 and stop == len(batch) else batch[start:stop]


def record_rebatcher(
    pieces: DatasetIterator,
    batch_size: int,
    drop_remainder: bool,
    join: Callable[[list], RecordBatch] = RecordBatch.concat,
) -> BatchIterator:
    """Batches of exactly ``batch_size`` records (the last one smaller unless ``drop_remainder``) out
    of a stream of :class:`tfrx.RecordBatch` es; a batch made of one piece is that piece, uncopied.
    ``join`` makes a batch of pieces' cuts (by default copied into one buffer)."""
    return rebatcher(pieces, [batch_size], drop_remainder, len, _cut_records, join)


class RebatchDataset(Dataset):
    def __init__(self, input_dataset: Dataset, batch_size, drop_remainder: bool) -> None:
        sizes = [int(s) for s in np.atleast_1d(np.asarray(batch_size)).tolist()]
        if not sizes or any(s < 1 for s in sizes):
            raise ValueError(f"rebatch: batch_size must be a positive int or a list of them, got {batch_size!r}")
        super().__init__(input_dataset)
        self._sizes = sizes
        self._drop = bool(drop_remainder)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return rebatcher(self._inputs[0]._iterator(ctx), self._sizes, self._drop)


@transformation
def rebatch(
    self: Dataset, batch_size: int | Sequence[int], drop_remainder: bool = False, name: str | None = None
) -> Dataset:
    """The input's batches re-cut into batches of ``batch_size`` rows (a list of sizes: in turn)."""
    return RebatchDataset(self, batch_size, drop_remainder)
