"""batch: stacks consecutive elements into arrays with a new leading dimension.

Components are stacked with NumPy; ``bytes`` become object arrays of bytes,
as TensorFlow's ``tf.string`` batches do. The last, smaller batch is kept
unless ``drop_remainder``. Over an input that can hand its records over in
``RecordBatch`` es (:meth:`Dataset._record_batches`: ``TFRecordDataset``,
its ``shuffle``), ``batch(n).parse(spec)`` reads whole ``RecordBatch`` es
instead; see ``parse.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from tfrx.data.dataset import INFINITE_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation
from tfrx.data.structure import stack

__all__ = ["BatchDataset", "batch_cardinality"]


def batch_cardinality(n: int, batch_size: int, drop_remainder: bool) -> int:
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


class BatchIterator(DatasetIterator):
    """Collects ``batch_size`` elements and combines them with ``combine`` (stacking by default)."""

    def __init__(self, parent: DatasetIterator, batch_size: int, drop_remainder: bool, combine: Callable) -> None:
        self._parent = parent
        self._children = (parent,)
        self._batch_size = batch_size
        self._drop_remainder = drop_remainder
        self._combine = combine
        self._done = False

    def __next__(self):
        if self._done:
            raise StopIteration
        elements = []
        for _ in range(self._batch_size):
            try:
                elements.append(next(self._parent))
            except StopIteration:
                self._done = True
                break
        if not elements or (self._drop_remainder and len(elements) < self._batch_size):
            raise StopIteration
        return self._combine(elements)

    def get_state(self) -> dict:
        return {"done": self._done, "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._done = bool(state["done"])


class BatchDataset(Dataset):
    def __init__(self, input_dataset: Dataset, batch_size: int, drop_remainder: bool = False) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch: batch_size must be a positive int, got {batch_size!r}")
        super().__init__(input_dataset)
        self.batch_size = batch_size
        self.drop_remainder = bool(drop_remainder)

    def _combine(self, elements: list):
        return stack(elements)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return BatchIterator(self._inputs[0]._iterator(ctx), self.batch_size, self.drop_remainder, self._combine)

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        if n == INFINITE_CARDINALITY:
            return n
        return batch_cardinality(n, self.batch_size, self.drop_remainder)

    def _natively_batched(self) -> Dataset | None:
        return self._inputs[0]._record_batches(self.batch_size, self.drop_remainder)

    def _why_not_natively_batched(self) -> str:
        return self._inputs[0]._why_not_record_batches()

    def _describe(self) -> str:
        return f"batch({self.batch_size}{', drop_remainder=True' if self.drop_remainder else ''})"


@transformation
def batch(self: Dataset, batch_size: int, drop_remainder: bool = False, num_parallel_calls=None, deterministic=None) -> Dataset:
    """Consecutive elements stacked into batches of ``batch_size``.

    ``num_parallel_calls`` and ``deterministic`` are accepted for ``tf.data``
    compatibility; stacking runs on the consumer's thread.
    """
    return BatchDataset(self, batch_size, drop_remainder)
