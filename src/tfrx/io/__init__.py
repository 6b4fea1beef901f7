"""TFRecord file I/O: framing, compression, readers and writers."""

from tfrx.io.batch import RecordBatch
from tfrx.io.compression import decompressor_backend, detect_compression
from tfrx.io.options import TFRecordOptions
from tfrx.io.paths import expand_paths, open_input, open_output
from tfrx.io.reader import CorruptRecordWarning, DamagedRegion, ReaderStats, RecordPosition, RecordReader, read_records
from tfrx.io.writer import TFRecordWriter, write_records

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
]
