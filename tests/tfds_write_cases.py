"""A dataset covering every connector tfrx.tfds.write supports, shared by the write tests."""

from __future__ import annotations

import io
import wave

import numpy as np

import tfrx.tfds as tt


def wav_file(samples: np.ndarray, rate: int = 8000) -> io.BytesIO:
    """A 16-bit PCM WAV file of ``samples`` ((n,) or (n, channels)), written with the standard library."""
    samples = np.asarray(samples, dtype="<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1 if samples.ndim == 1 else samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    buf.seek(0)
    return buf


def features():
    return {
        "f32": tt.Tensor((2, 3), np.float32),
        "f64": tt.Tensor((3,), np.float64),
        "i8": tt.Scalar(np.int8),
        "u64": tt.Tensor((2,), np.uint64),
        "b": tt.Tensor((3,), np.bool_),
        "s": tt.Tensor((), object),
        "ss": tt.Tensor((None,), object),
        "var2": tt.Tensor((None, 2), np.float32),
        "varvar": tt.Tensor((None, None), np.int64, "zlib"),
        "enc_bytes": tt.Tensor((2, 2), np.float64, "bytes"),
        "enc_zlib": tt.Tensor((None, 3), np.int16, "zlib"),
        "label": tt.ClassLabel(names=["cat", "dog", "bird"]),
        "label_n": tt.ClassLabel(num_classes=5),
        "text": tt.Text(),
        "translation": tt.Translation(["de", "en"]),
        "tvl": tt.TranslationVariableLanguages(["de", "en", "fr"]),
        "bbox": tt.BBoxFeature(),
        "seq_int": tt.Sequence(tt.Tensor((), np.int64)),
        "seq_fixed": tt.Sequence(tt.Tensor((2,), np.float32), length=3),
        "seq_dict": tt.Sequence({"a": np.int32, "b": tt.Text(), "c": tt.ClassLabel(names=["x", "y"])}),
        "seq_seq": tt.Sequence(tt.Sequence(tt.Tensor((), np.int64))),
        "seq_seq_seq": tt.Sequence(tt.Sequence(tt.Sequence(tt.Tensor((), np.float32)))),
        "nested": {"x": np.float32, "inner": {"y": tt.Tensor((2,), np.int64), "t": tt.Text()}},
        "rgb": tt.Image((None, None, 3)),
        "gray": tt.Image((4, 5, 1)),
        "u16": tt.Image((3, 4, 1), np.uint16),
        "fimg": tt.Image((3, 2, 1), np.float32),
        "video": tt.Video((None, 4, 4, 3)),
        "audio": tt.Audio(),
        "audio_wav": tt.Audio(file_format="wav"),
        "audio_lazy": tt.Audio(file_format="wav", shape=(None, 2), dtype=np.int16, lazy_decode=True),
        "steps": tt.Dataset({"obs": tt.Tensor((2,), np.float32), "is_last": np.bool_, "img": tt.Image((2, 3, 3))}),
    }


def examples(seed: int, n: int):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = int(rng.integers(0, 4))
        t = int(rng.integers(1, 4))
        out.append(
            {
                "f32": rng.normal(size=(2, 3)).astype(np.float32),
                "f64": rng.normal(size=3) * 1e10,
                "i8": int(rng.integers(-128, 128)),
                "u64": np.array([2**64 - 1 - i, i], dtype=np.uint64),
                "b": rng.integers(0, 2, size=3).astype(bool),
                "s": f"s{i}é",
                "ss": [f"w{j}" for j in range(k)],
                "var2": rng.normal(size=(k, 2)).astype(np.float32),
                "varvar": rng.integers(-9, 9, size=(k, i % 3)),
                "enc_bytes": rng.normal(size=(2, 2)),
                "enc_zlib": rng.integers(-300, 300, size=(k, 3)).astype(np.int16),
                "label": ["cat", "dog", "bird"][i % 3],
                "label_n": i % 5 if i != 2 else -1,  # -1: no label
                "text": "héllo " * (i % 3),
                "translation": {"de": f"hallo {i}", "en": f"hello {i}"},
                "tvl": {"en": [f"a{i}", "b"], "de": f"c{i}"} if i % 2 else {"fr": "d"},
                "bbox": np.array([0.1, 0.2, 0.5, 0.6], np.float32),
                "seq_int": list(range(k)),
                "seq_fixed": rng.normal(size=(3, 2)).astype(np.float32),
                "seq_dict": [{"a": j, "b": f"t{j}", "c": j % 2} for j in range(k)],
                "seq_seq": [list(range(j)) for j in range(k)],
                "seq_seq_seq": [[[float(a + b)] * (b % 2 + 1) for b in range(j)] for a, j in enumerate(range(k))],
                "nested": {"x": float(i), "inner": {"y": [i, -i], "t": f"in{i}"}},
                "rgb": rng.integers(0, 256, size=(int(rng.integers(1, 5)), int(rng.integers(1, 5)), 3), dtype=np.uint8),
                "gray": rng.integers(0, 256, size=(4, 5, 1), dtype=np.uint8),
                "u16": rng.integers(0, 65536, size=(3, 4, 1)).astype(np.uint16),
                "fimg": rng.normal(size=(3, 2, 1)).astype(np.float32),
                "video": rng.integers(0, 256, size=(i % 3 + 1, 4, 4, 3), dtype=np.uint8),
                "audio": rng.integers(-(2**15), 2**15, size=int(rng.integers(0, 9))),
                "audio_wav": wav_file(rng.integers(-(2**15), 2**15, size=k + 1)),
                "audio_lazy": wav_file(rng.integers(-(2**15), 2**15, size=(k, 2))),
                "steps": [
                    {
                        "obs": rng.normal(size=2).astype(np.float32),
                        "is_last": j == t - 1,
                        "img": rng.integers(0, 256, size=(2, 3, 3), dtype=np.uint8),
                    }
                    for j in range(t)
                ],
            }
        )
    return out


def expected(ex: dict) -> dict:
    """What reading an example back gives (TFDS's decoded form of the written values)."""
    e = dict(ex)
    e["f64"] = ex["f64"].astype(np.float32).astype(np.float64)
    e["label"] = np.int64(["cat", "dog", "bird"].index(ex["label"]))
    e["tvl"] = None  # checked separately: sorted (language, text) pairs
    for key, dtype in (("audio_wav", np.int64), ("audio_lazy", np.int16)):
        with wave.open(io.BytesIO(ex[key].getvalue())) as w:
            samples = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, w.getnchannels())
        e[key] = (samples[:, 0] if key == "audio_wav" else samples).astype(dtype)
    return e
