"""Random reads of 100 KB records over HTTP with 20 ms added per request: one request per record vs batched.

A loopback HTTP range server (``tests/http_range_server.py``) runs in a child
process, serving one file of ~100 KB records and waiting ``LATENCY`` before
each answer, as a distant store would (requests in flight together wait
together). Contenders, all through ``tfrx.RandomAccessDataset(url)`` with the
index already built:

- ``ds[i]`` one by one: one range request per record, one after another;
- ``ds[indices]``, ``concurrency=1``: coalesced ranges, one request at a time;
- ``ds[indices]`` (default ``concurrency=32``): coalesced ranges, up to 32 in flight;
- a global-shuffle epoch (``ds.shuffle_global(seed)``, blocks of 256 positions).

``python -m benchmarks.remote_random [--records 600] [--latency 0.02]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

import tfrx

LATENCY = 0.02
_TESTS = Path(__file__).resolve().parent.parent / "tests"
_SERVER = """
import sys, time
sys.path.insert(0, {tests!r})
from http_range_server import RangeServer
server = RangeServer({folder!r}, delay={latency!r})
print(server.url("data.tfrecord"), flush=True)
sys.stdin.read()
"""


def main(records: int = 600, latency: float = LATENCY, picks: int = 400) -> None:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "data.tfrecord")
        tfrx.write_records(path, [rng.bytes(100_000) for _ in range(records)])
        index = tfrx.build_index(path, cache_dir=os.path.join(d, "cache"))
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER.format(tests=str(_TESTS), folder=d, latency=latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdin is not None
        try:
            url = proc.stdout.readline().strip()
            count_url = url.rsplit("/", 1)[0] + "/_requests"

            def requests() -> int:
                with urllib.request.urlopen(count_url) as r:
                    return int(r.read())

            def run(name: str, fn, n: int) -> None:
                before = requests()
                t = time.perf_counter()
                fn()
                dt = time.perf_counter() - t
                print(f"| {name} | {n / dt:,.0f} | {requests() - before} | {dt:.2f} |")

            order = rng.permutation(records)[:picks].tolist()
            one = tfrx.RandomAccessDataset(url, index=[index])
            serial = tfrx.RandomAccessDataset(url, index=[index], concurrency=1)
            ds = tfrx.RandomAccessDataset(url, index=[index])
            print(f"{records} records of 100 KB, {latency * 1000:.0f} ms per request; {picks} random records")
            print("| read | records/s | requests | seconds |")
            print("| --- | ---: | ---: | ---: |")
            run("`ds[i]` one by one (first 40)", lambda: [one[i] for i in order[:40]], 40)
            run("`ds[indices]`, concurrency=1", lambda: serial[order], picks)
            run("`ds[indices]`, concurrency=32", lambda: ds[order], picks)
            run("global-shuffle epoch", lambda: sum(1 for _ in ds.shuffle_global(seed=1)), records)
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=600)
    ap.add_argument("--latency", type=float, default=LATENCY)
    ap.add_argument("--picks", type=int, default=400)
    a = ap.parse_args()
    main(a.records, a.latency, a.picks)
