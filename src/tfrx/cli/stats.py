"""tfrx stats."""

from __future__ import annotations

import json
import re

from tfrx.cli._common import CliError, add_input, add_progress, not_examples_message, payload_check, reader, sources

DESCRIPTION = """Per-feature statistics of Example or SequenceExample records.

For each feature: in how many records it is present (and empty), its kind,
values per record (min/max/mean), numeric min/max/mean, and the most common
bytes values. Feature lists also report steps per record.
"""


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument(
        "-n", "--max-records", type=int, default=-1, metavar="N", help="records to read in all (default: all)"
    )
    p.add_argument("--top", type=int, default=3, metavar="K", help="most common bytes values to show (default 3)")
    p.add_argument("--json", action="store_true", help="print JSON")
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


def run(args) -> int:
    from tfrx._progress import progress_bar
    from tfrx.codec.sniff import OTHER, SEQUENCE_EXAMPLE
    from tfrx.tools.stats import DatasetStats, compute_stats

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
            d = s.to_dict(args.top)
            row.append(", ".join(f"{_short(v)!r}x{c}" for v, c in d.get("top", [])) or "-")
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
        for r in rows:
            print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0
