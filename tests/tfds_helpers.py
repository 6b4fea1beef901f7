"""Shared by the TFDS tests: the golden directories and a flattening that both sides go through."""

from __future__ import annotations

import os

import numpy as np

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "tfds")
DATASETS = {
    "tfrx_tensors": "tfrx_tensors/1.0.0",
    "tfrx_images": "tfrx_images/0.2.0",
    "tfrx_rlds": "tfrx_rlds/1.0.0",
    "tfrx_audio": "tfrx_audio/1.0.0",
    "tfrx_cmyk": "tfrx_cmyk/1.0.0",
    "tfrx_optional": "tfrx_optional/1.0.0",
    "tfrx_labels": "tfrx_labels/1.0.0",
    "tfrx_steps": "tfrx_steps/1.0.0",
    "tfrx_interleave": "tfrx_interleave/1.0.0",
    "dummy_mnist": "dummy_mnist/3.0.1",
}

# Split strings whose TFDS order make_golden.py saves beside each split, under an alias
# (TFDS reads a split string as one interleave over all its shards).
EXTRA_SPLITS = {"tfrx_interleave": {"train+test": "all", "train[10:300]": "slice", "test[5:]+train[:40]": "mixed"}}


def golden_dir(name: str) -> str:
    return os.path.join(GOLDEN, "data", DATASETS[name])


def flatten(x, prefix: str, out: dict) -> dict:
    """The same flattening ``tests/golden/tfds/make_golden.py`` applies to TFDS's values."""
    if type(x).__name__ == "RaggedTensor":
        x = [row.numpy() if not hasattr(row, "ragged_rank") else row for row in x]
    if isinstance(x, dict):
        for k, v in x.items():
            flatten(v, f"{prefix}{k}/", out)
    elif hasattr(x, "__iter__") and not isinstance(x, (np.ndarray, bytes, str)):
        for j, v in enumerate(x):
            flatten(v, f"{prefix}{j}/", out)
    else:
        out[prefix.rstrip("/")] = np.asarray(x)
    return out


def stored(v: np.ndarray) -> np.ndarray:
    return v.astype("S") if v.dtype == object else v


def assert_same(ours: dict, theirs: dict) -> None:
    assert sorted(ours) == sorted(theirs), sorted(set(ours) ^ set(theirs))[:10]
    for k, value in theirs.items():
        a, b = stored(ours[k]), stored(value)
        assert a.dtype == b.dtype, (k, a.dtype, b.dtype)
        assert a.shape == b.shape, (k, a.shape, b.shape)
        np.testing.assert_array_equal(a, b, err_msg=k)


def keep_encoded(features):
    """``decoders`` keeping JPEG images and audio files as their stored bytes (re-encoding a JPEG changes it)."""
    import tfrx.tfds as tt

    def walk(f):
        while isinstance(f, tt.Sequence):
            f = f.feature
        if isinstance(f, tt.FeaturesDict) and f.kind == "FeaturesDict":
            sub = {k: walk(v) for k, v in f.features.items()}
            sub = {k: v for k, v in sub.items() if v is not None}
            return sub or None
        if isinstance(f, tt.Image) and f.encoding_format == "jpeg" or isinstance(f, tt.AudioFile):
            return tt.SkipDecoding()
        return None

    return walk(features) or None


def rewrite(name: str, out_dir, cache_dir: str) -> str:
    """The golden directory ``name`` read by tfrx (in TFDS's order) and written again by ``tfrx.tfds.write``.

    One shard per split, so TFDS reads the copy in the order the original gives.
    """
    import tfrx.tfds as tt

    b = tt.builder(golden_dir(name))
    decoders = keep_encoded(b.info.features)
    splits = {split: list(b.as_dataset(split, decoders=decoders, cache_dir=cache_dir)) for split in b.info.splits}
    return tt.write(
        os.path.join(os.fspath(out_dir), name, b.info.version),
        features=b.info.features,
        splits=splits,
        supervised_keys=b.info.supervised_keys,
    )


def expected_splits(expected: dict, splits) -> dict:
    """The golden values of the plain splits only (not the extra split strings)."""
    return {k: v for k, v in expected.items() if k.split("/", 1)[0] in set(splits)}
