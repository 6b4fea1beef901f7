"""Parsing: tfrx.ExampleParser vs tf.io.parse_example inside tf.data vs protobuf + NumPy.

All contenders parse the same in-memory records of each workload in batches
of 256 (the tf.data idiom ``.batch(256).map(parse_fn)``), each in its own
interpreter so that no contender's threads or imports reach another's
CPU-time measurement. The figure that matters is records per CPU-second
(every thread of the process counted); wall-clock rates show what the
threads buy.

Run with ``python -m benchmarks parse`` (or ``python -m benchmarks.parse``).
"""

from __future__ import annotations

import sys
from typing import Any

from benchmarks import workloads
from benchmarks.report import Result, in_subprocess

BATCH = 256

# Feature specs per workload, written once as plain data so that tfrx and
# TensorFlow get the same description: key -> (kind, dtype, shape).
SPECS: dict[str, Any] = {
    "image": {
        "image/encoded": ("fixed", "string", []),
        "image/format": ("fixed", "string", []),
        "image/class/label": ("fixed", "int64", []),
        "image/height": ("fixed", "int64", []),
        "image/width": ("fixed", "int64", []),
    },
    "bert": {
        "input_ids": ("fixed", "int64", [512]),
        "input_mask": ("fixed", "int64", [512]),
        "segment_ids": ("fixed", "int64", [512]),
        "masked_lm_positions": ("fixed", "int64", [76]),
        "masked_lm_ids": ("fixed", "int64", [76]),
        "masked_lm_weights": ("fixed", "float32", [76]),
        "next_sentence_labels": ("fixed", "int64", [1]),
    },
    "criteo": {
        "label": ("fixed", "int64", []),
        **{f"I{i}": ("fixed", "int64", []) for i in range(1, 14)},
        **{f"C{i}": ("fixed", "string", []) for i in range(1, 27)},
    },
    # SequenceExample: context, then feature lists.
    "sequence": (
        {"id": ("fixed", "string", []), "length": ("fixed", "int64", [])},
        {"tokens": ("var", "int64", None), "scores": ("var", "float32", None)},
    ),
}

CONTENDERS = [
    ("tfrx (1 thread)", "tfrx_1"),
    ("tfrx (all cores)", "tfrx_all"),
    # VarLen results compute their COO indices when first read (SparseArray.from_row_splits);
    # TensorFlow always writes them. This row reads them after every parse (sequence only).
    ("tfrx (1 thread), indices read", "tfrx_1_indices"),
    ("tf.data + parse_example", "tf_data"),
    ("tf.data, 1 thread", "tf_data_1"),
    ("protobuf upb + NumPy", "upb_numpy"),
]


def _tfrx_specs(spec: dict) -> dict:
    import tfrx

    out = {}
    for key, (kind, dtype, shape) in spec.items():
        out[key] = tfrx.FixedLenFeature(shape, dtype) if kind == "fixed" else tfrx.VarLenFeature(dtype)
    return out


def _tf_specs(tf, spec: dict) -> dict:
    out = {}
    for key, (kind, dtype, shape) in spec.items():
        dt = getattr(tf, dtype)
        out[key] = tf.io.FixedLenFeature(shape, dt) if kind == "fixed" else tf.io.VarLenFeature(dt)
    return out


def _batches(records: list[bytes]) -> list[list[bytes]]:
    return [records[i : i + BATCH] for i in range(0, len(records), BATCH)]


def tfrx_contender(workload: str, records: list[bytes], threads: int | None, read_indices: bool = False):
    import tfrx

    spec = SPECS[workload]
    parser: tfrx.SequenceExampleParser | tfrx.ExampleParser
    if workload == "sequence":
        parser = tfrx.SequenceExampleParser(_tfrx_specs(spec[0]), _tfrx_specs(spec[1]), num_parallel_calls=threads)
    else:
        parser = tfrx.ExampleParser(_tfrx_specs(spec), num_parallel_calls=threads)
    # Records as the reader hands them over: one buffer + offsets per batch.
    batches = [tfrx.RecordBatch.from_records(b) for b in _batches(records)]

    def run():
        n = 0
        for b in batches:
            out = parser.parse(b)
            if read_indices:
                for part in out if isinstance(out, tuple) else (out,):
                    for value in part.values():
                        if isinstance(value, tfrx.SparseArray):
                            value.indices  # noqa: B018 - computed on first read
            n += len(b)
        return n

    return run


def tf_data_contender(workload: str, records: list[bytes], single_thread: bool):
    import tensorflow as tf

    spec = SPECS[workload]
    if workload == "sequence":
        ctx, seq = _tf_specs(tf, spec[0]), _tf_specs(tf, spec[1])

        def parse(x):
            return tf.io.parse_sequence_example(x, ctx, seq)
    else:
        features = _tf_specs(tf, spec)

        def parse(x):
            return tf.io.parse_example(x, features)

    ds = tf.data.Dataset.from_tensor_slices(tf.constant(records)).batch(BATCH).map(parse)
    if single_thread:
        opts = tf.data.Options()
        opts.threading.private_threadpool_size = 1
        opts.threading.max_intra_op_parallelism = 1
        ds = ds.with_options(opts)
    else:
        ds = ds.prefetch(tf.data.AUTOTUNE)

    def run():
        n = 0
        for _ in ds:
            n += 1
        return len(records)

    return run


def upb_numpy_contender(workload: str, records: list[bytes]):
    """The pure-Python baseline: protobuf's upb runtime, then NumPy arrays per batch."""
    import numpy as np

    Example, SequenceExample = workloads._classes()
    spec = SPECS[workload]
    np_dtype = {"int64": np.int64, "float32": np.float32, "string": object}
    field = {"int64": "int64_list", "float32": "float_list", "string": "bytes_list"}

    def features_to_columns(msgs, get_features, spec_part):
        cols = {}
        for key, (kind, dtype, shape) in spec_part.items():
            lists = [getattr(get_features(m).feature[key], field[dtype]).value for m in msgs]
            if kind == "fixed":
                arr = np.array([list(v) for v in lists], dtype=np_dtype[dtype])
                cols[key] = arr.reshape([len(msgs)] + list(shape))
            else:
                lengths = np.fromiter((len(v) for v in lists), np.int64, len(lists))
                values = np.array([x for v in lists for x in v], dtype=np_dtype[dtype])
                cols[key] = (values, lengths)
        return cols

    batches = _batches(records)

    def run():
        n = 0
        for batch in batches:
            if workload == "sequence":
                msgs = [SequenceExample.FromString(r) for r in batch]
                features_to_columns(msgs, lambda m: m.context, spec[0])
                for key, (_, dtype, _) in spec[1].items():
                    steps = [m.feature_lists.feature_list[key].feature for m in msgs]
                    np.array(
                        [x for s in steps for f in s for x in getattr(f, field[dtype]).value], dtype=np_dtype[dtype]
                    )
            else:
                msgs = [Example.FromString(r) for r in batch]
                features_to_columns(msgs, lambda m: m.features, spec)
            n += len(batch)
        return n

    return run


def make_contender(name: str, workload: str, records: list[bytes]):
    if name == "tfrx_1":
        return tfrx_contender(workload, records, 1)
    if name == "tfrx_all":
        return tfrx_contender(workload, records, None)
    if name == "tfrx_1_indices":
        return tfrx_contender(workload, records, 1, read_indices=True)
    if name == "tf_data":
        return tf_data_contender(workload, records, False)
    if name == "tf_data_1":
        return tf_data_contender(workload, records, True)
    if name == "upb_numpy":
        return upb_numpy_contender(workload, records)
    raise KeyError(name)


# The pure-Python baseline is ~40x slower; it parses a prefix of each workload.
UPB_MAX_RECORDS = 5000


def records_for(contender: str, workload: str, size: str) -> list[bytes]:
    records = workloads.make_records(workload, size)
    return records[:UPB_MAX_RECORDS] if contender == "upb_numpy" else records


def run(size: str, names: list[str], repeat: int) -> list[Result]:
    results = []
    for workload in names:
        for label, contender in CONTENDERS:
            if contender == "tfrx_1_indices" and workload != "sequence":
                continue  # no VarLen features in the other specs
            nbytes = sum(len(r) for r in records_for(contender, workload, size))
            try:
                n, wall, cpu = in_subprocess("parse", contender, workload, size, "", repeat)
            except RuntimeError as e:
                print(f"# skipped {label} on {workload}: {str(e).splitlines()[0]}", file=sys.stderr)
                continue
            results.append(Result(workload, label, n, nbytes, wall, cpu))
            print(
                f"# {workload:<9} {label:<26} {n / cpu:>12,.0f} records/CPU-s  {nbytes / cpu / 1e9:6.2f} GB/CPU-s",
                file=sys.stderr,
            )
    return results


def worker_contender(contender: str, workload: str, size: str):
    """The timed function of one contender, warmed up (see benchmarks._worker).

    The records stay referenced while it is timed, as a caller's input would:
    freeing them first would leave ~128 MB of free heap for the image
    workload's outputs and hide glibc's trimming (see docs/benchmarks.md).
    """
    records = records_for(contender, workload, size)
    fn = make_contender(contender, workload, records)
    fn()  # imports, thread pools and caches warm

    def timed():
        return fn()

    setattr(timed, "records", records)  # what the runner reports sizes by
    return timed


def main(argv: list[str] | None = None) -> int:
    from benchmarks.report import suite_main

    return suite_main(
        "python -m benchmarks.parse", __doc__, run, argv, workloads=workloads.WORKLOADS, extra=f", batch={BATCH}"
    )


if __name__ == "__main__":
    sys.exit(main())
