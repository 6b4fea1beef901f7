"""The "TFRecord and tf.train.Example" tutorial, ported by changing the import.

Writes 32x32x3 uint8 images and their labels as raw bytes (``image_raw``,
``height``, ``width``, ``depth``, ``label``), reads them back with
``parse_single_example`` / ``parse_example`` + ``decode_raw`` + reshape, and
checks every pixel and label against what was written.

    python examples/raw_images.py [--records N] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

import tfrx  # was: import tensorflow as tf (tf.io.* and tf.train.* names live at the top of tfrx)


def _int64_feature(value):
    return tfrx.int64_feature(value)


def _bytes_feature(value):
    return tfrx.bytes_feature(value)


def image_example(image: np.ndarray, label: int):
    """The tutorial's ``image_example``, with the pixels stored raw instead of as a JPEG."""
    height, width, depth = image.shape
    feature = {
        "height": _int64_feature(height),
        "width": _int64_feature(width),
        "depth": _int64_feature(depth),
        "label": _int64_feature(label),
        "image_raw": _bytes_feature(image.tobytes()),
    }
    return tfrx.train.Example(features=tfrx.train.Features(feature=feature))


IMAGE_FEATURE_DESCRIPTION = {
    "height": tfrx.FixedLenFeature([], tfrx.int64),
    "width": tfrx.FixedLenFeature([], tfrx.int64),
    "depth": tfrx.FixedLenFeature([], tfrx.int64),
    "label": tfrx.FixedLenFeature([], tfrx.int64),
    "image_raw": tfrx.FixedLenFeature([], tfrx.string),
}


def make_images(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8), rng.integers(0, 10, n)


def write(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    with tfrx.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            writer.write(image_example(image, int(label)).SerializeToString())


def read_one_by_one(path: str) -> tuple[np.ndarray, np.ndarray]:
    """The tutorial's loop: parse_single_example, then decode_raw + reshape, per record."""
    images, labels = [], []
    for record in tfrx.TFRecordDataset(path):
        x = tfrx.parse_single_example(record, IMAGE_FEATURE_DESCRIPTION)
        shape = (int(x["height"]), int(x["width"]), int(x["depth"]))
        images.append(tfrx.decode_raw(x["image_raw"], np.uint8).reshape(shape))
        labels.append(int(x["label"]))
    return np.stack(images), np.array(labels)


def read_batched(path: str, batch_size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """The same, in batches on the fast parse path: one decode_raw per batch."""
    images, labels = [], []
    for x in tfrx.TFRecordDataset(path).batch(batch_size).parse(IMAGE_FEATURE_DESCRIPTION):
        n = len(x["label"])
        images.append(tfrx.decode_raw(x["image_raw"], np.uint8).reshape(n, 32, 32, 3))
        labels.append(x["label"])
    return np.concatenate(images), np.concatenate(labels)


def run(records: int, workdir: str) -> dict:
    path = os.path.join(workdir, "images.tfrecord")
    images, labels = make_images(records)
    write(path, images, labels)
    one_images, one_labels = read_one_by_one(path)
    batch_images, batch_labels = read_batched(path)
    ok = (
        np.array_equal(one_images, images)
        and np.array_equal(one_labels, labels)
        and np.array_equal(batch_images, images)
        and np.array_equal(batch_labels, labels)
    )
    print(
        f"wrote {records} images of 32x32x3 uint8 as raw bytes to {os.path.basename(path)} ({os.path.getsize(path):,} bytes)"
    )
    print(
        f"read back {len(one_labels)} one by one and {len(batch_labels)} in batches: pixels and labels {'equal' if ok else 'DIFFER'}"
    )
    print(
        "first record:",
        {k: v for k, v in tfrx.decode_example(next(iter(tfrx.read_records(path)))).items() if k != "image_raw"},
    )
    return {"path": path, "images": batch_images, "labels": batch_labels, "equal": ok}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=1000)
    p.add_argument("--small", action="store_true", help="a quick run (100 records)")
    p.add_argument("--workdir", help="where to write (default: a temporary directory)")
    args = p.parse_args(argv)
    records = 100 if args.small else args.records
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        return 0 if run(records, args.workdir)["equal"] else 1
    with tempfile.TemporaryDirectory() as d:
        return 0 if run(records, d)["equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
