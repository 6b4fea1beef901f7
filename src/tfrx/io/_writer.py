"""Writing TFRecord files: ``TFRecordWriter``.

Uncompressed output is byte-identical to TensorFlow's. GZIP and ZLIB output
uses zlib with TensorFlow's parameters, so TensorFlow and ``gzip -d`` read it
(and the bytes match TensorFlow's too). Records are framed natively into a
reused 1 MiB staging buffer, many per call (``write_many``), so neither the
Python cost per record nor fresh memory for every write limits the speed;
a record larger than the buffer goes to the file without being copied.

``checkpoint_index=True`` makes a GZIP/ZLIB writer emit the file's checkpoint
index (:mod:`tfrx.io.inflate_index`) as it writes, so random access needs no
pass over the file: about every 1 MiB of records the stream is flushed to a
byte boundary (``Z_SYNC_FLUSH``, a few bytes each, the dictionary kept), and
that point, with the 32 KiB of records before it, is a checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tfrx import _native
from tfrx.io._batch import RecordBatch
from tfrx.io._compression import make_compressor
from tfrx.io._framing import FRAMING_BYTES
from tfrx.io._record_options import TFRecordOptions
from tfrx.options import normalize_compression
from tfrx.io._paths import Source, is_url, open_output, source_name, with_options

_WINDOW = 32768
_FINGERPRINT = 4096


class _Checkpoints:
    """What the checkpoint index of a compressed stream being written needs: flush points, the 32 KiB of
    output before each, the record offsets, and the compressed bytes' size and first and last 4 KiB."""

    def __init__(self, spacing: int) -> None:
        self.spacing = spacing
        self.points: list[tuple[int, int, int]] = [(0, 0, 1 << 16)]  # the member's start
        self.windows: list[bytes] = [b""]
        self.out = 0  # uncompressed bytes so far
        self.inp = 0  # compressed bytes so far
        self.since = 0  # uncompressed bytes since the last checkpoint
        self.tail = b""  # the last 32 KiB of uncompressed bytes
        self.head = b""  # the first 4 KiB of compressed bytes
        self.ctail = b""  # the last 4 KiB of compressed bytes
        self.offsets: list[int] = []  # every record's header, in the uncompressed stream
        self.next_at = 0  # where the next record's header starts
        self.partial = b""  # the first bytes of its length field, when a piece ended inside it

    def uncompressed(self, data) -> None:
        """Follows the framing the writer made (length fields only: a record's bytes are never copied)."""
        n, base = len(data), self.out
        while True:
            if self.partial:
                self.partial += bytes(data[: 8 - len(self.partial)])
                if len(self.partial) < 8:
                    break
                length, self.partial = int.from_bytes(self.partial, "little"), b""
            else:
                at = self.next_at - base
                if at >= n:
                    break
                if at + 8 > n:
                    self.partial = bytes(data[at:])
                    break
                length = int.from_bytes(bytes(data[at : at + 8]), "little")
            self.offsets.append(self.next_at)
            self.next_at += length + FRAMING_BYTES
        self.tail = (self.tail + bytes(data[-_WINDOW:]))[-_WINDOW:]
        self.out += n
        self.since += n

    def compressed(self, data) -> None:
        if len(self.head) < _FINGERPRINT:
            self.head += bytes(data[: _FINGERPRINT - len(self.head)])
        self.ctail = (self.ctail + bytes(data[-_FINGERPRINT:]))[-_FINGERPRINT:]
        self.inp += len(data)

    def mark(self) -> None:
        """A checkpoint where the stream was just flushed to a byte boundary."""
        self.points.append((self.out, self.inp, 0))
        self.windows.append(self.tail)
        self.since = 0

    def index(self, path: str, compression: str, mtime_ns: int):
        from tfrx import _native
        from tfrx.io.index import RecordIndex
        from tfrx.io.inflate_index import _POINT, InflateIndex

        table = np.array(self.points, dtype=np.int64)
        points = np.zeros(len(table), dtype=_POINT)
        points["out"], points["inp"], points["meta"] = table[:, 0], table[:, 1], table[:, 2]
        offsets = np.array(self.offsets, dtype=np.int64)
        n = min(self.inp, _FINGERPRINT)
        finger = _native.crc32c(self.ctail[-n:] if self.inp > n else b"", _native.crc32c(self.head[:n]))
        records = RecordIndex(path, offsets, self.out, mtime_ns=mtime_ns)
        return InflateIndex(path, compression, points, self.windows, records, self.inp, mtime_ns, finger)


__all__ = ["TFRecordWriter", "write_records"]

STAGE_BYTES = 1 << 20


def _record_bytes(record, method: str):
    """``record`` as something with the buffer protocol: a protobuf message serialized deterministically."""
    if isinstance(record, str):
        raise TypeError(f"TFRecordWriter.{method} expects bytes, not str (encode it first)")
    serialize = getattr(record, "SerializeToString", None)
    if serialize is not None and hasattr(record, "DESCRIPTOR"):
        return serialize(deterministic=True)
    try:
        memoryview(record)
    except TypeError:
        raise TypeError(
            f"TFRecordWriter.{method} expects bytes, a buffer or a protobuf message "
            f"(serialized with SerializeToString()), got {type(record).__name__}"
        ) from None
    return record


class TFRecordWriter:
    """Writes records to a TFRecord file, as ``tf.io.TFRecordWriter``.

    ``path`` is a path, an fsspec URL or an open binary file (which is left
    open on ``close``). ``options`` is a :class:`TFRecordOptions` or a
    compression name; ``compression=`` is the keyword shorthand (``"gzip"``,
    ``"zlib"``, ``None``). Use as a context manager, or call ``close()``.
    On object stores (``storage_options`` go to fsspec) the object appears
    only on ``close()``; leaving the ``with`` block by an exception, or
    ``abort()``, discards the upload.

    ``checkpoint_index`` (GZIP/ZLIB output to a path or URL): ``True`` writes
    the file's checkpoint index (:mod:`tfrx.io.inflate_index`) into the index
    cache on ``close()``, ``"sidecar"`` beside the file
    (``.tfrx/<file>.tfrxzidx``), so ``RandomAccessDataset``, the global
    shuffle, ``tfrx view`` and resuming read any record without a pass over
    the file. The stream then differs from TensorFlow's (a sync flush about
    every ``checkpoint_spacing`` bytes of records, 1 MiB by default; a few
    bytes each) and is still read by any GZIP/ZLIB reader.
    """

    def __init__(
        self,
        path: Source,
        options: TFRecordOptions | str | None = None,
        *,
        compression=None,
        storage_options: dict | None = None,
        checkpoint_index: bool | str = False,
        checkpoint_spacing: int = 1 << 20,
    ) -> None:
        if options is not None and compression is not None:
            raise ValueError("pass either options or compression, not both")
        if checkpoint_index not in (False, True, "sidecar"):
            raise ValueError(f'checkpoint_index must be False, True or "sidecar", got {checkpoint_index!r}')
        if isinstance(options, TFRecordOptions):
            opts = options
        else:
            opts = TFRecordOptions(normalize_compression(options if options is not None else compression))
        self.options = opts
        self.name = source_name(path)
        self._closed = True
        self._file = open_output(path, storage_options=storage_options)
        self._closed = False
        self._owns = self._file is not path
        # The staging buffer is reused, so it may be handed to the file only
        # when the file is known to copy what it is given (our own local file).
        self._stage_reusable = self._owns and not (isinstance(self.name, str) and is_url(self.name))
        self._checkpoints: _Checkpoints | None = None
        self._checkpoint_index = checkpoint_index
        if checkpoint_index:
            if not opts.compression_type:
                raise ValueError(
                    "checkpoint_index needs GZIP or ZLIB output; an uncompressed file has a record index "
                    "(tfrx.build_index, or ShardedWriter(index=True))"
                )
            if not isinstance(self.name, str) or not self._owns:
                raise ValueError("checkpoint_index needs a path or URL to write to, not a file object")
            if checkpoint_spacing < _WINDOW:
                raise ValueError(f"checkpoint_spacing must be at least {_WINDOW} bytes, got {checkpoint_spacing}")
            self._checkpoints = _Checkpoints(int(checkpoint_spacing))
            self._target = with_options(self.name, storage_options)
        self._compressor = (
            make_compressor(opts.compression_type, opts.compression_level, flushable=checkpoint_index is not False)
            if opts.compression_type
            else None
        )
        self._stage = bytearray(STAGE_BYTES)
        self._stage_view = memoryview(self._stage)
        self._pos = 0
        self.records_written = 0

    # -------------------------------------------------------------- output
    def _sink(self, data) -> None:
        if self._compressor is None:
            self._file.write(data)
            return
        points = self._checkpoints
        if points is None:
            out = self._compressor.compress(data)
            if out:
                self._file.write(out)
            return
        view = memoryview(data).cast("B")
        while len(view):  # cut where the next checkpoint is due, so checkpoints are spacing apart
            piece, view = view[: points.spacing - points.since], view[points.spacing - points.since :]
            self._emit(self._compressor.compress(piece))
            points.uncompressed(piece)
            if points.since >= points.spacing:
                import zlib

                self._emit(self._compressor.flush(zlib.Z_SYNC_FLUSH))
                points.mark()

    def _emit(self, out: bytes) -> None:
        if out:
            self._file.write(out)
            if self._checkpoints is not None:
                self._checkpoints.compressed(out)

    def _flush_stage(self) -> None:
        if self._pos:
            view = self._stage_view[: self._pos]
            self._sink(view if self._stage_reusable or self._compressor is not None else bytes(view))
            self._pos = 0

    def _write_large(self, record) -> None:
        framing = _native.record_framing(record)
        self._sink(framing.header)
        self._sink(record)
        self._sink(framing.footer)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("write to a closed TFRecordWriter")

    # -------------------------------------------------------------- records
    def write(self, record) -> None:
        """Writes one record: ``bytes``, any buffer-protocol object, or a protobuf message.

        A message (``tfrx.train.Example``, TensorFlow's ``tf.train.Example``,
        any message) is written as ``SerializeToString(deterministic=True)``:
        map entries in key order, the bytes tfrx's encoders write.
        TensorFlow's writer takes only bytes.
        """
        self._check_open()
        try:
            view = memoryview(record)
        except TypeError:  # str, a protobuf message, or something else that is not a buffer
            view = memoryview(_record_bytes(record, "write"))
        n = view.nbytes
        if n + FRAMING_BYTES > len(self._stage) - self._pos:
            self._flush_stage()
            if n + FRAMING_BYTES > len(self._stage):
                if view.ndim != 1 or view.format != "B":
                    view = view.cast("B")
                self._write_large(view)
                self.records_written += 1
                return
        self._pos += _native.frame_into((view,), 0, self._stage_view[self._pos :]).used
        self.records_written += 1

    def write_many(self, records: RecordBatch | Iterable) -> int:
        """Writes many records; returns how many.

        ``records``: a :class:`tfrx.RecordBatch`, a list/tuple of bytes-like
        objects (or protobuf messages, as :meth:`write` takes them), a NumPy
        object array of ``bytes``, or any iterable of them. Framing happens
        natively, many records per call.
        """
        self._check_open()
        if isinstance(records, RecordBatch):
            return self._write_batch(records)
        items: list | tuple
        if isinstance(records, np.ndarray):
            items = records.tolist()
        elif isinstance(records, (list, tuple)):
            items = records
        else:
            items = list(records)
        if items and isinstance(items[0], str):
            raise TypeError("TFRecordWriter.write_many expects bytes records, not str")
        count = len(items)
        i = 0
        while i < count:
            try:
                progress = _native.frame_into(items, i, self._stage_view[self._pos :])
            except TypeError:  # a message or another non-buffer among the records
                items = [_record_bytes(r, "write_many") for r in items]
                progress = _native.frame_into(items, i, self._stage_view[self._pos :])
            j = progress.next
            self._pos += progress.used
            if j < count:
                if j == i and self._pos == 0:  # larger than the staging buffer
                    if isinstance(items[i], str):
                        raise TypeError("TFRecordWriter.write_many expects bytes records, not str")
                    self._write_large(memoryview(items[i]).cast("B"))
                    j += 1
                else:
                    self._flush_stage()
            i = j
        self.records_written += count
        return count

    def _write_batch(self, batch: RecordBatch) -> int:
        count = len(batch)
        i = 0
        while i < count:
            progress = _native.frame_batch_into(
                batch.data, batch.starts, batch.lengths, i, self._stage_view[self._pos :]
            )
            j = progress.next
            self._pos += progress.used
            if j < count:
                if j == i and self._pos == 0:
                    s, n = int(batch.starts[i]), int(batch.lengths[i])
                    self._write_large(batch.data[s : s + n])
                    j += 1
                else:
                    self._flush_stage()
            i = j
        self.records_written += count
        return count

    # -------------------------------------------------------------- lifetime
    def flush(self) -> None:
        """Pushes buffered bytes to the file (a compressed stream stays valid to continue)."""
        self._check_open()
        self._flush_stage()
        if self._compressor is not None:
            import zlib

            self._emit(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Finishes the stream and closes the file (a file object passed in is flushed, not closed)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._flush_stage()
            if self._compressor is not None:
                self._emit(self._compressor.flush())
            self._file.flush()
        finally:
            if self._owns:
                self._file.close()
        if self._checkpoints is not None:
            self._keep_checkpoint_index()

    def _keep_checkpoint_index(self) -> None:
        import os

        from tfrx.io.inflate_index import inflate_index_path, keep_index

        path = self._target
        remote = is_url(path)
        index = self._checkpoints.index(  # type: ignore[union-attr]
            path, self.options.compression_type, 0 if remote else os.stat(path).st_mtime_ns
        )
        keep_index(index, path, inflate_index_path(path), sidecar=self._checkpoint_index == "sidecar")

    def __enter__(self) -> TFRecordWriter:
        return self

    def abort(self) -> None:
        """Closes without committing: an object-store upload is discarded, so no object appears.

        A local file, or a file object passed in, keeps what was written.
        """
        if self._closed:
            return
        self._closed = True
        discard = getattr(self._file, "discard", None) if self._owns else None
        if discard is not None:
            discard()
            # fsspec's discard drops buffered data and an unfinished multipart
            # upload; closing afterwards must not upload the empty remainder.
            self._file.closed = True
            return
        if self._owns:
            self._file.close()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None and self._owns and is_url(self.name or ""):
            self.abort()
        else:
            self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"TFRecordWriter({self.name!r}, compression={self.options.compression_type!r}, {state})"


def write_records(
    path: Source,
    records,
    options: TFRecordOptions | str | None = None,
    *,
    compression=None,
    storage_options: dict | None = None,
) -> int:
    """Writes ``records`` (see :meth:`TFRecordWriter.write_many`) to ``path``; returns the count."""
    with TFRecordWriter(path, options, compression=compression, storage_options=storage_options) as w:
        return w.write_many(records)
