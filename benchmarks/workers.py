"""DataLoader workers: records per CPU-second of every process, and per second, for 0/1/2/4 workers.

The pipeline of ``benchmarks/pipeline.py`` (read + shuffle(10000) + batch(256)
+ parse) over 8 shards, three epochs through one ``DataLoader`` with
``persistent_workers=True`` (fork), counting the CPU time of the main process
and of its workers (``getrusage`` of the process and its reaped children):

* **tfrx**: ``DataLoader(ds.to_torch(), batch_size=None, num_workers=k)``;
  workers hand batches over through tfrx's shared-memory ring
  (``to_torch(shared_memory=True)``, the default); ``tfrx (torch handoff)``
  is the same with ``shared_memory=False`` (PyTorch's own per-tensor handoff).
* **tfrx (own workers)**: ``DataLoader(ds.to_torch(num_workers=k),
  batch_size=None)``: tfrx's own worker processes with the same rings, and
  no PyTorch queue between them and the main process.
* **tf.data**: the same pipeline in-process (``num_parallel_calls=AUTOTUNE``,
  its own threads), into NumPy (TensorFlow and torch crash in one process).
* **tfrecord**: the package's ``TFRecordDataset`` with an index file, which
  splits a file's records between workers, in ``DataLoader(batch_size=256)``
  (8 passes over the file an epoch: the same records as the others' shards;
  it checks no CRCs).

* **handoff only**: no pipeline: one parsed batch of the workload,
  ``Dataset.from_tensors(batch).repeat(n)`` for the same number of batches,
  through the same ``to_torch()`` and ``DataLoader``. What it costs per batch
  is the handoff (the copy into the ring, PyTorch's queues, the tensors in
  the main process), the part of the workers' cost that no pipeline change
  removes; with 0 workers, ``to_torch()``'s own conversion.
* **tfrx (baseline)**: the same as ``tfrx`` with the ``tfrx`` package found
  in ``--baseline DIR`` (e.g. an earlier checkout's ``src`` with its built
  extension), for before/after figures measured in one run.

Run: ``python -m benchmarks workers [--workloads bert,criteo] [--repeat 3]
[--workers 0,1,2] [--skip tfrecord] [--baseline DIR]``.
Each contender runs in a fresh interpreter per round, rounds alternate the
order; the figure is the median over rounds with the range beside it. Each
row also gives the CPU time per batch, and how much of it the main process
spent: the part a training loop in that process pays.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

from benchmarks import pipeline
from benchmarks.parse import SPECS, _tf_specs
from benchmarks.report import Result, run_worker

WORKERS = [0, 1, 2, 4]
SHARDS = 8
EPOCHS = 3
WORKLOADS = ["bert", "criteo"]


def _cpu() -> float:
    return _main_cpu() + _children_cpu()


def _main_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _shards(name: str, size: str) -> list[str]:
    return [str(pipeline.ensure(name, size))] * SHARDS


def _tfrx(name: str, size: str, workers: int, shared_memory: bool, device: str = "cpu", own: bool = False):
    import torch

    import tfrx

    ds = tfrx.TFRecordDataset(_shards(name, size)).shuffle(pipeline.SHUFFLE, seed=0).batch(pipeline.BATCH)
    ds = ds.parse(pipeline._tfrx_parser(name)).prefetch(2)
    extra = {"multiprocessing_context": "fork", "persistent_workers": True} if workers and not own else {}
    if device != "cpu":
        extra["pin_memory"] = True
    if own:  # tfrx's own worker processes under a DataLoader without workers
        tds = ds.to_torch(num_workers=workers, multiprocessing_context="fork")
        workers = 0
    else:
        tds = ds.to_torch(shared_memory=shared_memory)
    loader = torch.utils.data.DataLoader(tds, batch_size=None, num_workers=workers, **extra)

    def run():
        n = 0
        for epoch in range(EPOCHS):
            for batch in loader:
                if device != "cpu":  # what a training step sees: every tensor on the GPU
                    batch = {
                        k: v.to(device, non_blocking=True) for k, v in batch.items() if isinstance(v, torch.Tensor)
                    }
                n += pipeline._count(batch)
        if device != "cpu":
            torch.cuda.synchronize()
        return n

    return run, loader


def _handoff_only(name: str, size: str, workers: int):
    import torch

    import tfrx

    path = str(pipeline.ensure(name, size))
    first = next(iter(tfrx.TFRecordDataset(path).batch(pipeline.BATCH).parse(pipeline._tfrx_parser(name))))
    batches = pipeline.COUNTS[size][name] * SHARDS // pipeline.BATCH
    ds = tfrx.data.Dataset.from_tensors(first).repeat(batches)
    extra = {"multiprocessing_context": "fork", "persistent_workers": True} if workers else {}
    loader = torch.utils.data.DataLoader(ds.to_torch(), batch_size=None, num_workers=workers, **extra)

    def run():
        n = 0
        for epoch in range(EPOCHS):
            for batch in loader:
                n += pipeline._count(batch)
        return n

    return run, loader


def _tf(name: str, size: str, workers: int):
    import tensorflow as tf

    tf.config.set_visible_devices([], "GPU")
    spec = _tf_specs(tf, SPECS[name])
    ds = tf.data.TFRecordDataset(_shards(name, size)).shuffle(pipeline.SHUFFLE).batch(pipeline.BATCH)
    ds = ds.map(lambda r: tf.io.parse_example(r, spec), num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)

    def run():
        n = 0
        for epoch in range(EPOCHS):
            for batch in ds.as_numpy_iterator():
                n += pipeline._count(batch)
        return n

    return run, None


def _tfrecord(name: str, size: str, workers: int):
    import torch
    from tfrecord.torch.dataset import TFRecordDataset
    from tfrecord.tools.tfrecord2idx import create_index

    path = str(pipeline.ensure(name, size))
    index = path + ".tfrecord-package-idx"
    if not os.path.exists(index):
        create_index(path, index)
    kinds = {k: pipeline.TFRECORD_KINDS[v[1]] for k, v in SPECS[name].items()}
    # With an index, the package splits one file's records between workers.
    ds = TFRecordDataset(path, index, kinds, shuffle_queue_size=pipeline.SHUFFLE)
    extra = {"multiprocessing_context": "fork", "persistent_workers": True} if workers else {}
    loader = torch.utils.data.DataLoader(
        ds, batch_size=pipeline.BATCH, collate_fn=pipeline._collate, num_workers=workers, **extra
    )

    def run():
        n = 0
        for epoch in range(EPOCHS * SHARDS):  # the same records as the others' 8 shards
            for batch in loader:
                n += len(next(iter(batch.values())))
        return n

    return run, loader


def _baseline(name: str, size: str, workers: int):
    sys.path.insert(0, os.environ[BASELINE_ENV])  # the baseline's tfrx shadows this checkout's
    run, loader = _tfrx(name, size, workers, True)
    import tfrx

    if not tfrx.__file__.startswith(os.environ[BASELINE_ENV]):
        raise RuntimeError(f"the baseline imported {tfrx.__file__}, not the package in {os.environ[BASELINE_ENV]}")
    return run, loader


BASELINE_ENV = "TFRX_BENCH_BASELINE"

CONTENDERS = {
    "tfrx": lambda name, size, k: _tfrx(name, size, k, True),
    "tfrx (own workers)": lambda name, size, k: _tfrx(name, size, k, True, own=True),
    "tfrx (baseline)": _baseline,
    "handoff only": _handoff_only,
    "tfrx (torch handoff)": lambda name, size, k: _tfrx(name, size, k, False),
    "tfrx -> GPU (pin_memory)": lambda name, size, k: _tfrx(name, size, k, True, "cuda"),
    "tf.data": _tf,
    "tfrecord": _tfrecord,
}


def worker(contender: str, name: str, size: str, workers: str) -> None:
    workers = int(workers)
    run, loader = CONTENDERS[contender](name, size, workers)  # imports and the pipeline; workers start in run()
    c0, t0, m0 = _cpu(), time.perf_counter(), _main_cpu()
    n = run()
    main_cpu = _main_cpu() - m0  # the training loop's process: what the batches cost it
    if loader is not None and getattr(loader, "_iterator", None) is not None:
        loader._iterator._shutdown_workers()  # persistent workers exit and are reaped: their CPU time counts
    if loader is not None and hasattr(loader.dataset, "close"):
        loader.dataset.close()  # to_torch(num_workers=k)'s own workers, likewise
    del loader
    wall = time.perf_counter() - t0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.05)
                continue
        except ChildProcessError:
            break
    print(json.dumps({"value": n, "wall": wall, "cpu": _cpu() - c0, "main_cpu": main_cpu}))


def _in_subprocess(contender: str, name: str, size: str, workers: int):
    return run_worker("benchmarks.workers", contender, name, size, workers, gpu="GPU" in contender)


def _cuda_available() -> bool:
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"], capture_output=True, text=True
    )
    return probe.stdout.strip() == "True"


def run(size: str = "small", names=None, repeat: int = 3, log=print, workers=None, skip=()) -> list[Result]:
    from importlib.util import find_spec

    names = [n for n in (names or WORKLOADS) if n in WORKLOADS]
    counts = list(workers or WORKERS)
    runs = [("tfrx", k) for k in counts] + [("tfrx (own workers)", k) for k in counts if k]
    runs += [("tfrx (torch handoff)", k) for k in counts if k]
    if _cuda_available():
        runs += [("tfrx -> GPU (pin_memory)", k) for k in counts]
    if find_spec("tensorflow") is not None:
        runs.append(("tf.data", 0))
    if find_spec("tfrecord") is not None:
        runs += [("tfrecord", k) for k in counts]
    if os.environ.get(BASELINE_ENV):
        runs = [r for pair in zip(runs, [("tfrx (baseline)", k) for k in counts]) for r in pair] + runs[len(counts) :]
    runs += [("handoff only", k) for k in counts]
    runs = [r for r in runs if r[0] not in skip]
    results = []
    for name in names:
        expected = pipeline.COUNTS[size][name] * SHARDS * EPOCHS
        batches = pipeline.COUNTS[size][name] * SHARDS // pipeline.BATCH * EPOCHS
        rounds: dict[tuple[str, int], list[dict]] = {r: [] for r in runs}
        for k in range(max(1, repeat)):
            for contender, workers in runs if k % 2 == 0 else runs[::-1]:
                out = _in_subprocess(contender, name, size, workers)
                log(
                    f"    round {k + 1}: {name} {contender}, {workers} workers: {out['value'] / out['cpu']:,.0f} rec/CPU-s, "
                    f"{out['value'] / out['wall']:,.0f} rec/s"
                )
                if out["value"] != (batches * pipeline.BATCH if contender == "handoff only" else expected):
                    raise RuntimeError(f"{contender} delivered {out['value']} records, expected {expected}")
                rounds[(contender, workers)].append(out)
        for (contender, workers), outs in rounds.items():
            per_cpu = [o["value"] / o["cpu"] for o in outs]
            per_s = [o["value"] / o["wall"] for o in outs]
            label = f"{contender}, {workers} workers" if contender != "tf.data" else "tf.data (in-process threads)"
            per_batch = [o["cpu"] / batches * 1e6 for o in outs]
            main_per_batch = [o["main_cpu"] / batches * 1e6 for o in outs]
            log(
                f"  {name:<8} {label:<36} {statistics.median(per_cpu):>10,.0f} rec/CPU-s "
                f"({min(per_cpu):,.0f}-{max(per_cpu):,.0f})  {statistics.median(per_s):>10,.0f} rec/s "
                f"({min(per_s):,.0f}-{max(per_s):,.0f})  {statistics.median(per_batch):>6,.0f} CPU-us/batch, "
                f"{statistics.median(main_per_batch):,.0f} ({min(main_per_batch):,.0f}-{max(main_per_batch):,.0f}) "
                "of them in the main process"
            )
            mid = sorted(outs, key=lambda o: o["cpu"])[len(outs) // 2]
            results.append(Result(name, label, expected, 0, mid["wall"], mid["cpu"], ""))
    return results


def main(argv=None) -> int:
    from benchmarks.report import suite_main

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--worker"]:
        worker(*argv[1:])
        return 0
    counts = None
    if "--workers" in argv:  # e.g. --workers 0,1,2,4,8,16 on a machine with more cores
        at = argv.index("--workers")
        counts = [int(k) for k in argv[at + 1].split(",")]
        del argv[at : at + 2]

    if "--baseline" in argv:  # another tfrx (a src folder with its built extension) as "tfrx (baseline)"
        at = argv.index("--baseline")
        os.environ[BASELINE_ENV] = os.path.abspath(argv[at + 1])
        del argv[at : at + 2]

    skip = ()
    if "--skip" in argv:  # contenders to leave out, e.g. --skip tfrecord
        at = argv.index("--skip")
        skip = tuple(argv[at + 1].split(","))
        del argv[at : at + 2]

    def run_counts(size, names, repeat):
        return run(size, names, repeat, workers=counts, skip=skip)

    return suite_main(
        "python -m benchmarks.workers",
        __doc__,
        run_counts,
        argv,
        workloads=WORKLOADS,
        extra=", workers: " + ",".join(map(str, counts or WORKERS)),
    )


if __name__ == "__main__":
    sys.exit(main())
