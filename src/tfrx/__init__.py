"""tfrx: TFRecord files, tf.train.Example and tf.data-style pipelines without TensorFlow."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

# --------------------------------------------------------------- errors
from tfrx.errors import (
    CompressedFileError,
    ConvertError,
    CorruptRecordError,
    CorruptRecordWarning,
    DecodeError,
    IncompleteShardSetError,
    IndexFileError,
    ParseError,
    SidecarFileError,
    SpecError,
    StaleIndexError,
    TfrxError,
)

__all__ += ["TfrxError", "CorruptRecordError", "DecodeError", "ParseError", "SpecError", "SidecarFileError",
            "IncompleteShardSetError", "IndexFileError", "StaleIndexError", "CompressedFileError", "ConvertError",
            "CorruptRecordWarning"]

# --------------------------------------------------------------- the compiled core
def _load_native():
    """``tfrx._native``, or an ImportError that says how to build it (not a circular-import error)."""
    import importlib

    try:
        return importlib.import_module("tfrx._native")
    except ModuleNotFoundError as e:
        if e.name != "tfrx._native":
            raise
        import glob
        import os
        import sys

        here = os.path.dirname(__file__)
        others = sorted(os.path.basename(p) for p in glob.glob(os.path.join(here, "_native*.*"))
                        if p.endswith((".so", ".pyd")))
        built = (f" ({', '.join(others)} is there, built for another Python than {sys.version.split()[0]})"
                 if others else "")
        raise ImportError(
            f"tfrx's native extension (tfrx._native) is not built{built}: in a source checkout run "
            f"`make dev PYTHON={sys.executable}` (then PYTHONPATH=src works), or install tfrx with `pip install .`"
        ) from None


_load_native()

# --------------------------------------------------------------- allocator (see tfrx/memory.py)
from tfrx import memory as _memory

_memory._tune_at_import()

# --------------------------------------------------------------- checksums
from tfrx.crc import crc32c, crc32c_backend, masked_crc32c

__all__ += ["crc32c", "masked_crc32c", "crc32c_backend"]

# --------------------------------------------------------------- record I/O (io)
from tfrx.io import (
    RecordBatch,
    RecordPosition,
    RecordReader,
    TFRecordOptions,
    TFRecordWriter,
    read_records,
    write_records,
)

__all__ += [
    "RecordBatch",
    "TFRecordOptions",
    "TFRecordWriter",
    "write_records",
    "RecordReader",
    "read_records",
    "RecordPosition",
]

# --------------------------------------------------------------- Example codec (train, example)
from tfrx import train
from tfrx.codec import (
    Ragged,
    bytes_feature,
    decode_example,
    decode_examples,
    decode_raw,
    decode_sequence_example,
    decode_tensor,
    encode_examples,
    encode_sequence_examples,
    encode_tensor,
    float_feature,
    int64_feature,
    make_example,
    make_sequence_example,
)

__all__ += [
    "train",
    "make_example",
    "make_sequence_example",
    "bytes_feature",
    "float_feature",
    "int64_feature",
    "encode_examples",
    "encode_sequence_examples",
    "Ragged",
    "decode_example",
    "decode_examples",
    "decode_sequence_example",
    "encode_tensor",
    "decode_tensor",
    "decode_raw",
]


from tfrx.codec import example_to_dict, sequence_example_to_dict  # noqa: E402, F401 (deprecated names)

# --------------------------------------------------------------- parsing (dtypes, parsing)
from tfrx.dtypes import bool_, float16, float32, float64, int8, int16, int32, int64, string, uint8, uint16, uint32, uint64
from tfrx.parsing import (
    BytesArray,
    ExampleParser,
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedArray,
    RaggedFeature,
    SequenceExampleParser,
    SparseArray,
    SparseFeature,
    VarLenFeature,
    features_from_json,
    features_to_json,
    infer_features,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)

__all__ += [
    "int64",
    "float32",
    "string",
    "bool_",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "float16",
    "float64",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "VarLenFeature",
    "SparseFeature",
    "RaggedFeature",
    "SparseArray",
    "RaggedArray",
    "BytesArray",
    "ExampleParser",
    "SequenceExampleParser",
    "parse_example",
    "parse_single_example",
    "parse_sequence_example",
    "parse_single_sequence_example",
    "infer_features",
    "features_to_json",
    "features_from_json",
]


# --------------------------------------------------------------- pipeline (data)
from tfrx.data import AUTOTUNE, TFRecordDataset

__all__ += ["AUTOTUNE", "TFRecordDataset"]


# --------------------------------------------------------------- random access (index)
from tfrx.data.random_access import RandomAccessDataset
from tfrx.index import (
    RecordIndex,
    build_index,
    count_records,
    load_index,
)

__all__ += [
    "RandomAccessDataset",
    "RecordIndex",
    "build_index",
    "load_index",
    "count_records",
]


# --------------------------------------------------------------- tools
from tfrx.tools import ShardedWriter, write_examples

__all__ += ["ShardedWriter", "write_examples"]


# --------------------------------------------------------------- optional submodules
# Imported on first use so that `import tfrx` never pulls in Pillow, PyTorch,
# JAX, Keras or Grain.
_LAZY_SUBMODULES = frozenset({"image", "torch", "jax", "keras", "grain", "testing", "demo", "cli", "arrow", "ray", "viewer", "tfds", "tf", "events"})
# Functions of optional submodules reachable from the facade: name -> module.
_LAZY_FUNCTIONS = {"read_tfrecord": "arrow", "view": "viewer"}


def __getattr__(name: str):
    if name in _LAZY_FUNCTIONS:
        import importlib

        func = getattr(importlib.import_module(f"tfrx.{_LAZY_FUNCTIONS[name]}"), name)
        globals()[name] = func
        return func
    if name in _LAZY_SUBMODULES:
        import importlib

        module = importlib.import_module(f"tfrx.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tfrx' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES | set(_LAZY_FUNCTIONS))
