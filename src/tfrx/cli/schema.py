"""tfrx schema."""

from __future__ import annotations

import sys

from tfrx.cli._common import CliError, add_input, not_examples_message, payload_check, sources

DESCRIPTION = """Infer the feature spec that parses the records, from the first records.

Prints Python code for tfrx.parse_example (the same spec works with
tf.io.parse_example after replacing 'tfrx.' with 'tf.io.' and the dtypes with
tf.int64 / tf.float32 / tf.string), or --json for tfrx.features_from_json.
"""


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument(
        "-n", "--max-records", type=int, default=1000, metavar="N", help="records to look at per file (default 1000)"
    )
    p.add_argument("--json", action="store_true", help="print JSON (tfrx.features_from_json reads it back)")


def run(args) -> int:
    from tfrx.parsing import features_to_json, infer_features
    from tfrx.parsing.specs import features_to_python
    from tfrx.codec.sniff import EMPTY, OTHER, SEQUENCE_EXAMPLE

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
