"""repeat: the dataset ``count`` times, or forever when ``count`` is None or -1.

Each repetition is a new epoch: seeded shuffles upstream reshuffle (when
``reshuffle_each_iteration``), and the epoch number is part of the state.
"""

from __future__ import annotations

from tfrx.data._dataset import INFINITE_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation

__all__ = ["RepeatDataset"]


class _RepeatIterator(DatasetIterator):
    def __init__(self, dataset: Dataset, ctx: IterContext, count: int) -> None:
        self._dataset = dataset
        self._ctx = ctx
        self._count = count
        self._epoch = 0
        self._current: DatasetIterator | None = None
        self._produced_this_epoch = False

    @property
    def _children(self):
        return (self._current,)

    def _open(self) -> DatasetIterator:
        self._current = self._dataset._iterator(self._ctx.for_epoch(self._epoch))
        self._produced_this_epoch = False
        return self._current

    def __next__(self):
        while self._count < 0 or self._epoch < self._count:
            it = self._current or self._open()
            try:
                value = next(it)
            except StopIteration:
                it.close()
                self._current = None
                empty = not self._produced_this_epoch
                self._epoch += 1
                if empty:  # an empty input repeated forever is still empty
                    break
                continue
            self._produced_this_epoch = True
            return value
        raise StopIteration

    def get_state(self) -> dict:
        child = None if self._current is None else self._current.get_state()
        return {
            "ctx_epoch": list(self._ctx.epoch),
            "epoch": self._epoch,
            "produced": self._produced_this_epoch,
            "child": child,
        }

    def set_state(self, state: dict) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        self._ctx = self._ctx.with_epoch(state["ctx_epoch"])
        self._epoch = int(state["epoch"])
        if state["child"] is not None:
            self._open().set_state(state["child"])
            self._produced_this_epoch = bool(state["produced"])


class RepeatDataset(Dataset):
    def __init__(self, input_dataset: Dataset, count: int | None) -> None:
        super().__init__(input_dataset)
        self._count = -1 if count is None else int(count)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _RepeatIterator(self._inputs[0], ctx, self._count)

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        if self._count == 0 or n == 0:
            return 0
        if self._count < 0:
            return INFINITE_CARDINALITY if n != -2 else n
        return n if n < 0 else n * self._count


@transformation
def repeat(self: Dataset, count: int | None = None) -> Dataset:
    """Repeats the dataset ``count`` times (forever when ``None`` or ``-1``)."""
    return RepeatDataset(self, count)
