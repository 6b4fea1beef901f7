"""TFDS feature connectors: read from ``features.json``, decode serialized Examples, encode them.

A :class:`Feature` tree mirrors ``tfds.features``: :class:`Tensor` (and its
kinds ``Scalar``, ``ClassLabel``, ``Text``, ``BBoxFeature``, ``Audio``),
:class:`Image` (and ``Video`` through :class:`Sequence`), :class:`Sequence`,
:class:`Dataset`, :class:`FeaturesDict` (and ``Translation`` /
``TranslationVariableLanguages``). It is read from both layouts TFDS has
written (:func:`from_json`): the proto JSON ``{"pythonClassName": ...,
"featuresDict": ...}`` and the older ``{"type": ..., "content": ...}``.

Decoding follows TFDS's ``example_parser``/``decode_example`` semantics: values
are stored as int64 (integers and bools), float32 (all floats, float64 included:
it is widened back after float32 rounding, as TFDS does) or bytes; a shape
with one unknown dimension is a flat list reshaped; nested sequences of
unknown length use ``<key>/ragged_flat_values`` + ``<key>/ragged_row_lengths_<k>``;
``encoding="bytes"|"zlib"`` tensors are raw little-endian bytes
(``<key>/value`` + ``<key>/shape`` when more than one dimension is unknown).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from tfrx.errors import ParseError, SpecError

_PREFIX = "tensorflow_datasets.core.features."
_CLASS_PATHS = {
    "Tensor": "tensor_feature.Tensor",
    "Scalar": "scalar.Scalar",
    "ClassLabel": "class_label_feature.ClassLabel",
    "Text": "text_feature.Text",
    "BBoxFeature": "bounding_boxes.BBoxFeature",
    "Audio": "audio_feature.Audio",
    "Image": "image_feature.Image",
    "Video": "video_feature.Video",
    "Sequence": "sequence_feature.Sequence",
    "Dataset": "dataset_feature.Dataset",
    "FeaturesDict": "features_dict.FeaturesDict",
    "Translation": "translation_feature.Translation",
    "TranslationVariableLanguages": "translation_feature.TranslationVariableLanguages",
}


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


def _shape_str(shape) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# ============================================================== decoding helpers
class _Context:
    """Per-record decoding state: the decoded Example and the options."""

    __slots__ = ("ex", "raw_unknown", "record", "skip")

    def __init__(self, ex: dict, skip: frozenset, raw_unknown: bool, record: str) -> None:
        self.ex, self.skip, self.raw_unknown, self.record = ex, skip, raw_unknown, record


def _cast(values, dt: np.dtype) -> np.ndarray:
    if dt == object:
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    values = np.asarray(values)
    if dt == np.bool_:
        return values != 0
    if dt == np.uint64:
        return values.astype(np.int64, copy=False).view(np.uint64)
    return values.astype(dt, copy=False)


def _scalar(arr: np.ndarray):
    return arr[()] if arr.ndim == 0 else arr


def _stack(items: list, inner_shape, dt) -> np.ndarray:
    if items:
        return np.stack(items)
    return np.zeros((0,) + tuple(0 if d is None else d for d in inner_shape), dtype=dt)


# ============================================================== connectors
@dataclasses.dataclass
class Feature:
    """Base of every connector. ``kind`` is the TFDS class name (``"ClassLabel"``...)."""

    kind: str = dataclasses.field(default="", init=False)

    def _decode(self, ctx: _Context, key: str, seq: tuple):
        raise NotImplementedError

    def _encode(self, value, key: str, out: dict, seq: tuple) -> None:
        raise ValueError(f"feature {key!r}: tfrx cannot write the connector {self.kind!r}")

    def to_proto_json(self) -> dict:
        raise NotImplementedError

    def describe(self, indent: int = 0) -> str:
        return repr(self)


@dataclasses.dataclass
class Tensor(Feature):
    """``tfds.features.Tensor`` (and Scalar, ClassLabel, Text, BBoxFeature, Audio, which store like it)."""

    shape: tuple = ()
    dtype: np.dtype = dataclasses.field(default_factory=lambda: np.dtype(np.int64))
    encoding: str = "none"
    kind_: str = "Tensor"
    extra: dict = dataclasses.field(default_factory=dict)
    _plans: dict = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.kind = self.kind_
        self.shape = tuple(None if d is None or int(d) < 0 else int(d) for d in self.shape)
        self.dtype = np.dtype(self.dtype)
        self.encoding = (self.encoding or "none").lower()

    def __repr__(self) -> str:
        enc = f", encoding={self.encoding}" if self.encoding != "none" else ""
        return f"{self.kind}(shape={_shape_str(self.shape)}, dtype={_dtype_name(self.dtype)}{enc})"

    # ---------------------------------------------------------- decode
    def _plan(self, seq: tuple) -> tuple:
        """``(full shape, unknown dims, target shape)`` for values nested in ``seq`` (cached per seq)."""
        plan = self._plans.get(seq)
        if plan is None:
            full = tuple(seq) + self.shape
            plan = (full, sum(d is None for d in full), tuple(-1 if d is None else d for d in full))
            self._plans[seq] = plan
        return plan

    def _decode(self, ctx: _Context, key: str, seq: tuple):
        if self.encoding != "none":
            return self._decode_bytes(ctx, key, seq)
        full, unknown, target = self._plan(seq)
        if unknown > 1 and len(seq) > 1:
            return self._decode_ragged(ctx, key, seq)
        if unknown > 1:
            raise SpecError(f"feature {key!r}: {self} has more than one unknown dimension and no encoding; "
                            "TFDS cannot store it either")
        values = ctx.ex.get(key)
        if values is None:
            if unknown == 0:
                raise ParseError(f"{ctx.record}: feature {key!r} ({self.kind}) is required but missing "
                                 f"from the Example; keys present: {sorted(ctx.ex)[:20]}")
            values = []
        arr = _cast(values, self.dtype)
        try:
            arr = arr.reshape(target)
        except ValueError:
            raise ParseError(f"{ctx.record}: feature {key!r} ({self}) holds {arr.size} values, which do not "
                             f"fit the shape {_shape_str(full)}") from None
        return arr[()] if not target else arr

    def _decode_ragged(self, ctx: _Context, key: str, seq: tuple):
        flat = _cast(ctx.ex.get(f"{key}/ragged_flat_values", []), self.dtype)
        inner = tuple(-1 if d is None else d for d in self.shape)
        flat = flat.reshape((-1,) + inner[1:] if inner and inner[0] == -1 else (-1,) + inner)
        levels = [np.asarray(ctx.ex.get(f"{key}/ragged_row_lengths_{k}", []), dtype=np.int64)
                  for k in range(len(seq) - 1)]

        # Innermost level splits the flat values; outer levels group rows.
        rows: list = np.split(flat, np.cumsum(levels[-1])[:-1]) if len(levels[-1]) else []
        for lengths in reversed(levels[:-1]):
            ends = np.cumsum(lengths)
            rows = [rows[e - n:e] for n, e in zip(lengths, ends)]
        return list(rows)

    def _decode_one_bytes(self, data: bytes, shape) -> np.ndarray:
        if self.encoding == "zlib":
            data = zlib.decompress(data)
        elif self.encoding == "gzip":
            import gzip

            data = gzip.decompress(data)
        arr = np.frombuffer(data, dtype=self.dtype.newbyteorder("<")).astype(self.dtype, copy=False)
        return arr.reshape(tuple(-1 if d is None else d for d in shape))

    def _decode_bytes(self, ctx: _Context, key: str, seq: tuple):
        dynamic = sum(d is None for d in self.shape) > 1
        if dynamic:
            values = ctx.ex.get(f"{key}/value")
            shapes = np.asarray(ctx.ex.get(f"{key}/shape", []), dtype=np.int64)
        else:
            values = ctx.ex.get(key)
        if values is None:
            raise ParseError(f"{ctx.record}: feature {key!r} ({self}) is missing from the Example")
        if not seq:
            shape = tuple(int(d) for d in shapes) if dynamic else self.shape
            return self._decode_one_bytes(values[0], shape)
        if dynamic:
            rank = len(self.shape)
            shapes = shapes.reshape(-1, rank)
            items = [self._decode_one_bytes(v, tuple(int(d) for d in s)) for v, s in zip(values, shapes)]
            return items
        return _stack([self._decode_one_bytes(v, self.shape) for v in values], self.shape, self.dtype)

    # ---------------------------------------------------------- encode
    def _encode(self, value, key: str, out: dict, seq: tuple) -> None:
        if self.encoding != "none":
            items = list(value) if seq else [value]
            blobs: list = []
            shapes: list = []
            for v in items:
                arr = np.asarray(v, dtype=self.dtype)
                raw = arr.astype(self.dtype.newbyteorder("<"), copy=False).tobytes()
                blobs.append(zlib.compress(raw) if self.encoding == "zlib" else raw)
                shapes.extend(arr.shape)
            if sum(d is None for d in self.shape) > 1:
                out[f"{key}/value"] = ("bytes", blobs)
                out[f"{key}/shape"] = ("int64", np.asarray(shapes, np.int64))
            else:
                out[key] = ("bytes", blobs)
            return
        full = tuple(seq) + self.shape
        if sum(d is None for d in full) > 1 and len(seq) > 1:
            lengths: list = [[] for _ in range(len(seq) - 1)]
            flat: list = []

            def rec(v, level):
                if level == len(seq) - 1:
                    flat.extend(np.ravel(np.asarray(v, dtype=object if self.dtype == object else None)).tolist())
                    return
                for sub in v:
                    lengths[level].append(len(sub))
                    rec(sub, level + 1)

            rec(value, 0)
            for k, lv in enumerate(lengths):
                out[f"{key}/ragged_row_lengths_{k}"] = ("int64", np.asarray(lv, np.int64))
            out[f"{key}/ragged_flat_values"] = _storage_values(flat, self.dtype)
            return
        if self.dtype == object:
            out[key] = _storage_values(value if isinstance(value, (list, tuple, np.ndarray)) else [value], self.dtype)
            return
        out[key] = _storage_values(value, self.dtype)

    def to_proto_json(self) -> dict:
        payload = {"dtype": _dtype_name(self.dtype), "encoding": self.encoding,
                   "shape": {"dimensions": [str(-1 if d is None else d) for d in self.shape]} if self.shape else {}}
        if self.kind == "ClassLabel":
            return {"classLabel": {"numClasses": str(self.extra.get("num_classes", 0))}}
        if self.kind == "Text":
            return {"text": {}}
        if self.kind == "BBoxFeature":
            return {"boundingBox": {"bboxFormat": "REL_YXYX", "dtype": "float32", "shape": {"dimensions": ["4"]}}}
        if self.kind == "Audio":
            a = {"dtype": _dtype_name(self.dtype), "encoding": "NONE", "shape": payload["shape"]}
            if self.extra.get("sample_rate"):
                a["sampleRate"] = str(self.extra["sample_rate"])
            return {"audio": a}
        return {"tensor": payload}


def _storage_values(values, dtype: np.dtype):
    arr = np.ravel(np.asarray(values, dtype=object if dtype == object else None))
    if dtype == object:
        return ("bytes", [v.encode() if isinstance(v, str) else bytes(v) for v in arr])
    if dtype.kind in "fc":
        return ("float", arr.astype(np.float32))
    if dtype == np.uint64:
        return ("int64", arr.astype(np.uint64).view(np.int64))
    return ("int64", arr.astype(np.int64))


@dataclasses.dataclass
class ClassLabel(Tensor):
    """``tfds.features.ClassLabel``: an int64 scalar with label names."""

    names: list | None = None
    num_classes: int | None = None

    def __post_init__(self) -> None:
        self.kind_ = "ClassLabel"
        if self.names is not None:
            self.names = [str(n) for n in self.names]
            self.num_classes = len(self.names)
        self.extra = {"num_classes": self.num_classes}
        super().__post_init__()

    def int2str(self, i: int) -> str:
        if not self.names:
            if self.num_classes is not None and not 0 <= i < self.num_classes:
                raise ValueError(f"label {i} is outside [0, {self.num_classes})")
            return str(i)
        if not 0 <= i < len(self.names):
            raise ValueError(f"label {i} is outside [0, {len(self.names)}); names: {self.names[:10]}")
        return self.names[i]

    def str2int(self, s: str) -> int:
        if self.names and s in self.names:
            return self.names.index(s)
        if s.isdigit() and (self.num_classes is None or int(s) < self.num_classes):
            return int(s)
        raise ValueError(f"unknown label {s!r}; names: {(self.names or [])[:10]}")

    def __repr__(self) -> str:
        return f"ClassLabel(shape=(), dtype=int64, num_classes={self.num_classes})"

    def _encode(self, value, key, out, seq):
        super()._encode(self._ints(value), key, out, seq)

    def _ints(self, value):
        if isinstance(value, str):
            return self.str2int(value)
        if isinstance(value, (list, tuple)):
            return [self._ints(v) for v in value]
        return value


@dataclasses.dataclass
class Image(Feature):
    """``tfds.features.Image``: PNG/JPEG bytes decoded to (h, w, c) uint8/uint16, float32 via 4-channel PNG."""

    shape: tuple = (None, None, 3)
    dtype: np.dtype = dataclasses.field(default_factory=lambda: np.dtype(np.uint8))
    encoding_format: str | None = None
    use_colormap: bool = False

    def __post_init__(self) -> None:
        self.kind = "Image"
        self.shape = tuple(None if d is None or int(d) < 0 else int(d) for d in self.shape)
        self.dtype = np.dtype(self.dtype)

    def __repr__(self) -> str:
        return f"Image(shape={_shape_str(self.shape)}, dtype={self.dtype.name})"

    def decode_bytes(self, data: bytes) -> np.ndarray:
        from tfrx.image import decode_image

        channels = self.shape[-1] or 0
        if self.dtype == np.float32:
            img = np.ascontiguousarray(decode_image(data, channels=4, dtype=np.uint8))
            return img.view("<f4").astype(np.float32, copy=False)
        return np.asarray(decode_image(data, channels=channels, dtype=self.dtype))

    def _decode(self, ctx: _Context, key: str, seq: tuple):
        values = ctx.ex.get(key)
        if values is None:
            if seq:
                values = []
            else:
                raise ParseError(f"{ctx.record}: image feature {key!r} is missing from the Example")
        if key in ctx.skip:
            return values[0] if not seq else _cast(values, np.dtype(object))
        if not seq:
            return self.decode_bytes(values[0])
        return _stack([self.decode_bytes(v) for v in values], self.shape, self.dtype)

    def _encode(self, value, key, out, seq):
        if len(seq) > 1:
            raise ValueError(f"feature {key!r}: images nested in more than one Sequence cannot be written")
        items = list(value) if seq else [value]
        out[key] = ("bytes", [self.encode_one(v) for v in items])

    def encode_one(self, img) -> bytes:
        if isinstance(img, (bytes, bytearray)):
            return bytes(img)
        from tfrx.image import encode_jpeg, encode_png

        arr = np.asarray(img)
        if self.dtype == np.float32:
            arr = np.ascontiguousarray(arr.astype("<f4")).view(np.uint8).reshape(arr.shape[:2] + (4,))
        else:
            arr = arr.astype(self.dtype)
        if self.encoding_format == "jpeg":
            return encode_jpeg(arr)
        return encode_png(arr)

    def to_proto_json(self) -> dict:
        d: dict[str, Any] = {"dtype": self.dtype.name,
                             "shape": {"dimensions": [str(-1 if s is None else s) for s in self.shape]}}
        if self.encoding_format:
            d["encodingFormat"] = self.encoding_format
        if self.use_colormap:
            d["useColormap"] = True
        return {"image": d}


@dataclasses.dataclass
class Sequence(Feature):
    """``tfds.features.Sequence`` (``Video`` is a Sequence of Image): values stacked along a first axis."""

    feature: Any = None  # a Feature after __post_init__ (given as a Feature, a dtype name, a dict, ...)
    length: int | None = None
    kind_: str = "Sequence"

    def __post_init__(self) -> None:
        self.kind = self.kind_
        self.feature = _from_user(self.feature)
        if self.length is not None and int(self.length) < 0:
            self.length = None

    def __repr__(self) -> str:
        if self.kind == "Video":
            return f"Video(shape={_shape_str((self.length,) + self.feature.shape)}, dtype={self.feature.dtype.name})"
        return f"{self.kind}({self.feature.describe()}, length={self.length})"

    def describe(self, indent: int = 0) -> str:
        if self.kind == "Video":
            return repr(self)
        return f"{self.kind}({self.feature.describe(indent)}, length={self.length})"

    def _decode(self, ctx: _Context, key: str, seq: tuple):
        return _decode_tree(self.feature, ctx, key, seq + (self.length,))

    def _encode(self, value, key, out, seq):
        if isinstance(self.feature, FeaturesDict) and not isinstance(value, Mapping):
            steps = list(value)
            value = {k: [s[k] for s in steps] for k in self.feature.features}
        if self.length is not None and not isinstance(value, Mapping) and len(value) != self.length:
            raise ValueError(f"feature {key!r}: Sequence of length {self.length} given {len(value)} items")
        self.feature._encode(value, key, out, seq + (self.length,))

    def to_proto_json(self) -> dict:
        if self.kind == "Video":
            img = self.feature
            d = {"dtype": img.dtype.name, "encodingFormat": img.encoding_format or "png",
                 "shape": {"dimensions": [str(-1 if s is None else s) for s in (self.length,) + img.shape]}}
            return {"video": d}
        return {"sequence": {"feature": to_json(self.feature), "length": str(-1 if self.length is None else self.length)}}


@dataclasses.dataclass
class Dataset(Sequence):
    """``tfds.features.Dataset`` (RLDS ``steps``): decoded to a list of step dicts, as iterating it in TFDS gives."""

    kind_: str = "Dataset"

    def _decode(self, ctx: _Context, key: str, seq: tuple):
        stacked = super()._decode(ctx, key, seq)
        if seq:
            return stacked
        n = _leading(stacked)
        return [_tree_index(stacked, j) for j in range(n)]

    def to_proto_json(self) -> dict:
        return {"sequence": {"feature": to_json(self.feature), "length": str(-1 if self.length is None else self.length)}}


def _leading(tree) -> int:
    if isinstance(tree, dict):
        for v in tree.values():
            return _leading(v)
        return 0
    return len(tree)


def _tree_index(tree, j):
    if isinstance(tree, dict):
        return {k: _tree_index(v, j) for k, v in tree.items()}
    v = tree[j]
    return v


@dataclasses.dataclass
class FeaturesDict(Feature):
    """``tfds.features.FeaturesDict`` (and ``Translation``): nested dicts, keys joined with ``/`` on disk."""

    features: dict = dataclasses.field(default_factory=dict)
    kind_: str = "FeaturesDict"
    languages: list | None = None

    def __post_init__(self) -> None:
        self.kind = self.kind_
        self.features = {k: _from_user(v) for k, v in self.features.items()}

    def __repr__(self) -> str:
        return self.describe()

    def describe(self, indent: int = 0) -> str:
        if self.kind == "Translation":
            return f"Translation(languages={self.languages})"
        if self.kind == "TranslationVariableLanguages":
            return f"TranslationVariableLanguages(languages={self.languages})"
        pad = "    " * (indent + 1)
        lines = [f"{pad}{k!r}: {v.describe(indent + 1)}," for k, v in self.features.items()]
        return "FeaturesDict({\n" + "\n".join(lines) + "\n" + "    " * indent + "})"

    def _decode(self, ctx: _Context, key: str, seq: tuple):
        return {k: _decode_tree(v, ctx, f"{key}/{k}" if key else k, seq) for k, v in self.features.items()}

    def _encode(self, value, key, out, seq):
        if self.kind == "TranslationVariableLanguages" and not (isinstance(value, Mapping) and "language" in value):
            pairs = sorted((lang, t) for lang, texts in value.items()
                           for t in ([texts] if isinstance(texts, str) else texts))
            value = {"language": [p[0] for p in pairs], "translation": [p[1] for p in pairs]}
        for k, f in self.features.items():
            if k not in value:
                name = f"{key}/{k}" if key else k
                raise ValueError(f"feature {name!r} missing from the value to write (keys given: {sorted(value)})")
            f._encode(value[k], f"{key}/{k}" if key else k, out, seq)

    def to_proto_json(self) -> dict:
        if self.kind == "Translation":
            return {"translation": {"languages": list(self.languages or ())}}
        if self.kind == "TranslationVariableLanguages":
            return {"translation": {"languages": list(self.languages or ()), "variableLanguagesPerExample": True}}
        return {"featuresDict": {"features": {k: to_json(v) for k, v in self.features.items()}}}

    # dict-like access, as tfds.features.FeaturesDict
    def __getitem__(self, k):
        return self.features[k]

    def keys(self):
        return self.features.keys()

    def items(self):
        return self.features.items()

    def __iter__(self):
        return iter(self.features)

    def __len__(self) -> int:
        return len(self.features)


@dataclasses.dataclass
class Unknown(Feature):
    """A connector tfrx does not know; decoded to its raw stored values only when asked."""

    class_name: str = ""
    payload: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.kind = self.class_name.rsplit(".", 1)[-1]

    def __repr__(self) -> str:
        return f"Unknown({self.class_name})"

    def _decode(self, ctx: _Context, key: str, seq: tuple):
        if not ctx.raw_unknown:
            raise SpecError(f"feature {key!r} uses the connector {self.class_name!r}, which tfrx cannot decode; "
                            "pass unknown='raw' to get its stored values (bytes / arrays) instead")
        return {k[len(key) + 1:] if k != key else "": v for k, v in ctx.ex.items()
                if k == key or k.startswith(key + "/")}

    def to_proto_json(self) -> dict:
        return dict(self.payload)


def _decode_tree(feature: Feature, ctx: _Context, key: str, seq: tuple):
    return feature._decode(ctx, key, seq)


def decode(features: Feature, ex: dict, *, skip_decoding=frozenset(), unknown: str = "raise", record: str = "record"):
    """One record's decoded Example (``tfrx.decode_example`` output) -> TFDS's NumPy values."""
    return features._decode(_Context(ex, frozenset(skip_decoding), unknown == "raw", record), "", ())


def encode(features: Feature, value) -> dict:
    """A value as TFDS would serialize it: ``{key: (kind, values)}`` with kind int64/float/bytes."""
    out: dict = {}
    features._encode(value, "", out, ())
    return out


# ============================================================== JSON
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
    raise SpecError(f"features.json: feature {name or '<root>'!r} has neither 'pythonClassName' nor 'type': "
                    f"{list(obj)[:5]}")


def _child(name: str, k: str) -> str:
    return f"{name}/{k}" if name else k


def _label_names(labels, name, given):
    if given:
        return list(given)
    return labels(name) if labels else None


def _from_proto(obj, labels, name) -> Feature:
    cls = obj["pythonClassName"].rsplit(".", 1)[-1]
    if cls == "FeaturesDict":
        feats = obj["featuresDict"].get("features", {})
        return FeaturesDict({k: _from_proto(v, labels, _child(name, k)) for k, v in feats.items()})
    if cls in ("Tensor", "Scalar"):
        t = obj["tensor"]
        return Tensor(_dims(t.get("shape")), _dtype(t["dtype"]), t.get("encoding", "none"), kind_=cls)
    if cls == "ClassLabel":
        c = obj.get("classLabel", {})
        names = _label_names(labels, name, None)
        n = int(c["numClasses"]) if "numClasses" in c else None
        return ClassLabel(names=names, num_classes=n if names is None else None)
    if cls == "Text":
        return Tensor((), np.dtype(object), kind_="Text")
    if cls == "BBoxFeature":
        return Tensor((4,), np.dtype(np.float32), kind_="BBoxFeature")
    if cls == "Audio":
        a = obj["audio"]
        enc = a.get("encoding", "NONE")
        if a.get("fileFormat") or enc.upper() not in ("NONE", ""):
            return Unknown(class_name=obj["pythonClassName"] + f"(file_format={a.get('fileFormat')})", payload=obj)
        return Tensor(_dims(a.get("shape")), _dtype(a.get("dtype", "int64")), kind_="Audio",
                      extra={"sample_rate": int(a["sampleRate"]) if "sampleRate" in a else None})
    if cls in ("Image", "LabeledImage"):  # LabeledImage: a segmentation mask, stored and decoded as an Image
        i = obj["image"]
        return Image(_dims(i.get("shape")), _dtype(i.get("dtype", "uint8")), i.get("encodingFormat"),
                     bool(i.get("useColormap", False)))
    if cls == "Video":
        v = obj["video"]
        dims = _dims(v.get("shape"))
        img = Image(dims[1:], _dtype(v.get("dtype", "uint8")), v.get("encodingFormat"))
        return Sequence(img, dims[0] if dims[0] >= 0 else None, kind_="Video")
    if cls in ("Sequence", "Dataset"):
        s = obj["sequence"]
        inner = from_json(s["feature"], labels=labels, name=name)
        length = int(s.get("length", -1))
        return (Dataset if cls == "Dataset" else Sequence)(inner, None if length < 0 else length)
    if cls == "Translation":
        langs = list(obj["translation"]["languages"])
        return FeaturesDict({lang: Tensor((), np.dtype(object), kind_="Text") for lang in langs},
                            kind_="Translation", languages=langs)
    if cls == "TranslationVariableLanguages":
        langs = list(obj["translation"].get("languages", []))
        return _tvl(langs)
    return Unknown(class_name=obj["pythonClassName"], payload=obj)


def _tvl(langs) -> FeaturesDict:
    text = Tensor((None,), np.dtype(object), kind_="Text")
    return FeaturesDict({"language": text, "translation": Tensor((None,), np.dtype(object), kind_="Text")},
                        kind_="TranslationVariableLanguages", languages=langs)


def _from_legacy(obj, labels, name) -> Feature:
    cls = obj["type"].rsplit(".", 1)[-1]
    c = obj.get("content") or {}
    if cls == "FeaturesDict":
        return FeaturesDict({k: from_json(v, labels=labels, name=_child(name, k)) for k, v in c.items()})
    if cls in ("Tensor", "Scalar"):
        return Tensor(_dims(c.get("shape")), _dtype(c.get("dtype", "int64")), c.get("encoding", "none"), kind_=cls)
    if cls == "ClassLabel":
        names = _label_names(labels, name, c.get("names"))
        return ClassLabel(names=names, num_classes=c.get("num_classes") if names is None else None)
    if cls == "Text":
        return Tensor((), np.dtype(object), kind_="Text")
    if cls == "BBoxFeature":
        return Tensor((4,), np.dtype(np.float32), kind_="BBoxFeature")
    if cls == "Audio":
        if c.get("file_format"):
            return Unknown(class_name=obj["type"] + f"(file_format={c['file_format']})", payload=obj)
        return Tensor(_dims(c.get("shape", [None])), _dtype(c.get("dtype", "int64")), kind_="Audio",
                      extra={"sample_rate": c.get("sample_rate")})
    if cls in ("Image", "LabeledImage"):
        return Image(_dims(c.get("shape", [None, None, 3])), _dtype(c.get("dtype", "uint8")),
                     c.get("encoding_format"), bool(c.get("use_colormap", False)))
    if cls == "Video":
        dims = _dims(c.get("shape"))
        img = Image(dims[1:], _dtype(c.get("dtype", "uint8")), c.get("encoding_format"))
        return Sequence(img, dims[0] if dims[0] >= 0 else None, kind_="Video")
    if cls in ("Sequence", "SequenceDict", "Dataset"):
        inner = from_json(c["feature"], labels=labels, name=name)
        length = c.get("length")
        return (Dataset if cls == "Dataset" else Sequence)(inner, None if length is None or length < 0 else length)
    if cls == "Translation":
        langs = list(c["languages"])
        return FeaturesDict({lang: Tensor((), np.dtype(object), kind_="Text") for lang in langs},
                            kind_="Translation", languages=langs)
    if cls == "TranslationVariableLanguages":
        return _tvl(list(c.get("languages") or []))
    return Unknown(class_name=obj["type"], payload=obj)


def to_json(feature: Feature) -> dict:
    """The proto-JSON layout TFDS writes today (``features.json``)."""
    cls = {"Sequence": "Sequence"}.get(feature.kind, feature.kind)
    if isinstance(feature, Unknown):
        return feature.to_proto_json()
    out = {"pythonClassName": _PREFIX + _CLASS_PATHS[cls]}
    out.update(feature.to_proto_json())
    return out


def class_labels(feature: Feature, name: str = ""):
    """``[(label file stem, ClassLabel)]`` of every ClassLabel, named as TFDS names label files."""
    if isinstance(feature, ClassLabel):
        return [(name, feature)]
    if isinstance(feature, Sequence):
        return class_labels(feature.feature, name)
    if isinstance(feature, FeaturesDict) and feature.kind == "FeaturesDict":
        return [x for k, f in feature.features.items() for x in class_labels(f, _child(name, k))]
    return []


def label_file_stem(name: str) -> str:
    """TFDS's ``convert_feature_name_to_filename``: parents joined with ``-``."""
    return name.replace("/", "-")


def _from_user(spec: Any) -> Feature:
    """A feature from what users pass to :func:`tfrx.tfds.write` (Feature objects, dicts, dtypes)."""
    if isinstance(spec, Feature):
        return spec
    if isinstance(spec, Mapping):
        return FeaturesDict({k: _from_user(v) for k, v in spec.items()})
    dt = np.dtype(object if spec in (str, bytes) else spec)
    return Tensor((), dt, kind_="Tensor")


# ============================================================== constructors named as in tfds.features
def Scalar(dtype) -> Tensor:
    """``tfds.features.Scalar(dtype)``."""
    return Tensor((), _dtype(dtype) if isinstance(dtype, str) else np.dtype(dtype), kind_="Scalar")


def Text() -> Tensor:
    """``tfds.features.Text()``: a UTF-8 string, decoded to ``bytes`` as in TFDS."""
    return Tensor((), np.dtype(object), kind_="Text")


def BBoxFeature() -> Tensor:
    """``tfds.features.BBoxFeature()``: float32 ``(ymin, xmin, ymax, xmax)``."""
    return Tensor((4,), np.dtype(np.float32), kind_="BBoxFeature")


def Audio(*, shape=(None,), dtype=np.int64, sample_rate: int | None = None) -> Tensor:
    """``tfds.features.Audio`` without ``file_format`` (samples stored as a tensor)."""
    return Tensor(shape, np.dtype(dtype), kind_="Audio", extra={"sample_rate": sample_rate})


def Video(shape, *, dtype=np.uint8, encoding_format: str = "png") -> Sequence:
    """``tfds.features.Video((frames, h, w, c))``: a Sequence of encoded frames."""
    shape = tuple(shape)
    return Sequence(Image(shape[1:], np.dtype(dtype), encoding_format), shape[0], kind_="Video")


def Translation(languages) -> FeaturesDict:
    """``tfds.features.Translation(languages)``: one Text per language."""
    langs = list(languages)
    return FeaturesDict({lang: Text() for lang in langs}, kind_="Translation", languages=langs)


def TranslationVariableLanguages(languages=()) -> FeaturesDict:
    """``tfds.features.TranslationVariableLanguages``: ``{"language": [...], "translation": [...]}``."""
    return _tvl(list(languages))


# ============================================================== tfrx parse spec
def parse_spec(feature: Feature) -> dict:
    """The tfrx parsing spec of the stored Example keys, as TFDS's ``example_parser`` builds it.

    ``{key: tfrx.FixedLenFeature | tfrx.FixedLenSequenceFeature}`` for every
    key a record of ``feature`` holds (flattened with ``/``; ragged nested
    sequences give their ``ragged_flat_values`` / ``ragged_row_lengths_<k>``
    keys; encoded tensors and images are bytes). Use it with
    ``tfrx.parse_single_example`` to read the stored values without decoding
    the connectors, or to filter on labels cheaply. Unknown connectors are left out.
    """
    from tfrx.parsing import FixedLenFeature, FixedLenSequenceFeature

    out: dict = {}

    def storage_dtype(dt):
        return {"bytes": "string", "float": "float32", "int64": "int64"}[_storage(dt)]

    def seqfeat(shape, dtype):
        return FixedLenSequenceFeature(shape, dtype, allow_missing=True)

    def walk(f, key, seq):
        if isinstance(f, FeaturesDict):
            for k, v in f.features.items():
                walk(v, f"{key}/{k}" if key else k, seq)
        elif isinstance(f, Sequence):
            walk(f.feature, key, seq + (f.length,))
        elif isinstance(f, Image) or (isinstance(f, Tensor) and f.encoding != "none"):
            if isinstance(f, Tensor) and sum(d is None for d in f.shape) > 1:
                out[f"{key}/value"] = seqfeat((), "string")
                out[f"{key}/shape"] = seqfeat((), "int64")
            elif seq:
                out[key] = seqfeat((), "string") if None in seq else FixedLenFeature(seq, "string")
            else:
                out[key] = FixedLenFeature((), "string")
        elif isinstance(f, Tensor):
            full = tuple(seq) + f.shape
            dt = storage_dtype(f.dtype)
            unknown = sum(d is None for d in full)
            if unknown == 0:
                out[key] = FixedLenFeature(full, dt)
            elif unknown == 1:
                out[key] = seqfeat(tuple(d for d in full if d is not None), dt)
            elif len(seq) > 1:
                for k in range(len(seq) - 1):
                    out[f"{key}/ragged_row_lengths_{k}"] = seqfeat((), "int64")
                out[f"{key}/ragged_flat_values"] = seqfeat(tuple(d for d in f.shape if d is not None), dt)

    walk(feature, "", ())
    return out
