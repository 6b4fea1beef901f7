"""choose_from_datasets: elements picked from several datasets by a dataset of indices.

For each index ``i`` from ``choice_dataset`` the next element of
``datasets[i]`` is produced, as ``tf.data.Dataset.choose_from_datasets``
(TensorFlow's directed interleave). When the chosen dataset is exhausted:
with ``stop_on_empty_dataset=True`` (the default) the output ends; otherwise
that dataset is dropped and the index is skipped, and the output ends when
the choices end or every dataset is exhausted (for ``sample_from_datasets``:
every dataset of non-zero weight). An index outside
``0..len(datasets)-1`` raises ``IndexError``.

State: the choice iterator's state and each input's state (``None`` once
exhausted).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation

__all__ = ["DirectedInterleaveDataset"]


class _DirectedInterleaveIterator(DatasetIterator):
    def __init__(self, ds: DirectedInterleaveDataset, ctx: IterContext) -> None:
        self._ds, self._ctx = ds, ctx
        self._selector = ds._inputs[0]._iterator(ctx)
        self._inputs: list[DatasetIterator | None] = [d._iterator(ctx) for d in ds._inputs[1:]]
        self._stop = ds._stop
        self._drawable = ds._drawable
        self._active = len(self._inputs)
        self._done = False

    @property
    def _children(self):
        return (self._selector, *self._inputs)

    def __next__(self):
        while not self._done:
            try:
                choice = next(self._selector)
            except StopIteration:
                self._done = True
                break
            i = int(np.asarray(choice).reshape(()))
            if not 0 <= i < len(self._inputs):
                raise IndexError(
                    f"choose_from_datasets: choice {i} is outside 0..{len(self._inputs) - 1} "
                    f"({len(self._inputs)} datasets); the choice dataset must yield valid indices"
                )
            it = self._inputs[i]
            if it is None:
                continue
            try:
                return next(it)
            except StopIteration:
                it.close()
                self._inputs[i] = None
                self._active -= 1
                if self._stop or self._active == 0 or not self._can_draw():
                    self._done = True
        raise StopIteration

    def _can_draw(self) -> bool:
        """Whether a random selector can still draw an input that is not exhausted."""
        if self._drawable is None:
            return True
        return any(it is not None and ok for it, ok in zip(self._inputs, self._drawable))

    def get_state(self) -> dict:
        return {
            "done": self._done,
            "selector": self._selector.get_state(),
            "inputs": [None if it is None else it.get_state() for it in self._inputs],
        }

    def set_state(self, state: dict) -> None:
        self._selector.set_state(state["selector"])
        for i, s in enumerate(state["inputs"]):
            it = self._inputs[i]
            if s is None:
                if it is not None:
                    it.close()
                self._inputs[i] = None
            else:
                if it is None:  # exhausted since the state was saved: open it again
                    it = self._inputs[i] = self._ds._inputs[1 + i]._iterator(self._ctx)
                it.set_state(s)
        self._active = sum(it is not None for it in self._inputs)
        self._done = bool(state["done"])


class DirectedInterleaveDataset(Dataset):
    def __init__(
        self,
        selector: Dataset,
        datasets: Sequence[Dataset],
        stop_on_empty_dataset: bool,
        drawable: list[bool] | None = None,
    ) -> None:
        datasets = list(datasets)
        if not datasets:
            raise ValueError("choose_from_datasets: `datasets` must hold at least one dataset")
        for i, d in enumerate(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"choose_from_datasets: datasets[{i}] is a {type(d).__name__}, not a tfrx Dataset")
        if not isinstance(selector, Dataset):
            raise TypeError(f"choose_from_datasets: choice_dataset is a {type(selector).__name__}, not a tfrx Dataset")
        super().__init__(selector, *datasets)
        self._stop = bool(stop_on_empty_dataset)
        # For a random selector: which inputs it can draw (weight > 0). When every
        # drawable input is exhausted the output ends instead of drawing forever.
        self._drawable = drawable

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _DirectedInterleaveIterator(self, ctx)


@transformation(static=True)
def choose_from_datasets(
    datasets: Sequence[Dataset], choice_dataset: Dataset, stop_on_empty_dataset: bool = True
) -> Dataset:
    """The next element of ``datasets[i]`` for each index ``i`` of ``choice_dataset``."""
    return DirectedInterleaveDataset(choice_dataset, datasets, stop_on_empty_dataset)
