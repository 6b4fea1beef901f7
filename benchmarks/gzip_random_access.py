"""Random access into a GZIP TFRecord file: through its checkpoint index vs inflating from the start.

One GZIP file of ~10 KB records (compressible payloads), warm page cache.
Reported: building the checkpoint index (MB of output per second), random
reads with ``RandomAccessDataset`` (records/s, and bytes inflated per record
counted by ``CompressedRandomReader.inflated_bytes``), and the same records
read by inflating from the start of the file (``RecordReader`` resuming at
the record's position: inflate and discard everything before it), and the
slowest of 10 pages of 20 records opened at random places by ``tfrx view``'s
source once the index exists. Last, the same records written again with
``TFRecordWriter(..., checkpoint_index=True)``, which emits the index while
writing: the writing time and file size against a plain GZIP write.

``python -m benchmarks.gzip_random_access [--mb 64] [--reads 200]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import tfrx
from tfrx.io.inflate_index import CompressedRandomReader, build_inflate_index


def main(mb: int = 64, reads: int = 200) -> None:
    rng = np.random.default_rng(0)
    record = 10_000
    n = mb * 1_000_000 // (record + 16)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "data.tfrecord.gz")
        with tfrx.TFRecordWriter(path, compression="GZIP") as w:
            for _ in range(n):
                w.write(rng.integers(0, 16, record, dtype=np.uint8).tobytes())
        cache = os.path.join(d, "cache")
        t = time.perf_counter()
        index = build_inflate_index(path, cache_dir=cache)
        build = time.perf_counter() - t
        out_mb = index.records.file_size / 1e6
        print(f"file: {n} records, {out_mb:.0f} MB inflated, {os.path.getsize(path) / 1e6:.0f} MB compressed")
        print(f"checkpoint index: built in {build:.2f} s ({out_mb / build:.0f} MB/s), {len(index.points)} checkpoints")
        picks = rng.integers(0, n, reads)
        ds = tfrx.RandomAccessDataset(path, cache_dir=cache)
        t = time.perf_counter()
        for i in picks.tolist():
            ds[i]
        indexed = reads / (time.perf_counter() - t)
        with CompressedRandomReader(path, index) as reader:
            for i in picks.tolist():
                reader.read(int(index.records.offsets[i]), int(index.records.lengths[i]) + 16)
            per_record = reader.inflated_bytes / reads
        few = picks[: max(1, reads // 20)]
        t = time.perf_counter()
        for i in few.tolist():
            pos = tfrx.io.RecordPosition(0, int(index.records.offsets[i]), i)
            with tfrx.RecordReader(path, start=pos) as r:
                next(iter(r))
        scratch = len(few) / (time.perf_counter() - t)
        from_start = float(np.mean(index.records.offsets[few])) + record
        print("| read | records/s | bytes inflated per record |")
        print("| --- | ---: | ---: |")
        print(f"| checkpoint index (RandomAccessDataset[i]) | {indexed:,.0f} | {per_record:,.0f} |")
        print(f"| inflating from the start (RecordReader at the record) | {scratch:,.1f} | {from_start:,.0f} |")
        print(f"speed-up: {indexed / scratch:.0f}x")
        from tfrx.viewer._source import ViewSource

        view = ViewSource(path, index_cache_dir=cache)
        view.total()
        worst = 0.0
        for first in rng.integers(0, n - 20, 10).tolist():
            t = time.perf_counter()
            view.read(first, 20)
            worst = max(worst, time.perf_counter() - t)
        print(f"viewer: a page of 20 records anywhere in the file, slowest of 10: {worst * 1000:.0f} ms")
        records = list(tfrx.read_records(path))
        times = {}
        for emit in (False, True):
            out = os.path.join(d, f"again-{emit}.tfrecord.gz")
            t = time.perf_counter()
            with tfrx.TFRecordWriter(out, compression="GZIP", checkpoint_index=emit) as w:
                w.write_many(records)
            times[emit] = (time.perf_counter() - t, os.path.getsize(out))
        (plain, plain_size), (emitting, emitting_size) = times[False], times[True]
        print(
            f"writing with checkpoint_index=True: {emitting:.2f} s ({emitting_size - plain_size:+,} bytes) vs "
            f"{plain:.2f} s plain; no indexing pass needed ({build:.2f} s above)"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--reads", type=int, default=200)
    a = ap.parse_args()
    main(a.mb, a.reads)
