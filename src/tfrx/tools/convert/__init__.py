"""Converters: image folders, CSV, JSON Lines and Parquet to TFRecord shards, and TFRecords back to tables.

Every converter returns a :class:`ConvertSummary`. Bad inputs (an image that
does not decode, a CSV row with the wrong number of fields, a value that does
not fit the spec) follow ``on_error``: ``"raise"`` (default) stops with a
:class:`tfrx.TfrxError` naming the input, ``"skip"`` leaves the input out and
counts it, ``"warn"`` does the same with a warning. Skipped inputs are always
counted in ``summary.skipped`` with their messages in ``summary.errors``.

``engine="ray"`` runs the per-chunk work of the image, CSV and Parquet
converters (decoding images, parsing rows, encoding Examples) as Ray tasks
on the cluster ``ray.init()`` connected to (a local one when none was
started); the driver only writes the returned records into the shards, so
the output is the same as a local conversion. The inputs must be readable
at the same paths from every Ray worker.
"""

from __future__ import annotations

from tfrx.errors import ConvertError
from tfrx.tools.convert._common import ConvertSummary
from tfrx.tools.convert.delimited import csv_to_tfrecord
from tfrx.tools.convert.images import IMAGE_EXTENSIONS, images_to_tfrecord
from tfrx.tools.convert.jsonl import jsonl_to_tfrecord, tfrecord_to_jsonl
from tfrx.tools.convert.parquet import parquet_to_tfrecord, tfrecord_to_parquet

__all__ = [
    "ConvertError",
    "ConvertSummary",
    "IMAGE_EXTENSIONS",
    "images_to_tfrecord",
    "csv_to_tfrecord",
    "jsonl_to_tfrecord",
    "parquet_to_tfrecord",
    "tfrecord_to_jsonl",
    "tfrecord_to_parquet",
]
