"""tfrx count."""

from __future__ import annotations

import sys

from tfrx.cli._common import add_input, add_progress, cli_message, name_of, reader, sources

DESCRIPTION = """Count the records of TFRecord files (one line per file, then the total).

Length CRCs are checked; data CRCs are not (use 'tfrx verify' for that).
A damaged file is reported on stderr and the others are still counted
(exit status 1).
"""


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument("--total", action="store_true", help="print only the total")
    add_progress(p)


def count_source(source, args) -> int:
    n = 0
    with reader(source, args, verify=False) as r:
        for batch in r.iter_batches():
            n += len(batch)
    return n


def run(args) -> int:
    from tfrx._progress import progress_bar

    from tfrx.errors import CorruptRecordError

    srcs = sources(args)
    failed = 0
    total = 0
    lines = []
    with progress_bar(len(srcs), desc="count", unit="file", enabled=args.progress if len(srcs) > 1 else False) as bar:
        for source in srcs:
            try:
                n = count_source(source, args)
            except CorruptRecordError as e:
                from tfrx.cli._common import not_tfrecord_message

                wrong = not_tfrecord_message(e)
                failed = max(failed, 2 if wrong else 1)
                print(f"tfrx count: error: {cli_message(str(wrong or e))}", file=sys.stderr)
                continue
            finally:
                bar.update(1)
            total += n
            lines.append(f"{n}\t{name_of(source)}")
    if args.total:
        print(total)
    else:
        for line in lines:
            print(line)
        if len(srcs) > 1:
            print(f"{total}\ttotal")
    return failed
