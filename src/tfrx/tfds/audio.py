"""Audio files of TFDS ``Audio(file_format=...)`` features: WAV read as TFDS reads it, other formats optionally.

TFDS reads audio files with pydub: ``AudioSegment.from_file(f, format)``,
``set_channels`` to the feature's channel count when they differ, then
``get_array_of_samples()`` (reshaped to ``(frames, channels)`` when there are
several) cast to the feature's dtype. It does so when preparing (the samples
are stored) and, for ``lazy_decode=True``, when reading (the file bytes are
stored and decoded through a ``tf.py_function`` returning int32).

For WAV, pydub parses the file itself (no ffmpeg), and so does this module,
with the same results: PCM or WAVE_FORMAT_EXTENSIBLE, the ``data`` chunk among
the first ten, 8-bit samples made signed (``x - 128``), 24-bit samples widened
to 32 bits the way pydub does it (``x * 256``, plus 255 for negative values),
two channels mixed to one as ``audioop.tomono(..., 0.5, 0.5)`` does
(``floor((l + r) / 2)``) and one channel copied to several. Other formats
(FLAC, OGG, ...) are read with the optional ``soundfile`` package
(libsndfile), which TFDS does not use, so those values are not checked
against TFDS; MP3 and the rest of what only ffmpeg reads are not supported.
"""

from __future__ import annotations

import io
import os
import struct

import numpy as np

from tfrx.errors import ParseError

_PCM, _EXTENSIBLE = 0x0001, 0xFFFE


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """``(samples (frames, channels) int32, sample_rate)`` of a WAV file, as pydub reads it."""
    data = bytes(data)
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a RIFF/WAVE file")
    pos = 12
    chunks: list = []
    while pos + 8 <= len(data) and len(chunks) < 10:
        cid, size = data[pos : pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        chunks.append((cid, pos, size))
        if cid == b"data":
            break
        pos += size + 8
    fmt = [c for c in chunks if c[0] == b"fmt "]
    if not fmt or fmt[0][2] < 16:
        raise ValueError("no 'fmt ' chunk in the WAV data")
    p = fmt[0][1] + 8
    if p + 16 > len(data):
        raise ValueError("the WAV 'fmt ' chunk is cut short")
    audio_format, channels, rate = struct.unpack_from("<HHI", data, p)
    bits = struct.unpack_from("<H", data, p + 14)[0]
    if audio_format not in (_PCM, _EXTENSIBLE):
        raise ValueError(f"WAV audio format 0x{audio_format:X} is not PCM (TFDS's reader, pydub, rejects it too)")
    if chunks[-1][0] != b"data":
        raise ValueError("no 'data' chunk in the WAV data")
    _, p, size = chunks[-1]
    raw = data[p + 8 : p + 8 + size]
    width = bits // 8
    if width not in (1, 2, 3, 4) or channels < 1:
        raise ValueError(f"WAV with {bits}-bit samples and {channels} channel(s) is not supported")
    frame = width * channels
    if len(raw) % width:
        raise ValueError(f"WAV data of {len(raw)} bytes is not a whole number of {bits}-bit samples")
    if width == 1:
        samples = np.frombuffer(raw, np.uint8).astype(np.int32) - 128
    elif width == 2:
        samples = np.frombuffer(raw, "<i2").astype(np.int32)
    elif width == 3:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        value = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        value = np.where(value >= 1 << 23, value - (1 << 24), value)
        samples = value * 256 + np.where(value < 0, 255, 0)
    else:
        samples = np.frombuffer(raw, "<i4").astype(np.int32)
    if len(raw) % frame:
        raise ValueError(f"WAV data of {len(raw)} bytes is not a whole number of {channels}-channel frames")
    return samples.reshape(-1, channels), int(rate)


def _set_channels(samples: np.ndarray, channels: int) -> np.ndarray:
    have = samples.shape[1]
    if have == channels:
        return samples
    if channels == 1 and have == 2:  # audioop.tomono(data, width, 0.5, 0.5)
        return ((samples[:, 0].astype(np.int64) + samples[:, 1]) >> 1).astype(np.int32)[:, None]
    if have == 1:  # audioop.tostereo / pydub's duplication of a mono channel
        return np.repeat(samples, channels, axis=1)
    raise ValueError(
        f"the file has {have} channels and the feature {channels}; tfrx converts 2 to 1 and 1 to "
        "any number, as TFDS's pydub does, but not this"
    )


def _read_soundfile(data: bytes, file_format: str | None) -> np.ndarray:
    """Samples at the file's own bit depth (what pydub's samples are), widened as pydub widens 8 and 24 bits."""
    try:
        import soundfile
    except ImportError:
        raise ImportError(
            f"decoding {file_format or 'non-WAV'} audio needs the soundfile package: pip install 'tfrx[audio]'"
        ) from None
    try:
        with soundfile.SoundFile(io.BytesIO(data)) as f:
            subtype = f.subtype
            wide = subtype in ("PCM_24", "PCM_32")
            samples = f.read(dtype="int32" if wide else "int16", always_2d=True).astype(np.int32)
    except RuntimeError as e:  # soundfile.LibsndfileError: an unknown or damaged file
        raise ValueError(f"not a readable {file_format or 'audio'} file ({e})") from None
    if subtype in ("PCM_S8", "PCM_U8"):
        return samples >> 8
    if subtype == "PCM_24":  # libsndfile gives x << 8; pydub x * 256 plus 255 when negative
        return samples + np.where(samples < 0, 255, 0).astype(np.int32)
    return samples


def decode(data: bytes, file_format: str | None, channels: int, dtype: np.dtype) -> np.ndarray:
    """An audio file's samples as TFDS gives them: ``(frames,)`` or ``(frames, channels)`` of ``dtype``."""
    fmt = (file_format or "").lower() or _sniff(data)
    if fmt == "wav":
        samples, _ = read_wav(data)
    else:
        samples = _read_soundfile(data, fmt or None)
    samples = _set_channels(samples, channels)
    return (samples[:, 0] if channels == 1 else samples).astype(dtype)


def _sniff(data: bytes) -> str:
    return "wav" if data[:4] == b"RIFF" and data[8:12] == b"WAVE" else ""


def read_file(value, file_format: str | None) -> tuple[bytes, str | None]:
    """``(file bytes, format)`` of what ``_generate_examples`` gives an Audio feature: a path or a binary file."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value), file_format
    if isinstance(value, (str, os.PathLike)):
        from tfrx.io._paths import open_input

        path = os.fspath(value)
        with open_input(path) as f:
            data = f.read()
        if file_format is None:
            ext = os.path.splitext(path)[1]
            file_format = ext[1:] if ext else None
        return data, file_format
    if hasattr(value, "read"):
        return value.read(), file_format
    raise TypeError(
        f"an Audio value must be samples (array or list), a path or a binary file, got {type(value).__name__}"
    )


def decode_error(where: str, key: str, e: Exception) -> ParseError:
    return ParseError(f"{where}: audio feature {key!r}: cannot decode the stored file ({e})")
