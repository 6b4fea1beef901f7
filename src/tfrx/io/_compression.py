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
from tfrx.io._framing import HEADER_BYTES

__all__ = [
    "detect_compression",
    "shows_compressed_stream",
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


def shows_compressed_stream(head: bytes, kind: str) -> bool:
    """Whether ``head`` (a stream's first bytes, starting with a ``kind`` header: ``"GZIP"`` / ``"ZLIB"``)
    shows a compressed stream, damaged or not.

    It does when it inflates (up to 64 KiB of output), when what inflates
    before the damage starts with a valid TFRecord header, when the deflate
    data ended and only the end check failed, or when a valid TFRecord header
    starts exactly where a first stored block's data would (level 0, or records
    that do not compress, carry their bytes as they are). A plain file whose
    damaged first bytes only look like a gzip/zlib header shows none of these
    (each would need a 32-bit check to match by chance), so a compressed file
    is never taken for a plain one because its inflate failed.
    """
    try:
        zlib.decompressobj(31 if kind == "GZIP" else 15).decompress(head, 1 << 16)
        return True
    except zlib.error:
        pass
    if _inflates_to_a_record_header(head, kind):
        return True
    stored_at = _stored_data_offset(head, kind)
    return stored_at is not None and _valid_header_at(head, stored_at)


def _valid_header_at(buf: bytes, at: int) -> bool:
    return len(buf) >= at + HEADER_BYTES and _native.masked_crc32c(buf[at : at + 8]) == int.from_bytes(
        buf[at + 8 : at + HEADER_BYTES], "little"
    )


def _inflates_to_a_record_header(head: bytes, compression: str) -> bool:
    # The head failed to inflate at once: feed it again byte by byte (at most 4096 small calls,
    # on this damaged path only) to keep what comes out before the damage.
    inflater = zlib.decompressobj(31 if compression == "GZIP" else 15)
    out = b""
    for at in range(min(len(head), 4096)):
        try:
            out += inflater.decompress(head[at : at + 1])
        except zlib.error as e:
            # "incorrect ... check": the deflate data ended whole, only the stream's end check failed
            return "incorrect data check" in str(e) or "incorrect length check" in str(e) or _valid_header_at(out, 0)
        if len(out) >= HEADER_BYTES:
            return _valid_header_at(out, 0)
    return False


def _stored_data_offset(head: bytes, compression: str) -> int | None:
    """Where the first deflate block's data starts if it is a stored block (RFC 1951 3.2.4); None: no such place."""
    at = 2  # RFC 1950: CMF, FLG (FDICT would add 4 bytes: TFRecord writers set none)
    if compression == "GZIP":
        # RFC 1952: ID1 ID2 CM FLG MTIME(4) XFL OS, then the optional fields FLG announces.
        if len(head) < 10 or head[2] != 8:
            return None
        flags, at = head[3], 10
        if flags & 0x04:  # FEXTRA
            if len(head) < at + 2:
                return None
            at += 2 + int.from_bytes(head[at : at + 2], "little")
        for bit in (0x08, 0x10):  # FNAME, FCOMMENT: zero-terminated
            if flags & bit:
                end = head.find(b"\0", at)
                if end < 0:
                    return None
                at = end + 1
        if flags & 0x02:  # FHCRC
            at += 2
    # The block header's byte (BFINAL, BTYPE 00: stored; not checked, it may be the damaged byte), LEN, NLEN.
    return at + 5


_WBITS = {"GZIP": 31, "ZLIB": 15}
# A decompressor whose state can be copied lets a failing call be replayed in
# smaller pieces; isal's cannot, so its stream must be able to seek back.
_BACKEND_COPIES = hasattr(_BACKEND.decompressobj(), "copy")
# zlib's words for a member whose deflate data ended and only the trailer check failed
_CHECK_ERRORS = ("incorrect data check", "incorrect length check")
# Compressed bytes per inflate call, and a cap on its output that only
# streams compressed more than 256:1 reach. Below the cap the inflater holds
# back nothing it could decode, so an error surfaces at the byte causing it.
_PIECE = 256 << 10
_MAX_OUTPUT = 64 << 20


def _start_offset(raw) -> int | None:
    """Where ``raw`` stands, when it can seek back there later; else None."""
    try:
        if raw.seekable():
            return raw.tell()
    except (AttributeError, OSError, ValueError):
        pass
    return None


class DecompressingReader:
    """A read-only binary stream inflating a GZIP (every member) or ZLIB stream.

    ``readinto`` fills the caller's buffer; memory stays bounded by one
    call's output (``_MAX_OUTPUT``), whatever the compression ratio.
    ``position`` counts decompressed bytes returned so far.

    Damage loses nothing before it: input goes to the inflater in pieces of
    ``_PIECE`` bytes with (nearly) no limit on the output, so it holds back
    nothing it could decode. On an error the failing input is fed again from
    the state before it in ever smaller pieces, down to the single byte that
    fails: every byte zlib inflates before the damage is handed out before
    the error is raised, whatever the caller's read sizes (the same bytes as
    zlib fed one byte at a time). The state before each call comes from a
    copy taken before it where the stream can neither seek back nor be
    opened again by ``reopen()`` (zlib only); otherwise (and always for
    isal, which cannot copy its state) the damaged member is inflated again
    with zlib from its start, skipping what was already handed out, which
    costs nothing until there is damage.
    ``data_complete`` tells, after an error, that only the check at the very
    end of the stream failed.
    """

    def __init__(
        self, raw, compression: str, *, name: str | None = None, chunk_size: int = 1 << 20, reopen=None
    ) -> None:
        self._raw = raw
        self._compression = compression
        self._wbits = _WBITS[compression]
        self._name = name
        self._chunk_size = min(chunk_size, _PIECE)  # each read is one inflate call's input
        self._origin = _start_offset(raw)  # file offset of the stream's first byte
        self._reopen = reopen  # opens the compressed stream again from its start (remote objects)
        self._reopened = None
        can_replay = self._origin is not None or reopen is not None
        self._backend = _BACKEND if _BACKEND_COPIES or can_replay else zlib
        # Careful: copy the inflater's state before each call. Only streams that cannot be read
        # again pay for it; the others are inflated again from the member's start after an error.
        self._careful = not can_replay
        self._d = self._backend.decompressobj(self._wbits)
        self._input = b""
        self._raw_read = 0  # compressed bytes read so far; self._input is their tail
        self._member_start = 0  # compressed offset of the current gzip member
        self._member_out = 0  # bytes the current member has inflated to
        self._discard = 0  # bytes a replay inflates again that were handed out already
        self._step = 0  # > 0 while narrowing in on a failing input byte
        self._pending = b""  # decompressed bytes, handed out from self._taken on
        self._taken = 0
        self._input_eof = False
        self._member_started = False
        self._done = False
        self._deferred: CorruptRecordError | None = None  # raised by the next read
        self.position = 0
        self.data_complete = False

    def readable(self) -> bool:
        return True

    @property
    def compressed_position(self) -> int:
        """File offset of the next compressed byte not yet consumed."""
        return (self._origin or 0) + self._raw_read - len(self._input)

    def _error(self, what: str, at: int | None = None) -> CorruptRecordError:
        where = f"in {self._name!r}" if self._name else "in the stream"
        at = self.compressed_position if at is None else at
        self._done = True
        return CorruptRecordError(
            f"corrupt {self._compression} stream {where} at compressed byte {at} "
            f"(after {self.position} decompressed bytes): {what}",
            path=self._name,
            offset=self.position,
            kind="compression",
            compressed_offset=at,
        )

    def _fill_input(self) -> None:
        if not self._input and not self._input_eof:
            data = self._raw.read(self._chunk_size)
            if not data:
                self._input_eof = True
            else:
                self._input = bytes(data)
                self._raw_read += len(self._input)

    def _reserved_flags_set(self) -> bool:
        """True when the gzip member starting at the next input byte sets a reserved FLG bit (RFC 1952)."""
        if self._compression != "GZIP":
            return False
        while len(self._input) < 4 and not self._input_eof:
            data = self._raw.read(self._chunk_size)
            if not data:
                self._input_eof = True
                break
            self._input += bytes(data)
            self._raw_read += len(data)
        return len(self._input) >= 4 and self._input[:2] == b"\x1f\x8b" and bool(self._input[3] & 0xE0)

    def _only_trailer_left(self) -> bool:
        """True when at most the rest of a gzip trailer (its 4-byte length) follows the failing byte."""
        limit = 4 if self._compression == "GZIP" else 0
        rest = self._input
        while len(rest) <= limit and not self._input_eof:
            self._input = b""
            self._fill_input()
            rest += self._input
        self._input = rest
        return len(rest) <= limit

    def _replay(self) -> None:
        """Inflates the current member again, carefully and with zlib, up to where it failed."""
        if self._origin is not None:
            self._raw.seek(self._origin + self._member_start)
        else:
            self.close_reopened()
            self._raw = self._reopened = self._reopen()
            left = self._member_start
            while left > 0:
                data = self._raw.read(min(left, 1 << 20))
                if not data:
                    raise self._error("the stream changed while it was read again after damage")
                left -= len(data)
        self._raw_read = self._member_start
        self._input = b""
        self._input_eof = False
        self._backend = zlib
        self._careful = True
        self._d = zlib.decompressobj(self._wbits)
        self._discard = self._member_out
        self._member_out = 0
        self._member_started = False

    def _next_member(self) -> bool:
        """At the end of a zlib stream or gzip member: starts the next gzip member, or ends the stream
        (False) at the end of the input or of its zero padding; anything else after a stream is an error."""
        rest = self._d.unused_data + self._input
        self._input = rest
        if not rest:
            self._fill_input()
            rest = self._input
        if not rest:
            self._done = True
            return False
        if self._compression != "GZIP":
            raise self._error("unexpected bytes after the end of the zlib stream")
        if not rest.strip(b"\x00"):
            # Zero padding after the last member (as block writers leave) ends the stream.
            self._input = b""
            while not self._input_eof:
                self._fill_input()
                if self._input.strip(b"\x00"):
                    raise self._error("unexpected bytes after zero padding")
                self._input = b""
            self._done = True
            return False
        self._d = self._backend.decompressobj(self._wbits)  # the next gzip member
        self._member_started = False
        self._member_start = self._raw_read - len(rest)
        self._member_out = 0
        return True

    def _inflate(self) -> bytes:
        while not self._done:
            if self._d.eof and not self._next_member():
                break
            self._fill_input()
            if not self._input and self._input_eof and not self._member_started:
                self._done = True  # an empty file
                break
            if not self._member_started and self._backend is not zlib and self._reserved_flags_set():
                # isal ignores a gzip header's reserved flag bits, which RFC 1952 (and zlib, and
                # TensorFlow) reject: let zlib inflate this member and fail where zlib fails.
                self._backend = zlib
                self._careful = True
                self._d = zlib.decompressobj(self._wbits)
            piece = self._input[: self._step or _PIECE]
            saved = self._d.copy() if self._careful else None
            try:
                out = self._d.decompress(piece, _MAX_OUTPUT)
            except Exception as e:  # zlib.error and the accelerators' equivalents
                if saved is None:
                    self._replay()
                    continue
                self._d = saved
                if len(piece) > 1:
                    self._step = max(1, len(piece) // 16)
                    continue
                what = str(e)
                at = self.compressed_position
                self._input = self._input[1:]
                self.data_complete = any(c in what for c in _CHECK_ERRORS) and self._only_trailer_left()
                raise self._error(what, at) from None
            self._member_started = True
            self._input = self._d.unconsumed_tail + self._input[len(piece) :]
            self._member_out += len(out)
            if self._discard:
                drop = min(self._discard, len(out))
                out = out[drop:]
                self._discard -= drop
            if out:
                return out
            if not self._d.eof and not self._input and self._input_eof:
                if not self._careful:
                    self._replay()  # zlib decides where the stream broke, with or without isal
                    continue
                raise self._error("the compressed stream is truncated (it ends before its end marker)")
        return b""

    def _next_output(self) -> bool:
        """Makes ``_pending`` hold undelivered bytes; False at the end of the stream."""
        if self._taken < len(self._pending):
            return True
        self._pending, self._taken = self._inflate(), 0
        return bool(self._pending)

    def read(self, size: int = -1) -> bytes:
        parts = []
        want = -1 if size is None or size < 0 else size
        while want != 0 and self._next_output():
            end = len(self._pending) if want < 0 else min(len(self._pending), self._taken + want)
            parts.append(self._pending[self._taken : end])
            if want > 0:
                want -= end - self._taken
            self.position += end - self._taken
            self._taken = end
        return b"".join(parts)

    def readinto(self, buf) -> int:
        if self._deferred is not None:
            err, self._deferred = self._deferred, None
            raise err
        view = memoryview(buf).cast("B")
        n = 0
        while n < len(view):
            try:
                if not self._next_output():
                    break
            except CorruptRecordError as err:
                if not n:
                    raise
                self._deferred = err  # hand out the good bytes first
                break
            take = min(len(self._pending) - self._taken, len(view) - n)
            view[n : n + take] = memoryview(self._pending)[self._taken : self._taken + take]
            self._taken += take
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

    def close_reopened(self) -> None:
        """Closes the stream opened again for a replay, if any (the caller's stream stays open)."""
        if self._reopened is not None:
            self._reopened.close()
            self._reopened = None

    def close(self) -> None:
        self.close_reopened()
        self._raw.close()


def make_compressor(compression: str, level: int | None, *, flushable: bool = False):
    """A ``zlib`` compressor with TensorFlow's settings (window 15, memLevel 9); ``flushable``: one whose
    ``flush(zlib.Z_SYNC_FLUSH)`` ends at a byte boundary (not TensorFlow's level-0 layout)."""
    if level is None or level == -1:
        level = zlib.Z_DEFAULT_COMPRESSION
    if level == 0 and not flushable:
        from tfrx.io._stored import StoredDeflater, stored_available

        if stored_available():  # TensorFlow's stored-block layout (see tfrx.io._stored)
            return StoredDeflater(_WBITS[compression])
    return zlib.compressobj(level, zlib.DEFLATED, _WBITS[compression], 9)
