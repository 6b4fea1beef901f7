"""sample_from_datasets: elements drawn at random from several datasets, by weight.

As ``tf.data.Dataset.sample_from_datasets``: an endless stream of random
indices, drawn with probabilities ``weights`` (uniform by default), picks
the dataset of each element (``choose.py`` does the picking). With
``stop_on_empty_dataset=False`` (the default) an exhausted dataset is
dropped and the draws continue among the others, so every element of every
dataset of non-zero weight is produced once (then the output ends); with ``True`` the output ends the first time an
exhausted dataset is drawn.

The draws are a function of ``seed`` only (``numpy`` PCG64, in blocks of
1024 per index range), so orders are reproducible but differ from
TensorFlow's, whose stateless random generator is not reproduced; the
distribution is the same. ``seed=None`` draws a seed from OS entropy once,
when the dataset is built. With ``rerandomize_each_iteration=True`` every
pass (and every repetition under ``repeat``) draws anew. ``weights`` given as
a dataset (TensorFlow's varying weights) are not supported.

State: the number of draws made (a restore recomputes one block).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tfrx.data._choose import DirectedInterleaveDataset
from tfrx.data._dataset import INFINITE_CARDINALITY, Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._seeds import fresh_seed, rng_for

__all__ = ["CategoricalDataset"]

_BLOCK = 1024


class _CategoricalIterator(DatasetIterator):
    def __init__(self, cdf: np.ndarray, seed: int, epoch: tuple[int, ...]) -> None:
        self._cdf = cdf
        self._seed = seed
        self._epoch = epoch
        self._i = 0
        self._block_index = -1
        self._block: list = []

    def _load(self, b: int) -> None:
        u = rng_for(self._seed, (*self._epoch, b)).random(_BLOCK)
        idx = np.searchsorted(self._cdf, u * self._cdf[-1], side="right")
        self._block = np.minimum(idx, len(self._cdf) - 1).astype(np.int64).tolist()
        self._block_index = b

    def __next__(self):
        b, j = divmod(self._i, _BLOCK)
        if b != self._block_index:
            self._load(b)
        self._i += 1
        return np.int64(self._block[j])

    def get_state(self) -> dict:
        return {"draws": self._i, "seed": self._seed, "epoch": list(self._epoch)}

    def set_state(self, state: dict) -> None:
        self._seed = int(state["seed"])
        self._epoch = tuple(int(e) for e in state["epoch"])
        self._i = int(state["draws"])
        self._block_index = -1


class CategoricalDataset(Dataset):
    """An endless stream of ``int64`` indices ``i`` drawn with probability ``weights[i] / sum(weights)``."""

    def __init__(self, weights, seed: int | None, rerandomize_each_iteration: bool = False) -> None:
        super().__init__()
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                f"sample_from_datasets: weights must be finite, non-negative and not all 0, got {w.tolist()}"
            )
        cdf = np.cumsum(w)
        # A weight of 0 must never be drawn: searchsorted(side="right") skips empty intervals.
        self._cdf = cdf
        self._seed = fresh_seed() if seed is None else int(seed)
        self._rerandomize = bool(rerandomize_each_iteration)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _CategoricalIterator(self._cdf, self._seed, ctx.epoch if self._rerandomize else ())

    def cardinality(self) -> int:
        return INFINITE_CARDINALITY


@transformation(static=True)
def sample_from_datasets(
    datasets: Sequence[Dataset],
    weights=None,
    seed: int | None = None,
    stop_on_empty_dataset: bool = False,
    rerandomize_each_iteration: bool | None = None,
) -> Dataset:
    """Elements of ``datasets`` interleaved at random, dataset ``i`` drawn with probability ``weights[i]``."""
    datasets = list(datasets)
    if not datasets:
        raise ValueError("sample_from_datasets: `datasets` must hold at least one dataset")
    if isinstance(weights, Dataset):
        raise NotImplementedError(
            "sample_from_datasets: weights given as a dataset are not supported; pass a list of weights"
        )
    if weights is None:
        weights = np.ones(len(datasets))
    elif len(np.asarray(weights).reshape(-1)) != len(datasets):
        raise ValueError(
            f"sample_from_datasets: {len(np.asarray(weights).reshape(-1))} weights for {len(datasets)} datasets; "
            "pass one weight per dataset"
        )
    selector = CategoricalDataset(weights, seed, bool(rerandomize_each_iteration))
    drawable = (np.asarray(weights, dtype=np.float64).reshape(-1) > 0).tolist()
    return DirectedInterleaveDataset(selector, datasets, stop_on_empty_dataset, drawable)
