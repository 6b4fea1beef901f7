"""filter: keeps the elements for which ``predicate(element)`` is true."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tfrx.data._dataset import UNKNOWN_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._map import call_with_element
from tfrx.data._provenance import annotate

__all__ = ["FilterDataset"]


class _FilterIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, predicate: Callable) -> None:
        self._parent = parent
        self._children = (parent,)
        self._predicate = predicate

    def __next__(self):
        while True:
            value = next(self._parent)
            try:
                keep = call_with_element(self._predicate, value)
                if isinstance(keep, np.ndarray):
                    if keep.shape != ():
                        raise ValueError(f"filter: the predicate must return a scalar boolean, got shape {keep.shape}")
                    keep = keep.item()
            except Exception as e:
                raise annotate(e, "filter predicate", None, self._parent.provenance(self._parent.get_state()))
            if keep:
                return value

    def get_state(self) -> dict:
        return {"parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])


class FilterDataset(Dataset):
    def __init__(self, input_dataset: Dataset, predicate: Callable) -> None:
        if not callable(predicate):
            raise TypeError("filter: the predicate must be callable")
        super().__init__(input_dataset)
        self._predicate = predicate

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _FilterIterator(self._inputs[0]._iterator(ctx), self._predicate)

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        return n if n in (0, -1) else UNKNOWN_CARDINALITY


@transformation
def filter(self: Dataset, predicate: Callable) -> Dataset:  # noqa: A001
    """Elements for which ``predicate`` returns true."""
    return FilterDataset(self, self._viewing_function(predicate))
