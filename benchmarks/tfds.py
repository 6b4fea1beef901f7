"""python -m benchmarks.tfds [--examples N] [--repeat R]: a TFDS directory into PyTorch, tfrx vs TFDS.

Writes two prepared TFDS directories with ``tfrx.tfds.write`` (an image set:
28x28x1 PNG + ClassLabel, MNIST-like; a tabular set: 32 float32 columns, an
int64 id and a ClassLabel), checks that TFDS loads them, then measures
records/s of

* tfrx: ``tfrx.tfds.load(dir, split="train").batch(64).to_torch()`` through a
  ``torch.utils.data.DataLoader`` (``num_workers=0``), and
* TFDS: ``tfds.as_numpy(tfds.builder_from_directory(dir).as_dataset("train").batch(64))``.

Each contender runs in its own interpreter (TensorFlow and PyTorch must not
share one); the fastest of ``--repeat`` passes counts. TFDS is optional: its
row is skipped when ``tensorflow_datasets`` is not importable.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def prepare(root: str, n: int) -> dict:
    import tfrx.tfds as tt

    rng = np.random.default_rng(0)
    image_dir = os.path.join(root, "bench_images", "1.0.0")
    tabular_dir = os.path.join(root, "bench_tabular", "1.0.0")
    if not os.path.exists(os.path.join(image_dir, "dataset_info.json")):
        digits = [str(i) for i in range(10)]
        tt.write(image_dir, features={"image": tt.Image((28, 28, 1)), "label": tt.ClassLabel(names=digits)},
                 splits={"train": ({"image": rng.integers(0, 256, (28, 28, 1), dtype=np.uint8), "label": i % 10}
                                   for i in range(n))}, shard_size=max(1, n // 4))
    if not os.path.exists(os.path.join(tabular_dir, "dataset_info.json")):
        tt.write(tabular_dir, features={"x": tt.Tensor((32,), np.float32), "id": np.int64,
                                        "label": tt.ClassLabel(num_classes=2)},
                 splits={"train": ({"x": rng.normal(size=32).astype(np.float32), "id": i, "label": i % 2}
                                   for i in range(4 * n))}, shard_size=n)
    return {"image": image_dir, "tabular": tabular_dir}


def _time(fn, repeat: int) -> tuple[int, float]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        t = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - t)
    return count, best


def contender(name: str, path: str, repeat: int) -> dict:
    """Runs one contender in this interpreter; returns {"records", "seconds"}."""
    if name == "tfrx":
        import torch

        import tfrx.tfds as tt

        def run():
            ds = tt.load(path, split="train").batch(64).to_torch()
            n = 0
            for batch in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0):
                n += len(batch["label"])
            return n
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow_datasets as tfds

        b = tfds.builder_from_directory(path)

        def run():
            n = 0
            for batch in tfds.as_numpy(b.as_dataset(split="train").batch(64)):
                n += len(batch["label"])
            return n
    run()  # warm: imports, page cache, tfrx indexes
    records, seconds = _time(run, repeat)
    return {"records": records, "seconds": seconds}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.tfds", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--examples", type=int, default=20000, help="image examples (tabular: 4x as many)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default=None, help="where to write the datasets (default: a temporary folder)")
    p.add_argument("--contender", nargs=2, metavar=("NAME", "PATH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.contender:
        print(json.dumps(contender(args.contender[0], args.contender[1], args.repeat)))
        return 0
    root = args.dir or tempfile.mkdtemp(prefix="tfrx-bench-tfds-")
    dirs = prepare(root, args.examples)
    print("| dataset | contender | records | seconds | records/s |\n|---|---|---:|---:|---:|")
    for kind, path in dirs.items():
        for name in ("tfrx", "tfds"):
            cmd = [sys.executable, "-m", "benchmarks.tfds", "--repeat", str(args.repeat), "--contender", name, path]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                reason = (proc.stderr.strip().splitlines() or ["failed"])[-1]
                print(f"| {kind} | {name} | - | - | skipped: {reason[:80]} |")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"| {kind} | {name} | {r['records']} | {r['seconds']:.3f} | {r['records'] / r['seconds']:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
