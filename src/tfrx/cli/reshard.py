"""tfrx reshard."""

from __future__ import annotations

import sys

from tfrx.cli._common import CliError, add_input, add_progress, reader, sources, storage_options

DESCRIPTION = """Merge or split TFRecord files into new shards, optionally changing compression.

  tfrx reshard 'train-*.tfrecord' -o out/data-train --num-shards 16 --output-compression gzip
  tfrx reshard big.tfrecord -o out/big --max-bytes-per-shard 200MB

Records keep their order: reading the new shards in name order gives the
records of the inputs in order. Records are copied as they are (CRCs are
checked while reading). --compression is the inputs' compression (detected
when left out); --output-compression is the new shards' (default none).
"""


def add_arguments(p) -> None:
    add_input(p, stdin=False)
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="PREFIX",
        help="output prefix (PREFIX.tfrecord-00000-of-N); a URL is written with the same storage options",
    )
    p.add_argument("--num-shards", type=int, metavar="N")
    p.add_argument("--max-records-per-shard", type=int, metavar="N")
    from tfrx.cli.convert import _size

    p.add_argument("--max-bytes-per-shard", type=_size, metavar="BYTES")
    p.add_argument(
        "--output-compression",
        type=str.lower,
        choices=["none", "gzip", "zlib"],
        default="none",
        help="compression of the new shards (default none)",
    )
    p.add_argument("--naming", default="tfds", help="'tfds' or a template with {prefix}, {index}, {total}")
    p.add_argument("--index", action="store_true", help="write an index file beside each shard")
    add_progress(p)


def run(args) -> int:
    from tfrx.cli.count import count_source
    from tfrx._progress import progress_bar
    from tfrx.io._sharded import ShardedWriter

    if args.num_shards is not None and (args.max_records_per_shard is not None or args.max_bytes_per_shard is not None):
        raise CliError("pass --num-shards, or --max-records-per-shard / --max-bytes-per-shard, not both")
    srcs = sources(args)
    total = sum(count_source(s, args) for s in srcs) if args.num_shards is not None else None
    writer = ShardedWriter(
        args.output,
        num_shards=args.num_shards,
        max_records_per_shard=args.max_records_per_shard,
        max_bytes_per_shard=args.max_bytes_per_shard,
        compression=None if args.output_compression == "none" else args.output_compression,
        naming=args.naming,
        index=args.index,
        total_records=total,
        storage_options=storage_options(args),
    )
    try:
        with progress_bar(total, desc="reshard", enabled=args.progress) as bar:
            for source in srcs:
                with reader(source, args) as r:
                    for batch in r.iter_batches():
                        writer.write_many(batch)
                        bar.update(len(batch))
    except BaseException:
        writer.abort()
        raise
    paths = writer.close()
    print(f"{writer.records_written} records in {len(paths)} shards; manifest {writer.manifest_path}", file=sys.stderr)
    for path in paths:
        print(path)
    return 0
