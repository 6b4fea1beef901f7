"""scan: a running state through the elements (``tf.data.Dataset.scan``).

``scan_func(state, element)`` returns ``(new_state, output)``; the first
call gets ``initial_state``. Like ``map``, a tuple element is passed as
separate arguments after the state. States are NumPy values, ``bytes`` and
dicts/tuples of them.

State: the input's state and the running state, encoded exactly
(``elements.py``), so a restore does not replay the input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._elements import element_from_json, element_to_json
from tfrx.data._structure import map_structure, to_numpy

__all__ = ["ScanDataset"]


def _call(fn: Callable, state: Any, value: Any):
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return fn(state, *value)
    return fn(state, value)


class _ScanIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, initial_state: Any, fn: Callable) -> None:
        self._parent = parent
        self._children = (parent,)
        self._state = initial_state
        self._fn = fn

    def __next__(self):
        value = next(self._parent)
        out = _call(self._fn, self._state, value)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"scan: scan_func must return a (new_state, output) pair, got {type(out).__name__}")
        self._state = map_structure(to_numpy, out[0])
        return out[1]

    def get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "scan_state": element_to_json(self._state)}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._state = element_from_json(state["scan_state"])


class ScanDataset(Dataset):
    def __init__(self, input_dataset: Dataset, initial_state: Any, scan_func: Callable) -> None:
        if not callable(scan_func):
            raise TypeError("scan: scan_func must be callable as scan_func(state, element) -> (new_state, output)")
        super().__init__(input_dataset)
        self._initial = map_structure(to_numpy, initial_state)
        self._fn = scan_func

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _ScanIterator(self._inputs[0]._iterator(ctx), self._initial, self._fn)

    def cardinality(self) -> int:
        return self._inputs[0].cardinality()


@transformation
def scan(self: Dataset, initial_state: Any, scan_func: Callable) -> Dataset:
    """Outputs of ``scan_func(state, element) -> (new_state, output)``, threading the state through."""
    return ScanDataset(self, initial_state, scan_func)
