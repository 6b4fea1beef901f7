"""Committing a set of written shards: one ordered sequence that a crash cannot hide.

:class:`tfrx.ShardedWriter` and the Ray datasink write every shard under a
temporary name in ``.tfrx/`` (:func:`part_path`, see :mod:`tfrx.io._sidecars`),
complete and synced (:func:`sync_part`), and then call :func:`commit_shards`,
which:

1. writes the journal ``.tfrx/<prefix>.commit.json`` listing the final
   names (atomically: a temporary file and a rename, or one PUT);
2. deletes every final name that already exists (a set written before under
   the same prefix), so that an old shard can never complete a new set;
3. moves each shard to its final name (a rename; on object stores a
   server-side copy and a delete, and the object appears whole or not at all);
4. builds the index sidecars, when asked;
5. writes the manifest ``.tfrx/<prefix>.manifest.json`` (atomically);
6. deletes the journal.

A process killed between 1 and 6 leaves the journal, and readers given a
glob or a list that includes one of its shards check that every shard it
lists exists (:mod:`tfrx.io._shardsets`): until step 3 has moved the last
shard, one is missing and reading raises :class:`tfrx.IncompleteShardSetError`;
after it, the set is whole and reads completely (only the manifest or an
index may be missing, and both are optional). Killed before step 1, no
final name has been touched. TFDS names (``-NNNNN-of-MMMMM``) are checked by
their count as well, with or without a journal. A write that fails before
the commit removes its parts with :func:`discard_parts`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import NamedTuple

from tfrx.io._paths import with_options
from tfrx.io._sidecars import journal_path, manifest_path, sidecar_path
from tfrx.io._writer import TFRecordWriter

__all__ = ["commit_shards", "part_path", "shard_name", "sync_part", "discard_parts"]

TFDS_TEMPLATE = "{prefix}.tfrecord-{index:05d}-of-{total:05d}"


class CommittedShards(NamedTuple):
    """What :func:`commit_shards` did: the shards' final ``paths`` and their ``manifest`` (unpacks as a pair)."""

    paths: list[str]
    manifest: dict


def shard_name(prefix: str, index: int, total: int, naming: str = "tfds") -> str:
    """The final name of shard ``index`` of ``total``.

    ``naming="tfds"`` gives TFDS names, ``{prefix}.tfrecord-00003-of-00016``
    (with ``prefix="data/mnist-train"``: ``data/mnist-train.tfrecord-00003-of-00016``).
    Any other string is a ``str.format`` template with the fields ``prefix``,
    ``index`` and ``total``, e.g. ``"{prefix}-{index:05d}-of-{total:05d}.tfrecord.gz"``.
    """
    template = TFDS_TEMPLATE if naming == "tfds" else naming
    return template.format(prefix=prefix, index=index, total=total)


def part_path(prefix: str, tag: str) -> str:
    """Where a writer puts a shard of ``prefix`` until the commit: ``.tfrx/<name><tag>`` beside the shards."""
    return sidecar_path(prefix, tag)


def sync_part(path: str) -> None:
    """Flushes a finished local part to disk, so that the commit never moves a shard the disk does not hold."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def discard_parts(paths, *, fs=None, directory: str | None = None) -> None:
    """Deletes the parts of a write that did not commit, then the local ``.tfrx/`` folder (``directory``, else
    the parts' folder) when nothing else is in it."""
    directories = {directory} if directory is not None and fs is None else set()
    for path in paths:
        try:
            if fs is not None:
                fs.rm(fs._strip_protocol(str(path)))
            else:
                os.remove(path)
                directories.add(os.path.dirname(path))
        except OSError:
            pass
    for directory in directories:
        try:
            os.rmdir(directory)
        except OSError:
            pass


def _before_step(step: str) -> None:
    """Called before each step of a commit; tests replace it to stop a commit there."""


def _key(fs, path) -> str:
    """``path`` as ``fs`` names it (no protocol)."""
    return fs._strip_protocol(str(path))


def _clear(finals: list[str], fs) -> None:
    """Removes what holds the final names now (shards of an earlier run)."""
    for final in finals:
        if fs is not None:
            if fs.exists(_key(fs, final)):
                fs.rm(_key(fs, final))
        else:
            try:
                os.remove(final)
            except FileNotFoundError:
                pass


def _move(parts: Sequence[tuple[str | None, int]], finals: list[str], compression: str | None, fs) -> list[dict]:
    """Moves each part to its final name (an empty shard for a ``None`` part); the manifest's entries."""
    remote = fs is not None
    entries: list[dict] = []
    for i, ((tmp, records), final) in enumerate(zip(parts, finals)):
        _before_step(f"move {i}")
        if tmp is None:  # padding: an empty (valid) shard
            TFRecordWriter(final, compression=compression).close()
        elif remote:
            fs.mv(_key(fs, tmp), _key(fs, final))
        else:
            os.replace(tmp, final)
        size = int(fs.size(_key(fs, final))) if remote else os.path.getsize(final)
        entries.append({"name": _basename(final, remote), "records": int(records), "bytes": size})
    return entries


def commit_shards(
    parts: Sequence[tuple[str | None, int]],
    prefix: str,
    *,
    naming: str = "tfds",
    compression: str | None = None,
    fs=None,
    storage_options: dict | None = None,
    manifest: bool = True,
    build_index: Callable | None = None,
    sync: bool = True,
) -> CommittedShards:
    """Moves finished shards to their final names, in the crash-detectable order above.

    ``parts``: one ``(temporary path, records)`` per shard in order; a
    ``None`` path makes an empty shard (padding up to a shard count). ``fs``
    is the fsspec filesystem of a URL ``prefix`` (``None`` for local paths).
    Returns :class:`CommittedShards`: the final paths and the manifest (written when ``manifest``).
    """

    remote = fs is not None
    total = len(parts)
    finals = [shard_name(prefix, i, total, naming) for i in range(total)]
    if remote:
        finals = [with_options(f, storage_options) for f in finals]
    directory = (str(prefix).rpartition("/")[0] if remote else os.path.dirname(prefix)) or "."
    base = _basename(prefix, remote)

    journal = journal_path(prefix)
    _before_step("journal")
    _write_json(
        journal, {"format": "tfrx-commit/1", "prefix": base, "shards": [_basename(f, remote) for f in finals]}, fs, sync
    )

    _before_step("clear")
    _clear(finals, fs)
    entries = _move(parts, finals, compression, fs)
    if sync and not remote:
        _fsync_dir(directory)
    if build_index is not None:
        _before_step("index")
        for final in finals:
            build_index(final)
    info = {
        "format": "tfrx-shards/1",
        "prefix": base,
        "compression": compression or None,
        "num_shards": total,
        "num_records": sum(e["records"] for e in entries),
        "num_bytes": sum(e["bytes"] for e in entries),
        "shardLengths": [e["records"] for e in entries],
        "shards": entries,
    }
    if manifest:
        _before_step("manifest")
        _write_json(manifest_path(prefix), info, fs, sync)
    _before_step("unjournal")
    if remote:
        fs.rm(_key(fs, journal))
    else:
        os.remove(journal)
        try:  # the sidecar folder, when nothing is left in it (no manifest, no index)
            os.rmdir(os.path.dirname(journal))
        except OSError:
            if sync:
                _fsync_dir(os.path.dirname(journal))
    return CommittedShards([str(f) if not remote else f for f in finals], info)


def _basename(path: str, remote: bool) -> str:
    return str(path).rsplit("/", 1)[-1] if remote else os.path.basename(path)


def _write_json(path: str, content: dict, fs, sync: bool) -> None:
    text = (json.dumps(content, indent=2) + "\n").encode()
    if fs is not None:
        fs.pipe_file(fs._strip_protocol(str(path)), text)  # one PUT: the object appears whole
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(text)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if sync:
        _fsync_dir(os.path.dirname(path) or ".")


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
