"""Raw text to BERT pre-training records: the reference script against tfrx's exact and fast modes.

    python -m benchmarks.bert [--corpus FILE] [--mb 2] [--workers N] [--contenders reference,exact,fast-1,...]

Every contender runs in its own process on the same corpus (the reference
layout: one sentence per line, blank lines between documents) and vocabulary
with BERT's default flags (``max_seq_length`` 128, ``dupe_factor`` 10, ...),
and writes its records to a scratch directory. Reported: input word pieces per
second and instances per second (wall clock of the whole run: reading,
tokenizing, instance creation, writing), the CPU seconds of the process and its
workers (``per core``: the reference's CPU time over the contender's, the
figure that holds on a busy machine) and the peak resident memory of the
largest process.

* ``reference``: TensorFlow Model Garden's ``create_pretraining_data``
  functions as its ``main()`` calls them (needs TensorFlow and
  ``tf-models-official``; skipped when missing);
* ``exact``: ``tfrx.text.create_pretraining_data(mode="exact")``, the same records;
* ``fast-1``: ``mode="fast"`` in one process with one tokenizer thread (one core);
* ``fast-1-hf``: the same with every sentence through Hugging Face ``tokenizers``;
* ``fast-N``: ``mode="fast"`` with ``--workers`` processes (default: all cores).

Without ``--corpus`` the corpus is made from ``examples/data/bert/corpus.txt``
by drawing its sentences into random documents until ``--mb`` megabytes; its
vocabulary is ``examples/data/bert/vocab.txt``. ``--vocab`` takes another.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "examples" / "data" / "bert"


def make_corpus(path: Path, megabytes: float, seed: int = 0) -> None:
    sentences = [s for s in (DATA / "corpus.txt").read_text(encoding="utf-8").split("\n") if s]
    rng = random.Random(seed)
    target = int(megabytes * 1e6)
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        while size < target:
            doc = "\n".join(rng.choice(sentences) for _ in range(rng.randint(3, 40))) + "\n\n"
            f.write(doc)
            size += len(doc)


def run_one(contender: str, corpus: str, vocab: str, out: str, workers: int) -> dict:
    """In this process: build the records, return the counts and timings."""
    if contender == "reference":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        from absl import logging
        from official.nlp.data import create_pretraining_data as ref

        logging.set_verbosity(logging.WARNING)
    else:
        import tfrx.text  # noqa: F401  (imports are not timed, for any contender)
    start = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = start.ru_utime + start.ru_stime
    t0 = time.perf_counter()
    if contender == "reference":
        tok = ref.tokenization.FullTokenizer(vocab_file=vocab, do_lower_case=True)
        rng = random.Random(12345)
        instances = ref.create_training_instances(
            [corpus], tok, ref.get_processor_text_fn(False, True), 128, 10, 0.1, 0.15, 20, rng, False, None
        )
        ref.write_instance_to_example_files(instances, tok, 128, 20, [out + ".tfrecord"], False, False)
        n_inst = len(instances)
        n_tok = None
    else:
        from tfrx.text import create_pretraining_data

        if contender == "exact":
            r = create_pretraining_data(corpus, vocab, out, metadata=False)
        else:
            one = contender.startswith("fast-1")
            if one:
                os.environ["RAYON_NUM_THREADS"] = "1"
            r = create_pretraining_data(
                corpus,
                vocab,
                out,
                mode="fast",
                metadata=False,
                num_parallel_calls=1 if one else workers,
                tokenizer="hf" if contender.endswith("-hf") else "auto",
            )
        n_inst, n_tok = r.num_instances, r.num_tokens
    wall = time.perf_counter() - t0
    from benchmarks.report import proc_status_bytes

    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime - cpu0
    return {
        "instances": n_inst,
        "tokens": n_tok,
        "wall": wall,
        "cpu": cpu,
        # This process's own peak (see proc_status_bytes), or its workers'.
        "peak_rss_mb": max((proc_status_bytes("VmHWM") or usage.ru_maxrss * 1024) // 1024, children.ru_maxrss) / 1024,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bert", description=__doc__.splitlines()[0])
    p.add_argument("--corpus")
    p.add_argument("--vocab", default=str(DATA / "vocab.txt"))
    p.add_argument("--mb", type=float, default=2.0, help="size of the generated corpus (without --corpus)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--contenders", default="reference,exact,fast-1,fast-1-hf,fast-N")
    p.add_argument("--_run", help=argparse.SUPPRESS)
    p.add_argument("--_out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._run:
        print(json.dumps(run_one(args._run, args.corpus, args.vocab, args._out, args.workers)))
        return 0
    from benchmarks.report import header

    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus
        if corpus is None:
            corpus = os.path.join(tmp, "corpus.txt")
            make_corpus(Path(corpus), args.mb)
        mb = os.path.getsize(corpus) / 1e6
        print(header("bert", f", corpus {mb:.1f} MB, workers {args.workers}"))
        results = {}
        tokens = None
        for name in [c for c in args.contenders.split(",") if c]:
            cmd = [
                sys.executable,
                "-m",
                "benchmarks.bert",
                "--_run",
                name,
                "--corpus",
                corpus,
                "--vocab",
                args.vocab,
                "--_out",
                os.path.join(tmp, name),
                "--workers",
                str(args.workers),
            ]
            env = dict(
                os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
            )
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["?"])[-1]
                print(f"# {name}: skipped ({last[:120]})")
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            results[name] = res
            tokens = tokens or res["tokens"]
        base = results.get("reference")
        print(
            f"{'contender':<10} {'instances':>10} {'wall s':>8} {'cpu s':>8} {'Mtok/s':>8} {'inst/s':>9} "
            f"{'inst/cpu-s':>10} {'vs ref':>7} {'per core':>8} {'peak MB':>8}"
        )
        for name, r in results.items():
            tok = r["tokens"] or tokens or 0
            ratio = f"{base['wall'] / r['wall']:.1f}x" if base else "-"
            per_core = f"{base['cpu'] / r['cpu']:.1f}x" if base else "-"
            print(
                f"{name:<10} {r['instances']:>10} {r['wall']:>8.2f} {r['cpu']:>8.2f} {tok / r['wall'] / 1e6:>8.3f} "
                f"{r['instances'] / r['wall']:>9.0f} {r['instances'] / r['cpu']:>10.0f} {ratio:>7} {per_core:>8} "
                f"{r['peak_rss_mb']:>8.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
