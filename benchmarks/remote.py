"""Remote storage: the same shards read from local files and from an S3 server on loopback.

The S3 server is moto's backend behind werkzeug (``tests/s3_server.py``),
started in a separate process so that its CPU time is not counted as the
reader's. Workloads ``image`` (~85 KB records) and ``criteo`` (~750 B
records), each cut into 8 shards written byte for byte to disk and to the
bucket. Three ways of reading, each local and remote:

- ``sequential``: ``RecordReader(shards).iter_batches()``; remotely with the
  concurrent readahead (default 32 MiB) and with ``readahead=0`` (one fsspec
  file per object, one request at a time);
- ``dataset``: ``TFRecordDataset(shards).record_batches(256)``, the files one
  after another (remotely one reader per 16 objects, its readahead running
  into the next objects);
- ``parallel``: ``TFRecordDataset(shards, num_parallel_reads=4).record_batches(256)``;
- ``random``: ``RandomAccessDataset(shards).read_batch`` over a global
  permutation in blocks of 256 (sorted, coalesced range requests, CRCs
  checked), with the indexes already built.

The loopback server answers from memory, with no network latency; most of
its cost is its own Python, on the same two cores. A second server adds
``LATENCY`` (20 ms) before answering each request, as a distant store
would; requests in flight together wait together. The ratio column is
remote records/s over local records/s (wall clock); per CPU-second figures
count only the reading process.

``python -m benchmarks remote [--size full]`` or ``python -m benchmarks.remote``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks import workloads
from benchmarks.report import Result, measure

WORKLOADS = ("image", "criteo")
SHARDS = 8
BLOCK = 256
BUCKET = "tfrx-bench"
LATENCY = 0.02
_TESTS = Path(__file__).resolve().parent.parent / "tests"

_SERVER = """
import sys
sys.path.insert(0, {tests!r})
from s3_server import S3Server
server = S3Server(latency={latency!r})
server.start()
server.client().create_bucket(Bucket={bucket!r})
print(server.endpoint, flush=True)
sys.stdin.read()
server.stop()
"""


class _Server:
    """The loopback S3 server in a child process; ``storage_options`` for s3fs."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency

    def __enter__(self) -> _Server:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER.format(tests=str(_TESTS), bucket=BUCKET, latency=self.latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.endpoint = self._proc.stdout.readline().strip()
        if not self.endpoint.startswith("http"):
            self._proc.kill()
            raise RuntimeError("the S3 server did not start (needs moto[server], boto3 and s3fs)")
        sys.path.insert(0, str(_TESTS))
        from s3_server import S3Server

        self.storage_options = {
            "key": S3Server.key,
            "secret": S3Server.secret,
            "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "us-east-1"},
        }
        return self

    def __exit__(self, *exc) -> None:
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()


def _write_shards(name: str, size: str, folder: Path, prefix: str, opts: dict) -> tuple[list[str], list[str]]:
    import tfrx

    records = workloads.make_records(name, size)
    local, remote = [], []
    for k in range(SHARDS):
        part = records[k::SHARDS]
        path = folder / f"{name}-{k:05d}.tfrecord"
        tfrx.write_records(path, part)
        url = f"{prefix}/{name}-{k:05d}.tfrecord"
        tfrx.write_records(url, part, storage_options=opts)
        local.append(str(path))
        remote.append(url)
    return local, remote


def sequential(paths, opts=None, **kw):
    import tfrx

    def run():
        n = 0
        with tfrx.RecordReader(paths, storage_options=opts, **kw) as r:
            for batch in r.iter_batches():
                n += len(batch)
        return n

    return run


def dataset(paths, opts=None):
    import tfrx

    def run():
        ds = tfrx.data.TFRecordDataset(paths, storage_options=opts)
        return sum(len(b) for b in ds.record_batches(BLOCK))

    return run


def parallel(paths, opts=None):
    import tfrx

    def run():
        ds = tfrx.data.TFRecordDataset(paths, num_parallel_reads=4, storage_options=opts)
        return sum(len(b) for b in ds.record_batches(BLOCK))

    return run


def random_access(paths, opts=None):
    import tfrx

    ds = tfrx.RandomAccessDataset(paths, storage_options=opts)
    epoch = [0]

    def run():
        perm = np.random.Generator(np.random.PCG64(epoch[0])).permutation(len(ds))
        epoch[0] += 1
        return sum(len(ds.read_batch(perm[i : i + BLOCK])) for i in range(0, len(perm), BLOCK))

    return run


def _contenders(local, remote, opts, slow, slow_opts):
    return [
        ("sequential", "local files", sequential(local)),
        ("sequential", "S3, readahead 32 MiB", sequential(remote, opts)),
        ("sequential", "S3, readahead=0", sequential(remote, opts, readahead=0)),
        ("sequential", "S3 +20 ms, readahead 32 MiB", sequential(slow, slow_opts)),
        ("sequential", "S3 +20 ms, readahead=0", sequential(slow, slow_opts, readahead=0)),
        ("dataset", "local files", dataset(local)),
        ("dataset", "S3", dataset(remote, opts)),
        ("dataset", "S3 +20 ms", dataset(slow, slow_opts)),
        ("parallel", "local files", parallel(local)),
        ("parallel", "S3", parallel(remote, opts)),
        ("parallel", "S3 +20 ms", parallel(slow, slow_opts)),
        ("random", "local files", random_access(local)),
        ("random", "S3, coalesced ranges", random_access(remote, opts)),
        ("random", "S3 +20 ms, coalesced ranges", random_access(slow, slow_opts)),
    ]


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    import tfrx

    from importlib.util import find_spec

    missing = [m for m in ("s3fs", "boto3", "moto", "werkzeug") if find_spec(m) is None]
    if missing:
        log(f"  remote: skipped ({', '.join(missing)} not installed; pip install 'tfrx[test]')")
        return []
    names = [n for n in (names or WORKLOADS) if n in WORKLOADS] or list(WORKLOADS)
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="tfrx-remote-bench-") as tmp,
        _Server() as server,
        _Server(LATENCY) as distant,
    ):
        os.environ["TFRX_CACHE_DIR"] = os.path.join(tmp, "index-cache")
        opts, slow_opts = server.storage_options, distant.storage_options
        for name in names:
            local, remote = _write_shards(name, size, Path(tmp), f"s3://{BUCKET}/{size}", opts)
            slow = [u.replace(f"s3://{BUCKET}/", f"s3://{BUCKET}/slow/") for u in remote]
            for path, url in zip(local, slow):
                tfrx.write_records(url, tfrx.read_records(path), storage_options=slow_opts)
            for p in local:
                tfrx.build_index(p)
            for urls, o in ((remote, opts), (slow, slow_opts)):
                for u in urls:
                    tfrx.build_index(tfrx.io._paths.with_options(u, o))
            count = nbytes = 0
            for b in tfrx.RecordReader(local).iter_batches():
                count, nbytes = count + len(b), nbytes + b.nbytes
            for access, contender, fn in _contenders(local, remote, opts, slow, slow_opts):
                fn()  # imports, connections, page cache and indexes warm
                value, wall, cpu = measure(fn, repeat)
                if value != count:
                    raise RuntimeError(f"{access} {contender} read {value} records of {name}, expected {count}")
                r = Result(f"{name} {access}", contender, count, nbytes, wall, cpu)
                log(
                    f"  {r.workload:<18} {contender:<28} {r.mb_per_s:>8,.1f} MB/s {r.records_per_s:>10,.0f} rec/s "
                    f"{r.mb_per_cpu_s:>8,.1f} MB/CPU-s"
                )
                results.append(r)
    return results


def remote_table(results: list[Result]) -> str:
    """Rows per workload and access pattern; ``remote/local`` is records/s against the local row."""
    head = "| workload | access | contender | records | MB | records/s | MB/s | MB/CPU-s | remote/local |"
    lines = [head, "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    local = {r.workload: r for r in results if r.contender == "local files"}
    for r in results:
        name, access = r.workload.rsplit(" ", 1)
        base = local.get(r.workload)
        ratio = "" if r.contender == "local files" or base is None else f"{r.records_per_s / base.records_per_s:.2f}"
        lines.append(
            f"| {name} | {access} | {r.contender} | {r.records} | {r.nbytes / 1e6:.1f} | {r.records_per_s:,.0f} | "
            f"{r.mb_per_s:,.1f} | {r.mb_per_cpu_s:,.1f} | {ratio} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    from benchmarks.report import suite_main

    return suite_main("python -m benchmarks.remote", __doc__, run, argv, render=remote_table)


if __name__ == "__main__":
    sys.exit(main())
