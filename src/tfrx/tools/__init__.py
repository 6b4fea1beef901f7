"""Dataset tools: sharded writing, converters, statistics and verification.

The converters (``tfrx.tools.convert``), statistics (``tfrx.tools.stats``)
and verification (``tfrx.tools.verify``) are imported on first use.
"""

from tfrx._lazy import lazy_names
from tfrx.tools.sharded import ShardedWriter, read_manifest, shard_name, write_examples

__all__ = [
    "ShardedWriter",
    "shard_name",
    "read_manifest",
    "write_examples",
    "images_to_tfrecord",
    "csv_to_tfrecord",
    "jsonl_to_tfrecord",
    "parquet_to_tfrecord",
    "tfrecord_to_jsonl",
    "tfrecord_to_parquet",
    "ConvertSummary",
    "ConvertError",
    "compute_stats",
    "verify_files",
]

_LAZY = {
    **dict.fromkeys(["images_to_tfrecord", "csv_to_tfrecord", "jsonl_to_tfrecord", "parquet_to_tfrecord",
                     "tfrecord_to_jsonl", "tfrecord_to_parquet", "ConvertSummary", "ConvertError"],
                    "tfrx.tools.convert"),
    "compute_stats": "tfrx.tools.stats",
    "verify_files": "tfrx.tools.verify",
}

__getattr__, __dir__ = lazy_names("tfrx.tools", globals(), _LAZY)
