"""zip: elements of several datasets side by side, stopping at the shortest."""

from __future__ import annotations

import builtins
from typing import Any

from tfrx.data._dataset import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    IterContext,
    transformation,
)
from tfrx.data._structure import flatten, map_structure

__all__ = ["ZipDataset"]


class _ZipIterator(DatasetIterator):
    def __init__(self, structure: Any, parents: list[DatasetIterator]) -> None:
        self._structure = structure
        self._children = tuple(parents)

    def __next__(self):
        values = iter([next(p) for p in self._children])
        return map_structure(lambda _: next(values), self._structure)

    def get_state(self) -> dict:
        return {"parents": [p.get_state() for p in self._children]}

    def set_state(self, state: dict) -> None:
        for p, s in builtins.zip(self._children, state["parents"]):
            p.set_state(s)


class ZipDataset(Dataset):
    def __init__(self, datasets: Any) -> None:
        leaves = flatten(datasets)
        if not leaves or not all(isinstance(d, Dataset) for d in leaves):
            raise TypeError("zip: expected a (nested) tuple or dict of datasets")
        super().__init__(*leaves)
        self._structure = datasets

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _ZipIterator(self._structure, [d._iterator(ctx) for d in self._inputs])

    def cardinality(self) -> int:
        ns = [d.cardinality() for d in self._inputs]
        if 0 in ns:
            return 0
        if UNKNOWN_CARDINALITY in ns:
            return UNKNOWN_CARDINALITY
        finite = [n for n in ns if n >= 0]
        return min(finite) if finite else INFINITE_CARDINALITY


@transformation(static=True)
def zip(*datasets: Any) -> Dataset:  # noqa: A001
    """``Dataset.zip((a, b))`` or ``Dataset.zip(a, b)``: tuples (or dicts) of elements."""
    structure = datasets[0] if len(datasets) == 1 and not isinstance(datasets[0], Dataset) else tuple(datasets)
    return ZipDataset(structure)
