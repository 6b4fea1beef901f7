"""Image decode (+ resize) throughput: tfrx.image against TensorFlow, Pillow and simplejpeg.

Run ``python -m benchmarks.image`` (``--quick`` for a smoke run). The JPEGs are
generated deterministically with Pillow from smooth synthetic scenes (gradients,
blobs, mild grain) at 500x375, quality 90, so they compress like photographs
(~85 KB each, like ImageNet validation images).

Rows, all on the same bytes:
* decode only, one image at a time on one thread: Pillow, simplejpeg (accurate
  and fast IDCT), tfrx.image.decode_jpeg, tf.io.decode_jpeg;
* decode + resize to 224x224 bilinear, one thread: tfrx.image vs a tf.data
  map pinned to one thread (TensorFlow's op overhead per image included, as
  in a real pipeline);
* the same batched with N threads: tfrx.image.decode_batch(..., size=...,
  num_parallel_calls=N) vs tf.data map(num_parallel_calls=N) + batch.

Each row reports images per wall second and images per CPU second (all
threads of the process), the per-core figure that stays meaningful on a
shared machine; ratios compare the per-core figures.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import time
from typing import Callable

import numpy as np

SIZE = (224, 224)


def make_jpegs(count: int, width: int = 500, height: int = 375, quality: int = 90, seed: int = 0) -> list[bytes]:
    """Deterministic, photo-like JPEGs (~85 KB at the defaults)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    out = []
    for _ in range(count):
        img = np.zeros((height, width, 3), np.float32)
        for c in range(3):
            fx, fy, phase = rng.uniform(8, 60, 2).tolist() + [rng.uniform(0, 6.3)]
            img[..., c] = 128 + 70 * np.sin(x / fx + phase) * np.cos(y / fy)
        for _ in range(12):  # soft blobs: objects with edges at several scales
            cx, cy, r = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(10, 90)
            mask = 1 / (1 + np.exp(np.minimum((np.hypot(x - cx, y - cy) - r) / 3, 50)))
            img += mask[..., None] * rng.uniform(-90, 90, 3)
        img += rng.normal(0, 15, img.shape)  # sensor grain
        buf = io.BytesIO()
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(buf, format="JPEG", quality=quality)
        out.append(buf.getvalue())
    return out


def measure(contenders: dict[str, Callable[[], int]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best (images per wall second, images per CPU second) for each contender.

    Rounds interleave the contenders so that a shared machine's changing load
    hits them alike; CPU seconds count every thread of the process, so the
    second figure is the throughput per core, whatever else the machine runs.
    """
    for fn in contenders.values():
        fn()  # warm-up
    best: dict[str, tuple[float, float]] = {name: (0.0, 0.0) for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            time.sleep(0.05)  # let thread pools of the previous contender go idle
            wall, cpu = time.perf_counter(), time.process_time()
            n = fn()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = (max(best[name][0], n / wall), max(best[name][1], n / max(cpu, 1e-9)))
    return best


def run(count: int, repeat: int, threads: int) -> list[tuple[str, str, float, float, float | None]]:
    """Rows of (workload, contender, images/s, images per CPU second, ratio per core vs TensorFlow)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    import simplejpeg
    from PIL import Image

    from tfrx import image as timg

    jpegs = make_jpegs(count)

    def loop(decode: Callable[[bytes], object]) -> Callable[[], int]:
        def go() -> int:
            for data in jpegs:
                decode(data)
            return len(jpegs)

        return go

    def tfrx_batched() -> int:
        for i in range(0, len(jpegs), 32):
            timg.decode_batch(jpegs[i : i + 32], channels=3, size=SIZE, num_parallel_calls=threads)
        return len(jpegs)

    decode = {
        "Pillow": loop(lambda d: np.asarray(Image.open(io.BytesIO(d)).convert("RGB"))),
        "simplejpeg (accurate IDCT)": loop(lambda d: simplejpeg.decode_jpeg(d)),
        "simplejpeg (fast IDCT)": loop(lambda d: simplejpeg.decode_jpeg(d, fastdct=True)),
        "tfrx.image.decode_jpeg": loop(lambda d: timg.decode_jpeg(d, channels=3)),
    }
    one = {"tfrx.image": loop(lambda d: timg.resize(timg.decode_jpeg(d, channels=3), SIZE))}
    many = {"tfrx.image.decode_batch": tfrx_batched}
    try:
        import tensorflow as tf
    except ImportError:
        tf = None
    if tf is not None:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        decode["tf.io.decode_jpeg (eager)"] = loop(lambda d: tf.io.decode_jpeg(d, channels=3))

        def tf_pipeline(parallel: int, batch: int) -> Callable[[], int]:
            def prep(d):
                return tf.image.resize(tf.io.decode_jpeg(d, channels=3), SIZE)

            ds = tf.data.Dataset.from_tensor_slices(jpegs).map(prep, num_parallel_calls=parallel)
            if batch > 1:
                ds = ds.batch(batch)
            options = tf.data.Options()
            options.threading.private_threadpool_size = parallel
            options.threading.max_intra_op_parallelism = 1
            ds = ds.with_options(options)

            def go() -> int:
                for _ in ds:
                    pass
                return len(jpegs)

            return go

        one["tf.data map"] = tf_pipeline(1, 1)
        many["tf.data map + batch"] = tf_pipeline(threads, 32)

    rows = []
    for workload, group, reference in (
        ("decode, 1 thread", decode, "tf.io.decode_jpeg (eager)"),
        ("decode + resize 224, 1 thread", one, "tf.data map"),
        (f"decode + resize 224, batch 32, {threads} threads", many, "tf.data map + batch"),
    ):
        results = measure(group, repeat)
        ref = results.get(reference)
        for name, (wall, cpu) in results.items():
            rows.append((workload, name, wall, cpu, cpu / ref[1] if ref else None))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=64, help="number of JPEGs (default 64)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per row, best kept (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="threads for the batched rows (default 2)")
    parser.add_argument("--quick", action="store_true", help="8 images, 1 repeat: a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.count, args.repeat = 8, 1
    sizes = [len(j) for j in make_jpegs(min(args.count, 8))]
    rows = run(args.count, args.repeat, args.threads)

    import PIL
    import simplejpeg

    versions = f"Pillow {PIL.__version__}, simplejpeg {simplejpeg.__version__}, NumPy {np.__version__}"
    try:
        import tensorflow as tf

        versions += f", TensorFlow {tf.__version__}"
    except ImportError:
        pass
    print(
        f"# {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"# {versions}")
    print(
        f"# {args.count} JPEGs 500x375 q90, mean {np.mean(sizes) / 1000:.0f} KB; best of {args.repeat} interleaved rounds"
    )
    print()
    print("| workload | contender | images/s (wall) | images per CPU-second | per core vs TensorFlow |")
    print("|---|---|---:|---:|---:|")
    for workload, name, wall, cpu, ratio in rows:
        print(f"| {workload} | {name} | {wall:,.0f} | {cpu:,.0f} | {'' if ratio is None else f'{ratio:.2f}x'} |")


if __name__ == "__main__":
    main()
