"""cache: the first complete pass is kept (in memory, or in a file) and replayed after.

``cache()`` keeps elements in memory; ``cache(filename)`` pickles them to
``filename`` (written to a temporary name and renamed when the pass is
complete, so an interrupted pass never leaves a partial cache behind: the
next pass reads the input again). An existing cache file is used as is.
Only a pass that reaches the end fills the cache, as in ``tf.data``. In a
pipeline sharded for workers and ranks, each shard caches to its own file
(``<filename>.shard-<index>of<count>...``).

State: while filling, the input's state (a restored iterator reads through
without caching); while replaying, the element index (memory) or the byte
offset (file).
"""

from __future__ import annotations

import os
import pickle
import threading
from typing import BinaryIO

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._elements import ListIterator

__all__ = ["CacheDataset"]


class _MemoryReplay(ListIterator):
    def get_state(self) -> dict:
        return {"mode": "replay", "index": self._i}


class _FileReplay(DatasetIterator):
    def __init__(self, filename: str) -> None:
        self._filename = filename
        self._f: BinaryIO | None = open(filename, "rb")  # noqa: SIM115 - closed in close()
        self._offset = 0

    def __next__(self):
        if self._f is None:
            raise StopIteration
        try:
            value = pickle.load(self._f)
        except EOFError:
            self.close()
            raise StopIteration from None
        self._offset = self._f.tell()
        return value

    def get_state(self) -> dict:
        return {"mode": "replay", "offset": self._offset}

    def set_state(self, state: dict) -> None:
        if self._f is None:
            self._f = open(self._filename, "rb")  # noqa: SIM115
        self._offset = int(state["offset"])
        self._f.seek(self._offset)

    def close(self) -> None:
        f, self._f = self._f, None
        if f is not None:
            f.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class _FillIterator(DatasetIterator):
    def __init__(self, ds: CacheDataset, parent: DatasetIterator) -> None:
        self._ds = ds
        self._parent = parent
        self._children = (parent,)
        self._filling = True
        self._elements: list | None = [] if not ds._filename else None
        self._tmp = ""  # the file being written, renamed to the cache file when complete
        self._f: BinaryIO | None = None
        if ds._filename:
            self._tmp = f"{ds._filename}.tmp-{os.getpid()}-{threading.get_ident()}"
            self._f = open(self._tmp, "wb")  # noqa: SIM115

    def __next__(self):
        try:
            value = next(self._parent)
        except StopIteration:
            self._finish()
            raise
        if self._filling:
            if self._f is not None:
                pickle.dump(value, self._f, protocol=pickle.HIGHEST_PROTOCOL)
            else:
                self._elements.append(value)
        return value

    def _finish(self) -> None:
        if not self._filling:
            return
        self._filling = False
        if self._f is not None:
            self._f.close()
            self._f = None
            os.replace(self._tmp, self._ds._filename)
        else:
            self._ds._memory = self._elements

    def _abandon(self) -> None:
        self._filling = False
        self._elements = None
        if self._f is not None:
            self._f.close()
            self._f = None
            try:
                os.unlink(self._tmp)
            except OSError:
                pass

    def get_state(self) -> dict:
        return {"mode": "fill", "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._abandon()  # the elements before this point are not in this iterator's hands
        self._parent.set_state(state["parent"])

    def close(self) -> None:
        self._abandon()
        super().close()

    def __del__(self) -> None:
        try:
            self._abandon()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class _CacheIterator(DatasetIterator):
    """Dispatches between filling and replaying, so that any saved state can be restored."""

    def __init__(self, ds: CacheDataset, ctx: IterContext) -> None:
        self._ds = ds
        self._ctx = ctx
        self._inner = ds._replay_or_none() or _FillIterator(ds, ds._inputs[0]._iterator(ctx))

    @property
    def _children(self):
        return (self._inner,)

    def __next__(self):
        return next(self._inner)

    def get_state(self) -> dict:
        return self._inner.get_state()

    def set_state(self, state: dict) -> None:
        self._inner.close()
        if state["mode"] == "replay":
            inner = self._ds._replay_or_none()
            if inner is None:
                raise ValueError("cache: the saved state replays a cache that does not exist here")
        else:
            inner = _FillIterator(self._ds, self._ds._inputs[0]._iterator(self._ctx))
        inner.set_state(state)
        self._inner = inner


class CacheDataset(Dataset):
    def __init__(self, input_dataset: Dataset, filename: str) -> None:
        super().__init__(input_dataset)
        self._filename = os.fspath(filename) if filename else ""
        self._memory: list | None = None

    def _replay_or_none(self) -> DatasetIterator | None:
        if self._filename:
            return _FileReplay(self._filename) if os.path.exists(self._filename) else None
        return None if self._memory is None else _MemoryReplay(self._memory)

    def _with_inputs(self, inputs):
        clone = super()._with_inputs(inputs)
        clone._memory = None
        return clone

    def _for_shard(self, key: str) -> Dataset:
        if not self._filename:
            return self
        clone = self._with_inputs(self._inputs)
        clone._filename = f"{self._filename}.shard-{key}"
        return clone

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _CacheIterator(self, ctx)

    def cardinality(self) -> int:
        return self._inputs[0].cardinality()


@transformation
def cache(self: Dataset, filename: str = "") -> Dataset:
    """Caches the elements of the first complete pass in memory (``""``) or in ``filename``."""
    return CacheDataset(self, filename)
