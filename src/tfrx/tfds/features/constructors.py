"""The connectors' constructors named as in ``tfds.features`` (``Scalar``, ``Text``, ``Audio``, ``Video``...).

Each builds the connector class that stores and decodes like TFDS's: most are
a :class:`Tensor` of a given kind, ``Video`` a :class:`Sequence` of
:class:`Image`, ``Translation`` a :class:`FeaturesDict` of texts.
"""

from __future__ import annotations

import numpy as np

from tfrx.tfds.features.base import Feature, _dtype
from tfrx.tfds.features.containers import FeaturesDict, Sequence
from tfrx.tfds.features.encoded import AudioFile, Image
from tfrx.tfds.features.tensor import Tensor


def Scalar(dtype, *, optional: bool = False) -> Tensor:
    """``tfds.features.Scalar(dtype, optional=)``."""
    return Tensor((), _dtype(dtype) if isinstance(dtype, str) else np.dtype(dtype), kind_="Scalar", optional=optional)


def Text() -> Tensor:
    """``tfds.features.Text()``: a UTF-8 string, decoded to ``bytes`` as in TFDS."""
    return _texts(())


def _texts(shape: tuple) -> Tensor:
    return Tensor(shape, np.dtype(object), kind_="Text")


def BBoxFeature() -> Tensor:
    """``tfds.features.BBoxFeature()``: float32 ``(ymin, xmin, ymax, xmax)``."""
    return Tensor((4,), np.dtype(np.float32), kind_="BBoxFeature")


def Audio(
    *,
    file_format: str | None = None,
    shape=(None,),
    dtype=np.int64,
    sample_rate: int | None = None,
    encoding: str = "none",
    lazy_decode: bool = False,
) -> Feature:
    """``tfds.features.Audio``: samples ``(n,)`` or ``(n, channels)``.

    TFDS stores the samples (``lazy_decode=False``, values may be given as a
    path or file of ``file_format`` when writing) or, with ``lazy_decode=True``,
    the audio file itself, decoded when read (see ``tfrx.tfds.audio``).
    """
    if lazy_decode:
        return AudioFile(shape, np.dtype(dtype), file_format, sample_rate)
    return Tensor(
        shape, np.dtype(dtype), encoding, kind_="Audio", extra={"sample_rate": sample_rate, "file_format": file_format}
    )


def Video(shape, *, dtype=np.uint8, encoding_format: str | None = "png") -> Sequence:
    """``tfds.features.Video((frames, h, w, c))``: a Sequence of encoded frames."""
    shape = tuple(shape)
    return Sequence(Image(shape[1:], np.dtype(dtype), encoding_format), shape[0], kind_="Video")


def Translation(languages) -> FeaturesDict:
    """``tfds.features.Translation(languages)``: one Text per language."""
    langs = list(languages)
    return FeaturesDict({lang: Text() for lang in langs}, kind_="Translation", languages=langs)


def TranslationVariableLanguages(languages=()) -> FeaturesDict:
    """``tfds.features.TranslationVariableLanguages``: ``{"language": [...], "translation": [...]}``."""
    return FeaturesDict(
        {"language": _texts((None,)), "translation": _texts((None,))},
        kind_="TranslationVariableLanguages",
        languages=list(languages),
    )
