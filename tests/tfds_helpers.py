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
    "dummy_mnist": "dummy_mnist/3.0.1",
}


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
