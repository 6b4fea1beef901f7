"""Writes ``tests/golden/encoders.json``: the length and SHA-256 of ``tf.io.encode_jpeg`` / ``encode_png``'s bytes.

Run from the repository root with TensorFlow installed:

    python tests/golden/make_encoder_golden.py

``tests/test_image_encoders.py`` checks that tfrx writes these bytes exactly.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "encoders.json"


def images() -> dict[str, np.ndarray]:
    """Seeded images: noise and gradients, every channel count, 16-bit, sizes on both sides of libpng's limits."""
    rng = np.random.default_rng(0)
    gradient = np.add.outer(np.arange(300), np.arange(200))
    return {
        "noise_rgb": rng.integers(0, 256, (37, 53, 3), dtype=np.uint8),
        "smooth_rgb": (np.add.outer(np.arange(64), np.arange(80))[..., None] * np.array([1, 2, 3]) % 256).astype(
            np.uint8
        ),
        "gray": rng.integers(0, 256, (20, 30, 1), dtype=np.uint8),
        "gray_alpha": rng.integers(0, 256, (9, 17, 2), dtype=np.uint8),
        "rgba": rng.integers(0, 256, (9, 17, 4), dtype=np.uint8),
        "one_pixel": np.array([[[7, 200, 31]]], dtype=np.uint8),
        "odd_sizes": rng.integers(0, 256, (15, 7, 3), dtype=np.uint8),
        "large_smooth": (gradient[..., None] * np.array([1, 1, 2]) // 3 % 256).astype(np.uint8),
        "large_noise": rng.integers(0, 256, (120, 90, 3), dtype=np.uint8),
        "rgb16": rng.integers(0, 65536, (11, 13, 3), dtype=np.uint16),
        "gray16": (gradient[:40, :50, None] * 300).astype(np.uint16),
    }


def cases() -> list[tuple[str, str, dict]]:
    """(image name, encoder, keyword arguments) for every golden value."""
    out: list[tuple[str, str, dict]] = []
    for name, image in images().items():
        for level in (-1, 0, 1, 6, 9):
            out.append((name, "encode_png", {"compression": level}))
        if image.dtype == np.uint8 and image.shape[2] in (1, 3):
            out.append((name, "encode_jpeg", {}))
            for quality in (0, 10, 50, 75, 100):
                out.append((name, "encode_jpeg", {"quality": quality}))
            out.append((name, "encode_jpeg", {"chroma_downsampling": False}))
            out.append((name, "encode_jpeg", {"progressive": True}))
    return out


def key(name: str, encoder: str, kwargs: dict) -> str:
    return f"{name}/{encoder}/" + ",".join(f"{k}={v}" for k, v in sorted(kwargs.items()))


def digest(data: bytes) -> list:
    """What the golden file keeps of an encoding: its length and SHA-256."""
    return [len(data), hashlib.sha256(data).hexdigest()]


def main() -> None:
    import tensorflow as tf

    pictures = images()
    golden = {key(n, e, kw): digest(getattr(tf.io, e)(pictures[n], **kw).numpy()) for n, e, kw in cases()}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(golden)} encodings to {OUT.name}")


if __name__ == "__main__":
    main()
