"""A TFDS directory into PyTorch (exactly once across ranks and workers, map-style access), Grain and JAX."""

from __future__ import annotations

import numpy as np
import pytest
from tfds_helpers import golden_dir

import tfrx.tfds as tt

torch = pytest.importorskip("torch")


def _ids(ex):
    return {"id": np.int64(ex["u64"][1]), "f32": ex["f32"]}


@pytest.mark.parametrize("workers", [0, 2])
def test_every_example_once_across_ranks_and_workers(workers, tmp_path):
    seen = []
    for rank in range(2):
        ds = tt.load(golden_dir("tfrx_tensors"), split="train+test", cache_dir=str(tmp_path))
        pipe = ds.map(_ids).shuffle(4, seed=1).batch(2).to_torch(rank=rank, world_size=2)
        loader = torch.utils.data.DataLoader(pipe, batch_size=None, num_workers=workers)
        for batch in loader:
            assert batch["f32"].dtype == torch.float32 and batch["f32"].shape[1:] == (2, 3)
            seen.extend(batch["id"].tolist())
    # ids: train 0..6, test 0..3 (each split numbers its own examples)
    assert sorted(seen) == sorted(list(range(7)) + list(range(4)))


def test_map_style_dataset_in_a_dataloader(tmp_path):
    src = tt.builder(golden_dir("dummy_mnist")).as_data_source("test", cache_dir=str(tmp_path))
    src[[0, 1]]  # images decoded on tfrx.image's thread pool before the workers fork: they need their own
    loader = torch.utils.data.DataLoader(
        src, batch_size=5, shuffle=True, num_workers=2, timeout=300, generator=torch.Generator().manual_seed(0)
    )
    n = 0
    for batch in loader:
        assert batch["image"].shape[1:] == (28, 28, 1) and batch["image"].dtype == torch.uint8
        n += len(batch["label"])
    assert n == len(src) == 20


def test_grain_random_access(tmp_path):
    grain = pytest.importorskip("grain")
    src = tt.builder(golden_dir("tfrx_images")).as_data_source("train", cache_dir=str(tmp_path))
    ds = grain.MapDataset.source(src).batch(2, batch_fn=list)
    got = [ex for b in ds for ex in b]
    assert len(got) == len(src) and all(g["video"].dtype == np.uint8 for g in got)
    np.testing.assert_array_equal(got[3]["rgb"], src[3]["rgb"])


def test_into_jax(tmp_path):
    """The tabular golden set into JAX arrays through the pipeline's to_jax()."""
    jax = pytest.importorskip("jax")
    ds = tt.load(golden_dir("tfrx_tensors"), split="train", cache_dir=str(tmp_path))
    batches = list(ds.map(lambda ex: {"f32": ex["f32"], "label": ex["label"]}).batch(3).to_jax())
    assert [b["label"].shape[0] for b in batches] == [3, 3, 1]
    assert isinstance(batches[0]["f32"], jax.Array) and batches[0]["f32"].shape == (3, 2, 3)
    want = [
        ex["label"] for ex in tt.builder(golden_dir("tfrx_tensors")).as_data_source("train", cache_dir=str(tmp_path))
    ]
    assert [int(x) for b in batches for x in b["label"]] == [int(x) for x in want]
