"""shard: every ``num_shards``-th element, starting at ``index`` (``tf.data.Dataset.shard``)."""

from __future__ import annotations

from tfrx.data.dataset import Dataset, DatasetIterator, IterContext, transformation

__all__ = ["ShardDataset"]


class _ShardIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, num_shards: int, index: int) -> None:
        self._parent = parent
        self._children = (parent,)
        self._n = num_shards
        self._index = index
        self._seen = 0  # parent elements consumed

    def __next__(self):
        while True:
            value = next(self._parent)
            pos = self._seen
            self._seen += 1
            if pos % self._n == self._index:
                return value

    def get_state(self) -> dict:
        return {"seen": self._seen, "parent": self._parent.get_state()}

    def set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._seen = int(state["seen"])


class ShardDataset(Dataset):
    def __init__(self, input_dataset: Dataset, num_shards: int, index: int) -> None:
        if not isinstance(num_shards, int) or num_shards < 1:
            raise ValueError(f"shard: num_shards must be a positive int, got {num_shards!r}")
        if not isinstance(index, int) or not 0 <= index < num_shards:
            raise ValueError(f"shard: index must be in [0, {num_shards}), got {index!r}")
        super().__init__(input_dataset)
        self._num_shards = num_shards
        self._index = index

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _ShardIterator(self._inputs[0]._iterator(ctx), self._num_shards, self._index)

    def cardinality(self) -> int:
        n = self._inputs[0].cardinality()
        if n < 0:
            return n
        return n // self._num_shards + (1 if n % self._num_shards > self._index else 0)


@transformation
def shard(self: Dataset, num_shards: int, index: int) -> Dataset:
    """Keeps elements ``index, index + num_shards, ...`` of this dataset."""
    return ShardDataset(self, num_shards, index)


def shard_pipeline(dataset: Dataset, levels: list[tuple[int, int]]) -> Dataset:
    """``dataset`` with each source restricted to nested shards ``[(num_shards, index), ...]``.

    Used for DDP ranks and DataLoader workers: the first level splits the
    data between ranks, the next splits each rank's part between workers.
    Every source decides how to split (a TFRecordDataset by files when there
    are enough, else by records); once a level splits element-wise, the
    levels below it do too, so the shards always partition the data.
    """
    levels = [(n, i) for n, i in levels if n > 1]
    if not levels:
        return dataset

    key = "-".join(f"{i}of{n}" for n, i in levels)

    def split(stage: Dataset) -> Dataset:
        if stage._inputs:
            return stage._for_shard(key)
        for n, i in levels:
            whole = stage._shard_source(n, i)
            stage = whole if whole is not None else ShardDataset(stage, n, i)
        return stage

    return dataset._rewrite(split)
