"""TFRecord files into Arrow, eagerly (:func:`read_tfrecord`) or lazily (:func:`iter_record_batches`).

Both read through the scan (:func:`tfrx.integrations._arrow_scan.scan`), the
engines' path: the files' record ranges read and parsed on
``num_parallel_calls`` threads, a local uncompressed file read by offsets and
parsed piece by piece in one native call, strings packed into ``binary``
columns without a ``bytes`` object per value. The columns come in the order a
parse of the spec gives them (:func:`tfrx.integrations.arrow.to_record_batch`'s),
and a spec inferred from the first records reads their damage as ``on_error``
says.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pyarrow as pa

from tfrx.integrations._arrow_scan import _resolve_spec, _schema_of, scan
from tfrx.io._data_files import expand_paths
from tfrx.options import normalize_compression

__all__ = ["read_tfrecord", "iter_record_batches"]


def read_tfrecord(
    paths,
    features: Mapping | tuple | None = None,
    *,
    compression="auto",
    on_error: str = "raise",
    batch_size: int = 65536,
    infer_records: int = 1000,
    storage_options: dict | None = None,
    raw: bool = False,
    num_parallel_calls: int | None = None,
) -> pa.Table:
    """Reads TFRecord files of ``tf.train.Example`` or ``SequenceExample`` into a ``pyarrow.Table`` (eager).

    ``features`` is a spec as for :func:`tfrx.parse_example`, or a
    ``(context_features, sequence_features)`` pair for SequenceExamples; when
    ``None`` it is inferred from the first ``infer_records`` records (a
    feature absent from those and present later is not read; pass
    ``features`` then; inferred VarLen feature lists are read as
    ``RaggedFeature`` so that empty steps are kept).
    ``compression`` and ``on_error`` are :class:`tfrx.RecordReader`'s (CRCs
    are checked; ``on_error="skip"`` leaves damaged records out).
    ``storage_options`` go to fsspec for URLs. ``raw=True`` reads the
    records unparsed, as one ``binary`` column ``"record"`` (``RAW_COLUMN``).
    ``num_parallel_calls``: ranges of the files read and parsed at once
    (default: the usable cores); the rows keep the files' order.
    :func:`iter_record_batches` is the lazy form.
    """
    reader = _reader(
        paths, features, compression, on_error, batch_size, infer_records, storage_options, raw, num_parallel_calls
    )
    return pa.table({}) if reader is None else reader.read_all()


def iter_record_batches(
    paths,
    features: Mapping | tuple | None = None,
    *,
    compression="auto",
    on_error: str = "raise",
    batch_size: int = 65536,
    infer_records: int = 1000,
    storage_options: dict | None = None,
    raw: bool = False,
    num_parallel_calls: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Lazily yields ``pyarrow.RecordBatch`` es of at most ``batch_size`` parsed Examples.

    Arguments as :func:`read_tfrecord`, which is the eager form; they are
    checked, and a spec inferred, before the first batch is asked for.
    """
    reader = _reader(
        paths, features, compression, on_error, batch_size, infer_records, storage_options, raw, num_parallel_calls
    )
    return iter(()) if reader is None else iter(reader)


def _reader(
    paths, features, compression, on_error, batch_size, infer_records, storage_options, raw, num_parallel_calls
) -> pa.RecordBatchReader | None:
    """The scan of ``paths`` (None: no spec given and no records to infer one from)."""
    if raw and features is not None:
        raise TypeError("pass raw=True (the records unparsed) or features= (a spec), not both")
    sources = expand_paths(paths, storage_options=storage_options)
    columns = None
    if not raw:
        if features is None:
            mode = normalize_compression(compression, allow_auto=True)
            features = _resolve_spec(sources, None, infer_records, mode, on_error)
            if not features:
                return None
        # The parse's column order (sorted; a SequenceExample's contexts and feature lists together), as
        # these readers have always returned them; the scan's own is the spec's.
        columns = _schema_of(features).names
    return scan(
        sources,
        spec=features,
        raw=raw,
        columns=columns,
        batch_size=batch_size,
        compression=compression,
        on_error=on_error,
        num_parallel_calls=num_parallel_calls,
        storage_options=storage_options,
    )
