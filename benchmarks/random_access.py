"""Random access: globally shuffled reads through an index vs sequential reads, same files.

Workloads ``image`` (~85 KB records) and ``criteo`` (~750 B records), warm
page cache. Contenders:

- ``sequential batches``: ``tfrx.RecordReader.iter_batches`` (the baseline).
- ``sequential records``: ``tfrx.read_records``, one ``bytes`` per record.
- ``shuffled read_batch``: a fresh global permutation each pass, read in
  blocks of 256 positions with ``RandomAccessDataset.read_batch`` (sorted,
  coalesced, CRC-checked), one RecordBatch per block.
- ``shuffled iterator``: ``RandomAccessDataset.shuffle_global(seed)`` iterated
  record by record (read-ahead thread on), one ``bytes`` per record.
- ``tfrecord index split``: the ``tfrecord`` package has no random access; its
  index-based reader reads contiguous index shards (4 here) in order.

Also index building: ``tfrx.build_index`` (framing scan, mmap) vs the
``tfrecord`` package's ``tfrecord2idx``, in GB of data file per second.

``python -m benchmarks random_access [--size full]`` or
``python -m benchmarks.random_access``.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from benchmarks import workloads
from benchmarks.report import Result, measure

WORKLOADS = ("image", "criteo")
BLOCK = 256


def sequential_batches(path):
    import tfrx

    def run():
        n = 0
        with tfrx.RecordReader(path) as r:
            for batch in r.iter_batches():
                n += len(batch)
        return n

    return run


def sequential_records(path):
    import tfrx

    def run():
        return sum(1 for _ in tfrx.read_records(path))

    return run


def shuffled_read_batch(path):
    import tfrx

    ds = tfrx.RandomAccessDataset([path], use_mmap=True)
    epoch = [0]

    def run():
        perm = np.random.Generator(np.random.PCG64(epoch[0])).permutation(len(ds))
        epoch[0] += 1
        n = 0
        for start in range(0, len(perm), BLOCK):
            n += len(ds.read_batch(perm[start : start + BLOCK]))
        return n

    return run


def shuffled_iterator(path):
    import tfrx

    g = tfrx.RandomAccessDataset([path], use_mmap=True).shuffle_global(0)

    def run():
        n = 0
        for _ in g:
            n += 1
        return n

    return run


def tfrecord_index_split(path):
    from tfrecord.reader import tfrecord_iterator
    from tfrecord.tools.tfrecord2idx import create_index

    index = str(path) + ".idx"
    if not os.path.exists(index):
        create_index(str(path), index)

    def run():
        n = 0
        for shard in range(4):
            for _ in tfrecord_iterator(str(path), index, shard=(shard, 4)):
                n += 1
        return n

    return run


def tfrx_build_index(path):
    from tfrx.index import scan_index

    def run():
        return len(scan_index(path))

    return run


def tfrecord2idx(path):
    from tfrecord.tools.tfrecord2idx import create_index

    out = str(path) + ".bench.idx"

    def run():
        create_index(str(path), out)
        with open(out) as f:
            return sum(1 for _ in f)

    return run


READERS = [
    ("sequential batches", sequential_batches, "tfrx", ""),
    ("sequential records", sequential_records, "tfrx", ""),
    ("shuffled read_batch", shuffled_read_batch, "tfrx", "global shuffle, CRC-checked"),
    ("shuffled iterator", shuffled_iterator, "tfrx", "global shuffle, CRC-checked"),
    ("tfrecord index split", tfrecord_index_split, "tfrecord", "sequential, no CRC check"),
]
INDEXERS = [
    ("tfrx build_index", tfrx_build_index, "tfrx", "length CRCs checked"),
    ("tfrecord2idx", tfrecord2idx, "tfrecord", "no CRC check"),
]


def _available(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(module) is not None


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    import tfrx

    names = [n for n in (names or WORKLOADS) if n in WORKLOADS] or list(WORKLOADS)
    results = []
    for name in names:
        path = str(workloads.ensure(name, size))
        tfrx.build_index(path)
        count = nbytes = 0
        with tfrx.RecordReader(path) as r:
            for b in r.iter_batches():
                count += len(b)
                nbytes += b.nbytes
        file_size = os.path.getsize(path)
        for contender, make, module, note in READERS:
            if not _available(module):
                log(f"  {name}: {contender} skipped ({module} not installed)")
                continue
            fn = make(path)
            fn()  # page cache, imports and indexes warm
            value, wall, cpu = measure(fn, repeat)
            if value != count:
                raise RuntimeError(f"{contender} read {value} records of {path}, expected {count}")
            r = Result(name, contender, count, nbytes, wall, cpu, note)
            log(f"  {name:<8} {contender:<24} {r.mb_per_s:>8,.0f} MB/s {r.records_per_s:>11,.0f} rec/s")
            results.append(r)
        for contender, make, module, note in INDEXERS:
            if not _available(module):
                continue
            fn = make(path)
            fn()
            value, wall, cpu = measure(fn, repeat)
            if value != count:
                raise RuntimeError(f"{contender} indexed {value} records of {path}, expected {count}")
            # Index building is measured over the whole data file (framing included).
            r = Result(f"{name} index", contender, count, file_size, wall, cpu, note)
            log(f"  {name:<8} {contender:<24} {r.mb_per_s / 1000:>8,.2f} GB/s of file")
            results.append(r)
    return results


def main(argv=None) -> int:
    from benchmarks.report import suite_main, table

    return suite_main(
        "python -m benchmarks.random_access",
        __doc__,
        run,
        argv,
        render=lambda r: table(r, baseline="sequential batches"),
    )


if __name__ == "__main__":
    sys.exit(main())
