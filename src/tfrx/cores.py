"""How many cores tfrx's threads may use in this process: one answer for every stage.

Parallel stages (``AUTOTUNE`` maps, prefetch, interleave, the native parser's
threads, image decoding) size themselves by :func:`usable_cores`: the cores
this process may run on (its affinity mask), divided by the number of
processes that share them. A PyTorch ``DataLoader`` forks ``num_workers``
processes that all run the same pipeline; ``tfrx.torch`` calls
:func:`share_with` in each worker so that ``k`` workers together start about
as many threads as one process would, instead of ``k`` times as many.
"""

from __future__ import annotations

import os

__all__ = ["share_with", "usable_cores"]

_share = 1


def _affinity() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def usable_cores() -> int:
    """Cores this process's threads may use (affinity-aware, this process's share of them), at least 1."""
    return max(1, _affinity() // _share)


def share_with(processes: int) -> None:
    """This process is one of ``processes`` that run the same work at once on the same cores."""
    global _share
    if not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a positive int, got {processes!r}")
    _share = processes
