"""The interleave planner: whose turn it is and how many elements it gives, in tf.data's order.

``tf.data``'s deterministic interleave visits ``cycle_length`` slots in turn
and takes ``block_length`` elements from each; an empty slot is filled with
the next input before it is read (in the same turn), a slot whose input ends
is emptied and the turn passes to the next slot, and once the inputs are
used up the empty slots' turns pass. :class:`InterleavePlanner` holds that
turn state (the slots, the slot whose turn it is, the elements it has given
in this turn) and hands out runs: "slot ``j`` gives its next ``n``
elements". It is the one implementation of the order behind both forms:

* per element (``Dataset.interleave``, ``interleave.py``): one element at
  a time (:meth:`InterleavePlanner.next_one`);
* batch-native (``TFRecordDataset(files, num_parallel_reads=k)``,
  ``parallel_reads.py``): whole runs of records, and while no slot opens or
  ends, many rounds of turns planned at once with NumPy
  (:meth:`InterleavePlanner.plan_turns`).

A slot is any object with ``available()`` (how many elements it can give
now without reading further: 0 means its input has ended), ``ready()``
(whether ``available`` would not wait, for ``deterministic=False``) and
``close()``. ``open_next()`` gives a slot for the next input, or ``None``
when the inputs are used up.

With ``sloppy`` (``deterministic=False``), when the slot whose turn it is
has nothing ready, the next slot with something ready takes the turn, so one
slow input does not stall the others.

State: :meth:`InterleavePlanner.get_state` (turn, block, end of input); the
caller saves and restores the slots themselves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

__all__ = ["InterleavePlanner", "InterleaveSlot", "input_at"]


def input_at(inputs, ctx, state):
    """The element an iterator of the dataset ``inputs`` in ``state`` gives next: a slot's input, to
    re-open the slot when an interleave is restored."""
    finder = inputs._iterator(ctx)
    try:
        finder.set_state(state)
        return next(finder)
    finally:
        finder.close()


class InterleaveSlot(Protocol):
    def available(self) -> int: ...

    def ready(self) -> bool: ...

    def close(self) -> None: ...


class InterleavePlanner:
    """The turn order of ``cycle_length`` slots taking ``block_length`` elements each."""

    def __init__(
        self, cycle_length: int, block_length: int, open_next: Callable[[], Any], sloppy: bool = False
    ) -> None:
        self.slots: list[Any] = [None] * cycle_length
        self.block_length = block_length
        self.cycle = 0  # the slot whose turn it is
        self.block = 0  # elements it has given in this turn
        self.end_of_input = False
        self.closed = False  # set by the owner's close: a sloppy wait for a ready slot stops
        self._open_next = open_next
        self._sloppy = sloppy

    def _advance(self) -> None:
        self.block = 0
        self.cycle = (self.cycle + 1) % len(self.slots)

    def _fill(self, j: int) -> bool:
        """Opens the next input in the empty slot ``j``; False (and the end of input) when there is none."""
        slot = self._open_next()
        if slot is None:
            self.end_of_input = True
            return False
        self.slots[j] = slot
        return True

    def current(self):
        """The slot whose turn it is, with at least one element available, opening and closing slots as
        ``tf.data`` does on the way; ``None`` once every input has ended."""
        slots = self.slots
        while True:
            slot = slots[self.cycle]
            if slot is None:
                if self.end_of_input:
                    if not any(s is not None for s in slots):
                        return None
                    self._advance()
                    continue
                if not self._fill(self.cycle):
                    continue
                slot = slots[self.cycle]
            if self._sloppy and not slot.ready():
                self._take_turn_of_a_ready_slot()
                slot = slots[self.cycle]
                if slot is None:
                    continue
            if slot.available():
                return slot
            slot.close()
            slots[self.cycle] = None
            self._advance()

    def next_one(self):
        """The slot whose turn it is, which gives its next element (counted in the turn); ``None`` at the end."""
        slot = self.slots[self.cycle]
        if slot is None or self._sloppy or not slot.available():  # (else the turn stays: the common case)
            slot = self.current()
            if slot is None:
                return None
        self.block += 1
        if self.block == self.block_length:
            self.block = 0
            self.cycle = (self.cycle + 1) % len(self.slots)
        return slot

    def _ahead(self, first) -> tuple[list[int], list[int], bool]:
        """The open slots from the one whose turn it is, in turn order, with what each has available,
        up to the first slot that must open or end before its turn (then True)."""
        slots, n = self.slots, len(self.slots)
        live, avail = [self.cycle], [first.available()]
        for step in range(1, n):
            j = (self.cycle + step) % n
            s = slots[j]
            if s is None:
                if self.end_of_input:
                    continue  # its turns pass
                return live, avail, True
            a = s.available()
            if not a:
                return live, avail, True
            live.append(j)
            avail.append(a)
        return live, avail, False

    def plan_rounds(self, limit: int) -> tuple[list[int], int] | None:
        """For ``block_length=1``: (slots, t): the next ``t`` elements (``1 <= t <= limit``) come one per
        turn from ``slots[0], slots[1], ...`` over and over (element ``i`` from ``slots[i % len(slots)]``);
        ``None`` at the end. Planned as :meth:`plan_turns` plans, in plain integers."""
        if self.block_length != 1:
            raise ValueError("plan_rounds needs block_length=1")
        first = self.current()
        if first is None:
            return None
        live, avail, event = self._ahead(first)
        k = len(live)
        # One pass up to a slot that opens or ends; else up to the first turn some slot has nothing for.
        t = min(limit, k if event else min(a * k + i for i, a in enumerate(avail)))
        self.cycle = (live[(t - 1) % k] + 1) % len(self.slots)
        return live[: min(k, t)], t

    def plan_turns(self, limit: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Up to ``limit`` elements as a run of turns: (slot of each turn, elements it gives), in order;
        ``None`` at the end. Turns are planned up to the first slot that must open or end (that is
        settled by the next call), and up to the first slot that has fewer elements available than its
        turn takes; while no slot opens or ends, that is many rounds at once."""
        big = self.block_length
        if big == 1:
            rounds = self.plan_rounds(limit)
            if rounds is None:
                return None
            live, t = rounds
            return np.resize(np.array(live, np.int64), t), np.ones(t, np.int64)
        first = self.current()
        if first is None:
            return None
        live, avail, event = self._ahead(first)
        k, n = len(live), len(self.slots)
        have = np.array(avail, np.int64)
        if event:  # one pass over the slots before it
            need = np.full(k, big, np.int64)
            need[0] -= self.block
            lengths = np.minimum(need, have)
            # A slot with less than its turn available gives what it has; its turn goes on in the next call.
            short = np.flatnonzero(lengths < need)
            turns = k if not short.size else int(short[0]) + 1
            order, lengths = np.array(live[:turns], np.int64), lengths[:turns]
        else:
            # Rounds: turn m is slot live[m % k]'s (m // k)-th, taking block_length (the first: what is left
            # of the current turn). The first turn some slot cannot complete ends the plan, given in part.
            first_need = big - self.block
            whole = have // big
            whole[0] = 1 + (have[0] - first_need) // big if have[0] >= first_need else 0
            stop = int((whole * k + np.arange(k)).min())
            stopper = stop % k
            given_before = int(whole[stopper]) * big - (self.block if stopper == 0 and whole[0] else 0)
            left = int(have[stopper]) - given_before
            count = min(stop + (1 if left else 0), limit)
            lengths = np.full(count, big, np.int64)
            lengths[0] = first_need
            if left and count == stop + 1:
                lengths[stop] = left
            order = np.resize(np.array(live, np.int64), count)
        ends = np.cumsum(lengths)
        if ends[-1] > limit:  # cut the plan at ``limit`` elements: the last turn gives part
            turns = int(np.searchsorted(ends, limit)) + 1
            order, lengths = order[:turns], lengths[:turns]
            lengths[-1] -= int(ends[turns - 1]) - limit
        last, given = int(order[-1]), int(lengths[-1])
        if len(order) == 1:
            given += self.block
        if given == big:
            self.cycle, self.block = (last + 1) % n, 0
        else:
            self.cycle, self.block = last, given
        return order, lengths

    def _take_turn_of_a_ready_slot(self) -> None:
        """Sloppy order: open every empty slot, then move the turn to the first slot with an element ready."""
        slots, n = self.slots, len(self.slots)
        for j in range(n):
            if slots[j] is None and not self.end_of_input and not self._fill(j):
                break
        pause = 0.0002
        while not self.closed:
            for step in range(n):
                j = (self.cycle + step) % n
                s = slots[j]
                if s is not None and s.ready():
                    if j != self.cycle:
                        self.cycle, self.block = j, 0
                    return
            if not any(s is not None for s in slots):
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.005)

    def get_state(self) -> dict:
        return {"end_of_input": self.end_of_input, "cycle": self.cycle, "block": self.block}

    def set_state(self, state: dict, slots: list) -> None:
        """Restores the turn state and the slots (re-opened by the caller)."""
        self.slots = slots
        self.end_of_input = bool(state["end_of_input"])
        self.cycle = int(state["cycle"])
        self.block = int(state["block"])
