"""Example codec: columnar encoding and dict decoding vs protobuf message loops.

Workloads (rows built from a fixed seed):

* ``bert``: BERT pre-training rows - input_ids / input_mask / segment_ids
  (int64 x 512), masked_lm_positions / masked_lm_ids (int64 x 76),
  masked_lm_weights (float x 76), next_sentence_labels (int64 x 1);
* ``criteo``: Criteo-style rows - label + 13 int64 scalars + 26 short bytes
  scalars.

Encoding contenders: ``tfrx.encode_examples`` on NumPy columns (list of
bytes, and one RecordBatch), against the seeds' Python loop building
``tf.train.Example`` and calling ``SerializeToString()``, and the same loop
with ``tfrx.train``. Decoding: ``tfrx.decode_example`` per record against
protobuf (upb) ``FromString`` plus conversion of each feature to NumPy /
lists. All single-threaded.

Run ``python -m benchmarks codec`` (or ``python -m benchmarks.codec``).
"""

from __future__ import annotations

import sys

import numpy as np

from benchmarks.report import Result, measure


WORKLOADS = ("bert", "criteo")
ROWS = {"small": {"bert": 1000, "criteo": 10000}, "full": {"bert": 10000, "criteo": 100000}}


def make_columns(workload: str, n: int) -> dict:
    rng = np.random.default_rng(0)
    if workload == "bert":
        return {
            "input_ids": rng.integers(0, 30522, (n, 512), dtype=np.int64),
            "input_mask": (rng.random((n, 512)) < 0.8).astype(np.int64),
            "segment_ids": (rng.random((n, 512)) < 0.5).astype(np.int64),
            "masked_lm_positions": rng.integers(0, 512, (n, 76), dtype=np.int64),
            "masked_lm_ids": rng.integers(0, 30522, (n, 76), dtype=np.int64),
            "masked_lm_weights": rng.random((n, 76), dtype=np.float32),
            "next_sentence_labels": rng.integers(0, 2, n, dtype=np.int64),
        }
    columns: dict = {"label": rng.integers(0, 2, n, dtype=np.int64)}
    for i in range(1, 14):
        columns[f"I{i}"] = rng.integers(0, 10000, n, dtype=np.int64)
    for i in range(1, 27):
        columns[f"C{i}"] = [f"{v:08x}".encode() for v in rng.integers(0, 2**32, n).tolist()]
    return columns


def _rows(columns: dict, n: int) -> list[dict]:
    """Per-example Python values, as a seed loop sees them (lists from .tolist(), bytes)."""
    as_lists = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in columns.items()}
    return [{k: v[i] for k, v in as_lists.items()} for i in range(n)]


def _message_loop(t, rows):
    """The seeds' way: helpers building Feature messages, one Example per row."""

    def _int64_feature(value):
        return t.Feature(int64_list=t.Int64List(value=value if isinstance(value, list) else [value]))

    def _float_feature(value):
        return t.Feature(float_list=t.FloatList(value=value if isinstance(value, list) else [value]))

    def _bytes_feature(value):
        return t.Feature(bytes_list=t.BytesList(value=[value]))

    helper = {int: _int64_feature, float: _float_feature, bytes: _bytes_feature}

    def kind(v):
        return type(v[0]) if isinstance(v, list) else type(v)

    helpers = {k: helper[kind(v)] for k, v in rows[0].items()}

    def run():
        out = []
        for row in rows:
            feature = {k: helpers[k](v) for k, v in row.items()}
            out.append(t.Example(features=t.Features(feature=feature)).SerializeToString())
        return len(out)

    return run


def _protobuf_to_dict(example_cls):
    def convert(data: bytes) -> dict:
        ex = example_cls.FromString(data)
        out = {}
        for name, f in ex.features.feature.items():
            kind = f.WhichOneof("kind")
            if kind == "int64_list":
                out[name] = np.array(f.int64_list.value, dtype=np.int64)
            elif kind == "float_list":
                out[name] = np.array(f.float_list.value, dtype=np.float32)
            elif kind == "bytes_list":
                out[name] = list(f.bytes_list.value)
        return out

    return convert


def run(size: str = "small", names=None, repeat: int = 3, log=print) -> list[Result]:
    import tfrx

    try:
        import tensorflow as tf
    except ImportError:
        tf = None
    results = []
    for workload in WORKLOADS:
        n = ROWS[size][workload]
        columns = make_columns(workload, n)
        rows = _rows(columns, n)
        records = tfrx.encode_examples(columns)
        nbytes = sum(map(len, records))

        encoders = [
            ("tfrx encode_examples", lambda: len(tfrx.encode_examples(columns))),
            ("tfrx encode_examples(as_batch)", lambda: len(tfrx.encode_examples(columns, as_batch=True))),
        ]
        if tf is not None:
            encoders.append(("tf.train.Example loop", _message_loop(tf.train, rows)))
        encoders.append(("tfrx.train.Example loop", _message_loop(tfrx.train, rows)))
        for name, fn in encoders:
            count, wall, cpu = measure(fn, repeat)
            r = Result(f"encode {workload}", name, count, nbytes, wall, cpu)
            log(f"  encode {workload:<7} {name:<32} {r.records_per_s:>12,.0f} records/s")
            results.append(r)

        decoders = [("tfrx decode_example", tfrx.decode_example)]
        decoders.append(("upb FromString + NumPy", _protobuf_to_dict(tfrx.train.Example)))
        if tf is not None:
            decoders.append(("tf.train FromString + NumPy", _protobuf_to_dict(tf.train.Example)))
        for name, convert in decoders:

            def work(convert=convert):
                for data in records:
                    convert(data)
                return len(records)

            count, wall, cpu = measure(work, repeat)
            r = Result(f"decode {workload}", name, count, nbytes, wall, cpu)
            log(f"  decode {workload:<7} {name:<32} {r.records_per_s:>12,.0f} records/s")
            results.append(r)
    return results


def main(argv=None) -> int:
    from benchmarks.report import suite_main

    return suite_main("python -m benchmarks.codec", __doc__, run, argv)


if __name__ == "__main__":
    sys.exit(main())
