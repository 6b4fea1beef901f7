"""TensorFlow Datasets (TFDS) directories without TensorFlow.

``tfrx.tfds.load(dir, split="train[:10%]+test")`` reads a dataset prepared by
TFDS (``<data_dir>/<name>/[<config>/]<version>/`` with ``dataset_info.json``,
``features.json`` and TFRecord shards), locally or at any fsspec URL, and
decodes each example to what ``tfds.as_numpy(builder.as_dataset(split))``
returns. :func:`write` produces directories TFDS itself loads. See
``docs/tfds.md`` for the connectors and the documented differences.
"""

from __future__ import annotations

from tfrx.tfds import audio, features
from tfrx.tfds.features import (
    Audio,
    AudioFile,
    BBoxFeature,
    ClassLabel,
    Dataset,
    Feature,
    FeaturesDict,
    Image,
    LabeledImage,
    Scalar,
    Sequence,
    Tensor,
    Text,
    Translation,
    TranslationVariableLanguages,
    Video,
    batch_spec,
    decode_records,
    parse_spec,
)
from tfrx.tfds._info import DatasetInfo, SplitInfo
from tfrx.tfds._loading import Builder, DataSource, SkipDecoding, builder, load
from tfrx.tfds._splits import ReadInstruction, even_splits, interleave_order
from tfrx.tfds._writing import write

__all__ = [
    "Audio",
    "AudioFile",
    "BBoxFeature",
    "Builder",
    "ClassLabel",
    "DataSource",
    "Dataset",
    "DatasetInfo",
    "Feature",
    "FeaturesDict",
    "Image",
    "LabeledImage",
    "ReadInstruction",
    "Scalar",
    "Sequence",
    "SkipDecoding",
    "SplitInfo",
    "Tensor",
    "Text",
    "Translation",
    "TranslationVariableLanguages",
    "Video",
    "batch_spec",
    "builder",
    "decode_records",
    "even_splits",
    "interleave_order",
    "audio",
    "features",
    "load",
    "parse_spec",
    "write",
]
