"""ignore_errors: elements whose production raises an error are dropped.

As ``tf.data.Dataset.ignore_errors(log_warning=False)``: an exception from
the input (a failing ``map`` function, a record that does not parse) skips
that element, and iteration goes on with the next. ``log_warning`` logs each
skipped error on the ``tfrx`` logger. If the input raises again without
moving (its state is unchanged, e.g. a stream that cannot read past a
damaged spot), the input is treated as ended, so iteration never loops.
``KeyboardInterrupt`` and ``SystemExit`` are not caught.

State: the input's state.
"""

from __future__ import annotations

import logging

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation

__all__ = ["IgnoreErrorsDataset"]

_log = logging.getLogger("tfrx")


class _IgnoreErrorsIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, log_warning: bool) -> None:
        self._parent = parent
        self._children = (parent,)
        self._log = log_warning
        self._done = False

    def __next__(self):
        last_failure = None
        while not self._done:
            try:
                return next(self._parent)
            except StopIteration:
                self._done = True
            except Exception as e:  # noqa: BLE001 - dropping errors is the point
                if self._log:
                    _log.warning("ignore_errors: skipped an element: %s: %s", type(e).__name__, e)
                try:
                    state = self._parent.get_state()
                except Exception:  # noqa: BLE001 - an input without state cannot be checked for progress
                    state = None
                if state is not None and state == last_failure:
                    self._done = True
                last_failure = state
        raise StopIteration

    def get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "done": self._done}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._done = bool(state["done"])


class IgnoreErrorsDataset(Dataset):
    def __init__(self, input_dataset: Dataset, log_warning: bool) -> None:
        super().__init__(input_dataset)
        self._log_warning = bool(log_warning)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _IgnoreErrorsIterator(self._inputs[0]._iterator(ctx), self._log_warning)


@transformation
def ignore_errors(self: Dataset, log_warning: bool = False, name: str | None = None) -> Dataset:
    """This dataset without the elements whose production raised an error."""
    return IgnoreErrorsDataset(self, log_warning)
