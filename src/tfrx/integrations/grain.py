"""Grain adapter: a :class:`tfrx.RandomAccessDataset` as a Grain data source.

A ``RandomAccessDataset`` already satisfies Grain's ``RandomAccessDataSource``
protocol (``__len__``, ``__getitem__``, and ``__getitems__`` for batched
fetches), so ``grain.MapDataset.source(ds)`` and ``grain.python.DataLoader(
data_source=ds, ...)`` take it directly; Grain then owns shuffling, sharding
and checkpointing. This module only adds conveniences. Imported lazily
(``import tfrx.integrations.grain``); needs ``grain``.
"""

from __future__ import annotations

import grain

from tfrx.data._random_access import RandomAccessDataset
from tfrx.options import renamed_arguments

__all__ = ["data_source", "map_dataset"]


@renamed_arguments(files="paths")
def data_source(paths, **kwargs) -> RandomAccessDataset:
    """A Grain ``RandomAccessDataSource`` over the records of ``paths`` (arguments of RandomAccessDataset)."""
    return RandomAccessDataset(paths, **kwargs)


def map_dataset(source, *, seed: int | None = None, **kwargs):
    """``grain.MapDataset.source(...)`` over ``source`` (a RandomAccessDataset or paths), globally shuffled
    with Grain's ``shuffle(seed)`` when ``seed`` is given."""
    if not isinstance(source, RandomAccessDataset):
        source = RandomAccessDataset(source, **kwargs)
    ds = grain.MapDataset.source(source)
    return ds if seed is None else ds.shuffle(seed=seed)
