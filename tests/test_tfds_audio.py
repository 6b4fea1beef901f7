"""TFDS Audio files: WAV read as TFDS's reader (pydub) reads it, other formats through soundfile, errors.

TFDS-prepared values are checked in test_tfds_read.py (golden ``tfrx_audio``) and
test_tfds_oracle.py; here pydub itself (TFDS's WAV reader, no TensorFlow) is the
oracle for the WAV parsing, on random files.
"""

from __future__ import annotations

import io
import struct
import warnings
import wave

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tfrx.tfds as tt
from tfrx.errors import ParseError
from tfrx.tfds import audio


def _wav(frames: bytes, width: int, channels: int, rate: int = 8000) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(frames)
    return buf.getvalue()


def test_sample_widths_as_pydub_reads_them():
    # 8-bit WAV is unsigned: made signed. 16/32-bit little-endian. 24-bit: pydub's widening.
    assert audio.read_wav(_wav(bytes([0, 128, 255]), 1, 1))[0].ravel().tolist() == [-128, 0, 127]
    assert audio.read_wav(_wav(struct.pack("<hh", -2, 300), 2, 1))[0].ravel().tolist() == [-2, 300]
    assert audio.read_wav(_wav(struct.pack("<i", -7), 4, 1))[0].ravel().tolist() == [-7]
    got, rate = audio.read_wav(_wav(bytes([1, 0, 0, 0xFF, 0xFF, 0xFF]), 3, 1, rate=44100))
    assert got.ravel().tolist() == [256, -256 + 255] and rate == 44100
    stereo = audio.read_wav(_wav(struct.pack("<hhhh", 1, 2, 3, 4), 2, 2))[0]
    assert stereo.tolist() == [[1, 2], [3, 4]]


def test_channel_conversion_and_dtype():
    data = _wav(struct.pack("<hhhh", 3, 4, -3, -4), 2, 2)
    assert audio.decode(data, "wav", 1, np.dtype(np.int64)).tolist() == [3, -4]  # floor((l + r) / 2)
    mono = _wav(struct.pack("<hh", 5, -6), 2, 1)
    assert audio.decode(mono, None, 2, np.dtype(np.int16)).tolist() == [[5, 5], [-6, -6]]
    assert audio.decode(mono, "WAV", 1, np.dtype(np.float32)).dtype == np.float32
    with pytest.raises(ValueError, match="3 channels"):
        audio.decode(_wav(bytes(6), 2, 3), "wav", 2, np.dtype(np.int64))


@pytest.mark.parametrize(
    "bad,match",
    [
        (b"not a wav file at all", "RIFF"),
        (_wav(bytes(4), 2, 1)[:30], "fmt"),
        (_wav(bytes(4), 2, 1).replace(b"data", b"junk"), "data"),
        (_wav(bytes(4), 2, 1)[:20] + struct.pack("<H", 3) + _wav(bytes(4), 2, 1)[22:], "not PCM"),
        (_wav(bytes(4), 2, 1)[:-1], "whole number"),
    ],
)
def test_bad_wav_files_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        audio.read_wav(bad)


@settings(max_examples=60, deadline=None)
@given(
    width=st.sampled_from([1, 2, 3, 4]),
    channels=st.sampled_from([1, 2]),
    want=st.sampled_from([1, 2]),
    frames=st.integers(0, 40),
    data=st.data(),
)
def test_wav_equals_pydub(width, channels, want, frames, data):
    """pydub (what TFDS decodes WAV with) gives the same samples for random files."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # pydub warns when ffmpeg is absent
        pydub = pytest.importorskip("pydub")
    assume(frames or width != 3)  # pydub fails on an empty 24-bit file (it indexes the first byte)
    raw = data.draw(st.binary(min_size=frames * width * channels, max_size=frames * width * channels))
    blob = _wav(raw, width, channels)
    seg = pydub.AudioSegment.from_file(io.BytesIO(blob), format="wav")
    if seg.channels != want:
        seg = seg.set_channels(want)
    ref = np.array(seg.get_array_of_samples())
    ref = ref.reshape(-1, want) if want > 1 else ref
    got = audio.decode(blob, "wav", want, np.dtype(np.int64))
    np.testing.assert_array_equal(got, ref.astype(np.int64))


def test_flac_through_soundfile(tmp_path):
    soundfile = pytest.importorskip("soundfile")
    samples = np.random.default_rng(0).integers(-(2**15), 2**15, size=(50, 2)).astype(np.int16)
    buf = io.BytesIO()
    soundfile.write(buf, samples, 8000, format="FLAC", subtype="PCM_16")
    d = tt.write(
        tmp_path / "a" / "1.0.0",
        features={"a": tt.Audio(file_format="flac", shape=(None, 2), dtype=np.int16, lazy_decode=True)},
        splits={"train": [{"a": io.BytesIO(buf.getvalue())}]},
    )
    got = tt.builder(d).as_data_source("train")[0]["a"]
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, samples)  # FLAC is lossless: the 16-bit samples
    buf24 = io.BytesIO()
    soundfile.write(buf24, samples[:, 0].astype(np.int32) << 16, 8000, format="FLAC", subtype="PCM_24")
    wide = audio.decode(buf24.getvalue(), "flac", 1, np.dtype(np.int64))
    v24 = samples[:, 0].astype(np.int64) << 8  # the 24-bit values, widened as pydub widens them
    np.testing.assert_array_equal(wide, v24 * 256 + np.where(v24 < 0, 255, 0))
    with pytest.raises(ValueError, match="not a readable flac file"):
        audio.decode(b"fLaC" + bytes(40), "flac", 1, np.dtype(np.int16))


def test_lazy_audio_in_a_dataset(tmp_path):
    blob = _wav(struct.pack("<hhh", 1, -2, 3), 2, 1)
    path = tmp_path / "clip.wav"
    path.write_bytes(blob)
    feats = {"eager": tt.Audio(file_format="wav"), "lazy": tt.Audio(file_format="wav", lazy_decode=True)}
    d = tt.write(
        tmp_path / "ds" / "1.0.0",
        features=feats,
        splits={"train": [{"eager": str(path), "lazy": path}, {"eager": [7], "lazy": blob[:40]}]},
    )
    b = tt.builder(d)
    assert repr(b.info.features["lazy"]) == "Audio(shape=(None,), dtype=int64, file_format=wav, lazy_decode=True)"
    src = b.as_data_source("train")
    first = src[0]
    assert first["eager"].tolist() == [1, -2, 3] and first["lazy"].tolist() == [1, -2, 3]
    assert src.__getitems__([0])[0]["lazy"].dtype == np.int64
    skipped = b.as_data_source("train", decoders={"lazy": tt.SkipDecoding()})[0]
    assert skipped["lazy"] == blob
    with pytest.raises(ParseError, match=r"record 1 at byte .*audio feature 'lazy'.*no 'data' chunk"):
        src[1]


@pytest.mark.skipif(__import__("importlib").util.find_spec("soundfile") is not None, reason="soundfile installed")
def test_non_wav_needs_soundfile():
    with pytest.raises(ImportError, match=r"tfrx\[audio\]"):
        audio.decode(b"fLaC....", "flac", 1, np.dtype(np.int16))
