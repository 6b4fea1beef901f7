"""Runs one benchmark contender and prints {"value", "wall", "cpu"} as JSON (see report.in_subprocess)."""

from __future__ import annotations

import json
import sys

from benchmarks import parse, read, workloads, write
from benchmarks.report import measure


def main(suite: str, contender: str, workload: str, size: str, compression: str, repeat: str) -> None:
    if suite == "read":
        make = {name: fn for name, fn, *_ in read.CONTENDERS + read.EXTRA}[contender]
        fn = make(workloads.workload_path(workload, size, compression), compression)
        fn()  # page cache and imports warm
    elif suite == "parse":
        fn = parse.worker_contender(contender, workload, size)
    else:
        make = {name: fn for name, fn, *_ in write.CONTENDERS}[contender]
        records = workloads.make_records(workload, size)
        fn, _ = make(records, compression)
    value, wall, cpu = measure(fn, int(repeat))
    print(json.dumps({"value": value, "wall": wall, "cpu": cpu}))


if __name__ == "__main__":
    main(*sys.argv[1:])
