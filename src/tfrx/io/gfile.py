"""``tf.io.gfile`` and ``tf.io.read_file``/``write_file`` on local paths and fsspec URLs.

Local paths use the standard library; ``gs://``, ``s3://``, ``hf://`` and the
other fsspec URLs go through fsspec (``pip install tfrx[remote]``), as the
readers do.
"""

from __future__ import annotations

import glob as _glob
import os
from typing import Any

from tfrx.io._paths import _strip_file_scheme, is_url, open_input, open_output, url_to_fs

__all__ = ["GFile", "exists", "glob", "isdir", "listdir", "makedirs", "mkdir", "read_file", "remove", "write_file"]


def _path(path: Any) -> str:
    return os.fsdecode(os.fspath(path))


def _protocol_prefix(path: str) -> str:
    return path.split("://", 1)[0] + "://" if "://" in path else ""


def exists(path: Any) -> bool:
    """Whether a file or directory exists (``tf.io.gfile.exists``)."""
    p = _path(path)
    if is_url(p):
        fs, q = url_to_fs(p)
        return bool(fs.exists(q))
    return os.path.exists(_strip_file_scheme(p))


def isdir(path: Any) -> bool:
    """Whether ``path`` is a directory (``tf.io.gfile.isdir``)."""
    p = _path(path)
    if is_url(p):
        fs, q = url_to_fs(p)
        return bool(fs.isdir(q))
    return os.path.isdir(_strip_file_scheme(p))


def glob(pattern: Any) -> list[str]:
    """Paths matching a pattern, sorted (``tf.io.gfile.glob``; a list of patterns is accepted too)."""
    if isinstance(pattern, (list, tuple)):
        return sorted({m for p in pattern for m in glob(p)})
    p = _path(pattern)
    if is_url(p):
        fs, q = url_to_fs(p)
        prefix = _protocol_prefix(p)
        return sorted(m if "://" in m else prefix + m.lstrip("/") if prefix != "file://" else m for m in fs.glob(q))
    return sorted(_glob.glob(_strip_file_scheme(p)))


def listdir(path: Any) -> list[str]:
    """Entry names (not paths) in a directory, like ``tf.io.gfile.listdir``."""
    p = _path(path)
    if is_url(p):
        fs, q = url_to_fs(p)
        return sorted(os.path.basename(str(e).rstrip("/")) for e in fs.ls(q, detail=False))
    p = _strip_file_scheme(p)
    if not os.path.isdir(p):
        raise FileNotFoundError(f"listdir: {p!r} is not a directory")
    return sorted(os.listdir(p))


def makedirs(path: Any) -> None:
    """Creates a directory and its parents; an existing directory is fine (``tf.io.gfile.makedirs``)."""
    p = _path(path)
    if is_url(p):
        fs, q = url_to_fs(p)
        fs.makedirs(q, exist_ok=True)
        return
    os.makedirs(_strip_file_scheme(p), exist_ok=True)


def mkdir(path: Any) -> None:
    """Creates one directory; its parent must exist (``tf.io.gfile.mkdir``)."""
    p = _path(path)
    if is_url(p):
        fs, q = url_to_fs(p)
        fs.mkdir(q, create_parents=False)
        return
    p = _strip_file_scheme(p)
    if not os.path.isdir(p):
        os.mkdir(p)


def remove(path: Any) -> None:
    """Deletes a file (``tf.io.gfile.remove``)."""
    p = _path(path)
    if is_url(p):
        fs, q = url_to_fs(p)
        fs.rm(q)
        return
    os.remove(_strip_file_scheme(p))


class GFile:
    """A file like ``tf.io.gfile.GFile``: modes ``r``/``rb``/``w``/``wb``/``a``/``ab``; text modes decode UTF-8."""

    def __init__(self, name: Any, mode: str = "r") -> None:
        if mode not in ("r", "rb", "w", "wb", "a", "ab"):
            raise ValueError(f"GFile: mode must be one of r, rb, w, wb, a, ab; got {mode!r}")
        self.name = _path(name)
        self.mode = mode
        self._binary = "b" in mode
        if mode.startswith("r"):
            self._f = open_input(self.name, buffering=-1)
        elif mode.startswith("a"):
            if is_url(self.name):
                fs, q = url_to_fs(self.name)
                self._f = fs.open(q, "ab")
            else:
                self._f = open(_strip_file_scheme(self.name), "ab")  # noqa: SIM115 - closed by close()/__exit__
        else:
            self._f = open_output(self.name)

    def read(self, n: int = -1):
        data = self._f.read() if n is None or n < 0 else self._f.read(n)
        return data if self._binary else data.decode("utf-8")

    def readline(self):
        line = self._f.readline()
        return line if self._binary else line.decode("utf-8")

    def readlines(self) -> list:
        return list(self)

    def __iter__(self):
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def write(self, data) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        self._f.write(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def size(self) -> int:
        pos = self._f.tell()
        end = self._f.seek(0, 2)
        self._f.seek(pos)
        return end

    def flush(self) -> None:
        self._f.flush()

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> GFile:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_file(filename: Any, name: str | None = None) -> bytes:
    """The whole contents of a file as ``bytes`` (``tf.io.read_file`` returns a string tensor)."""
    with open_input(_path(filename), buffering=-1) as f:
        return f.read()


def write_file(filename: Any, contents: Any, name: str | None = None) -> None:
    """Writes ``contents`` (bytes or str), creating parent directories as ``tf.io.write_file`` does."""
    p = _path(filename)
    if isinstance(contents, str):
        contents = contents.encode("utf-8")
    elif hasattr(contents, "item") and not isinstance(contents, (bytes, bytearray)):
        contents = contents.item()
    if not is_url(p):
        parent = os.path.dirname(_strip_file_scheme(p))
        if parent:
            os.makedirs(parent, exist_ok=True)
    with open_output(p) as f:
        f.write(bytes(contents))
