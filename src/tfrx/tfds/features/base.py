"""What every connector shares: the :class:`Feature` base, the decoded block, storage dtypes and parsing specs.

Connectors store their values as TFDS's ``example_serializer`` does: int64
(integers and bools), float32 (all floats) or bytes. A connector adds the
specs of the keys it stores with ``_spec(key, seq, out, variable)``; only
``variable`` differs between the decoder's spec (:func:`ragged_spec`: values
and row splits per record) and TFDS's own parsing spec
(:func:`sequence_spec`: ``FixedLenSequenceFeature``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from tfrx.errors import SpecError
from tfrx.parsing import FixedLenFeature, FixedLenSequenceFeature, RaggedFeature

_PREFIX = "tensorflow_datasets.core.features."
_CLASS_PATHS = {
    "Tensor": "tensor_feature.Tensor",
    "Scalar": "scalar.Scalar",
    "ClassLabel": "class_label_feature.ClassLabel",
    "Text": "text_feature.Text",
    "BBoxFeature": "bounding_boxes.BBoxFeature",
    "Audio": "audio_feature.Audio",
    "Image": "image_feature.Image",
    "LabeledImage": "labeled_image.LabeledImage",
    "Video": "video_feature.Video",
    "Sequence": "sequence_feature.Sequence",
    "Dataset": "dataset_feature.Dataset",
    "FeaturesDict": "features_dict.FeaturesDict",
    "Translation": "translation_feature.Translation",
    "TranslationVariableLanguages": "translation_feature.TranslationVariableLanguages",
}

# The spec of a key with an unknown dimension: (shape of its known dims, parse dtype) -> a parsing spec.
VariableSpec = Callable[[tuple, str], object]


# ============================================================== dtypes and shapes
def _dtype(name: str) -> np.dtype:
    if name in ("string", "str", "bytes", "object"):
        return np.dtype(object)
    return np.dtype("bool" if name == "bool" else name)


def _dtype_name(dt: np.dtype) -> str:
    return "string" if dt == object else dt.name


def _storage(dt: np.dtype) -> str:
    if dt == object:
        return "bytes"
    return "float" if dt.kind in "fc" else "int64"


def _parse_dtype(dt: np.dtype) -> str:
    return {"bytes": "string", "float": "float32", "int64": "int64"}[_storage(dt)]


def _shape_str(shape) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _child(key: str, name: str) -> str:
    """The stored key (and label file name) of ``name`` inside ``key``: parents joined with ``/``."""
    return f"{key}/{name}" if key else name


def _known_shape(shape) -> tuple:
    """``shape`` with its unknown (``None`` or negative) dimensions as ``None``."""
    return tuple(None if d is None or int(d) < 0 else int(d) for d in shape)


def _dims_json(shape) -> dict:
    """A shape as TFDS's proto JSON writes it: ``{"dimensions": ["-1", "28"]}``."""
    return {"dimensions": [str(-1 if d is None else d) for d in shape]}


# ============================================================== parsing specs
def ragged_spec(inner: tuple, dtype: str):
    """The decoder's spec of a key with an unknown dimension: values and row splits per record."""
    return RaggedFeature(dtype, row_splits_dtype="int64")


def sequence_spec(inner: tuple, dtype: str):
    """TFDS's ``example_parser`` spec of a key with an unknown dimension."""
    return FixedLenSequenceFeature(inner, dtype, allow_missing=True)


def _bytes_spec(seq: tuple, variable: VariableSpec):
    """The spec of encoded values (one ``bytes`` each) nested in ``seq``."""
    if not seq:
        return FixedLenFeature((), "string")
    if None not in seq:
        return FixedLenFeature(seq, "string")
    return variable((), "string")


# ============================================================== decoding helpers
class _Block:
    """A block of records parsed in one native call: the parser's columns and the decoding options.

    ``cols`` maps each stored key of :func:`batch_spec` to an ``(n, *shape)``
    array (fixed shapes) or a :class:`tfrx.RaggedArray` (one row per record).
    Connectors turn the columns into ``n`` per-record values; only those that
    need it (images, encoded tensors, ragged nesting) work record by record.
    """

    __slots__ = ("cols", "n", "records", "skip", "raw_unknown", "where")

    def __init__(self, cols: dict, n: int, records, skip: frozenset, raw_unknown: bool, where) -> None:
        self.cols, self.n, self.records = cols, n, records
        self.skip, self.raw_unknown, self.where = skip, raw_unknown, where

    def rows(self, key: str, dt: np.dtype):
        """``(values cast to dt, row_splits)`` of a ragged column (empty rows when the key is absent)."""
        col = self.cols[key]
        return _cast(col.values, dt), np.asarray(col.row_splits, dtype=np.int64)


def _cast(values, dt: np.dtype) -> np.ndarray:
    if dt == object:
        if isinstance(values, np.ndarray) and values.dtype == object:
            return values
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    values = np.asarray(values)
    if dt == np.bool_:
        return values != 0
    if dt == np.uint64:
        return values.astype(np.int64, copy=False).view(np.uint64)
    return values.astype(dt, copy=False)


def _stack(items: list, inner_shape, dt) -> np.ndarray:
    if items:
        return np.stack(items)
    return np.zeros((0,) + tuple(0 if d is None else d for d in inner_shape), dtype=dt)


def _byte_rows(b: _Block, key: str, seq: tuple):
    """Each record's stored bytes of ``key``: one ``bytes``, or an object array of them in a sequence."""
    col = b.cols[key]
    if not seq:
        return col
    if None not in seq:
        return [row.reshape(-1) for row in col]
    values, splits = b.rows(key, np.dtype(object))
    return [values[splits[i] : splits[i + 1]] for i in range(b.n)]


# ============================================================== connectors
@dataclasses.dataclass
class Feature:
    """Base of every connector. ``kind`` is the TFDS class name (``"ClassLabel"``...)."""

    kind: str = dataclasses.field(default="", init=False)

    def _spec(self, key: str, seq: tuple, out: dict, variable: VariableSpec) -> None:
        """Adds the parsing specs of the keys this feature stores (nested in ``seq``) to ``out``."""
        raise NotImplementedError

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        """The ``b.n`` records' values of this feature (a list, or an array whose rows are the values)."""
        raise NotImplementedError

    def _encode(self, value, key: str, out: dict, seq: tuple) -> None:
        raise ValueError(f"feature {key!r}: tfrx cannot write the connector {self.kind!r}")

    def to_proto_json(self) -> dict:
        raise NotImplementedError

    def _to_json(self) -> dict:
        return {"pythonClassName": _PREFIX + _CLASS_PATHS[self.kind], **self.to_proto_json()}

    def describe(self, indent: int = 0) -> str:
        return repr(self)


@dataclasses.dataclass
class Unknown(Feature):
    """A connector tfrx does not know; decoded to its raw stored values only when asked."""

    class_name: str = ""
    payload: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.kind = self.class_name.rsplit(".", 1)[-1]

    def __repr__(self) -> str:
        return f"Unknown({self.class_name})"

    def _spec(self, key: str, seq: tuple, out: dict, variable: VariableSpec) -> None:
        pass  # not parsed: raw values come from each record's schema-less decoding

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        if not b.raw_unknown:
            raise SpecError(
                f"feature {key!r} uses the connector {self.class_name!r}, which tfrx cannot decode; "
                "pass unknown='raw' to get its stored values (bytes / arrays) instead"
            )
        from tfrx.codec import decode_example

        out = []
        for rec in b.records:
            ex = decode_example(rec)
            out.append(
                {k[len(key) + 1 :] if k != key else "": v for k, v in ex.items() if k == key or k.startswith(key + "/")}
            )
        return out

    def to_proto_json(self) -> dict:
        return dict(self.payload)

    def _to_json(self) -> dict:
        return self.to_proto_json()  # the payload already names its class


def to_json(feature: Feature) -> dict:
    """The proto-JSON layout TFDS writes today (``features.json``)."""
    return feature._to_json()
