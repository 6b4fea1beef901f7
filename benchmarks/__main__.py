"""python -m benchmarks {read,write,crc,codec,parse,bytes_values,random_access,convert,engines,scaleout,pipeline,overhead,imagenet,remote,ray,workers,tfds,readme,validate,gpu,all,generate} [--size small|full] [--workloads a,b].

``readme`` prints the README's table, measured in one run (see benchmarks/readme.py); ``scaleout`` is
Spark, Dask and Ray on one workload (benchmarks/engines_scaleout.py); ``validate`` is TFDV-format
statistics against TFDV itself when a TFDV interpreter is given (benchmarks/validate.py); ``gpu`` is the
device feeder and GPU JPEG decode against the CPU paths (benchmarks/gpu.py; its CUDA rows need a GPU).
"""

from __future__ import annotations

import argparse
import sys

from benchmarks import (
    bytes_values,
    codec,
    convert,
    crc,
    engines,
    engines_scaleout,
    imagenet,
    overhead,
    parse,
    pipeline,
    random_access,
    read,
    remote,
    tfds,
    workers,
    workloads,
    write,
)
from benchmarks import ray as ray_data
from benchmarks.report import header, table

SUITES = {
    "read": read.run,
    "write": write.run,
    "crc": crc.run,
    "codec": codec.run,
    "parse": parse.run,
    "bytes_values": bytes_values.run,
    "random_access": random_access.run,
    "convert": convert.run,
    "engines": engines.run,
    "scaleout": lambda size, names, repeat: engines_scaleout.run(size, None, repeat),
    "pipeline": pipeline.run,
    "overhead": overhead.run,
    "imagenet": imagenet.run,
    "remote": remote.run,
    "ray": ray_data.run,
    "workers": workers.run,
    "tfds": tfds.run,
}
# Suites whose results read better in their own table.
TABLES = {
    "remote": remote.remote_table,
    "tfds": tfds.render,
    "bytes_values": bytes_values.table,
    "scaleout": engines_scaleout.render,
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    p.add_argument("name", choices=[*SUITES, "readme", "validate", "gpu", "all", "generate"])
    p.add_argument("--size", choices=["small", "full"], default="small")
    p.add_argument("--workloads", default=",".join(workloads.WORKLOADS), help="comma-separated subset")
    p.add_argument("--repeat", type=int, default=3, help="runs per contender; the fastest counts")
    args, extra = p.parse_known_args(argv)
    if args.name == "validate":
        from benchmarks import validate

        return validate.main(["--size", args.size, *extra])
    if args.name == "gpu":  # its own options: --workers (benchmarks/gpu.py); not part of "all"
        from benchmarks import gpu

        rest = list(sys.argv[1:] if argv is None else argv)
        rest.remove("gpu")
        return gpu.main(rest)
    if args.name == "workers" and extra:  # its own options: --workers, --skip, --baseline (benchmarks/workers.py)
        rest = list(sys.argv[1:] if argv is None else argv)
        rest.remove("workers")
        return workers.main(rest)
    if extra:
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    names = [n for n in args.workloads.split(",") if n]
    unknown = set(names) - set(workloads.WORKLOADS)
    if unknown:
        p.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    if args.name == "readme":
        from benchmarks import readme

        return readme.main(["--size", args.size, "--repeat", str(args.repeat)])
    if args.name == "generate":
        for path in workloads.generate(args.size):
            print(path)
        return 0
    print(header(args.size))
    suites = list(SUITES) if args.name == "all" else [args.name]
    for suite in suites:
        print(f"\n## {suite}")
        results = SUITES[suite](args.size, names, args.repeat)
        print()
        print(TABLES.get(suite, table)(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
