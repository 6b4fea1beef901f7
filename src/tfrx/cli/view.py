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
them; SequenceExamples show their steps. See docs/viewer.md.
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
        "--index-cache",
        metavar="DIR",
        default=None,
        help="where record indexes go (default: the user's index cache, $TFRX_CACHE_DIR or ~/.cache/tfrx)",
    )
    add_storage_options(p)


def run(args) -> int:
    from tfrx.viewer.server import serve

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
    )
    return 0
