"""tfrx convert."""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

from tfrx.cli._common import CliError, add_on_error, add_progress, cli_message

DESCRIPTION = """Convert datasets to and from TFRecord shards.

  tfrx convert photos/ out/photos-train --num-shards 16       image folder, one subfolder per class
  tfrx convert table.csv out/table-train --max-records-per-shard 100000
  tfrx convert rows.jsonl out/rows --spec '{"label": "int64"}'
  tfrx convert data.parquet out/data --output-compression gzip
  tfrx convert 'out/table-train.tfrecord-*' table.parquet     TFRecords to Parquet or JSON Lines
  tfrx convert events.out.tfevents.123 events.jsonl --raw     any records, as bytes

The input format comes from the file name (a folder is an image folder; .csv,
.tsv, .jsonl/.ndjson, .parquet; anything else is TFRecord) or --from. Output
shards are named OUTPUT.tfrecord-00000-of-00016, with the manifest in the
hidden folder beside them (.tfrx/NAME.manifest.json). Bad inputs stop the
conversion unless --on-error skip|warn, and are counted in the summary.

From TFRecords, a SequenceExample's feature lists become nested lists (JSON
Lines: {"context": {...}, "feature_lists": {...}}; Parquet: list<list<...>>
columns), and converting such files back gives SequenceExamples. Records
that are not Examples (a TensorBoard event file, other protos) are bad
inputs; --raw converts every record as its bytes instead (a 'record'
column), and converts such a table back into the same records.
"""

_INPUTS = ["images", "csv", "jsonl", "parquet", "tfrecord"]


def add_arguments(p) -> None:
    p.add_argument("input", nargs="+", metavar="INPUT", help="image folder, CSV/JSONL/Parquet file, or TFRecord files")
    p.add_argument("output", metavar="OUTPUT", help="output prefix for TFRecord shards, or a .parquet / .jsonl file")
    p.add_argument("--from", dest="source_format", choices=_INPUTS, help="input format (default: from the name)")
    p.add_argument(
        "--to",
        dest="target_format",
        choices=["tfrecord", "parquet", "jsonl"],
        help="output format (default: from the output name)",
    )
    s = p.add_argument_group("sharding (TFRecord output)")
    s.add_argument("--num-shards", type=int, metavar="N")
    s.add_argument("--max-records-per-shard", type=int, metavar="N")
    s.add_argument("--max-bytes-per-shard", type=_size, metavar="BYTES", help="e.g. 200MB")
    s.add_argument(
        "--output-compression",
        type=str.lower,
        choices=["none", "gzip", "zlib"],
        default=None,
        help="compression of the TFRecord output (default none), as in 'tfrx reshard'",
    )
    s.add_argument("--naming", default="tfds", help="'tfds' or a template with {prefix}, {index}, {total}")
    t = p.add_argument_group("tables")
    t.add_argument(
        "--spec",
        metavar="JSON",
        help='kinds of columns, e.g. \'{"age": "int64", "name": "bytes"}\' '
        "(or @file.json; also the output of 'tfrx schema --json')",
    )
    t.add_argument("--delimiter", default=",", help="CSV field delimiter (default ','; '\\t' for .tsv)")
    i = p.add_argument_group("images")
    i.add_argument("--resize", metavar="HxW", type=_hw, help="resize every image to HxW (e.g. 224x224)")
    i.add_argument("--reencode", choices=["jpeg", "png"], help="re-encode every image")
    i.add_argument("--quality", type=int, default=95, help="JPEG quality when re-encoding (default 95)")
    i.add_argument(
        "--validate",
        choices=["full", "header"],
        default="full",
        help="decode every image (full, the default) or read only headers (faster)",
    )
    i.add_argument("--no-shuffle", action="store_true", help="keep class/file order instead of a seeded shuffle")
    i.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="threads decoding images, processes parsing CSV files over 16 MB (default: all cores)",
    )
    add_on_error(
        p,
        "bad inputs (a damaged record, a row that does not fit, an image that does not decode): "
        "stop (raise, the default), leave them out and count them (skip), or also warn (warn)",
    )
    p.add_argument(
        "--raw",
        action="store_true",
        help="TFRecords to tables: write each record's bytes as they are (a 'record' column), "
        "whatever the payload (records that are not Examples are otherwise bad inputs); "
        "JSON Lines / Parquet to TFRecords: write such a 'record' column back as the records",
    )
    p.add_argument(
        "--compression",
        type=str.lower,
        choices=["auto", "none", "gzip", "zlib"],
        default=None,
        help="compression of TFRecord input (default: detected), as in every command",
    )
    # Its former name; and, converting to TFRecord, --compression used to name the output's compression.
    p.add_argument(
        "--input-compression", type=str.lower, choices=["auto", "none", "gzip", "zlib"], help=argparse.SUPPRESS
    )
    add_progress(p)


def _compressions(args, src: str) -> tuple[str, str]:
    """``(input, output)`` compression; the former spellings keep working for one release, with a warning."""
    given, output = args.compression, args.output_compression
    if args.input_compression is not None:
        if given is not None:
            raise CliError("pass --compression only (--input-compression is its former name)")
        warnings.warn(
            "--input-compression is deprecated and will be removed in the next release; pass --compression",
            FutureWarning,
            stacklevel=2,
        )
        given = args.input_compression
    if src != "tfrecord" and given is not None and output is None:
        if given == "auto":
            raise CliError(f"--compression auto: a {src} input has no TFRecord compression to detect")
        warnings.warn(
            f"--compression names the input's compression, as in every command; pass --output-compression {given} "
            "for the TFRecord output (--compression is taken as that for now, and will not be in the next release)",
            FutureWarning,
            stacklevel=2,
        )
        given, output = None, given
    return given or "auto", output or "none"


def _size(text: str) -> int:
    units = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "G": 1 << 30, "GB": 1 << 30}
    t = text.strip().upper()
    num = t.rstrip("KMGB")
    unit = t[len(num) :]
    try:
        return int(float(num) * units[unit])
    except (ValueError, KeyError):
        import argparse

        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 200MB)") from None


def _hw(text: str):
    import argparse

    try:
        h, w = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HxW such as 224x224, got {text!r}") from None
    if h < 1 or w < 1:
        raise argparse.ArgumentTypeError(f"sizes must be positive, got {text!r}")
    return (h, w)


def _source_format(args) -> str:
    if args.source_format:
        return args.source_format
    first = args.input[0]
    if os.path.isdir(first):
        return "images"
    lower = first.lower()
    for suffix, fmt in (
        (".csv", "csv"),
        (".tsv", "csv"),
        (".jsonl", "jsonl"),
        (".ndjson", "jsonl"),
        (".parquet", "parquet"),
        (".pq", "parquet"),
    ):
        if lower.endswith(suffix):
            return fmt
    return "tfrecord"


def _target_format(args) -> str:
    if args.target_format:
        return args.target_format
    lower = args.output.lower()
    if lower.endswith((".parquet", ".pq")):
        return "parquet"
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    return "tfrecord"


def _spec(text):
    if text is None:
        return None
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as f:
            text = f.read()
    try:
        spec = json.loads(text)
    except ValueError as e:
        raise CliError(f"--spec is not valid JSON: {e}") from None
    if isinstance(spec, dict) and "features" in spec and isinstance(spec["features"], dict):
        from tfrx.parsing import features_from_json

        spec = features_from_json(json.dumps(spec))
    if not isinstance(spec, dict):
        raise CliError("--spec must be a JSON object mapping column names to kinds")
    return spec


def run(args) -> int:
    from tfrx.tools import convert as cv

    src, dst = _source_format(args), _target_format(args)
    input_compression, output_compression = _compressions(args, src)
    common = {"on_error": args.on_error, "progress": args.progress}
    shard = {
        "num_shards": args.num_shards,
        "max_records_per_shard": args.max_records_per_shard,
        "max_bytes_per_shard": args.max_bytes_per_shard,
        "compression": None if output_compression == "none" else output_compression,
        "naming": args.naming,
    }
    if args.num_shards is not None and (args.max_records_per_shard is not None or args.max_bytes_per_shard is not None):
        raise CliError("pass --num-shards, or --max-records-per-shard / --max-bytes-per-shard, not both")
    if src != "tfrecord" and len(args.input) > 1:
        raise CliError(f"{src} input is one {'folder' if src == 'images' else 'file'}, got {len(args.input)}")
    if src == "tfrecord":
        summary = _from_tfrecord(args, dst, common, input_compression)
    elif args.raw and src not in ("jsonl", "parquet"):
        raise CliError("--raw converts TFRecords to and from JSON Lines or Parquet, not " + src)
    elif dst != "tfrecord":
        raise CliError(f"{src} converts to TFRecord only; give an output prefix without a .parquet/.jsonl suffix")
    elif src == "images":
        summary = cv.images_to_tfrecord(
            args.input[0],
            args.output,
            resize=args.resize,
            reencode=args.reencode,
            quality=args.quality,
            validate=args.validate,
            shuffle=not args.no_shuffle,
            seed=args.seed,
            num_parallel_calls=args.workers,
            **shard,
            **common,
        )
    else:
        if not os.path.exists(args.input[0]):
            raise FileNotFoundError(2, "No such file or directory", args.input[0])
        spec = _spec(args.spec)
        if src == "csv":
            delimiter = "\t" if args.input[0].lower().endswith(".tsv") and args.delimiter == "," else args.delimiter
            delimiter = "\t" if delimiter == "\\t" else delimiter
            summary = cv.csv_to_tfrecord(
                args.input[0],
                args.output,
                spec=spec,
                delimiter=delimiter,
                num_parallel_calls=args.workers,
                **shard,
                **common,
            )
        elif src == "jsonl":
            summary = cv.jsonl_to_tfrecord(args.input[0], args.output, spec=spec, raw=args.raw, **shard, **common)
        else:
            summary = cv.parquet_to_tfrecord(args.input[0], args.output, spec=spec, raw=args.raw, **shard, **common)
    return _report(summary)


def _from_tfrecord(args, dst: str, common: dict, input_compression: str | None):
    """TFRecords to Parquet or JSON Lines."""
    from tfrx.tools import convert as cv

    if dst == "tfrecord":
        raise CliError("TFRecord to TFRecord is 'tfrx reshard'")
    comp = "" if input_compression == "none" else input_compression
    if dst == "parquet":
        return cv.tfrecord_to_parquet(args.input, args.output, compression=comp, raw=args.raw, **common)
    return cv.tfrecord_to_jsonl(args.input, args.output, compression=comp, raw=args.raw, **common)


def _report(summary) -> int:
    """Prints the summary and the paths written; the exit status."""
    print(str(summary), file=sys.stderr)
    for path in summary.paths:
        print(path)
    if summary.skipped:
        for message in summary.errors[:10]:
            print(f"  skipped: {cli_message(message, 'convert')}", file=sys.stderr)
        if summary.skipped > 10:
            print(f"  ... and {summary.skipped - 10} more", file=sys.stderr)
    # Every input was bad: nothing was converted, which is never a success.
    return 1 if summary.skipped and not summary.records else 0
