"""tfrx index."""

from __future__ import annotations

from tfrx.cli._common import (
    CliError,
    add_allow_incomplete,
    add_progress,
    add_storage_options,
    name_of,
    sources,
    storage_options,
)

DESCRIPTION = """Write a record-offset index file beside each TFRecord file (tfrx.build_index).

The index lets tfrx read any record directly: exact global shuffling and
resuming without reading the files from the start. It goes to the hidden
folder .tfrx/ beside the file (data/.tfrx/train.tfrecord-00000-of-00004.tfrxidx),
where no glob written for the data files (data/train*, data/*-of-*,
data/*.tfrecord*) can pick it up. For URLs (s3://, gs://, ...) the index
object is written there too, where RandomAccessDataset looks for it first.
"""


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="TFRecord files or globs")
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="PATH",
        help="index file name (one input only; default: .tfrx/NAME.tfrxidx beside the input)",
    )
    p.add_argument(
        "--format",
        choices=["tfrx", "dali"],
        default="tfrx",
        help="tfrx's index, or the text index of DALI's tfrecord2idx (default tfrx)",
    )
    p.add_argument("--verify", action="store_true", help="check data CRCs while scanning")
    add_allow_incomplete(p)
    add_storage_options(p)
    add_progress(p)


def run(args) -> int:
    import tfrx

    build = getattr(tfrx, "build_index", None)
    if build is None:
        raise CliError("this version of tfrx has no tfrx.build_index; index files are not available")
    srcs = [s for s in sources(args)]
    if any(not isinstance(s, str) for s in srcs):
        raise CliError("index needs files on disk, not standard input")
    if args.output is not None and len(srcs) != 1:
        raise CliError("--output needs exactly one input file")
    from tfrx.io._paths import with_options

    opts = storage_options(args)
    for source in srcs:
        kwargs = {"format": args.format, "verify": args.verify, "progress": args.progress, "sidecar": True}
        if args.output is not None:
            kwargs["index_path"] = with_options(args.output, opts)
        # Otherwise beside the file or object (sidecar=True; the library's default is the local cache): a
        # GZIP/ZLIB one gets its checkpoint index there (.tfrx/<file>.tfrxzidx).
        index = build(source, **kwargs)
        try:
            records = f"\t{len(index)} records"
        except TypeError:
            records = ""
        print(f"{name_of(source)}{records}")
    return 0
