"""rebatch: batches cut again to other sizes without unbatching element by element.

As ``tf.data.Dataset.rebatch(batch_size, drop_remainder=False)``: the
input's batches are concatenated and cut into batches of ``batch_size``
rows; a list of sizes is used in turn, round robin. The last, smaller batch
is kept unless ``drop_remainder``. Equal to ``unbatch().batch(n)`` but works
on whole arrays (NumPy slicing and one concatenate per output batch).
(``tfrecord.py`` has the same cut for ``RecordBatch`` es of raw records.)

State: the input's state before the batch being cut, the row offset in it
and the number of batches produced (which size comes next).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tfrx.data.dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data.structure import flatten, leading_dim, map_structure

__all__ = ["RebatchDataset"]


def _concat(parts: list):
    if len(parts) == 1:
        return parts[0]
    return map_structure(lambda *xs: np.concatenate(xs, axis=0), *parts)


class _RebatchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, sizes: list[int], drop: bool) -> None:
        self._parent = parent
        self._children = (parent,)
        self._sizes = sizes
        self._drop = drop
        self._piece = None
        self._rows = 0
        self._before = None
        self._offset = 0
        self._count = 0

    def __next__(self):
        need = self._sizes[self._count % len(self._sizes)]
        parts = []
        while need:
            if self._piece is None or self._offset >= self._rows:
                before = self._parent.get_state()
                try:
                    piece = next(self._parent)
                except StopIteration:
                    self._piece = None
                    break
                if not flatten(piece):
                    raise ValueError("rebatch: an input element has no components")
                self._piece, self._rows, self._before, self._offset = piece, leading_dim(piece), before, 0
            take = min(need, self._rows - self._offset)
            start = self._offset
            parts.append(map_structure(lambda a, s=start, t=take: np.asarray(a)[s : s + t], self._piece))
            self._offset += take
            need -= take
        if not parts or (self._drop and need):
            raise StopIteration
        self._count += 1
        return _concat(parts)

    def get_state(self) -> dict:
        if self._piece is not None and self._offset < self._rows:
            return {"parent": self._before, "offset": self._offset, "count": self._count}
        return {"parent": self._parent.get_state(), "offset": 0, "count": self._count}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._piece, self._offset, self._rows = None, 0, 0
        self._count = int(state["count"])
        if state["offset"]:
            self._before = state["parent"]
            self._piece = next(self._parent)
            self._rows = leading_dim(self._piece)
            self._offset = int(state["offset"])


class RebatchDataset(Dataset):
    def __init__(self, input_dataset: Dataset, batch_size, drop_remainder: bool) -> None:
        sizes = [int(s) for s in np.atleast_1d(np.asarray(batch_size)).tolist()]
        if not sizes or any(s < 1 for s in sizes):
            raise ValueError(f"rebatch: batch_size must be a positive int or a list of them, got {batch_size!r}")
        super().__init__(input_dataset)
        self._sizes = sizes
        self._drop = bool(drop_remainder)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _RebatchIterator(self._inputs[0]._iterator(ctx), self._sizes, self._drop)


@transformation
def rebatch(self: Dataset, batch_size: int | Sequence[int], drop_remainder: bool = False, name: str | None = None) -> Dataset:
    """The input's batches re-cut into batches of ``batch_size`` rows (a list of sizes: in turn)."""
    return RebatchDataset(self, batch_size, drop_remainder)
