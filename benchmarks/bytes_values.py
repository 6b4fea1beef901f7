"""Large bytes features: parsing 100 KB - 1 MB values to bytes objects or views, beside reading them.

Records hold one bytes feature of 100 KB to 1 MB (uniformly drawn, like
encoded images or audio clips) and an int64 label. Contenders, all in one
process on the same file (from the page cache), in alternating rounds:

* ``read``: ``RecordReader.iter_batches(256)``, the records only.
* ``read + parse (bytes)``: the same batches through ``ExampleParser``; each
  value becomes a Python ``bytes`` object (the default).
* ``read + parse (views)``: ``bytes_as="views"``: a ``tfrx.BytesArray`` over
  the batch's own buffer, no copy.
* ``read + parse (views) + to_arrow``: the views as a pyarrow array (when
  pyarrow is installed).
* ``parse only (bytes / views)``: the parser alone, on batches read before.
* ``copy only``: the same batches' records copied into one reused buffer with
  the extension's non-temporal copy (``gather_spans(..., stream=True)``): what
  this machine's memory allows for one copy of the payload, the floor under
  ``parse only (bytes)``, which must copy every value into its ``bytes`` object.

The figure is payload GB per CPU-second (every thread counted), median and
range over the rounds; wall-clock GB/s beside it.

Run with ``python -m benchmarks bytes_values`` (or ``python -m benchmarks.bytes_values``).

``python -m benchmarks.bytes_values --baseline DIR [--size small|full]
[--repeat N]`` is an A/B of ``parse only (bytes)`` on the image workload's
records (~85 KB values, ``benchmarks/workloads.py``) between this checkout's
``tfrx`` and the one in ``DIR`` (another tree's ``src`` with its built
extension), each round both in fresh interpreters in alternating order, as a
user's process runs it (no ``TFRX_MALLOC_TUNING``, unlike the other suites'
workers): the ratio per round, median and range.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass

import numpy as np

from benchmarks.report import Result, cpu_seconds, suite_main
from benchmarks.workloads import DATA_DIR


@dataclass
class RatesResult(Result):
    rates: tuple = ()  # GB per CPU-second, one per round

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


BATCH = 256
RECORDS = {"small": 400, "full": 2000}
ROUNDS = {"small": 5, "full": 7}
SPEC_KEYS = ("blob", "label")


def ensure(size: str):
    """Writes the workload file unless it is already there; returns its path."""
    import tfrx

    path = DATA_DIR / f"bytes_values-{size}.tfrecord"
    if path.exists():
        return path
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0xB17E5)
    pool = rng.integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()
    tmp = path.with_name(path.name + ".tmp")
    with tfrx.TFRecordWriter(tmp) as w:
        for i in range(RECORDS[size]):
            n = int(rng.integers(100_000, 1_000_001))
            at = int(rng.integers(0, len(pool) - n + 1))
            w.write(tfrx.make_example({"blob": [pool[at : at + n]], "label": [i]}).SerializeToString())
    tmp.replace(path)
    return path


def _spec():
    import tfrx

    return {"blob": tfrx.FixedLenFeature([], tfrx.string), "label": tfrx.FixedLenFeature([], tfrx.int64)}


def contenders(path) -> dict:
    """name -> a function that runs one pass and returns the payload bytes it covered."""
    import tfrx

    objects = tfrx.ExampleParser(_spec())
    views = tfrx.ExampleParser(_spec(), bytes_as="views")
    batches = list(tfrx.RecordReader(path).iter_batches(BATCH))

    def read():
        return sum(int(b.lengths.sum()) for b in tfrx.RecordReader(path).iter_batches(BATCH))

    def read_parse(parser, arrow=False):
        def run():
            total = 0
            for b in tfrx.RecordReader(path).iter_batches(BATCH):
                out = parser.parse(b)
                if arrow:
                    out["blob"].to_arrow()
                total += int(b.lengths.sum())
            return total

        return run

    def parse_only(parser):
        def run():
            total = 0
            for b in batches:
                parser.parse(b)
                total += int(b.lengths.sum())
            return total

        return run

    out = {
        "read": read,
        "read + parse (bytes)": read_parse(objects),
        "read + parse (views)": read_parse(views),
    }
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        out["read + parse (views) + to_arrow"] = read_parse(views, arrow=True)
    out["parse only (bytes)"] = parse_only(objects)
    out["parse only (views)"] = parse_only(views)

    from tfrx import _native

    room = np.empty(max(len(b.data) for b in batches), dtype=np.uint8)

    def copy_only():
        total = 0
        for b in batches:
            starts = np.asarray(b.starts, dtype=np.int64)
            lengths = np.asarray(b.lengths, dtype=np.int64)
            _native.gather_spans([b.data], np.zeros(len(b), dtype=np.int64), starts, lengths, room, True)
            total += int(lengths.sum())
        return total

    out["copy only"] = copy_only
    return out


def run(size: str, workloads=None, repeat: int = 3) -> list[RatesResult]:
    path = ensure(size)
    runs = contenders(path)
    samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in runs}
    for name, fn in runs.items():  # warm the page cache, the allocator and the parsers
        fn()
    rounds = max(repeat, ROUNDS[size])
    for r in range(rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for name in order:
            gc.collect()
            c0, t0 = cpu_seconds(), time.perf_counter()
            nbytes = runs[name]()
            samples[name].append((cpu_seconds() - c0, time.perf_counter() - t0, nbytes))
    results = []
    for name, rows in samples.items():
        rates = tuple(n / cpu / 1e9 for cpu, _, n in rows)
        median = statistics.median(rates)
        mid = min(rows, key=lambda row: abs(row[2] / row[0] / 1e9 - median))  # the round nearest the median
        results.append(RatesResult("bytes_values", name, RECORDS[size], mid[2], mid[1], mid[0], rates=rates))
    return results


def table(results: list[RatesResult]) -> str:
    lines = [
        f"| contender | GB/CPU-s, median of {len(results[0].rates)} rounds | range | GB/s wall (median round) | "
        "CPU vs read |",
        "|---|---|---|---|---|",
    ]
    read = next((r for r in results if r.contender == "read"), results[0])
    for r in results:
        lines.append(
            f"| {r.contender} | {r.median:.1f} | {min(r.rates):.1f}-{max(r.rates):.1f} | "
            f"{r.nbytes / r.wall / 1e9:.1f} | {r.median / read.median:.2f} |"
        )
    return "\n".join(lines)


_AB_WORKER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import tfrx
if not tfrx.__file__.startswith(sys.argv[1]):
    raise SystemExit(f"imported {tfrx.__file__}, not the tfrx in {sys.argv[1]}")
spec = {k: tfrx.FixedLenFeature([], tfrx.string if k in ("image/encoded", "image/format") else tfrx.int64)
        for k in ("image/encoded", "image/format", "image/class/label", "image/height", "image/width")}
parser = tfrx.ExampleParser(spec)
batches = list(tfrx.RecordReader(sys.argv[2]).iter_batches(256))
nbytes = sum(int(b.lengths.sum()) for b in batches)
for b in batches:
    parser.parse(b)
best = float("inf")
for _ in range(3):
    t = time.process_time()
    for b in batches:
        parser.parse(b)
    best = min(best, time.process_time() - t)
print(json.dumps({"gb_per_cpu_s": nbytes / best / 1e9}))
"""


def ab(baseline: str, size: str = "full", rounds: int = 5, log=print) -> list[float]:
    """Per round, parse-only GB per CPU-second of this checkout's tfrx over the baseline's."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from benchmarks import workloads

    path = str(workloads.ensure("image", size, ""))
    mine = str(Path(__file__).resolve().parent.parent / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("TFRX_MALLOC_TUNING", "PYTHONPATH")}

    def one(src: str) -> float:
        out = subprocess.run(
            [sys.executable, "-c", _AB_WORKER, src, path], env=env, capture_output=True, text=True, check=True
        )
        return float(json.loads(out.stdout.strip().splitlines()[-1])["gb_per_cpu_s"])

    ratios = []
    for k in range(max(1, rounds)):
        got = {}
        for src in (mine, baseline) if k % 2 == 0 else (baseline, mine):
            got[src] = one(src)
        ratios.append(got[mine] / got[baseline])
        log(
            f"  round {k + 1}: this tree {got[mine]:.2f}, baseline {got[baseline]:.2f} GB per CPU-second, "
            f"{ratios[-1]:.2f}x (load {os.getloadavg()[0]:.2f})"
        )
    log(
        f"parse only (bytes), image records: this tree / baseline median {statistics.median(ratios):.2f}x, "
        f"range {min(ratios):.2f}-{max(ratios):.2f}x over {len(ratios)} rounds"
    )
    return ratios


def main(argv=None) -> int:
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if "--baseline" in args:
        import argparse

        p = argparse.ArgumentParser(prog="python -m benchmarks.bytes_values --baseline DIR")
        p.add_argument("--baseline", required=True, help="another tree's src folder with its built extension")
        p.add_argument("--size", choices=["small", "full"], default="full")
        p.add_argument("--repeat", type=int, default=5, help="rounds")
        a = p.parse_args(args)
        ab(a.baseline, a.size, a.repeat)
        return 0
    return suite_main("python -m benchmarks.bytes_values", __doc__, run, argv, render=table)


if __name__ == "__main__":
    raise SystemExit(main())
