"""The read buffers of every reader of the process, reused once nothing refers to them.

Fresh memory costs a page fault per 4 KiB, which would halve the read speed,
and every pass over a dataset and every window of files opens a new reader;
buffers sized for whole batches of large records (tens of MiB) are also big
enough for glibc to hand back to the system when freed. So readers take
such buffers (those larger than two chunks) from one pool, and a buffer goes
back to it once no batch, view or tensor made from it is alive. Buffers of
one or two chunks are taken afresh: malloc keeps those mapped for reuse
(``tfrx/memory.py``) at less cost than making an exporter.

A buffer is handed out as a NumPy array over a ``ctypes`` array that
exports the pooled block's memory: everything made from the buffer keeps
that exporter alive, and the callback of a weak reference to the exporter
returns the block once the last of them is gone. No reference count is
read, so data handed out is never overwritten on any interpreter
(free-threaded builds and interpreters without ``sys.getrefcount``
included; where objects are not freed at once, blocks come back later).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
import weakref
from typing import Any

import numpy as np

__all__ = ["BufferPool", "READ_BUFFERS"]


def _fresh_block(nbytes: int, mapped: bool = False) -> np.ndarray:
    """A new block: an anonymous mapping of its own when ``mapped`` or off the main thread, else from malloc.

    A thread other than the main one allocates from an arena of its own,
    whose heaps are at most 64 MiB. A pool keeps its blocks for the process's
    life, so taken from such a heap (under malloc's 32 MiB mmap threshold)
    they would leave the byte strings of the next batches to spill into
    extra heaps that glibc unmaps whenever they empty, faulting their pages
    in again for every batch: 1.6x the CPU of a prefetched pipeline of ~85
    KB records, whose reader runs on the prefetch thread. The main arena's
    heap has no such limit, and reads from it were ~7% faster than from a
    mapping of its own.
    """
    if not mapped and threading.current_thread() is threading.main_thread():
        return np.empty(nbytes, np.uint8)
    block = mmap.mmap(-1, nbytes)
    if hasattr(mmap, "MADV_HUGEPAGE"):  # as a heap would get: fewer TLB misses on reads of the block
        block.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(block, np.uint8)


class BufferPool:
    """Blocks of ``uint8`` memory, at most ``max_bytes`` of them (and at most ``max_blocks`` blocks,
    where given) kept while unused; with ``mapped``, every block an anonymous mapping of its own, outside
    malloc's heaps (see :func:`_fresh_block`)."""

    def __init__(self, max_bytes: int = 64 << 20, max_blocks: int | None = None, mapped: bool = False) -> None:
        self.max_bytes = max_bytes
        self.max_blocks = max_blocks
        self.mapped = mapped
        self._lock = threading.Lock()
        self._free: list[tuple[np.ndarray, Any]] = []  # (block, the ctypes array type of its size)
        self._free_bytes = 0
        self._out: dict[int, tuple[weakref.ref, np.ndarray, Any]] = {}  # id(weakref) -> what it gives back
        self.allocations = 0  # blocks taken afresh from the allocator (reuse keeps this low)
        if hasattr(os, "register_at_fork"):  # a child forked while another thread held the lock
            os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._free = []
        self._free_bytes = 0

    @property
    def free_bytes(self) -> int:
        """Bytes of the blocks waiting for reuse."""
        return self._free_bytes

    def take(self, nbytes: int, fresh: int | None = None) -> np.ndarray:
        """A writable ``uint8`` array of at least ``nbytes`` bytes that nothing else refers to.

        The smallest unused block that fits, else a fresh one of ``fresh``
        bytes (default ``nbytes``; more leaves room for sizes that vary).
        """
        found = self._reuse(nbytes)
        if found is None:
            block = _fresh_block(max(nbytes, fresh or 0, 1), self.mapped)
            found = (block, ctypes.c_uint8 * block.shape[0])
            self.allocations += 1
        block, array_type = found
        exporter = array_type.from_buffer(block)
        ref = weakref.ref(exporter, self._give_back)
        self._out[id(ref)] = (ref, block, array_type)
        return np.frombuffer(exporter, np.uint8)

    def _reuse(self, nbytes: int) -> tuple[np.ndarray, Any] | None:
        with self._lock:
            best = -1
            for i, (block, _) in enumerate(self._free):
                if block.shape[0] >= nbytes and (best < 0 or block.shape[0] < self._free[best][0].shape[0]):
                    best = i
            if best < 0:
                return None
            found = self._free.pop(best)
            self._free_bytes -= found[0].shape[0]
            return found

    # Never waits for the lock: weakref callbacks run wherever the last reference goes, which may be
    # inside ``_reuse`` on the same thread (a garbage collection). A busy pool lets the block go.
    def _give_back(self, ref: weakref.ref) -> None:
        _, block, array_type = self._out.pop(id(ref))
        if not self._lock.acquire(blocking=False):
            return
        try:
            fits = self.max_blocks is None or len(self._free) < self.max_blocks
            if fits and self._free_bytes + block.shape[0] <= self.max_bytes:
                self._free.append((block, array_type))
                self._free_bytes += block.shape[0]
        finally:
            self._lock.release()


#: The pool every ``RecordReader`` of the process reads into.
READ_BUFFERS = BufferPool()
