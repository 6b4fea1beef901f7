"""RecordBatch: many records in one buffer, the currency of the fast paths.

The reader returns batches of records as one contiguous byte buffer plus the
start and length of each record in it, so that the native parser, the index
builder and the writer can work on thousands of records per call without one
Python ``bytes`` object per record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tfrx.io._framing import FRAMING_BYTES

__all__ = ["MultiBufferRecordBatch", "RecordBatch", "ScatteredRecordBatch"]


class RecordBatch(Sequence):
    """A batch of records stored as ``data[starts[i] : starts[i] + lengths[i]]``.

    ``data`` is a 1-D ``uint8`` NumPy array that the batch owns (it is never a
    view into a buffer that the reader reuses later), ``starts`` and
    ``lengths`` are ``int64`` arrays of equal length. Optional provenance:
    ``path`` (the file the records came from), ``first_index`` (the index in
    that file of the first record), ``index_step`` (how far apart in the file
    the batch's records are: 1, or ``n`` for every ``n``-th record, as a
    record-level ``shard`` takes them; :meth:`record_index`) and
    ``file_offsets`` (``int64``, the byte offset of each record's header in
    the uncompressed file).

    Indexing gives ``bytes``; slicing (with a step too) gives a
    ``RecordBatch`` sharing ``data``.
    """

    __slots__ = ("data", "starts", "lengths", "path", "first_index", "index_step", "file_offsets")

    def __init__(
        self,
        data: np.ndarray,
        starts: npt.ArrayLike,
        lengths: npt.ArrayLike,
        *,
        path: str | None = None,
        first_index: int = 0,
        file_offsets: np.ndarray | None = None,
        index_step: int = 1,
    ) -> None:
        data = np.asarray(data)
        if data.dtype != np.uint8 or data.ndim != 1:
            data = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)  # type: ignore[arg-type]  # numpy stubs: __buffer__ on 3.12+ only
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        if starts.shape != lengths.shape or starts.ndim != 1:
            raise ValueError("RecordBatch: starts and lengths must be 1-D arrays of equal length")
        if len(starts) and (starts.min() < 0 or lengths.min() < 0 or int((starts + lengths).max()) > data.shape[0]):
            raise ValueError("RecordBatch: a record lies outside the data buffer")
        self.data = data
        self.starts = starts
        self.lengths = lengths
        self.path = path
        self.first_index = first_index
        self.index_step = index_step
        self.file_offsets = file_offsets

    def record_index(self, i: int) -> int:
        """The index in its file (``path``) of the batch's record ``i``."""
        return self.first_index + i * self.index_step

    def end_offset(self) -> int | None:
        """The byte offset in the file just past the last record's framing: where the record after the batch
        starts (``None`` for an empty batch, or without ``file_offsets``)."""
        if self.file_offsets is None or not len(self):
            return None
        return int(self.file_offsets[-1]) + FRAMING_BYTES + int(self.lengths[-1])

    @classmethod
    def from_records(cls, records: Sequence[bytes]) -> RecordBatch:
        """Packs a sequence of bytes-like records into one buffer."""
        lengths = np.fromiter((len(r) for r in records), dtype=np.int64, count=len(records))
        starts = np.zeros(len(records), dtype=np.int64)
        if len(records) > 1:
            np.cumsum(lengths[:-1], out=starts[1:])
        data = np.frombuffer(b"".join(records), dtype=np.uint8) if records else np.zeros(0, np.uint8)
        return cls(data, starts, lengths)

    @classmethod
    def concat(cls, pieces: Sequence[RecordBatch]) -> RecordBatch:
        """One batch holding the records of ``pieces`` in order (the piece itself when there is one)."""
        pieces = [p for p in pieces if len(p)]
        if len(pieces) == 1:
            return pieces[0]
        if not pieces:
            return cls(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
        datas, starts, base = [], [], 0
        for p in pieces:
            lo = int(p.starts.min())
            hi = int((p.starts + p.lengths).max())
            datas.append(p.data[lo:hi])
            starts.append(p.starts - lo + base)
            base += hi - lo
        return cls(np.concatenate(datas), np.concatenate(starts), np.concatenate([p.lengths for p in pieces]))

    @classmethod
    def from_offsets(cls, data: np.ndarray, offsets: np.ndarray) -> RecordBatch:
        """Records laid end to end: record i is ``data[offsets[i]:offsets[i+1]]``."""
        offsets = np.asarray(offsets, dtype=np.int64)
        return cls(data, offsets[:-1], np.diff(offsets))

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def __getitem__(self, i):
        if isinstance(i, slice):
            rows = range(len(self))[i]
            return RecordBatch(
                self.data,
                self.starts[i],
                self.lengths[i],
                path=self.path,
                first_index=self.record_index(rows.start) if len(rows) else self.first_index,
                file_offsets=None if self.file_offsets is None else self.file_offsets[i],
                index_step=self.index_step * rows.step,
            )
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("RecordBatch index out of range")
        s = int(self.starts[i])
        return self.data[s : s + int(self.lengths[i])].tobytes()

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.to_list())

    def to_list(self) -> list[bytes]:
        """One ``bytes`` per record, made in a single native call."""
        from tfrx import _native

        return _native.split_records(self.data, self.starts, self.lengths)

    @property
    def nbytes(self) -> int:
        """Total payload bytes of the records (not counting framing)."""
        return int(self.lengths.sum())

    def is_contiguous(self) -> bool:
        """True when the records lie end to end from ``starts[0]``, with no gaps."""
        if len(self) == 0:
            return True
        return bool(np.array_equal(self.starts[1:], self.starts[:-1] + self.lengths[:-1]))

    def __repr__(self) -> str:
        where = f", path={self.path!r}" if self.path else ""
        return f"RecordBatch({len(self)} records, {self.nbytes} bytes{where})"


class _GatheredOnUse(RecordBatch):
    """A :class:`RecordBatch` whose records still lie where they were read or kept, not end to end.

    The native parser reads them there (:meth:`_parse_in_place`);
    everything else sees an ordinary ``RecordBatch``: ``data`` gathers the
    records end to end on first use (``_gather``), and ``starts`` are their
    offsets there.
    """

    __slots__ = ()

    def _slot(self, name: str, make: Callable[[], np.ndarray]) -> np.ndarray:
        """RecordBatch's slot ``name``, filled by ``make()`` on first use."""
        slot = RecordBatch.__dict__[name]
        try:
            return slot.__get__(self)
        except AttributeError:
            value = make()
            slot.__set__(self, value)
            return value

    @property
    def data(self) -> np.ndarray:  # type: ignore[override]  # made on first use, then the slot holds it
        return self._slot("data", self._gather)

    @property
    def starts(self) -> np.ndarray:  # type: ignore[override]  # made on first use, then the slot holds it
        return self._slot("starts", self._offsets)

    def _gather(self) -> np.ndarray:
        raise NotImplementedError

    def _parse_in_place(self, core: Any, threads: int, views: bool) -> Any:
        """The native ``ParserCore``'s result for these records, read where they lie."""
        raise NotImplementedError

    def _offsets(self) -> np.ndarray:
        starts = np.zeros(len(self.lengths), np.int64)
        np.cumsum(self.lengths[:-1], out=starts[1:])
        return starts

    def __len__(self) -> int:
        return int(self.lengths.shape[0])

    def __reduce__(self):
        return RecordBatch, (self.data, self.starts, self.lengths)


class ScatteredRecordBatch(_GatheredOnUse):
    """A :class:`RecordBatch` whose records still lie where a shuffle buffer kept them.

    ``records`` is the native ``RecordSet`` the shuffle moved them into, each
    record in its own allocation. The native parser reads them where they are
    (one copy fewer than gathering them first); everything else sees an
    ordinary ``RecordBatch``: ``data`` gathers the records end to end on
    first use (into a buffer from ``gather_into(nbytes)`` when given), and
    ``starts`` are their offsets there.
    """

    __slots__ = ("records", "_gather_into")

    def __init__(self, records: Any, *, gather_into: Callable[[int], np.ndarray] | None = None) -> None:
        self.records = records
        self.lengths = records.lengths()
        self.path = None
        self.first_index = 0
        self.index_step = 1
        self.file_offsets = None
        self._gather_into = gather_into

    def _gather(self) -> np.ndarray:
        total = self.records.nbytes
        out = self._gather_into(total) if self._gather_into is not None else None
        return self.records.gather(out)[:total]

    def _parse_in_place(self, core: Any, threads: int, views: bool) -> Any:
        return core.parse_records(self.records, threads, views=views)

    @property
    def nbytes(self) -> int:
        return int(self.records.nbytes)


class MultiBufferRecordBatch(_GatheredOnUse):
    """A :class:`RecordBatch` whose records lie in runs in several buffers, as they were read.

    Record ``i`` is ``buffers[which[i]][spans[i] : spans[i] + lengths[i]]``
    (the read buffers of the files of a parallel read, kept alive by the
    batch and reused once it is gone). The native parser reads the records
    there; ``data`` gathers them end to end on first use.
    """

    __slots__ = ("buffers", "which", "spans")

    def __init__(
        self, buffers: Sequence[np.ndarray], which: np.ndarray, spans: np.ndarray, lengths: np.ndarray
    ) -> None:
        self.buffers = list(buffers)
        self.which = np.ascontiguousarray(which, dtype=np.int64)
        self.spans = np.ascontiguousarray(spans, dtype=np.int64)
        self.lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        if not self.which.shape == self.spans.shape == self.lengths.shape or self.lengths.ndim != 1:
            raise ValueError("MultiBufferRecordBatch: which, spans and lengths must be 1-D arrays of equal length")
        self.path = None
        self.first_index = 0
        self.index_step = 1
        self.file_offsets = None

    @classmethod
    def join(cls, parts: Sequence[RecordBatch]) -> RecordBatch:
        """The records of ``parts`` in order, left where they lie (the part itself when there is one)."""
        if len(parts) == 1:
            return parts[0]
        buffers: list[np.ndarray] = []
        which, spans = [], []
        for p in parts:
            if isinstance(p, MultiBufferRecordBatch):
                which.append(p.which + len(buffers))
                spans.append(p.spans)
                buffers.extend(p.buffers)
            else:
                which.append(np.full(len(p), len(buffers), np.int64))
                spans.append(p.starts)
                buffers.append(p.data)
        return cls(buffers, np.concatenate(which), np.concatenate(spans), np.concatenate([p.lengths for p in parts]))

    def __getitem__(self, i):
        if not isinstance(i, slice):
            return super().__getitem__(i)
        # the sliced records where they lie (the buffers are shared, not gathered)
        return MultiBufferRecordBatch(self.buffers, self.which[i], self.spans[i], self.lengths[i])

    def _gather(self) -> np.ndarray:
        from tfrx import _native

        return _native.gather_spans(self.buffers, self.which, self.spans, self.lengths)  # type: ignore[return-value]  # the stub says object

    def _parse_in_place(self, core: Any, threads: int, views: bool) -> Any:
        return core.parse_spans(self.buffers, self.which, self.spans, self.lengths, threads, views=views)
