"""glibc malloc settings for batches of large byte strings.

Parsing image records makes one Python ``bytes`` of ~100 KB per record, and
readers and shuffles fill fresh buffers of megabytes per batch. glibc's
malloc starts with a 128 KiB mmap threshold and a 128 KiB trim threshold:
such blocks get mappings of their own, or the heap top is handed back to the
kernel as soon as a batch is freed, and the next batch then takes a page
fault for every 4 KiB it writes. That cost four to six times the parse itself
in ``benchmarks/parse.py``'s image workload (see docs/benchmarks.md).

glibc raises both thresholds by itself (up to 32 MiB and 64 MiB) once a large
mapped block is freed, but a process may never reach that state. When tfrx is
imported it sets those settled values at once, on glibc only, unless:

* ``TFRX_MALLOC_TUNING=0`` (or ``off``/``false``/``no``) is set, or
* the process already chose its own settings: ``MALLOC_MMAP_THRESHOLD_``,
  ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_`` or a ``glibc.malloc``
  entry in ``GLIBC_TUNABLES`` is set, or another allocator is preloaded
  (jemalloc, tcmalloc, mimalloc in ``LD_PRELOAD``).

The cost is memory: up to 64 MiB freed at the top of the heap stays mapped
for reuse instead of being returned at once (``malloc_trim(0)`` returns it on
demand), and blocks under 32 MiB come from the heap.
"""

from __future__ import annotations

import os

from tfrx import _native

__all__ = ["tune_malloc", "malloc_tuned", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

#: glibc's own ceiling for its dynamic mmap threshold (``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit).
MMAP_THRESHOLD = 32 << 20
#: Twice that, the trim threshold glibc's dynamic adjustment pairs with it.
TRIM_THRESHOLD = 64 << 20

_OFF = {"0", "off", "false", "no"}
_OWN_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")
_OTHER_ALLOCATORS = ("jemalloc", "tcmalloc", "mimalloc")

_tuned = False


def tune_malloc(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Sets glibc malloc's mmap and trim thresholds; returns whether they were set.

    tfrx calls this once at import (see the module's documentation for when it
    does not); call it yourself to choose other values. Returns ``False`` where
    the C library is not glibc or refuses the values (above 1 GiB, or above
    what this glibc allows for the mmap threshold).
    """
    global _tuned
    if mmap_threshold < 0 or trim_threshold < 0:
        raise ValueError("malloc thresholds must be non-negative")
    ok = bool(_native.set_malloc_thresholds(int(mmap_threshold), int(trim_threshold)))
    _tuned = _tuned or ok
    return ok


def malloc_tuned() -> bool:
    """Whether tfrx has set the malloc thresholds in this process."""
    return _tuned


def _chosen_elsewhere(environ: os._Environ | dict) -> str | None:
    """Why tfrx leaves the allocator alone, or None."""
    if environ.get("TFRX_MALLOC_TUNING", "").strip().lower() in _OFF:
        return "TFRX_MALLOC_TUNING"
    for name in _OWN_SETTINGS:
        if name in environ:
            return name
    if "glibc.malloc." in environ.get("GLIBC_TUNABLES", ""):
        return "GLIBC_TUNABLES"
    preload = environ.get("LD_PRELOAD", "")
    if any(a in preload for a in _OTHER_ALLOCATORS):
        return "LD_PRELOAD"
    return None


def _tune_at_import() -> None:
    if _native.malloc_tunable() and _chosen_elsewhere(os.environ) is None:
        tune_malloc()
