"""Output buffers that are reused once nothing refers to what was handed out.

Fresh large allocations cost a page fault per 4 KiB (and glibc hands large
freed blocks back to the system), more than copying records into pages
already mapped. :class:`RecycledBuffers` is the readers' pool
(:class:`tfrx.io._buffer_pool.BufferPool`: a block goes back once no array,
memoryview or tensor made from it is alive; no reference count is read)
bounded by a number of blocks, for stages whose outputs vary in size (a
shuffle's gathered batches, a batch of decoded crops).
"""

from __future__ import annotations

import numpy as np

from tfrx.io._buffer_pool import BufferPool

__all__ = ["RecycledBuffers"]


class RecycledBuffers(BufferPool):
    """Blocks of ``uint8`` memory, at most ``keep`` of them waiting for reuse."""

    def __init__(self, keep: int = 2) -> None:
        super().__init__(max_bytes=1 << 62, max_blocks=keep)

    def take(self, nbytes: int, fresh: int | None = None) -> np.ndarray:
        """A writable ``uint8`` array of at least ``nbytes`` bytes that nothing else refers to
        (a fresh block has a quarter more: the sizes asked for vary)."""
        return super().take(nbytes, fresh if fresh is not None else nbytes + nbytes // 4)
