"""Reading over HTTP with a delay per request and a bandwidth cap: random, shuffled, sequential and GZIP reads.

A loopback HTTP range server (``tests/http_range_server.py``) runs in a child
process, serving one file of 100 KB records (and a GZIP copy written with its
checkpoint index), waiting ``--latency`` before each answer, as a distant store
would (requests in flight together wait together), and sending at most
``--bandwidth`` bytes per second over all its connections together. The server
alone is calibrated first: one plain download of the file, without and with the
cap. Per latency, contenders on the same file (indexes already built):

- ``ds[i]`` over random indices: (a) one request per record (``ds[i]`` one by
  one), (b) downloading the whole file first, then reading it locally (download,
  index and reads timed), (c) ``concurrency=1`` (coalesced ranges one after
  another: one request at a time, as tfrx read before latency-aware reads),
  (d) ``ds[indices]`` with the defaults (coalesced, up to 32 in flight);
- a global-shuffle epoch: (a), (b), (c) ``concurrency=1`` and no readahead,
  (d) ``shuffle_global`` with the defaults (windows of 256 fetched together,
  the next while one is read);
- a sequential scan: (a) ``ds[i]`` in file order, (b) download then scan,
  (c) ``RecordReader(url, readahead=0)`` (one fsspec file, one request at a
  time), (d) ``RecordReader(url)`` with the default readahead; MB/s and the
  share of the cap;
- GZIP random access: (a) one record at a time through the checkpoint index,
  (b) download, build the checkpoint index, read locally, (c) inflating from the
  start of the object up to the record (what a reader without an index does),
  (d) ``ds[indices]`` through the checkpoint index; with compressed bytes
  fetched and bytes inflated per record.

``python -m benchmarks.remote_random [--records 600] [--latency 0.02 0.08] [--bandwidth 100e6]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

import tfrx

LATENCIES = (0.02, 0.08)
BANDWIDTH = 100e6
RECORD = 100_000
_TESTS = Path(__file__).resolve().parent.parent / "tests"
_SERVER = """
import sys
sys.path.insert(0, {tests!r})
from http_range_server import RangeServer
server = RangeServer({folder!r}, delay={latency!r}, bandwidth={bandwidth!r})
print(server.url(""), flush=True)
sys.stdin.read()
"""


class _Served:
    """The range server in a child process (its CPU time is not the reader's)."""

    def __init__(self, folder: str, latency: float, bandwidth: float | None) -> None:
        code = _SERVER.format(tests=str(_TESTS), folder=folder, latency=latency, bandwidth=bandwidth)
        self._proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._proc.stdout is not None
        self.root = self._proc.stdout.readline().strip()

    def url(self, name: str) -> str:
        return self.root + name

    def stats(self) -> dict:
        with urllib.request.urlopen(self.root + "_stats") as r:
            return json.loads(r.read())

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=10)


def _download_rate(url: str) -> float:
    t = time.perf_counter()
    n = 0
    with urllib.request.urlopen(url) as r:
        while chunk := r.read(1 << 20):
            n += len(chunk)
    return n / (time.perf_counter() - t)


def _row(table: list, name: str, fn, n: int, server: _Served, nbytes: int | None = None, extra: str = "") -> float:
    before = server.stats()
    t = time.perf_counter()
    fn()
    dt = time.perf_counter() - t
    after = server.stats()
    requests = after["gets"] - before["gets"]
    sent = after["bytes_sent"] - before["bytes_sent"]
    rate = n / dt
    mb = f"{nbytes / dt / 1e6:,.1f}" if nbytes else ""
    table.append(f"| {name} | {rate:,.1f} | {mb} | {requests} | {sent / 1e6:,.1f} | {dt:.2f} |{extra}")
    return rate


def _download(url: str, folder: str, name: str) -> str:
    import fsspec

    local = os.path.join(folder, name)
    fsspec.filesystem("http").get_file(url, local)
    return local


def run(records: int, latency: float, bandwidth: float | None, picks: int, folder: str, out) -> dict:  # noqa: PLR0915  all contenders of one latency, side by side
    plain, gz = os.path.join(folder, "data.tfrecord"), os.path.join(folder, "data.tfrecord.gz")
    size = os.path.getsize(plain)
    server = _Served(folder, latency, bandwidth)
    ratios: dict = {}
    try:
        url, gz_url = server.url("data.tfrecord"), server.url("data.tfrecord.gz")
        index = tfrx.build_index(plain, cache_dir=os.path.join(folder, "cache"))
        rng = np.random.default_rng(1)
        order = rng.permutation(records)[:picks].tolist()
        one_at_a_time = min(40, picks)
        ds = tfrx.RandomAccessDataset(url, index=[index])
        serial = tfrx.RandomAccessDataset(url, index=[index], concurrency=1)
        ds[0]  # the connection made
        serial[0]
        head = "| read | records/s | MB/s | requests | MB sent | seconds |\n| --- | ---: | ---: | ---: | ---: | ---: |"
        scratch = tempfile.mkdtemp(dir=folder)

        def local_random(name, picked):
            def fn():
                local = _download(url, scratch, name)
                lds = tfrx.RandomAccessDataset(local, cache_dir=os.path.join(scratch, "cache"))
                lds[picked]

            return fn

        def local_epoch(name):
            def fn():
                local = _download(url, scratch, name)
                lds = tfrx.RandomAccessDataset(local, cache_dir=os.path.join(scratch, "cache"))
                sum(1 for _ in lds.shuffle_global(seed=1))

            return fn

        def local_scan(name):
            def fn():
                local = _download(url, scratch, name)
                sum(len(b) for b in tfrx.RecordReader(local).iter_batches())

            return fn

        def scan(**kw):
            return lambda: sum(len(b) for b in tfrx.RecordReader(url, **kw).iter_batches())

        capped = f"cap {bandwidth / 1e6:.0f} MB/s" if bandwidth else "no cap"
        lat = f"{latency * 1000:.0f} ms per request, {capped}"
        t: list[str] = [f"\n**`ds[i]` over {picks} random indices** ({lat}):\n", head]
        a = _row(
            t,
            f"(a) one request per record (`ds[i]`, first {one_at_a_time})",
            lambda: [ds[i] for i in order[:one_at_a_time]],
            one_at_a_time,
            server,
        )
        _row(t, "(b) download the file, then read locally", local_random("r.tfrecord", order), picks, server)
        _row(t, "(c) `concurrency=1` (ranges one at a time)", lambda: serial[order], picks, server)
        d = _row(t, "(d) `ds[indices]` (defaults)", lambda: ds[order], picks, server)
        ratios["random"] = d / a
        t += [f"\n**global-shuffle epoch, {records} records** ({lat}):\n", head]
        a = _row(
            t,
            f"(a) one request per record (first {one_at_a_time} of the order)",
            lambda: [ds[i] for i in rng.permutation(records)[:one_at_a_time].tolist()],
            one_at_a_time,
            server,
        )
        _row(t, "(b) download the file, then a local epoch", local_epoch("e.tfrecord"), records, server)
        _row(
            t,
            "(c) `concurrency=1`, no readahead",
            lambda: sum(1 for _ in serial.shuffle_global(seed=2, readahead=False)),
            records,
            server,
        )
        d = _row(
            t,
            "(d) `shuffle_global(seed)` (defaults)",
            lambda: sum(1 for _ in ds.shuffle_global(seed=3)),
            records,
            server,
        )
        ratios["epoch"] = d / a
        t += [f"\n**sequential scan, {size / 1e6:.0f} MB** ({lat}):\n", head]
        _row(
            t,
            f"(a) one request per record (`ds[i]`, first {one_at_a_time})",
            lambda: [ds[i] for i in range(one_at_a_time)],
            one_at_a_time,
            server,
            one_at_a_time * (RECORD + 16),
        )
        _row(t, "(b) download the file, then scan locally", local_scan("s.tfrecord"), records, server, size)
        _row(t, "(c) `RecordReader(url, readahead=0)`", scan(readahead=0), records, server, size)
        d = _row(t, "(d) `RecordReader(url)` (defaults)", scan(), records, server, size)
        if bandwidth:
            ratios["scan_share"] = d * (size / records) / bandwidth
            t[-1] += f" {ratios['scan_share'] * 100:.0f}% of the cap"

        # GZIP: through the checkpoint index the writer emitted (kept beside the file: .tfrx/)
        gds = tfrx.RandomAccessDataset(gz_url, index="sidecar")
        gds[0]
        gpicks = order[: max(picks // 2, 1)]
        ckpt = gds.indexes[0].checkpoints
        t += [
            f"\n**GZIP file ({os.path.getsize(gz) / 1e6:.0f} MB compressed), {len(gpicks)} random records** ({lat}):\n",
            head,
        ]
        reader = None

        def batched():
            nonlocal reader
            gds.close()
            gds[gpicks]
            reader = gds._handle(0)

        def from_start():
            for i in gpicks[:3]:
                pos = tfrx.io.RecordPosition(0, int(ckpt.records.offsets[i]), i)
                with tfrx.RecordReader(gz_url, start=pos) as r:
                    next(iter(r))

        def local_gz():
            local = _download(gz_url, scratch, "g.tfrecord.gz")
            lds = tfrx.RandomAccessDataset(local, cache_dir=os.path.join(scratch, "cache"))
            lds[gpicks]

        few = min(20, len(gpicks))
        _row(
            t,
            f"(a) one record at a time through the checkpoint index (first {few})",
            lambda: [gds[i] for i in gpicks[:few]],
            few,
            server,
        )
        _row(t, "(b) download, build the checkpoint index, read locally", local_gz, len(gpicks), server)
        _row(t, "(c) inflate from the start of the object (first 3)", from_start, 3, server)
        _row(t, "(d) `ds[indices]` through the checkpoint index", batched, len(gpicks), server)
        if reader is not None:
            t.append(
                f"\n(d) fetched {reader.fetched_bytes / len(gpicks) / 1e6:.2f} MB of compressed data and inflated "
                f"{reader.inflated_bytes / len(gpicks) / 1e6:.2f} MB per record ({len(ckpt.points)} checkpoints, "
                f"{ckpt.records.file_size / len(ckpt.points) / 1e6:.2f} MB of records apart)."
            )
        print("\n".join(t), file=out, flush=True)
    finally:
        server.close()
    return ratios


def main(records: int = 600, latencies=LATENCIES, bandwidth: float | None = BANDWIDTH, picks: int = 200) -> None:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="tfrx-remote-random-") as d:
        os.environ["TFRX_CACHE_DIR"] = os.path.join(d, "index-cache")
        data = [rng.integers(0, 16, RECORD, dtype=np.uint8).tobytes() for _ in range(records)]
        tfrx.write_records(os.path.join(d, "data.tfrecord"), data)
        with tfrx.TFRecordWriter(
            os.path.join(d, "data.tfrecord.gz"), compression="GZIP", checkpoint_index="sidecar"
        ) as w:
            w.write_many(data)
        del data
        size = os.path.getsize(os.path.join(d, "data.tfrecord"))
        print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}")
        print(f"{records} records of {RECORD // 1000} KB ({size / 1e6:.0f} MB); server in a child process on loopback")
        for cap in (None, bandwidth) if bandwidth else (None,):
            server = _Served(d, 0.0, cap)
            try:
                rate = _download_rate(server.url("data.tfrecord"))
            finally:
                server.close()
            what = "no cap" if cap is None else f"cap {cap / 1e6:.0f} MB/s"
            print(f"server alone, one plain download ({what}): {rate / 1e6:,.0f} MB/s")
        for latency in latencies:
            ratios = run(records, latency, bandwidth, picks, d, sys.stdout)
            share = f"; the scan {ratios['scan_share'] * 100:.0f}% of the cap" if "scan_share" in ratios else ""
            print(
                f"\n{latency * 1000:.0f} ms: `ds[indices]` {ratios['random']:.0f}x and the epoch "
                f"{ratios['epoch']:.0f}x one request per record{share}"
            )
        print(f"# load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=600)
    ap.add_argument("--latency", type=float, nargs="+", default=list(LATENCIES))
    ap.add_argument("--bandwidth", type=float, default=BANDWIDTH, help="bytes/s over all connections; 0: no cap")
    ap.add_argument("--picks", type=int, default=200)
    a = ap.parse_args()
    main(a.records, a.latency, a.bandwidth or None, a.picks)
