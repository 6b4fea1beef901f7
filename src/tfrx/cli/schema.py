"""tfrx schema."""

from __future__ import annotations

import sys

from tfrx.cli._common import CliError, add_input, not_examples_message, payload_check, require_examples, sources

DESCRIPTION = """Infer the feature spec that parses the records, from the first records.

Prints Python code for tfrx.parse_example (the same spec works with
tf.io.parse_example after replacing 'tfrx.' with 'tf.io.' and the dtypes with
tf.int64 / tf.float32 / tf.string), or --json for tfrx.features_from_json.

--infer infers a TensorFlow Metadata Schema as TFDV's infer_schema does
(types, presence, value counts or shapes, string domains) from the
statistics of all the records (or of a statistics file given with
--from-stats) and writes it as schema.pbtxt (-o, else stdout); needs
tfrx[validate].
"""


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument(
        "-n", "--max-records", type=int, default=1000, metavar="N", help="records to look at per file (default 1000)"
    )
    p.add_argument("--json", action="store_true", help="print JSON (tfrx.features_from_json reads it back)")
    p.add_argument("--infer", action="store_true", help="infer TFDV's Schema (schema.pbtxt) from statistics")
    p.add_argument("-o", "--output", metavar="FILE", help="--infer: where to write the schema (default: stdout)")
    p.add_argument(
        "--from-stats",
        action="store_true",
        help="--infer: PATH is a statistics file (stats.pb, TFX FeatureStats.pb) rather than records",
    )
    p.add_argument(
        "--max-string-domain-size",
        type=int,
        default=100,
        metavar="N",
        help="--infer: largest string domain to write (TFDV's default 100)",
    )


def run_infer(args) -> int:
    """--infer: TFDV's schema inferred from the statistics of the records (or of a statistics file)."""
    from google.protobuf import text_format

    from tfrx.validate import generate_statistics, infer_schema, load_statistics, write_schema

    if args.from_stats:
        if len(args.paths) != 1:
            raise CliError("--from-stats takes one statistics file")
        stats = load_statistics(args.paths[0])
    else:
        from tfrx.cli._common import compression_arg, storage_options

        srcs = sources(args)
        require_examples(srcs, args)
        stats = generate_statistics(
            srcs, compression=compression_arg(args), on_error=args.on_error, storage_options=storage_options(args)
        )
    schema = infer_schema(stats, max_string_domain_size=args.max_string_domain_size)
    if args.output:
        write_schema(schema, args.output)
    else:
        print(text_format.MessageToString(schema), end="")
    return 0


def run(args) -> int:
    if args.infer:
        return run_infer(args)
    if args.output or args.from_stats:
        raise CliError("-o and --from-stats go with --infer")
    from tfrx.parsing import features_to_json, infer_features
    from tfrx.parsing._specs import features_to_python
    from tfrx.codec._sniff import EMPTY, OTHER, SEQUENCE_EXAMPLE

    records = []
    kinds = set()
    for source in sources(args):
        kind, sample = payload_check(source, args, min(args.max_records, 32))
        if kind == OTHER:
            raise CliError(not_examples_message(source, sample))
        if kind != EMPTY:
            kinds.add(kind)
        from tfrx.cli._common import first_records

        records.extend(first_records(source, args, args.max_records))
    if not records:
        print("tfrx schema: note: no records to infer from; the spec is empty", file=sys.stderr)
        spec = {}
    else:
        spec = infer_features(records, kind="sequence" if SEQUENCE_EXAMPLE in kinds else "example")
    print(features_to_json(spec, indent=2) if args.json else features_to_python(spec), end="\n" if args.json else "")
    return 0
