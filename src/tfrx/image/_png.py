"""PNG: tf.io.decode_png semantics on top of Pillow, a full-depth path for 16-bit colour, and encode_png."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np

from tfrx.errors import DecodeError
from tfrx.options import renamed_arguments
from tfrx.image._common import _PNG_MAGIC, _as_bytes, _batched, _check_dtype, _describe, _pil

# libpng's png_set_rgb_to_gray(png, 1, 0.299, 0.587) keeps 15-bit fixed-point
# weights; for 8-bit samples it truncates the weighted sum and passes pure grays
# through, for 16-bit samples it rounds. tf.io.decode_png relies on exactly this.
_RGB_TO_GRAY_RED = 29900 * 32768 // 100000
_RGB_TO_GRAY_GREEN = 58700 * 32768 // 100000
_RGB_TO_GRAY_BLUE = 32768 - _RGB_TO_GRAY_RED - _RGB_TO_GRAY_GREEN


def _gamma_significant(gamma: int) -> bool:
    return abs(gamma - 100000) > 5000


def _gamma_table(exponent: float) -> np.ndarray:
    return np.floor(255 * np.power(np.arange(256) / 255.0, exponent) + 0.5).astype(np.uint32)


def _libpng_rgb_to_gray(rgb: np.ndarray, file_gamma: int = 0) -> np.ndarray:
    r = rgb[..., 0].astype(np.uint32)
    g = rgb[..., 1].astype(np.uint32)
    b = rgb[..., 2].astype(np.uint32)
    if file_gamma and _gamma_significant(file_gamma) and rgb.dtype == np.uint8:
        # A gAMA/sRGB chunk makes libpng mix in linear light through 8-bit
        # tables: to_1 with exponent 1/gamma, from_1 with the file gamma.
        to_linear = _gamma_table(int(1e10 / file_gamma + 0.5) * 1e-5)
        from_linear = _gamma_table(int(1e10 / int(1e10 / file_gamma + 0.5) + 0.5) * 1e-5)
        mixed = (
            _RGB_TO_GRAY_RED * to_linear[r]
            + _RGB_TO_GRAY_GREEN * to_linear[g]
            + _RGB_TO_GRAY_BLUE * to_linear[b]
            + 16384
        ) >> 15
        gray = np.where((r == g) & (r == b), r, from_linear[mixed])
        return gray.astype(rgb.dtype)[..., None]
    gray = _RGB_TO_GRAY_RED * r + _RGB_TO_GRAY_GREEN * g + _RGB_TO_GRAY_BLUE * b
    if rgb.dtype == np.uint16:
        gray = (gray + 16384) >> 15
    else:
        gray = np.where((r == g) & (r == b), r, gray >> 15)
    return gray.astype(rgb.dtype)[..., None]


def _png_channels(
    samples: np.ndarray,
    *,
    color: bool,
    alpha: np.ndarray | None,
    trns_mask: np.ndarray | None,
    filler: int,
    channels: int,
    out_dtype: np.dtype,
    file_gamma: int = 0,
) -> np.ndarray:
    """Apply tf.io.decode_png's transformations to decoded samples.

    ``samples`` is (h, w, 1) gray or (h, w, 3) RGB at the source depth (uint8
    or uint16); ``alpha`` the stored alpha, ``trns_mask`` the pixels a tRNS
    chunk marks transparent, ``filler`` the alpha libpng adds otherwise (TF
    asks for ``(1 << bit_depth) - 1`` of the *source* depth, so 1-, 2- and
    4-bit images get alpha 1, 3 and 15).
    """
    src16 = samples.dtype == np.uint16
    full = 65535 if src16 else 255
    if channels < 3 and color:
        samples = _libpng_rgb_to_gray(samples, file_gamma)
    elif channels >= 3 and not color:
        samples = np.repeat(samples, 3, axis=2)
    if channels % 2 == 0:
        if alpha is None:
            if trns_mask is not None:
                alpha = np.where(trns_mask, 0, full).astype(samples.dtype)[..., None]
            else:
                alpha = np.full(samples.shape[:2] + (1,), filler & full, samples.dtype)
        samples = np.concatenate([samples, alpha.reshape(samples.shape[:2] + (1,))], axis=2)
    if src16 and out_dtype == np.uint8:
        samples = (samples >> 8).astype(np.uint8)
    elif not src16 and out_dtype == np.uint16:
        samples = samples.astype(np.uint16) * np.uint16(257)
    return np.ascontiguousarray(samples)


_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


class _PngInfo:
    __slots__ = ("width", "height", "bit_depth", "color_type", "interlace", "trns", "gamma")

    def __init__(self, data: bytes | memoryview) -> None:
        buf = bytes(data[:33])
        if len(buf) < 33 or buf[:8] != _PNG_MAGIC or buf[12:16] != b"IHDR":
            raise DecodeError(f"not a PNG image ({_describe(data)}): the PNG signature or IHDR chunk is missing")
        self.width, self.height, self.bit_depth, self.color_type, _, _, self.interlace = struct.unpack(
            ">IIBBBBB", buf[16:29]
        )
        if self.color_type not in _PNG_CHANNELS or self.width == 0 or self.height == 0:
            raise DecodeError(
                f"invalid PNG header: {self.width}x{self.height}, color type {self.color_type}, bit depth {self.bit_depth}"
            )
        self.trns: bytes | None = None
        self.gamma = 0  # gAMA in units of 1e-5; an sRGB chunk implies 45455
        pos = 8
        mv = memoryview(data) if not isinstance(data, memoryview) else data
        while pos + 8 <= len(mv):
            length, kind = struct.unpack(">I4s", bytes(mv[pos : pos + 8]))
            if kind == b"IDAT" or kind == b"IEND":
                break
            if kind == b"tRNS":
                self.trns = bytes(mv[pos + 8 : pos + 8 + length])
            elif kind == b"gAMA" and length == 4 and not self.gamma:
                (self.gamma,) = struct.unpack(">I", bytes(mv[pos + 8 : pos + 12]))
            elif kind == b"sRGB":
                self.gamma = 45455
            pos += 12 + length


def _png_unfilter(raw: bytes, width: int, height: int, bpp: int) -> np.ndarray:
    """Undo PNG row filters (spec section 9) for one pass of byte-aligned pixels."""
    stride = width * bpp
    rows = np.frombuffer(raw, np.uint8)
    if rows.size < height * (stride + 1):
        raise DecodeError(f"truncated PNG image data: expected {height * (stride + 1)} bytes, got {rows.size}")
    rows = rows[: height * (stride + 1)].reshape(height, stride + 1)
    out = np.zeros((height + 1, stride + bpp), np.int32)  # a zero row above and zero pixel to the left
    for y in range(height):
        kind = rows[y, 0]
        line = rows[y, 1:].astype(np.int32)
        prior = out[y, bpp:]
        cur = out[y + 1]
        if kind == 0:
            cur[bpp:] = line
        elif kind == 2:
            cur[bpp:] = (line + prior) & 255
        elif kind == 1:  # Sub: a running sum per byte lane
            cur[bpp:] = np.cumsum(line.reshape(-1, bpp), axis=0).ravel() & 255
        elif kind in (3, 4):  # Average and Paeth depend on the byte just decoded: sequential
            left = np.zeros(bpp, np.int32)
            upleft = np.zeros(bpp, np.int32)
            for x in range(0, stride, bpp):
                up = prior[x : x + bpp]
                if kind == 3:
                    pred = (left + up) >> 1
                else:
                    p = left + up - upleft
                    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - upleft)
                    pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, upleft))
                left = (line[x : x + bpp] + pred) & 255
                cur[bpp + x : bpp + x + bpp] = left
                upleft = up
        else:
            raise DecodeError(f"corrupt PNG: unknown row filter {kind} in row {y}")
    return out[1:, bpp:].astype(np.uint8)


def _png_decode_16bit_color(data: bytes | memoryview, info: _PngInfo) -> np.ndarray:
    """Full-precision decode of 16-bit gray+alpha / RGB / RGBA PNGs (Pillow keeps only the high byte)."""
    mv = memoryview(data)
    pos, idat = 8, []
    while pos + 8 <= len(mv):
        length, kind = struct.unpack(">I4s", bytes(mv[pos : pos + 8]))
        body = bytes(mv[pos + 8 : pos + 8 + length])
        if len(body) < length or pos + 12 + length > len(mv):
            raise DecodeError(f"truncated PNG: chunk {kind!r} at byte {pos} runs past the end of the data")
        (crc,) = struct.unpack(">I", bytes(mv[pos + 8 + length : pos + 12 + length]))
        if zlib.crc32(kind + body) != crc:
            raise DecodeError(f"corrupt PNG: CRC mismatch in chunk {kind!r} at byte {pos}")
        if kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise DecodeError(f"corrupt PNG image data: {e}") from None
    nch = _PNG_CHANNELS[info.color_type]
    bpp = 2 * nch
    w, h = info.width, info.height
    if not info.interlace:
        plane = _png_unfilter(raw, w, h, bpp)
    else:  # Adam7: seven passes, each a sub-image with its own filtered rows
        plane = np.zeros((h, w * bpp), np.uint8)
        offset = 0
        for x0, y0, dx, dy in (
            (0, 0, 8, 8),
            (4, 0, 8, 8),
            (0, 4, 4, 8),
            (2, 0, 4, 4),
            (0, 2, 2, 4),
            (1, 0, 2, 2),
            (0, 1, 1, 2),
        ):
            pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
            if pw <= 0 or ph <= 0:
                continue
            size = ph * (pw * bpp + 1)
            sub = _png_unfilter(raw[offset : offset + size], pw, ph, bpp)
            offset += size
            plane.reshape(h, w, bpp)[y0::dy, x0::dx] = sub.reshape(ph, pw, bpp)
    return plane.view(">u2").astype(np.uint16).reshape(h, w, nch)


def _decode_png_one(contents: Any, channels: int, dtype: np.dtype) -> np.ndarray:
    data = _as_bytes(contents)
    info = _PngInfo(data)
    ct, depth = info.color_type, info.bit_depth
    color = bool(ct & 2)
    out_channels = channels or ((4 if info.trns else 3) if ct == 3 else _PNG_CHANNELS[ct])
    want_alpha = out_channels % 2 == 0
    if depth == 16 and (ct == 4 or (ct in (2, 6) and (dtype == np.uint16 or out_channels < 3))):
        pixels = _png_decode_16bit_color(data, info)
    else:
        pixels = _pil_png_pixels(data, info)
    alpha = trns_mask = None
    if ct == 3:
        pixels, alpha = pixels[..., :3], (pixels[..., 3:] if pixels.shape[2] == 4 else None)
    elif ct in (4, 6):
        pixels, alpha = pixels[..., :-1], pixels[..., -1:]
    elif info.trns and want_alpha:
        need = 2 if ct == 0 else 6
        if len(info.trns) >= need:
            key = np.array(struct.unpack(">" + "H" * (need // 2), info.trns[:need]), np.uint32)
            full = pixels
            if depth < 8:
                key = key * (255 // ((1 << depth) - 1))
            elif depth == 16 and pixels.dtype == np.uint8:  # Pillow kept the high byte only
                full = _png_decode_16bit_color(data, info)
            trns_mask = np.all(full.astype(np.uint32) == key, axis=2)
    filler = (1 << depth) - 1
    return _png_channels(
        pixels,
        color=color or ct == 3,
        alpha=alpha,
        trns_mask=trns_mask,
        filler=filler,
        channels=out_channels,
        out_dtype=dtype,
        file_gamma=info.gamma,
    )


def _pil_png_pixels(data: bytes | memoryview, info: _PngInfo) -> np.ndarray:
    """Decoded samples at source depth (uint16 for 16-bit gray, else uint8); palettes expanded to RGB(A)."""
    Image = _pil()
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as im:
            im.load()
            mode = im.mode
            if mode == "P":
                index = np.asarray(im)
                palette = np.asarray(im.getpalette("RGB") or [], np.uint8).reshape(-1, 3)
                lut = np.zeros((256, 4), np.uint8)
                lut[: len(palette), :3] = palette[:256]
                lut[:, 3] = 255
                trns = info.trns or b""
                lut[: len(trns), 3] = np.frombuffer(trns[:256], np.uint8)
                return lut[index] if trns else lut[index][..., :3]
            arr = np.asarray(im)
    except DecodeError:
        raise
    except Exception as e:  # Pillow raises OSError, SyntaxError, ValueError, zlib.error ...
        raise DecodeError(f"invalid PNG ({info.width}x{info.height}, {len(data)} bytes): {e}") from None
    if mode == "1":
        arr = arr.astype(np.uint8) * np.uint8(255)
    elif mode.startswith("I"):
        arr = arr.astype(np.uint16)
    if arr.ndim == 2:
        arr = arr[..., None]
    return arr


@renamed_arguments(num_threads="num_parallel_calls")
def decode_png(
    contents: Any, channels: int = 0, dtype: Any = np.uint8, *, num_parallel_calls: int | None = None
) -> Any:
    """``tf.io.decode_png``: (h, w, c) uint8 or uint16, bit-identical to TensorFlow.

    ``channels``: 0 keeps the PNG's own channels (palettes become RGB, or RGBA
    with a tRNS chunk), 1 gray, 3 RGB, 4 RGBA. ``dtype=np.uint16`` keeps 16-bit
    samples (8-bit ones are widened by x257); uint8 drops the low byte of
    16-bit samples, as TensorFlow does.
    """
    if channels not in (0, 1, 3, 4):
        raise ValueError(f"decode_png: channels must be 0, 1, 3 or 4, got {channels!r}")
    dt = _check_dtype(dtype, (np.uint8, np.uint16), "decode_png")
    return _batched(lambda c: _decode_png_one(c, channels, dt), contents, num_parallel_calls)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _filter_candidates(rows: np.ndarray, bpp: int) -> np.ndarray:
    """Every row under each of the five PNG filters (None, Sub, Up, Average, Paeth): ``(h, 5, rowbytes)`` uint8."""
    x = rows.astype(np.int16)
    up = np.zeros_like(x)
    up[1:] = x[:-1]
    left = np.zeros_like(x)
    left[:, bpp:] = x[:, :-bpp]
    up_left = np.zeros_like(x)
    up_left[1:, bpp:] = x[:-1, :-bpp]
    p = left + up - up_left
    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - up_left)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, up_left))
    return (np.stack([x, x - left, x - up, x - (left + up) // 2, x - paeth], axis=1) & 0xFF).astype(np.uint8)


def _optimize_cmf(data: bytearray, size: int) -> None:
    """libpng's optimize_cmf: the zlib header names the smallest window that covers ``size`` bytes."""
    if size > 16384:
        return
    cmf = data[0]
    cinfo = cmf >> 4
    half = 1 << (cinfo + 7)
    if size > half:
        return
    while True:
        half >>= 1
        cinfo -= 1
        if not (cinfo > 0 and size <= half):
            break
    cmf = (cmf & 0x0F) | (cinfo << 4)
    flg = data[1] & 0xE0
    data[0], data[1] = cmf, flg + 0x1F - ((cmf << 8) + flg) % 0x1F


def encode_png(image: np.ndarray, compression: int = -1) -> bytes:
    """Encode an (h, w, 1|2|3|4) uint8 or uint16 image as PNG: ``tf.io.encode_png``'s bytes exactly.

    TensorFlow writes through libpng 1.6 with its defaults, which this does
    in NumPy and zlib: each row takes the filter whose bytes, read as signed,
    sum smallest in absolute value (the earlier filter on a tie); deflate at
    ``compression`` (-1: zlib's default, 6) with the filtered strategy, memory
    level 9, the rows fed one at a time and a window shrunk to the image's
    size (and named in the zlib header as libpng's optimize_cmf does); IDAT
    chunks of 8192 bytes.
    """
    img = np.asarray(image)
    if img.ndim == 2:
        img = img[..., None]
    if img.ndim != 3 or img.shape[2] not in (1, 2, 3, 4) or img.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"encode_png: expected an (h, w, 1|2|3|4) uint8 or uint16 image, got {img.dtype} {img.shape}")
    if not -1 <= compression <= 9:
        raise ValueError(f"encode_png: compression must be in [-1, 9], got {compression}")
    h, w, c = img.shape
    bpp = c * img.itemsize
    samples = img.astype(">u2") if img.dtype == np.uint16 else img
    rows = np.ascontiguousarray(samples).view(np.uint8).reshape(h, w * bpp)
    candidates = _filter_candidates(rows, bpp)
    signed = candidates.astype(np.int16)
    cost = np.where(signed < 128, signed, 256 - signed).sum(axis=2, dtype=np.int64)
    # libpng's png_write_start_row drops the filters that read a row above (Up, Average, Paeth) from a
    # one-row image, and those that read a pixel to the left (Sub, Average, Paeth) from a one-column one.
    if h == 1:
        cost[:, [2, 3, 4]] = np.iinfo(np.int64).max
    if w == 1:
        cost[:, [1, 3, 4]] = np.iinfo(np.int64).max
    choice = np.argmin(cost, axis=1)  # the first of equal sums, as libpng keeps the earlier filter
    filtered = np.concatenate([choice.astype(np.uint8)[:, None], candidates[np.arange(h), choice]], axis=1)
    size = filtered.size
    window_bits = 15  # png_deflate_claim: a smaller window for small images
    if size <= 16384:
        half = 1 << (window_bits - 1)
        while size + 262 <= half:
            half >>= 1
            window_bits -= 1
    level = zlib.Z_DEFAULT_COMPRESSION if compression < 0 else compression
    deflate = zlib.compressobj(level, zlib.DEFLATED, window_bits, 9, zlib.Z_FILTERED)
    # Row by row, as libpng feeds zlib: stored (level 0) blocks end where the input did.
    data = bytearray(b"".join(deflate.compress(row) for row in filtered) + deflate.flush())
    _optimize_cmf(data, size)
    ihdr = struct.pack(">IIBBBBB", w, h, 8 * img.itemsize, {1: 0, 2: 4, 3: 2, 4: 6}[c], 0, 0, 0)
    idat = b"".join(_png_chunk(b"IDAT", bytes(data[i : i + 8192])) for i in range(0, len(data), 8192))
    return _PNG_MAGIC + _png_chunk(b"IHDR", ihdr) + idat + _png_chunk(b"IEND", b"")
