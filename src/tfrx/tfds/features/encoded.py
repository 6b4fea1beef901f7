"""Connectors stored as one encoded ``bytes`` per value: :class:`Image` (PNG/JPEG) and :class:`AudioFile`.

Their values are decoded a block at a time after the native parse, unless the
key is in ``skip_decoding`` (then the stored bytes are returned).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tfrx.errors import TfrxError
from tfrx.tfds.features.base import (
    Feature,
    VariableSpec,
    _Block,
    _byte_rows,
    _bytes_spec,
    _dims_json,
    _known_shape,
    _shape_str,
    _stack,
)
from tfrx.tfds.features.tensor import ClassLabel, _audio_json, _channels


class _Encoded(Feature):
    """A connector stored as one encoded ``bytes`` per value (image, audio file), decoded by ``_decode_rows``."""

    def _spec(self, key: str, seq: tuple, out: dict, variable: VariableSpec) -> None:
        out[key] = _bytes_spec(seq, variable)

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
        self.shape = _known_shape(self.shape)
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
            return [
                np.ascontiguousarray(img).view("<f4").astype(np.float32, copy=False)
                for img in decode_image(items, channels=4, dtype=np.uint8)
            ]
        return [np.asarray(img) for img in decode_image(items, channels=self.shape[-1] or 0, dtype=self.dtype)]

    def _decode_rows(self, b: _Block, key: str, seq: tuple, rows):
        if not seq:
            return self._decode_all(b, key, list(rows), np.arange(b.n))
        counts = [len(vals) for vals in rows]
        owner = np.repeat(np.arange(b.n), counts)
        flat = self._decode_all(b, key, [v for vals in rows for v in vals], owner)
        ends = np.cumsum(counts)
        return [_stack(flat[e - n : e], self.shape, self.dtype) for n, e in zip(counts, ends)]

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
        d: dict[str, Any] = {"dtype": self.dtype.name, "shape": _dims_json(self.shape)}
        if self.encoding_format:
            d["encodingFormat"] = self.encoding_format
        if self.use_colormap:
            d["useColormap"] = True
        return {"image": d}


@dataclasses.dataclass
class LabeledImage(Image):
    """``tfds.features.LabeledImage``: a one-channel segmentation mask whose pixel values are class labels.

    Stored and decoded as an :class:`Image`; ``labels`` (a list of names, a
    number of classes or ``None``) gives ``names`` / ``num_classes`` /
    ``int2str`` as its ``ClassLabel`` does, and is kept in ``features.json``
    (``numClasses``) and ``<feature>.labels.txt`` as TFDS keeps it.
    """

    shape: tuple = (None, None, 1)
    labels: Any = None
    class_label: ClassLabel = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kind = "LabeledImage"
        self.use_colormap = True  # as TFDS: LabeledImage always uses the colormap
        if self.shape[-1] != 1:
            raise ValueError(f"LabeledImage shape should have a single channel, got {_shape_str(self.shape)}")
        if self.labels is None:
            self.class_label = ClassLabel()
        elif isinstance(self.labels, (int, np.integer)):
            self.class_label = ClassLabel(num_classes=int(self.labels))
        elif isinstance(self.labels, (list, tuple)):
            self.class_label = ClassLabel(names=list(self.labels))
        else:
            raise TypeError(f"LabeledImage labels must be a list of names, a number or None, got {self.labels!r}")

    @property
    def names(self) -> list | None:
        return self.class_label.names

    @property
    def num_classes(self) -> int | None:
        return self.class_label.num_classes

    def int2str(self, i: int) -> str:
        return self.class_label.int2str(i)

    def str2int(self, s: str) -> int:
        return self.class_label.str2int(s)

    def __repr__(self) -> str:
        return f"LabeledImage(shape={_shape_str(self.shape)}, dtype={self.dtype.name}, num_classes={self.num_classes})"

    def to_proto_json(self) -> dict:
        d = super().to_proto_json()
        if self.num_classes is not None:
            d["image"]["label"] = {"numClasses": str(self.num_classes)}
        return d


@dataclasses.dataclass
class AudioFile(_Encoded):
    """``tfds.features.Audio(lazy_decode=True)``: the audio file's bytes, decoded to samples when read."""

    shape: tuple = (None,)
    dtype: np.dtype = dataclasses.field(default_factory=lambda: np.dtype(np.int64))
    file_format: str | None = None
    sample_rate: int | None = None

    def __post_init__(self) -> None:
        self.kind = "Audio"
        self.shape = _known_shape(self.shape)
        self.dtype = np.dtype(self.dtype)

    def __repr__(self) -> str:
        return (
            f"Audio(shape={_shape_str(self.shape)}, dtype={self.dtype.name}, file_format={self.file_format}, "
            "lazy_decode=True)"
        )

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
