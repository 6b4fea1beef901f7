"""GZIP / ZLIB streams for TFRecord files, and detection from content.

Decompression uses the fastest zlib-compatible module present: ``isal``
(the ``fast-gzip`` extra; about twice zlib's speed on TFRecord data), then
``zlib_ng``, then the standard library's ``zlib``. Compression always uses
the standard ``zlib`` with TensorFlow's parameters (memLevel 9), so
compressed files match what TensorFlow writes.
"""

from __future__ import annotations

import zlib

from tfrx import _native
from tfrx.errors import CorruptRecordError

__all__ = [
    "detect_compression",
    "decompressor_backend",
    "DecompressingReader",
    "make_compressor",
    "GZIP_MAGIC",
]

GZIP_MAGIC = b"\x1f\x8b"


def _pick_backend():
    try:
        from isal import isal_zlib

        return isal_zlib, "isal"
    except ImportError:
        pass
    try:
        from zlib_ng import zlib_ng

        return zlib_ng, "zlib-ng"
    except ImportError:
        pass
    return zlib, "zlib"


_BACKEND, _BACKEND_NAME = _pick_backend()


def decompressor_backend() -> str:
    """The module used to inflate GZIP/ZLIB files: ``"isal"``, ``"zlib-ng"`` or ``"zlib"``."""
    return _BACKEND_NAME


def _valid_zlib_header(head: bytes) -> bool:
    # RFC 1950: CM = 8 (deflate), CINFO <= 7, and (CMF*256 + FLG) % 31 == 0.
    if len(head) < 2:
        return False
    cmf, flg = head[0], head[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and ((cmf << 8) | flg) % 31 == 0


def detect_compression(head: bytes) -> str:
    """Compression of a TFRecord stream from its first (at least 12) bytes.

    A header whose length CRC validates means uncompressed, even when the
    bytes happen to start with the gzip magic; otherwise the gzip magic means
    GZIP and a valid zlib header means ZLIB; anything else is read as
    uncompressed (and reported as damaged if it is not a TFRecord stream).
    """
    if len(head) >= 12 and _native.masked_crc32c(head[:8]) == int.from_bytes(head[8:12], "little"):
        return ""
    if head[:2] == GZIP_MAGIC:
        return "GZIP"
    if _valid_zlib_header(head):
        return "ZLIB"
    return ""


_WBITS = {"GZIP": 31, "ZLIB": 15}


class DecompressingReader:
    """A read-only binary stream inflating a GZIP (every member) or ZLIB stream.

    ``readinto`` fills the caller's buffer; memory stays bounded by the input
    chunk and the requested size, whatever the compression ratio.
    ``position`` counts decompressed bytes returned so far.
    """

    def __init__(self, raw, compression: str, *, name: str | None = None, chunk_size: int = 1 << 20) -> None:
        self._raw = raw
        self._compression = compression
        self._wbits = _WBITS[compression]
        self._name = name
        self._chunk_size = chunk_size
        self._d = _BACKEND.decompressobj(self._wbits)
        self._input = b""
        self._pending = b""  # decompressed bytes not yet handed out
        self._input_eof = False
        self._member_started = False
        self._done = False
        self._deferred: CorruptRecordError | None = None  # raised by the next read
        self.position = 0

    def readable(self) -> bool:
        return True

    def _error(self, what: str) -> CorruptRecordError:
        where = f"in {self._name!r}" if self._name else "in the stream"
        return CorruptRecordError(
            f"corrupt {self._compression} stream {where}: {what}, after {self.position} decompressed bytes",
            path=self._name,
            offset=self.position,
            kind="compression",
        )

    def _fill_input(self) -> None:
        if not self._input and not self._input_eof:
            data = self._raw.read(self._chunk_size)
            if not data:
                self._input_eof = True
            else:
                self._input = bytes(data)

    def _inflate(self, max_length: int) -> bytes:
        while not self._done:
            if self._d.eof:
                rest = self._d.unused_data + self._input
                self._input = b""
                if not rest:
                    self._fill_input()
                    rest, self._input = self._input, b""
                if not rest:
                    self._done = True
                    break
                if self._compression != "GZIP":
                    raise self._error("unexpected bytes after the end of the zlib stream")
                if not rest.strip(b"\x00"):
                    # Zero padding after the last member (as block writers leave) ends the stream.
                    while not self._input_eof:
                        self._fill_input()
                        if self._input.strip(b"\x00"):
                            raise self._error("unexpected bytes after zero padding")
                        self._input = b""
                    self._done = True
                    break
                self._d = _BACKEND.decompressobj(self._wbits)  # the next gzip member
                self._member_started = False
                self._input = rest
            self._fill_input()
            if not self._input and self._input_eof and not self._member_started:
                self._done = True  # an empty file
                break
            try:
                # With no input left, this drains output zlib still holds back.
                out = self._d.decompress(self._input, max_length)
            except Exception as e:  # zlib.error and the accelerators' equivalents
                raise self._error(str(e)) from None
            self._member_started = True
            self._input = self._d.unconsumed_tail
            if out:
                return out
            if not self._d.eof and not self._input and self._input_eof:
                raise self._error("the compressed stream is truncated (it ends before its end marker)")
        return b""

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            parts = [self._pending]
            self._pending = b""
            while True:
                chunk = self._inflate(1 << 22)
                if not chunk:
                    break
                parts.append(chunk)
            data = b"".join(parts)
            self.position += len(data)
            return data
        if not self._pending:
            self._pending = self._inflate(max(size, 1 << 16))
        data, self._pending = self._pending[:size], self._pending[size:]
        self.position += len(data)
        return data

    def readinto(self, buf) -> int:
        if self._deferred is not None:
            err, self._deferred = self._deferred, None
            raise err
        view = memoryview(buf).cast("B")
        n = 0
        while n < len(view):
            if not self._pending:
                try:
                    self._pending = self._inflate(len(view) - n)
                except CorruptRecordError as err:
                    if not n:
                        raise
                    self._deferred = err  # hand out the good bytes first
                    break
                if not self._pending:
                    break
            take = min(len(self._pending), len(view) - n)
            view[n : n + take] = self._pending[:take]
            self._pending = self._pending[take:]
            n += take
            self.position += take  # kept current: errors name the offset they occur at
        return n

    def skip(self, count: int) -> int:
        """Decompresses and discards ``count`` bytes; returns how many were skipped."""
        skipped = 0
        while skipped < count:
            data = self.read(min(count - skipped, 1 << 22))
            if not data:
                break
            skipped += len(data)
        return skipped

    def close(self) -> None:
        self._raw.close()


def make_compressor(compression: str, level: int | None):
    """A ``zlib`` compressor with TensorFlow's settings (window 15, memLevel 9)."""
    if level is None or level == -1:
        level = zlib.Z_DEFAULT_COMPRESSION
    if level == 0:
        from tfrx.io.stored import StoredDeflater, stored_available

        if stored_available():  # TensorFlow's stored-block layout (see tfrx.io.stored)
            return StoredDeflater(_WBITS[compression])
    return zlib.compressobj(level, zlib.DEFLATED, _WBITS[compression], 9)
