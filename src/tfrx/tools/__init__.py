"""Dataset tools: sharded writing, converters, statistics and verification.

Every name is imported on first use: the sharded writer (``tfrx.io._sharded``),
the converters (``tfrx.tools.convert``), statistics (``tfrx.tools._stats``) and
verification (``tfrx.tools._verify``).
"""

from tfrx._lazy import TYPE_CHECKING, lazy_names

if TYPE_CHECKING:
    from tfrx.io._sharded import ShardedWriter, read_manifest, shard_name  # noqa: F401
    from tfrx.tools._writing import write_examples  # noqa: F401

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
    **dict.fromkeys(["ShardedWriter", "shard_name", "read_manifest"], "tfrx.io._sharded"),
    "write_examples": "tfrx.tools._writing",
    **dict.fromkeys(
        [
            "images_to_tfrecord",
            "csv_to_tfrecord",
            "jsonl_to_tfrecord",
            "parquet_to_tfrecord",
            "tfrecord_to_jsonl",
            "tfrecord_to_parquet",
            "ConvertSummary",
            "ConvertError",
        ],
        "tfrx.tools.convert",
    ),
    "compute_stats": "tfrx.tools._stats",
    "verify_files": "tfrx.tools._verify",
}

__getattr__, __dir__ = lazy_names("tfrx.tools", globals(), _LAZY)
