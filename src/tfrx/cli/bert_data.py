"""tfrx bert-data."""

from __future__ import annotations

import os
import sys

from tfrx.cli._common import CliError, add_progress, add_storage_options, storage_options

DESCRIPTION = """Raw text to BERT pre-training TFRecords (masked LM + next sentence prediction).

  tfrx bert-data 'wiki/*.txt' --vocab_file vocab.txt -o out/bert-train --num-shards 16
  tfrx bert-data corpus.txt --vocab_file vocab.txt --output_file a.tfrecord,b.tfrecord \\
      --max_seq_length 128 --max_predictions_per_seq 20 --masked_lm_prob 0.15 \\
      --dupe_factor 10 --random_seed 12345 --do_lower_case --do_whole_word_mask
  tfrx bert-data 'docs/*.jsonl' --input-format jsonl --vocab_file vocab.txt -o out/bert --mode fast --workers 8

--mode exact (default) writes the records TensorFlow Model Garden's
create_pretraining_data.py writes for the same input, vocab, flags and seed,
record for record. --mode fast tokenizes in batches (Hugging Face tokenizers
for non-ASCII text), draws with NumPy, streams through a shuffle buffer and
can use several processes.
Every reference flag is accepted under its own name (--max_seq_length) and
with dashes (--max-seq-length); booleans take --flag, --noflag or --flag=false.
See docs/bert.md.
"""


def _bool(text: str) -> bool:
    low = str(text).lower()
    if low in ("1", "true", "yes", "y", "t"):
        return True
    if low in ("0", "false", "no", "n", "f"):
        return False
    raise ValueError(text)


_bool.__name__ = "boolean"


def _flag(p, name: str, **kw) -> None:
    p.add_argument(f"--{name}", f"--{name.replace('_', '-')}", dest=name, **kw)


def _bool_flag(p, name: str, default: bool, help_text: str) -> None:
    p.add_argument(
        f"--{name}",
        f"--{name.replace('_', '-')}",
        dest=name,
        nargs="?",
        const=True,
        type=_bool,
        default=default,
        metavar="BOOL",
        help=f"{help_text} (default {str(default).lower()})",
    )
    p.add_argument(
        f"--no{name}", f"--no-{name.replace('_', '-')}", dest=name, action="store_false", help=argparse_suppress()
    )


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="*", metavar="INPUT", help="text files, globs or URLs (or --input_file)")
    _flag(p, "input_file", default=None, help="comma-separated input files or globs (the reference's flag)")
    _flag(p, "vocab_file", required=True, help="WordPiece vocabulary, one token per line")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", metavar="PREFIX", help="write PREFIX.tfrecord-00000-of-N shards (TFDS names)")
    _flag(out, "output_file", default=None, help="comma-separated output files (the reference's flag)")
    out.add_argument(
        "--output_dir",
        "--output-dir",
        dest="output_dir",
        default=None,
        metavar="DIR",
        help="Cerebras' form: write DIR/NAME.tfrecord-00000-of-N shards (NAME from --name)",
    )
    p.add_argument("--name", default="examples", help="with --output_dir, the shards' prefix (default 'examples')")
    p.add_argument(
        "--num-shards",
        "--num_output_files",
        dest="num_shards",
        type=int,
        default=1,
        metavar="N",
        help="shards with -o or --output_dir (default 1)",
    )
    p.add_argument(
        "--gzip_compress",
        "--gzip-compress",
        "--gzip",
        dest="gzip_compress",
        nargs="?",
        const=True,
        type=_bool,
        default=False,
        metavar="BOOL",
        help="GZIP-compressed files",
    )
    p.add_argument("--mode", choices=["exact", "fast"], default="exact", help="exact (default) or fast")
    p.add_argument(
        "--input-format",
        choices=["lines", "text", "jsonl"],
        default="lines",
        help="lines: a sentence per line, blank line between documents (default); "
        "text: a document per file; jsonl: a document per JSON line",
    )
    p.add_argument("--text-field", default="text", help="JSON Lines field holding the text (default 'text')")
    p.add_argument(
        "--segmenter",
        choices=["pysbd", "spacy", "lines", "regex"],
        default=None,
        help="sentence splitter for text/jsonl input (default pysbd when installed, else regex)",
    )
    cz = p.add_argument_group("Cerebras input options")
    _flag(cz, "metadata_files", default=None, help="comma-separated files listing data files, one per line")
    _flag(cz, "input_files_prefix", default="", help="directory the metadata files' paths are relative to")
    _flag(
        cz,
        "multiple_docs_separator",
        default=None,
        help="with --input-format text: a line equal to this separates documents in one file",
    )
    _bool_flag(cz, "single_sentence_per_line", False, "with --input-format text: each line is a sentence")
    g = p.add_argument_group("reference flags")
    _flag(g, "max_seq_length", type=int, default=128, help="default 128")
    _flag(g, "max_predictions_per_seq", type=int, default=20, help="default 20")
    _flag(g, "masked_lm_prob", type=float, default=0.15, help="default 0.15")
    _flag(g, "short_seq_prob", type=float, default=0.1, help="default 0.1")
    _flag(g, "dupe_factor", type=int, default=10, help="default 10")
    _flag(g, "random_seed", type=int, default=12345, help="default 12345")
    _bool_flag(g, "do_lower_case", True, "lower-case and strip accents")
    _bool_flag(g, "do_whole_word_mask", False, "mask whole words")
    g.add_argument(
        "--mask_whole_word",
        "--mask-whole-word",
        dest="do_whole_word_mask",
        action="store_const",
        const=True,
        help="Cerebras' name for --do_whole_word_mask",
    )
    g.add_argument("--seed", dest="random_seed", type=int, help="Cerebras' name for --random_seed")
    c = p.add_argument_group("Cerebras variants")
    _bool_flag(c, "inverted_mask", False, "input_mask 1 on padding, 0 on tokens")
    _bool_flag(c, "mlm_only", False, "single segments, no segment_ids / next_sentence_labels")
    _bool_flag(c, "disable_masking", False, "write the original tokens, no masked_lm_* features")
    _flag(c, "min_short_seq_length", type=int, default=2, help="shortest target of a short-sequence draw (default 2)")
    f = p.add_argument_group("fast mode")
    f.add_argument("--workers", type=int, default=1, metavar="N", help="processes (default 1)")
    f.add_argument(
        "--shuffle-buffer", type=int, default=None, metavar="N", help="instances held for shuffling (default 100000)"
    )
    f.add_argument("--ray", action="store_true", help="run the workers as Ray tasks")
    f.add_argument(
        "--tokenizer",
        choices=["auto", "hf", "reference"],
        default=None,
        help="auto (default): ASCII sentences through the reference tokenizer, others through "
        "Hugging Face tokenizers; hf: all through tokenizers; reference: all through the reference's",
    )
    p.add_argument("--no-metadata", dest="metadata", action="store_false", help="do not write .tfrx/PREFIX.bert.json")
    add_storage_options(p)
    add_progress(p)


def run(args) -> int:
    from tfrx.text._bert import create_pretraining_data

    inputs = list(args.paths)
    if args.input_file:
        inputs.extend(x for x in args.input_file.split(",") if x)
    metadata_files = [x for x in args.metadata_files.split(",") if x] if args.metadata_files else None
    if not inputs and not metadata_files:
        raise CliError("no input: pass text files or globs, --input_file or --metadata_files")
    segmenter = "lines" if args.single_sentence_per_line else args.segmenter
    if args.output_dir is not None:
        args.output = os.path.join(args.output_dir, args.name)
    if args.output is None and args.num_shards != 1:
        raise CliError(
            "--num-shards goes with -o PREFIX; with --output_file the number of files is the number of names"
        )
    output = args.output if args.output is not None else [x for x in args.output_file.split(",") if x]
    fast = {}
    if args.mode == "fast":
        fast = {"num_parallel_calls": args.workers, "use_ray": args.ray, "tokenizer": args.tokenizer or "auto"}
        if args.shuffle_buffer is not None:
            fast["shuffle_buffer"] = args.shuffle_buffer
    elif args.workers != 1 or args.ray or args.shuffle_buffer is not None or args.tokenizer is not None:
        raise CliError("--workers, --ray, --shuffle-buffer and --tokenizer apply to --mode fast")
    flags = {
        k: getattr(args, k)
        for k in (
            "max_seq_length",
            "max_predictions_per_seq",
            "masked_lm_prob",
            "short_seq_prob",
            "dupe_factor",
            "random_seed",
            "do_lower_case",
            "do_whole_word_mask",
            "inverted_mask",
            "mlm_only",
            "disable_masking",
            "min_short_seq_length",
        )
    }
    try:
        result = create_pretraining_data(
            inputs,
            args.vocab_file,
            output,
            mode=args.mode,
            num_shards=args.num_shards,
            compression="gzip" if args.gzip_compress else None,
            input_format=args.input_format,
            segmenter=segmenter,
            text_field=args.text_field,
            document_separator=args.multiple_docs_separator,
            metadata_files=metadata_files,
            input_files_prefix=args.input_files_prefix,
            storage_options=storage_options(args),
            progress=args.progress,
            metadata=args.metadata,
            **fast,
            **flags,
        )
    except (FileNotFoundError, ValueError, ImportError) as e:
        raise CliError(str(e)) from None
    print(
        f"{result.num_instances} instances from {result.num_documents} documents ({result.num_tokens} tokens) "
        f"in {len(result.paths)} files, {result.seconds:.1f}s"
        + (f"; metadata {result.metadata_path}" if result.metadata_path else ""),
        file=sys.stderr,
    )
    for path in result.paths:
        print(path)
    return 0
