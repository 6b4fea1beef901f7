"""Which files make a dataset: paths expanded with the rules tfrx keeps for data beside its own files.

:func:`expand_paths` is :func:`tfrx.io._paths.expand_globs` plus the dataset's
policy: files tfrx keeps beside data (``.tfrx/`` and its contents, indexes
and manifests of earlier versions, hidden ``.part`` files) are dropped from
glob matches and refused when named (:mod:`tfrx.io._sidecars`), and what globs
match must make up whole shard sets with no interrupted commit
(:mod:`tfrx.io._shardsets`).
"""

from __future__ import annotations

from collections.abc import Iterable

from tfrx.io._paths import Source, expand_globs
from tfrx.io._shardsets import check_shard_sets
from tfrx.io._sidecars import check_not_sidecar, sidecar_kind

__all__ = ["expand_paths"]


def expand_paths(
    paths: Source | Iterable[Source],
    *,
    must_exist: bool = True,
    storage_options: dict | None = None,
    require_all_shards: bool = True,
) -> list[Source]:
    """Turns ``paths`` into a flat list of data file paths (``str``) and file objects.

    Globs are expanded and sorted; a glob that matches nothing raises
    ``FileNotFoundError``, as does a missing plain path when ``must_exist``.
    Order is otherwise preserved. URLs come back as
    :class:`~tfrx.io._paths.RemotePath` carrying ``storage_options`` (or the
    options they already carried).

    Files tfrx keeps beside data are dropped from glob matches; a tfrx index,
    manifest or journal named explicitly raises :class:`tfrx.SidecarFileError`
    saying what it is. What globs match must make up whole
    ``-NNNNN-of-MMMMM`` shard sets, and no file given may belong to a commit
    that was interrupted, else :class:`tfrx.IncompleteShardSetError`;
    ``require_all_shards=False`` turns that check off.
    """
    out: list[Source] = []
    globbed: list[str] = []
    for item in expand_globs(paths, must_exist=must_exist, storage_options=storage_options):
        if item.pattern is None:
            for source in item.sources:
                if isinstance(source, str):
                    check_not_sidecar(source)
            out.extend(item.sources)
            continue
        data = _data_only([str(s) for s in item.sources], item.pattern)
        keep = set(data)
        kept = [s for s in item.sources if str(s) in keep]
        globbed.extend(data)
        out.extend(kept)
    if require_all_shards and must_exist and (globbed or len(out) > 1):
        check_shard_sets(out, matched=globbed)
    return out


def _data_only(matches: list[str], pattern: str) -> list[str]:
    """Glob matches without the files tfrx keeps beside data; raises when nothing else matched."""
    data = [m for m in matches if sidecar_kind(m) is None]
    if not data:
        raise FileNotFoundError(
            f"no data files match {pattern!r}: it matches only files tfrx keeps beside data "
            f"(indexes, manifests, uncommitted shards), e.g. {matches[0]!r}"
        )
    return data
