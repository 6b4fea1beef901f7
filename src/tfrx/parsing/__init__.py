"""Spec-driven parsing of serialized Examples and SequenceExamples (tf.io semantics)."""

from tfrx.parsing._arrays import RaggedArray, SparseArray
from tfrx.parsing._bytes_array import BytesArray
from tfrx.parsing._infer import infer_features
from tfrx.parsing._parser import (
    ExampleParser,
    SequenceExampleParser,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from tfrx.parsing._specs import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    features_from_json,
    features_to_json,
)

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "VarLenFeature",
    "SparseFeature",
    "RaggedFeature",
    "SparseArray",
    "BytesArray",
    "RaggedArray",
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
