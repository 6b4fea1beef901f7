"""TFRecordDataset: records of TFRecord files, one ``bytes`` element per record.

Files are read one after another (``files.py``: one :class:`tfrx.RecordReader`
over a window of files), or ``num_parallel_reads`` at a time in ``tf.data``'s
interleave order (``cycle_length=num_parallel_reads, block_length=1``;
``parallel_reads.py``).

The batch-native form: :meth:`TFRecordDataset.record_batches` (and
:meth:`Dataset._record_batches`, which ``batch(n).parse(spec)`` asks for)
yields :class:`tfrx.RecordBatch` es of exactly ``batch_size`` records (the
last one smaller unless ``drop_remainder``): the reader fills each batch in
one buffer sized for it, so a batch is copied only where it spans two files
(``rebatch.py``'s cut joins the pieces). The batches hold the same records,
in the same order, as ``batch(batch_size)`` over the records, with
``num_parallel_reads`` too.

Iterator state names the file (``path``), the records consumed from it
(``record``) and the byte offset of the next one (``offset``): resuming
re-opens that file at that offset. ``compression_type="auto"`` (the
default) detects compression from the file's content; ``None`` means none,
as in TensorFlow; ``on_error`` is the reader's policy for
damaged records (``"raise"``, ``"skip"`` or ``"warn"``).
"""

from __future__ import annotations

from tfrx.data._dataset import (
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    IterContext,
    resolve_parallelism,
)
from tfrx.data._files import FilesIterator, as_path, piece_options
from tfrx.data._parallel_reads import (
    InterleavedBatchIterator,
    InterleavedRecordBatchDataset,
    interleaved_records,
    read_ahead,
)
from tfrx.data._rebatch import record_rebatcher
from tfrx.data._shard import ShardDataset
from tfrx.data._sources import ListFilesDataset, expand_file_pattern
from tfrx.io._reader import check_remote_options
from tfrx.options import check_on_error, normalize_compression

__all__ = ["TFRecordDataset", "RecordBatchDataset", "reader_options"]


def reader_options(
    compression_type: str | None = "auto",
    buffer_size: int | None = None,
    on_error: str = "raise",
    storage_options: dict | None = None,
    remote: dict | None = None,
) -> dict:
    """The reader options of ``TFRecordDataset(files, compression_type, buffer_size, on_error=...)``, checked;
    ``remote``: the URL read-ahead options set (``readahead``, ``block_size``, ``concurrency``), passed on
    to each :class:`tfrx.RecordReader`."""
    compression = normalize_compression(compression_type, allow_auto=True, name="compression_type")
    check_on_error(on_error)
    options: dict = {
        "compression": compression,
        "buffer_size": buffer_size,
        "on_error": on_error,
    }
    if storage_options:
        options["storage_options"] = storage_options
    check_remote_options(**(remote or {}))
    options.update((name, value) for name, value in (remote or {}).items() if value is not None)
    return options


class RecordBatchDataset(Dataset):
    """``RecordBatch`` es of ``batch_size`` records from a :class:`TFRecordDataset`.

    With ``max_bytes``: pieces of at most ``batch_size`` records and about
    ``max_bytes`` payload bytes as the reader fills them (a batch-native
    ``shuffle``'s chunks), not cut to exact sizes. With ``stride=(n, i)``:
    only the records ``i, i + n, ...`` (``shard(n, i)``), read by a strided
    reader; the pieces are exact batches (short where a file ends) unless
    ``max_bytes`` is given, and are not cut further.
    """

    def __init__(
        self,
        source: TFRecordDataset,
        batch_size: int,
        drop_remainder: bool,
        max_bytes: int | None = None,
        stride: tuple[int, int] | None = None,
    ) -> None:
        super().__init__()
        self._source = source
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self._max_bytes = max_bytes
        self._stride = stride

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        if self._stride is not None:
            return self._source._strided_pieces_iterator(ctx, self._stride, self.batch_size, self._max_bytes)
        return self._source._record_batches_iterator(ctx, self.batch_size, self.drop_remainder, self._max_bytes)

    def _natively_batched(self) -> Dataset:
        return self

    def _describe(self) -> str:
        if self._stride is not None:
            n, i = self._stride
            return (
                f"shard({n}, {i}), batch-native: the reader keeps records {i}, {i}+{n}, ... and steps over "
                "the others on their lengths (only their headers read where the file allows)"
            )
        if self._max_bytes is not None:
            return f"record chunks of up to {self.batch_size} records / {self._max_bytes >> 20} MiB"
        reads = self._source._parallel_reads
        if reads > 1:
            return (
                f"batch({self.batch_size}), batch-native: {reads} files at a time in runs of records "
                "(interleave planner), each batch parsed where the files' readers put its records"
            )
        return (
            f"batch({self.batch_size}), batch-native: RecordBatch es filled whole by the reader "
            "(copied only where a batch spans two files)"
        )

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return (self._source,)

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        sharded = self._source._shard_source(num_shards, index)
        if sharded is None:
            return None
        return RecordBatchDataset(sharded, self.batch_size, self.drop_remainder, self._max_bytes, self._stride)  # type: ignore[arg-type]  # a sharded TFRecordDataset


class TFRecordDataset(Dataset):
    """The records of TFRecord files (``tf.data.TFRecordDataset``).

    ``filenames``: a path, a glob, a list of them, or a dataset of file names
    (``Dataset.list_files``). ``compression_type`` (or ``compression=``, the
    name the rest of tfrx uses): ``"auto"`` (the default) detects it from
    each file's content; ``None`` / ``""`` (none, TensorFlow's meaning of
    ``None``), ``"GZIP"`` or ``"ZLIB"``. ``buffer_size``: the reader's read size in
    bytes. ``num_parallel_reads``: how many files to read at once
    (``tfrx.AUTOTUNE`` for the usable cores). ``storage_options`` go to the
    fsspec filesystem of URLs (``s3://``, ``gs://``, ...); ``readahead``,
    ``block_size`` and ``concurrency`` are the read-ahead of URLs, as
    :class:`tfrx.RecordReader` takes them (docs/remote.md).

    A glob or list of ``-NNNNN-of-MMMMM`` shards must hold the whole set
    (else :class:`tfrx.IncompleteShardSetError` names the missing shards);
    ``require_all_shards=False`` reads whatever is there. Files tfrx keeps
    beside data (``.tfrx/``) never match; one named explicitly raises
    :class:`tfrx.SidecarFileError`.
    """

    def __init__(
        self,
        filenames,
        compression_type: str | None = "auto",
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        *,
        compression: str | None = "auto",
        on_error: str = "raise",
        storage_options: dict | None = None,
        require_all_shards: bool = True,
        readahead: int | None = None,
        block_size: int | None = None,
        concurrency: int | None = None,
    ) -> None:
        super().__init__()
        if compression != "auto":  # the name the rest of tfrx uses; TensorFlow's is compression_type
            if compression_type != "auto":
                raise TypeError("pass compression_type or compression, not both")
            compression_type = normalize_compression(compression, allow_auto=True, name="compression")
        remote = {"readahead": readahead, "block_size": block_size, "concurrency": concurrency}
        self._options = reader_options(compression_type, buffer_size, on_error, storage_options, remote)
        if isinstance(filenames, Dataset):
            self._files = filenames
        else:
            names = expand_file_pattern(
                filenames, storage_options=storage_options, require_all_shards=require_all_shards
            )
            self._files = ListFilesDataset(names, shuffle=False, seed=0)
        self._parallel_reads = resolve_parallelism(num_parallel_reads, name="num_parallel_reads")

    @classmethod
    def _interleaved_record_batches(
        cls, files: Dataset, cycle_length: int, block_length: int, batch_size: int, drop_remainder: bool
    ) -> Dataset | None:
        # files.interleave(TFRecordDataset, ...) reads each file name's records with the default options.
        return InterleavedRecordBatchDataset(
            files, reader_options(), cycle_length, block_length, batch_size, drop_remainder
        )

    @property
    def files(self) -> Dataset:
        """The dataset of file names this dataset reads."""
        return self._files

    def _record_batches_iterator(
        self, ctx: IterContext, batch_size: int, drop_remainder: bool, max_bytes: int | None = None
    ) -> DatasetIterator:
        """``RecordBatch`` es of ``batch_size`` records (fewer at the end, or where ``max_bytes`` payload
        bytes are reached) in the records' order."""
        n = self._parallel_reads
        if n == 1:
            files = self._files._iterator(ctx)
            if max_bytes is not None:  # pieces of a stream (a shuffle's chunks), as the reader's chunks hold them
                return FilesIterator(files, piece_options(self._options), batch_size, max_bytes)
            pieces = FilesIterator(files, self._options, batch_size, exact=True)
            return record_rebatcher(pieces, batch_size, drop_remainder)
        return InterleavedBatchIterator(self._files, ctx, self._options, n, batch_size, drop_remainder)

    def _strided_pieces_iterator(
        self, ctx: IterContext, stride: tuple[int, int], max_records: int, max_bytes: int | None
    ) -> DatasetIterator:
        """The records ``i, i + n, ...`` (``stride=(n, i)``) in pieces of ``max_records`` (exact, but where a
        file ends, without ``max_bytes``), read by a strided reader over the files one after another."""
        files = self._files._iterator(ctx)
        exact = max_bytes is None
        return FilesIterator(files, self._options, max_records, max_bytes, exact=exact, stride=stride)

    def _strided_record_pieces(
        self, num_shards: int, index: int, max_records: int, max_bytes: int | None
    ) -> Dataset | None:
        # num_parallel_reads interleaves the files record by record: a shard of that order is not a stride
        # of each file, so it takes the strided views of the interleaved pieces (shard.py).
        if self._parallel_reads != 1:
            return None
        return RecordBatchDataset(self, max_records, False, max_bytes, (num_shards, index))

    def _record_batches(self, batch_size: int, drop_remainder: bool) -> Dataset:
        return RecordBatchDataset(self, batch_size, drop_remainder)

    def _record_pieces(self, max_records: int, max_bytes: int) -> Dataset:
        # Files read one at a time: the pieces' iterator states are those of the records' iterator.
        return RecordBatchDataset(self, max_records, False, max_bytes)

    def _describe(self) -> str:
        reads = f", num_parallel_reads={self._parallel_reads}" if self._parallel_reads > 1 else ""
        return f"TFRecordDataset({self._files.cardinality()} files{reads})"

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        if self._parallel_reads == 1:
            return FilesIterator(self._files._iterator(ctx), self._options, None)
        return interleaved_records(self._files, ctx, self._options, self._parallel_reads)

    def _read_ahead_iterator(self, ctx: IterContext) -> DatasetIterator | None:
        """For ``files.interleave(TFRecordDataset, num_parallel_calls=...)``: batches read ahead, split here."""
        if self._parallel_reads != 1:
            return None
        return read_ahead(self._files, ctx, self._options)

    def record_batches(self, batch_size: int, drop_remainder: bool = False) -> Dataset:
        """``RecordBatch`` es of ``batch_size`` records, read without a Python object per record."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        return RecordBatchDataset(self, batch_size, drop_remainder)

    def with_index(self, **kwargs):
        """These files as a :class:`tfrx.RandomAccessDataset` (``len``, ``ds[i]``, global shuffle);
        keyword arguments go to it. The files must be uncompressed; indexes are built on first use."""
        from tfrx.data._random_access import RandomAccessDataset

        kwargs.setdefault("require_all_shards", False)  # listed (and checked) when this dataset was made
        return RandomAccessDataset([as_path(f) for f in self._files.take_all()], **kwargs)

    def cardinality(self) -> int:
        return 0 if self._files.cardinality() == 0 else UNKNOWN_CARDINALITY

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        """Shards by files when there are at least ``num_shards`` of them, else by records (``None``)."""
        n = self._files.cardinality()
        if n < num_shards:
            return None

        def shard_files(source: Dataset) -> Dataset:
            return source._shard_source(num_shards, index) or ShardDataset(source, num_shards, index)

        clone = TFRecordDataset.__new__(TFRecordDataset)
        clone.__dict__.update(self.__dict__)
        clone._iterations = 0
        clone._files = self._files._rewrite_sources(shard_files)
        return clone
