"""interleave: maps each input element to a dataset and interleaves their elements.

The order is exactly ``tf.data``'s deterministic interleave: ``cycle_length``
slots are visited in turn, ``block_length`` elements are taken from each;
an empty slot is filled with the dataset of the next input element before it
is read, and a slot whose dataset ends is emptied and the cycle moves on.

With ``num_parallel_calls`` every open slot reads ahead on its own background
thread (up to ``max(16, 2 * block_length)`` elements), so up to ``cycle_length``
files are read at once; the order stays the deterministic one. With
``deterministic=False`` (or ``with_options(deterministic=False)``), when the
slot whose turn it is has nothing ready, the next slot that has an element
ready takes its turn instead, so one slow file does not stall the others.

``files.interleave(TFRecordDataset, ...)`` (the class itself as ``map_func``,
in the deterministic order) reads the way ``TFRecordDataset(files,
num_parallel_reads=k)`` does, whether batched or not: the records of runs
of turns read batch-native (``parallel_reads.py``, its read threads sized
by the usable cores) and split into ``bytes``.

The turn order is :class:`tfrx.data._interleave_plan.InterleavePlanner`'s,
the same planner that ``TFRecordDataset(files, num_parallel_reads=k)``
reads its files with (``parallel_reads.py``); here it hands out one element
at a time.

State: the input's state, the planner's (turn, block, end of input), and
per slot the input's state before its element was taken (to re-create the
slot's dataset) plus that dataset's iterator state.
"""

from __future__ import annotations

from collections.abc import Callable

from tfrx.data._dataset import (
    AUTOTUNE,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    IterContext,
    transformation,
    usable_cores,
)
from tfrx.data._interleave_plan import InterleavePlanner, input_at
from tfrx.data._map import call_with_element
from tfrx.data._prefetch import PrefetchIterator
from tfrx.data._provenance import annotate
from tfrx.data._unbatch import SPLIT_BATCH, split_records
from tfrx.options import resolve_parallelism

__all__ = ["InterleaveDataset"]

_SLOT_BUFFER = 16
_NOTHING = object()  # no element taken ahead


class _Slot:
    """One open input of the interleave: its dataset's iterator and the element taken to see if it ended."""

    __slots__ = ("input_state", "iterator", "_next")

    def __init__(self, input_state, iterator: DatasetIterator) -> None:
        self.input_state = input_state  # the input's state before the element this slot's dataset came from
        self.iterator = iterator
        self._next = _NOTHING

    def available(self) -> int:
        if self._next is _NOTHING:
            try:
                self._next = next(self.iterator)
            except StopIteration:
                return 0
        return 1

    def ready(self) -> bool:
        return self._next is not _NOTHING or self.iterator.ready()

    def take(self):
        value, self._next = self._next, _NOTHING
        return value

    def close(self) -> None:
        self.iterator.close()


class _InterleaveIterator(DatasetIterator):
    def __init__(self, ds: InterleaveDataset, ctx: IterContext) -> None:
        self._ds = ds
        self._ctx = ctx
        self._input = ds._inputs[0]._iterator(ctx)
        deterministic = ds._deterministic if ds._deterministic is not None else ctx.deterministic
        self._plan = InterleavePlanner(
            ds._cycle_length, ds._block_length, self._next_slot, sloppy=ds._parallel and deterministic is False
        )

    @property
    def _children(self):
        return (self._input, *(s.iterator for s in self._plan.slots if s is not None))

    def _open(self, element) -> DatasetIterator:
        try:
            inner = call_with_element(self._ds._map_func, element)
        except Exception as e:
            raise annotate(e, "interleave map_func", None, self._input.provenance(self._input.get_state()))
        if not isinstance(inner, Dataset):
            raise TypeError(f"interleave: map_func must return a Dataset, got {type(inner).__name__}")
        if self._ds._parallel:
            it = inner._read_ahead_iterator(self._ctx)
            if it is None:
                it = PrefetchIterator(
                    inner._iterator(self._ctx), max(_SLOT_BUFFER, 2 * self._ds._block_length), name="tfrx-interleave"
                )
                it.start()
            return it
        return inner._iterator(self._ctx)

    def _next_slot(self) -> _Slot | None:
        before = self._input.get_state()
        try:
            element = next(self._input)
        except StopIteration:
            return None
        return _Slot(before, self._open(element))

    def __next__(self):
        if self._plan.closed:
            raise StopIteration
        slot = self._plan.next_one()
        if slot is None:
            raise StopIteration
        return slot.take()

    def get_state(self) -> dict:
        return {
            "ctx_epoch": list(self._ctx.epoch),
            "input": self._input.get_state(),
            **self._plan.get_state(),
            "slots": [
                None if s is None else {"input": s.input_state, "state": s.iterator.get_state()}
                for s in self._plan.slots
            ],
        }

    def set_state(self, state: dict) -> None:
        plan = self._plan
        for s in plan.slots:
            if s is not None:
                s.close()
        self._ctx = self._ctx.with_epoch(state["ctx_epoch"])
        slots: list[_Slot | None] = []
        for saved in state["slots"]:
            if saved is None:
                slots.append(None)
                continue
            it = self._open(input_at(self._ds._inputs[0], self._ctx, saved["input"]))
            it.set_state(saved["state"])
            slots.append(_Slot(saved["input"], it))
        self._input.set_state(state["input"])
        plan.set_state(state, slots)

    def close(self) -> None:
        self._plan.closed = True
        super().close()


class InterleaveDataset(Dataset):
    def __init__(
        self,
        input_dataset: Dataset,
        map_func: Callable[..., Dataset],
        cycle_length: int | None,
        block_length: int | None,
        num_parallel_calls: int | None,
        deterministic: bool | None,
    ) -> None:
        if not callable(map_func):
            raise TypeError("interleave: map_func must be callable")
        super().__init__(input_dataset)
        if cycle_length is None or cycle_length == AUTOTUNE:
            cycle_length = usable_cores()
        if block_length is None:
            block_length = 1
        if not isinstance(cycle_length, int) or cycle_length < 1:
            raise ValueError(f"interleave: cycle_length must be a positive int, got {cycle_length!r}")
        if not isinstance(block_length, int) or block_length < 1:
            raise ValueError(f"interleave: block_length must be a positive int, got {block_length!r}")
        self._map_func = map_func
        self._cycle_length = cycle_length
        self._block_length = block_length
        self._parallel = num_parallel_calls is not None and num_parallel_calls != 1
        self._deterministic = deterministic

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        # files.interleave(TFRecordDataset, ...) element by element: the batch-native reads (the path of
        # TFRecordDataset(files, num_parallel_reads=k)) split into records, in the same order.
        deterministic = self._deterministic if self._deterministic is not None else ctx.deterministic
        native = None if self._parallel and deterministic is False else self._record_batches(SPLIT_BATCH, False)
        if native is not None:
            return split_records(native._iterator(ctx))
        return _InterleaveIterator(self, ctx)

    def cardinality(self) -> int:
        return 0 if self._inputs[0].cardinality() == 0 else UNKNOWN_CARDINALITY

    def _record_batches(self, batch_size: int, drop_remainder: bool) -> Dataset | None:
        # ``files.interleave(TFRecordDataset, ...)``: the files' records, read batch-native in the same order,
        # when the map_func is a dataset class that can do that (Dataset._interleaved_record_batches).
        fn = self._map_func
        if self._parallel and self._deterministic is False or not (isinstance(fn, type) and issubclass(fn, Dataset)):
            return None
        return fn._interleaved_record_batches(
            self._inputs[0], self._cycle_length, self._block_length, batch_size, drop_remainder
        )

    def _why_not_record_batches(self) -> str:
        if self._parallel and self._deterministic is False:
            return "interleave(deterministic=False) takes whichever file is ready first; the batch-native form keeps the order"
        return (
            "interleave's map_func does not read records from each file name "
            "(files.interleave(TFRecordDataset, ...) is batch-native)"
        )

    def _describe(self) -> str:
        return f"interleave(cycle_length={self._cycle_length}, block_length={self._block_length})"


@transformation
def interleave(
    self: Dataset,
    map_func: Callable[..., Dataset],
    cycle_length: int | None = None,
    block_length: int | None = None,
    num_parallel_calls: int | None = None,
    deterministic: bool | None = None,
) -> Dataset:
    """Interleaves the datasets ``map_func(element)`` in ``tf.data``'s deterministic order."""
    resolve_parallelism(num_parallel_calls)  # checked here; the stage keeps the value as given
    return InterleaveDataset(
        self, self._viewing_function(map_func), cycle_length, block_length, num_parallel_calls, deterministic
    )


@transformation
def flat_map(self: Dataset, map_func: Callable[..., Dataset]) -> Dataset:
    """The datasets ``map_func(element)`` one after another (``interleave`` with one slot)."""
    return InterleaveDataset(self, self._viewing_function(map_func), 1, 1, None, None)
