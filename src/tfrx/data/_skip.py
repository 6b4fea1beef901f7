"""skip: drops the first ``count`` elements (all when ``count`` is -1)."""

from __future__ import annotations

from tfrx.data._dataset import INFINITE_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation

__all__ = ["SkipDataset"]


class _SkipIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, count: int) -> None:
        self._parent = parent
        self._children = (parent,)
        self._count = count
        self._skipped = False

    def __next__(self):
        if not self._skipped:
            self._skipped = True
            if self._count < 0:
                for _ in self._parent:
                    pass
            else:
                for _ in range(self._count):
                    next(self._parent)
        return next(self._parent)

    def get_state(self) -> dict:
        return {"skipped": self._skipped, "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._skipped = bool(state["skipped"])


class SkipDataset(Dataset):
    def __init__(self, input_dataset: Dataset, count: int) -> None:
        super().__init__(input_dataset)
        self._count = int(count)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _SkipIterator(self._inputs[0]._iterator(ctx), self._count)

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        if n == INFINITE_CARDINALITY:
            return INFINITE_CARDINALITY if self._count >= 0 else 0
        if n < 0:
            return n
        return 0 if self._count < 0 else max(0, n - self._count)


@transformation
def skip(self: Dataset, count: int) -> Dataset:
    """All but the first ``count`` elements; ``-1`` skips everything."""
    return SkipDataset(self, count)
