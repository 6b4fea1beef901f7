"""SparseArray and RaggedArray: NumPy counterparts of tf.SparseTensor and tf.RaggedTensor.

Both hold plain NumPy arrays that own their memory, so ``torch.from_numpy``
and ``jax.numpy.asarray`` take the numeric parts without copying.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
    """

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices: np.ndarray, values: np.ndarray, dense_shape: Any) -> None:
        self.indices = indices
        self.values = values
        self.dense_shape = np.asarray(dense_shape, dtype=np.int64)

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

        return torch.sparse_coo_tensor(
            torch.from_numpy(self.indices.T.copy()), torch.from_numpy(self.values), self.shape,
            check_invariants=True,  # SparseFeature keeps out-of-range indices, as TensorFlow does
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

    def __repr__(self) -> str:
        return f"SparseArray(indices={self.indices!r}, values={self.values!r}, dense_shape={self.dense_shape!r})"


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
