"""TFDS feature connectors: read from ``features.json``, decode serialized Examples, encode them.

A :class:`Feature` tree mirrors ``tfds.features``: :class:`Tensor` (and its
kinds ``Scalar``, ``ClassLabel``, ``Text``, ``BBoxFeature``, ``Audio``),
:class:`Image` (and ``LabeledImage``, ``Video`` through :class:`Sequence`), :class:`Sequence`,
:class:`Dataset`, :class:`FeaturesDict` (and ``Translation`` /
``TranslationVariableLanguages``). It is read from both layouts TFDS has
written (:func:`from_json`): the proto JSON ``{"pythonClassName": ...,
"featuresDict": ...}`` and the older ``{"type": ..., "content": ...}``.

Decoding (:class:`Decoder`) parses a block of records with one native
``ExampleParser`` call, from one spec built from the feature tree
(:func:`batch_spec`); each connector then turns the block's columns into its
per-record values. It follows TFDS's ``example_parser``/``decode_example``
semantics: values are stored as int64 (integers and bools), float32 (all floats, float64 included:
it is widened back after float32 rounding, as TFDS does) or bytes; a shape
with one unknown dimension is a flat list reshaped; nested sequences of
unknown length use ``<key>/ragged_flat_values`` + ``<key>/ragged_row_lengths_<k>``;
``encoding="bytes"|"zlib"`` tensors are raw little-endian bytes
(``<key>/value`` + ``<key>/shape`` when more than one dimension is unknown).

The modules, by concern: ``base`` (the :class:`Feature` base, :class:`Unknown`,
storage dtypes, the decoded block), ``tensor`` (:class:`Tensor`,
:class:`ClassLabel`), ``encoded`` (:class:`Image`, :class:`AudioFile`),
``containers`` (:class:`Sequence`, :class:`Dataset`, :class:`FeaturesDict`),
``constructors`` (``Scalar``, ``Text``, ``Audio``, ``Video``, ...),
``features_json`` (reading ``features.json``, label files) and ``records``
(the parsing specs, :class:`Decoder`, :func:`encode`).
"""

from __future__ import annotations

from tfrx.errors import ParseError, SpecError, TfrxError
from tfrx.tfds.features.base import Feature, Unknown, to_json
from tfrx.tfds.features.constructors import (
    Audio,
    BBoxFeature,
    Scalar,
    Text,
    Translation,
    TranslationVariableLanguages,
    Video,
)
from tfrx.tfds.features.containers import Dataset, FeaturesDict, Sequence
from tfrx.tfds.features.encoded import AudioFile, Image, LabeledImage
from tfrx.tfds.features.features_json import class_labels, from_json, label_file_stem
from tfrx.tfds.features.records import Decoder, batch_spec, decode_records, encode, parse_spec
from tfrx.tfds.features.tensor import ClassLabel, Tensor

__all__ = [
    "Audio",
    "AudioFile",
    "BBoxFeature",
    "ClassLabel",
    "Dataset",
    "Decoder",
    "Feature",
    "FeaturesDict",
    "Image",
    "LabeledImage",
    "ParseError",
    "Scalar",
    "Sequence",
    "SpecError",
    "Tensor",
    "Text",
    "TfrxError",
    "Translation",
    "TranslationVariableLanguages",
    "Unknown",
    "Video",
    "batch_spec",
    "class_labels",
    "decode_records",
    "encode",
    "from_json",
    "label_file_stem",
    "parse_spec",
    "to_json",
]
