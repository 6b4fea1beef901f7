"""ImageNet-style sharded TFRecords read the tf.data way.

Writes ``--shards`` files named ``train-00000-of-0000N`` holding Examples with
the keys of TensorFlow's ImageNet converters (``image/encoded`` JPEG bytes,
``image/class/label``, ``image/filename``), then reads them with the
standard input pipeline:

    files = tfrx.data.Dataset.list_files("train-*", shuffle=True, seed=0)
    ds = files.interleave(tfrx.TFRecordDataset, cycle_length=4,
                          num_parallel_calls=tfrx.AUTOTUNE, deterministic=False)
    ds = ds.shuffle(1024).batch(64).parse(features).map(decode).prefetch(tfrx.AUTOTUNE)

and checks that every record arrived exactly once with its label.

    python examples/imagenet_shards.py [--records N] [--shards K] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

import numpy as np

import tfrx
import tfrx.image

FEATURES = {
    "image/encoded": tfrx.FixedLenFeature([], tfrx.string),
    "image/class/label": tfrx.FixedLenFeature([], tfrx.int64),
    "image/filename": tfrx.FixedLenFeature([], tfrx.string),
}
SIZE = 64


def write_shards(workdir: str, records: int, shards: int, seed: int = 0) -> dict[bytes, int]:
    """Writes the shards; returns filename -> label for every record written."""
    rng = np.random.default_rng(seed)
    truth = {}
    per_shard = np.array_split(np.arange(records), shards)
    for s, ids in enumerate(per_shard):
        labels = rng.integers(1, 1001, len(ids))  # ImageNet labels are 1..1000 in TF's converters
        names = [f"n{int(label):08d}_{int(i)}.JPEG".encode() for i, label in zip(ids, labels)]
        # Small noisy pictures keep the example quick; the pipeline does not care about the size.
        jpegs = [tfrx.image.encode_jpeg(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8), quality=85) for _ in ids]
        path = os.path.join(workdir, f"train-{s:05d}-of-{shards:05d}")
        with tfrx.TFRecordWriter(path) as w:
            w.write_many(
                tfrx.encode_examples({"image/encoded": jpegs, "image/class/label": labels, "image/filename": names})
            )
        truth.update(zip(names, labels.tolist()))
    return truth


def decode(batch: dict):
    images = tfrx.image.decode_batch(batch["image/encoded"], channels=3, size=(SIZE, SIZE))
    return {
        "image": tfrx.image.normalize(images / 255.0, 0.5, 0.5),
        "label": batch["image/class/label"] - 1,
        "filename": batch["image/filename"],
    }


def input_pipeline(workdir: str, batch_size: int, seed: int = 0):
    files = tfrx.data.Dataset.list_files(os.path.join(workdir, "train-*"), shuffle=True, seed=seed)
    ds = files.interleave(tfrx.TFRecordDataset, cycle_length=4, num_parallel_calls=tfrx.AUTOTUNE, deterministic=False)
    return ds.shuffle(1024, seed=seed).batch(batch_size).parse(FEATURES).map(decode).prefetch(tfrx.AUTOTUNE)


def run(records: int, shards: int, batch_size: int, workdir: str) -> dict:
    truth = write_shards(workdir, records, shards)
    print(f"wrote {records} records in {shards} shards (train-00000-of-{shards:05d} ...)")
    seen = collections.Counter()
    labels_ok = shapes_ok = True
    batches = 0
    t0 = time.perf_counter()
    for batch in input_pipeline(workdir, batch_size):
        batches += 1
        shapes_ok &= batch["image"].shape[1:] == (SIZE, SIZE, 3) and batch["image"].dtype == np.float32
        for name, label in zip(batch["filename"], batch["label"]):
            seen[name] += 1
            labels_ok &= truth[name] - 1 == int(label)
    seconds = time.perf_counter() - t0
    exactly_once = set(seen) == set(truth) and all(c == 1 for c in seen.values())
    print(
        f"read {sum(seen.values())} records in {batches} batches of up to {batch_size} ({sum(seen.values()) / seconds:,.0f} images/s decoded and resized to {SIZE}x{SIZE})"
    )
    print(
        f"every record exactly once: {exactly_once}; labels match: {labels_ok}; images {SIZE}x{SIZE}x3 float32: {shapes_ok}"
    )
    return {
        "count": sum(seen.values()),
        "exactly_once": exactly_once,
        "labels_ok": labels_ok,
        "shapes_ok": shapes_ok,
        "batches": batches,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=2000)
    p.add_argument("--shards", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--small", action="store_true", help="a quick run (200 records in 5 shards)")
    p.add_argument("--workdir", help="where to write (default: a temporary directory)")
    args = p.parse_args(argv)
    records, shards = (200, 5) if args.small else (args.records, args.shards)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        out = run(records, shards, args.batch_size, workdir)
    return 0 if out["exactly_once"] and out["labels_ok"] and out["shapes_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
