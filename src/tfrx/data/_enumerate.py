"""enumerate: ``(index, element)`` pairs, counting from ``start``."""

from __future__ import annotations

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation

__all__ = ["EnumerateDataset"]


class _EnumerateIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, start: int) -> None:
        self._parent = parent
        self._children = (parent,)
        self._next = start

    def __next__(self):
        value = next(self._parent)
        i = self._next
        self._next += 1
        return np.int64(i), value

    def get_state(self) -> dict:
        return {"next": self._next, "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._next = int(state["next"])


class EnumerateDataset(Dataset):
    def __init__(self, input_dataset: Dataset, start: int) -> None:
        super().__init__(input_dataset)
        self._start = int(start)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _EnumerateIterator(self._inputs[0]._iterator(ctx), self._start)

    def cardinality(self) -> int:
        return self._inputs[0].cardinality()


@transformation
def enumerate(self: Dataset, start: int = 0) -> Dataset:  # noqa: A001
    """Pairs ``(i, element)`` with ``i`` counting from ``start``."""
    return EnumerateDataset(self, start)
