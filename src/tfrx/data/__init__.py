"""tf.data-style input pipelines: ``tfrx.data.Dataset`` and ``tfrx.TFRecordDataset``.

``dataset.py`` holds the base class; each transformation is one module that
attaches its method to :class:`Dataset` when imported here.
"""

from tfrx.data._dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    usable_cores,
)

# Each import below attaches one transformation (or source) to Dataset.
from tfrx.data import _sources  # noqa: E402,F401  from_tensor_slices, from_tensors, range, from_generator, list_files
from tfrx.data import _shard  # noqa: E402,F401
from tfrx.data import _interleave  # noqa: E402,F401  interleave, flat_map
from tfrx.data import _shuffle  # noqa: E402,F401
from tfrx.data import _map  # noqa: E402,F401
from tfrx.data import _filter  # noqa: E402,F401
from tfrx.data import _batch  # noqa: E402,F401
from tfrx.data import _padded_batch  # noqa: E402,F401
from tfrx.data import _unbatch  # noqa: E402,F401
from tfrx.data import _prefetch  # noqa: E402,F401
from tfrx.data import _cache  # noqa: E402,F401
from tfrx.data import _repeat  # noqa: E402,F401
from tfrx.data import _take  # noqa: E402,F401
from tfrx.data import _skip  # noqa: E402,F401
from tfrx.data import _enumerate  # noqa: E402,F401
from tfrx.data import _zip  # noqa: E402,F401
from tfrx.data import _concatenate  # noqa: E402,F401
from tfrx.data import _pipeline_options  # noqa: E402,F401  with_options
from tfrx.data import _parse  # noqa: E402,F401
from tfrx.data import _adapters  # noqa: E402,F401  to_torch, to_jax, to_keras
from tfrx.data import _choose  # noqa: E402,F401  choose_from_datasets
from tfrx.data import _sample  # noqa: E402,F401  sample_from_datasets
from tfrx.data import _group_by_window  # noqa: E402,F401
from tfrx.data import _bucket_by_sequence_length  # noqa: E402,F401
from tfrx.data import _ignore_errors  # noqa: E402,F401
from tfrx.data import _rebatch  # noqa: E402,F401
from tfrx.data import _save  # noqa: E402,F401  save, load
from tfrx.data import _snapshot  # noqa: E402,F401
from tfrx.data import _window  # noqa: E402,F401
from tfrx.data import _scan  # noqa: E402,F401
from tfrx.data import experimental  # noqa: E402,F401
from tfrx.data._pipeline_options import AutotuneOptions, Options, ThreadingOptions
from tfrx.data._tensor_spec import TensorSpec
from tfrx.data._tfrecord import TFRecordDataset

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "DatasetIterator",
    "Options",
    "AutotuneOptions",
    "ThreadingOptions",
    "TFRecordDataset",
    "TensorSpec",
    "experimental",
    "usable_cores",
]
