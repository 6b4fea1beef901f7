"""SequenceExamples: a context plus feature lists, parsed one at a time and in batches.

Writes ``tf.train.SequenceExample`` records like those of video and speech
datasets: a context (``id``, ``length``, ``label``) and two feature lists,
``frames`` (a fixed 8-float vector per step) and ``tokens`` (a variable number
of int64 per step). Reads them back

* one by one with ``tfrx.parse_single_sequence_example`` (TF's per-record
  idiom), ``tokens`` as a ``VarLenFeature`` (a ``SparseArray``);
* in batches with ``ds.batch(n).parse(tfrx.SequenceExampleParser(...))``:
  ``frames`` as ``FixedLenSequenceFeature`` padded to the longest sequence
  of the batch, ``tokens`` as a ``RaggedFeature`` (a ``RaggedArray``);

and checks every value against what was written.

    python examples/sequence_examples.py [--records N] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

import tfrx

FRAME = 8
CONTEXT = {
    "id": tfrx.FixedLenFeature([], tfrx.string),
    "length": tfrx.FixedLenFeature([], tfrx.int64),
    "label": tfrx.FixedLenFeature([], tfrx.int64),
}


def make_sequences(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        steps = int(rng.integers(1, 30))
        out.append(
            {
                "id": f"clip-{i:05d}".encode(),
                "label": int(rng.integers(0, 5)),
                "frames": rng.normal(size=(steps, FRAME)).astype(np.float32),
                "tokens": [rng.integers(0, 10_000, int(rng.integers(0, 6))).tolist() for _ in range(steps)],
            }
        )
    return out


def write(path: str, sequences: list[dict]) -> None:
    with tfrx.TFRecordWriter(path) as w:
        for s in sequences:
            ex = tfrx.make_sequence_example(
                {"id": s["id"], "length": len(s["frames"]), "label": s["label"]},
                {"frames": s["frames"], "tokens": s["tokens"]},
                kinds={"tokens": "int64"},  # a step may have no tokens: say the kind of an empty list
            )
            w.write(ex.SerializeToString())


def check_one_by_one(path: str, sequences: list[dict]) -> bool:
    ok = True
    sequence_features = {
        "frames": tfrx.FixedLenSequenceFeature([FRAME], tfrx.float32),
        "tokens": tfrx.VarLenFeature(tfrx.int64),
    }
    for record, s in zip(tfrx.TFRecordDataset(path), sequences, strict=True):
        context, lists = tfrx.parse_single_sequence_example(record, CONTEXT, sequence_features)
        tokens = lists["tokens"]  # SparseArray: indices (step, position), values
        rows = [tokens.values[tokens.indices[:, 0] == t].tolist() for t in range(len(s["frames"]))]
        ok &= (
            context["id"] == s["id"]
            and int(context["label"]) == s["label"]
            and int(context["length"]) == len(s["frames"])
            and np.array_equal(lists["frames"], s["frames"])
            and rows == s["tokens"]
        )
    return bool(ok)


def check_batched(path: str, sequences: list[dict], batch_size: int) -> tuple[bool, int]:
    parser = tfrx.SequenceExampleParser(
        CONTEXT,
        {"frames": tfrx.FixedLenSequenceFeature([FRAME], tfrx.float32), "tokens": tfrx.RaggedFeature(tfrx.int64)},
    )
    ok, i, batches = True, 0, 0
    for context, lists, lengths in tfrx.TFRecordDataset(path).batch(batch_size).parse(parser):
        batches += 1
        tokens = lists["tokens"].to_list()  # [example][step][token]
        for j in range(len(context["id"])):
            s = sequences[i]
            steps = len(s["frames"])
            ok &= (
                context["id"][j] == s["id"]
                and int(lengths["frames"][j]) == steps
                and np.array_equal(lists["frames"][j, :steps], s["frames"])
                and not lists["frames"][j, steps:].any()  # padding
                and tokens[j] == s["tokens"]
            )
            i += 1
    return bool(ok and i == len(sequences)), batches


def run(records: int, batch_size: int, workdir: str) -> dict:
    path = os.path.join(workdir, "sequences.tfrecord")
    sequences = make_sequences(records)
    write(path, sequences)
    steps = sum(len(s["frames"]) for s in sequences)
    print(f"wrote {records} SequenceExamples ({steps} steps in all) to {os.path.basename(path)}")
    single = check_one_by_one(path, sequences)
    print(f"parse_single_sequence_example, one by one: values equal: {single}")
    batched, batches = check_batched(path, sequences, batch_size)
    print(
        f"SequenceExampleParser in {batches} batches of up to {batch_size} (frames padded, tokens ragged): values equal: {batched}"
    )
    context, sequence = tfrx.infer_features(path)
    print(f"inferred schema: context {sorted(context)}, feature lists {sorted(sequence)}")
    return {"single": single, "batched": batched, "inferred": (sorted(context), sorted(sequence))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=2000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--small", action="store_true", help="a quick run (150 records)")
    p.add_argument("--workdir", help="where to write (default: a temporary directory)")
    args = p.parse_args(argv)
    records = 150 if args.small else args.records
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        out = run(records, args.batch_size, workdir)
    return 0 if out["single"] and out["batched"] else 1


if __name__ == "__main__":
    sys.exit(main())
