"""JPEG images in TFRecords: decode + resize + normalise, per image and per batch.

The tf.data idiom ``ds.map(parse).map(decode_and_resize).batch(n)`` with
``tfrx.image`` in place of ``tf.io.decode_jpeg`` / ``tf.image.resize``, then
the faster form that parses whole batches and decodes them on a thread pool
(``tfrx.image.decode_batch``). Checks that the decoded pixels are close to the
images that were encoded (JPEG is lossy) and that both forms agree.

    python examples/jpeg_images.py [--records N] [--size 96] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import tfrx
import tfrx.image

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet statistics, on the [0, 1] scale
FEATURES = {
    "image/encoded": tfrx.FixedLenFeature([], tfrx.string),
    "image/class/label": tfrx.FixedLenFeature([], tfrx.int64),
}


def make_images(n: int, height: int = 120, width: int = 160, seed: int = 0) -> np.ndarray:
    """Smooth synthetic pictures (gradients and a disc), which compress like photographs."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    out = np.empty((n, height, width, 3), np.uint8)
    for i in range(n):
        img = np.empty((height, width, 3), np.float32)
        for c in range(3):
            fx, fy, phase = rng.uniform(10, 40), rng.uniform(10, 40), rng.uniform(0, 6.3)
            img[..., c] = 128 + 80 * np.sin(x / fx + phase) * np.cos(y / fy)
        cx, cy, r = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(10, 40)
        img[np.hypot(x - cx, y - cy) < r] = rng.uniform(0, 255, 3)
        out[i] = np.clip(img, 0, 255).astype(np.uint8)
    return out


def write(path: str, images: np.ndarray, labels: np.ndarray) -> int:
    jpegs = [tfrx.image.encode_jpeg(img, quality=90) for img in images]
    records = tfrx.encode_examples({"image/encoded": jpegs, "image/class/label": labels})
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(records)
    return sum(len(j) for j in jpegs)


def decode_and_resize(example: dict, size: int):
    """Per image, as in a tf.data ``map``: decode, resize (bilinear, float32), normalise."""
    image = tfrx.image.decode_jpeg(example["image/encoded"], channels=3)
    image = tfrx.image.resize(image, (size, size))  # float32 on the 0..255 scale
    image = tfrx.image.normalize(image / 255.0, MEAN, STD)
    return image, example["image/class/label"]


def per_image_pipeline(path: str, size: int, batch: int):
    return (
        tfrx.TFRecordDataset(path)
        .parse(FEATURES)
        .map(lambda ex: decode_and_resize(ex, size), num_parallel_calls=tfrx.AUTOTUNE)
        .batch(batch)
        .prefetch(2)
    )


def batched_pipeline(path: str, size: int, batch: int):
    def decode_batch(ex):
        images = tfrx.image.decode_batch(ex["image/encoded"], channels=3, size=(size, size))
        return tfrx.image.normalize(images / 255.0, MEAN, STD), ex["image/class/label"]

    return tfrx.TFRecordDataset(path).batch(batch).parse(FEATURES).map(decode_batch).prefetch(2)


def _collect(ds) -> tuple[np.ndarray, np.ndarray, float]:
    t0 = time.perf_counter()
    images, labels = zip(*ds)
    return np.concatenate(images), np.concatenate(labels), time.perf_counter() - t0


def run(records: int, size: int, workdir: str, batch: int = 32) -> dict:
    path = os.path.join(workdir, "jpegs.tfrecord")
    originals = make_images(records)
    labels = np.arange(records) % 10
    jpeg_bytes = write(path, originals, labels)
    print(
        f"wrote {records} JPEGs ({originals.shape[2]}x{originals.shape[1]}, {jpeg_bytes / records / 1e3:.1f} KB each) to {os.path.basename(path)}"
    )

    a_images, a_labels, a_s = _collect(per_image_pipeline(path, size, batch))
    b_images, b_labels, b_s = _collect(batched_pipeline(path, size, batch))
    print(
        f"per-image map:  {len(a_labels)} images -> {a_images.shape[1:]} {a_images.dtype} in {a_s:.2f}s ({len(a_labels) / a_s:,.0f} images/s)"
    )
    print(
        f"decode_batch:   {len(b_labels)} images -> {b_images.shape[1:]} {b_images.dtype} in {b_s:.2f}s ({len(b_labels) / b_s:,.0f} images/s)"
    )

    # JPEG is lossy: compare decoded pixels with the originals at full size.
    decoded = np.stack(
        [tfrx.image.decode_jpeg(r["image/encoded"], channels=3) for r in tfrx.TFRecordDataset(path).parse(FEATURES)]
    )
    mean_abs_error = float(np.abs(decoded.astype(np.int16) - originals).mean())
    forms_agree = float(np.abs(a_images - b_images).max())
    print(
        f"decoded pixels vs originals: mean absolute error {mean_abs_error:.2f} (of 255); per-image vs batched max difference {forms_agree:.2g}"
    )
    print(f"normalised batch: mean {b_images.mean():+.3f}, std {b_images.std():.3f}")
    return {
        "labels_equal": bool(np.array_equal(a_labels, labels) and np.array_equal(b_labels, labels)),
        "shape": b_images.shape,
        "mean_abs_error": mean_abs_error,
        "forms_max_diff": forms_agree,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=512)
    p.add_argument("--size", type=int, default=96, help="resize to SIZE x SIZE")
    p.add_argument("--small", action="store_true", help="a quick run (48 records)")
    p.add_argument("--workdir", help="where to write (default: a temporary directory)")
    args = p.parse_args(argv)
    records = 48 if args.small else args.records
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        out = run(records, args.size, workdir)
    return 0 if out["labels_equal"] and out["mean_abs_error"] < 8 else 1


if __name__ == "__main__":
    sys.exit(main())
