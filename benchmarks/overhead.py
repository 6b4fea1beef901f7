"""The documented pipeline against the bare reader + parser, and the shuffle buffer's memory.

Speed: per workload (``benchmarks/workloads.py``, the pipeline benchmark's
files), records per CPU-second of

* **bare**: ``RecordReader(path).iter_batches(256)`` + ``ExampleParser(spec).parse(batch)``
  (``SequenceExampleParser`` for ``sequence``): no pipeline at all;
* **batch.parse**: ``TFRecordDataset(path).batch(256).parse(spec)``, the documented pipeline;
* **+prefetch**: the same ``.prefetch(2)``;
* **+shuffle**: ``TFRecordDataset(path).shuffle(10000, seed=0).batch(256).parse(spec)``;
* **README example**: ``TFRecordDataset(path).shuffle(10_000, seed=0).batch(256).parse(spec).prefetch(2)``,
  the README's first example as it writes it (iterated in-process: the DataLoader around it is not
  part of the pipeline);
* **parallel reads**: ``TFRecordDataset(shards, num_parallel_reads=2).batch(256).parse(spec)`` over
  the same records split into two files (and **bare** over both files for its ratio);
* **interleave**: ``Dataset.from_tensor_slices(shards).interleave(TFRecordDataset, cycle_length=2,
  num_parallel_calls=2).batch(256).parse(spec)`` over the same two files (ratio to **bare, 2 files**);
* **shard(4, i)**: ``TFRecordDataset(path).shard(4, i).batch(256).parse(spec)`` for ``i`` in 0..3,
  one after another, each as one of four ranks (or DataLoader workers outnumbering the files) reads
  its shard: per record read by a rank, so 1.00 means each rank pays for its own records only.

Each contender runs in its own interpreter, in alternating rounds; a round's
figure is the median of its samples, and the ratio to **bare** is given per
round, then summarised as the median and range over the rounds (the table at
the end; ``--repeat`` sets the rounds).

Memory: peak resident memory added by one pass of
``shuffle(m, seed=0).batch(256).parse(spec)`` (tfrx) and of
``shuffle(m).batch(256).map(parse_example)`` (tf.data) for each ``m`` in
``MEMORY_BUFFERS``, measured in a fresh interpreter as the peak resident size
during the pass (``VmHWM``, reset before it) minus the resident size before
it, beside the bytes of the records a full shuffle buffer holds: what does
not grow with ``m`` is fixed overhead.

Run: ``python -m benchmarks overhead [--size small|full] [--repeat 5] [--workloads image,bert]``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

from benchmarks import pipeline
from benchmarks.report import Result, measure, proc_status_bytes, run_worker, worker_suite_main

BATCH = 256
SHUFFLE = 10_000
WORKLOADS = ["image", "bert", "criteo", "sequence"]
SPEED = [
    "bare",
    "batch.parse",
    "+prefetch",
    "+shuffle",
    "README example",
    "bare, 2 files",
    "parallel reads",
    "interleave",
    "shard(4, i)",
]
# The contenders over the two-file split, whose ratio is to "bare, 2 files".
TWO_FILES = ("parallel reads", "interleave")
MEMORY = ["tfrx shuffle", "tf.data shuffle"]
MEMORY_BUFFERS = (2000, SHUFFLE)


def _shards(name: str, size: str) -> list[str]:
    """The workload's records split into two files (written once, beside the pipeline file)."""
    import tfrx

    path = pipeline.ensure(name, size)
    out = [path.with_name(f"{path.stem}-{i}-of-2.tfrecord") for i in range(2)]
    if not all(p.exists() for p in out):
        records = list(tfrx.read_records(str(path)))
        half = len(records) // 2
        for p, part in zip(out, (records[:half], records[half:])):
            tmp = p.with_name(p.name + ".tmp")
            with tfrx.TFRecordWriter(str(tmp)) as w:
                w.write_many(part)
            tmp.replace(p)
    return [str(p) for p in out]


def _contender(contender: str, name: str, size: str):
    import tfrx

    parser = pipeline._tfrx_parser(name)
    if isinstance(parser, dict):
        parser = tfrx.ExampleParser(parser)
    path = str(pipeline.ensure(name, size))
    if contender.startswith("bare"):
        paths = _shards(name, size) if contender.endswith("2 files") else path

        def run():
            n = 0
            with tfrx.RecordReader(paths) as r:
                for batch in r.iter_batches(BATCH):
                    out = parser.parse(batch)
                    n += pipeline._count(out)
            return n

        return run
    if contender == "shard(4, i)":
        parts = [tfrx.TFRecordDataset(path).shard(4, i).batch(BATCH).parse(parser) for i in range(4)]

        def run_shards():
            return sum(pipeline._count(out) for ds in parts for out in ds)

        return run_shards
    if contender == "parallel reads":
        ds = tfrx.TFRecordDataset(_shards(name, size), num_parallel_reads=2).batch(BATCH).parse(parser)
    elif contender == "interleave":
        files = tfrx.data.Dataset.from_tensor_slices(_shards(name, size))
        ds = files.interleave(tfrx.TFRecordDataset, cycle_length=2, num_parallel_calls=2).batch(BATCH).parse(parser)
    elif contender == "README example":
        ds = tfrx.TFRecordDataset(path).shuffle(SHUFFLE, seed=0).batch(BATCH).parse(parser).prefetch(2)
    elif contender == "+shuffle":
        ds = tfrx.TFRecordDataset(path).shuffle(SHUFFLE, seed=0).batch(BATCH).parse(parser)
    else:
        ds = tfrx.TFRecordDataset(path).batch(BATCH).parse(parser)
        if contender == "+prefetch":
            ds = ds.prefetch(2)

    def run():
        n = 0
        for out in ds:
            n += pipeline._count(out)
        return n

    return run


def _memory(contender: str, name: str, size: str, buffer: int = SHUFFLE) -> dict:
    """Resident memory before a pass and the peak during it (bytes)."""
    import resource

    path = str(pipeline.ensure(name, size))
    if contender == "tf.data shuffle":
        import tensorflow as tf

        tf.config.set_visible_devices([], "GPU")
        from benchmarks.parse import SPECS, _tf_specs

        if name == "sequence":
            context, sequence = SPECS["sequence"]
            cspec, sspec = _tf_specs(tf, context), _tf_specs(tf, sequence)
            fn = lambda r: tf.io.parse_sequence_example(r, cspec, sspec)  # noqa: E731
        else:
            spec = _tf_specs(tf, SPECS[name])
            fn = lambda r: tf.io.parse_example(r, spec)  # noqa: E731
        ds = tf.data.TFRecordDataset(path).shuffle(buffer, seed=0).batch(BATCH).map(fn)
        iterate = lambda: sum(1 for _ in ds)  # noqa: E731
    else:
        import tfrx

        parser = pipeline._tfrx_parser(name)
        ds = tfrx.TFRecordDataset(path).shuffle(buffer, seed=0).batch(BATCH).parse(parser)
        iterate = lambda: sum(1 for _ in ds)  # noqa: E731
    before = proc_status_bytes("VmRSS")
    try:  # resets the process's peak (VmHWM) to what is resident now (Linux 4.0+)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    iterate()
    # Not ru_maxrss: Linux carries a parent's high-water mark into a child started with
    # fork/vfork + exec, so a driver that had grown once inflated every later figure.
    peak = proc_status_bytes("VmHWM")
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"before": before, "peak": peak}


def worker(kind: str, contender: str, name: str, size: str, repeat: str) -> None:
    if kind == "memory":
        print(json.dumps(_memory(contender, name, size, int(repeat))))
        return
    fn = _contender(contender, name, size)
    fn()
    samples = [measure(fn, 1) for _ in range(int(repeat))]
    value = samples[0][0]
    cpu = statistics.median(c for _, _, c in samples)
    wall = statistics.median(w for _, w, _ in samples)
    print(json.dumps({"value": value, "wall": wall, "cpu": cpu}))


def buffered_bytes(name: str, size: str, buffer: int = SHUFFLE) -> int:
    """Payload bytes of the records a full shuffle buffer holds (the whole file when it is smaller)."""
    import tfrx

    count = pipeline.COUNTS[size][name]
    with tfrx.RecordReader(str(pipeline.ensure(name, size))) as r:
        total = sum(b.nbytes for b in r.iter_batches())
    return total * min(buffer, count) // count


def ratio_table(ratios: dict[str, dict[str, list[float]]]) -> str:
    """Per workload, each contender's rate over its bare path per CPU-second: median (range) over the rounds."""
    columns = [c for c in SPEED if not c.startswith("bare")]
    rows = ["| workload | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for name, per in ratios.items():
        cells = []
        for c in columns:
            r = per.get(c) or [float("nan")]
            cells.append(f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    from importlib.util import find_spec

    names = [n for n in (names or WORKLOADS) if n in WORKLOADS]
    results = []
    summary: dict[str, dict[str, list[float]]] = {}
    for name in names:
        path = pipeline.ensure(name, size)
        _shards(name, size)
        count = pipeline.COUNTS[size][name]
        nbytes = os.path.getsize(path)
        rounds: dict[str, list[tuple[float, float]]] = {c: [] for c in SPEED}
        for k in range(max(1, repeat)):
            for contender in SPEED if k % 2 == 0 else SPEED[::-1]:
                out = run_worker("benchmarks.overhead", "speed", contender, name, size, "3")
                if out["value"] != count:
                    raise RuntimeError(f"{contender} parsed {out['value']} records of {path}, expected {count}")
                rounds[contender].append((out["wall"], out["cpu"]))
                log(f"  {name:<9} {contender:<15} round {k + 1}: {count / out['cpu']:>10,.0f} rec/CPU-s")
        for contender in SPEED:
            ordered = sorted(rounds[contender], key=lambda wc: wc[1])
            wall, cpu = ordered[len(ordered) // 2]  # the median round
            results.append(Result(name, contender, count, nbytes, wall, cpu))
        summary[name] = {}
        for contender in SPEED:
            if contender.startswith("bare"):
                continue
            base = rounds["bare, 2 files" if contender in TWO_FILES else "bare"]
            ratios = [b[1] / c[1] for b, c in zip(base, rounds[contender])]
            summary[name][contender] = ratios
            log(
                f"  {name:<9} {contender:<15} / bare per CPU-second: median {statistics.median(ratios):.2f}, "
                f"range {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} rounds"
            )
        for buffer in MEMORY_BUFFERS:
            held = buffered_bytes(name, size, buffer)
            for contender in MEMORY:
                if contender.startswith("tf.data") and find_spec("tensorflow") is None:
                    continue
                out = run_worker("benchmarks.overhead", "memory", contender, name, size, str(buffer))
                added = out["peak"] - out["before"]
                log(
                    f"  {name:<9} {contender:<15} shuffle({buffer}): peak memory added by a pass: "
                    f"{added / 2**20:,.0f} MiB ({added / held:.2f}x the {held / 2**20:,.0f} MiB of records "
                    "in a full buffer)"
                )
    log("\nRate over the bare path per CPU-second, median (range) over the rounds:\n")
    log(ratio_table(summary))
    return results


def main(argv=None) -> int:
    return worker_suite_main("python -m benchmarks.overhead", __doc__, run, worker, argv, workloads=WORKLOADS)


if __name__ == "__main__":
    sys.exit(main())
