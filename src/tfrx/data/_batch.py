"""batch: stacks consecutive elements into arrays with a new leading dimension.

Components are stacked with NumPy; ``bytes`` become object arrays of bytes,
as TensorFlow's ``tf.string`` batches do. The last, smaller batch is kept
unless ``drop_remainder``. The loop (:class:`BatchIterator`) is the one
``rebatch`` cuts pieces with (``rebatch.py``). Over an input that can hand its records over in
``RecordBatch`` es (:meth:`Dataset._record_batches`: ``TFRecordDataset``,
its ``shuffle``), ``batch(n).parse(spec)`` reads whole ``RecordBatch`` es
instead; see ``parse.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from tfrx.data._dataset import INFINITE_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._structure import stack
from tfrx.options import resolve_parallelism

__all__ = ["BatchDataset", "BatchIterator", "batch_cardinality"]


def batch_cardinality(n: int, batch_size: int, drop_remainder: bool) -> int:
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


class BatchIterator(DatasetIterator):
    """Batches of ``sizes[k % len(sizes)]`` rows from ``parent``: the one batching loop.

    Every element of ``parent`` is one row (``batch``), or, with ``pieces =
    (rows, cut)``, a piece of ``rows(piece)`` rows that ``cut(piece, start,
    stop)`` slices (``rebatch``, and the batch-native ``batch`` over
    ``RecordBatch`` es of records). ``join(parts)`` makes a batch of its
    parts: stacking for elements, concatenating for pieces. The last,
    smaller batch is kept unless ``drop_remainder``.

    State: whether the input ended and the input's state (for pieces: before
    the piece being cut, plus the rows of it already taken and the number of
    batches made, which says which size comes next).
    """

    def __init__(
        self,
        parent: DatasetIterator,
        sizes: list[int],
        drop_remainder: bool,
        join: Callable,
        pieces: tuple[Callable, Callable] | None = None,
    ) -> None:
        self._parent = parent
        self._children = (parent,)
        self._sizes = sizes
        self._drop_remainder = drop_remainder
        self._join = join
        self._pieces = pieces
        self._done = False
        self._count = 0
        self._piece = None  # the piece being cut, its rows, the input's state before it, rows taken
        self._rows = 0
        self._before: dict | None = None
        self._offset = 0

    def __next__(self):
        if self._done:
            raise StopIteration
        size = self._sizes[self._count % len(self._sizes)]
        parts: list = []
        if self._pieces is None:
            parent = self._parent
            for _ in range(size):
                try:
                    parts.append(next(parent))
                except StopIteration:
                    self._done = True
                    break
            short = len(parts) < size
        else:
            short = self._cut(size, parts)
        if not parts or (self._drop_remainder and short):
            raise StopIteration
        self._count += 1
        return self._join(parts)

    def _cut(self, need: int, parts: list) -> bool:
        """Adds cuts of the pieces holding the next ``need`` rows to ``parts``; True when the input ended first."""
        rows, cut = self._pieces  # type: ignore[misc]  # set: this is the pieces' form
        while need:
            if self._offset >= self._rows:
                before = self._parent.get_state()
                try:
                    piece = next(self._parent)
                except StopIteration:
                    self._piece, self._rows, self._offset, self._done = None, 0, 0, True
                    return True
                self._piece, self._rows, self._before, self._offset = piece, rows(piece), before, 0
            take = min(need, self._rows - self._offset)
            start = self._offset
            parts.append(cut(self._piece, start, start + take))
            self._offset += take
            need -= take
            if self._offset >= self._rows:
                self._piece = None  # (a reader reuses a buffer only once nothing refers to it)
        return False

    def get_state(self) -> dict:
        if self._pieces is None:  # (the format the batch-native shuffle's batches share: no piece, one size)
            return {"done": self._done, "parent": self._parent.get_state()}
        if self._offset < self._rows:
            return {"parent": self._before, "offset": self._offset, "count": self._count, "done": self._done}
        return {"parent": self._parent.get_state(), "offset": 0, "count": self._count, "done": self._done}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._piece, self._offset, self._rows = None, 0, 0
        self._count = int(state.get("count", 0))
        self._done = bool(state["done"])
        if state.get("offset"):
            self._before = state["parent"]
            self._piece = next(self._parent)
            self._rows = self._pieces[0](self._piece)  # type: ignore[index]  # only pieces are cut part-way
            self._offset = int(state["offset"])


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
        return BatchIterator(self._inputs[0]._iterator(ctx), [self.batch_size], self.drop_remainder, self._combine)

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
def batch(
    self: Dataset, batch_size: int, drop_remainder: bool = False, num_parallel_calls=None, deterministic=None
) -> Dataset:
    """Consecutive elements stacked into batches of ``batch_size``.

    ``num_parallel_calls`` and ``deterministic`` are accepted for ``tf.data``
    compatibility (checked as everywhere); stacking runs on the consumer's thread.
    """
    resolve_parallelism(num_parallel_calls)
    return BatchDataset(self, batch_size, drop_remainder)
