"""Writes this directory's golden BERT pre-training records with the reference implementation.

The reference is TensorFlow Model Garden's
``official.nlp.data.create_pretraining_data`` (package ``tf-models-official``,
installed with ``--no-deps`` next to ``tf-keras``, ``sentencepiece``, ``six``
and ``absl-py``; it needs TensorFlow). Run from the repository root:

    python tests/golden/bert/make_golden.py            # records for every case of cases.json
    python tests/golden/bert/make_golden.py --vocab    # also rebuild vocab.txt from the corpora

``vocab.txt`` holds the special tokens, every lower-cased word of the corpora
seen at least twice, the letters and digits alone and as ``##`` pieces, a few
suffixes and one duplicated entry (``the``: the reference maps a duplicate to
its last line but draws random words from the distinct entries).

For each case the script calls the reference's own functions in the order its
``main()`` does (``FullTokenizer``, ``create_training_instances`` with
``random.Random(random_seed)``, ``write_instance_to_example_files``), so the
records are the ones ``create_pretraining_data.py --input_file=...`` writes.
Output: ``{case}-{k}.tfrecord`` (``.gz`` with GZIP) for each output file k.
"""

from __future__ import annotations

import collections
import json
import random
import string
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

DEFAULTS = {
    "max_seq_length": 128,
    "max_predictions_per_seq": 20,
    "masked_lm_prob": 0.15,
    "short_seq_prob": 0.1,
    "dupe_factor": 10,
    "random_seed": 12345,
    "do_lower_case": True,
    "do_whole_word_mask": False,
}


def load_cases() -> dict:
    return json.loads((HERE / "cases.json").read_text())["cases"]


def case_flags(case: dict) -> dict:
    return {**DEFAULTS, **case["flags"]}


def output_names(name: str, case: dict) -> list[str]:
    ext = ".tfrecord.gz" if case.get("gzip") else ".tfrecord"
    return [f"{name}-{k}{ext}" for k in range(case["outputs"])]


def build_vocab() -> None:
    from official.nlp.tools import tokenization

    basic = tokenization.BasicTokenizer(do_lower_case=True)
    counts: collections.Counter[str] = collections.Counter()
    for path in sorted(HERE.glob("corpus_*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            counts.update(basic.tokenize(line))
    words = sorted(w for w, c in counts.items() if c >= 2 and len(w) > 1)
    chars = sorted({ch for w in counts for ch in w} | set(string.ascii_lowercase + string.digits))
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"]
    tokens += chars + ["##" + c for c in chars if c.isalnum()]
    tokens += ["##s", "##ed", "##ing", "##er", "##ly", "##es"]
    tokens += words + ["the"]
    seen = set()
    with open(HERE / "vocab.txt", "w", encoding="utf-8") as f:
        for t in tokens:
            if t in seen and t != "the":
                continue
            seen.add(t)
            f.write(t + "\n")


def run_reference(inputs: list[str], vocab: str, outputs: list[str], flags: dict, gzip: bool) -> None:
    """The reference's main(), with the flags as arguments."""
    from official.nlp.data import create_pretraining_data as ref

    tokenizer = ref.tokenization.FullTokenizer(vocab_file=vocab, do_lower_case=flags["do_lower_case"])
    text_fn = ref.get_processor_text_fn(False, flags["do_lower_case"])
    rng = random.Random(flags["random_seed"])
    instances = ref.create_training_instances(
        inputs,
        tokenizer,
        text_fn,
        flags["max_seq_length"],
        flags["dupe_factor"],
        flags["short_seq_prob"],
        flags["masked_lm_prob"],
        flags["max_predictions_per_seq"],
        rng,
        flags["do_whole_word_mask"],
        None,
    )
    ref.write_instance_to_example_files(
        instances, tokenizer, flags["max_seq_length"], flags["max_predictions_per_seq"], outputs, gzip, False
    )


def main(argv: list[str]) -> None:
    from absl import logging

    logging.set_verbosity(logging.WARNING)
    if "--vocab" in argv or not (HERE / "vocab.txt").exists():
        build_vocab()
    for name, case in load_cases().items():
        run_reference(
            [str(HERE / p) for p in case["inputs"]],
            str(HERE / "vocab.txt"),
            [str(HERE / o) for o in output_names(name, case)],
            case_flags(case),
            bool(case.get("gzip")),
        )
        print(name, output_names(name, case))


if __name__ == "__main__":
    main(sys.argv[1:])
