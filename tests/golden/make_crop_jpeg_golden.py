"""Writes ``tests/golden/crop_jpeg/``: the test JPEGs (when missing) and TensorFlow's decode_and_crop_jpeg digests.

Run from the repository root with TensorFlow and Pillow installed:

    python tests/golden/make_crop_jpeg_golden.py

The JPEGs are kept once written (the digests are of these exact bytes);
delete one to make it again. ``tests/test_image_crop_decode.py`` compares
``tfrx.image.decode_and_crop_jpeg`` with these digests, and with TensorFlow
itself where it is installed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import tensorflow as tf  # noqa: E402

from crop_jpeg_cases import FILES, GOLDEN, JPEG_DIR, cases, digest, jpeg, key, make_jpeg  # noqa: E402


def main() -> None:
    JPEG_DIR.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        path = JPEG_DIR / name
        if not path.exists():
            path.write_bytes(make_jpeg(name))
    out = {}
    for name, window, channels, fancy, dct, ratio in cases():
        image = tf.io.decode_and_crop_jpeg(
            jpeg(name), window, channels=channels, fancy_upscaling=fancy, dct_method=dct, ratio=ratio
        )
        out[key(name, window, channels, fancy, dct, ratio)] = digest(image.numpy())
    GOLDEN.write_text(json.dumps({"tensorflow": tf.__version__, "digests": out}, indent=0, sort_keys=True) + "\n")
    print(f"{len(out)} digests -> {GOLDEN}")


if __name__ == "__main__":
    main()
