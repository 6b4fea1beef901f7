"""Writing: tfrx vs tf.io.TFRecordWriter vs the tfrecord package's framing, same records."""

from __future__ import annotations

import os

from benchmarks import workloads
from benchmarks.report import Result, in_subprocess


def _out(tag: str):
    workloads.DATA_DIR.mkdir(parents=True, exist_ok=True)
    return workloads.DATA_DIR / f"write-{tag}.tfrecord"


def _fresh(path) -> None:
    if path.exists():
        path.unlink()


def tfrx_write_many(records, compression):
    import tfrx

    path = _out("tfrx-many")

    def run():
        _fresh(path)
        with tfrx.TFRecordWriter(path, compression=compression or None) as w:
            w.write_many(records)
        return len(records)

    return run, path


def tfrx_write_loop(records, compression):
    import tfrx

    path = _out("tfrx-loop")

    def run():
        _fresh(path)
        with tfrx.TFRecordWriter(path, compression=compression or None) as w:
            for r in records:
                w.write(r)
        return len(records)

    return run, path


def tf_writer(records, compression):
    import tensorflow as tf

    path = _out("tf")
    options = tf.io.TFRecordOptions(compression_type=compression)

    def run():
        _fresh(path)
        with tf.io.TFRecordWriter(str(path), options) as w:
            for r in records:
                w.write(r)
        return len(records)

    return run, path


def tfrecord_framing(records, compression):
    """What tfrecord.TFRecordWriter.write does once a record is serialized (it only writes Examples it builds)."""
    import struct

    from tfrecord.writer import TFRecordWriter

    path = _out("tfrecord")
    crc = TFRecordWriter.masked_crc

    def run():
        _fresh(path)
        with open(path, "wb") as f:
            for r in records:
                length = struct.pack("<Q", len(r))
                f.write(length)
                f.write(crc(length))
                f.write(r)
                f.write(crc(r))
        return len(records)

    return run, path


TAGS = {
    "tfrx write_many": "tfrx-many",
    "tfrx write loop": "tfrx-loop",
    "tf.io.TFRecordWriter": "tf",
    "tfrecord": "tfrecord",
}

CONTENDERS = [
    ("tfrx write_many", tfrx_write_many, None, "", True),
    ("tfrx write loop", tfrx_write_loop, None, "", True),
    ("tf.io.TFRecordWriter", tf_writer, "tensorflow", "", True),
    ("tfrecord", tfrecord_framing, "tfrecord", "framing only", False),
]


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    names = names or list(workloads.WORKLOADS)
    cases = [(n, "") for n in names] + [(n, "GZIP") for n in ("criteo",) if n in names]
    results = []
    for name, compression in cases:
        # zlib compresses at tens of MB/s: GZIP writing uses the small set.
        wsize = "small" if compression else size
        records = workloads.make_records(name, wsize)
        nbytes = sum(map(len, records))
        label = name + (" gzip" if compression else "")
        if compression and wsize != size:
            label += " (small)"
        expected = None
        for contender, make, module, note, supports_gzip in CONTENDERS:
            if compression and not supports_gzip:
                continue
            if module:
                from importlib.util import find_spec

                if find_spec(module) is None:
                    log(f"  {label}: {contender} skipped ({module} not installed)")
                    continue
            path = _out(TAGS[contender])
            value, wall, cpu = in_subprocess("write", contender, name, wsize, compression, repeat)
            data = path.read_bytes() if not compression else None
            if data is not None:
                if expected is None:
                    expected = data
                elif data != expected:
                    raise RuntimeError(f"{contender} wrote different bytes than tfrx for {label}")
            path.unlink()
            r = Result(label, contender, value, nbytes, wall, cpu, note)
            log(
                f"  {label:<12} {contender:<26} {r.mb_per_s:>8,.0f} MB/s {r.records_per_s:>11,.0f} rec/s  cpu {cpu:.2f}s"
            )
            results.append(r)
    return results
