"""tf.data-style input pipelines: ``tfrx.data.Dataset`` and ``tfrx.TFRecordDataset``.

``dataset.py`` holds the base class; each transformation is one module that
attaches its method to :class:`Dataset` when imported here.
"""

from tfrx.data.dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    usable_cores,
)

# Each import below attaches one transformation (or source) to Dataset.
from tfrx.data import sources  # noqa: E402,F401  from_tensor_slices, from_tensors, range, from_generator, list_files
from tfrx.data import shard  # noqa: E402,F401
from tfrx.data import interleave  # noqa: E402,F401  interleave, flat_map
from tfrx.data import shuffle  # noqa: E402,F401
from tfrx.data import map  # noqa: E402,F401
from tfrx.data import filter  # noqa: E402,F401
from tfrx.data import batch  # noqa: E402,F401
from tfrx.data import padded_batch  # noqa: E402,F401
from tfrx.data import unbatch  # noqa: E402,F401
from tfrx.data import prefetch  # noqa: E402,F401
from tfrx.data import cache  # noqa: E402,F401
from tfrx.data import repeat  # noqa: E402,F401
from tfrx.data import take  # noqa: E402,F401
from tfrx.data import skip  # noqa: E402,F401
from tfrx.data import enumerate  # noqa: E402,F401
from tfrx.data import zip  # noqa: E402,F401
from tfrx.data import concatenate  # noqa: E402,F401
from tfrx.data import pipeline_options  # noqa: E402,F401  with_options
from tfrx.data import parse  # noqa: E402,F401
from tfrx.data import adapters  # noqa: E402,F401  to_torch, to_jax, to_keras
from tfrx.data import choose  # noqa: E402,F401  choose_from_datasets
from tfrx.data import sample  # noqa: E402,F401  sample_from_datasets
from tfrx.data import group_by_window  # noqa: E402,F401
from tfrx.data import bucket_by_sequence_length  # noqa: E402,F401
from tfrx.data import ignore_errors  # noqa: E402,F401
from tfrx.data import rebatch  # noqa: E402,F401
from tfrx.data import save  # noqa: E402,F401  save, load
from tfrx.data import snapshot  # noqa: E402,F401
from tfrx.data import window  # noqa: E402,F401
from tfrx.data import scan  # noqa: E402,F401
from tfrx.data import experimental  # noqa: E402,F401
from tfrx.data.pipeline_options import AutotuneOptions, Options, ThreadingOptions
from tfrx.data.tensor_spec import TensorSpec
from tfrx.data.tfrecord import TFRecordDataset

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
