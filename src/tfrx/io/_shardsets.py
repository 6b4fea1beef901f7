"""Checks that files read as a set of shards are all there.

A glob (or a list) of shards silently reads a fraction of a dataset when
some shards are missing: a writer killed while committing, a copy that
stopped, a stale set mixed with a new one. Two checks catch that before any
record is read:

* names of the TFDS form ``<head>-NNNNN-of-MMMMM<tail>`` say how many shards
  the set has; every one of the MMMMM must be among the files given, and
  one name may not come with two counts (a set rewritten with another
  number of shards beside the old one);
* a commit journal (``.tfrx/<prefix>.commit.json``, see
  :mod:`tfrx.io._commit`) that lists one of the files given means a
  :class:`tfrx.ShardedWriter` was committing that set and did not finish;
  every shard it lists must exist.

Both raise :class:`tfrx.IncompleteShardSetError` naming the missing shards.
Readers run the name check on what their globs matched, and the journal
check on every file when given a glob or several paths; a single plain path
is a single file. An explicit list of some shards of a set (a held-out
shard, one host's part) is what the caller asked for and is not completed
by names; a glob says "whatever is there", which is what a crash would
silently shrink. ``require_all_shards=False`` turns both checks off.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from tfrx.errors import IncompleteShardSetError
from tfrx.io._paths import is_url, url_to_fs

__all__ = ["check_shard_sets"]

_TFDS = re.compile(r"^(?P<head>.*)-(?P<index>\d{5,})-of-(?P<total>\d{5,})(?P<tail>[^/]*)$")
_SHOWN = 8


def _name_list(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


_FIX = "pass require_all_shards=False (--allow-incomplete on the command line) to read the shards that are there"


def _check_tfds_names(paths: Sequence[str]) -> None:
    groups: dict[tuple[str, str, str], set[int]] = {}
    widths: dict[tuple[str, str, str], int] = {}
    for p in paths:
        m = _TFDS.match(str(p))
        if m is None:
            continue
        key = (m["head"], m["total"], m["tail"])
        groups.setdefault(key, set()).add(int(m["index"]))
        widths[key] = len(m["index"])
    by_name: dict[tuple[str, str], list[str]] = {}
    for head, total_s, tail in groups:
        by_name.setdefault((head, tail), []).append(total_s)
    for (head, tail), totals in sorted(by_name.items()):
        if len(totals) > 1:
            sets = " and ".join(f"{head}-*-of-{t}{tail} ({len(groups[(head, t, tail)])} files)" for t in sorted(totals))
            raise IncompleteShardSetError(
                f"the files given mix shard sets of different sizes: {sets}; a set rewritten with another "
                f"number of shards beside the old one? Delete the stale set, or give a pattern that names one "
                f"(e.g. {head}-*-of-{max(totals)}{tail}), or {_FIX}",
                missing=[],
            )
    for (head, total_s, tail), present in sorted(groups.items()):
        total = int(total_s)
        width = widths[(head, total_s, tail)]
        missing = [f"{head}-{i:0{width}d}-of-{total_s}{tail}" for i in range(total) if i not in present]
        if missing:
            raise IncompleteShardSetError(
                f"incomplete shard set: {len(present)} of the {total} shards {head}-*-of-{total_s}{tail} "
                f"were given; missing {_name_list(missing)} (a writer interrupted before it committed every "
                f"shard, or a partial copy); rewrite or complete the set, or {_FIX}",
                missing=missing,
            )


def _exists(path: str) -> bool:
    if is_url(path):
        fs, p = url_to_fs(path)
        return bool(fs.exists(p))
    return os.path.exists(path)


def _check_journals(paths: Sequence[str]) -> None:
    from tfrx.io._sidecars import _join, _split, read_journals

    by_dir: dict[str, tuple[str, set[str]]] = {}
    for p in paths:
        directory, base = _split(p)
        by_dir.setdefault(directory, (p, set()))[1].add(base)
    for directory, (like, names) in by_dir.items():
        for journal, content in read_journals(directory, like=like):
            shards = [str(n) for n in content.get("shards", [])] if isinstance(content, dict) else []
            if not names.intersection(shards):
                continue
            missing = [
                str(_join(directory, n, like))
                for n in shards
                if n not in names and not _exists(_join(directory, n, like))
            ]
            if missing:
                raise IncompleteShardSetError(
                    f"incomplete shard set: a writer was committing {len(shards)} shards and stopped before it "
                    f"finished (its journal {journal!r} is still there); missing {_name_list(missing)}; rewrite "
                    f"the set, or {_FIX}",
                    missing=missing,
                )


def check_shard_sets(paths: Sequence[object], *, matched: Sequence[object] | None = None) -> None:
    """Raises :class:`tfrx.IncompleteShardSetError` when ``paths`` hold part of a shard set only.

    ``matched``: the paths that came from globs, checked by their ``-NNNNN-of-MMMMM`` names
    (default: all of ``paths``); all of ``paths`` are checked against commit journals.
    """
    names = [p for p in paths if isinstance(p, str)]
    if not names:
        return
    _check_tfds_names(names if matched is None else [p for p in matched if isinstance(p, str)])
    _check_journals(names)
