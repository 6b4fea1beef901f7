"""End to end into torch tensors: read + parse + shuffle(10000) + batch(256) + prefetch.

Contenders, on the same files, each in its own interpreter (TensorFlow and
the ``tfrecord`` package cannot be imported together, and no contender's
threads may reach another's CPU-time measurement):

* **tfrx**: ``TFRecordDataset(path).shuffle(10000, seed=0).batch(256)
  .parse(spec).prefetch(2)`` through ``DataLoader(ds.to_torch(),
  batch_size=None)``: torch tensors sharing the parser's arrays.
* **tf.data**: ``TFRecordDataset(path).shuffle(10000).batch(256)
  .map(tf.io.parse_example, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)``
  (``parse_sequence_example`` for SequenceExamples), every batch converted
  with ``.numpy()`` (sparse values as their indices, values and shape). Not
  into torch: TensorFlow and torch crash when loaded into one process, and
  ``torch.from_numpy`` on those arrays costs about a microsecond a tensor.
* **tfrecord**: the PyPI package's ``tfrecord.torch.dataset.TFRecordDataset``
  (``shuffle_queue_size=10000``) in a ``DataLoader(batch_size=256)`` whose
  collate stacks equal-shaped features into tensors and leaves the rest as
  lists (its default collate fails on variable-length values). It never
  checks CRCs.

The four workloads of ``benchmarks/workloads.py`` (bert, criteo, sequence,
image: the image workload's ~85 KB payloads are random bytes, parsed, not
decoded), with more records than their ``small`` files so that a pass is
longer than the pipeline's start-up. A fifth, **jpeg**, holds real JPEGs
(500x375, quality 90, ~85 KB, ``benchmarks.image.make_jpegs``) and the
pipelines decode them and resize to 224x224 (bilinear, no antialiasing,
float32) with the same settings in both libraries: tfrx batches, parses and
runs ``tfrx.image.decode_batch`` on the usable cores; tf.data maps
``parse_single_example`` + ``decode_jpeg(channels=3)`` + ``resize`` with
``num_parallel_calls=AUTOTUNE`` and then batches. JPEG batches are 64 images
(a batch of 256 would be 154 MB of float32).

Run: ``python -m benchmarks pipeline [--size small|full] [--workloads bert,jpeg]``
(or ``python -m benchmarks.pipeline``). The per-CPU-second columns are the
ones to compare on a shared machine.
"""

from __future__ import annotations

import json
import os
import sys

from benchmarks import workloads
from benchmarks.parse import SPECS, _tf_specs, _tfrx_specs
from benchmarks.report import Result, measure, run_worker, worker_suite_main

BATCH = 256
JPEG_BATCH = 64
SHUFFLE = 10_000
SIZE = (224, 224)

#: Records per file: more than the read benchmark's ``small`` files so that one pass outlasts start-up.
COUNTS = {
    "small": {"bert": 4096, "criteo": 40_000, "sequence": 8192, "image": 768, "jpeg": 256},
    "full": {"bert": 20_000, "criteo": 150_000, "sequence": 20_000, "image": 1500, "jpeg": 1024},
}
WORKLOADS = ["bert", "criteo", "sequence", "image", "jpeg"]
CONTENDERS = [
    ("tfrx", "tfrx", ""),
    ("tf.data", "tensorflow", ""),
    ("tfrecord + DataLoader", "tfrecord", "no CRC check"),
]
TFRECORD_KINDS = {"int64": "int", "float32": "float", "string": "byte"}


# ------------------------------------------------------------------ files
def path_for(name: str, size: str):
    return workloads.DATA_DIR / f"pipeline-{name}-{COUNTS[size][name]}.tfrecord"


def ensure(name: str, size: str):
    """Writes the workload's file unless it is there; returns its path."""
    import tfrx

    path = path_for(name, size)
    if path.exists():
        return path
    workloads.DATA_DIR.mkdir(parents=True, exist_ok=True)
    count = COUNTS[size][name]
    if name == "jpeg":
        import numpy as np

        from benchmarks.image import make_jpegs

        distinct = make_jpegs(min(count, 256))
        jpegs = [distinct[i % len(distinct)] for i in range(count)]
        records = tfrx.encode_examples({"image/encoded": jpegs, "image/class/label": np.arange(count) % 1000})
    else:
        small = workloads.WORKLOADS[name].records["small"]
        records = workloads.make_records(name, "small" if count <= small else "full")
        records = [records[i % len(records)] for i in range(count)]
    tmp = path.with_name(path.name + ".tmp")
    with tfrx.TFRecordWriter(tmp) as w:
        w.write_many(records)
    tmp.replace(path)
    return path


# ------------------------------------------------------------------ contenders (run inside a worker)
def _tfrx_parser(name: str):
    import tfrx

    if name == "sequence":
        context, sequence = SPECS["sequence"]
        return tfrx.SequenceExampleParser(_tfrx_specs(context), _tfrx_specs(sequence))
    if name == "jpeg":
        return {
            "image/encoded": tfrx.FixedLenFeature([], tfrx.string),
            "image/class/label": tfrx.FixedLenFeature([], tfrx.int64),
        }
    return _tfrx_specs(SPECS[name])


def _count(batch) -> int:
    """Rows in a batch: the leading dimension of its first dense leaf."""
    while isinstance(batch, (tuple, list)):
        batch = batch[0]
    if isinstance(batch, dict):
        return _count(next(iter(batch.values())))
    return int(batch.shape[0])


def tfrx_pipeline(name: str, path):
    import torch

    import tfrx
    import tfrx.image

    parser = _tfrx_parser(name)
    if name == "jpeg":
        threads = tfrx.data.usable_cores()

        def decode(batch):
            images = tfrx.image.decode_batch(batch["image/encoded"], channels=3, size=SIZE, num_parallel_calls=threads)
            return images, batch["image/class/label"]

        ds = (
            tfrx.TFRecordDataset(str(path))
            .shuffle(SHUFFLE, seed=0)
            .batch(JPEG_BATCH)
            .parse(parser)
            .map(decode)
            .prefetch(2)
        )
    else:
        ds = tfrx.TFRecordDataset(str(path)).shuffle(SHUFFLE, seed=0).batch(BATCH).parse(parser).prefetch(2)
    loader = torch.utils.data.DataLoader(ds.to_torch(), batch_size=None)

    def to_torch(x):
        return x.to_torch() if hasattr(x, "to_torch") and not isinstance(x, torch.Tensor) else x

    def run():
        n = 0
        for batch in loader:
            if isinstance(batch, tuple) and isinstance(batch[0], dict):  # SequenceExample: sparse feature lists
                batch = tuple({k: to_torch(v) for k, v in part.items()} for part in batch)
            n += _count(batch)
        return n

    return run


def tf_pipeline(name: str, path):
    # NumPy, not torch: TensorFlow and torch crash in one process. torch.from_numpy on
    # these arrays would add about a microsecond a tensor (no copy).
    import tensorflow as tf

    tf.config.set_visible_devices([], "GPU")

    def convert(value):
        if isinstance(value, tf.SparseTensor):
            return value.indices.numpy(), value.values.numpy(), value.dense_shape.numpy()
        return value.numpy()

    ds = tf.data.TFRecordDataset(str(path)).shuffle(SHUFFLE)
    if name == "jpeg":
        spec = {
            "image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/class/label": tf.io.FixedLenFeature([], tf.int64),
        }

        def prep(record):
            x = tf.io.parse_single_example(record, spec)
            image = tf.image.resize(tf.io.decode_jpeg(x["image/encoded"], channels=3), SIZE)
            return image, x["image/class/label"]

        ds = ds.map(prep, num_parallel_calls=tf.data.AUTOTUNE).batch(JPEG_BATCH)
    elif name == "sequence":
        context, sequence = SPECS["sequence"]
        cspec, sspec = _tf_specs(tf, context), _tf_specs(tf, sequence)
        ds = ds.batch(BATCH).map(
            lambda r: tf.io.parse_sequence_example(r, cspec, sspec), num_parallel_calls=tf.data.AUTOTUNE
        )
    else:
        spec = _tf_specs(tf, SPECS[name])
        ds = ds.batch(BATCH).map(lambda r: tf.io.parse_example(r, spec), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.prefetch(tf.data.AUTOTUNE)

    def run():
        n = 0
        for batch in ds:
            batch = tf.nest.map_structure(convert, batch)
            n += _count(batch)
        return n

    return run


def _collate(rows):
    """Stacks each feature into a tensor when its values have one shape; otherwise keeps the list."""
    import numpy as np
    import torch

    def combine(values):
        first = values[0]
        if isinstance(first, np.ndarray) and all(isinstance(v, np.ndarray) and v.shape == first.shape for v in values):
            return torch.from_numpy(np.stack(values))
        return values

    if isinstance(rows[0], tuple):  # SequenceExample: (context, feature lists)
        return tuple({k: combine([r[i][k] for r in rows]) for k in rows[0][i]} for i in range(len(rows[0])))
    return {k: combine([r[k] for r in rows]) for k in rows[0]}


def tfrecord_pipeline(name: str, path):
    import torch
    from tfrecord.torch.dataset import TFRecordDataset

    if name == "sequence":
        context, sequence = SPECS["sequence"]
        kinds = {k: TFRECORD_KINDS[v[1]] for k, v in context.items()}
        seq_kinds = {k: TFRECORD_KINDS[v[1]] for k, v in sequence.items()}
        ds = TFRecordDataset(str(path), None, kinds, shuffle_queue_size=SHUFFLE, sequence_description=seq_kinds)
    else:
        kinds = {k: TFRECORD_KINDS[v[1]] for k, v in SPECS[name].items()}
        ds = TFRecordDataset(str(path), None, kinds, shuffle_queue_size=SHUFFLE)
    loader = torch.utils.data.DataLoader(ds, batch_size=BATCH, collate_fn=_collate)

    def run():
        n = 0
        for batch in loader:
            first = batch[0] if isinstance(batch, tuple) else batch
            leaf = next(iter(first.values()))
            n += len(leaf)
        return n

    return run


MAKERS = {"tfrx": tfrx_pipeline, "tf.data": tf_pipeline, "tfrecord + DataLoader": tfrecord_pipeline}


def worker(contender: str, name: str, size: str, repeat: str) -> None:
    fn = MAKERS[contender](name, path_for(name, size))
    fn()  # imports, page cache and thread pools warm
    value, wall, cpu = measure(fn, int(repeat))
    print(json.dumps({"value": value, "wall": wall, "cpu": cpu}))


# ------------------------------------------------------------------ runner
def _available(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(module) is not None


def _in_subprocess(contender: str, name: str, size: str, repeat: int):
    out = run_worker("benchmarks.pipeline", contender, name, size, repeat)
    return out["value"], out["wall"], out["cpu"]


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    """Runs every contender ``repeat`` times per workload, in rounds.

    Each round starts every contender once, in a fresh interpreter, in
    alternating order, so that a slow spell of a shared machine falls on all
    of them; within a round a contender takes the faster of two samples of
    at least 0.3 s (the first after a warm-up pass can still be slow), and
    its figure is its fastest round by CPU time. The CPU
    ratio of tfrx to each other contender is also printed per round (the
    spread of those ratios is how far the table's ratio can be trusted).
    """
    import statistics

    names = [n for n in (names or WORKLOADS) if n in WORKLOADS]
    if "image" in names and "jpeg" not in names:
        names.append("jpeg")  # the image workload's JPEG-decode pipeline (python -m benchmarks knows only the four)
    results = []
    for name in names:
        path = ensure(name, size)
        count = COUNTS[size][name]
        nbytes = os.path.getsize(path)
        label = "jpeg decode" if name == "jpeg" else name
        contenders = []
        for contender, module, note in CONTENDERS:
            if name == "jpeg" and contender.startswith("tfrecord"):
                continue  # the tfrecord package does not decode images
            if not _available(module):
                log(f"  {name}: {contender} skipped ({module} not installed)")
                continue
            contenders.append((contender, note))
        rounds: dict[str, list[tuple[float, float]]] = {c: [] for c, _ in contenders}
        for k in range(max(1, repeat)):
            for contender, _ in contenders if k % 2 == 0 else contenders[::-1]:
                value, wall, cpu = _in_subprocess(contender, name, size, 2)
                if value != count:
                    raise RuntimeError(f"{contender} delivered {value} records of {path}, expected {count}")
                rounds[contender].append((wall, cpu))
                log(
                    f"  {label:<12} {contender:<24} round {k + 1}: {count / wall:>10,.0f} rec/s {count / cpu:>10,.0f} rec/CPU-s"
                )
        for contender, note in contenders:
            wall, cpu = min(rounds[contender], key=lambda wc: wc[1])
            results.append(Result(label, contender, count, nbytes, wall, cpu, note))
        base = rounds[contenders[0][0]]
        for contender, _ in contenders[1:]:
            ratios = [other[1] / mine[1] for mine, other in zip(base, rounds[contender])]
            log(
                f"  {label:<12} tfrx x {contender} (CPU) per round: median {statistics.median(ratios):.2f}, "
                f"range {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} rounds"
            )
    return results


def main(argv=None) -> int:
    return worker_suite_main("python -m benchmarks.pipeline", __doc__, run, worker, argv, workloads=WORKLOADS)


if __name__ == "__main__":
    sys.exit(main())
