"""The Example codec: builders, the native columnar encoder and decoder, raw tensors."""

from tfrx.codec._builders import (
    bytes_feature,
    float_feature,
    int64_feature,
    make_example,
    make_sequence_example,
    to_feature,
)
from tfrx.codec._columnar import Ragged, encode_examples, encode_sequence_examples
from tfrx.codec._decode import (
    decode_example,
    decode_examples,
    decode_sequence_example,
)
from tfrx.codec._decode import example_to_dict, sequence_example_to_dict  # noqa: F401 (deprecated names)
from tfrx.codec._tensor import decode_raw, decode_tensor, encode_tensor

__all__ = [
    "bytes_feature",
    "float_feature",
    "int64_feature",
    "to_feature",
    "make_example",
    "make_sequence_example",
    "Ragged",
    "encode_examples",
    "encode_sequence_examples",
    "decode_example",
    "decode_examples",
    "decode_sequence_example",
    "encode_tensor",
    "decode_tensor",
    "decode_raw",
]
