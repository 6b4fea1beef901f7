"""unbatch: splits every element along its first dimension into separate elements.

The same iterator gives the records of a stream of ``RecordBatch`` es (:func:`split_records`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tfrx.data._dataset import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    IterContext,
    transformation,
)
from tfrx.data._structure import leading_dim, slice_structure
from tfrx.io._batch import RecordBatch

__all__ = ["SPLIT_BATCH", "UnbatchDataset", "UnbatchIterator", "split_records"]


class _Slices:
    """The elements of a batch (a structure of arrays), sliced when asked for."""

    __slots__ = ("_batch",)

    def __init__(self, batch) -> None:
        self._batch = batch

    def __len__(self) -> int:
        return leading_dim(self._batch)

    def __getitem__(self, i: int):
        return slice_structure(self._batch, i)


class UnbatchIterator(DatasetIterator):
    """The elements of each batch of ``parent`` in turn; ``split(batch)`` gives a batch's elements as a sequence."""

    def __init__(self, parent: DatasetIterator, split=_Slices) -> None:
        self._parent = parent
        self._children = (parent,)
        self._split = split
        self._current: Sequence = ()
        self._size = 0
        self._offset = 0
        self._before = None  # parent state before the current batch

    def __next__(self):
        while self._offset >= self._size:
            before = self._parent.get_state()
            batch = next(self._parent)
            current = self._split(batch)
            self._before, self._current, self._size, self._offset = before, current, len(current), 0
        self._offset += 1
        return self._current[self._offset - 1]

    def ready(self) -> bool:
        """For a parent that reads ahead (``PrefetchIterator``): True when ``next`` would not wait."""
        return self._offset < self._size or self._parent.ready()

    def get_state(self) -> dict:
        if self._offset >= self._size:
            return {"parent": self._parent.get_state(), "offset": 0, "within": False}
        return {"parent": self._before, "offset": self._offset, "within": True}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._current, self._size, self._offset = (), 0, 0
        if state["within"]:
            self._before = state["parent"]
            self._current = self._split(next(self._parent))
            self._size = len(self._current)
            self._offset = int(state["offset"])


#: How many records the record-by-record paths over batch-native readers read at a time, to split them
#: into ``bytes`` (:func:`split_records`).
SPLIT_BATCH = 256


def split_records(batches: DatasetIterator) -> UnbatchIterator:
    """The records (``bytes``) of a stream of :class:`tfrx.RecordBatch` es, made per batch in one native call."""
    return UnbatchIterator(batches, RecordBatch.to_list)


class UnbatchDataset(Dataset):
    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return UnbatchIterator(self._inputs[0]._iterator(ctx))

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        return n if n in (0, INFINITE_CARDINALITY) else UNKNOWN_CARDINALITY


@transformation
def unbatch(self: Dataset) -> Dataset:
    """Each element split into its slices along the first dimension."""
    return UnbatchDataset(self)
