"""tfrx stats."""

from __future__ import annotations

import json
import re

from tfrx.cli._common import (
    CliError,
    add_input,
    add_progress,
    not_examples_message,
    payload_check,
    reader,
    require_examples,
    sources,
)

DESCRIPTION = """Per-feature statistics of Example or SequenceExample records.

For each feature: in how many records it is present (and empty), its kind,
values per record (min/max/mean), numeric min/max/mean, and the most common
bytes values. Feature lists also report steps per record.

--format tfdv computes TensorFlow Data Validation's statistics instead and
writes them as a DatasetFeatureStatisticsList (-o stats.pb: binary, what
tfdv.load_stats_binary and Facets read; .pbtxt: text), with --weight-feature
and --slice-feature as TFDV's StatsOptions; needs tfrx[validate].
"""


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument(
        "-n", "--max-records", type=int, default=-1, metavar="N", help="records to read in all (default: all)"
    )
    p.add_argument("--top", type=int, default=3, metavar="K", help="most common bytes values to show (default 3)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--format",
        choices=["table", "json", "tfdv"],
        default=None,
        help="table (default), json (same as --json), or tfdv: TFDV's DatasetFeatureStatisticsList",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="--format tfdv: where to write (default: text on stdout)")
    p.add_argument("--weight-feature", metavar="NAME", help="--format tfdv: the feature holding each record's weight")
    p.add_argument("--slice-feature", metavar="NAME", help="--format tfdv: also a dataset per value of this feature")
    p.add_argument("--seed", type=int, default=0, help="--format tfdv: seed of the quantile and top-k sketches")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="--format tfdv: read the files in N processes")
    p.add_argument(
        "--schema",
        metavar="FILE",
        help="--format tfdv: a schema.pbtxt whose categorical int features get string statistics (as TFDV)",
    )
    add_progress(p)


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


_LONG = re.compile(r"\.\.\. \(\d+ bytes, blake2b [0-9a-f]+\)$")


def _short(label: str) -> str:
    """A top value for the table: 30 characters, keeping a long value's length and digest (what tells them apart)."""
    if len(label) <= 30:
        return label
    m = _LONG.search(label)
    return label[:20] + m.group(0) if m else label[:30] + "..."


def run_tfdv(args) -> int:
    """--format tfdv: TFDV's statistics of the inputs, written to -o or printed as text."""
    from tfrx.cli._common import compression_arg, storage_options
    from tfrx.validate import StatsOptions, generate_statistics, write_statistics

    srcs = sources(args)
    require_examples(srcs, args)
    from tfrx.validate import load_schema

    schema = load_schema(args.schema) if args.schema else None
    options = StatsOptions(
        weight_feature=args.weight_feature, slice_feature=args.slice_feature, seed=args.seed, schema=schema
    )
    stats = generate_statistics(
        srcs,
        options,
        compression=compression_arg(args),
        on_error=args.on_error,
        max_records=None if args.max_records < 0 else args.max_records,
        storage_options=storage_options(args),
        num_workers=args.workers,
    )
    if args.output:
        write_statistics(stats, args.output)
    else:
        from google.protobuf import text_format

        print(text_format.MessageToString(stats), end="")
    return 0


def run(args) -> int:
    if args.format == "tfdv":
        return run_tfdv(args)
    if args.output or args.weight_feature or args.slice_feature or args.schema:
        raise CliError("-o, --weight-feature, --slice-feature and --schema go with --format tfdv")
    if args.format == "json":
        args.json = True
    from tfrx._progress import progress_bar
    from tfrx.codec._sniff import OTHER, SEQUENCE_EXAMPLE
    from tfrx.tools._stats import DatasetStats, compute_stats

    srcs = sources(args)
    stats = None
    limit = None if args.max_records < 0 else args.max_records
    with progress_bar(None, desc="stats", enabled=args.progress) as bar:
        for source in srcs:
            kind, sample = payload_check(source, args)
            if kind == OTHER:
                raise CliError(not_examples_message(source, sample))
            seq = kind == SEQUENCE_EXAMPLE
            if stats is None:
                stats = DatasetStats(payload="SequenceExample" if seq else "Example")
            with reader(source, args) as r:

                def batches():
                    for b in r.iter_batches():
                        bar.update(len(b))
                        yield b

                compute_stats(batches(), sequence=seq, max_records=limit, stats=stats)
            if limit is not None and stats.records >= limit:
                break
    stats = stats or DatasetStats()
    if args.json:
        print(json.dumps(stats.to_dict(args.top), indent=2, ensure_ascii=False))
        return 0
    _print_table(stats, args.top)
    return 0


def _print_table(stats, top: int) -> None:
    """The statistics as aligned text: one table for features, one for feature lists."""
    print(f"{stats.records} records ({stats.payload})")
    for title, group in (("features", stats.features), ("feature_lists", stats.feature_lists)):
        if not group:
            continue
        print(f"\n{title}:")
        header = ["name", "kind", "present", "empty", "values min/max/mean"]
        if title == "feature_lists":
            header.append("steps min/max/mean")
        header += ["numeric min/max/mean", "top"]
        rows = [header]
        for name, s in sorted(group.items()):
            row = [
                name,
                s.kind,
                f"{s.present}",
                f"{s.empty}",
                f"{_fmt(s.num_values_min)}/{_fmt(s.num_values_max)}/{_fmt(s.num_values_mean)}",
            ]
            if title == "feature_lists":
                row.append(f"{_fmt(s.steps_min)}/{_fmt(s.steps_max)}/{_fmt(s.steps_mean)}")
            row.append(f"{_fmt(s.value_min)}/{_fmt(s.value_max)}/{_fmt(s.value_mean)}" if s.value_count else "-")
            d = s.to_dict(top)
            row.append(", ".join(f"{_short(v)!r}x{c}" for v, c in d.get("top", [])) or "-")
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
        for r in rows:
            print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
