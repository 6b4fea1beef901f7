"""Seeds: explicit, reproducible randomness for shuffles (never the global RNG)."""

from __future__ import annotations

import numpy as np

__all__ = ["fresh_seed", "rng_for"]


def fresh_seed() -> int:
    """A random 63-bit seed from OS entropy, for ``seed=None``; saved in iterator states."""
    return int(np.random.SeedSequence().generate_state(2, np.uint32).view(np.uint64)[0] >> np.uint64(1))


def rng_for(seed: int, epoch: tuple[int, ...] | list[int]) -> np.random.Generator:
    """The generator for one pass: a function of the user's seed and the epoch only."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed) & (2**63 - 1), *map(int, epoch)])))
