"""User-space instructions per record of tfrx's parser, one thread (Linux ``perf``).

Wall-clock and CPU-time rates move with the load of a shared machine;
instruction counts do not. For each workload this parses the first records
of the workload (``RECORDS``) in batches of 256, once and then ``PASSES + 1``
times, each in a fresh interpreter under ``perf stat -e instructions:u``, and
reports the difference per record parsed: imports, record generation and
warm-up cancel out.

Run with ``python -m benchmarks.parse_instructions [--workloads bert,criteo]``.
"""

from __future__ import annotations

import os
import subprocess
import sys

from benchmarks import parse, workloads

RECORDS = {"bert": 512, "criteo": 1024, "sequence": 512, "image": 120}
PASSES = 20


def _loop(workload: str, passes: int) -> None:
    import tfrx

    records = workloads.make_records(workload, "small")[: RECORDS[workload]]
    spec = parse.SPECS[workload]
    if workload == "sequence":
        parser = tfrx.SequenceExampleParser(
            parse._tfrx_specs(spec[0]), parse._tfrx_specs(spec[1]), num_parallel_calls=1
        )
    else:
        parser = tfrx.ExampleParser(parse._tfrx_specs(spec), num_parallel_calls=1)
    batches = [tfrx.RecordBatch.from_records(b) for b in parse._batches(records)]
    for _ in range(passes):
        for b in batches:
            parser.parse(b)


def _instructions(workload: str, passes: int) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    proc = subprocess.run(
        [
            "perf",
            "stat",
            "-x,",
            "-e",
            "instructions:u",
            sys.executable,
            "-m",
            "benchmarks.parse_instructions",
            "--loop",
            workload,
            str(passes),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    for line in proc.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("instructions"):
            return int(fields[0])
    raise RuntimeError(f"perf stat gave no instruction count:\n{proc.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    import argparse

    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--loop":
        _loop(argv[1], int(argv[2]))
        return 0
    p = argparse.ArgumentParser(prog="python -m benchmarks.parse_instructions", description=__doc__)
    p.add_argument("--workloads", default=",".join(RECORDS))
    args = p.parse_args(argv)
    print("| workload | records | instructions per record |")
    print("|---|---:|---:|")
    for workload in [w for w in args.workloads.split(",") if w]:
        once = _instructions(workload, 1)
        many = _instructions(workload, PASSES + 1)
        per_record = (many - once) / (PASSES * RECORDS[workload])
        print(f"| {workload} | {RECORDS[workload]} | {per_record:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
