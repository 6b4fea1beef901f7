"""GIF and WebP through Pillow, BMP with TensorFlow's own reader."""

from __future__ import annotations

import io
import struct
from typing import Any

import numpy as np

from tfrx.errors import DecodeError
from tfrx.options import renamed_arguments
from tfrx.image._common import _as_bytes, _batched, _describe, _pil
from tfrx.image._png import _png_channels


def _pil_open(data: bytes | memoryview, fmt: str) -> Any:
    Image = _pil()
    try:
        return Image.open(io.BytesIO(data), formats=[fmt])
    except Exception as e:
        raise DecodeError(f"invalid {fmt} image ({_describe(data)}): {e}") from None


def _decode_gif_one(contents: Any, expand_animations: bool = True) -> np.ndarray:
    data = _as_bytes(contents)
    if bytes(data[:6]) not in (b"GIF87a", b"GIF89a"):
        raise DecodeError(f"not a GIF image ({_describe(data)}): the GIF87a/GIF89a signature is missing")
    frames = []
    try:
        with _pil_open(data, "GIF") as im:
            count = getattr(im, "n_frames", 1) if expand_animations else 1
            for i in range(count):
                im.seek(i)
                frames.append(np.asarray(im.convert("RGB")))
    except DecodeError:
        raise
    except Exception as e:
        raise DecodeError(f"invalid GIF image ({len(data)} bytes): {e}") from None
    return np.stack(frames)


@renamed_arguments(num_threads="num_parallel_calls")
def decode_gif(contents: Any, *, num_parallel_calls: int | None = None) -> Any:
    """``tf.io.decode_gif``: (frames, h, w, 3) uint8, frames composited onto the canvas."""
    return _batched(_decode_gif_one, contents, num_parallel_calls)


def _decode_pil_one(contents: Any, fmt: str, channels: int) -> np.ndarray:
    data = _as_bytes(contents)
    try:
        with _pil_open(data, fmt) as im:
            im.load()
            mode = im.mode
            if mode == "P":
                im = im.convert("RGBA" if "transparency" in im.info else "RGB")
            elif mode not in ("L", "LA", "RGB", "RGBA"):
                im = im.convert("RGBA" if "A" in mode else "RGB")
            arr = np.asarray(im)
    except DecodeError:
        raise
    except Exception as e:
        raise DecodeError(f"invalid {fmt} image ({len(data)} bytes): {e}") from None
    if arr.ndim == 2:
        arr = arr[..., None]
    have = arr.shape[2]
    if channels == 0 or channels == have:
        return arr
    color = have >= 3
    alpha = arr[..., -1:] if have % 2 == 0 else None
    samples = arr[..., :3] if color else arr[..., :1]
    return _png_channels(
        samples, color=color, alpha=alpha, trns_mask=None, filler=255, channels=channels, out_dtype=np.dtype(np.uint8)
    )


def _decode_bmp_one(contents: Any, channels: int) -> np.ndarray:
    """TensorFlow's BMP reader: uncompressed 8 (index values, palette ignored), 24 or 32 bits per pixel."""
    data = _as_bytes(contents)
    head = bytes(data[:34])
    if len(head) < 34 or head[:2] != b"BM":
        raise DecodeError(f"not a BMP image ({_describe(data)}): the 'BM' header is missing or shorter than 34 bytes")
    (offset,) = struct.unpack("<I", head[10:14])
    width, height = struct.unpack("<ii", head[18:26])
    bpp, compression = struct.unpack("<HI", head[28:34])
    if bpp not in (8, 24, 32) or compression not in (0, 3) or width <= 0 or height == 0:
        raise DecodeError(
            f"unsupported BMP: {width}x{height}, {bpp} bits per pixel, compression {compression} "
            "(only uncompressed 8, 24 and 32-bit BMPs are supported, as in TensorFlow)"
        )
    have = bpp // 8
    row_size = (bpp * width + 31) // 32 * 4
    rows = abs(height)
    if offset + row_size * rows > len(data):
        raise DecodeError(
            f"truncated BMP: {width}x{rows}x{have} needs {offset + row_size * rows} bytes, got {len(data)}"
        )
    plane = np.frombuffer(data, np.uint8, row_size * rows, offset).reshape(rows, row_size)[:, : width * have]
    pixels = plane.reshape(rows, width, have)
    if height > 0:  # bottom-up rows
        pixels = pixels[::-1]
    if have >= 3:
        pixels = pixels[..., [2, 1, 0, 3][:have]]
    want = channels or have
    if want == have:
        return np.ascontiguousarray(pixels)
    if have == 1:
        pixels = np.repeat(pixels, 3, axis=2)
    out = np.full(pixels.shape[:2] + (want,), 255, np.uint8)
    out[..., :3] = pixels[..., :3]
    return out


@renamed_arguments(num_threads="num_parallel_calls")
def decode_bmp(contents: Any, channels: int = 0, *, num_parallel_calls: int | None = None) -> Any:
    """``tf.io.decode_bmp``: (h, w, c) uint8; ``channels`` 0, 3 or 4."""
    if channels not in (0, 3, 4):
        raise ValueError(f"decode_bmp: channels must be 0, 3 or 4 for BMP, got {channels!r}")
    return _batched(lambda c: _decode_bmp_one(c, channels), contents, num_parallel_calls)


@renamed_arguments(num_threads="num_parallel_calls")
def decode_webp(contents: Any, channels: int = 0, *, num_parallel_calls: int | None = None) -> Any:
    """WebP through Pillow (TensorFlow has no WebP decoder): (h, w, 3 or 4) uint8."""
    if channels not in (0, 1, 3, 4):
        raise ValueError(f"decode_webp: channels must be 0, 1, 3 or 4, got {channels!r}")
    return _batched(lambda c: _decode_pil_one(c, "WEBP", channels), contents, num_parallel_calls)
