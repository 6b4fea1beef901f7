"""TFRecord file I/O: framing, compression, readers and writers.

TensorFlow's ``tf.io`` names are reachable here too (``tfrx.io.parse_single_example``,
``tfrx.io.FixedLenFeature``, ``tfrx.io.decode_raw``, ``tfrx.io.decode_jpeg``,
``tfrx.io.serialize_tensor``, ``tfrx.io.gfile`` ...): they are the
implementations in ``tfrx.parsing``, ``tfrx.codec`` and ``tfrx.image``,
imported on first use (the image ones need ``tfrx[image]``).
"""

from tfrx._lazy import TYPE_CHECKING, lazy_names
from tfrx.io._batch import RecordBatch
from tfrx.io._compression import decompressor_backend, detect_compression
from tfrx.io._record_options import TFRecordOptions
from tfrx.io._data_files import expand_paths
from tfrx.io import inflate_index as _inflate_index  # noqa: F401  (index.load_index hands GZIP/ZLIB files to it)
from tfrx.io._paths import open_input, open_output
from tfrx.io._reader import CorruptRecordWarning, DamagedRegion, ReaderStats, RecordPosition, RecordReader, read_records
from tfrx.io._writer import TFRecordWriter, write_records

if TYPE_CHECKING:
    from tfrx.io._commit import shard_name  # noqa: F401
    from tfrx.io.ranges import RecordRange, plan_ranges, read_range  # noqa: F401
    from tfrx.io._sharded import ShardedWriter, read_manifest  # noqa: F401

__all__ = [
    "RecordBatch",
    "TFRecordOptions",
    "TFRecordWriter",
    "write_records",
    "RecordReader",
    "read_records",
    "RecordPosition",
    "ReaderStats",
    "DamagedRegion",
    "CorruptRecordWarning",
    "detect_compression",
    "decompressor_backend",
    "expand_paths",
    "open_input",
    "open_output",
    "ShardedWriter",
    "shard_name",
    "read_manifest",
    "RecordRange",
    "plan_ranges",
    "read_range",
]

# The writer stack and the range planner, imported on first use.
_WRITING_AND_RANGES = {
    **dict.fromkeys(["ShardedWriter", "read_manifest"], "tfrx.io._sharded"),
    "shard_name": "tfrx.io._commit",
    **dict.fromkeys(["RecordRange", "plan_ranges", "read_range"], "tfrx.io.ranges"),
}

# tf.io names implemented elsewhere in tfrx: name -> module, imported on first
# use (tfrx.parsing imports tfrx.io, and tfrx.image needs optional packages).
_TF_NAMES = {
    **dict.fromkeys(
        [
            "FixedLenFeature",
            "FixedLenSequenceFeature",
            "VarLenFeature",
            "SparseFeature",
            "RaggedFeature",
            "parse_example",
            "parse_single_example",
            "parse_sequence_example",
            "parse_single_sequence_example",
        ],
        "tfrx.parsing",
    ),
    "decode_raw": "tfrx.codec",
    "serialize_tensor": "tfrx.codec._tensor_proto",
    "parse_tensor": "tfrx.codec._tensor_proto",
    "read_file": "tfrx.io.gfile",
    "write_file": "tfrx.io.gfile",
    **dict.fromkeys(
        ["decode_jpeg", "decode_png", "decode_image", "decode_gif", "decode_bmp", "encode_jpeg", "encode_png"],
        "tfrx.image",
    ),
    "decode_and_crop_jpeg": "tfrx.image",
    "extract_jpeg_shape": "tfrx.image",
}


__getattr__, __dir__ = lazy_names("tfrx.io", globals(), {**_WRITING_AND_RANGES, **_TF_NAMES}, frozenset({"gfile"}))
