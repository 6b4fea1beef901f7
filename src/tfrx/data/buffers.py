"""Output buffers that are reused once nothing refers to what was handed out.

Fresh large allocations cost a page fault per 4 KiB (and glibc hands large
freed blocks back to the system), more than copying records into pages
already mapped. A buffer handed out by :meth:`RecycledBuffers.take` is a
NumPy array over a ``ctypes`` array that exports the block's memory: every
array, memoryview or tensor made from it keeps that exporter alive, and a
``weakref.finalize`` on the exporter gives the block back once the last of
them is gone. No reference count is read, so this holds on every
interpreter, free-threaded builds included.
"""

from __future__ import annotations

import ctypes
import weakref
from collections import deque

import numpy as np

__all__ = ["RecycledBuffers"]


class RecycledBuffers:
    """Blocks of ``uint8`` memory, at most ``keep`` of them waiting for reuse."""

    def __init__(self, keep: int = 2) -> None:
        self._keep = keep
        self._free: deque = deque()  # (appends and pops are atomic: finalizers run on any thread)

    def take(self, nbytes: int) -> np.ndarray:
        """A writable ``uint8`` array of at least ``nbytes`` bytes that nothing else refers to."""
        block = None
        for _ in range(len(self._free)):
            try:
                candidate = self._free.popleft()
            except IndexError:
                break
            if candidate.shape[0] >= nbytes:
                block = candidate
                break
        if block is None:
            block = np.empty(max(nbytes + nbytes // 4, 1), np.uint8)  # (headroom: batch sizes vary)
        exporter = (ctypes.c_uint8 * block.shape[0]).from_buffer(block)  # type: ignore[arg-type]  # an ndarray is a buffer
        weakref.finalize(exporter, self._give_back, block)
        return np.frombuffer(exporter, np.uint8)  # type: ignore[call-overload]  # a ctypes array is a buffer

    def _give_back(self, block: np.ndarray) -> None:
        if len(self._free) < self._keep:
            self._free.append(block)
