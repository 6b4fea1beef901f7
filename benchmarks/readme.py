"""The README's table, measured: tfrx beside TensorFlow per CPU-second, in alternating rounds of one run.

Each row's contenders run in fresh interpreters (the same workers as the
``read``, ``parse`` and ``pipeline`` suites), one after the other, and the
order flips every round so that a change in the machine's load hits both
alike. The table shows each side's median rate per CPU-second with its
range over the rounds, and the median (range) of the per-round ratios:
the ratio is only as good as its range.

Run: ``python -m benchmarks readme [--size small|full] [--repeat 5] [--rows jpeg,mmap]``
(``--repeat`` is the number of rounds; ``--rows`` keeps the rows whose titles
contain one of the words; TensorFlow must be installed).
"""

from __future__ import annotations

import functools
import os
import statistics
import sys

from benchmarks import pipeline, workloads
from benchmarks.parse import records_for
from benchmarks.read import _payload
from benchmarks.report import in_subprocess

# (README row, unit, how to scale a result into that unit, [(suite, workload, tfrx contender, TensorFlow contender)])
ROWS = [
    ("read ~85 KB records", "GB/s", "bytes", ("read", "image", "tfrx batches", "tf.data batched")),
    (
        "read ~85 KB records, `use_mmap=True`",
        "GB/s",
        "bytes",
        ("read", "image", "tfrx batches, use_mmap", "tf.data batched"),
    ),
    ("read ~750 B records", "M records/s", "records", ("read", "criteo", "tfrx batches", "tf.data batched")),
    ("parse BERT-like records (one thread)", "k/s", "records", ("parse", "bert", "tfrx_1", "tf_data")),
    ("parse Criteo-like records (one thread)", "k/s", "records", ("parse", "criteo", "tfrx_1", "tf_data")),
    (
        "parse SequenceExamples (one thread, sparse indices read)",
        "k/s",
        "records",
        ("parse", "sequence", "tfrx_1_indices", "tf_data"),
    ),
    ("read + shuffle + batch + parse into torch, BERT-like", "k/s", "records", ("pipeline", "bert", "tfrx", "tf.data")),
    (
        "read + shuffle + batch + parse into torch, Criteo-like",
        "k/s",
        "records",
        ("pipeline", "criteo", "tfrx", "tf.data"),
    ),
    (
        "read + shuffle + batch + parse into torch, SequenceExample",
        "k/s",
        "records",
        ("pipeline", "sequence", "tfrx", "tf.data"),
    ),
    (
        "read + parse + decode + resize JPEG to 224x224 into torch",
        "images/s",
        "records",
        ("pipeline", "jpeg", "tfrx", "tf.data"),
    ),
]
SCALE = {"GB/s": 1e9, "M records/s": 1e6, "k/s": 1e3, "images/s": 1.0}


@functools.cache
def _file_payload(path) -> tuple[int, int]:
    """(records, payload bytes) of a generated file: read once per run, not once per round."""
    return _payload(path)


def _measure(suite: str, workload: str, contender: str, size: str) -> tuple[int, int, float]:
    """(records, bytes, CPU seconds) of one contender's timed pass, in a fresh interpreter."""
    if suite == "read":
        path = workloads.ensure(workload, size, "")
        count, nbytes = _file_payload(path)
        value, _, cpu = in_subprocess("read", contender, workload, size, "", 3)
        if value != count:
            raise RuntimeError(f"{contender} read {value} records of {path}, expected {count}")
        return count, nbytes, cpu
    if suite == "parse":
        nbytes = sum(len(r) for r in records_for(contender, workload, size))
        n, _, cpu = in_subprocess("parse", contender, workload, size, "", 3)
        return n, nbytes, cpu
    path = pipeline.ensure(workload, size)
    count = pipeline.COUNTS[size][workload]
    value, _, cpu = pipeline._in_subprocess(contender, workload, size, 2)
    if value != count:
        raise RuntimeError(f"{contender} delivered {value} records of {path}, expected {count}")
    return count, os.path.getsize(path), cpu


def _fmt(values: list[float], unit: str) -> str:
    scale = SCALE[unit]
    digits = 2 if unit in ("GB/s", "M records/s") else 0
    med = statistics.median(values) / scale
    lo, hi = min(values) / scale, max(values) / scale
    return f"{med:,.{digits}f} ({lo:,.{digits}f}-{hi:,.{digits}f})"


def run(size: str = "small", repeat: int = 5, log=print, rows: list[str] | None = None) -> str:
    from importlib.util import find_spec

    if find_spec("tensorflow") is None:
        raise SystemExit("python -m benchmarks readme compares with TensorFlow: pip install tensorflow-cpu")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    lines = ["| work (per CPU-second) | tfrx | TensorFlow 2.x | ratio |", "|---|---:|---:|---:|"]
    for title, unit, per, (suite, workload, mine, theirs) in ROWS:
        if rows and not any(r.lower() in title.lower() for r in rows):
            continue
        rates: dict[str, list[float]] = {mine: [], theirs: []}
        ratios = []
        for k in range(max(1, repeat)):
            order = (mine, theirs) if k % 2 == 0 else (theirs, mine)
            got = {}
            for contender in order:
                records, nbytes, cpu = _measure(suite, workload, contender, size)
                got[contender] = (nbytes if per == "bytes" else records) / cpu
                rates[contender].append(got[contender])
            ratios.append(got[mine] / got[theirs])
            log(
                f"  {title}: round {k + 1}: tfrx {got[mine] / SCALE[unit]:,.2f} {unit}, "
                f"TensorFlow {got[theirs] / SCALE[unit]:,.2f} {unit}, {ratios[-1]:.2f}x"
            )
        ratio = f"{statistics.median(ratios):.1f}x ({min(ratios):.1f}-{max(ratios):.1f}x)"
        lines.append(f"| {title} | {_fmt(rates[mine], unit)} {unit} | {_fmt(rates[theirs], unit)} {unit} | {ratio} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    from benchmarks.report import header

    p = argparse.ArgumentParser(prog="python -m benchmarks readme", description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=["small", "full"], default="small")
    p.add_argument("--repeat", type=int, default=5, help="alternating rounds per row")
    p.add_argument("--rows", default="", help="comma-separated parts of row titles: only those rows")
    args = p.parse_args(argv)
    print(header(args.size, f", {args.repeat} rounds"))
    table = run(args.size, args.repeat, rows=[r for r in args.rows.split(",") if r])
    print()
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
