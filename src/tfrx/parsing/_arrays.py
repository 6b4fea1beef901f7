"""SparseArray and RaggedArray: NumPy counterparts of tf.SparseTensor and tf.RaggedTensor.

Both hold plain NumPy arrays that own their memory, so ``torch.from_numpy``
and ``jax.numpy.asarray`` take the numeric parts without copying.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx import _native

__all__ = ["SparseArray", "RaggedArray"]


def _fill_value(values: np.ndarray, default: Any) -> Any:
    if default is not None:
        return default
    return b"" if values.dtype == object else values.dtype.type(0)


class SparseArray:
    """A sparse array in COO form, like ``tf.sparse.SparseTensor``.

    ``indices`` is ``int64 [nnz, ndim]``, ``values`` has ``nnz`` entries
    (an object array of ``bytes`` for strings) and ``dense_shape`` is
    ``int64 [ndim]``.

    ``VarLenFeature`` results are built from the row splits the parser
    produces (:meth:`from_row_splits`): their ``indices`` are computed from
    those splits the first time they are read, so a pipeline that only wants
    the values, the row lengths (:meth:`to_ragged`) or the dense array never
    writes them (they are ``ndim`` int64 per value, more bytes than most
    values).
    """

    __slots__ = ("_indices", "values", "dense_shape", "_row_splits")

    def __init__(self, indices: np.ndarray, values: np.ndarray, dense_shape: Any) -> None:
        self._indices: np.ndarray | None = indices
        self.values = values
        self.dense_shape = np.asarray(dense_shape, dtype=np.int64)
        self._row_splits: tuple | None = None

    @classmethod
    def from_row_splits(cls, values: np.ndarray, nested_row_splits: Any, dense_shape: Any = None) -> SparseArray:
        """The sparse form of ragged ``values``: row ``i`` holds its entries at positions ``0, 1, ...``.

        ``nested_row_splits`` are int64 splits, outermost first (one array for
        ``[row, position]`` indices, two for ``[row, step, position]``), as
        ``tf.RaggedTensor.to_sparse`` lays them out. ``dense_shape`` defaults
        to the bounding shape. ``indices`` are computed when first read.
        """
        splits = tuple(np.ascontiguousarray(s, dtype=np.int64) for s in nested_row_splits)
        if not 1 <= len(splits) <= 2 or any(s.ndim != 1 or s.shape[0] == 0 for s in splits):
            raise ValueError("from_row_splits takes one or two non-empty 1-D arrays of row splits")
        if len(splits) == 2 and splits[1].shape[0] != int(splits[0][-1]) + 1:
            raise ValueError(
                f"the outer row splits end at {int(splits[0][-1])} but the inner ones split "
                f"{splits[1].shape[0] - 1} rows"
            )
        if int(splits[0][0]) != 0 or (len(splits) == 2 and int(splits[1][0]) != 0):
            raise ValueError("row splits must start at 0")
        if int(splits[-1][-1]) != len(values):
            raise ValueError(f"the row splits end at {int(splits[-1][-1])} but there are {len(values)} values")
        if dense_shape is None:
            dense_shape = _native.sparse_indices(splits[0], splits[1] if len(splits) == 2 else None, False).dense_shape
        return cls._from_splits(values, splits, np.asarray(dense_shape, dtype=np.int64))

    @classmethod
    def _from_splits(cls, values: np.ndarray, splits: tuple, dense_shape: np.ndarray) -> SparseArray:
        """from_row_splits without its checks, for splits the parser made."""
        obj = cls.__new__(cls)
        obj._indices = None
        obj.values = values
        obj.dense_shape = dense_shape
        obj._row_splits = splits
        return obj

    @property
    def indices(self) -> np.ndarray:
        """``int64 [nnz, ndim]`` COO indices (computed from the row splits on first use where built from them)."""
        if self._indices is None:
            splits = self._row_splits
            assert splits is not None  # a SparseArray has indices or the row splits to compute them
            indices = _native.sparse_indices(splits[0], splits[1] if len(splits) == 2 else None).indices
            assert indices is not None  # asked for (with_indices defaults to True)
            self._indices = indices
        return self._indices

    @indices.setter
    def indices(self, value: np.ndarray) -> None:
        self._indices = value
        self._row_splits = None

    @property
    def nested_row_splits(self) -> tuple | None:
        """The row splits this array was built from (outermost first), or ``None`` for arbitrary COO indices."""
        return self._row_splits

    @property
    def shape(self) -> tuple:
        """``dense_shape`` as a tuple of ints."""
        return tuple(int(d) for d in self.dense_shape)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of ``values``."""
        return self.values.dtype

    @property
    def nnz(self) -> int:
        """The number of stored values."""
        return int(self.values.shape[0])

    def to_ragged(self) -> RaggedArray:
        """The values as a :class:`RaggedArray` of the sparse array's rows (``tf.RaggedTensor.from_sparse``).

        Built from the row splits where the array has them (every row, trailing
        empty ones included); otherwise from ``indices``, which must then be
        two-dimensional, sorted, and dense in each row (positions 0, 1, ...),
        as ``tf.RaggedTensor.from_sparse`` requires.
        """
        if self._row_splits is not None:
            return RaggedArray.from_nested_row_splits(self.values, self._row_splits)
        idx = self.indices
        if idx.ndim != 2 or idx.shape[1] != 2:
            raise ValueError("to_ragged needs a two-dimensional SparseArray (indices of shape [nnz, 2])")
        rows = int(self.dense_shape[0])
        counts = np.bincount(idx[:, 0], minlength=rows) if idx.shape[0] else np.zeros(rows, np.int64)
        splits = np.zeros(rows + 1, np.int64)
        np.cumsum(counts, out=splits[1:])
        if idx.shape[0] and not np.array_equal(idx[:, 1], np.arange(idx.shape[0]) - np.repeat(splits[:-1], counts)):
            raise ValueError("to_ragged needs sorted indices with positions 0, 1, ... in every row")
        return RaggedArray(self.values, splits)

    def to_dense(self, default_value: Any = None) -> np.ndarray:
        """The dense array, with ``default_value`` (0 or ``b""``) where no value is stored."""
        out = np.full(self.shape, _fill_value(self.values, default_value), dtype=self.values.dtype)
        if self.nnz:
            out[tuple(self.indices.T)] = self.values
        return out

    def to_scipy(self):
        """A ``scipy.sparse.coo_matrix`` (2-D numeric arrays only)."""
        import scipy.sparse

        if self.indices.shape[1] != 2:
            raise ValueError("to_scipy needs a 2-D SparseArray")
        return scipy.sparse.coo_matrix((self.values, (self.indices[:, 0], self.indices[:, 1])), shape=self.shape)

    def to_torch(self):
        """A ``torch.sparse_coo_tensor`` sharing the numeric buffers where torch allows."""
        import torch

        # torch wants the indices as [ndim, nnz]: copied a column at a time (a strided transpose copies
        # 6x slower), each row then contiguous for the bound test.
        indices = np.empty(self.indices.shape[::-1], dtype=self.indices.dtype)
        for k in range(indices.shape[0]):
            indices[k] = self.indices[:, k]
        # SparseFeature keeps out-of-range indices, as TensorFlow does: those get torch's own check (and
        # its error); in-range ones skip it, since it costs more than the bound test.
        in_range = indices.shape[1] == 0 or all(
            0 <= row.min() and row.max() < size for row, size in zip(indices, self.shape, strict=True)
        )
        return torch.sparse_coo_tensor(
            torch.from_numpy(indices), torch.from_numpy(self.values), self.shape, check_invariants=not in_range
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SparseArray)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.dense_shape, other.dense_shape)
            and self.values.dtype == other.values.dtype
            and np.array_equal(self.values, other.values, equal_nan=self.values.dtype.kind == "f")
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        if self._indices is None:
            return (_from_row_splits, (self.values, self._row_splits, self.dense_shape))
        return (SparseArray, (self._indices, self.values, self.dense_shape))

    def __repr__(self) -> str:
        return f"SparseArray(indices={self.indices!r}, values={self.values!r}, dense_shape={self.dense_shape!r})"


def _from_row_splits(values: np.ndarray, splits: tuple, dense_shape: np.ndarray) -> SparseArray:
    return SparseArray.from_row_splits(values, splits, dense_shape)


class RaggedArray:
    """A ragged array like ``tf.RaggedTensor``: ``values`` split into rows by ``row_splits``.

    ``values`` is a NumPy array or another :class:`RaggedArray` (several
    ragged dimensions); ``row_splits[i]:row_splits[i+1]`` are row ``i``'s
    entries of ``values``.
    """

    __slots__ = ("values", "row_splits")

    def __init__(self, values: Any, row_splits: np.ndarray) -> None:
        self.values = values
        self.row_splits = row_splits

    @classmethod
    def from_nested_row_splits(cls, flat_values: np.ndarray, nested_row_splits: Any) -> Any:
        result: Any = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls(result, splits)
        return result

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, dtype: Any = np.int64) -> RaggedArray:
        lengths = np.asarray(row_lengths)
        splits = np.zeros(lengths.shape[0] + 1, dtype=dtype)
        np.cumsum(lengths, out=splits[1:])
        return cls(values, splits)

    @property
    def flat_values(self) -> np.ndarray:
        """The innermost values, below every ragged level (``tf.RaggedTensor.flat_values``)."""
        v = self.values
        while isinstance(v, RaggedArray):
            v = v.values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        """The row splits of every ragged level, outermost first (``tf.RaggedTensor.nested_row_splits``)."""
        out = [self.row_splits]
        v = self.values
        while isinstance(v, RaggedArray):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged levels."""
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of ``flat_values``."""
        return self.flat_values.dtype

    def row_lengths(self) -> np.ndarray:
        """The length of each row of the outermost level."""
        return np.diff(self.row_splits)

    def __len__(self) -> int:
        return int(self.row_splits.shape[0]) - 1

    def __getitem__(self, i: int) -> Any:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("RaggedArray index out of range")
        return self.values[int(self.row_splits[i]) : int(self.row_splits[i + 1])]

    def to_list(self) -> list:
        """Nested Python lists, as ``tf.RaggedTensor.to_list()`` gives."""
        inner = self.values.to_list() if isinstance(self.values, RaggedArray) else self.values.tolist()
        s = self.row_splits.tolist()
        return [inner[s[i] : s[i + 1]] for i in range(len(s) - 1)]

    def bounding_shape(self) -> tuple:
        """The smallest dense shape that holds every row (``tf.RaggedTensor.bounding_shape``)."""
        dims = [len(self)]
        level: Any = self
        while isinstance(level, RaggedArray):
            lengths = level.row_lengths()
            dims.append(int(lengths.max()) if lengths.size else 0)
            level = level.values
        dims.extend(int(d) for d in level.shape[1:])
        return tuple(dims)

    def to_dense(self, default_value: Any = None) -> np.ndarray:
        """A dense array of ``bounding_shape()``, padded with ``default_value`` (0 or ``b""``)."""
        flat = self.flat_values
        shape = self.bounding_shape()
        out = np.full(shape, _fill_value(flat, default_value), dtype=flat.dtype)
        splits = self.nested_row_splits
        # Index of every flat row in the padded array, one ragged level at a time.
        pos = [np.arange(len(self), dtype=np.int64)]
        for s in splits:
            lengths = np.diff(s)
            owner = np.repeat(np.arange(lengths.shape[0]), lengths)
            within = np.arange(int(s[-1]) - int(s[0]), dtype=np.int64) - np.repeat(s[:-1] - s[0], lengths)
            pos = [p[owner] for p in pos] + [within]
        if flat.shape[0]:
            out[tuple(pos)] = flat[int(splits[-1][0]) : int(splits[-1][-1])] if len(splits) else flat
        return out

    def to_torch(self):
        """A ``torch.nested`` jagged tensor (one ragged dimension only)."""
        import torch

        if isinstance(self.values, RaggedArray):
            raise ValueError("to_torch supports one ragged dimension")
        return torch.nested.nested_tensor_from_jagged(
            torch.from_numpy(self.values), offsets=torch.from_numpy(self.row_splits.astype(np.int64))
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RaggedArray):
            return False
        a, b = self.nested_row_splits, other.nested_row_splits
        if len(a) != len(b) or not all(np.array_equal(x, y) for x, y in zip(a, b)):
            return False
        fa, fb = self.flat_values, other.flat_values
        return fa.dtype == fb.dtype and np.array_equal(fa, fb, equal_nan=fa.dtype.kind == "f")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RaggedArray({self.to_list()!r})" if len(self) <= 8 else f"RaggedArray(<{len(self)} rows>)"
