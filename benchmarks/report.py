"""Timing and the result table shared by the benchmark modules."""

from __future__ import annotations

import gc
import platform
import time
from dataclasses import dataclass


@dataclass
class Result:
    workload: str
    contender: str
    records: int
    nbytes: int  # payload bytes
    wall: float
    cpu: float
    note: str = ""

    @property
    def records_per_s(self) -> float:
        return self.records / self.wall if self.wall else float("inf")

    @property
    def mb_per_s(self) -> float:
        return self.nbytes / self.wall / 1e6 if self.wall else float("inf")

    @property
    def records_per_cpu_s(self) -> float:
        return self.records / self.cpu if self.cpu else float("inf")

    @property
    def mb_per_cpu_s(self) -> float:
        return self.nbytes / self.cpu / 1e6 if self.cpu else float("inf")


def cpu_seconds() -> float:
    """CPU time of this process, every thread included (TensorFlow runs several)."""
    return time.process_time()


def measure(fn, repeat: int = 3, min_time: float = 0.3):
    """Times fn(); returns (value, wall, cpu) per call for the fastest of `repeat` samples.

    A sample calls fn() until `min_time` seconds have passed, so that short
    runs are not lost in timer and scheduling noise.
    """
    best = None
    for _ in range(repeat):
        gc.collect()
        calls = 0
        c0, t0 = cpu_seconds(), time.perf_counter()
        while True:
            value = fn()
            calls += 1
            wall = time.perf_counter() - t0
            if wall >= min_time:
                break
        cpu = cpu_seconds() - c0
        sample = (value, wall / calls, cpu / calls)
        if best is None or sample[1] < best[1]:
            best = sample
    return best


def table(results: list[Result], baseline: str = "tfrx") -> str:
    """Rows per workload; `x tfrx` is how many times faster tfrx is (wall clock, then per CPU-second)."""
    head = (
        f"| {'workload':<12} | {'contender':<40} | {'records':>8} | {'MB':>7} | {'records/s':>11} | "
        f"{'MB/s':>8} | {'CPU s':>6} | {'records/CPU-s':>13} | {'MB/CPU-s':>8} | {'tfrx x (wall)':>13} | {'tfrx x (CPU)':>12} |"
    )
    sep = "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"
    lines = [head, sep]
    by_workload: dict[str, list[Result]] = {}
    for r in results:
        by_workload.setdefault(r.workload, []).append(r)
    for workload, rows in by_workload.items():
        base = next((r for r in rows if r.contender.startswith(baseline)), rows[0])
        for r in rows:
            name = r.contender + (f" ({r.note})" if r.note else "")
            lines.append(
                f"| {workload:<12} | {name:<40} | {r.records:>8} | {r.nbytes / 1e6:>7.1f} | "
                f"{r.records_per_s:>11,.0f} | {r.mb_per_s:>8,.0f} | {r.cpu:>6.2f} | "
                f"{r.records_per_cpu_s:>13,.0f} | {r.mb_per_cpu_s:>8,.0f} | {base.records_per_s / r.records_per_s:>13.2f} | "
                f"{base.records_per_cpu_s / r.records_per_cpu_s:>12.2f} |"
            )
    return "\n".join(lines)


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import os

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return f"{model}, {os.cpu_count()} cores, load average {load[0]:.2f}" if load[0] != "?" else model


def versions() -> str:
    import sys

    import numpy

    import tfrx
    from tfrx.io import decompressor_backend

    parts = [
        f"Python {sys.version.split()[0]}",
        f"tfrx {tfrx.__version__} (crc32c {tfrx.crc32c_backend()}, inflate {decompressor_backend()})",
        f"numpy {numpy.__version__}",
    ]
    from importlib.metadata import PackageNotFoundError, version

    for label, dists in (("tensorflow", ("tensorflow", "tensorflow-cpu")), ("tfrecord", ("tfrecord",))):
        for dist in dists:
            try:
                parts.append(f"{label} {version(dist)}")
                break
            except PackageNotFoundError:
                continue
        else:
            parts.append(f"{label} absent")
    return ", ".join(parts)


def machine_speed(samples: int = 5) -> float:
    """GB per CPU-second of CRC-32C over one 64 KiB buffer (cache-resident), the median of ``samples``.

    The same instructions on the same data, so it moves only with the machine
    (a shared VM's neighbours, clocks): per-CPU-second figures of runs made on
    different days compare only beside it (docs/benchmarks.md, "Reading").
    """
    import statistics

    import numpy as np

    import tfrx

    buf = np.random.default_rng(0).integers(0, 256, 64 << 10, dtype=np.uint8)
    tfrx.crc32c(buf)
    rates = []
    for _ in range(samples):
        c0 = cpu_seconds()
        for _ in range(1000):
            tfrx.crc32c(buf)
        rates.append(1000 * buf.nbytes / (cpu_seconds() - c0) / 1e9)
    return statistics.median(rates)


def header(size: str, extra: str = "") -> str:
    """The comment lines every benchmark run starts with: date, machine (and its speed now), versions."""
    import datetime

    when = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, size={size}{extra}"
    speed = f"machine speed: CRC-32C of 64 KiB at {machine_speed():.1f} GB per CPU-second (see report.machine_speed)"
    return f"# {when}\n# {machine()}\n# {speed}\n# {versions()}"


def suite_main(
    prog: str, doc: str | None, run, argv=None, *, render=table, workloads=None, extra: str = "", worker=None
) -> int:
    """``python -m benchmarks.<suite>``: parse --size/--repeat (and --workloads), run, print the table.

    With ``worker``, ``--worker ARGS...`` runs ``worker(*ARGS)`` instead (a contender in its own interpreter,
    started by ``worker_result``).
    """
    import argparse
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    if worker is not None and argv[:1] == ["--worker"]:
        worker(*argv[1:])
        return 0
    p = argparse.ArgumentParser(prog=prog, description=(doc or "").splitlines()[0] if doc else None)
    p.add_argument("--size", choices=["small", "full"], default="small")
    p.add_argument("--repeat", type=int, default=3)
    if workloads is not None:
        p.add_argument("--workloads", default=",".join(workloads))
    args = p.parse_args(argv)
    names = [n for n in args.workloads.split(",") if n] if workloads is not None else None
    print(header(args.size, extra))
    results = run(args.size, names, args.repeat)
    print()
    print(render(results))
    return 0


def _run_json(argv: list[str], what: str, gpu: bool = False) -> dict:
    """Runs ``python ARGV`` in a fresh interpreter (no GPU unless ``gpu``); returns the JSON line it prints last."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    # glibc malloc as docs/pipeline.md advises for throughput (tfrx/memory.py): import tfrx leaves the
    # allocator alone; a contender's process is the benchmark's own, so it opts in.
    env.setdefault("TFRX_MALLOC_TUNING", "1")
    if not gpu:
        env.setdefault("CUDA_VISIBLE_DEVICES", "")
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def worker_result(module: str, *args: str) -> tuple:
    """Runs ``python -m <module> --worker ARGS`` in a fresh interpreter; returns its JSON line's (value, wall, cpu)."""
    out = run_worker(module, *args)
    return out["value"], out["wall"], out["cpu"]


def in_subprocess(suite: str, contender: str, workload: str, size: str, compression: str, repeat: int):
    """Runs one contender in a fresh interpreter; returns (value, wall, cpu).

    Each contender gets its own process: tensorflow and the tfrecord package
    both register the ``tensorflow.Example`` protos in protobuf's default pool
    and cannot be imported together, and no contender's threads or memory
    linger into another's measurement.
    """
    out = _run_json(
        ["-m", "benchmarks._worker", suite, contender, workload, size, compression, str(repeat)],
        f"{contender} on {workload}",
    )
    return out["value"], out["wall"], out["cpu"]


def proc_status_bytes(field: str) -> int | None:
    """A memory field of /proc/self/status (``VmRSS``, ``VmHWM``) in bytes, or None where there is none.

    ``VmHWM`` is this process's own peak; ``ru_maxrss`` is not a substitute in
    a worker: Linux carries the parent's high-water mark over into a child
    started with fork/vfork + exec.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def run_worker(module: str, *args: str, gpu: bool = False) -> dict:
    """Runs ``python -m <module> --worker <args>`` in a fresh interpreter; returns the JSON it prints last.

    The worker sees no GPU unless ``gpu`` is set."""
    argv = ["-m", module, "--worker", *map(str, args)]
    return _run_json(argv, f"{module} {' '.join(argv[3:])}", gpu)


def worker_suite_main(prog: str, doc: str | None, run, worker, argv=None, *, workloads=None) -> int:
    """``main`` of a suite whose contenders run in workers: ``--worker ...`` runs one, else the suite."""
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--worker"]:
        worker(*argv[1:])
        return 0
    return suite_main(prog, doc, run, argv, workloads=workloads)
