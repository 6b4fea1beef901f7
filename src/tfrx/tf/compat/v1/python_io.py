"""``tf.compat.v1.python_io``: ``tf_record_iterator``, ``TFRecordWriter``, ``TFRecordOptions``, ``TFRecordCompressionType``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfrx.io import TFRecordOptions, TFRecordWriter, read_records

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]


class TFRecordCompressionType:
    """TensorFlow 1's compression constants, usable as ``TFRecordOptions(compression_type=...)``."""

    NONE = ""
    ZLIB = "ZLIB"
    GZIP = "GZIP"


def tf_record_iterator(path: Any, options: Any = None) -> Iterator[bytes]:
    """Yields each record of a TFRecord file as ``bytes``; a corrupt record raises, as TensorFlow's iterator does."""
    compression = TFRecordOptions.get_compression_type_string(options) if options is not None else ""
    yield from read_records(path, compression=compression)
