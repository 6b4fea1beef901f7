"""``compression_level=0`` streams laid out as TensorFlow writes them.

At level 0 zlib writes stored blocks, and where one block ends depends on
how much input and output space each ``deflate()`` call is given. Python's
``zlib.compressobj`` grows its output buffer its own way, so its blocks
differ from TensorFlow's once a file passes about 32 KB (zlib's smallest
"worthy" stored block). TensorFlow's ``ZlibOutputBuffer`` appends each
record as three pieces (12-byte header, data, 4-byte footer) to a 256 KiB
input buffer, deflates with ``Z_NO_FLUSH`` when a piece does not fit (a
piece larger than the buffer is deflated directly), writes through a
256 KiB output buffer, and finishes with ``Z_FINISH``; ``flush()`` deflates
with ``Z_PARTIAL_FLUSH``. This module replays those calls on the system's
zlib through ``ctypes`` (the ``zlib`` module does not expose ``avail_out``),
so level-0 files are byte-identical to TensorFlow's. Levels 1-9 do not
depend on the calls' sizes and keep using ``zlib.compressobj``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import zlib

__all__ = ["StoredDeflater", "stored_available"]

# TensorFlow's ZlibCompressionOptions input_buffer_size / output_buffer_size.
_IN_CAPACITY = 256 << 10
_OUT_CAPACITY = 256 << 10
_HEADER, _FOOTER = 12, 4
_Z_NO_FLUSH, _Z_PARTIAL_FLUSH, _Z_FINISH = 0, 1, 4


class _ZStream(ctypes.Structure):
    _fields_ = [
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_ulong),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint),
        ("total_out", ctypes.c_ulong),
        ("msg", ctypes.c_char_p),
        ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p),
        ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int),
        ("adler", ctypes.c_ulong),
        ("reserved", ctypes.c_ulong),
    ]


_LIB = None


def _lib():
    global _LIB
    if _LIB is None:
        name = ctypes.util.find_library("z") or ctypes.util.find_library("zlib") or "libz.so.1"
        try:
            lib = ctypes.CDLL(name)
            lib.deflateInit2_.argtypes = [
                ctypes.POINTER(_ZStream),
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_char_p,
                ctypes.c_int,
            ]
            lib.deflate.argtypes = [ctypes.POINTER(_ZStream), ctypes.c_int]
            lib.deflateEnd.argtypes = [ctypes.POINTER(_ZStream)]
            lib.zlibVersion.restype = ctypes.c_char_p
        except (OSError, AttributeError):
            lib = False
        _LIB = lib
    return _LIB


def stored_available() -> bool:
    """Whether the system zlib can be called to lay out level-0 streams as TensorFlow."""
    return bool(_lib())


class StoredDeflater:
    """A level-0 ``compressobj`` look-alike fed framed TFRecord bytes.

    ``compress(data)`` takes the writer's framed records in any cut (it
    follows the framing to find each header, data and footer piece);
    ``flush(mode)`` with ``zlib.Z_FINISH`` (the default) ends the stream,
    any other mode does TensorFlow's ``Z_PARTIAL_FLUSH``.
    """

    def __init__(self, wbits: int) -> None:
        lib = _lib()
        if not lib:
            raise RuntimeError("the system zlib library could not be loaded")
        self._lib = lib
        self._z = _ZStream()
        rc = lib.deflateInit2_(
            ctypes.byref(self._z),
            0,
            zlib.DEFLATED,
            wbits,
            9,
            zlib.Z_DEFAULT_STRATEGY,
            lib.zlibVersion(),
            ctypes.sizeof(_ZStream),
        )
        if rc != 0:
            raise RuntimeError(f"deflateInit2 failed with status {rc}")
        self._out = ctypes.create_string_buffer(_OUT_CAPACITY)
        self._z.next_out = ctypes.addressof(self._out)
        self._z.avail_out = _OUT_CAPACITY
        self._pending = bytearray()  # TensorFlow's input buffer (its avail_in bytes)
        self._written: list[bytes] = []
        self._piece = bytearray()  # a framing piece cut across compress() calls
        self._need = _HEADER
        self._state = 0  # 0 header, 1 data, 2 footer
        self._data_len = 0
        self._ended = False

    # ------------------------------------------------------------ zlib calls
    def _deflate(self, flush: int) -> None:
        rc = self._lib.deflate(ctypes.byref(self._z), flush)
        if rc not in (0, -5) and not (rc == 1 and flush == _Z_FINISH):  # Z_OK, Z_BUF_ERROR, Z_STREAM_END
            raise RuntimeError(f"deflate() failed with status {rc}")

    def _drain(self) -> None:
        n = _OUT_CAPACITY - self._z.avail_out
        if n:
            self._written.append(ctypes.string_at(self._out, n))
            self._z.next_out = ctypes.addressof(self._out)
            self._z.avail_out = _OUT_CAPACITY

    def _deflate_from(self, data, flush: int) -> None:
        buf = (ctypes.c_char * len(data)).from_buffer(data) if len(data) else None
        self._z.next_in = ctypes.addressof(buf) if buf is not None else None
        self._z.avail_in = len(data)
        while True:
            if self._z.avail_out == 0:
                self._drain()
            self._deflate(flush)
            if self._z.avail_out != 0:
                break
        self._z.next_in = None
        del buf

    def _deflate_buffered(self, flush: int) -> None:
        self._deflate_from(self._pending, flush)
        self._pending = bytearray()

    def _append(self, piece: bytes | bytearray | memoryview) -> None:
        n = len(piece)
        if n <= _IN_CAPACITY - len(self._pending):
            self._pending += piece
            return
        self._deflate_buffered(_Z_NO_FLUSH)
        if n <= _IN_CAPACITY:
            self._pending += piece
            return
        self._deflate_from(bytearray(piece), _Z_NO_FLUSH)

    # ------------------------------------------------------------ framing
    def _take(self, view: memoryview) -> None:
        i, n = 0, len(view)
        while i < n:
            want = self._need - len(self._piece)
            piece: bytes | memoryview
            if not self._piece and n - i >= self._need:
                piece = view[i : i + self._need]
                i += self._need
            else:
                self._piece += view[i : i + want]
                i += min(want, n - i)
                if len(self._piece) < self._need:
                    return
                piece, self._piece = bytes(self._piece), bytearray()
            if self._state == 0:
                self._data_len = int.from_bytes(bytes(piece[:8]), "little")
                self._state, self._need = 1, self._data_len
                self._append(piece)
                if self._data_len == 0:
                    self._append(b"")
                    self._state, self._need = 2, _FOOTER
            elif self._state == 1:
                self._append(piece)
                self._state, self._need = 2, _FOOTER
            else:
                self._append(piece)
                self._state, self._need = 0, _HEADER

    # ------------------------------------------------------------ compressobj API
    def compress(self, data) -> bytes:
        view = memoryview(data).cast("B")
        self._take(view)
        out, self._written = b"".join(self._written), []
        return out

    def flush(self, mode: int = zlib.Z_FINISH) -> bytes:
        if self._ended:
            return b""
        if mode == zlib.Z_FINISH:
            self._deflate_buffered(_Z_FINISH)
            self._drain()
            self._lib.deflateEnd(ctypes.byref(self._z))
            self._ended = True
        else:
            self._deflate_buffered(_Z_PARTIAL_FLUSH)
            self._drain()
        out, self._written = b"".join(self._written), []
        return out

    def __del__(self) -> None:
        if not getattr(self, "_ended", True) and getattr(self, "_lib", None):
            self._lib.deflateEnd(ctypes.byref(self._z))
