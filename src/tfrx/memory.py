"""glibc malloc settings for batches of large byte strings: set in tfrx's own processes, and in yours once
a parser makes large ``bytes`` values, unless you chose your own (what glibc's own dynamic thresholds do, sooner).

Parsing image records makes one Python ``bytes`` of ~100 KB per record, and
readers and shuffles fill fresh buffers of megabytes per batch. glibc's
malloc starts with a 128 KiB mmap threshold and a 128 KiB trim threshold:
such blocks get mappings of their own, or the heap top is handed back to the
kernel as soon as a batch is freed, and the next batch then takes a page
fault for every 4 KiB it writes. That cost four to six times the parse itself
in ``benchmarks/parse.py``'s image workload (see docs/benchmarks.md).

glibc raises both thresholds by itself (up to 32 MiB and 64 MiB) once a large
mapped block is freed, but a process may never reach that state. ``import
tfrx`` leaves the allocator alone; the settled values are set at once:

* in processes tfrx owns: the ``tfrx`` command and tfrx's own worker
  processes (``to_torch(num_workers=k)``), through :func:`tune_owned_process`;
* in yours when you ask: call :func:`tune_malloc`, or set
  ``TFRX_MALLOC_TUNING=1`` before importing tfrx;
* in yours when a parser first makes a batch of large ``bytes`` values
  (2 MiB or more of them, as 25 image records do), through
  :func:`tune_for_large_values`: without it each such batch cost four to
  seven times the parse's CPU time in page faults (parse-only of ~85 KB
  image records, the same tree A/B with and without); and when the Arrow
  scan (``read_tfrecord``, the engines) first parses 2 MiB or more of a
  local file's records in one call, whatever their features: its columns
  grow piece by piece on the heap, whose top was handed back after every
  batch (BERT-like records: three times the CPU time).

Either way they are left alone where the process chose its own settings:
``TFRX_MALLOC_TUNING=0`` (or ``off``/``false``/``no``),
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_``
or a ``glibc.malloc`` entry in ``GLIBC_TUNABLES``, or another allocator
preloaded (jemalloc, tcmalloc, mimalloc in ``LD_PRELOAD``); and on C
libraries other than glibc.

The cost is memory: up to 64 MiB freed at the top of the heap stays mapped
for reuse instead of being returned at once (``malloc_trim(0)`` returns it on
demand), and blocks under 32 MiB come from the heap.
"""

from __future__ import annotations

import os

from tfrx import _native

__all__ = [
    "tune_malloc",
    "malloc_tuned",
    "tune_owned_process",
    "tune_for_large_values",
    "MMAP_THRESHOLD",
    "TRIM_THRESHOLD",
]

#: glibc's own ceiling for its dynamic mmap threshold (``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit).
MMAP_THRESHOLD = 32 << 20
#: Twice that, the trim threshold glibc's dynamic adjustment pairs with it.
TRIM_THRESHOLD = 64 << 20

_OFF = {"0", "off", "false", "no"}
_ON = {"1", "on", "true", "yes"}
_OWN_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")
_OTHER_ALLOCATORS = ("jemalloc", "tcmalloc", "mimalloc")

_tuned = False


def tune_malloc(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Sets glibc malloc's mmap and trim thresholds; returns whether they were set.

    ``import tfrx`` does not call it: call it once in a process that reads
    large records (see the module's documentation), with other values if you
    like. Returns ``False`` where
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


def tune_owned_process() -> bool:
    """Sets the thresholds in a process tfrx owns (the CLI, its own workers) unless the process chose otherwise."""
    if _native.malloc_tunable() and _chosen_elsewhere(os.environ) is None:
        return tune_malloc()
    return False


_large_values_seen = False


def tune_for_large_values() -> bool:
    """What the parsers call when they first make a batch of large ``bytes`` values: the thresholds set
    once, unless the process chose its own settings (as :func:`tune_owned_process`). Returns whether tfrx
    has set them (now or before)."""
    global _large_values_seen
    if not _large_values_seen:
        _large_values_seen = True
        tune_owned_process()
    return _tuned


def _tune_if_asked() -> None:
    """At import: only where ``TFRX_MALLOC_TUNING`` asks for it."""
    if os.environ.get("TFRX_MALLOC_TUNING", "").strip().lower() in _ON:
        tune_owned_process()
