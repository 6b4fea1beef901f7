"""Feeding a GPU: batches onto the device, and ImageNet-style JPEG input decoded on the CPU or on the GPU.

One run, each contender in its own interpreter, rounds alternating the order:

**Records** (``bert``, ``criteo``; the files of ``benchmarks/pipeline.py``,
8 shards, ``TFRecordDataset(shards).batch(256).parse(spec)``, two epochs),
records per second and per CPU-second (the process and its workers):

* ``numpy (in-process)``: the pipeline into NumPy, no device: the rate to reach;
* ``DataLoader pin_memory -> cuda``: what PyTorch users write,
  ``DataLoader(ds.to_torch(), batch_size=None, pin_memory=True)`` and
  ``.to("cuda", non_blocking=True)`` per tensor;
* ``to_torch(device="cuda"), k workers``: tfrx's device feeder (pinned
  staging reused, one copy per batch on a side stream, prefetched), with
  tfrx's own ``k`` workers (0, 1, 2, 4, 8, 16 or ``--workers``).

**ImageNet-style** (the records of ``benchmarks/imagenet.py``: random
resized crop to 224, flip, normalise, batches of 64), images per second and
per CPU-second:

* ``CPU fused decode``: ``tfrx.image.decode_random_crop_and_resize`` on the usable cores;
* ``GPU decode``: the same call with ``device="cuda"`` (the whole batch to
  the GPU decoder, crops and resizes batched there);
* ``device path on CPU (stand-in)``: the GPU path's code with ``device="cpu"``
  (not a contender: it shows the path runs where no GPU is).

The GPU contenders need ``torch.cuda.is_available()``; without it they are
skipped with the reason printed, and the run still completes. Figures are
this machine's; GPU figures belong in docs/benchmarks.md only from a run on a GPU.

Run: ``python -m benchmarks gpu [--size small|full] [--repeat N] [--workers 0,1,2,4,8,16]``.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

from benchmarks import imagenet, pipeline
from benchmarks.report import Result, header, run_worker, table

WORKLOADS = ["bert", "criteo"]
WORKERS = [0, 1, 2, 4, 8, 16]
SHARDS = 8
EPOCHS = 2


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


# ------------------------------------------------------------------ contenders (run in a worker interpreter)


def _records(name: str, size: str):
    import tfrx

    shards = [str(pipeline.ensure(name, size))] * SHARDS
    return tfrx.TFRecordDataset(shards).batch(pipeline.BATCH).parse(pipeline._tfrx_parser(name))


def _numpy(name: str, size: str, workers: int):
    ds = _records(name, size)

    def run():
        return sum(pipeline._count(b) for _ in range(EPOCHS) for b in ds)

    return run, None


def _pin_memory(name: str, size: str, workers: int):
    import torch

    loader = torch.utils.data.DataLoader(_records(name, size).to_torch(), batch_size=None, pin_memory=True)

    def run():
        n = 0
        for _ in range(EPOCHS):
            for batch in loader:
                batch = {k: v.to("cuda", non_blocking=True) for k, v in batch.items() if isinstance(v, torch.Tensor)}
                n += pipeline._count(batch)
        torch.cuda.synchronize()
        return n

    return run, None


def _device(name: str, size: str, workers: int):
    import torch

    tds = _records(name, size).to_torch(device="cuda", num_workers=workers, multiprocessing_context="fork")

    def run():
        n = 0
        for _ in range(EPOCHS):
            for batch in tds:
                n += pipeline._count(batch)
        torch.cuda.synchronize()
        return n

    return run, tds


def _images(size: str, device: str | None):
    import tfrx
    import tfrx.image

    spec = {
        "image/encoded": tfrx.FixedLenFeature([], tfrx.string),
        "image/class/label": tfrx.FixedLenFeature([], tfrx.int64),
    }
    ds = tfrx.TFRecordDataset(str(imagenet.path_for(size))).batch(imagenet.BATCH).parse(spec).prefetch(2)
    extra = {} if device is None else {"device": device, "layout": "NCHW"}

    def run():
        n = 0
        for batch in ds:
            images = tfrx.image.decode_random_crop_and_resize(
                batch["image/encoded"],
                imagenet.SIZE,
                seed=0,
                mean=imagenet.MEAN,
                std=imagenet.STD,
                **imagenet.CROP,
                **extra,
            )
            n += int(images.shape[0])
        if device == "cuda":
            import torch

            torch.cuda.synchronize()
        return n

    return run


CONTENDERS = {
    "numpy (in-process)": _numpy,
    "DataLoader pin_memory -> cuda": _pin_memory,
    "to_torch(device='cuda')": _device,
}
IMAGE_CONTENDERS = {
    "CPU fused decode": None,
    "GPU decode": "cuda",
    "device path on CPU (stand-in)": "cpu",
}
NEEDS_CUDA = {"DataLoader pin_memory -> cuda", "to_torch(device='cuda')", "GPU decode"}


def worker(contender: str, name: str, size: str, workers: str) -> None:
    if contender in IMAGE_CONTENDERS:
        run, closer = _images(size, IMAGE_CONTENDERS[contender]), None
        run()  # decoders, thread pools and the page cache warm
    else:
        run, closer = CONTENDERS[contender](name, size, int(workers))
    c0, t0 = _cpu(), time.perf_counter()
    n = run()
    if closer is not None:
        closer.close()  # the workers exit and are reaped: their CPU time counts
    wall = time.perf_counter() - t0
    print(json.dumps({"value": n, "wall": wall, "cpu": _cpu() - c0}))


# ------------------------------------------------------------------ the suite


def cuda_reason() -> str | None:
    """Why the CUDA contenders cannot run here, or None when they can."""
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.is_available(), torch.__version__)"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return "torch is not importable"
    available, version = probe.stdout.split()
    return None if available == "True" else f"torch.cuda.is_available() is False (torch {version})"


def _rounds(runs: list[tuple[str, str, int]], size: str, repeat: int, log) -> dict:
    out: dict[tuple[str, str, int], list[dict]] = {r: [] for r in runs}
    for k in range(max(1, repeat)):
        for contender, name, workers in runs if k % 2 == 0 else runs[::-1]:
            result = run_worker("benchmarks.gpu", contender, name, size, workers, gpu=contender in NEEDS_CUDA)
            out[(contender, name, workers)].append(result)
            unit = "images" if name == "imagenet" else "rec"
            log(
                f"    round {k + 1}: {name} {contender}, {workers} workers: {result['value'] / result['wall']:,.0f} "
                f"{unit}/s, {result['value'] / result['cpu']:,.0f} {unit}/CPU-s (load {os.getloadavg()[0]:.2f})"
            )
    return out


def run(size: str = "small", names=None, repeat: int = 3, log=print, workers=None) -> list[Result]:
    reason = cuda_reason()
    if reason is not None:
        for contender in sorted(NEEDS_CUDA):
            log(f"  gpu: {contender} skipped: {reason}")
    counts = list(workers or WORKERS)
    runs = []
    for name in [n for n in (names or WORKLOADS) if n in WORKLOADS]:
        runs.append(("numpy (in-process)", name, 0))
        if reason is None:
            runs.append(("DataLoader pin_memory -> cuda", name, 0))
            runs += [("to_torch(device='cuda')", name, k) for k in counts]
    imagenet.ensure(size)
    runs += [(c, "imagenet", 0) for c in IMAGE_CONTENDERS if reason is None or c not in NEEDS_CUDA]
    rounds = _rounds(runs, size, repeat, log)
    results = []
    for (contender, name, workers), outs in rounds.items():
        per_s = [o["value"] / o["wall"] for o in outs]
        per_cpu = [o["value"] / o["cpu"] for o in outs]
        unit = "images" if name == "imagenet" else "rec"
        label = (
            contender
            if name == "imagenet" or contender != "to_torch(device='cuda')"
            else f"{contender}, {workers} workers"
        )
        log(
            f"  {name:<8} {label:<42} {statistics.median(per_s):>10,.0f} {unit}/s ({min(per_s):,.0f}-{max(per_s):,.0f})  "
            f"{statistics.median(per_cpu):>10,.0f} {unit}/CPU-s ({min(per_cpu):,.0f}-{max(per_cpu):,.0f})"
        )
        mid = sorted(outs, key=lambda o: o["wall"])[len(outs) // 2]
        results.append(Result(name, label, mid["value"], 0, mid["wall"], mid["cpu"], ""))
    _ratios(rounds, log)
    return results


def _ratios(rounds: dict, log) -> None:
    """The device rows against in-process NumPy and against the pin_memory idiom, per workload."""
    for name in WORKLOADS:
        base = rounds.get(("numpy (in-process)", name, 0))
        idiom = rounds.get(("DataLoader pin_memory -> cuda", name, 0))
        if not base:
            continue
        rate = statistics.median(o["value"] / o["wall"] for o in base)
        for (contender, n, workers), outs in rounds.items():
            if n != name or contender != "to_torch(device='cuda')":
                continue
            mine = statistics.median(o["value"] / o["wall"] for o in outs)
            line = f"  {name}: to_torch(device='cuda'), {workers} workers: {mine / rate:.2f}x in-process NumPy"
            if idiom:
                line += f", {mine / statistics.median(o['value'] / o['wall'] for o in idiom):.2f}x the pin_memory idiom"
            log(line)


def main(argv=None) -> int:
    import argparse

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--worker"]:
        worker(*argv[1:])
        return 0
    p = argparse.ArgumentParser(prog="python -m benchmarks gpu", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--size", choices=["small", "full"], default="small")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--workers", default=",".join(map(str, WORKERS)))
    args = p.parse_args(argv)
    counts = [int(k) for k in args.workers.split(",") if k]
    print(header(args.size, ", workers: " + ",".join(map(str, counts))))
    results = run(args.size, args.workloads.split(","), args.repeat, workers=counts)
    print()
    print(table(results, baseline="numpy (in-process)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
