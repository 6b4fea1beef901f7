"""Ray Data: tfrx.ray against Ray's own TFRecord datasource and datasink on the same files.

Reading: ``tfrx.ray.read_tfrecords`` (native framing + parser, Arrow blocks,
schema inferred) against ``ray.data.read_tfrecords`` (a ``tf.train.Example``
parsed per record with TensorFlow's protobuf classes), both materialised in
Ray's object store. Writing: ``tfrx.ray.write_tfrecords`` against
``Dataset.write_tfrecords`` of the same materialised dataset.

Both contenders run on one local Ray instance (``ray.init(num_cpus=...)``)
after a warm-up run (workers started, TensorFlow imported in them). CPU
seconds are those of the driver and every process it started (raylet, GCS,
workers), taken with psutil, so work done in Ray workers counts. The suite
checks that both readers return the same values and that both writers'
files hold the same Examples. Needs ``ray[data]``, TensorFlow (Ray's reader
and writer import it) and ``crc32c`` (Ray's writer).
"""

from __future__ import annotations

import os
import shutil
import time

import numpy as np

from benchmarks import workloads
from benchmarks.report import Result

SIZES = {"small": {"criteo": 40_000, "bert": 2_000}, "full": {"criteo": 150_000, "bert": 20_000}}
SHARDS = 4


# ------------------------------------------------------------------ inputs
def shard_paths(name: str, size: str) -> list[str]:
    """The workload's records, cycled to the suite's count, as SHARDS files (written once)."""
    import tfrx

    folder = workloads.DATA_DIR / f"ray-{name}-{size}"
    paths = [str(folder / f"part-{k:05d}.tfrecords") for k in range(SHARDS)]
    if all(os.path.exists(p) for p in paths):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    base = workloads.make_records(name, "small")
    count = SIZES[size][name]
    records = [base[i % len(base)] for i in range(count)]
    for k, path in enumerate(paths):
        with tfrx.TFRecordWriter(path + ".tmp") as w:
            w.write_many(records[k * count // SHARDS : (k + 1) * count // SHARDS])
        os.replace(path + ".tmp", path)
    return paths


# ------------------------------------------------------------------ measuring
def _cpu_times() -> dict[int, float]:
    import psutil

    me = psutil.Process()
    out = {}
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            out[p.pid] = t.user + t.system
        except psutil.Error:
            continue
    return out


def measure_cluster(fn, repeat: int):
    """(value, wall, cpu) of the fastest of ``repeat`` calls; cpu counts every process of the local cluster."""
    best = None
    for _ in range(repeat):
        before = _cpu_times()
        t0 = time.perf_counter()
        value = fn()
        wall = time.perf_counter() - t0
        after = _cpu_times()
        cpu = sum(t - before.get(pid, 0.0) for pid, t in after.items())
        if best is None or wall < best[1]:
            best = (value, wall, cpu)
    return best


def _columns(blocks) -> dict:
    """Column name -> Python values, over blocks whose column order may differ (Ray's reader's do)."""
    out: dict = {}
    for block in blocks:
        for name, values in block.to_pydict().items():
            out.setdefault(name, []).extend(values)
    return out


def _blocks(ds):
    import ray

    return ray.get(ds.to_arrow_refs())


def _examples(paths) -> list:
    """The Examples of the files, as sorted (feature, values) tuples, sorted: file names and order differ."""
    import tfrx

    out = []
    for record in tfrx.read_records(sorted(paths)):
        d = tfrx.decode_example(record)
        out.append(
            tuple(
                sorted(
                    (k, tuple(np.asarray(v).tolist()) if not isinstance(v, list) else tuple(v)) for k, v in d.items()
                )
            )
        )
    return sorted(out)


# ------------------------------------------------------------------ the suite
def run(size: str, names: list[str], repeat: int) -> list[Result]:
    import ray

    import tfrx.ray as tray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    cpus = min(os.cpu_count() or 1, 2)
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.execution_options.preserve_order = True
    results = []
    try:
        for name in [n for n in names if n in SIZES[size]]:
            paths = shard_paths(name, size)
            count = SIZES[size][name]
            nbytes = sum(os.path.getsize(p) for p in paths) - 16 * count

            def read_tfrx():
                return tray.read_tfrecords(paths).materialize()

            def read_ray():
                return ray.data.read_tfrecords(paths).materialize()

            ours_ds, theirs_ds = read_tfrx(), read_ray()  # warm-up: workers start, TensorFlow loads
            ours, theirs = _columns(_blocks(ours_ds)), _columns(_blocks(theirs_ds))
            same_read = sorted(ours) == sorted(theirs) and all(ours[k] == theirs[k] for k in ours)
            note = "values equal" if same_read else "VALUES DIFFER"
            for contender, fn in (("tfrx.ray.read_tfrecords", read_tfrx), ("ray.data.read_tfrecords", read_ray)):
                ds, wall, cpu = measure_cluster(fn, repeat)
                assert ds.count() == count
                results.append(Result(f"{name} read", contender, count, nbytes, wall, cpu, note))
                print(f"  {name} read {contender}: {wall:.2f} s, {cpu:.2f} CPU s", flush=True)

            out = workloads.DATA_DIR / "ray-out"
            written = {}

            def write_tfrx():
                shutil.rmtree(out / "tfrx", ignore_errors=True)
                written["tfrx"] = tray.write_tfrecords(ours_ds, out / "tfrx" / name, compression=None)
                return len(written["tfrx"])

            def write_ray():
                shutil.rmtree(out / "ray", ignore_errors=True)
                ours_ds.write_tfrecords(str(out / "ray"))
                written["ray"] = [str(p) for p in (out / "ray").iterdir() if not p.name.startswith(".")]
                return len(written["ray"])

            write_tfrx(), write_ray()
            same_write = _examples(written["tfrx"]) == _examples(written["ray"])
            note = "Examples equal" if same_write else "EXAMPLES DIFFER"
            for contender, fn in (("tfrx.ray.write_tfrecords", write_tfrx), ("Dataset.write_tfrecords", write_ray)):
                _, wall, cpu = measure_cluster(fn, repeat)
                results.append(Result(f"{name} write", contender, count, nbytes, wall, cpu, note))
                print(f"  {name} write {contender}: {wall:.2f} s, {cpu:.2f} CPU s", flush=True)
            if not (same_read and same_write):
                raise AssertionError(
                    f"{name}: tfrx.ray and Ray's own TFRecord I/O disagree (read {same_read}, write {same_write})"
                )
    finally:
        ray.shutdown()
    return results
