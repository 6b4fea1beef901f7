"""TFDV's statistics, schemas and anomalies on small inputs: the golden files of tests/test_validate_golden.py.

    python tests/golden/validate/make_validate_golden.py [--out DIR] [--corpus DIR]
    python tests/golden/validate/make_validate_golden.py --check-tfrx DIR

Runs in an environment with tensorflow-data-validation (it pins TensorFlow
2.16, pyarrow<11 and pandas<2: a virtual environment of its own, see
tests/tfdv_oracle.sh), never in tfrx's.

Inputs: ``generated.tfrecord`` / ``generated_b.tfrecord`` (written here with
TensorFlow from a seeded generator: ints with missing and empty lists,
floats with NaN and infinities, categorical strings, non-UTF-8 bytes, a
high-cardinality string, a 0/1 int, a weight, a label; ``_b`` a second span
that drifts, with a new category, a new feature and bad 0/1 values) and
the corpus' penguin train / eval files; ``sequence.tfrecord``:
SequenceExamples (feature lists of varying steps and values, some records
without any), read by tfx_bsl's SequenceExample source in a Beam pipeline. Outputs (protobuf text): ``stats_<name>.pbtxt``
(``generate_statistics_from_tfrecord`` with default options; ``_weighted``
with ``weight_feature="w"``, ``_sliced`` sliced by ``label``, ``_categorical``
with a schema declaring ``label`` a categorical int),
``schema_<name>.pbtxt`` (``infer_schema``), ``anomalies_*.pbtxt``
(``validate_statistics``: eval against the train schema, generated_b
against generated's schema, and drift with comparators), ``versions.json``.

``--workload NAME=PATH`` (repeatable): TFDV's statistics of a benchmark
workload file too (``stats_workload_NAME.pbtxt``; tests/tfdv_oracle.sh
passes the small ``criteo``, ``bert`` and ``image`` files of ``benchmarks``).

``--check-tfrx DIR``: loads tfrx's files from DIR (``stats.pb``,
``schema.pbtxt`` written by tfrx for generated.tfrecord) with TFDV's own
loaders, infers TFDV's schema from tfrx's statistics and validates TFDV's
statistics against tfrx's schema; exits non-zero on any difference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PENGUIN = ("tfx__penguin_train_data_tfrecord-00000-of-00001.gz", "tfx__penguin_eval_data_tfrecord-00000-of-00001.gz")


def write_generated(tf, path: Path, seed: int, n: int, serving: bool = False) -> None:
    """``serving``: the second span: shifted numbers and categories, a new category, a new feature, a 0/1
    feature that is sometimes missing or 2."""
    import numpy as np

    rng = np.random.default_rng(seed)
    cats = [b"red", b"green", b"blue", b"cyan", b"magenta", b"yellow"]
    probs = np.array([0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    shift = 1.5 if serving else 0.0
    if serving:
        cats.append(b"purple")
        probs = np.append(np.roll(probs, 2) * 0.97, 0.03)

    def feature(kind: str, values):
        if kind == "int":
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        if kind == "float":
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))

    with tf.io.TFRecordWriter(str(path)) as w:
        for k in range(n):
            feats = {}
            m = int(rng.integers(0, 6))
            if m < 5:  # "i": 0..3 values, an empty list at m == 4, missing at m == 5
                feats["i"] = feature("int", rng.integers(-50, 1000, size=min(m, 3)).tolist() if m < 4 else [])
            x = float(rng.normal(10 + shift, 3))
            if k % 97 == 5:
                x = float("nan")
            elif k % 211 == 7:
                x = float("inf")
            elif k % 53 == 0:
                x = 0.0
            feats["f"] = feature("float", [x])
            feats["s"] = feature("bytes", [cats[int(rng.choice(len(cats), p=probs))]])
            if k % 149 == 3:
                feats["blob"] = feature("bytes", [b"\xff\xfe" + bytes([k % 256])])
            if k % 3:
                feats["text"] = feature("bytes", [b"t%03d" % rng.integers(0, 300)])
            flag = int(rng.integers(0, 2))
            if not (serving and k % 10 == 0):
                feats["flag01"] = feature("int", [2 if serving and k % 10 == 1 else flag])
            if serving and k % 4 == 0:
                feats["extra"] = feature("float", [0.5])
            feats["w"] = feature("float", [float(rng.uniform(0.5, 2.0))])
            feats["label"] = feature("int", [k % 3])
            w.write(tf.train.Example(features=tf.train.Features(feature=feats)).SerializeToString())


def write_sequence(tf, path: Path, seed: int, n: int) -> None:
    """SequenceExamples: a context id and label, an int feature list of 0-6 steps of 1-4 tokens, a float
    feature list of one value per step, a bytes feature list; some records without feature lists."""
    import numpy as np

    rng = np.random.default_rng(seed)
    with tf.io.TFRecordWriter(str(path)) as w:
        for k in range(n):
            ex = tf.train.SequenceExample()
            ex.context.feature["id"].int64_list.value.append(k)
            ex.context.feature["label"].bytes_list.value.append(b"pos" if k % 3 else b"neg")
            if k % 7 != 3:
                steps = int(rng.integers(0, 7))
                lists = ex.feature_lists.feature_list
                for _ in range(steps):
                    lists["tokens"].feature.add().int64_list.value.extend(
                        rng.integers(0, 100, size=int(rng.integers(1, 5))).tolist()
                    )
                    lists["scores"].feature.add().float_list.value.append(float(rng.normal()))
                if k % 2:
                    lists["words"].feature.add().bytes_list.value.extend([b"a", b"b"][: 1 + k % 2])
            w.write(ex.SerializeToString())


def sequence_statistics(path: Path):
    """TFDV's statistics of SequenceExamples (tfx_bsl's SequenceExample source: feature lists under
    ##SEQUENCE##), through a Beam pipeline as TFDV's own generate_statistics_from_tfrecord runs one."""
    import tempfile

    import apache_beam as beam
    import tensorflow_data_validation as tfdv
    from tfx_bsl.public import tfxio

    source = tfxio.TFSequenceExampleRecord(file_pattern=str(path), telemetry_descriptors=["tfrx-golden"])
    out = Path(tempfile.mkdtemp()) / "stats.pb"
    with beam.Pipeline() as p:
        _ = (
            p
            | source.BeamSource()
            | tfdv.GenerateStatistics(tfdv.StatsOptions())
            | beam.Map(lambda s: out.write_bytes(s.SerializeToString()))
        )
    return tfdv.load_stats_binary(str(out))


def mark_categorical(schema) -> None:
    """``label`` as a categorical int (string statistics for it when the schema goes to StatsOptions)."""
    for f in schema.feature:
        if f.name == "label":
            f.int_domain.is_categorical = True


def add_comparators(schema) -> None:
    """The thresholds the drift golden uses (also applied by the test to tfrx's schema)."""
    for f in schema.feature:
        if f.name == "s":
            f.drift_comparator.infinity_norm.threshold = 0.05
        if f.name == "f":
            f.drift_comparator.jensen_shannon_divergence.threshold = 0.05


def make(out: Path, corpus: Path | None, workloads: tuple | list = ()) -> None:
    import tensorflow as tf
    import tensorflow_data_validation as tfdv
    from google.protobuf import text_format
    from tensorflow_data_validation.utils import slicing_util

    out.mkdir(parents=True, exist_ok=True)
    gen, gen_b = HERE / "generated.tfrecord", HERE / "generated_b.tfrecord"
    if not gen.exists():
        write_generated(tf, gen, seed=0, n=3000)
    if not gen_b.exists():
        write_generated(tf, gen_b, seed=1, n=2000, serving=True)

    def save(name: str, message) -> None:
        (out / name).write_text(text_format.MessageToString(message))

    def stats(path: Path, **options):
        return tfdv.generate_statistics_from_tfrecord(str(path), stats_options=tfdv.StatsOptions(**options))

    seq = HERE / "sequence.tfrecord"
    if not seq.exists():
        write_sequence(tf, seq, seed=2, n=500)
    s_seq = sequence_statistics(seq)
    save("stats_sequence.pbtxt", s_seq)
    save("schema_sequence.pbtxt", tfdv.infer_schema(s_seq))
    s_gen = stats(gen)
    save("stats_generated.pbtxt", s_gen)
    save("stats_generated_weighted.pbtxt", stats(gen, weight_feature="w"))
    slicer = slicing_util.get_feature_value_slicer({"label": None})
    save("stats_generated_sliced.pbtxt", stats(gen, experimental_slice_functions=[slicer]))
    schema = tfdv.infer_schema(s_gen)
    save("schema_generated.pbtxt", schema)
    categorical = tfdv.infer_schema(s_gen)
    mark_categorical(categorical)
    s_cat = stats(gen, schema=categorical)
    save("stats_generated_categorical.pbtxt", s_cat)
    save("schema_generated_categorical.pbtxt", tfdv.infer_schema(s_cat))
    s_gen_b = stats(gen_b)
    save("stats_generated_b.pbtxt", s_gen_b)
    save("anomalies_generated_b.pbtxt", tfdv.validate_statistics(s_gen_b, schema))
    drift_schema = tfdv.infer_schema(s_gen)
    add_comparators(drift_schema)
    save("anomalies_drift.pbtxt", tfdv.validate_statistics(s_gen_b, drift_schema, previous_statistics=s_gen))
    if corpus is not None:
        train, evl = (corpus / p for p in PENGUIN)
        s_train, s_eval = stats(train), stats(evl)
        save("stats_penguin_train.pbtxt", s_train)
        save("stats_penguin_eval.pbtxt", s_eval)
        p_schema = tfdv.infer_schema(s_train)
        save("schema_penguin.pbtxt", p_schema)
        save("anomalies_penguin_eval.pbtxt", tfdv.validate_statistics(s_eval, p_schema))
    for name, path in workloads:
        save(f"stats_workload_{name}.pbtxt", stats(Path(path)))
    versions = {"tensorflow_data_validation": tfdv.__version__, "tensorflow": tf.__version__}
    (out / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")


def check_tfrx(d: Path) -> int:
    """TFDV loads tfrx's files and agrees with them."""
    import tensorflow_data_validation as tfdv

    problems = []
    tfrx_stats = tfdv.load_stats_binary(str(d / "stats.pb"))
    tfrx_schema = tfdv.load_schema_text(str(d / "schema.pbtxt"))
    if tfdv.infer_schema(tfrx_stats) != tfrx_schema:
        problems.append("TFDV's infer_schema of tfrx's statistics differs from tfrx's schema")
    own = tfdv.generate_statistics_from_tfrecord(str(HERE / "generated.tfrecord"))
    anomalies = tfdv.validate_statistics(own, tfrx_schema)
    if anomalies.anomaly_info:
        problems.append(f"TFDV's statistics do not validate against tfrx's schema: {dict(anomalies.anomaly_info)}")
    back = tfdv.validate_statistics(tfrx_stats, tfdv.infer_schema(own))
    if back.anomaly_info:
        problems.append(f"tfrx's statistics do not validate against TFDV's schema: {dict(back.anomaly_info)}")
    for p in problems:
        print("tfdv oracle:", p, file=sys.stderr)
    print(f"tfdv oracle: {'FAILED' if problems else 'ok'} ({d})")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument(
        "--corpus", type=Path, default=Path(os.environ["TFRX_CORPUS"]) if "TFRX_CORPUS" in os.environ else None
    )
    ap.add_argument("--check-tfrx", type=Path)
    ap.add_argument(
        "--workload",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="also TFDV's statistics of a benchmark workload file (stats_workload_NAME.pbtxt)",
    )
    args = ap.parse_args()
    if args.check_tfrx is not None:
        return check_tfrx(args.check_tfrx)
    make(args.out, args.corpus, [tuple(w.split("=", 1)) for w in args.workload])
    return 0


if __name__ == "__main__":
    sys.exit(main())
