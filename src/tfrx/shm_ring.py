"""Batches handed between processes through a reused ring of shared-memory slots.

A ``DataLoader`` worker that yields a dict of tensors pays PyTorch's handoff per
tensor: a new shared-memory segment, a copy into it, a file descriptor sent over
a socket and a fresh mapping (page faults) in the main process, for every tensor
of every batch. That costs more CPU than reading and parsing the batch.

Here a worker owns one file of ``slots`` equal slots in shared memory
(``/dev/shm``), mapped once by the worker and once by the main process. It
copies a batch's numeric arrays into a free slot and sends only a small
:class:`PackedBatch` (slot number, offsets, dtypes, shapes and the batch's
non-numeric leaves) through the loader's queue. Unpickled in the main process,
that becomes arrays viewing the slot, without a copy; when the last of them is
released, the slot is marked free and the worker reuses it. A batch that does
not fit makes the worker open a larger ring; when every slot is still held by
the consumer (a training loop that keeps batches), the batch goes the ordinary
way. Nothing is ever overwritten while the main process can still see it.

The file is unlinked as soon as the main process has mapped it (or, failing
that, when the worker exits), so nothing is left in ``/dev/shm`` after a crash
once the first batch has arrived; memory is returned when both sides have
dropped their mappings.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import tempfile
import time
import weakref
from multiprocessing import util as mp_util
from typing import Any

import numpy as np

from tfrx.data.structure import map_structure

__all__ = ["PackedBatch", "Ring", "unpack"]

_ALIGN = 64
_PAGE = mmap.PAGESIZE
_HEADER = 4096  # int32 words: [attached, closed, state of slot 0, state of slot 1, ...]
_ATTACHED, _CLOSED, _SLOT0 = 0, 1, 2
_MAX_SLOTS = _HEADER // 4 - _SLOT0
_NUMERIC = frozenset("biufc")


def _shm_dir() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


class _Leaf:
    """Where one numeric array lies in a slot (a placeholder in the packed structure)."""

    __slots__ = ("offset", "dtype", "shape")

    def __init__(self, offset: int, dtype: str, shape: tuple[int, ...]) -> None:
        self.offset, self.dtype, self.shape = offset, dtype, shape

    def __reduce__(self):
        return _Leaf, (self.offset, self.dtype, self.shape)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class Ring:
    """The worker's side: ``slots`` slots of ``slot_bytes`` in one shared file."""

    def __init__(self, slot_bytes: int, slots: int = 6) -> None:
        if not 1 <= slots <= _MAX_SLOTS:
            raise ValueError(f"slots must be in [1, {_MAX_SLOTS}], got {slots}")
        self.slot_bytes = _round_up(max(int(slot_bytes), _PAGE), _PAGE)
        self.slots = slots
        fd, self.path = tempfile.mkstemp(prefix="tfrx-batches-", dir=_shm_dir())
        try:
            os.ftruncate(fd, _HEADER + slots * self.slot_bytes)
            self._mm: mmap.mmap | None = mmap.mmap(fd, _HEADER + slots * self.slot_bytes)
        except BaseException:
            os.close(fd)
            _unlink(self.path)
            raise
        os.close(fd)
        self._state: np.ndarray | None = np.frombuffer(self._mm, np.int32, count=_SLOT0 + slots)
        self._unlinked = False
        self._next = 0
        # At the worker's exit (multiprocessing runs these finalizers there), in case the
        # main process never mapped the file: by then it has received every batch it will.
        mp_util.Finalize(None, _unlink, args=(self.path,), exitpriority=10)

    def pack(self, element: Any, *, wait: float = 0.02) -> PackedBatch | None:
        """``element`` with its numeric arrays copied into a free slot; None when none is free in ``wait`` seconds.

        Raises ValueError when the arrays do not fit a slot (open a larger ring).
        """
        arrays: list[np.ndarray] = []
        layout: list[int] = []
        end = 0

        def place(x):
            nonlocal end
            if isinstance(x, np.ndarray) and x.dtype.kind in _NUMERIC and x.dtype.byteorder in "=|":
                arrays.append(x)
                layout.append(end)
                leaf = _Leaf(end, x.dtype.str, x.shape)
                end = _round_up(end + x.nbytes, _ALIGN)
                return leaf
            return x

        structure = map_structure(place, element)
        if not arrays:
            return None
        if end > self.slot_bytes:
            raise ValueError(f"a batch of {end} bytes does not fit slots of {self.slot_bytes}")
        self._maybe_unlink()
        slot = self._free_slot(wait)
        if slot is None:
            return None
        assert self._mm is not None and self._state is not None  # _maybe_unlink checked it is open
        base = _HEADER + slot * self.slot_bytes
        for x, offset in zip(arrays, layout):
            dst = np.ndarray(x.shape, x.dtype, buffer=self._mm, offset=base + offset)
            np.copyto(dst, x, casting="no")
        self._state[_SLOT0 + slot] = 1
        return PackedBatch(self.path, slot, base, end, structure)

    def _free_slot(self, wait: float) -> int | None:
        assert self._state is not None  # the ring is open
        deadline = None
        while True:
            for k in range(self.slots):
                slot = (self._next + k) % self.slots
                if self._state[_SLOT0 + slot] == 0:
                    self._next = slot + 1
                    return slot
            now = time.monotonic()
            if deadline is None:
                deadline = now + wait
            elif now >= deadline:
                return None
            time.sleep(0.0002)

    def _maybe_unlink(self) -> None:
        if self._state is None:
            raise ValueError(f"the shared-memory ring {self.path!r} is closed")
        if not self._unlinked and self._state[_ATTACHED]:
            _unlink(self.path)
            self._unlinked = True

    def close(self) -> None:
        """No more batches from this ring: the main process lets go of it once its batches are released."""
        if self._mm is None or self._state is None:
            return
        self._state[_CLOSED] = 1
        self._maybe_unlink()  # else batches still in the queue need the name: unlinked at exit
        self._state = None
        try:
            self._mm.close()
        except BufferError:  # a packed batch not yet pickled still views it; it closes when collected
            pass
        self._mm = None


class PackedBatch:
    """A batch in a slot, as the loader's queue carries it: unpickles into arrays viewing the slot."""

    __slots__ = ("path", "slot", "base", "size", "structure")

    def __init__(self, path: str, slot: int, base: int, size: int, structure: Any) -> None:
        self.path, self.slot, self.base, self.size, self.structure = path, slot, base, size, structure

    def __reduce__(self):
        return unpack, (self.path, self.slot, self.base, self.size, self.structure)


# ------------------------------------------------------------------ the receiving process

# path -> (mmap, header view); entries of rings the worker has closed are dropped on the next unpack.
_attached: dict[str, tuple[mmap.mmap, np.ndarray]] = {}


def _attach(path: str) -> tuple[mmap.mmap, np.ndarray]:
    entry = _attached.get(path)
    if entry is None:
        for other, (_, header) in list(_attached.items()):
            if header[_CLOSED]:
                del _attached[other]  # its mapping lives on while its batches do
        with open(path, "r+b") as f:
            mm = mmap.mmap(f.fileno(), 0)
        header = np.frombuffer(mm, np.int32, count=_HEADER // 4)
        header[_ATTACHED] = 1
        entry = _attached[path] = (mm, header)
    return entry


def _release(header: np.ndarray, slot: int) -> None:
    header[_SLOT0 + slot] = 0


def unpack(path: str, slot: int, base: int, size: int, structure: Any) -> Any:
    """The batch as arrays viewing its slot; the slot is freed when the last of them is released."""
    mm, header = _attach(path)
    owner = (ctypes.c_char * max(size, 1)).from_buffer(mm, base)
    weakref.finalize(owner, _release, header, slot)
    whole = np.frombuffer(owner, np.uint8)  # type: ignore[call-overload]  # ctypes arrays are buffers (stubs: 3.12+ only)

    def view(x):
        if isinstance(x, _Leaf):
            dtype = np.dtype(x.dtype)
            count = int(np.prod(x.shape, dtype=np.int64))
            return whole[x.offset : x.offset + count * dtype.itemsize].view(dtype).reshape(x.shape)
        return x

    return map_structure(view, structure)
