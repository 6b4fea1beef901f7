"""Reading the TFRecords a converter turns into a table: batches, decoded rows, raw records."""

from __future__ import annotations

import time

from tfrx.errors import TfrxError
from tfrx.tools.convert._common import ConvertSummary
from tfrx._progress import progress_bar


_SAMPLE = 32  # records per file whose payload kind is checked in full before converting


def _read_batches(paths, compression, on_error, errors, progress, desc):
    """Each RecordBatch of ``paths``; damaged records follow ``on_error`` in the reader and are counted."""
    from tfrx.io._reader import RecordReader

    with (
        RecordReader(paths, compression=compression, on_error=on_error) as reader,
        progress_bar(None, desc=desc, enabled=progress) as bar,
    ):
        for batch in reader.iter_batches():
            yield batch
            bar.update(len(batch))
        # the reader has warned about these already (on_error="warn")
        errors.add(reader.stats.skipped_records, [str(e) for e in reader.stats.errors], warn=False)


def _where(batch, i: int) -> str:
    offset = "" if batch.file_offsets is None else f" at byte {int(batch.file_offsets[i])}"
    return f"{batch.path or '<stream>'}: record {batch.first_index + i}{offset}"


def _decoded_rows(paths, compression, on_error, errors, progress, desc, *, keep_empty: bool = False, where=False):
    """``(context, feature_lists)`` of each record; ``feature_lists`` is None for a record to write as an Example.
    With ``where=True``, ``(context, feature_lists, where)``: ``where`` names the file, record and byte offset.

    The first records of each file are checked in full (:func:`tfrx.codec._sniff.payload_kind`);
    every record's top level is checked too, so a payload that is not an
    Example or SequenceExample (a TensorBoard event, another message, text)
    is a bad input naming its file, record and byte offset, never an empty row.
    A record is written as a SequenceExample when it is one (it has the
    ``feature_lists`` field, even empty), else as an Example.
    """
    from tfrx.codec import decode_sequence_example
    from tfrx.codec._sniff import OTHER, SEQUENCE_EXAMPLE, describe, payload_kind, record_kinds

    samples: dict = {}
    for batch in _read_batches(paths, compression, on_error, errors, progress, desc):
        checked = samples.get(batch.path)
        if checked is None:
            sample = [batch[i] for i in range(min(len(batch), _SAMPLE))]
            checked = samples[batch.path] = (payload_kind(sample) != OTHER, sample)
        clean, sample = checked
        # A clean file's records are checked at the top level; the others' in full.
        kinds = record_kinds(batch, top_level_only=clean)
        for i, kind in enumerate(kinds):
            rec = batch[i]
            if kind != OTHER:
                try:
                    context, lists = decode_sequence_example(rec, keep_empty=keep_empty)
                except TfrxError as e:
                    errors(f"{_where(batch, i)}: not a tf.train.Example or SequenceExample: {e}")
                    continue
                row = context, (lists if kind == SEQUENCE_EXAMPLE else None)
                yield (*row, _where(batch, i)) if where else row
                continue
            errors(
                f"{_where(batch, i)}: not a tf.train.Example or SequenceExample (the records of this file look "
                f"like {describe(sample)}); pass raw=True to convert each record's bytes as they are"
            )


def _raw_records(paths, compression, on_error, errors, progress, desc):
    for batch in _read_batches(paths, compression, on_error, errors, progress, desc):
        yield from batch


def _done(summary: ConvertSummary, records: int, output: str, t0: float) -> ConvertSummary:
    """The summary of a conversion that wrote one file."""
    summary.records = records
    summary.paths = [output]
    summary.seconds = time.perf_counter() - t0
    return summary
