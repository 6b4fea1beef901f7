"""TFDS feature connectors: read from ``features.json``, decode serialized Examples, encode them.

A :class:`Feature` tree mirrors ``tfds.features``: :class:`Tensor` (and its
kinds ``Scalar``, ``ClassLabel``, ``Text``, ``BBoxFeature``, ``Audio``),
:class:`Image` (and ``Video`` through :class:`Sequence`), :class:`Sequence`,
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
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from tfrx.errors import ParseError, SpecError, TfrxError

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


# ============================================================== connectors
@dataclasses.dataclass
class Feature:
    """Base of every connector. ``kind`` is the TFDS class name (``"ClassLabel"``...)."""

    kind: str = dataclasses.field(default="", init=False)

    def _spec(self, key: str, seq: tuple, out: dict) -> None:
        """Adds the parsing specs of the keys this feature stores (nested in ``seq``) to ``out``."""
        raise NotImplementedError

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        """The ``b.n`` records' values of this feature (a list, or an array whose rows are the values)."""
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
        if self.extra.get("file_format"):
            enc += f", file_format={self.extra['file_format']}"
        return f"{self.kind}(shape={_shape_str(self.shape)}, dtype={_dtype_name(self.dtype)}{enc})"

    @property
    def sample_rate(self) -> int | None:
        """An Audio feature's ``sample_rate`` metadata (None for other kinds)."""
        return self.extra.get("sample_rate")

    # ---------------------------------------------------------- decode
    def _plan(self, seq: tuple) -> tuple:
        """``(full shape, unknown dims, target shape)`` for values nested in ``seq`` (cached per seq)."""
        plan = self._plans.get(seq)
        if plan is None:
            full = tuple(seq) + self.shape
            plan = (full, sum(d is None for d in full), tuple(-1 if d is None else d for d in full))
            self._plans[seq] = plan
        return plan

    def _spec(self, key: str, seq: tuple, out: dict) -> None:
        from tfrx.parsing import FixedLenFeature

        if self.encoding != "none":
            if sum(d is None for d in self.shape) > 1:
                out[f"{key}/value"] = _ragged_spec("string")
                out[f"{key}/shape"] = _ragged_spec("int64")
            else:
                out[key] = _bytes_spec(seq)
            return
        full, unknown, _ = self._plan(seq)
        dt = _parse_dtype(self.dtype)
        if unknown == 0:
            out[key] = FixedLenFeature(full, dt)
        elif unknown == 1:
            out[key] = _ragged_spec(dt)
        elif len(seq) > 1:
            for k in range(len(seq) - 1):
                out[f"{key}/ragged_row_lengths_{k}"] = _ragged_spec("int64")
            out[f"{key}/ragged_flat_values"] = _ragged_spec(dt)

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        if self.encoding != "none":
            return self._decode_bytes(b, key, seq)
        full, unknown, target = self._plan(seq)
        if unknown == 0:
            # One cast for the whole block; iterating gives each record's row (a scalar for shape ()).
            return _cast(b.cols[key].reshape(-1), self.dtype).reshape((b.n,) + full)
        if unknown > 1 and len(seq) > 1:
            return self._decode_ragged(b, key, seq)
        if unknown > 1:
            raise SpecError(f"feature {key!r}: {self} has more than one unknown dimension and no encoding; "
                            "TFDS cannot store it either")
        values, splits = b.rows(key, self.dtype)
        out = []
        for i in range(b.n):
            row = values[splits[i]:splits[i + 1]]
            try:
                out.append(row.reshape(target))
            except ValueError:
                raise ParseError(f"{b.where(i)}: feature {key!r} ({self}) holds {row.size} values, which do not "
                                 f"fit the shape {_shape_str(full)}") from None
        return out

    def _decode_ragged(self, b: _Block, key: str, seq: tuple) -> list:
        flat, flat_splits = b.rows(f"{key}/ragged_flat_values", self.dtype)
        inner = tuple(-1 if d is None else d for d in self.shape)
        inner = (-1,) + inner[1:] if inner and inner[0] == -1 else (-1,) + inner
        levels = [b.rows(f"{key}/ragged_row_lengths_{k}", np.dtype(np.int64)) for k in range(len(seq) - 1)]
        out = []
        for i in range(b.n):
            values = flat[flat_splits[i]:flat_splits[i + 1]].reshape(inner)
            lengths = [v[s[i]:s[i + 1]] for v, s in levels]
            # The innermost level splits the flat values; outer levels group rows.
            rows: list = np.split(values, np.cumsum(lengths[-1])[:-1]) if len(lengths[-1]) else []
            for lv in reversed(lengths[:-1]):
                ends = np.cumsum(lv)
                rows = [rows[e - n:e] for n, e in zip(lv, ends)]
            out.append(list(rows))
        return out

    def _decode_one_bytes(self, data: bytes, shape) -> np.ndarray:
        if self.encoding == "zlib":
            data = zlib.decompress(data)
        elif self.encoding == "gzip":
            import gzip

            data = gzip.decompress(data)
        arr = np.frombuffer(data, dtype=self.dtype.newbyteorder("<")).astype(self.dtype, copy=False)
        return arr.reshape(tuple(-1 if d is None else d for d in shape))

    def _decode_bytes(self, b: _Block, key: str, seq: tuple) -> list:
        out = []
        if sum(d is None for d in self.shape) > 1:
            values, vsplits = b.rows(f"{key}/value", np.dtype(object))
            shapes, ssplits = b.rows(f"{key}/shape", np.dtype(np.int64))
            rank = len(self.shape)
            for i in range(b.n):
                vals = values[vsplits[i]:vsplits[i + 1]]
                dims = shapes[ssplits[i]:ssplits[i + 1]].reshape(-1, rank)
                items = [self._decode_item(b, i, key, v, tuple(int(d) for d in s)) for v, s in zip(vals, dims)]
                out.append(items if seq else items[0])
            return out
        for i, vals in enumerate(_byte_rows(b, key, seq)):
            if not seq:
                out.append(self._decode_item(b, i, key, vals, self.shape))
            else:
                out.append(_stack([self._decode_item(b, i, key, v, self.shape) for v in vals], self.shape,
                                  self.dtype))
        return out

    def _decode_item(self, b: _Block, i: int, key: str, data: bytes, shape) -> np.ndarray:
        try:
            return self._decode_one_bytes(data, shape)
        except (ValueError, zlib.error) as e:
            raise ParseError(f"{b.where(i)}: feature {key!r} ({self}): stored bytes do not decode to "
                             f"{_shape_str(shape)} {_dtype_name(self.dtype)} ({e})") from None

    # ---------------------------------------------------------- encode
    def _encode(self, value, key: str, out: dict, seq: tuple) -> None:
        if self.kind == "Audio" and not seq and not isinstance(value, (np.ndarray, list, tuple)):
            from tfrx.tfds import audio

            data, fmt = audio.read_file(value, self.extra.get("file_format"))
            value = audio.decode(data, fmt, _channels(self.shape), self.dtype)
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
            return {"audio": _audio_json(self.shape, self.dtype, self.extra.get("file_format"),
                                         self.extra.get("sample_rate"), self.encoding.upper(), False)}
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
        if isinstance(value, (str, bytes)):
            return self.str2int(value.decode() if isinstance(value, bytes) else value)
        if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value):
            return [self._ints(v) for v in value]
        n = self.num_classes
        if n is not None and not -1 <= int(value) < n:  # -1: no label, as TFDS allows
            raise ValueError(f"class label {int(value)} is outside [-1, {n}) (num_classes={n})")
        return value


class _Encoded(Feature):
    """A connector stored as one encoded ``bytes`` per value (image, audio file), decoded by ``_decode_rows``."""

    def _spec(self, key: str, seq: tuple, out: dict) -> None:
        out[key] = _bytes_spec(seq)

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        rows = _byte_rows(b, key, seq)
        return rows if key in b.skip else self._decode_rows(b, key, seq, rows)

    def _decode_rows(self, b: _Block, key: str, seq: tuple, rows):
        raise NotImplementedError


@dataclasses.dataclass
class Image(_Encoded):
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
        return self.decode_many([data])[0]

    def decode_many(self, items: list) -> list:
        """Encoded images decoded on tfrx.image's thread pool (one call for a block's images)."""
        from tfrx.image import decode_image

        if not items:
            return []
        if self.dtype == np.float32:
            return [np.ascontiguousarray(img).view("<f4").astype(np.float32, copy=False)
                    for img in decode_image(items, channels=4, dtype=np.uint8)]
        return [np.asarray(img) for img in decode_image(items, channels=self.shape[-1] or 0, dtype=self.dtype)]

    def _decode_rows(self, b: _Block, key: str, seq: tuple, rows):
        if not seq:
            return self._decode_all(b, key, list(rows), np.arange(b.n))
        counts = [len(vals) for vals in rows]
        owner = np.repeat(np.arange(b.n), counts)
        flat = self._decode_all(b, key, [v for vals in rows for v in vals], owner)
        ends = np.cumsum(counts)
        return [_stack(flat[e - n:e], self.shape, self.dtype) for n, e in zip(counts, ends)]

    def _decode_all(self, b: _Block, key: str, items: list, owner: np.ndarray) -> list:
        try:
            return self.decode_many(items)
        except TfrxError as e:
            k = getattr(e, "record_index", None)
            where = b.where(int(owner[k])) if k is not None and 0 <= k < len(owner) else "a record of the block"
            raise type(e)(f"{where}: image feature {key!r}: {e}") from None

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


def _channels(shape) -> int:
    return int(shape[1]) if len(shape) > 1 and shape[1] is not None else 1


def _audio_json(shape, dtype, file_format, sample_rate, encoding: str, lazy: bool) -> dict:
    a: dict[str, Any] = {"dtype": _dtype_name(dtype), "encoding": encoding,
         "shape": {"dimensions": [str(-1 if d is None else d) for d in shape]}}
    if file_format:
        a["fileFormat"] = file_format
    if sample_rate:
        a["sampleRate"] = str(sample_rate)
    if lazy:
        a["lazyDecode"] = True
    return a


@dataclasses.dataclass
class AudioFile(_Encoded):
    """``tfds.features.Audio(lazy_decode=True)``: the audio file's bytes, decoded to samples when read."""

    shape: tuple = (None,)
    dtype: np.dtype = dataclasses.field(default_factory=lambda: np.dtype(np.int64))
    file_format: str | None = None
    sample_rate: int | None = None

    def __post_init__(self) -> None:
        self.kind = "Audio"
        self.shape = tuple(None if d is None or int(d) < 0 else int(d) for d in self.shape)
        self.dtype = np.dtype(self.dtype)

    def __repr__(self) -> str:
        return (f"Audio(shape={_shape_str(self.shape)}, dtype={self.dtype.name}, file_format={self.file_format}, "
                "lazy_decode=True)")

    def decode_bytes(self, data: bytes) -> np.ndarray:
        from tfrx.tfds import audio

        return audio.decode(data, self.file_format, _channels(self.shape), self.dtype)

    def _decode_rows(self, b: _Block, key: str, seq: tuple, rows):
        if not seq:
            return [self._decode_item(b, i, key, v) for i, v in enumerate(rows)]
        return [[self._decode_item(b, i, key, v) for v in vals] for i, vals in enumerate(rows)]

    def _decode_item(self, b: _Block, i: int, key: str, data: bytes) -> np.ndarray:
        from tfrx.tfds import audio

        try:
            return self.decode_bytes(data)
        except ValueError as e:
            raise audio.decode_error(b.where(i), key, e) from None

    def _encode(self, value, key, out, seq):
        from tfrx.tfds import audio

        items = list(value) if seq else [value]
        out[key] = ("bytes", [audio.read_file(v, self.file_format)[0] for v in items])

    def to_proto_json(self) -> dict:
        return {"audio": _audio_json(self.shape, self.dtype, self.file_format, self.sample_rate, "NONE", True)}


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

    def _spec(self, key: str, seq: tuple, out: dict) -> None:
        self.feature._spec(key, seq + (self.length,), out)

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        return self.feature._decode_batch(b, key, seq + (self.length,))

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

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        stacked = super()._decode_batch(b, key, seq)
        if seq:
            return stacked
        return [[_tree_index(steps, j) for j in range(_leading(steps))] for steps in stacked]

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

    def _spec(self, key: str, seq: tuple, out: dict) -> None:
        for k, v in self.features.items():
            v._spec(f"{key}/{k}" if key else k, seq, out)

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        names = list(self.features)
        columns = [v._decode_batch(b, f"{key}/{k}" if key else k, seq) for k, v in self.features.items()]
        return [dict(zip(names, values)) for values in zip(*columns)] if columns else [{} for _ in range(b.n)]

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

    def _spec(self, key: str, seq: tuple, out: dict) -> None:
        pass  # not parsed: raw values come from each record's schema-less decoding

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        if not b.raw_unknown:
            raise SpecError(f"feature {key!r} uses the connector {self.class_name!r}, which tfrx cannot decode; "
                            "pass unknown='raw' to get its stored values (bytes / arrays) instead")
        from tfrx.codec import decode_example

        out = []
        for rec in b.records:
            ex = decode_example(rec)
            out.append({k[len(key) + 1:] if k != key else "": v for k, v in ex.items()
                        if k == key or k.startswith(key + "/")})
        return out

    def to_proto_json(self) -> dict:
        return dict(self.payload)


def batch_spec(features: Feature) -> dict:
    """The parsing spec :func:`decode_records` parses blocks of records with.

    Fixed shapes are ``FixedLenFeature`` (a required key, as in TFDS); keys
    with an unknown dimension are ``RaggedFeature`` (values and row splits per
    record, no padding); encoded tensors and images are bytes.
    """
    out: dict = {}
    features._spec("", (), out)
    return out


class Decoder:
    """Decodes blocks of serialized records of one feature tree, each block in one native parse.

    ``decode(records)`` takes a :class:`tfrx.RecordBatch` or a list of bytes and
    returns one value per record, what ``tfds.as_numpy`` gives for it.
    ``skip_decoding``: flat keys of images kept as bytes; ``unknown="raw"``:
    unknown connectors give their stored values instead of raising.
    """

    def __init__(self, features: Feature, *, skip_decoding=frozenset(), unknown: str = "raise") -> None:
        from tfrx.parsing import ExampleParser

        if unknown not in ("raise", "raw"):
            raise ValueError(f"unknown must be 'raise' or 'raw', got {unknown!r}")
        self.features = features
        self.skip = frozenset(skip_decoding)
        self.raw_unknown = unknown == "raw"
        spec = batch_spec(features)
        self._parser = ExampleParser(spec, num_parallel_calls=1) if spec else None

    def __getstate__(self) -> dict:  # the native parser is rebuilt in DataLoader workers
        return {"features": self.features, "skip": self.skip, "raw_unknown": self.raw_unknown}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["features"], skip_decoding=state["skip"],  # type: ignore[misc]  # rebuilds the parser on purpose
                      unknown="raw" if state["raw_unknown"] else "raise")

    def decode(self, records, *, where=None) -> list:
        """``records`` decoded; ``where(i)`` names record ``i`` in errors (default: its file and index)."""
        from tfrx.io import RecordBatch

        if not isinstance(records, RecordBatch):
            records = RecordBatch.from_records(list(records))
        where = where or _default_where(records)
        cols = self._parse(records, where) if self._parser is not None else {}
        block = _Block(cols, len(records), records, self.skip, self.raw_unknown, where)
        return list(self.features._decode_batch(block, "", ()))

    def _parse(self, records, where) -> dict:
        from tfrx.errors import DecodeError
        from tfrx.io import RecordBatch

        assert self._parser is not None  # decode() parses only when there is a parser
        try:
            return self._parser.parse(records)
        except (ParseError, DecodeError):
            if len(records) == 1:
                raise
        # Find the record at fault and report it where it lives.
        for i in range(len(records)):
            one = RecordBatch(records.data, records.starts[i:i + 1], records.lengths[i:i + 1])
            try:
                self._parser.parse(one)
            except (ParseError, DecodeError) as e:
                raise type(e)(f"{where(i)}: {e}") from None
        raise AssertionError("unreachable: the block failed but no record does")  # pragma: no cover


def _default_where(records):
    def where(i: int) -> str:
        if records.path:
            at = f" at byte {int(records.file_offsets[i])}" if records.file_offsets is not None else ""
            return f"{records.path!r}, record {records.first_index + i}{at}"
        return f"record {i}"

    return where


def decode_records(features: Feature, records, *, skip_decoding=frozenset(), unknown: str = "raise") -> list:
    """Serialized Examples of ``features`` -> TFDS's NumPy values, one per record (see :class:`Decoder`)."""
    return Decoder(features, skip_decoding=skip_decoding, unknown=unknown).decode(records)


def _ragged_spec(dtype: str):
    from tfrx.parsing import RaggedFeature

    return RaggedFeature(dtype, row_splits_dtype="int64")


def _bytes_spec(seq: tuple):
    from tfrx.parsing import FixedLenFeature

    if not seq:
        return FixedLenFeature((), "string")
    if None not in seq:
        return FixedLenFeature(seq, "string")
    return _ragged_spec("string")


def _byte_rows(b: _Block, key: str, seq: tuple):
    """Each record's stored bytes of ``key``: one ``bytes``, or an object array of them in a sequence."""
    col = b.cols[key]
    if not seq:
        return col
    if None not in seq:
        return [row.reshape(-1) for row in col]
    values, splits = b.rows(key, np.dtype(object))
    return [values[splits[i]:splits[i + 1]] for i in range(b.n)]


def _parse_dtype(dt: np.dtype) -> str:
    return {"bytes": "string", "float": "float32", "int64": "int64"}[_storage(dt)]


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
        return Audio(shape=_dims(a.get("shape")), dtype=_dtype(a.get("dtype", "int64")),
                     sample_rate=int(a["sampleRate"]) if a.get("sampleRate") else None,
                     file_format=a.get("fileFormat") or None, encoding=a.get("encoding", "none"),
                     lazy_decode=bool(a.get("lazyDecode", False)))
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
        return Audio(shape=_dims(c.get("shape", [None])), dtype=_dtype(c.get("dtype", "int64")),
                     sample_rate=c.get("sample_rate"), file_format=c.get("file_format"),
                     lazy_decode=bool(c.get("lazy_decode", False)))
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


def Audio(*, file_format: str | None = None, shape=(None,), dtype=np.int64, sample_rate: int | None = None,
          encoding: str = "none", lazy_decode: bool = False) -> Feature:
    """``tfds.features.Audio``: samples ``(n,)`` or ``(n, channels)``.

    TFDS stores the samples (``lazy_decode=False``, values may be given as a
    path or file of ``file_format`` when writing) or, with ``lazy_decode=True``,
    the audio file itself, decoded when read (see ``tfrx.tfds.audio``).
    """
    if lazy_decode:
        return AudioFile(shape, np.dtype(dtype), file_format, sample_rate)
    return Tensor(shape, np.dtype(dtype), encoding, kind_="Audio",
                  extra={"sample_rate": sample_rate, "file_format": file_format})


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
    storage_dtype = _parse_dtype

    def seqfeat(shape, dtype):
        return FixedLenSequenceFeature(shape, dtype, allow_missing=True)

    def walk(f, key, seq):
        if isinstance(f, FeaturesDict):
            for k, v in f.features.items():
                walk(v, f"{key}/{k}" if key else k, seq)
        elif isinstance(f, Sequence):
            walk(f.feature, key, seq + (f.length,))
        elif isinstance(f, (Image, AudioFile)) or (isinstance(f, Tensor) and f.encoding != "none"):
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
