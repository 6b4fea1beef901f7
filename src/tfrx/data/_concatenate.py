"""concatenate: the elements of this dataset, then those of another."""

from __future__ import annotations

from tfrx.data._dataset import INFINITE_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation

__all__ = ["ConcatenateDataset"]


class _ConcatenateIterator(DatasetIterator):
    def __init__(self, datasets: tuple[Dataset, ...], ctx: IterContext) -> None:
        self._datasets = datasets
        self._ctx = ctx
        self._which = 0
        self._current: DatasetIterator | None = datasets[0]._iterator(ctx)

    @property
    def _children(self):
        return (self._current,)

    def __next__(self):
        while self._current is not None:
            try:
                return next(self._current)
            except StopIteration:
                self._current.close()
                self._which += 1
                self._current = (
                    self._datasets[self._which]._iterator(self._ctx) if self._which < len(self._datasets) else None
                )
        raise StopIteration

    def get_state(self) -> dict:
        child = None if self._current is None else self._current.get_state()
        return {"ctx_epoch": list(self._ctx.epoch), "which": self._which, "child": child}

    def set_state(self, state: dict) -> None:
        if self._current is not None:
            self._current.close()
        self._ctx = self._ctx.with_epoch(state["ctx_epoch"])
        self._which = int(state["which"])
        self._current = None
        if self._which < len(self._datasets):
            self._current = self._datasets[self._which]._iterator(self._ctx)
            self._current.set_state(state["child"])


class ConcatenateDataset(Dataset):
    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _ConcatenateIterator(self._inputs, ctx)

    def cardinality(self) -> int:
        a, b = (d.cardinality() for d in self._inputs)
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        return a + b if a >= 0 and b >= 0 else min(a, b)


@transformation
def concatenate(self: Dataset, dataset: Dataset) -> Dataset:
    """This dataset's elements followed by ``dataset``'s."""
    return ConcatenateDataset(self, dataset)
