"""A long differential run of tfrx against TensorFlow (not part of the test suite).

    PYTHONPATH=src nice python tests/parity_run.py --seconds 1200 --seed 0

Cycles through the generators of ``parity_cases`` (ragged Examples, ragged
SequenceExamples, special float defaults), TensorFlow answering in a worker
process that is replaced when it crashes, and prints the number of cases and
the disagreements by class, with the first seeds of each class to replay.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import parity_cases as pc
from tf_worker import TfWorker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1200.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    worker = TfWorker()
    cases: collections.Counter = collections.Counter()
    classes: collections.Counter = collections.Counter()
    seeds: dict = collections.defaultdict(list)
    families = list(pc.GENERATORS)
    end = time.monotonic() + args.seconds
    i = 0
    try:
        while time.monotonic() < end:
            family = families[i % len(families)]
            seed = args.seed * 1_000_000_007 + i
            diff, tf_out, _, _ = pc.run_case(worker, family, random.Random(seed))
            cases[family] += 1
            if tf_out[0] == "crash":
                classes[(family, f"TensorFlow crashed ({tf_out[1]})")] += 1
            if diff is not None:
                classes[(family, diff)] += 1
                if len(seeds[(family, diff)]) < 5:
                    seeds[(family, diff)].append(seed)
            i += 1
    finally:
        worker.close()
    print(f"cases: {sum(cases.values())} " + ", ".join(f"{k}: {v}" for k, v in cases.items()))
    print(f"TensorFlow worker restarts after crashes: {worker.crashes}")
    if not classes:
        print("disagreements: none")
    for (family, what), n in sorted(classes.items()):
        print(f"{family}: {what}: {n} (seeds {seeds.get((family, what), [])})")


if __name__ == "__main__":
    main()
