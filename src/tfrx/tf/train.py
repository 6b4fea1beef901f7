"""``tf.train``: the Example and SequenceExample messages (tfrx's protobuf classes, TensorFlow's wire format)."""

from __future__ import annotations

from tfrx.train import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)

__all__ = [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
]
