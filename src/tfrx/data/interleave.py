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

State: the input's state, and per slot the input's state before its element
was taken (to re-create the slot's dataset) plus that dataset's iterator
state.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tfrx.data.dataset import (
    AUTOTUNE,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    IterContext,
    transformation,
    usable_cores,
)
from tfrx.data.map import call_with_element
from tfrx.data.prefetch import PrefetchIterator
from tfrx.data.provenance import annotate

__all__ = ["InterleaveDataset"]

_SLOT_BUFFER = 16


class _Slot:
    __slots__ = ("input_state", "iterator")

    def __init__(self, input_state, iterator: DatasetIterator) -> None:
        self.input_state = input_state
        self.iterator = iterator


class _InterleaveIterator(DatasetIterator):
    def __init__(self, ds: InterleaveDataset, ctx: IterContext) -> None:
        self._ds = ds
        self._ctx = ctx
        self._input = ds._inputs[0]._iterator(ctx)
        self._slots: list[_Slot | None] = [None] * ds._cycle_length
        self._cycle = 0
        self._block = 0
        self._end_of_input = False
        self._closed = False
        deterministic = ds._deterministic if ds._deterministic is not None else ctx.deterministic
        self._sloppy = ds._parallel and deterministic is False

    @property
    def _children(self):
        return (self._input, *(s.iterator for s in self._slots if s is not None))

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
                it = PrefetchIterator(inner._iterator(self._ctx), max(_SLOT_BUFFER, 2 * self._ds._block_length), name="tfrx-interleave")
                it.start()
            return it
        return inner._iterator(self._ctx)

    def _advance_cycle(self) -> None:
        self._block = 0
        self._cycle = (self._cycle + 1) % len(self._slots)

    def __next__(self):
        if self._closed:
            raise StopIteration
        slots = self._slots
        while not self._end_of_input or any(s is not None for s in slots):
            slot = slots[self._cycle]
            if slot is not None and self._sloppy and not slot.iterator.ready():
                self._take_turn_of_a_ready_slot()
                slot = slots[self._cycle]
            if slot is not None:
                try:
                    value = next(slot.iterator)
                except StopIteration:
                    slot.iterator.close()
                    slots[self._cycle] = None
                    self._advance_cycle()
                    continue
                self._block += 1
                if self._block == self._ds._block_length:
                    self._advance_cycle()
                return value
            if not self._end_of_input:
                before = self._input.get_state()
                try:
                    element = next(self._input)
                except StopIteration:
                    self._end_of_input = True
                    continue
                slots[self._cycle] = _Slot(before, self._open(element))
            else:
                self._advance_cycle()
        raise StopIteration

    def _take_turn_of_a_ready_slot(self) -> None:
        """Sloppy order: open every empty slot, then move the turn to the first slot with an element ready."""
        slots, n = self._slots, len(self._slots)
        for j in range(n):
            if slots[j] is None and not self._end_of_input:
                before = self._input.get_state()
                try:
                    element = next(self._input)
                except StopIteration:
                    self._end_of_input = True
                    break
                slots[j] = _Slot(before, self._open(element))
        pause = 0.0002
        while not self._closed:
            for step in range(n):
                j = (self._cycle + step) % n
                s = slots[j]
                if s is not None and s.iterator.ready():
                    if j != self._cycle:
                        self._cycle, self._block = j, 0
                    return
            if not any(s is not None for s in slots):
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.005)

    def get_state(self) -> dict:
        return {
            "ctx_epoch": list(self._ctx.epoch),
            "input": self._input.get_state(),
            "end_of_input": self._end_of_input,
            "cycle": self._cycle,
            "block": self._block,
            "slots": [None if s is None else {"input": s.input_state, "state": s.iterator.get_state()} for s in self._slots],
        }

    def set_state(self, state: dict) -> None:
        for s in self._slots:
            if s is not None:
                s.iterator.close()
        self._slots = [None] * len(self._slots)
        self._ctx = self._ctx.with_epoch(state["ctx_epoch"])
        for i, saved in enumerate(state["slots"]):
            if saved is None:
                continue
            finder = self._ds._inputs[0]._iterator(self._ctx)
            finder.set_state(saved["input"])
            element = next(finder)
            finder.close()
            it = self._open(element)
            it.set_state(saved["state"])
            self._slots[i] = _Slot(saved["input"], it)
        self._input.set_state(state["input"])
        self._end_of_input = bool(state["end_of_input"])
        self._cycle = int(state["cycle"])
        self._block = int(state["block"])

    def close(self) -> None:
        self._closed = True
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
        return _InterleaveIterator(self, ctx)

    def cardinality(self) -> int:
        return 0 if self._inputs[0].cardinality() == 0 else UNKNOWN_CARDINALITY


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
    return InterleaveDataset(self, map_func, cycle_length, block_length, num_parallel_calls, deterministic)


@transformation
def flat_map(self: Dataset, map_func: Callable[..., Dataset]) -> Dataset:
    """The datasets ``map_func(element)`` one after another (``interleave`` with one slot)."""
    return InterleaveDataset(self, map_func, 1, 1, None, None)
