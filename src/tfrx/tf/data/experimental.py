"""``tf.data.experimental``: TensorFlow's aliases for :mod:`tfrx.data` operations.

The transformation functions (``ignore_errors()``, ``bucket_by_sequence_length(...)``,
``group_by_window(...)``, ``rebatch(...)``, ``snapshot(...)``, ...) return a
function for ``Dataset.apply``, as TensorFlow's do, calling the
``Dataset`` method of the same name. The dataset constructors
(``sample_from_datasets``, ``choose_from_datasets``, ``save``, ``load``)
call ``Dataset``'s static methods. A name whose operation ``tfrx.data``
does not have raises ``NotImplementedError`` when used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfrx.data import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    Options,
)
from tfrx.io import TFRecordWriter as _RecordWriter

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Options",
    "TFRecordWriter",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "dense_to_ragged_batch",
    "enumerate_dataset",
    "group_by_window",
    "ignore_errors",
    "load",
    "parallel_interleave",
    "rebatch",
    "sample_from_datasets",
    "save",
    "scan",
    "snapshot",
    "unbatch",
]


def _method(name: str) -> Callable:
    method = getattr(Dataset, name, None)
    if method is None:
        raise NotImplementedError(
            f"tf.data.experimental.{name}: tfrx.data.Dataset has no {name!r} operation yet; see docs/porting.md"
        )
    return method


def _transformation(name: str, method_name: str | None = None) -> Callable:
    def make(*args: Any, **kwargs: Any) -> Callable[[Dataset], Dataset]:
        method = _method(method_name or name)
        return lambda dataset: method(dataset, *args, **kwargs)

    make.__name__ = name
    make.__qualname__ = name
    make.__doc__ = f"``tf.data.experimental.{name}(...)``: a function for ``Dataset.apply`` calling ``Dataset.{method_name or name}(...)``."
    return make


def _constructor(name: str) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        return _method(name)(*args, **kwargs)

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = f"``tf.data.experimental.{name}(...)``: ``Dataset.{name}(...)``."
    return call


ignore_errors = _transformation("ignore_errors")
bucket_by_sequence_length = _transformation("bucket_by_sequence_length")
group_by_window = _transformation("group_by_window")
rebatch = _transformation("rebatch")
snapshot = _transformation("snapshot")
scan = _transformation("scan")
enumerate_dataset = _transformation("enumerate_dataset", "enumerate")
unbatch = _transformation("unbatch")
sample_from_datasets = _constructor("sample_from_datasets")
choose_from_datasets = _constructor("choose_from_datasets")
load = _constructor("load")


def save(dataset: Dataset, path: str, *args: Any, **kwargs: Any) -> None:
    """``tf.data.experimental.save(dataset, path, ...)``: ``dataset.save(path, ...)``."""
    _method("save")(dataset, path, *args, **kwargs)


def cardinality(dataset: Dataset) -> int:
    """``tf.data.experimental.cardinality``: ``dataset.cardinality()``."""
    return dataset.cardinality()


def dense_to_ragged_batch(batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = None) -> Callable:
    """Not kept: ragged batches of dense elements; use ``padded_batch`` or ``batch`` of equal shapes."""
    raise NotImplementedError(
        "tf.data.experimental.dense_to_ragged_batch is not supported; use Dataset.padded_batch, or parse VarLenFeature/RaggedFeature after batch"
    )


def parallel_interleave(
    map_func: Callable, cycle_length: int, block_length: int = 1, sloppy: bool = False, **kwargs: Any
) -> Callable:
    """``tf.data.experimental.parallel_interleave``: ``Dataset.interleave`` with ``num_parallel_calls=cycle_length``, ``deterministic=not sloppy``."""
    return lambda dataset: dataset.interleave(
        map_func,
        cycle_length=cycle_length,
        block_length=block_length,
        num_parallel_calls=cycle_length,
        deterministic=not sloppy,
    )


class TFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type)``: ``write(dataset)`` writes each element (``bytes``) as one record."""

    def __init__(self, filename: str, compression_type: str | None = None) -> None:
        self._filename = filename
        self._compression = compression_type

    def write(self, dataset: Dataset) -> None:
        with _RecordWriter(self._filename, compression=self._compression or "") as writer:
            for element in dataset:
                if hasattr(element, "item") and not isinstance(element, (bytes, bytearray)):
                    element = element.item()
                if not isinstance(element, (bytes, bytearray, memoryview)):
                    raise TypeError(
                        f"TFRecordWriter.write: the dataset's elements must be scalar strings (bytes), got {type(element).__name__}"
                    )
                writer.write(bytes(element))
