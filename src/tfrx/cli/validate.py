"""tfrx validate."""

from __future__ import annotations

import json

from tfrx.cli._common import CliError, add_input, payload_check, require_examples, sources

DESCRIPTION = """Check data against a TensorFlow Metadata schema (schema.pbtxt), as TFDV's validate_statistics.

PATH is TFRecord files of Examples / SequenceExamples (their statistics are
computed) or a statistics file (stats.pb, TFX FeatureStats.pb). Reports
missing or new features, wrong types, values outside their domains, value
counts outside the schema's, and with --previous / --serving drift and skew
beyond the schema's comparator thresholds. Prints a table (or --json), writes
the Anomalies proto with -o. Exit status 1 when anomalies are found (for CI),
0 when none; needs tfrx[validate].
"""


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument("--schema", required=True, metavar="FILE", help="the schema (schema.pbtxt, text or binary)")
    p.add_argument("--previous", metavar="PATH", help="the previous span (records or statistics): drift")
    p.add_argument("--serving", metavar="PATH", help="serving data (records or statistics): training/serving skew")
    p.add_argument("--environment", metavar="NAME", help="the schema environment of the data (e.g. SERVING)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the Anomalies proto (protobuf text) here")
    p.add_argument("--json", action="store_true", help="print the anomalies as JSON")


def _is_statistics(source, args) -> bool:
    """Whether ``source`` holds statistics rather than Example records."""
    from tfrx.codec._sniff import EMPTY, OTHER

    if not isinstance(source, str):
        return False
    try:
        kind, _ = payload_check(source, args)
    except Exception:
        return True  # not TFRecord at all: a binary or text proto
    return kind in (OTHER, EMPTY)


def _statistics(paths: list, args):
    from tfrx.cli._common import compression_arg, storage_options
    from tfrx.validate import generate_statistics, load_statistics

    if len(paths) == 1 and _is_statistics(paths[0], args):
        try:
            return load_statistics(paths[0])
        except ValueError as e:
            raise CliError(f"{paths[0]!r} holds neither Example records nor statistics: {e}") from None
    require_examples(paths, args)
    return generate_statistics(
        paths, compression=compression_arg(args), on_error=args.on_error, storage_options=storage_options(args)
    )


def _other(path: str | None, args):
    if path is None:
        return None
    from types import SimpleNamespace

    other = SimpleNamespace(**vars(args))
    other.paths = [path]
    return _statistics(sources(other), other)


def run(args) -> int:
    from tfrx.validate import anomalies_to_dicts, format_anomalies, load_schema, validate_statistics, write_anomalies

    try:
        schema = load_schema(args.schema)
    except FileNotFoundError:
        raise CliError(f"no such schema file: {args.schema!r}") from None
    stats = _statistics(sources(args), args)
    anomalies = validate_statistics(
        stats,
        schema,
        environment=args.environment,
        previous_statistics=_other(args.previous, args),
        serving_statistics=_other(args.serving, args),
    )
    if args.output:
        write_anomalies(anomalies, args.output)
    if args.json:
        print(
            json.dumps({"data_missing": anomalies.data_missing, "anomalies": anomalies_to_dicts(anomalies)}, indent=2)
        )
    else:
        print(format_anomalies(anomalies), end="")
    return 1 if (anomalies.anomaly_info or anomalies.data_missing) else 0
