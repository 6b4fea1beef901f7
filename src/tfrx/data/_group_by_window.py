"""group_by_window: elements grouped by a key, each full group reduced to a dataset.

As ``tf.data.Dataset.group_by_window(key_func, reduce_func, window_size=None,
window_size_func=None)``: ``key_func(element)`` gives an integer key; an
element joins its key's group, and when the group holds
``window_size`` (or ``window_size_func(key)``) elements,
``reduce_func(key, group)`` is called with the group as a dataset and the
elements of the dataset it returns are produced. When the input ends, the
groups left are reduced in ascending key order, as TensorFlow does.

State: the input's state, the open groups (their elements encoded exactly,
``elements.py``) and, while a reduced group is being produced, that group
and its iterator's state (``reduce_func`` is called again on restore).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._elements import ElementsDataset, element_from_json, element_to_json
from tfrx.data._map import call_with_element

__all__ = ["GroupByWindowDataset"]


def _key(value) -> int:
    a = np.asarray(value)
    if a.shape != () or a.dtype.kind not in "iub":
        raise TypeError(f"group_by_window: key_func must return an integer scalar, got {value!r}")
    return int(a)


class _GroupByWindowIterator(DatasetIterator):
    def __init__(self, ds: GroupByWindowDataset, ctx: IterContext) -> None:
        self._ds = ds
        self._ctx = ctx
        self._parent = ds._inputs[0]._iterator(ctx)
        self._groups: dict[int, list] = {}
        self._current: DatasetIterator | None = None
        self._current_group: tuple[int, list] | None = None
        self._exhausted = False

    @property
    def _children(self):
        return (self._parent, self._current)

    def _start(self, key: int, elements: list) -> DatasetIterator:
        out = self._ds._reduce_func(np.int64(key), ElementsDataset(elements))
        if not isinstance(out, Dataset):
            raise TypeError(f"group_by_window: reduce_func must return a Dataset, got {type(out).__name__}")
        self._current_group = (key, elements)
        self._current = out._iterator(self._ctx)
        return self._current

    def __next__(self):
        while True:
            if self._current is not None:
                try:
                    return next(self._current)
                except StopIteration:
                    self._current.close()
                    self._current, self._current_group = None, None
            if self._exhausted:
                if not self._groups:
                    raise StopIteration
                key = min(self._groups)
                self._start(key, self._groups.pop(key))
                continue
            try:
                value = next(self._parent)
            except StopIteration:
                self._exhausted = True
                continue
            key = _key(call_with_element(self._ds._key_func, value))
            group = self._groups.setdefault(key, [])
            group.append(value)
            if len(group) >= self._ds._size_of(key):
                self._start(key, self._groups.pop(key))

    def get_state(self) -> dict:
        current = None
        if self._current is not None and self._current_group is not None:
            key, elements = self._current_group
            current = {
                "key": key,
                "elements": [element_to_json(e) for e in elements],
                "state": self._current.get_state(),
            }
        return {
            "parent": self._parent.get_state(),
            "exhausted": self._exhausted,
            "groups": [[k, [element_to_json(e) for e in g]] for k, g in self._groups.items()],
            "current": current,
        }

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._exhausted = bool(state["exhausted"])
        self._groups = {int(k): [element_from_json(e) for e in g] for k, g in state["groups"]}
        if self._current is not None:
            self._current.close()
        self._current, self._current_group = None, None
        cur = state["current"]
        if cur is not None:
            self._start(int(cur["key"]), [element_from_json(e) for e in cur["elements"]]).set_state(cur["state"])


class GroupByWindowDataset(Dataset):
    def __init__(
        self, input_dataset: Dataset, key_func: Callable, reduce_func: Callable, window_size, window_size_func
    ) -> None:
        if (window_size is None) == (window_size_func is None):
            raise ValueError("group_by_window: pass exactly one of window_size and window_size_func")
        if window_size is not None and (not isinstance(window_size, (int, np.integer)) or window_size < 1):
            raise ValueError(f"group_by_window: window_size must be a positive int, got {window_size!r}")
        super().__init__(input_dataset)
        self._key_func = key_func
        self._reduce_func = reduce_func
        self._window_size = None if window_size is None else int(window_size)
        self._window_size_func = window_size_func

    def _size_of(self, key: int) -> int:
        if self._window_size is not None:
            return self._window_size
        n = int(np.asarray(self._window_size_func(np.int64(key))))
        if n < 1:
            raise ValueError(f"group_by_window: window_size_func({key}) returned {n}; window sizes must be positive")
        return n

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _GroupByWindowIterator(self, ctx)


@transformation
def group_by_window(
    self: Dataset,
    key_func: Callable,
    reduce_func: Callable[[np.int64, Dataset], Dataset],
    window_size: int | None = None,
    window_size_func: Callable | None = None,
    name: str | None = None,
) -> Dataset:
    """Groups of up to ``window_size`` elements with equal ``key_func``, each turned into a dataset by ``reduce_func``."""
    return GroupByWindowDataset(self, key_func, reduce_func, window_size, window_size_func)
