"""rebatch: batches cut again to other sizes without unbatching element by element.

As ``tf.data.Dataset.rebatch(batch_size, drop_remainder=False)``: the
input's batches are concatenated and cut into batches of ``batch_size``
rows; a list of sizes is used in turn, round robin. The last, smaller batch
is kept unless ``drop_remainder``. Equal to ``unbatch().batch(n)`` but works
on whole arrays (NumPy slicing and one concatenate per output batch).
The same iterator cuts the reader's ``RecordBatch`` es of raw records into
the batches of ``TFRecordDataset(...).batch(n)`` (:func:`record_rebatcher`).

State: the input's state before the batch being cut, the row offset in it
and the number of batches produced (which size comes next).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tfrx.data.dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data.structure import flatten, leading_dim, map_structure
from tfrx.io.batch import RecordBatch

__all__ = ["RebatchDataset", "RebatchIterator", "record_rebatcher"]


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


class RebatchIterator(DatasetIterator):
    """Cuts the batches of ``parent`` into batches of ``sizes[k % len(sizes)]`` rows.

    ``rows(piece)``, ``cut(piece, start, stop)`` and ``join(parts)`` say how
    to count, slice and concatenate a piece: structures of arrays by default,
    ``RecordBatch`` es for the batch-native ``batch`` over records
    (:func:`record_rebatcher`).
    """

    def __init__(self, parent: DatasetIterator, sizes: list[int], drop: bool,
                 rows: Callable = _rows, cut: Callable = _cut, join: Callable = _concat) -> None:
        self._parent = parent
        self._children = (parent,)
        self._sizes = sizes
        self._drop = drop
        self._ops = (rows, cut, join)
        self._piece = None
        self._rows = 0
        self._before = None
        self._offset = 0
        self._count = 0

    def __next__(self):
        rows, cut, join = self._ops
        need = self._sizes[self._count % len(self._sizes)]
        parts = []
        while need:
            if self._offset >= self._rows:
                before = self._parent.get_state()
                try:
                    piece = next(self._parent)
                except StopIteration:
                    self._piece, self._rows, self._offset = None, 0, 0
                    break
                self._piece, self._rows, self._before, self._offset = piece, rows(piece), before, 0
            take = min(need, self._rows - self._offset)
            start = self._offset
            parts.append(cut(self._piece, start, start + take))
            self._offset += take
            need -= take
            if self._offset >= self._rows:
                self._piece = None  # (a reader reuses a buffer only once nothing refers to it)
        if not parts or (self._drop and need):
            raise StopIteration
        self._count += 1
        return join(parts)

    def get_state(self) -> dict:
        if self._offset < self._rows:
            return {"parent": self._before, "offset": self._offset, "count": self._count}
        return {"parent": self._parent.get_state(), "offset": 0, "count": self._count}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._piece, self._offset, self._rows = None, 0, 0
        self._count = int(state["count"])
        if state["offset"]:
            self._before = state["parent"]
            self._piece = next(self._parent)
            self._rows = self._ops[0](self._piece)
            self._offset = int(state["offset"])


def _cut_records(batch: RecordBatch, start: int, stop: int) -> RecordBatch:
    return batch if start == 0 and stop == len(batch) else batch[start:stop]


def record_rebatcher(pieces: DatasetIterator, batch_size: int, drop_remainder: bool) -> RebatchIterator:
    """Batches of exactly ``batch_size`` records (the last one smaller unless ``drop_remainder``) out
    of a stream of :class:`tfrx.RecordBatch` es; a batch made of one piece is that piece, uncopied."""
    return RebatchIterator(pieces, [batch_size], drop_remainder, len, _cut_records, RecordBatch.concat)


class RebatchDataset(Dataset):
    def __init__(self, input_dataset: Dataset, batch_size, drop_remainder: bool) -> None:
        sizes = [int(s) for s in np.atleast_1d(np.asarray(batch_size)).tolist()]
        if not sizes or any(s < 1 for s in sizes):
            raise ValueError(f"rebatch: batch_size must be a positive int or a list of them, got {batch_size!r}")
        super().__init__(input_dataset)
        self._sizes = sizes
        self._drop = bool(drop_remainder)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return RebatchIterator(self._inputs[0]._iterator(ctx), self._sizes, self._drop)


@transformation
def rebatch(self: Dataset, batch_size: int | Sequence[int], drop_remainder: bool = False, name: str | None = None) -> Dataset:
    """The input's batches re-cut into batches of ``batch_size`` rows (a list of sizes: in turn)."""
    return RebatchDataset(self, batch_size, drop_remainder)
