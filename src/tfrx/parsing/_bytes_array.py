"""BytesArray: byte strings as spans of one buffer, without a Python object per value.

Parsers made with ``bytes_as="views"`` return string features as a
:class:`BytesArray` instead of a NumPy object array of ``bytes``: value ``i``
is ``data[starts[i] : starts[i] + lengths[i]]``. When the records came as a
:class:`tfrx.RecordBatch`, ``data`` is the batch's own buffer and nothing is
copied; a list of ``bytes`` (or defaults filling missing values) makes one
buffer the values are packed into.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tfrx import _native

__all__ = ["BytesArray"]


class PackedBytes(NamedTuple):
    """:meth:`BytesArray.packed`'s result: unpacks as ``values, offsets``."""

    values: Any
    offsets: np.ndarray


# Arrow's binary_view keeps values of up to 12 bytes inside the 16-byte view;
# longer ones keep their first 4 bytes there and point into a data buffer.
_INLINE = 12
# binary_view offsets are int32: larger buffers become large_binary (one copy).
_MAX_VIEW_BUFFER = (1 << 31) - 1


class BytesArray:
    """Byte strings at ``data[starts[i] : starts[i] + lengths[i]]``, shaped like ``starts``.

    ``data`` is a 1-D ``uint8`` array that the BytesArray keeps alive;
    ``starts`` and ``lengths`` are ``int64`` arrays of one shape, which is the
    array's shape (``[batch] + shape`` for a ``FixedLenFeature``). Indexing
    with an integer on a 1-D array gives ``bytes``; slices, index arrays and
    :meth:`reshape` give BytesArrays over the same ``data``. :meth:`view`
    gives one value as a ``uint8`` array without copying, :meth:`packed` the
    values end to end with Arrow-style offsets, :meth:`to_arrow` a
    ``pyarrow`` array, :meth:`to_numpy` the object array of ``bytes`` that a
    parser gives by default.
    """

    __slots__ = ("data", "starts", "lengths")

    def __init__(self, data: Any, starts: Any, lengths: Any) -> None:
        data = np.asarray(data) if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
        if data.dtype != np.uint8 or data.ndim != 1:
            data = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        starts = np.asarray(starts, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        if starts.shape != lengths.shape:
            raise ValueError(f"BytesArray: starts {starts.shape} and lengths {lengths.shape} differ in shape")
        if starts.size and (starts.min() < 0 or lengths.min() < 0 or int((starts + lengths).max()) > data.shape[0]):
            raise ValueError("BytesArray: a value lies outside the data buffer")
        self.data = data
        self.starts = starts
        self.lengths = lengths

    @classmethod
    def _trusted(cls, data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> BytesArray:
        obj = cls.__new__(cls)
        obj.data, obj.starts, obj.lengths = data, starts, lengths
        return obj

    @classmethod
    def from_values(cls, values: Any) -> BytesArray:
        """A BytesArray holding ``values`` (bytes-like objects, any nesting of lists or an object array)."""
        arr = np.asarray(values, dtype=object)
        flat = [bytes(v) for v in arr.reshape(-1).tolist()]
        lengths = np.fromiter((len(v) for v in flat), dtype=np.int64, count=len(flat))
        starts = np.zeros(len(flat), np.int64)
        if len(flat) > 1:
            np.cumsum(lengths[:-1], out=starts[1:])
        data = np.frombuffer(b"".join(flat), dtype=np.uint8)
        return cls._trusted(data, starts.reshape(arr.shape), lengths.reshape(arr.shape))

    # ------------------------------------------------------------ array-like
    @property
    def shape(self) -> tuple:
        return self.starts.shape

    @property
    def ndim(self) -> int:
        return self.starts.ndim

    @property
    def size(self) -> int:
        return int(self.starts.size)

    @property
    def dtype(self) -> np.dtype:
        """``object``: the dtype of the array of ``bytes`` the values stand for."""
        return np.dtype(object)

    @property
    def nbytes(self) -> int:
        """The bytes of the values (not of the buffer they lie in)."""
        return int(self.lengths.sum())

    def __len__(self) -> int:
        if self.starts.ndim == 0:
            raise TypeError("len() of a 0-d BytesArray")
        return int(self.starts.shape[0])

    def __getitem__(self, key: Any) -> Any:
        starts = self.starts[key]
        if isinstance(starts, np.ndarray):
            return BytesArray._trusted(self.data, starts, self.lengths[key])
        s = int(starts)
        return self.data[s : s + int(self.lengths[key])].tobytes()

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def reshape(self, *shape: Any) -> BytesArray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return BytesArray._trusted(self.data, self.starts.reshape(shape), self.lengths.reshape(shape))

    def view(self, index: Any) -> np.ndarray:
        """One value as a read-only ``uint8`` array over ``data`` (no copy)."""
        s, n = int(self.starts[index]), int(self.lengths[index])
        out = self.data[s : s + n]
        out.flags.writeable = False
        return out

    # ------------------------------------------------------------ conversions
    def tolist(self) -> Any:
        """Nested lists of ``bytes``, shaped like the array."""
        return self.to_numpy().tolist()

    def to_numpy(self) -> np.ndarray:
        """The NumPy object array of ``bytes`` that a parser returns by default."""
        buf = self.data
        flat = [
            buf[s : s + n].tobytes()
            for s, n in zip(self.starts.reshape(-1).tolist(), self.lengths.reshape(-1).tolist())
        ]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(self.shape)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype)

    def packed(self) -> PackedBytes:
        """:class:`PackedBytes` ``(values, offsets)``: the values end to end in flat order, value ``i`` at
        ``values[offsets[i]:offsets[i + 1]]`` (``int64`` offsets, as Arrow's large_binary).
        No copy when the values already lie end to end in ``data``; else one native gather."""
        starts = self.starts.reshape(-1)
        lengths = self.lengths.reshape(-1)
        offsets = np.zeros(starts.shape[0] + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if starts.shape[0] == 0:
            return PackedBytes(self.data[:0], offsets)
        if np.array_equal(starts, offsets[:-1] + starts[0]):
            begin = int(starts[0])
            return PackedBytes(self.data[begin : begin + int(offsets[-1])], offsets)
        values: Any = _native.gather_spans([self.data], np.zeros(starts.shape[0], np.int64), starts, lengths)
        return PackedBytes(values, offsets)

    def to_arrow(self) -> Any:
        """The values in flat order as a ``pyarrow`` array (needs pyarrow).

        ``binary_view`` over ``data`` without copying the values (only a
        16-byte view per value is written); when ``data`` is 2 GiB or more,
        ``large_binary`` over :meth:`packed`.
        """
        import pyarrow as pa

        starts = self.starts.reshape(-1)
        lengths = self.lengths.reshape(-1)
        n = starts.shape[0]
        if self.data.shape[0] > _MAX_VIEW_BUFFER or not hasattr(pa, "binary_view"):
            values, offsets = self.packed()
            return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(values)])
        views = np.zeros((n, 16), np.uint8)
        views[:, :4] = lengths.astype("<i4").view(np.uint8).reshape(n, 4)
        # Bytes 4.. hold the value (up to 12 bytes) or its 4-byte prefix, then buffer index 0 and offset.
        take = np.minimum(lengths, _INLINE)[:, None]
        k = np.arange(_INLINE)
        within = k < take
        if n and self.data.shape[0]:
            idx = np.minimum(starts[:, None] + k, self.data.shape[0] - 1)
            views[:, 4:] = np.where(within, self.data[idx], 0)
        long = lengths > _INLINE
        if long.any():
            views[long, 8:12] = 0
            views[long, 12:16] = starts[long].astype("<i4").view(np.uint8).reshape(-1, 4)
        buffers = [None, pa.py_buffer(views), pa.py_buffer(self.data)]
        return pa.Array.from_buffers(pa.binary_view(), n, buffers)

    def __repr__(self) -> str:
        if self.size <= 8:
            return f"BytesArray({self.tolist()!r})"
        return f"BytesArray(<{self.size} values, shape {self.shape}, {self.nbytes} bytes>)"
