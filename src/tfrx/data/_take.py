"""take: the first ``count`` elements (all when ``count`` is -1)."""

from __future__ import annotations

from tfrx.data._dataset import INFINITE_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation

__all__ = ["TakeDataset"]


class _TakeIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, count: int) -> None:
        self._parent = parent
        self._children = (parent,)
        self._count = count
        self._taken = 0

    def __next__(self):
        if 0 <= self._count <= self._taken:
            raise StopIteration
        value = next(self._parent)
        self._taken += 1
        return value

    def get_state(self) -> dict:
        return {"taken": self._taken, "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._taken = int(state["taken"])


class TakeDataset(Dataset):
    def __init__(self, input_dataset: Dataset, count: int) -> None:
        super().__init__(input_dataset)
        self._count = int(count)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _TakeIterator(self._inputs[0]._iterator(ctx), self._count)

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        if self._count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self._count
        return n if n < 0 else min(n, self._count)


@transformation
def take(self: Dataset, count: int) -> Dataset:
    """At most ``count`` elements; ``-1`` takes them all."""
    return TakeDataset(self, count)
