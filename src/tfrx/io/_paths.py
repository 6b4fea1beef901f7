"""Path expansion and opening, shared by every part of tfrx that touches files.

Accepted sources: ``str`` and ``os.PathLike`` paths, glob patterns (expanded
and sorted), lists of any of these, open binary file objects, and fsspec URLs
such as ``gs://bucket/train-*.tfrecord``. fsspec is imported only for
non-local URLs; local paths never import it.

``storage_options`` (credentials, endpoints, retry settings) are passed to
the fsspec filesystem, as pandas and polars do. ``expand_paths`` returns
URLs as :class:`RemotePath` strings that carry their options, so every
later step (opening, sizing, range reads, index files) uses the same
filesystem settings without threading them through each call.
"""

from __future__ import annotations

import glob
import io
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    from typing_extensions import TypeIs

__all__ = [
    "Source",
    "RemotePath",
    "expand_globs",
    "Expanded",
    "open_input",
    "open_output",
    "is_url",
    "source_name",
    "local_size",
    "url_to_fs",
    "with_options",
]

# A path, URL or open binary file object.
Source = Union[str, "os.PathLike[str]", io.IOBase, Any]

_GLOB_CHARS = frozenset("*?[")


class RemotePath(str):
    """A URL (``str``) that remembers the fsspec ``storage_options`` to open it with."""

    storage_options: dict

    def __new__(cls, url: str, storage_options: dict | None = None) -> RemotePath:
        obj = super().__new__(cls, url)
        obj.storage_options = dict(storage_options or {})
        return obj

    def __reduce__(self):
        return (RemotePath, (str(self), self.storage_options))

    def __repr__(self) -> str:
        return str.__repr__(self)


def with_options(path: str, storage_options: dict | None) -> str:
    """``path`` as a :class:`RemotePath` carrying ``storage_options`` when it is a URL.

    A path derived from a URL (an index beside a shard, a temporary name)
    keeps the options of the URL it came from through this function.
    """
    if not isinstance(path, str) or not is_url(path):
        return path
    if storage_options is None:
        storage_options = getattr(path, "storage_options", None)
    return RemotePath(path, storage_options) if storage_options else path


def url_to_fs(path: str | os.PathLike[str], storage_options: dict | None = None):
    """``(filesystem, path within it)`` for a URL, with its storage options."""
    opts = storage_options if storage_options is not None else getattr(path, "storage_options", None)
    return _fsspec().core.url_to_fs(str(path), **(opts or {}))


def is_url(path: str) -> bool:
    """True for ``scheme://...`` paths other than ``file://``."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.isidentifier() and scheme.lower() != "file"


def _strip_file_scheme(path: str) -> str:
    return path[len("file://") :] if path.lower().startswith("file://") else path


def _is_file_object(obj: object) -> TypeIs[io.IOBase]:
    return hasattr(obj, "read") or hasattr(obj, "write")


def _has_glob(path: str) -> bool:
    return any(c in path for c in _GLOB_CHARS)


@dataclass(frozen=True)
class Expanded:
    """One item of a paths argument: the sources it stands for, and the glob that matched them (or None)."""

    sources: list[Source]
    pattern: str | None = None


def expand_globs(
    paths: Source | Iterable[Source], *, must_exist: bool = True, storage_options: dict | None = None
) -> list[Expanded]:
    """Each item of ``paths`` (a path, URL, glob, open file, or a list of them) with what it stands for.

    Globs are expanded and sorted; a glob that matches nothing raises
    ``FileNotFoundError``, as does a missing plain path when ``must_exist``.
    URLs come back as :class:`RemotePath` carrying ``storage_options`` (or
    the options they already carried). No rule about which files make a
    dataset applies here: :func:`tfrx.io.expand_paths` adds those.
    """
    if isinstance(paths, (str, os.PathLike)) or _is_file_object(paths):
        items: Iterable[Source] = [paths]
    else:
        try:
            items = list(paths)
        except TypeError:
            raise TypeError(
                f"expected a path, a list of paths or an open binary file, got {type(paths).__name__}"
            ) from None
    out: list[Expanded] = []
    for item in items:
        if _is_file_object(item):
            out.append(Expanded([item]))
            continue
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"expected a path or an open binary file, got {type(item).__name__}")
        path = os.fspath(item)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if is_url(path):
            opts = storage_options if storage_options is not None else getattr(item, "storage_options", None)
            if _has_glob(path):
                out.append(Expanded([with_options(u, opts) for u in _expand_url(path, opts)], path))
            else:
                out.append(Expanded([with_options(path, opts)]))
            continue
        path = _strip_file_scheme(path)
        if _has_glob(path) and not os.path.exists(path):
            matches = sorted(glob.glob(path))
            if not matches:
                raise FileNotFoundError(f"no files match {path!r}")
            out.append(Expanded(list(matches), path))
        else:
            if must_exist and not os.path.exists(path):
                raise FileNotFoundError(f"no such file: {path!r}")
            out.append(Expanded([path]))
    return out


def _fsspec():
    try:
        import fsspec
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("reading URLs needs fsspec: pip install 'tfrx[fsspec]'") from None
    return fsspec


def _expand_url(url: str, storage_options: dict | None = None) -> list[str]:
    fs, pattern = url_to_fs(url, storage_options)
    matches = sorted(fs.glob(pattern))
    if not matches:
        raise FileNotFoundError(f"no files match {url!r}")
    return [m if "://" in m else fs.unstrip_protocol(m) for m in matches]


def source_name(source: Source) -> str | None:
    """A name for messages: the path, or a file object's ``name`` when it has one."""
    if isinstance(source, (str, os.PathLike)):
        return os.fsdecode(os.fspath(source))
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else None


def local_size(source: Source) -> int | None:
    """Size in bytes of a local file (path or real file object), else ``None``."""
    try:
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            if isinstance(path, str) and is_url(path):
                return None
            return os.stat(path).st_size
        return os.fstat(source.fileno()).st_size
    except (OSError, AttributeError, io.UnsupportedOperation, ValueError):
        return None


def open_input(source: Source, *, buffering: int = 0, storage_options: dict | None = None):
    """Opens a source for binary reading. File objects are returned as they are.

    Local files are opened unbuffered by default (readers here do their own
    large reads); URLs go through fsspec with ``storage_options`` (default:
    the options a :class:`RemotePath` carries).
    """
    if _is_file_object(source):
        if isinstance(source, io.TextIOBase):
            raise TypeError("TFRecord files are binary: open the file with mode 'rb'")
        return source
    path = os.fsdecode(os.fspath(source))
    if is_url(path):
        fs, p = url_to_fs(source, storage_options)
        try:
            return RemoteInput(fs.open(p, "rb"), path)
        except FileNotFoundError:
            raise FileNotFoundError(f"no such object: {path!r}") from None
        except OSError as e:
            raise OSError(f"could not open {path!r}: {e}") from e
    return open(_strip_file_scheme(path), "rb", buffering=buffering)


class RemoteInput(io.RawIOBase):
    """A remote file opened for reading whose failures name the object and the byte offset.

    The filesystem (s3fs, gcsfs, ...) retries transient failures with
    backoff itself; when its retries run out, the error raised here says
    which object and where, and reading stops: no record is skipped
    silently.
    """

    def __init__(self, file, url: str) -> None:
        self._file = file
        self.name = url

    def _failed(self, e: BaseException) -> OSError:
        try:
            where = f" at byte {self._file.tell()}"
        except Exception:
            where = ""
        return OSError(f"reading {self.name!r}{where} failed after the filesystem's retries: {e}")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            return self._file.read(size)
        except (OSError, ValueError) as e:
            if self._file.closed:
                raise
            raise self._failed(e) from e

    def readinto(self, buffer) -> int:
        data = self.read(len(memoryview(buffer)))
        n = len(data)
        memoryview(buffer).cast("B")[:n] = data
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    @property
    def size(self) -> int:
        return self._file.size

    def close(self) -> None:
        try:
            self._file.close()
        finally:
            super().close()


def open_output(target: Source, *, buffering: int = -1, storage_options: dict | None = None):
    """Opens a target for binary writing (truncating). File objects are returned as they are.

    On object stores the object appears only when the returned file is
    closed (fsspec uploads on close, in parts for large objects), so a
    reader never sees a half-written object.
    """
    if _is_file_object(target):
        if isinstance(target, io.TextIOBase):
            raise TypeError("TFRecord files are binary: open the file with mode 'wb'")
        return target
    path = os.fsdecode(os.fspath(target))
    if is_url(path):
        fs, p = url_to_fs(target, storage_options)
        return fs.open(p, "wb")
    return open(_strip_file_scheme(path), "wb", buffering=buffering)
