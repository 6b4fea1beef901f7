"""Scale-out engines: reading and parsing TFRecord files through Spark, Dask and Ray, on one machine.

Contenders, all on the same shard files (``benchmarks/ray.py``'s: the
workload's records in 4 files) and each reading every column:

* ``tfrx.spark`` (Spark 4's Python data source) on ``local[1]`` and
  ``local[2]``: ``spark.read.format("tfrecord").load(files)`` written to
  Spark's ``noop`` sink, which reads every row and column without keeping
  them; the table notes Spark's tasks per file.
* ``tfrx.dask.read_tfrecord`` computed on Dask's threaded scheduler (2 threads).
* ``tfrx.ray.read_tfrecords`` and Ray's own ``ray.data.read_tfrecords``
  (TensorFlow's protobuf classes per record), materialised, on
  ``ray.init(num_cpus=2)``; Ray's own reader (about 200 records/s here) is
  timed once on the first 2,000 records only.

Rows per second is wall clock; rows per CPU-second counts the CPU time of
every process of the run (the driver and all its descendants: Spark's JVM
and Python workers, Ray's raylet and workers), taken with psutil over the
process tree, so work done outside the driver counts. Every contender runs
once to warm up (JVM, workers, imports) and is then timed ``--repeat``
times; the fastest run counts. Every contender's row count is checked.

``python -m benchmarks.engines_scaleout [--size small|full] [--repeat N] [--skip spark,dask,ray]``
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from benchmarks import workloads
from benchmarks.ray import SIZES, measure_cluster, shard_paths

WORKLOAD = "criteo"
RAY_OWN_RECORDS = 2_000


@dataclass
class Row:
    engine: str
    contender: str
    rows: int
    wall: float
    cpu: float
    note: str = ""


def _spark_session(cores: int):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(f"tfrx-bench-{cores}")
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    import tfrx.spark

    tfrx.spark.register(spark)
    return spark


def spark_rows(paths: list[str], count: int, repeat: int) -> list[Row]:
    out = []
    for cores in (1, 2):
        spark = _spark_session(cores)
        try:
            df = spark.read.format("tfrecord").load(paths)
            tasks = df.rdd.getNumPartitions()

            def read(df=df):
                df.write.format("noop").mode("overwrite").save()

            read()  # warm-up: Python workers start
            assert df.count() == count
            _, wall, cpu = measure_cluster(read, repeat)
            note = f"{tasks} tasks for {len(paths)} files"
            out.append(Row("Spark", f"tfrx.spark, local[{cores}]", count, wall, cpu, note))
            print(f"  spark local[{cores}]: {wall:.2f} s, {cpu:.2f} CPU s ({note})", flush=True)
        finally:
            spark.stop()
    return out


def spark_split_rows(path: str, count: int, repeat: int) -> list[Row]:
    """One file read as several tasks (byte ranges), on local[2]."""
    spark = _spark_session(2)
    try:
        size = os.path.getsize(path)
        df = spark.read.format("tfrecord").option("splitBytes", str(max(1, size // 4))).load(path)
        tasks = df.rdd.getNumPartitions()

        def read():
            df.write.format("noop").mode("overwrite").save()

        read()
        _, wall, cpu = measure_cluster(read, repeat)
        note = f"{tasks} tasks for 1 file"
        print(f"  spark one file: {wall:.2f} s, {cpu:.2f} CPU s ({note})", flush=True)
        return [Row("Spark", "tfrx.spark, local[2], one file split", count, wall, cpu, note)]
    finally:
        spark.stop()


def dask_rows(paths: list[str], count: int, repeat: int) -> list[Row]:
    import tfrx.dask

    def read():
        return tfrx.dask.read_tfrecord(paths).compute(scheduler="threads", num_workers=2)

    frame = read()
    assert len(frame) == count
    _, wall, cpu = measure_cluster(read, repeat)
    print(f"  dask: {wall:.2f} s, {cpu:.2f} CPU s", flush=True)
    parts = tfrx.dask.read_tfrecord(paths).npartitions
    return [Row("Dask", "tfrx.dask.read_tfrecord, 2 threads", count, wall, cpu, f"{parts} partitions")]


def _head_file(paths: list[str], count: int, size: str) -> str:
    """The first ``count`` records of the shards in one file (Ray's own reader is timed on fewer records)."""
    import tfrx

    path = str(workloads.DATA_DIR / f"scaleout-{WORKLOAD}-{size}-head{count}.tfrecord")
    if not os.path.exists(path):
        records = []
        for record in tfrx.read_records(paths):
            records.append(record)
            if len(records) == count:
                break
        with tfrx.TFRecordWriter(path + ".tmp") as w:
            w.write_many(records)
        os.replace(path + ".tmp", path)
    return path


def ray_rows(paths: list[str], count: int, repeat: int, size: str) -> list[Row]:
    import ray

    import tfrx.ray as tray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    # Ray's own reader makes a one-row table per record (about 200 records/s on criteo, see
    # docs/benchmarks-archive.md): it is timed once on the first RAY_OWN_RECORDS records, after a warm-up
    # on 100 of them, so that the run stays short; its rows/s compare per record.
    head = _head_file(paths, RAY_OWN_RECORDS, size)
    warm = _head_file(paths, 100, size)
    out = []
    try:
        for contender, fn, files, rows, runs in (
            ("tfrx.ray.read_tfrecords", tray.read_tfrecords, paths, count, repeat),
            ("ray.data.read_tfrecords", ray.data.read_tfrecords, [head], RAY_OWN_RECORDS, 1),
        ):
            warm_rows = fn(paths if files is paths else [warm]).materialize().count()  # workers start, imports
            assert warm_rows == (count if files is paths else 100)

            def read(fn=fn, files=files):
                return fn(files).materialize()

            ds, wall, cpu = measure_cluster(read, runs)
            assert ds.count() == rows
            note = "" if files is paths else f"first {rows:,} records, one file"
            out.append(Row("Ray", contender + ", 2 CPUs", rows, wall, cpu, note))
            print(f"  ray {contender}: {wall:.2f} s, {cpu:.2f} CPU s", flush=True)
    finally:
        ray.shutdown()
    return out


def one_file(paths: list[str], size: str) -> str:
    """The shards' records in one file (for the split read)."""
    import tfrx

    path = str(workloads.DATA_DIR / f"scaleout-{WORKLOAD}-{size}.tfrecord")
    if not os.path.exists(path):
        with tfrx.TFRecordWriter(path + ".tmp") as w:
            w.write_many(list(tfrx.read_records(paths)))
        os.replace(path + ".tmp", path)
    return path


def render(rows: list[Row]) -> str:
    head = "| engine | contender | rows | wall s | rows/s | CPU s (all processes) | rows/CPU-s | note |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(
            f"| {r.engine} | {r.contender} | {r.rows:,} | {r.wall:.2f} | {r.rows / r.wall:,.0f} | {r.cpu:.2f} | "
            f"{r.rows / r.cpu:,.0f} | {r.note} |"
        )
    return "\n".join(lines)


ENGINES = ("spark", "dask", "ray")


def run(size: str, engines=None, repeat: int = 2) -> list[Row]:
    """The rows of the table for ``engines`` (default all; a suite of ``python -m benchmarks`` can call this
    and print :func:`render` of the result)."""
    engines = list(ENGINES) if engines is None else [e for e in engines if e in ENGINES]
    paths = shard_paths(WORKLOAD, size)
    count = SIZES[size][WORKLOAD]
    rows: list[Row] = []
    if "spark" in engines:
        rows += spark_rows(paths, count, repeat)
        rows += spark_split_rows(one_file(paths, size), count, repeat)
    if "dask" in engines:
        rows += dask_rows(paths, count, repeat)
    if "ray" in engines:
        rows += ray_rows(paths, count, repeat, size)
    return rows


def main(argv=None) -> int:
    import argparse

    from benchmarks.report import header

    p = argparse.ArgumentParser(prog="python -m benchmarks.engines_scaleout", description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=["small", "full"], default="small")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--skip", default="", help="comma-separated engines to leave out: spark, dask, ray")
    args = p.parse_args(argv)
    skip = {s.strip().lower() for s in args.skip.split(",") if s.strip()}
    paths = shard_paths(WORKLOAD, args.size)
    count = SIZES[args.size][WORKLOAD]
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for dist in ("pyspark", "dask", "ray", "pyarrow"):
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            found.append(f"{dist} absent")
    print(header(args.size, f", workload {WORKLOAD} ({count:,} Examples in {len(paths)} files)"))
    print("# " + ", ".join(found))
    t0 = time.perf_counter()
    rows = run(args.size, [e for e in ENGINES if e not in skip], args.repeat)
    print()
    print(render(rows))
    print(f"\n# whole run: {time.perf_counter() - t0:.0f} s, load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
