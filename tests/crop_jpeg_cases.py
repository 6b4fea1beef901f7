"""JPEGs and crop windows shared by tests/test_image_crop_decode.py and tests/golden/make_crop_jpeg_golden.py.

The JPEG files themselves are committed (``tests/golden/crop_jpeg/``): an
encoder's bytes depend on its version, and the golden digests are of
TensorFlow's decodes of exactly these bytes.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

JPEG_DIR = Path(__file__).resolve().parent / "golden" / "crop_jpeg"
GOLDEN = JPEG_DIR / "decode_and_crop_jpeg.json"

# name: (height, width, Pillow mode, subsampling (0 = 4:4:4, 1 = 4:2:2, 2 = 4:2:0), progressive)
FILES = {
    "420_37x53.jpg": (37, 53, "RGB", 2, False),
    "420_64x48.jpg": (64, 48, "RGB", 2, False),
    "420_progressive_61x83.jpg": (61, 83, "RGB", 2, True),
    "422_45x70.jpg": (45, 70, "RGB", 1, False),
    "444_33x47.jpg": (33, 47, "RGB", 0, False),
    "444_progressive_29x40.jpg": (29, 40, "RGB", 0, True),
    "gray_31x45.jpg": (31, 45, "L", 0, False),
    "gray_progressive_20x26.jpg": (20, 26, "L", 0, True),
    "420_17x9.jpg": (17, 9, "RGB", 2, False),
    "420_3x2.jpg": (3, 2, "RGB", 2, False),
    "cmyk_24x30.jpg": (24, 30, "CMYK", 0, False),
}

# (channels, fancy_upscaling, dct_method, ratio) decoded for every window.
OPTIONS = [
    (0, True, "", 1),
    (3, True, "", 1),
    (1, True, "", 1),
    (3, False, "", 1),
    (3, True, "INTEGER_ACCURATE", 1),
    (3, True, "", 2),
]


def make_jpeg(name: str) -> bytes:
    """A noisy scene with edges (chroma that differs pixel to pixel, so edge handling shows)."""
    from PIL import Image

    h, w, mode, subsampling, progressive = FILES[name]
    rng = np.random.default_rng(sum(name.encode()))
    y, x = np.mgrid[0:h, 0:w]
    channels = 4 if mode == "CMYK" else 3
    img = (
        128
        + 70 * np.sin(x[..., None] / (3.0 + np.arange(channels)) + y[..., None] / 5.0)
        + rng.normal(0, 35, (h, w, channels))
    )
    pixels = np.clip(img, 0, 255).astype(np.uint8)
    if mode == "CMYK":
        pil = Image.frombytes("CMYK", (w, h), pixels.tobytes())
    else:
        pil = Image.fromarray(pixels[..., 0] if mode == "L" else pixels)
    out = io.BytesIO()
    pil.save(out, format="JPEG", quality=88, subsampling=subsampling, progressive=progressive)
    return out.getvalue()


def jpeg(name: str) -> bytes:
    return (JPEG_DIR / name).read_bytes()


def windows(height: int, width: int) -> list[list[int]]:
    """Windows at every edge and corner, MCU-aligned and not, one pixel to the whole image."""
    h, w = height, width
    out = [
        [0, 0, h, w],
        [0, 0, 1, 1],
        [h - 1, w - 1, 1, 1],
        [0, w - 1, h, 1],
        [h - 1, 0, 1, w],
        [0, 0, h, max(1, w // 2)],
        [h // 3, w // 3, max(1, h // 2), max(1, w // 2)],
        [min(h - 1, 8), min(w - 1, 16), h - min(h - 1, 8), w - min(w - 1, 16)],
        [min(h - 1, 1), min(w - 1, 1), max(1, h - 2), max(1, w - 2)],
        [0, min(w - 1, 15), h, max(1, min(w - 15, 2))],
    ]
    rng = np.random.default_rng(h * 1000 + w)
    for _ in range(4):
        y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
        out.append([y, x, int(rng.integers(1, h - y + 1)), int(rng.integers(1, w - x + 1))])
    return out


def cases():
    """(file name, window, channels, fancy_upscaling, dct_method, ratio) for every golden digest."""
    for name, (h, w, *_rest) in FILES.items():
        for channels, fancy, dct, ratio in OPTIONS:
            if name.startswith("cmyk") and channels == 1:
                continue  # libjpeg has no CMYK -> grayscale conversion (TensorFlow fails too)
            sh, sw = -(-h // ratio), -(-w // ratio)
            for window in windows(sh, sw):
                yield name, window, channels, fancy, dct, ratio


def key(name: str, window: list[int], channels: int, fancy: bool, dct: str, ratio: int) -> str:
    return f"{name} {window} c{channels} fancy={int(fancy)} dct={dct or 'default'} r{ratio}"


def digest(array) -> str:
    array = np.ascontiguousarray(array)
    return f"{array.dtype}{list(array.shape)}:{hashlib.sha256(array.tobytes()).hexdigest()[:32]}"
