"""window: overlapping or strided windows of consecutive elements, each a small dataset.

As ``tf.data.Dataset.window(size, shift=None, stride=1, drop_remainder=False)``:
window ``k`` holds the input elements ``k*shift + j*stride`` for
``j < size`` (``shift`` defaults to ``size``). A window starts at every
``shift``-th element that exists; near the end windows hold fewer elements,
and ``drop_remainder`` drops those. Like TensorFlow, each output is a
dataset: for an element that is a dict or tuple, a dict or tuple of datasets,
one per component. Turn windows into batches with
``ds.window(n).flat_map(lambda w: w.batch(n))``.

State: the input's state before the oldest element still needed, that
element's index and the next window's start; a restore re-reads at most one
window's span of input.
"""

from __future__ import annotations

from collections import deque

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._elements import ElementsDataset
from tfrx.data._structure import map_structure

__all__ = ["WindowDataset"]


def _as_datasets(elements: list):
    first = elements[0]
    if isinstance(first, (dict, tuple)):
        return map_structure(lambda *parts: ElementsDataset(list(parts)), *elements)
    return ElementsDataset(elements)


class _WindowIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, size: int, shift: int, stride: int, drop: bool) -> None:
        self._parent = parent
        self._children = (parent,)
        self._size, self._shift, self._stride, self._drop = size, shift, stride, drop
        self._span = (size - 1) * stride + 1
        self._buffer: deque = deque()  # (index, input state before it, element)
        self._pos = 0  # index of the next input element
        self._start = 0  # first index of the next window
        self._exhausted = False
        self._done = False

    def _read(self) -> bool:
        # After the elements before a window's start are dropped, the oldest element
        # kept is a window's start (a multiple of shift): only those need the state.
        before = self._parent.get_state() if self._pos % self._shift == 0 else None
        try:
            value = next(self._parent)
        except StopIteration:
            self._exhausted = True
            return False
        self._buffer.append((self._pos, before, value))
        self._pos += 1
        return True

    def __next__(self):
        if self._done:
            raise StopIteration
        while not self._exhausted and self._pos < self._start + self._span:
            self._read()
        while self._buffer and self._buffer[0][0] < self._start:
            self._buffer.popleft()
        wanted = range(self._start, self._start + self._span, self._stride)
        elements = [v for i, _, v in self._buffer if i in wanted]
        if not elements or (self._drop and len(elements) < self._size):
            self._done = True
            raise StopIteration
        self._start += self._shift
        while self._buffer and self._buffer[0][0] < self._start:
            self._buffer.popleft()
        return _as_datasets(elements)

    def get_state(self) -> dict:
        if self._buffer:
            index, before, _ = self._buffer[0]
            parent = before
        else:
            index, parent = self._pos, self._parent.get_state()
        return {"parent": parent, "index": index, "start": self._start, "done": self._done}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._buffer.clear()
        self._pos = int(state["index"])
        self._start = int(state["start"])
        self._exhausted = False
        self._done = bool(state["done"])


class WindowDataset(Dataset):
    def __init__(self, input_dataset: Dataset, size: int, shift: int | None, stride: int, drop_remainder: bool) -> None:
        shift = size if shift is None else shift
        for name, v in (("size", size), ("shift", shift), ("stride", stride)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"window: {name} must be a positive int, got {v!r}")
        super().__init__(input_dataset)
        self._size, self._shift, self._stride = size, shift, stride
        self._drop = bool(drop_remainder)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _WindowIterator(self._inputs[0]._iterator(ctx), self._size, self._shift, self._stride, self._drop)

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        if n < 0:
            return n
        if self._drop:
            span = (self._size - 1) * self._stride + 1
            return 0 if n < span else (n - span) // self._shift + 1
        return -(-n // self._shift)


@transformation
def window(
    self: Dataset, size: int, shift: int | None = None, stride: int = 1, drop_remainder: bool = False
) -> Dataset:
    """Windows of ``size`` elements (every ``stride``-th), a new one every ``shift`` elements, as datasets."""
    return WindowDataset(self, size, shift, stride, drop_remainder)
