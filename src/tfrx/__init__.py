"""tfrx: TFRecord files, tf.train.Example and tf.data-style pipelines without TensorFlow.

``import tfrx`` loads the errors and the native core only; every other name of
the facade (and every submodule) is imported on first use, so that the
``tfrx`` command and ``tfrx.view`` start quickly and no optional extra
(pyarrow, fsspec, Pillow, PyTorch, ...) loads until it is used.
"""

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

__all__ += [
    "TfrxError",
    "CorruptRecordError",
    "DecodeError",
    "ParseError",
    "SpecError",
    "SidecarFileError",
    "IncompleteShardSetError",
    "IndexFileError",
    "StaleIndexError",
    "CompressedFileError",
    "ConvertError",
    "CorruptRecordWarning",
]


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
        others = sorted(
            os.path.basename(p) for p in glob.glob(os.path.join(here, "_native*.*")) if p.endswith((".so", ".pyd"))
        )
        built = (
            f" ({', '.join(others)} is there, built for another Python than {sys.version.split()[0]})" if others else ""
        )
        raise ImportError(
            f"tfrx's native extension (tfrx._native) is not built{built}: in a source checkout run "
            f"`make dev PYTHON={sys.executable}` (then PYTHONPATH=src works), or install tfrx with `pip install .`"
        ) from None


_load_native()

# --------------------------------------------------------------- allocator (see tfrx/memory.py)
# Left alone unless TFRX_MALLOC_TUNING=1 asks: the allocator is the host process's.
from tfrx import memory as _memory

_memory._tune_if_asked()

# --------------------------------------------------------------- the rest, imported on first use (PEP 562)
# name -> the module that defines it. Keep in step with the TYPE_CHECKING block below.
_API = {
    **dict.fromkeys(["crc32c", "masked_crc32c", "crc32c_backend"], "tfrx.crc"),
    **dict.fromkeys(
        [
            "RecordBatch",
            "TFRecordOptions",
            "TFRecordWriter",
            "write_records",
            "RecordReader",
            "read_records",
            "RecordPosition",
        ],
        "tfrx.io",
    ),
    **dict.fromkeys(
        [
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
        ],
        "tfrx.codec",
    ),
    **dict.fromkeys(
        [
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
        ],
        "tfrx.dtypes",
    ),
    **dict.fromkeys(
        [
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
        ],
        "tfrx.parsing",
    ),
    **dict.fromkeys(["AUTOTUNE", "Progress"], "tfrx.options"),
    "TFRecordDataset": "tfrx.data",
    "RandomAccessDataset": "tfrx.data._random_access",
    **dict.fromkeys(["RecordIndex", "build_index", "load_index", "count_records"], "tfrx.io.index"),
    **dict.fromkeys(["ShardedWriter", "write_examples"], "tfrx.tools"),
}
_API["view"] = "tfrx.viewer"
__all__ += ["train", *_API, "read_tfrecord"]


def read_tfrecord(paths, features=None, **options):
    """A ``pyarrow.Table`` of the records of ``paths``: :func:`tfrx.integrations.arrow.read_tfrecord`.

    Needs pyarrow (``pip install 'tfrx[arrow]'``), imported when this is first
    called, so that ``from tfrx import *`` works without it.
    """
    import importlib  # not an import statement: the facade sits above every layer (docs/architecture.md)

    return importlib.import_module("tfrx.integrations.arrow").read_tfrecord(paths, features, **options)


# Reachable from the facade but not part of __all__: deprecated aliases.
_OTHER = {
    "example_to_dict": "tfrx.codec",
    "sequence_example_to_dict": "tfrx.codec",
}
_SUBMODULES = frozenset(
    {
        "arrow",
        "cli",
        "codec",
        "crc",
        "dask",
        "data",
        "demo",
        "dtypes",
        "errors",
        "events",
        "grain",
        "image",
        "index",
        "integrations",
        "io",
        "jax",
        "keras",
        "memory",
        "options",
        "parsing",
        "proto",
        "ray",
        "spark",
        "testing",
        "text",
        "tf",
        "tfds",
        "tools",
        "torch",
        "train",
        "validate",
        "viewer",
    }
)

from tfrx._lazy import TYPE_CHECKING, lazy_names

__getattr__, __dir__ = lazy_names("tfrx", globals(), {**_API, **_OTHER}, _SUBMODULES)

if TYPE_CHECKING:  # the names above, for type checkers (F401: exported through __all__)
    from tfrx import train  # noqa: F401
    from tfrx.codec import (  # noqa: F401
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
        example_to_dict,
        float_feature,
        int64_feature,
        make_example,
        make_sequence_example,
        sequence_example_to_dict,
    )
    from tfrx.crc import crc32c, crc32c_backend, masked_crc32c  # noqa: F401
    from tfrx.data import TFRecordDataset  # noqa: F401
    from tfrx.data._random_access import RandomAccessDataset  # noqa: F401
    from tfrx.dtypes import bool_, float16, float32, float64, int8, int16, int32, int64, string  # noqa: F401
    from tfrx.dtypes import uint8, uint16, uint32, uint64  # noqa: F401
    from tfrx.io.index import RecordIndex, build_index, count_records, load_index  # noqa: F401
    from tfrx.io import (  # noqa: F401
        RecordBatch,
        RecordPosition,
        RecordReader,
        TFRecordOptions,
        TFRecordWriter,
        read_records,
        write_records,
    )
    from tfrx.options import AUTOTUNE, Progress  # noqa: F401
    from tfrx.parsing import (  # noqa: F401
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
    from tfrx.tools import ShardedWriter, write_examples  # noqa: F401
    from tfrx.viewer import view  # noqa: F401
