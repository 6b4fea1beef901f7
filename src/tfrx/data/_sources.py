"""In-memory and file-name sources: from_tensor_slices, from_tensors, range, from_generator, list_files."""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation
from tfrx.data._seeds import fresh_seed, rng_for
from tfrx.data._structure import leading_dim, map_structure, slice_structure, to_numpy
from tfrx.data._tensor_spec import TensorSpec, as_numpy_dtype
from tfrx.io._data_files import expand_paths

__all__ = [
    "as_tensor",
    "TensorSlicesDataset",
    "RangeDataset",
    "GeneratorDataset",
    "ListFilesDataset",
    "expand_file_pattern",
]


class _PositionIterator(DatasetIterator):
    """Yields ``get(i)`` for i in ``positions``; state is the count consumed."""

    def __init__(self, get: Callable[[int], Any], positions) -> None:
        self._get = get
        self._positions = positions
        self._i = 0

    def __next__(self):
        if self._i >= len(self._positions):
            raise StopIteration
        value = self._get(self._positions[self._i])
        self._i += 1
        return value

    def get_state(self) -> dict:
        return {"index": self._i}

    def set_state(self, state: dict) -> None:
        self._i = int(state["index"])

    def close(self) -> None:
        self._i = len(self._positions)


_INT32 = np.iinfo(np.int32)


def as_tensor(x: Any) -> Any:
    """A leaf as TensorFlow converts it: Python numbers (and lists of them) become ``int32``
    (``int64`` when a value does not fit) and ``float32``; NumPy values keep their dtype."""
    if isinstance(x, (np.ndarray, np.generic, bytes, str)) or not isinstance(x, (int, float, list, tuple)):
        return to_numpy(x)
    a = to_numpy(x)
    if not isinstance(a, np.ndarray):
        return a
    if a.dtype == np.float64:
        return a.astype(np.float32)
    if a.dtype == np.int64 and (a.size == 0 or (a.min() >= _INT32.min and a.max() <= _INT32.max)):
        return a.astype(np.int32)
    return a


class TensorSlicesDataset(Dataset):
    """Elements are the slices of ``tensors`` along their first dimension."""

    def __init__(self, tensors: Any, positions: builtins.range | None = None) -> None:
        super().__init__()
        self._tensors = map_structure(as_tensor, tensors)
        n = leading_dim(self._tensors)
        self._positions = builtins.range(n) if positions is None else positions

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _PositionIterator(lambda i: slice_structure(self._tensors, i), self._positions)

    def cardinality(self) -> int:
        return len(self._positions)

    def _shard_source(self, num_shards: int, index: int) -> Dataset:
        return TensorSlicesDataset(self._tensors, self._positions[index::num_shards])


class RangeDataset(Dataset):
    """``range(start, stop, step)`` as ``int64`` NumPy scalars."""

    def __init__(self, positions: builtins.range, dtype=np.int64) -> None:
        super().__init__()
        self._positions = positions
        self._dtype = np.dtype(dtype)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        t = self._dtype.type
        return _PositionIterator(t, self._positions)

    def cardinality(self) -> int:
        return len(self._positions)

    def _shard_source(self, num_shards: int, index: int) -> Dataset:
        return RangeDataset(self._positions[index::num_shards], self._dtype)


class _GeneratorIterator(DatasetIterator):
    _convert: Callable[[Any], Any] | None = None

    def __init__(self, make: Callable[[], Iterable]) -> None:
        self._make = make
        self._it: Iterator | None = iter(make())
        self._count = 0

    def __next__(self):
        if self._it is None:
            raise StopIteration
        value = next(self._it)
        self._count += 1
        if self._convert is not None:
            return self._convert(value)
        return map_structure(to_numpy, value)

    def get_state(self) -> dict:
        return {"count": self._count}

    def set_state(self, state: dict) -> None:
        # A generator cannot seek: restart it and drop what was already produced.
        self.close()
        self._it = iter(self._make())
        self._count = 0
        for _ in builtins.range(int(state["count"])):
            next(self._it)
            self._count += 1

    def close(self) -> None:
        it, self._it = self._it, None
        if it is not None and hasattr(it, "close"):
            it.close()


class GeneratorDataset(Dataset):
    """Elements from a Python generator function, called once per iteration.

    Restoring an iterator's state calls the generator again and skips the
    elements already produced, so the generator must be deterministic.
    """

    def __init__(self, generator: Callable[..., Iterable], args: tuple = (), signature: Any = None) -> None:
        if not callable(generator):
            raise TypeError("from_generator: `generator` must be a callable returning an iterable")
        super().__init__()
        self._generator = generator
        self._args = tuple(args)
        self._signature = signature

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        it = _GeneratorIterator(lambda: self._generator(*self._args))
        if self._signature is not None:
            it._convert = self._convert
        return it

    def _convert(self, value: Any) -> Any:
        sig = self._signature
        if isinstance(sig, TensorSpec):
            return sig.convert(value)
        if isinstance(sig, (tuple, list)) and not isinstance(value, (tuple, list)):
            raise TypeError(
                f"from_generator: the signature is a {type(sig).__name__}, the generator yielded a {type(value).__name__}"
            )
        if isinstance(sig, list):
            sig = tuple(sig)
        if isinstance(value, list):
            value = tuple(value)
        try:
            return map_structure(lambda spec, v: spec.convert(v), sig, value)
        except ValueError as e:
            raise ValueError(f"from_generator: a generated element does not match output_signature: {e}") from None


def _as_name(p) -> str:
    if isinstance(p, np.ndarray):
        p = p.item()
    if isinstance(p, (bytes, np.bytes_)):
        return bytes(p).decode()
    return os.fspath(p) if hasattr(p, "__fspath__") else str(p)


def expand_file_pattern(pattern, *, storage_options: dict | None = None, require_all_shards: bool = True) -> list[str]:
    """File names for a name, glob or list of them (``str``, ``bytes`` or paths): the one place that lists files.

    See :func:`tfrx.io._paths.expand_paths` for the files dropped from globs and ``require_all_shards``.
    """
    single = isinstance(pattern, (str, bytes, np.bytes_, np.ndarray)) or hasattr(pattern, "__fspath__")
    patterns = [_as_name(p) for p in ([pattern] if single else list(pattern))]
    return [
        str(p) for p in expand_paths(patterns, storage_options=storage_options, require_all_shards=require_all_shards)
    ]


class _ListFilesIterator(DatasetIterator):
    def __init__(self, files: list[str], shuffle: bool, seed: int, epoch: tuple[int, ...]) -> None:
        self._files = files
        self._shuffle = shuffle
        self._seed = seed
        self._i = 0
        self._set_epoch(epoch)

    def _set_epoch(self, epoch) -> None:
        self._epoch = tuple(epoch)
        if self._shuffle:
            self._order = rng_for(self._seed, self._epoch).permutation(len(self._files)).tolist()
        else:
            self._order = list(builtins.range(len(self._files)))

    def __next__(self):
        if self._i >= len(self._order):
            raise StopIteration
        name = self._files[self._order[self._i]]
        self._i += 1
        return name.encode()

    def get_state(self) -> dict:
        return {"index": self._i, "epoch": list(self._epoch), "seed": self._seed}

    def set_state(self, state: dict) -> None:
        self._seed = int(state["seed"])
        self._set_epoch(state["epoch"])
        self._i = int(state["index"])


class ListFilesDataset(Dataset):
    """File names (``bytes``, like ``tf.data.Dataset.list_files``) matching patterns.

    Names are sorted, then (by default) shuffled with a new order each
    iteration, derived from ``seed``. Sharding for workers and ranks splits the
    sorted list before shuffling, so shards never overlap even when each
    process draws its own seed.
    """

    def __init__(self, files: list[str], shuffle: bool, seed: int | None) -> None:
        super().__init__()
        self._files = list(files)
        self._shuffle = bool(shuffle)
        self._seed = fresh_seed() if seed is None else int(seed)

    @property
    def files(self) -> list[str]:
        return list(self._files)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return _ListFilesIterator(self._files, self._shuffle, self._seed, ctx.epoch)

    def cardinality(self) -> int:
        return len(self._files)

    def _shard_source(self, num_shards: int, index: int) -> Dataset:
        clone = ListFilesDataset([], self._shuffle, self._seed)
        clone._files = self._files[index::num_shards]
        return clone


@transformation(static=True)
def from_tensor_slices(tensors: Any) -> Dataset:
    """One element per slice along the first dimension of every component."""
    return TensorSlicesDataset(tensors)


@transformation(static=True)
def from_tensors(tensors: Any) -> Dataset:
    """A single element: ``tensors`` itself."""

    def one(a):
        a = as_tensor(a)
        if isinstance(a, bytes):
            return np.array([a], dtype=object)
        return np.expand_dims(np.asarray(a), 0)

    return TensorSlicesDataset(map_structure(one, tensors))


@transformation(static=True)
def range(*args: int, dtype=np.int64, output_type=None, name: str | None = None) -> Dataset:  # noqa: A001 - tf.data name
    """``Dataset.range(stop)`` / ``range(start, stop[, step])``; ``output_type`` is tf.data's name for ``dtype``."""
    if output_type is not None:
        dtype = as_numpy_dtype(output_type)
    return RangeDataset(builtins.range(*args), dtype)


@transformation(static=True)
def from_generator(
    generator: Callable[..., Iterable],
    output_types: Any = None,
    output_shapes: Any = None,
    args: tuple | None = None,
    output_signature: Any = None,
) -> Dataset:
    """Elements from ``generator(*args)``.

    ``output_signature`` (a :class:`TensorSpec` or a dict/tuple of them)
    converts every component to its dtype and checks its shape; so does
    ``output_types`` (dtypes, with ``output_shapes``), TensorFlow's older form.
    Without either, components become NumPy values as they are.
    """
    signature = output_signature
    if signature is None and output_types is not None:
        shapes = output_shapes
        if shapes is None:
            shapes = map_structure(lambda _: None, output_types) if isinstance(output_types, (dict, tuple)) else None
        if isinstance(output_types, (dict, tuple)):
            signature = map_structure(lambda t, s: TensorSpec(s, t), output_types, _shape_tree(output_types, shapes))
        else:
            signature = TensorSpec(shapes, output_types)
    elif output_types is not None or output_shapes is not None:
        raise TypeError("from_generator: pass output_signature or output_types/output_shapes, not both")
    return GeneratorDataset(generator, args or (), signature)


def _shape_tree(types: Any, shapes: Any) -> Any:
    """``shapes`` with each shape made a leaf (a shape is a list, which map_structure treats as a leaf)."""
    if isinstance(types, dict):
        return {k: _shape_tree(types[k], shapes[k]) for k in types}
    if isinstance(types, tuple):
        return tuple(_shape_tree(t, s) for t, s in zip(types, shapes))
    return None if shapes is None else list(shapes)


@transformation(static=True)
def list_files(
    file_pattern, shuffle: bool | None = None, seed: int | None = None, *, require_all_shards: bool = True
) -> Dataset:
    """File names matching ``file_pattern`` (a glob or a list of globs), shuffled unless ``shuffle=False``.

    tfrx's own files (``.tfrx/``, indexes, manifests) are left out; a set of
    ``-NNNNN-of-MMMMM`` shards must be whole unless ``require_all_shards=False``
    (:class:`tfrx.IncompleteShardSetError` names the missing ones).
    """
    files = sorted(set(expand_file_pattern(file_pattern, require_all_shards=require_all_shards)))
    if not files:
        raise FileNotFoundError(f"list_files: no files match {file_pattern!r}")
    return ListFilesDataset(files, True if shuffle is None else shuffle, seed)
