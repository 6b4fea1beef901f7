"""tfrx verify."""

from __future__ import annotations

import json

from tfrx.cli._common import add_input, add_progress, compression_arg, sources

DESCRIPTION = """Check the length and data CRC of every record.

Exit status 0 when every file is intact, 1 when any is damaged. Each damaged
region is listed with its file, record index and byte range; reading goes on
at the next record whose length and data CRCs verify, so one run finds every
problem and counts every intact record.
"""


def add_arguments(p) -> None:
    add_input(p, on_error=False)  # verify reads on after damage and lists every damaged region
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the damaged files")
    add_progress(p)


def run(args) -> int:
    from tfrx._progress import progress_bar
    from tfrx.tools._verify import source_size, verify_files

    srcs = sources(args)
    bad = 0
    records = 0
    sizes = [source_size(s) for s in srcs]
    total = None if None in sizes else sum(s or 0 for s in sizes)

    with progress_bar(total, desc="verify", unit="B", enabled=args.progress) as bar:
        for source in srcs:
            base = bar.n

            def advance(p, base=base) -> None:
                bar.update(base + p.done - bar.n)

            (check,) = verify_files(
                source, compression=compression_arg(args), progress=advance if bar.active else False
            )
            records += check.records
            if not check.ok:
                bad += 1
            if args.json:
                print(
                    json.dumps(
                        {
                            "path": check.path,
                            "ok": check.ok,
                            "records": check.records,
                            "skipped_records": check.skipped_records,
                            "errors": [_json_error(e, check.region_of(e)) for e in check.errors],
                        }
                    )
                )
                continue
            if check.ok:
                if not args.quiet:
                    print(f"OK\t{check.records} records\t{check.path}")
                continue
            print(f"DAMAGED\t{check.records} readable records, {len(check.errors)} damaged regions\t{check.path}")
            for e in check.errors:
                region = check.region_of(e)
                span = ""
                if region is not None:
                    counted = "1 record" if region.records == 1 else f"{region.records} records"
                    span = f"; bytes {region.start}-{region.end} skipped as {counted}"
                print(f"  {check.path}: {e.kind} at byte {e.offset} (record {e.record_index}): {_plain(e)}{span}")
    if not args.json and len(srcs) > 1:
        print(f"{len(srcs) - bad} of {len(srcs)} files intact, {records} records read")
    return 1 if bad else 0


def _json_error(e, region) -> dict:
    out = {"kind": e.kind, "record": e.record_index, "offset": e.offset, "message": _plain(e)}
    if region is not None:
        out.update(end=region.end, records=region.records)
    if e.compressed_offset is not None:
        out["compressed_offset"] = e.compressed_offset
    return out


def _plain(e) -> str:
    """The error without the reader's advice about on_error, which does not apply here."""
    return str(e).split('; pass on_error="skip"')[0]
