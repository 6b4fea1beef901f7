"""Query engines on TFRecord files: a query reading 2 of 40 features, pushed into the scan, against the alternatives.

The workload is Criteo-like click logs (benchmarks/workloads.py: a label, 13
int64 counters, 26 short categorical strings: 40 features) in four files.

* ``polars``: ``scan_tfrecord(...).select(2 columns).filter(...).collect()``
  (projection and predicate pushed into the scan: 2 features parsed, the
  second for the kept rows only) against a full parse of all 40 features
  then the same select and filter in Polars, against converting the files
  to Parquet first and scanning that with Polars (conversion included), and
  against scanning Parquet converted beforehand (conversion not counted).
* ``duckdb``: a ``GROUP BY`` aggregate over ``tfrecord('<glob>')`` against
  the same aggregate over ``read_parquet('<glob>')`` of the converted files
  (conversion not counted).

Every contender runs in a fresh interpreter and is timed with
report.measure (the fastest of ``--repeat`` samples); records are the rows
scanned (every record of the files), so records per CPU-second compare the
cost of the whole query. ``tfrx x (CPU)``: how many times the first row of
each workload (the pushed-down scan) is cheaper per CPU-second.
``python -m benchmarks engines`` or ``python -m benchmarks.engines``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from benchmarks import workloads
from benchmarks.report import Result, measure, worker_result, worker_suite_main

SIZES = {"small": 100_000, "full": 2_000_000}
FILES = 4


def _spec():
    import tfrx

    spec = {"label": tfrx.FixedLenFeature([], tfrx.int64)}
    spec.update({f"I{i}": tfrx.FixedLenFeature([], tfrx.int64) for i in range(1, 14)})
    spec.update({f"C{i}": tfrx.FixedLenFeature([], tfrx.string) for i in range(1, 27)})
    return spec


def data(size: str) -> tuple[str, str, int, int]:
    """The TFRecord files and their Parquet copies (written once); returns both globs, records and bytes."""
    import pyarrow.parquet as pq

    import tfrx

    root = workloads.DATA_DIR / f"engines-{size}"
    marker = root / ".complete"
    n = SIZES[size]
    if not marker.exists():
        root.mkdir(parents=True, exist_ok=True)
        records = workloads.make_records("criteo", "small")  # 5000 records, 10000-record pool: repeat them
        per_file = n // FILES
        for k in range(FILES):
            path = root / f"part-{k}.tfrecord"
            with tfrx.TFRecordWriter(path) as w:
                for start in range(0, per_file, len(records)):
                    w.write_many(records[: min(len(records), per_file - start)])
            pq.write_table(tfrx.read_tfrecord(str(path), _spec()), root / f"part-{k}.parquet")
        marker.write_text("")
    nbytes = sum((root / f"part-{k}.tfrecord").stat().st_size for k in range(FILES))
    return str(root / "part-*.tfrecord"), str(root / "part-*.parquet"), n, nbytes


# ------------------------------------------------------------------ contenders (in a worker)
def polars_pushdown(tfrecords: str, _parquet: str, _tmp: str):
    import polars as pl

    from tfrx.integrations import polars as tp

    frame = tp.scan_tfrecord(tfrecords, spec=_spec())
    return frame.select("I1", "C1").filter(pl.col("I1") > 50).collect().height


def polars_full_parse(tfrecords: str, _parquet: str, _tmp: str):
    import polars as pl

    from tfrx.integrations import polars as tp

    frame = tp.read_tfrecord(tfrecords, spec=_spec())  # all 40 features
    return frame.select("I1", "C1").filter(pl.col("I1") > 50).height


def polars_convert_then_parquet(tfrecords: str, _parquet: str, tmp: str):
    import glob

    import polars as pl
    import pyarrow.parquet as pq

    import tfrx

    os.makedirs(tmp, exist_ok=True)
    for k, path in enumerate(sorted(glob.glob(tfrecords))):
        pq.write_table(tfrx.read_tfrecord(path, _spec()), os.path.join(tmp, f"part-{k}.parquet"))
    frame = pl.scan_parquet(os.path.join(tmp, "part-*.parquet"))
    return frame.select("I1", "C1").filter(pl.col("I1") > 50).collect().height


def polars_parquet(_tfrecords: str, parquet: str, _tmp: str):
    import polars as pl

    return pl.scan_parquet(parquet).select("I1", "C1").filter(pl.col("I1") > 50).collect().height


AGGREGATE = "SELECT label, count(*) AS n, avg(I1) AS i1 FROM {} WHERE I2 > 3 GROUP BY label ORDER BY label"


def duckdb_tfrecord(tfrecords: str, _parquet: str, _tmp: str):
    import duckdb

    from tfrx.integrations import duckdb as td

    con = duckdb.connect()
    td.register(con, tfrecords, spec=_spec())
    return len(con.sql(AGGREGATE.format(f"tfrecord('{tfrecords}')")).fetchall())


def duckdb_parquet(_tfrecords: str, parquet: str, _tmp: str):
    import duckdb

    con = duckdb.connect()
    return len(con.sql(AGGREGATE.format(f"read_parquet('{parquet}')")).fetchall())


CONTENDERS: dict[str, list[tuple[str, Callable[[str, str, str], int]]]] = {
    "polars": [
        ("tfrx scan_tfrecord: 2 of 40 features, filter pushed", polars_pushdown),
        ("tfrx read_tfrecord: all 40, then select + filter", polars_full_parse),
        ("convert to Parquet, then pl.scan_parquet", polars_convert_then_parquet),
        ("pl.scan_parquet (converted beforehand)", polars_parquet),
    ],
    "duckdb": [
        ("tfrx tfrecord('glob') aggregate", duckdb_tfrecord),
        ("read_parquet('glob') aggregate (converted)", duckdb_parquet),
    ],
}


def _worker(workload: str, index: str, size: str, repeat: str) -> None:
    import json
    import shutil

    tfrecords, parquet, _, _ = data(size)
    name, fn = CONTENDERS[workload][int(index)]
    tmp = str(workloads.DATA_DIR / f"engines-{size}-convert")
    fn(tfrecords, parquet, tmp)  # imports and page cache warm, for every contender
    value, wall, cpu = measure(lambda: fn(tfrecords, parquet, tmp), int(repeat))
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"value": value, "wall": wall, "cpu": cpu}))


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    from importlib.util import find_spec

    _, _, n, nbytes = data(size)
    results = []
    for workload, contenders in CONTENDERS.items():
        if find_spec(workload) is None:
            log(f"  {workload}: skipped ({workload} not installed: pip install 'tfrx[{workload}]')")
            continue
        for index, (name, _fn) in enumerate(contenders):
            rows, wall, cpu = worker_result("benchmarks.engines", workload, str(index), size, str(repeat))
            r = Result(workload, name, n, nbytes, wall, cpu, f"{rows} rows out")
            log(f"  {workload:<7} {name:<52} {r.records_per_s:>12,.0f} rec/s  {r.records_per_cpu_s:>12,.0f} rec/CPU-s")
            results.append(r)
    return results


def main(argv=None) -> int:
    return worker_suite_main("python -m benchmarks.engines", __doc__, run, _worker, argv)


if __name__ == "__main__":
    sys.exit(main())
