"""Writes ``tests/golden/tf_namespace.json`` with TensorFlow: TensorProto bytes and tf.image results.

Run from the repository root with TensorFlow installed:

    python tests/golden/make_tf_namespace_golden.py

``tests/test_tf_namespace.py`` compares ``tfrx.tf`` with these values (and
with TensorFlow itself where it is installed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tensorflow as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tf_namespace_cases import (
    CENTRAL,
    CROP_OR_PAD,
    JPEG,
    JPEG_WINDOWS,
    digest,
    image,
    tensor_cases,
)


def main() -> None:
    out = {
        "serialize_tensor": {
            name: tf.io.serialize_tensor(tf.constant(value)).numpy().hex() for name, value in tensor_cases()
        },
        "resize_with_crop_or_pad": [
            digest(tf.image.resize_with_crop_or_pad(image(s), h, w).numpy()) for s, h, w in CROP_OR_PAD
        ],
        "central_crop": [digest(tf.image.central_crop(image(s), f).numpy()) for s, f in CENTRAL],
        "decode_and_crop_jpeg": [
            digest(tf.io.decode_and_crop_jpeg(JPEG, w, channels=c, fancy_upscaling=f).numpy())
            for w, c, f in JPEG_WINDOWS
        ],
    }
    path = HERE / "tf_namespace.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path.name}")


if __name__ == "__main__":
    main()
