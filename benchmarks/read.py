"""Reading: tfrx vs tf.data.TFRecordDataset (batched) vs the tfrecord package, same files."""

from __future__ import annotations

import os

from benchmarks import workloads
from benchmarks.report import Result, in_subprocess

TF_BATCH = 1024


def _payload(path) -> tuple[int, int]:
    import tfrx

    n = nbytes = 0
    with tfrx.RecordReader(path) as r:
        for b in r.iter_batches():
            n += len(b)
            nbytes += b.nbytes
    return n, nbytes


def tfrx_batches(path, compression):
    import tfrx

    def run():
        n = 0
        with tfrx.RecordReader(path, compression=compression or None) as r:
            for batch in r.iter_batches():
                n += len(batch)
        return n

    return run


def tfrx_batches_mmap(path, compression):
    import tfrx

    def run():
        n = 0
        with tfrx.RecordReader(path, compression=compression or None, use_mmap=True) as r:
            for batch in r.iter_batches():
                n += len(batch)
        return n

    return run


def tfrx_records(path, compression):
    import tfrx

    def run():
        n = 0
        for _ in tfrx.read_records(path, compression=compression or None):
            n += 1
        return n

    return run


def tf_dataset(path, compression):
    import tensorflow as tf

    def run():
        n = 0
        ds = tf.data.TFRecordDataset(str(path), compression_type=compression).batch(TF_BATCH)
        for batch in ds:
            n += int(batch.shape[0])
        return n

    return run


def tfrecord_package(path, compression):
    from tfrecord.reader import tfrecord_iterator

    def run():
        n = 0
        for _ in tfrecord_iterator(str(path), compression_type="gzip" if compression else None):
            n += 1
        return n

    return run


def zlib_inflate_only(path, compression):
    """Python's zlib inflating the same file, no framing: the floor for GZIP reading."""
    import zlib

    def run():
        d = zlib.decompressobj(31 if compression == "GZIP" else 15)
        total = 0
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                total += len(d.decompress(chunk))
        return total

    return run


CONTENDERS = [
    ("tfrx batches", tfrx_batches, "tfrx", ""),
    ("tfrx batches, use_mmap", tfrx_batches_mmap, "tfrx", ""),
    ("tfrx read_records", tfrx_records, "tfrx", ""),
    ("tf.data batched", tf_dataset, "tensorflow", ""),
    ("tfrecord", tfrecord_package, "tfrecord", "no CRC check"),
]
EXTRA = [("python zlib, inflate only", zlib_inflate_only, "zlib", "no framing")]


def _available(module: str | None) -> bool:
    from importlib.util import find_spec

    return find_spec(module) is not None


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    names = names or list(workloads.WORKLOADS)
    cases = [(n, "") for n in names] + [(n, "GZIP") for n in ("criteo", "image") if n in names]
    results = []
    for name, compression in cases:
        path = workloads.ensure(name, size, compression)
        count, nbytes = _payload(path)
        label = name + (" gzip" if compression else "")
        contenders = list(CONTENDERS)
        if compression:
            contenders += EXTRA
        for contender, make, module, note in contenders:
            if compression and make is tfrx_batches_mmap:
                continue  # compressed files are never mapped
            if not _available(module):
                log(f"  {label}: {contender} skipped ({module} not installed)")
                continue
            value, wall, cpu = in_subprocess("read", contender, name, size, compression, repeat)
            if contender.startswith("python zlib"):
                value = count
            if value != count:
                raise RuntimeError(f"{contender} read {value} records of {path}, expected {count}")
            r = Result(label, contender, count, nbytes, wall, cpu, note)
            log(
                f"  {label:<12} {contender:<26} {r.mb_per_s:>8,.0f} MB/s {r.records_per_s:>11,.0f} rec/s  cpu {cpu:.2f}s"
            )
            results.append(r)
    return results
