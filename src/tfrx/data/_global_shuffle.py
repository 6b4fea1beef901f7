"""Exact global shuffle: an iterable source over a permutation of every record.

The order of one pass is ``rng_for(seed, epoch).permutation(n)`` (NumPy's
PCG64 seeded from the user's seed and the epoch), so it is reproducible and
different each epoch. Shards (DDP ranks, then DataLoader workers) take every
``num_shards``-th position of the permutation, which partitions it: each
record is read exactly once per epoch whatever the counts. Positions are read
in blocks: each block is one batched, offset-sorted read (over URLs, its
range requests go out together), optionally read ahead on threads, the next
``READAHEAD_BLOCKS`` blocks at once (so one block's last requests overlap
the next one's first). The iterator's state is ``{seed, epoch, shards, position}``
(no record contents), so restoring it recomputes the same permutation and
continues at the same position.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext
from tfrx.data._seeds import fresh_seed, rng_for

__all__ = ["GlobalShuffleDataset", "shard_positions", "READAHEAD_BLOCKS"]

#: Blocks read ahead at once with ``readahead``: two keep requests in flight across a block's end.
READAHEAD_BLOCKS = 2


def shard_positions(n: int, shards, equal_shards: str | None = None) -> np.ndarray:
    """Positions ``0..n-1`` of a pass kept by nested ``shards`` ``[(num_shards, index), ...]``.

    ``equal_shards="drop"`` / ``"pad"`` first trims the pass to a multiple of
    the first level's shard count, or pads it with its first positions.
    """
    pos = np.arange(n, dtype=np.int64)
    for level, (num, index) in enumerate(shards):
        if level == 0 and equal_shards and num > 1:
            rem = len(pos) % num
            if rem and equal_shards == "drop":
                pos = pos[: len(pos) - rem]
            elif rem and equal_shards == "pad":
                pad = num - rem
                pos = np.concatenate([pos, np.resize(pos, pad)]) if len(pos) else pos
        pos = pos[index::num]
    return pos


class _GlobalShuffleIterator(DatasetIterator):
    def __init__(self, ds: GlobalShuffleDataset, ctx: IterContext) -> None:
        self._ds = ds
        self._epoch = list(ctx.epoch)
        self._seed = ds._seed
        self._order: np.ndarray | None = None
        self._block: list = []
        self._block_start = 0  # position of the block's first element in this shard's sequence
        self._k = 0  # elements of the block returned
        self._pending: list[tuple[int, Future]] = []  # (start, future) of the blocks read ahead, in order
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False

    def _sequence(self) -> np.ndarray:
        if self._order is None:
            ds = self._ds
            n = len(ds._source)
            pos = shard_positions(n, ds._shards, ds._equal_shards)
            order = pos
            if ds._shuffle and n:
                order = rng_for(self._seed, self._epoch).permutation(n)[pos]
            self._order = order
        return self._order

    def _read(self, start: int) -> list:
        order = self._sequence()
        return self._ds._source[order[start : start + self._ds._block_size]]

    def _submit(self, start: int) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(READAHEAD_BLOCKS, thread_name_prefix="tfrx-global-shuffle")
        self._pending.append((start, self._pool.submit(self._read, start)))

    def _drop_pending(self) -> None:
        for _, fut in self._pending:
            fut.cancel()
        self._pending = []

    def __next__(self):
        k = self._k
        if k < len(self._block):  # fast path: the current block
            self._k = k + 1
            return self._block[k]
        return self._next_block()

    def _next_block(self):
        if self._closed:
            raise StopIteration
        order = self._sequence()
        start = self._block_start + self._k
        if start >= len(order):
            raise StopIteration
        if self._pending and self._pending[0][0] == start:
            block = self._pending.pop(0)[1].result()
        else:
            self._drop_pending()
            block = self._read(start)
        self._block, self._block_start, self._k = block, start, 1
        if self._ds._readahead:
            # Blocks are block_size positions each (the last one fewer), so the next starts are known.
            following = self._pending[-1][0] + self._ds._block_size if self._pending else start + len(block)
            while len(self._pending) < READAHEAD_BLOCKS and following < len(order):
                self._submit(following)
                following += self._ds._block_size
        return block[0]

    @property
    def _position(self) -> int:
        return self._block_start + self._k

    def get_state(self) -> dict:
        ds = self._ds
        return {
            "seed": int(self._seed),
            "epoch": list(self._epoch),
            "shards": [list(s) for s in ds._shards],
            "position": int(self._position),
        }

    def set_state(self, state: dict) -> None:
        shards = [tuple(int(x) for x in s) for s in state.get("shards", [])]
        if shards != [tuple(s) for s in self._ds._shards]:
            raise ValueError(f"state is for shards {shards}, this iterator reads {list(self._ds._shards)}")
        self._drop_pending()
        self._seed = int(state["seed"])
        self._epoch = [int(e) for e in state["epoch"]]
        self._order = None
        self._block = []
        self._block_start = int(state["position"])
        self._k = 0

    def close(self) -> None:
        self._closed = True
        self._block_start += self._k  # iteration ends here; the state still says where
        self._block, self._k = [], 0
        self._drop_pending()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


class GlobalShuffleDataset(Dataset):
    """Iterable source over a :class:`tfrx.RandomAccessDataset` in a seeded global order.

    Made by :meth:`RandomAccessDataset.shuffle_global` /
    :meth:`RandomAccessDataset.as_dataset`; see the module docstring.
    """

    def __init__(
        self,
        source,
        *,
        seed: int | None,
        shuffle: bool = True,
        equal_shards: str | None = None,
        block_size: int = 256,
        readahead: bool = False,
        shards=(),
    ) -> None:
        super().__init__()
        if equal_shards not in (None, "drop", "pad"):
            raise ValueError(f'equal_shards must be None, "drop" or "pad", got {equal_shards!r}')
        if not isinstance(block_size, int) or block_size < 1:
            raise ValueError(f"block_size must be a positive int, got {block_size!r}")
        self._source = source
        # seed=None draws one now, so that shards made from this dataset (and its
        # pickled copies in DataLoader workers) share one permutation.
        self._seed = fresh_seed() if seed is None else int(seed)
        self._shuffle = bool(shuffle)
        self._equal_shards = equal_shards
        self._block_size = block_size
        self._readahead = bool(readahead)
        self._shards = tuple(tuple(s) for s in shards)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _GlobalShuffleIterator(self, ctx)

    def cardinality(self) -> int:
        n = len(self._source)
        # Arithmetic on counts (no permutation needed).
        for level, (num, index) in enumerate(self._shards):
            if level == 0 and self._equal_shards and num > 1 and n % num:
                n = n - n % num if self._equal_shards == "drop" else n + num - n % num
            n = max(0, (n - index + num - 1) // num)
        return n

    def _shard_source(self, num_shards: int, index: int) -> Dataset:
        return GlobalShuffleDataset(
            self._source,
            seed=self._seed,
            shuffle=self._shuffle,
            equal_shards=self._equal_shards,
            block_size=self._block_size,
            readahead=self._readahead,
            shards=self._shards + ((int(num_shards), int(index)),),
        )
