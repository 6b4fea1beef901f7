"""Statistics generation in TFDV's format: records per CPU-second, tfrx against TFDV.

    PYTHONPATH=src python -m benchmarks.validate [--size small|full] [--workloads criteo,bert]
        [--tfdv-python PATH/TO/tfdv-venv/bin/python]

tfrx: ``tfrx.validate.generate_statistics`` in this process (CPU time of the
process, all threads; imports excluded by a first call on ten records). TFDV: ``tfdv.generate_statistics_from_tfrecord`` (the
DirectRunner, in the interpreter given by ``--tfdv-python``: TFDV needs an
environment of its own) in a child process, timed by the child's CPU time,
start-up and imports excluded. Without ``--tfdv-python`` only tfrx runs.
Workloads: those of ``benchmarks.workloads`` (Examples; ``sequence`` is left
out because TFDV reads Examples only).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from benchmarks import workloads

_TFDV_CHILD = r"""
import json, resource, sys, time
import tensorflow_data_validation as tfdv
path = sys.argv[1]
t0 = time.process_time(); r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
stats = tfdv.generate_statistics_from_tfrecord(path)
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = time.process_time() - t0 + (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(json.dumps({"cpu": cpu, "records": stats.datasets[0].num_examples}))
"""


def tfrx_run(path: str) -> tuple[float, float, int]:
    from tfrx.validate import generate_statistics

    generate_statistics(path, max_records=10)  # imports and first-call set-up, as TFDV's child excludes them
    c0, w0 = time.process_time(), time.perf_counter()
    stats = generate_statistics(path)
    return time.process_time() - c0, time.perf_counter() - w0, int(stats.datasets[0].num_examples)


def tfdv_run(python: str, path: str) -> tuple[float, int]:
    out = subprocess.run([python, "-c", _TFDV_CHILD, path], check=True, capture_output=True, text=True).stdout
    doc = json.loads(out.strip().splitlines()[-1])
    return float(doc["cpu"]), int(doc["records"])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.validate", description=__doc__)
    p.add_argument("--size", choices=["small", "full"], default="small")
    p.add_argument("--workloads", default="criteo,bert,image")
    p.add_argument("--tfdv-python", default=None)
    args = p.parse_args(argv)
    print("| workload | records | tfrx records/CPU-s | TFDV records/CPU-s | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name in args.workloads.split(","):
        path = str(workloads.ensure(name, args.size))
        cpu, _, n = tfrx_run(path)
        ours = n / cpu if cpu else float("inf")
        theirs = ratio = "-"
        if args.tfdv_python:
            tcpu, tn = tfdv_run(args.tfdv_python, path)
            if tn != n:
                print(f"warning: TFDV counted {tn} records, tfrx {n}", file=sys.stderr)
            theirs = f"{tn / tcpu:,.0f}"
            ratio = f"{(n / cpu) / (tn / tcpu):.1f}x"
        print(f"| {name} | {n} | {ours:,.0f} | {theirs} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
