"""Apache Arrow interop: parsed batches to ``pyarrow`` and back, ``read_tfrecord``, and one scan for engines.

* Conversion (:func:`to_record_batch`, :func:`to_table`, :func:`to_examples`,
  :func:`to_sequence_examples`), and decoded records
  to batches without a spec, the schema growing (:class:`ExampleBatchBuilder`,
  what ``tfrx convert`` writes Parquet with): see
  ``tfrx/integrations/_arrow_convert.py`` for the mapping per feature kind.
* :func:`scan` / :func:`scan_schema`: a ``pyarrow.RecordBatchReader`` with
  projection, a filter and a limit pushed into the parse, read in parallel in
  bounded memory; Polars, DuckDB, Daft, Hugging Face ``datasets``, Spark and
  Dask read through it (``tfrx/integrations/_arrow_scan.py``).
* The eager and lazy readers (:func:`read_tfrecord`, :func:`iter_record_batches`):
  the scan of every feature, in parallel, as a ``pyarrow.Table`` or its
  batches (``tfrx/integrations/_arrow_read.py``).

pyarrow is imported when this module is: ``pip install 'tfrx[arrow]'``.
"""

from tfrx.integrations._arrow_convert import (
    FEATURE_LISTS_KEY,
    RAW_COLUMN,
    ExampleBatchBuilder,
    to_examples,
    to_record_batch,
    to_sequence_examples,
    to_table,
)
from tfrx.integrations._arrow_read import iter_record_batches, read_tfrecord
from tfrx.integrations._arrow_scan import ScanStats, scan, scan_schema

__all__ = [
    "to_record_batch",
    "to_table",
    "to_examples",
    "to_sequence_examples",
    "read_tfrecord",
    "iter_record_batches",
    "ExampleBatchBuilder",
    "scan",
    "scan_schema",
    "ScanStats",
    "FEATURE_LISTS_KEY",
    "RAW_COLUMN",
]
