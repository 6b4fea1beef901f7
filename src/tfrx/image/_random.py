"""Random crops and flips (``tf.image.random_crop``, ``random_flip_left_right``, ``random_flip_up_down``).

The draws come from NumPy, not TensorFlow's Philox kernels, so the same seed
gives different crops and flips than TensorFlow (the distributions are the
same: offsets uniform over every valid position, each image flipped with
probability 1/2). As in TensorFlow, calls with the same op ``seed`` go on
along one sequence (two calls give two different draws) and the sequence is
reproducible in a new process; ``seed=None`` draws from OS entropy.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tfrx.image._crop import _image

__all__ = ["flip_left_right", "flip_up_down", "random_crop", "random_flip_left_right", "random_flip_up_down"]

_lock = threading.Lock()
_generators: dict[int, np.random.Generator] = {}


def _rng(seed: int | None) -> np.random.Generator:
    if seed is None:
        return np.random.default_rng()
    with _lock:
        gen = _generators.get(int(seed))
        if gen is None:
            gen = _generators[int(seed)] = np.random.Generator(
                np.random.PCG64(np.random.SeedSequence([int(seed) & (2**63 - 1)]))
            )
        return gen


def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> np.ndarray:
    """A window of ``size`` (one entry per dimension of ``value``) at a uniformly drawn offset."""
    arr = np.asarray(value)
    size = [int(s) for s in np.asarray(size).reshape(-1)]
    if len(size) != arr.ndim:
        raise ValueError(
            f"random_crop: size has {len(size)} entries but value has {arr.ndim} dimensions (shape {arr.shape})"
        )
    if any(s < 0 or s > d for s, d in zip(size, arr.shape)):
        raise ValueError(f"random_crop: size {size} must be within the shape {list(arr.shape)} of value")
    rng = _rng(seed)
    offsets = [int(rng.integers(0, d - s + 1)) for s, d in zip(size, arr.shape)]
    return arr[tuple(slice(o, o + s) for o, s in zip(offsets, size))].copy()


def flip_left_right(image: Any) -> np.ndarray:
    """``tf.image.flip_left_right``: the width axis reversed."""
    arr = _image(image, "flip_left_right")
    return np.flip(arr, axis=-2).copy()


def flip_up_down(image: Any) -> np.ndarray:
    """``tf.image.flip_up_down``: the height axis reversed."""
    arr = _image(image, "flip_up_down")
    return np.flip(arr, axis=-3).copy()


def _random_flip(image: Any, seed: int | None, axis: int, what: str) -> np.ndarray:
    arr = _image(image, what)
    rng = _rng(seed)
    if arr.ndim == 3:
        return np.flip(arr, axis=axis).copy() if rng.random() < 0.5 else arr.copy()
    flips = rng.random(arr.shape[0]) < 0.5
    out = arr.copy()
    out[flips] = np.flip(arr[flips], axis=axis)
    return out


def random_flip_left_right(image: Any, seed: int | None = None) -> np.ndarray:
    """Each image mirrored left-right with probability 1/2."""
    return _random_flip(image, seed, -2, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> np.ndarray:
    """Each image mirrored top-bottom with probability 1/2."""
    return _random_flip(image, seed, -3, "random_flip_up_down")
