"""One-line construction of tf.train.Example / SequenceExample messages.

``make_example({"label": 3, "image": png_bytes, "bbox": np.zeros((4, 2))})``
builds the same message as the usual ``tf.train.Example(features=
tf.train.Features(feature={...}))`` with ``_int64_feature`` helpers.
"""

from __future__ import annotations

from collections.abc import Mapping

from tfrx import train
from tfrx.codec._values import BYTES, FLOAT, INT64, flat_values, normalize_kind

__all__ = [
    "bytes_feature",
    "float_feature",
    "int64_feature",
    "to_feature",
    "make_example",
    "make_sequence_example",
]


def _feature(kind: int, values) -> train.Feature:
    if kind == BYTES:
        return train.Feature(bytes_list=train.BytesList(value=values))
    if kind == FLOAT:
        return train.Feature(float_list=train.FloatList(value=values.tolist()))
    return train.Feature(int64_list=train.Int64List(value=values.tolist()))


def bytes_feature(value) -> train.Feature:
    """A BytesList Feature from bytes, str (UTF-8) or a sequence of them."""
    return _feature(BYTES, flat_values(value, BYTES)[1])


def float_feature(value) -> train.Feature:
    """A FloatList Feature (float32 on the wire) from a number, sequence or array."""
    return _feature(FLOAT, flat_values(value, FLOAT)[1])


def int64_feature(value) -> train.Feature:
    """An Int64List Feature from a bool, int, sequence or integer array."""
    return _feature(INT64, flat_values(value, INT64)[1])


def _foreign_message(value, suffix: str):
    """A message of another library with the same schema (e.g. tensorflow.Feature)."""
    descriptor = getattr(value, "DESCRIPTOR", None)
    full_name = getattr(descriptor, "full_name", "")
    return isinstance(full_name, str) and full_name.split(".")[-1] == suffix and hasattr(value, "SerializeToString")


def to_feature(value, kind: object = None, name: str | None = None) -> train.Feature:
    """Converts a Python / NumPy value (or a Feature of any library) to ``tfrx.train.Feature``."""
    if isinstance(value, train.Feature):
        return value
    if _foreign_message(value, "Feature"):
        return train.Feature.FromString(value.SerializeToString())
    k = None if kind is None else normalize_kind(kind, name)
    return _feature(*flat_values(value, k, name))


def _features(values: Mapping | None, kinds: Mapping | None) -> train.Features:
    kinds = kinds or {}
    feature = {}
    for name, value in (values or {}).items():
        if value is None:  # absent
            continue
        feature[name] = to_feature(value, kinds.get(name), name)
    return train.Features(feature=feature)


def make_example(features: Mapping | None = None, /, *, kinds: Mapping | None = None) -> train.Example:
    """Builds a ``tfrx.train.Example`` from ``{name: value}``.

    Values map to Feature kinds by type (see ``tfrx.codec._values``): bytes/str
    -> BytesList, bool/int/integer arrays -> Int64List, floats/float arrays ->
    FloatList (float32). Scalars become one-element lists, arrays are flattened
    row-major, ``None`` leaves the feature out, and Feature messages are used
    as they are. ``kinds={name: "bytes" | "float" | "int64"}`` forces a kind
    (needed for empty lists).
    """
    return train.Example(features=_features(features, kinds))


def _feature_list(value, kind, name) -> train.FeatureList:
    if isinstance(value, train.FeatureList):
        return value
    if _foreign_message(value, "FeatureList"):
        return train.FeatureList.FromString(value.SerializeToString())
    if isinstance(value, (bytes, str)) or not hasattr(value, "__iter__"):
        raise TypeError(f"feature list {name!r} must be a sequence of steps, got {type(value).__name__}")
    return train.FeatureList(feature=[to_feature(step, kind, name) for step in value])


def make_sequence_example(
    context: Mapping | None = None,
    feature_lists: Mapping | None = None,
    *,
    kinds: Mapping | None = None,
) -> train.SequenceExample:
    """Builds a ``tfrx.train.SequenceExample``.

    ``context`` maps names to values as in :func:`make_example`;
    ``feature_lists`` maps names to sequences of steps (a list of values, or an
    array whose first axis is time), each step becoming one Feature.
    ``kinds`` forces the kind of a name in either part.
    """
    kinds = kinds or {}
    lists = {}
    for name, steps in (feature_lists or {}).items():
        if steps is None:
            continue
        kind = kinds.get(name)
        lists[name] = _feature_list(steps, None if kind is None else normalize_kind(kind, name), name)
    return train.SequenceExample(
        context=_features(context, kinds), feature_lists=train.FeatureLists(feature_list=lists)
    )
