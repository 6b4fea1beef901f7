"""Cases for the tf.data operations, and the script that writes their golden outputs with TensorFlow.

Run from the repository root with TensorFlow installed:

    python tests/golden/make_data_ops.py

Each case is a function ``case(D, K)`` building a pipeline from ``D`` (the
``Dataset`` class: ``tf.data.Dataset`` or ``tfrx.data.Dataset``) and ``K``
(the few tensor operations a map function needs, for TensorFlow or NumPy),
so the same code runs on both. The outputs TensorFlow produces are written
to ``data_ops.json`` (``golden_form`` describes each element: dtype, shape
and values); ``tests/test_data_*.py`` compare tfrx with that file, and with
TensorFlow itself when it is installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "data_ops.json"


class NumpyKit:
    """The tensor operations of the cases, in NumPy (for tfrx)."""

    def __init__(self):
        from tfrx.data import TensorSpec

        self.TensorSpec = TensorSpec

    def int64(self, x):
        return np.int64(x)

    def length(self, x):
        return np.int32(np.shape(x)[0])

    def mod32(self, x, n):
        return np.int32(x % n)

    def fill(self, n, value):
        return np.full(int(n), value, dtype=np.asarray(value).dtype)

    def mod(self, x, n):
        return np.int64(x % n)

    def array(self, values, dtype):
        return np.asarray(values, dtype=dtype)

    def checked_inverse(self, x):
        if x == 0:
            raise ZeroDivisionError("1/0")
        return np.float32(1) / x

    def dtype(self, name):
        return "string" if name == "string" else np.dtype(name)


class TensorFlowKit:
    """The same operations in TensorFlow (for tf.data)."""

    def __init__(self, tf):
        self.tf = tf
        self.TensorSpec = tf.TensorSpec

    def int64(self, x):
        return self.tf.constant(x, self.tf.int64)

    def length(self, x):
        return self.tf.shape(x)[0]

    def mod32(self, x, n):
        return self.tf.cast(x % n, self.tf.int32)

    def fill(self, n, value):
        return self.tf.fill([n], value)

    def mod(self, x, n):
        return self.tf.cast(x % n, self.tf.int64)

    def array(self, values, dtype):
        return self.tf.constant(np.asarray(values, dtype=dtype))

    def checked_inverse(self, x):
        return self.tf.debugging.check_numerics(1.0 / x, "1/0")

    def dtype(self, name):
        return getattr(self.tf, name)


def _seqs(D, K, n=30):
    # Variable-length int64 sequences: element i has length i % 7 + 1 and holds i.
    return D.range(n).map(lambda i: K.fill(i % 7 + 1, i))


def _batched(ds, n):
    return ds.flat_map(lambda w: w.batch(n))


CASES = {
    # range, from_tensor_slices, flat_map
    "range_start_stop_step": lambda D, K: D.range(2, 17, 4),
    "range_negative_step": lambda D, K: D.range(10, 0, -3),
    "range_output_type": lambda D, K: D.range(3, output_type=K.dtype("int32")),
    "from_tensor_slices_dict": lambda D, K: D.from_tensor_slices(
        {"a": K.array([[1, 2], [3, 4], [5, 6]], np.int32), "b": K.array([b"x", b"yy", b""], object)}
    ),
    "from_tensor_slices_python_numbers": lambda D, K: D.from_tensor_slices(
        {
            "i": [1, 2, 3],
            "f": [0.5, 1.5, 2.5],
            "big": [1, 2**40, 3],
            "b": [True, False, True],
            "m": [[1, 2.5], [3, 4], [5, 6]],
        }
    ),
    "from_tensors_python_numbers": lambda D, K: D.from_tensors(([1, 2], 3.5, 7)),
    "flat_map_ranges": lambda D, K: D.range(5).flat_map(lambda x: D.range(x)),
    # window
    "window_shift": lambda D, K: _batched(D.range(7).window(3, 2), 3),
    "window_shift_1": lambda D, K: _batched(D.range(6).window(3, 1), 3),
    "window_stride": lambda D, K: _batched(D.range(7).window(3, shift=1, stride=2), 3),
    "window_drop_remainder": lambda D, K: _batched(D.range(10).window(4, 3, drop_remainder=True), 4),
    "window_gap": lambda D, K: _batched(D.range(10).window(2, 4), 2),
    "window_stride_drop": lambda D, K: _batched(D.range(12).window(3, 2, 3, drop_remainder=True), 3),
    "window_tuple": lambda D, K: (
        D.zip((D.range(5), D.range(5).map(lambda x: x * 10)))
        .window(2)
        .flat_map(lambda a, b: D.zip((a.batch(2), b.batch(2))))
    ),
    # scan
    "scan_running_sum": lambda D, K: D.range(10).scan(K.int64(0), lambda s, x: (s + x, s * 2)),
    "scan_tuple_state": lambda D, K: D.range(1, 8).scan(
        (K.int64(0), K.int64(1)), lambda s, x: ((s[1], s[0] + s[1]), s[0] * x)
    ),
    # group_by_window
    "group_by_window_flush_order": lambda D, K: D.range(20).group_by_window(
        lambda x: K.mod(x + 2, 3), lambda k, ds: ds.batch(4), window_size=4
    ),
    "group_by_window_size_func": lambda D, K: D.range(25).group_by_window(
        lambda x: K.mod(x, 4), lambda k, ds: ds.batch(10).map(lambda b: (k, b)), window_size_func=lambda k: k + 2
    ),
    # bucket_by_sequence_length
    "bucket_padded": lambda D, K: _seqs(D, K).bucket_by_sequence_length(K.length, [3, 5], [2, 3, 4]),
    "bucket_padding_value": lambda D, K: _seqs(D, K).bucket_by_sequence_length(
        K.length, [2, 4, 6], [3, 3, 2, 2], padding_values=K.int64(-1)
    ),
    "bucket_drop_remainder": lambda D, K: _seqs(D, K).bucket_by_sequence_length(
        K.length, [3, 5], [2, 3, 4], drop_remainder=True
    ),
    "bucket_pad_to_boundary": lambda D, K: _seqs(D, K).bucket_by_sequence_length(
        K.length, [3, 5, 9], [2, 3, 4, 5], pad_to_bucket_boundary=True
    ),
    "bucket_padded_shapes": lambda D, K: _seqs(D, K).bucket_by_sequence_length(
        K.length, [4], [3, 3], padded_shapes=[8]
    ),
    "bucket_no_padding": lambda D, K: D.range(20).bucket_by_sequence_length(
        lambda x: K.mod32(x, 6), [2, 4], [3, 2, 4], no_padding=True
    ),
    "bucket_dict": lambda D, K: (
        D.range(12)
        .map(lambda i: {"ids": K.fill(i % 4 + 1, i), "label": i})
        .bucket_by_sequence_length(lambda d: K.length(d["ids"]), [2], [2, 3])
    ),
    # rebatch
    "rebatch_smaller": lambda D, K: D.range(10).batch(4).rebatch(3),
    "rebatch_larger_drop": lambda D, K: D.range(10).batch(3).rebatch(4, drop_remainder=True),
    "rebatch_cycle": lambda D, K: D.range(11).batch(4).rebatch([2, 3]),
    "rebatch_dict": lambda D, K: D.range(9).map(lambda x: {"x": x, "y": x * 2}).batch(2).rebatch(5),
    # choose_from_datasets / sample_from_datasets (deterministic cases)
    "choose_stop": lambda D, K: D.choose_from_datasets(
        [D.range(0, 3), D.range(10, 15), D.range(20, 22)],
        D.from_tensor_slices(K.array([0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 2, 1, 1], np.int64)),
    ),
    "choose_continue": lambda D, K: D.choose_from_datasets(
        [D.range(0, 3), D.range(10, 15), D.range(20, 22)],
        D.from_tensor_slices(K.array([0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 2, 1, 1, 0], np.int64)),
        stop_on_empty_dataset=False,
    ),
    "sample_one_dataset": lambda D, K: D.sample_from_datasets([D.range(5)], seed=3),
    "sample_zero_weight_stop": lambda D, K: D.sample_from_datasets(
        [D.range(3), D.range(10, 13)], weights=[1.0, 0.0], seed=1, stop_on_empty_dataset=True
    ),
    # ignore_errors
    "ignore_errors_map": lambda D, K: (
        D.from_tensor_slices(K.array([1.0, 2.0, 0.0, 4.0, 0.0, 8.0], np.float32)).map(K.checked_inverse).ignore_errors()
    ),
    # from_generator with output_signature
    "from_generator_signature": lambda D, K: D.from_generator(
        lambda: iter([([1, 2, 3], b"a"), ([4], "bc"), ([], b"")]),
        output_signature=(K.TensorSpec([None], K.dtype("int32")), K.TensorSpec([], K.dtype("string"))),
    ),
}


def write_damaged_files(directory, writer) -> dict:
    """TFRecord files of 6 records, damaged: the names and paths of each (``writer(path)`` writes records)."""
    import os

    path = os.path.join(directory, "whole.tfrecord")
    with writer(path) as w:
        for i in range(6):
            w.write(b"record%d" % i)
    data = bytearray(Path(path).read_bytes())
    size = 8 + 4 + 7 + 4  # length, its CRC, 7 bytes of data, their CRC
    out = {}
    bad_crc = bytearray(data)
    bad_crc[2 * size + 12] ^= 0xFF  # a data byte of record 2
    out["data_crc"] = bytes(bad_crc)
    out["truncated"] = bytes(data[: 4 * size + 5])
    bad_len = bytearray(data)
    bad_len[3 * size] ^= 0x01  # the length of record 3 (its CRC no longer matches)
    out["length_crc"] = bytes(bad_len)
    paths = {}
    for name, blob in out.items():
        paths[name] = os.path.join(directory, name + ".tfrecord")
        Path(paths[name]).write_bytes(blob)
    return paths


def read_damaged(paths: dict, tfrecord_dataset) -> dict:
    """What ``TFRecordDataset(path).ignore_errors()`` yields for each damaged file (records as hex)."""
    out = {}
    for name, path in paths.items():
        out[name] = [bytes(r).hex() for r in tfrecord_dataset(path).ignore_errors().as_numpy_iterator()]
    return out


def golden_form(x):
    """An element as JSON: dicts and lists of ``{"dtype", "shape", "value"}`` leaves (bytes as hex)."""
    if isinstance(x, dict):
        return {"dict": {k: golden_form(v) for k, v in x.items()}}
    if isinstance(x, (tuple, list)):
        return {"tuple": [golden_form(v) for v in x]}
    if isinstance(x, bytes):
        return {"dtype": "string", "shape": [], "value": x.hex()}
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind == "S":
        flat = [bytes(v).hex() for v in a.ravel().tolist()]
        return {"dtype": "string", "shape": list(a.shape), "value": flat}
    return {"dtype": a.dtype.name, "shape": list(a.shape), "value": a.ravel().tolist()}


def run_case(name: str, D, K) -> list:
    return [golden_form(e) for e in CASES[name](D, K).as_numpy_iterator()]


def main() -> None:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    kit = TensorFlowKit(tf)
    import tempfile

    out = {"tensorflow": tf.__version__, "cases": {name: run_case(name, tf.data.Dataset, kit) for name in CASES}}
    with tempfile.TemporaryDirectory() as d:
        paths = write_damaged_files(d, tf.io.TFRecordWriter)
        out["ignore_errors_damaged_files"] = read_damaged(paths, tf.data.TFRecordDataset)
    GOLDEN.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {GOLDEN} ({len(CASES)} cases)")


if __name__ == "__main__":
    main()
