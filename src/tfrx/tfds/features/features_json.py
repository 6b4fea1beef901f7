"""``features.json`` in both layouts TFDS has written, and the label files named after its ClassLabels.

:func:`from_json` reads the proto JSON TFDS writes today (``{"pythonClassName":
..., "featuresDict": ...}``) and the older ``{"type": ..., "content": ...}``;
:func:`tfrx.tfds.features.to_json` writes the former. Connectors tfrx does not
know become :class:`Unknown`.
"""

from __future__ import annotations

from collections.abc import Mapping


from tfrx.errors import SpecError
from tfrx.tfds.features.base import Feature, Unknown, _child, _dtype
from tfrx.tfds.features.constructors import Audio, BBoxFeature, Text, Translation, TranslationVariableLanguages, Video
from tfrx.tfds.features.containers import Dataset, FeaturesDict, Sequence
from tfrx.tfds.features.encoded import Image, LabeledImage
from tfrx.tfds.features.tensor import ClassLabel, Tensor


def _dims(shape_json) -> tuple:
    if isinstance(shape_json, dict):
        return tuple(int(d) for d in shape_json.get("dimensions", []))
    return tuple(-1 if d is None else int(d) for d in (shape_json or []))


def from_json(obj: Mapping, *, labels=None, name: str = "") -> Feature:
    """A feature tree from ``features.json`` (either layout). ``labels(name) -> list | None`` reads label files."""
    if "pythonClassName" in obj:
        return _from_proto(obj, labels, name)
    if "type" in obj:
        return _from_legacy(obj, labels, name)
    raise SpecError(
        f"features.json: feature {name or '<root>'!r} has neither 'pythonClassName' nor 'type': {list(obj)[:5]}"
    )


# Connectors whose JSON holds nothing tfrx needs: built the same from either layout.
_WITHOUT_OPTIONS = {"Text": Text, "BBoxFeature": BBoxFeature}


def _label_names(labels, name, given):
    if given:
        return list(given)
    return labels(name) if labels else None


def _sequence(cls: str, inner: Feature, length) -> Sequence:
    return (Dataset if cls == "Dataset" else Sequence)(inner, None if length is None or length < 0 else length)


def _from_proto(obj, labels, name) -> Feature:
    cls = obj["pythonClassName"].rsplit(".", 1)[-1]
    if cls == "FeaturesDict":
        feats = obj["featuresDict"].get("features", {})
        return FeaturesDict({k: _from_proto(v, labels, _child(name, k)) for k, v in feats.items()})
    if cls in ("Tensor", "Scalar"):
        t = obj["tensor"]
        return Tensor(
            _dims(t.get("shape")),
            _dtype(t["dtype"]),
            t.get("encoding", "none"),
            kind_=cls,
            optional=bool(t.get("optional", False)),
        )
    if cls == "ClassLabel":
        c = obj.get("classLabel", {})
        names = _label_names(labels, name, None)
        n = int(c["numClasses"]) if "numClasses" in c else None
        return ClassLabel(names=names, num_classes=n if names is None else None)
    if cls in _WITHOUT_OPTIONS:
        return _WITHOUT_OPTIONS[cls]()
    if cls == "Audio":
        a = obj["audio"]
        return Audio(
            shape=_dims(a.get("shape")),
            dtype=_dtype(a.get("dtype", "int64")),
            sample_rate=int(a["sampleRate"]) if a.get("sampleRate") else None,
            file_format=a.get("fileFormat") or None,
            encoding=a.get("encoding", "none"),
            lazy_decode=bool(a.get("lazyDecode", False)),
        )
    if cls == "LabeledImage":  # a segmentation mask, stored and decoded as an Image, with label names
        i = obj["image"]
        n = i.get("label", {}).get("numClasses")
        names = _label_names(labels, name, None)
        return LabeledImage(
            _dims(i.get("shape")),
            _dtype(i.get("dtype", "uint8")),
            i.get("encodingFormat"),
            labels=names if names is not None else (int(n) if n and int(n) else None),
        )
    if cls == "Image":
        i = obj["image"]
        return Image(
            _dims(i.get("shape")),
            _dtype(i.get("dtype", "uint8")),
            i.get("encodingFormat"),
            bool(i.get("useColormap", False)),
        )
    if cls == "Video":
        v = obj["video"]
        return Video(
            _dims(v.get("shape")), dtype=_dtype(v.get("dtype", "uint8")), encoding_format=v.get("encodingFormat")
        )
    if cls in ("Sequence", "Dataset"):
        s = obj["sequence"]
        return _sequence(cls, from_json(s["feature"], labels=labels, name=name), int(s.get("length", -1)))
    if cls == "Translation":
        return Translation(obj["translation"]["languages"])
    if cls == "TranslationVariableLanguages":
        return TranslationVariableLanguages(obj["translation"].get("languages", []))
    return Unknown(class_name=obj["pythonClassName"], payload=obj)


def _from_legacy(obj, labels, name) -> Feature:
    cls = obj["type"].rsplit(".", 1)[-1]
    c = obj.get("content") or {}
    if cls == "FeaturesDict":
        return FeaturesDict({k: from_json(v, labels=labels, name=_child(name, k)) for k, v in c.items()})
    if cls in ("Tensor", "Scalar"):
        return Tensor(
            _dims(c.get("shape")),
            _dtype(c.get("dtype", "int64")),
            c.get("encoding", "none"),
            kind_=cls,
            optional=bool(c.get("optional", False)),
        )
    if cls == "ClassLabel":
        names = _label_names(labels, name, c.get("names"))
        return ClassLabel(names=names, num_classes=c.get("num_classes") if names is None else None)
    if cls in _WITHOUT_OPTIONS:
        return _WITHOUT_OPTIONS[cls]()
    if cls == "Audio":
        return Audio(
            shape=_dims(c.get("shape", [None])),
            dtype=_dtype(c.get("dtype", "int64")),
            sample_rate=c.get("sample_rate"),
            file_format=c.get("file_format"),
            lazy_decode=bool(c.get("lazy_decode", False)),
        )
    if cls == "LabeledImage":
        names = _label_names(labels, name, None)
        return LabeledImage(
            _dims(c.get("shape", [None, None, 1])),
            _dtype(c.get("dtype", "uint8")),
            c.get("encoding_format"),
            labels=names if names is not None else c.get("labels"),
        )
    if cls == "Image":
        return Image(
            _dims(c.get("shape", [None, None, 3])),
            _dtype(c.get("dtype", "uint8")),
            c.get("encoding_format"),
            bool(c.get("use_colormap", False)),
        )
    if cls == "Video":
        return Video(
            _dims(c.get("shape")), dtype=_dtype(c.get("dtype", "uint8")), encoding_format=c.get("encoding_format")
        )
    if cls in ("Sequence", "SequenceDict", "Dataset"):
        return _sequence(cls, from_json(c["feature"], labels=labels, name=name), c.get("length"))
    if cls == "Translation":
        return Translation(c["languages"])
    if cls == "TranslationVariableLanguages":
        return TranslationVariableLanguages(c.get("languages") or [])
    return Unknown(class_name=obj["type"], payload=obj)


def class_labels(feature: Feature, name: str = "", *, labeled_images: bool = False):
    """``[(feature name, ClassLabel)]`` of every ClassLabel (label files are named after it, see :func:`label_file_stem`).

    ``labeled_images=True`` adds each LabeledImage's ClassLabel (its names are a
    label file too), not a label value of the examples.
    """
    if isinstance(feature, ClassLabel):
        return [(name, feature)]
    if isinstance(feature, LabeledImage):
        return [(name, feature.class_label)] if labeled_images else []
    if isinstance(feature, Sequence):
        return class_labels(feature.feature, name, labeled_images=labeled_images)
    if isinstance(feature, FeaturesDict) and feature.kind == "FeaturesDict":
        return [
            x
            for k, f in feature.features.items()
            for x in class_labels(f, _child(name, k), labeled_images=labeled_images)
        ]
    return []


def label_file_stem(name: str) -> str:
    """TFDS's ``convert_feature_name_to_filename``: parents joined with ``-``."""
    return name.replace("/", "-")
