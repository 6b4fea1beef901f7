"""Where tfrx keeps the files it writes beside data, and how readers recognise them.

Everything tfrx writes next to TFRecord files - record indexes, shard-set
manifests, the journal of a commit in progress, and shards not yet
committed - lives in a hidden folder ``.tfrx/`` in the data's folder::

    data/train.tfrecord-00000-of-00002
    data/train.tfrecord-00001-of-00002
    data/.tfrx/train.tfrecord-00000-of-00002.tfrxidx   (index of a shard)
    data/.tfrx/train.manifest.json                      (the shard set)
    data/.tfrx/train-00000.part                         (a shard not yet committed)
    data/.tfrx/train.commit.json                        (only while a commit runs)
    data/.tfrx/train.bert.json                          (how tfrx bert-data made the records)

No pattern written for shards can match a file in there: ``*`` and ``?``
never match a ``/``, so ``data/train*``, ``data/*-of-*``,
``data/*.tfrecord*`` or TensorFlow's and DALI's globs list only the data
folder's own entries, and the one entry ``.tfrx`` matches none of them (it
starts with a dot, and it contains neither a ``-`` nor ``tfrecord``). A
plain ``data/*`` matches it in globs that do not hide dot files (TensorFlow,
fsspec); tfrx's own readers drop it from glob matches. A folder works the
same on object stores, where it is only a key prefix.

Files of earlier versions, ``<shard>.tfrxidx``, ``<prefix>.manifest.json`` and
``<prefix>.bert.json`` beside the data, still load; tfrx's readers drop them from glob matches
(they are tfrx's, never data) and refuse them, with a message saying what
they are, when they are named explicitly.
"""

from __future__ import annotations

import json
import os

from tfrx.errors import SidecarFileError
from tfrx.io._paths import is_url, url_to_fs, with_options

__all__ = [
    "INDEX_SUFFIX",
    "JOURNAL_SUFFIX",
    "MANIFEST_SUFFIX",
    "SIDECAR_DIR",
    "check_not_sidecar",
    "index_sidecar",
    "journal_path",
    "legacy_index_sidecar",
    "legacy_manifest_path",
    "manifest_path",
    "read_journals",
    "sidecar_kind",
    "sidecar_path",
]

SIDECAR_DIR = ".tfrx"
INDEX_SUFFIX = ".tfrxidx"
MANIFEST_SUFFIX = ".manifest.json"
JOURNAL_SUFFIX = ".commit.json"
BERT_METADATA_SUFFIX = ".bert.json"
_TEMP_SUFFIXES = (".part", ".tmp")


def _split(path: str) -> tuple[str, str]:
    path = str(path)
    if is_url(path):
        directory, _, base = path.rpartition("/")
        return directory, base
    return os.path.split(path)


def _join(directory: str, name: str, like: str) -> str:
    if is_url(str(like)):
        return with_options(f"{directory}/{name}", getattr(like, "storage_options", None))
    return os.path.join(directory, name)


def sidecar_path(path, suffix: str = "") -> str:
    """``<folder of path>/.tfrx/<name of path><suffix>``; URLs keep their storage options."""
    path = os.fsdecode(os.fspath(path))
    directory, base = _split(path)
    folder = f"{directory}/{SIDECAR_DIR}" if is_url(path) else os.path.join(directory, SIDECAR_DIR)
    return _join(folder, base + suffix, path)


def index_sidecar(path) -> str:
    """Where the index of data file ``path`` is kept beside it: ``.tfrx/<name>.tfrxidx``."""
    return sidecar_path(path, INDEX_SUFFIX)


def legacy_index_sidecar(path) -> str:
    """``<path>.tfrxidx``, where earlier versions of tfrx put an index (still read)."""
    return with_options(os.fsdecode(os.fspath(path)) + INDEX_SUFFIX, getattr(path, "storage_options", None))


def manifest_path(prefix) -> str:
    """Where a shard set's manifest is written: ``.tfrx/<name of prefix>.manifest.json``."""
    return sidecar_path(prefix, MANIFEST_SUFFIX)


def legacy_manifest_path(prefix) -> str:
    """``<prefix>.manifest.json``, where earlier versions of tfrx wrote the manifest."""
    return with_options(os.fsdecode(os.fspath(prefix)) + MANIFEST_SUFFIX, getattr(prefix, "storage_options", None))


def journal_path(prefix) -> str:
    """The journal a commit in progress keeps: ``.tfrx/<name of prefix>.commit.json``."""
    return sidecar_path(prefix, JOURNAL_SUFFIX)


def sidecar_kind(path) -> str | None:
    """What tfrx file ``path`` is by its name: ``"index"``, ``"manifest"``, ``"journal"``,
    ``"bert metadata"``, ``"sidecar directory"``, ``"temporary"`` (a shard not yet committed), or ``None`` (data)."""
    directory, base = _split(os.fsdecode(os.fspath(path)).rstrip("/"))
    if base == SIDECAR_DIR:
        return "sidecar directory"
    if base.endswith(INDEX_SUFFIX):
        return "index"
    if base.endswith(JOURNAL_SUFFIX) and _split(directory)[1] == SIDECAR_DIR:
        return "journal"
    if base.endswith(MANIFEST_SUFFIX):
        return "manifest"
    if base.endswith(BERT_METADATA_SUFFIX):
        return "bert metadata"
    if base.startswith(".") and base.endswith(_TEMP_SUFFIXES):
        return "temporary"
    if _split(directory)[1] == SIDECAR_DIR:
        return "temporary" if base.endswith(_TEMP_SUFFIXES) else "sidecar"
    return None


def _data_path(path: str, kind: str) -> str | None:
    directory, base = _split(path)
    if _split(directory)[1] == SIDECAR_DIR:
        directory = _split(directory)[0]
    suffix = {
        "index": INDEX_SUFFIX,
        "manifest": MANIFEST_SUFFIX,
        "journal": JOURNAL_SUFFIX,
        "bert metadata": BERT_METADATA_SUFFIX,
    }.get(kind)
    if suffix is None:
        return None
    return _join(directory, base[: -len(suffix)], path) if directory else base[: -len(suffix)]


def check_not_sidecar(path) -> None:
    """Raises :class:`tfrx.SidecarFileError` when ``path`` is a tfrx index, manifest or journal.

    Shards not yet committed (``.part`` files) are intact TFRecord files and
    may be read on purpose (to recover a killed writer's output), so they pass.
    """
    path = os.fsdecode(os.fspath(path))
    kind = sidecar_kind(path)
    if kind in (None, "temporary"):
        return
    data = _data_path(path, kind)
    what = {
        "index": f"the record index tfrx keeps for {data!r}",
        "manifest": f"the manifest tfrx writes for the shard set {data!r}",
        "journal": f"the journal of a shard commit of {data!r} that is running or was interrupted",
        "bert metadata": f"the metadata tfrx bert-data writes for the records {data!r}",
    }.get(
        kind,
        "tfrx's folder of indexes and manifests" if kind == "sidecar directory" else "a file tfrx keeps beside data",
    )
    fix = (
        f"; read {data!r} instead" if kind == "index" else ("; read the shards it lists" if kind == "manifest" else "")
    )
    raise SidecarFileError(f"{path!r} is not a TFRecord file: it is {what}{fix}", path=path, kind=kind, data_path=data)


def read_journals(directory: str, *, like: str | None = None) -> list[tuple[str, dict]]:
    """The commit journals in ``<directory>/.tfrx/``: ``(path, contents)`` pairs (unreadable ones skipped)."""
    like = directory if like is None else like
    out = []
    if is_url(str(like)):
        fs, root = url_to_fs(_join(directory, SIDECAR_DIR, like))
        try:  # one listing request
            names = [p for p in fs.ls(root, detail=False) if str(p).endswith(JOURNAL_SUFFIX)]
        except (OSError, FileNotFoundError):
            return []
        for key in names:
            try:
                out.append((fs.unstrip_protocol(key), json.loads(fs.cat_file(key))))
            except (OSError, ValueError):
                continue
        return out
    folder = os.path.join(directory, SIDECAR_DIR)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(JOURNAL_SUFFIX))
    except OSError:
        return []
    for name in names:
        p = os.path.join(folder, name)
        try:
            with open(p, encoding="utf-8") as f:
                out.append((p, json.load(f)))
        except (OSError, ValueError):
            continue
    return out
