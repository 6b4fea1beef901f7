"""Dataset tools: sharded writing, converters, statistics and verification.

The converters (``tfrx.tools.convert``), statistics (``tfrx.tools.stats``)
and verification (``tfrx.tools.verify``) are imported on first use.
"""

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
    "images_to_tfrecord": "convert", "csv_to_tfrecord": "convert", "jsonl_to_tfrecord": "convert",
    "parquet_to_tfrecord": "convert", "tfrecord_to_jsonl": "convert", "tfrecord_to_parquet": "convert",
    "ConvertSummary": "convert", "ConvertError": "convert", "compute_stats": "stats", "verify_files": "verify",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tfrx.tools' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"tfrx.tools.{module}"), name)
    globals()[name] = value
    return value
