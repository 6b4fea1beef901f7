"""tfrx view."""

from __future__ import annotations

from tfrx.cli._common import add_storage_options, storage_options

DESCRIPTION = """Look inside TFRecord files in the browser.

Starts a local web server (127.0.0.1 unless --host says otherwise) and opens
the page at an address that carries this launch's token (every API call must
present it; requests naming another Host are refused). The page shows records page by page (through the record index, built on first
use, so large files open at once), jump to a record, random samples, a filter
expression (label == 3 and len(image/object/bbox/xmin) > 2), export of the
selection, the inferred spec, per-feature statistics, the files and their
damage. Images show as thumbnails with Object Detection boxes drawn over
them; SequenceExamples show their steps. The Overview tab shows every
feature's distribution (with --compare, beside another dataset's: train and
eval, span N and N+1), the schema (--schema, else inferred) and the anomalies
found against it; click a value to filter the records. A statistics file
(stats.pb, .pbtxt: tfrx's, TFDV's or TFX's) opens directly. See docs/viewer.md.

  tfrx view train.tfrecord --compare eval.tfrecord --schema schema.pbtxt
  tfrx view stats.pb --compare eval_stats.pb
"""


def add_arguments(p) -> None:
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="files, globs, URLs (gs://, s3://, ...) or TFDS dataset directories"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the page may be reached by besides loopback names and IP addresses "
        "(behind a proxy or a tunnel); other Host headers are refused",
    )
    p.add_argument(
        "--export-max-bytes",
        type=int,
        default=2 << 30,
        metavar="N",
        help="the largest file an export may write (default 2 GiB)",
    )
    p.add_argument(
        "--stats-records",
        type=int,
        default=10_000,
        metavar="N",
        help="records the statistics panel samples at random (default 10000; the page can ask for all)",
    )
    p.add_argument(
        "--compare",
        metavar="OTHER",
        default=None,
        help="records (path, glob, URL) or a statistics file (.pb, .pbtxt) shown beside PATH in the overview",
    )
    p.add_argument(
        "--schema",
        metavar="SCHEMA",
        default=None,
        help="a schema.pbtxt the overview checks the data against (default: inferred from PATH)",
    )
    p.add_argument(
        "--overview-records",
        type=int,
        default=100_000,
        metavar="N",
        help="records the overview reads per dataset; more are sampled at random down to N (default 100000)",
    )
    p.add_argument(
        "--index-cache",
        metavar="DIR",
        default=None,
        help="where record indexes go (default: the user's index cache, $TFRX_CACHE_DIR or ~/.cache/tfrx)",
    )
    add_storage_options(p)


def run(args) -> int:
    from tfrx.cli._common import CliError
    from tfrx.viewer._server import serve

    if args.overview_records < 1:
        raise CliError(f"--overview-records must be at least 1, got {args.overview_records}")
    try:
        serve(
            args.paths,
            host=args.host,
            port=args.port,
            open_browser=not args.no_browser,
            storage_options=storage_options(args),
            stats_records=args.stats_records,
            index_cache_dir=args.index_cache,
            allowed_hosts=args.allow_host,
            export_max_bytes=args.export_max_bytes,
            compare=args.compare,
            schema=args.schema,
            overview_records=args.overview_records,
        )
    except (ValueError, RuntimeError) as e:
        raise CliError(str(e)) from None
    return 0
