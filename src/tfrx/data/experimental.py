"""``tfrx.data.experimental``: the names of ``tf.data.experimental`` that tfrx has.

Functions that build a dataset take and return tfrx datasets; the
transformation factories (``group_by_window``, ``ignore_errors``, ...)
return a function for :meth:`Dataset.apply`, as TensorFlow's do. Every
name here is an alias of a :class:`Dataset` method, not a second
implementation.
"""

from __future__ import annotations

from collections.abc import Callable

from tfrx.data._dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from tfrx.data._pipeline_options import AutotuneOptions, ThreadingOptions
from tfrx.data._tensor_spec import TensorSpec
from tfrx.io import TFRecordWriter as _RecordWriter

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "AutotuneOptions",
    "TFRecordWriter",
    "TensorSpec",
    "ThreadingOptions",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "enumerate_dataset",
    "get_single_element",
    "group_by_window",
    "ignore_errors",
    "load",
    "parallel_interleave",
    "sample_from_datasets",
    "save",
    "scan",
    "shuffle_and_repeat",
    "snapshot",
    "unbatch",
]


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False) -> Dataset:
    """:meth:`Dataset.sample_from_datasets`."""
    return Dataset.sample_from_datasets(
        datasets, weights=weights, seed=seed, stop_on_empty_dataset=stop_on_empty_dataset
    )


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True) -> Dataset:
    """:meth:`Dataset.choose_from_datasets`."""
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=stop_on_empty_dataset)


def bucket_by_sequence_length(
    element_length_func,
    bucket_boundaries,
    bucket_batch_sizes,
    padded_shapes=None,
    padding_values=None,
    pad_to_bucket_boundary=False,
    no_padding=False,
    drop_remainder=False,
) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.bucket_by_sequence_length`."""
    return lambda ds: ds.bucket_by_sequence_length(
        element_length_func,
        bucket_boundaries,
        bucket_batch_sizes,
        padded_shapes=padded_shapes,
        padding_values=padding_values,
        pad_to_bucket_boundary=pad_to_bucket_boundary,
        no_padding=no_padding,
        drop_remainder=drop_remainder,
    )


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.group_by_window`."""
    return lambda ds: ds.group_by_window(
        key_func, reduce_func, window_size=window_size, window_size_func=window_size_func
    )


def ignore_errors(log_warning=False) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.ignore_errors`."""
    return lambda ds: ds.ignore_errors(log_warning=log_warning)


def scan(initial_state, scan_func) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.scan`."""
    return lambda ds: ds.scan(initial_state, scan_func)


def snapshot(path, compression="auto", reader_func=None, shard_func=None) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.snapshot`."""
    return lambda ds: ds.snapshot(path, compression=compression, reader_func=reader_func, shard_func=shard_func)


def unbatch() -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.unbatch`."""
    return lambda ds: ds.unbatch()


def enumerate_dataset(start=0) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.enumerate`."""
    return lambda ds: ds.enumerate(start)


def parallel_interleave(
    map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None, prefetch_input_elements=None
) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: :meth:`Dataset.interleave` with ``num_parallel_calls=cycle_length`` and
    ``deterministic=not sloppy`` (the buffer sizes are tf.data tuning knobs, accepted and unused)."""
    return lambda ds: ds.interleave(
        map_func,
        cycle_length=cycle_length,
        block_length=block_length,
        num_parallel_calls=cycle_length,
        deterministic=not sloppy,
    )


def shuffle_and_repeat(buffer_size, count=None, seed=None) -> Callable[[Dataset], Dataset]:
    """A function for ``apply``: ``shuffle(buffer_size, seed).repeat(count)``."""
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)


def save(dataset: Dataset, path, compression=None, shard_func=None, checkpoint_args=None) -> None:
    """:meth:`Dataset.save`."""
    dataset.save(path, compression=compression, shard_func=shard_func, checkpoint_args=checkpoint_args)


def load(path, element_spec=None, compression="auto", reader_func=None) -> Dataset:
    """:meth:`Dataset.load`."""
    return Dataset.load(path, element_spec=element_spec, compression=compression, reader_func=reader_func)


def cardinality(dataset: Dataset) -> int:
    """:meth:`Dataset.cardinality`."""
    return dataset.cardinality()


def get_single_element(dataset: Dataset):
    """The only element of ``dataset``; ``ValueError`` if it has none or more than one."""
    with iter(dataset) as it:
        try:
            first = next(it)
        except StopIteration:
            raise ValueError("get_single_element: the dataset is empty; it must have exactly one element") from None
        try:
            next(it)
        except StopIteration:
            return first
    raise ValueError("get_single_element: the dataset has more than one element; it must have exactly one")


class TFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type)``: ``write(dataset)`` writes
    each element (a scalar string: ``bytes`` or a 0-d array of ``bytes``) as one record."""

    def __init__(self, filename: str, compression_type: str | None = None) -> None:
        self._filename = filename
        self._compression = compression_type

    def write(self, dataset: Dataset) -> None:
        """Writes every element of ``dataset``, in order, to the file (replacing it)."""
        with _RecordWriter(self._filename, compression=self._compression or "") as writer:
            for i, element in enumerate(dataset.as_numpy_iterator()):
                if hasattr(element, "item") and not isinstance(element, (bytes, bytearray)):
                    element = element.item()
                if not isinstance(element, (bytes, bytearray, memoryview)):
                    raise TypeError(
                        f"TFRecordWriter.write: element {i} of the dataset is a {type(element).__name__}; "
                        "every element must be a scalar string (bytes): map the dataset to serialized records first"
                    )
                writer.write(bytes(element))
