"""Writes the prepared TFDS directories under tests/golden/tfds/ with TFDS itself.

Run with TensorFlow and tensorflow-datasets installed (TFDS's ``tfds.testing``,
used for ``DummyMnist``, also imports ``importlib_resources``; the Audio
connector reads WAV files with ``pydub``):

    python tests/golden/tfds/make_golden.py [NAME ...]

(names: tfrx_tensors, tfrx_images, tfrx_rlds, tfrx_audio, tfrx_cmyk, tfrx_optional,
tfrx_labels, tfrx_steps, tfrx_interleave, dummy_mnist; none: all).

It prepares one small dataset per connector family with TFDS's own
``GeneratorBasedBuilder`` (plus TFDS's ``DummyMnist`` test builder), then saves
what ``tfds.as_numpy(builder.as_dataset(split))`` returns for every split as
``<name>.expected.npz`` (elements flattened to ``"<index>/<path>"`` keys) so
the tests can check tfrx's decoding where TFDS is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # tests/: the split strings the tests read back
from tfds_helpers import EXTRA_SPLITS  # noqa: E402


def _rng(seed):
    return np.random.default_rng(seed)


def define_builders(tfds):  # noqa: C901  an oracle script: the builder classes it defines count toward the function
    F = tfds.features

    class TfrxTensors(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                description="Tensor, Scalar, Text, ClassLabel, Translation, BBox and Sequence connectors.",
                citation="@misc{tfrx}",
                features=F.FeaturesDict(
                    {
                        "f32": F.Tensor(shape=(2, 3), dtype=np.float32),
                        "f64": F.Tensor(shape=(3,), dtype=np.float64),
                        "i8": F.Scalar(dtype=np.int8),
                        "u8": F.Tensor(shape=(2,), dtype=np.uint8),
                        "i32": F.Tensor(shape=(None,), dtype=np.int32),
                        "u64": F.Tensor(shape=(2,), dtype=np.uint64),
                        "b": F.Tensor(shape=(3,), dtype=np.bool_),
                        "s": F.Tensor(shape=(), dtype=np.str_),
                        "ss": F.Tensor(shape=(None,), dtype=np.str_),
                        "var2": F.Tensor(shape=(None, 2), dtype=np.float32),
                        "varvar": F.Tensor(shape=(None, None), dtype=np.int64, encoding="zlib"),
                        "enc_bytes": F.Tensor(shape=(2, 2), dtype=np.float64, encoding="bytes"),
                        "enc_zlib": F.Tensor(shape=(None, 3), dtype=np.int16, encoding="zlib"),
                        "enc_bytes_var": F.Tensor(shape=(None,), dtype=np.uint16, encoding="bytes"),
                        "label": F.ClassLabel(names=["cat", "dog", "bird"]),
                        "label_n": F.ClassLabel(num_classes=5),
                        "text": F.Text(),
                        "translation": F.Translation(languages=["de", "en"]),
                        "tvl": F.TranslationVariableLanguages(languages=["de", "en", "fr"]),
                        "bbox": F.BBoxFeature(),
                        "bboxes": F.Sequence(F.BBoxFeature()),
                        "seq_int": F.Sequence(np.int64),
                        "seq_fixed": F.Sequence(F.Tensor(shape=(2,), dtype=np.float32), length=3),
                        "seq_dict": F.Sequence({"a": np.int32, "b": F.Text(), "c": F.ClassLabel(names=["x", "y"])}),
                        "seq_seq": F.Sequence(F.Sequence(np.int64)),
                        "seq_seq_seq": F.Sequence(F.Sequence(F.Sequence(np.float32))),
                        "nested": {
                            "x": np.float32,
                            "inner": {"y": F.Tensor(shape=(2,), dtype=np.int64), "t": F.Text()},
                        },
                    }
                ),
                supervised_keys=("f32", "label"),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(0, 7), "test": self._generate_examples(1, 4)}

        def _generate_examples(self, seed, n):
            rng = _rng(seed)
            for i in range(n):
                k = int(rng.integers(0, 4))
                yield (
                    i,
                    {
                        "f32": rng.normal(size=(2, 3)).astype(np.float32),
                        "f64": rng.normal(size=3) * 1e10 + 1e-3,
                        "i8": int(rng.integers(-128, 128)),
                        "u8": rng.integers(0, 256, size=2).astype(np.uint8),
                        "i32": rng.integers(-(2**31), 2**31, size=k).astype(np.int32),
                        "u64": np.array([2**64 - 1 - i, i], dtype=np.uint64),
                        "b": rng.integers(0, 2, size=3).astype(bool),
                        "s": f"s{i}é",
                        "ss": [f"w{j}" for j in range(k)],
                        "var2": rng.normal(size=(k, 2)).astype(np.float32),
                        "varvar": rng.integers(-9, 9, size=(k, (i % 3))).astype(np.int64),
                        "enc_bytes": rng.normal(size=(2, 2)),
                        "enc_zlib": rng.integers(-300, 300, size=(k, 3)).astype(np.int16),
                        "enc_bytes_var": rng.integers(0, 2**16, size=k).astype(np.uint16),
                        "label": ["cat", "dog", "bird"][i % 3],
                        "label_n": i % 5,
                        "text": "héllo " * (i % 3),
                        "translation": {"de": f"hallo {i}", "en": f"hello {i}"},
                        "tvl": {"en": [f"a{i}", "b"], "de": f"c{i}"} if i % 2 else {"fr": "d"},
                        "bbox": tfds.features.BBox(0.1, 0.2, 0.5, 0.6 + i / 100),
                        "bboxes": [tfds.features.BBox(0.0, 0.1 * j, 0.5, 0.9) for j in range(k)],
                        "seq_int": list(range(k)),
                        "seq_fixed": rng.normal(size=(3, 2)).astype(np.float32),
                        "seq_dict": [{"a": j, "b": f"t{j}", "c": j % 2} for j in range(k)],
                        "seq_seq": [list(range(j)) for j in range(k)],
                        "seq_seq_seq": [
                            [[float(a + b)] * (b % 2 + 1) for b in range(j)] for a, j in enumerate(range(k))
                        ],
                        "nested": {"x": float(i), "inner": {"y": [i, -i], "t": f"in{i}"}},
                    },
                )

    class TfrxImages(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("0.2.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                description="Image, Video and Audio connectors.",
                features=F.FeaturesDict(
                    {
                        "rgb": F.Image(shape=(None, None, 3)),
                        "gray": F.Image(shape=(4, 5, 1), encoding_format="png"),
                        "jpeg": F.Image(shape=(8, 8, 3), encoding_format="jpeg"),
                        "u16": F.Image(shape=(3, 4, 1), dtype=np.uint16),
                        "f32": F.Image(shape=(3, 2, 1), dtype=np.float32),
                        "cmap": F.Image(shape=(4, 4, 1), use_colormap=True),
                        "rgba": F.Image(shape=(None, None, 4)),
                        "video": F.Video(shape=(None, 4, 4, 3)),
                        "audio": F.Audio(),
                        "audio_f": F.Audio(dtype=np.float32, sample_rate=8000),
                        "audio_2ch": F.Audio(shape=(None, 2), dtype=np.int16),
                        "label": F.ClassLabel(names=["a", "b"]),
                    }
                ),
                supervised_keys=("rgb", "label"),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(2, 5), "validation": self._generate_examples(3, 3)}

        def _generate_examples(self, seed, n):
            rng = _rng(seed)
            for i in range(n):
                h, w = int(rng.integers(1, 6)), int(rng.integers(1, 6))
                yield (
                    i,
                    {
                        "rgb": rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8),
                        "gray": rng.integers(0, 256, size=(4, 5, 1), dtype=np.uint8),
                        "jpeg": rng.integers(0, 256, size=(8, 8, 3), dtype=np.uint8),
                        "u16": rng.integers(0, 65536, size=(3, 4, 1)).astype(np.uint16),
                        "f32": rng.normal(size=(3, 2, 1)).astype(np.float32),
                        "cmap": rng.integers(0, 10, size=(4, 4, 1), dtype=np.uint8),
                        "rgba": rng.integers(0, 256, size=(w, h, 4), dtype=np.uint8),
                        "video": rng.integers(0, 256, size=(i % 3 + 1, 4, 4, 3), dtype=np.uint8),
                        "audio": rng.integers(-(2**15), 2**15, size=int(rng.integers(0, 20))).astype(np.int64),
                        "audio_f": rng.uniform(-1, 1, size=10).astype(np.float32),
                        "audio_2ch": rng.integers(-(2**15), 2**15, size=(i + 1, 2)).astype(np.int16),
                        "label": i % 2,
                    },
                )

    class TfrxRlds(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                description="RLDS-style episodes: a nested Dataset of steps.",
                features=F.FeaturesDict(
                    {
                        "episode_metadata": {"id": np.int64, "file": F.Text()},
                        "steps": F.Dataset(
                            {
                                "observation": {
                                    "image": F.Image(shape=(2, 3, 3)),
                                    "state": F.Tensor(shape=(4,), dtype=np.float32),
                                },
                                "action": F.Tensor(shape=(2,), dtype=np.float32),
                                "reward": F.Scalar(dtype=np.float32),
                                "is_first": np.bool_,
                                "is_last": np.bool_,
                                "is_terminal": np.bool_,
                                "language_instruction": F.Text(),
                            }
                        ),
                    }
                ),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(4, 4)}

        def _generate_examples(self, seed, n):
            rng = _rng(seed)
            for i in range(n):
                t = int(rng.integers(1, 5))
                yield (
                    i,
                    {
                        "episode_metadata": {"id": i, "file": f"ep{i}.h5"},
                        "steps": [
                            {
                                "observation": {
                                    "image": rng.integers(0, 256, size=(2, 3, 3), dtype=np.uint8),
                                    "state": rng.normal(size=4).astype(np.float32),
                                },
                                "action": rng.normal(size=2).astype(np.float32),
                                "reward": float(j == t - 1),
                                "is_first": j == 0,
                                "is_last": j == t - 1,
                                "is_terminal": j == t - 1,
                                "language_instruction": "pick up the block",
                            }
                            for j in range(t)
                        ],
                    },
                )

    class TfrxAudio(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            wav = dict(file_format="wav")
            lazy = dict(file_format="wav", lazy_decode=True)
            return tfds.core.DatasetInfo(
                builder=self,
                description="Audio read from WAV files: samples stored, or the files stored (lazy_decode).",
                features=F.FeaturesDict(
                    {
                        "eager": F.Audio(**wav),
                        "eager_2ch": F.Audio(shape=(None, 2), dtype=np.int16, **wav),
                        "lazy": F.Audio(**lazy),
                        "lazy_24bit_2ch": F.Audio(shape=(None, 2), dtype=np.int32, **lazy),
                        "lazy_8bit": F.Audio(**lazy),
                        "lazy_to_mono": F.Audio(**lazy),
                        "lazy_to_stereo": F.Audio(shape=(None, 2), **lazy),
                        "lazy_float": F.Audio(dtype=np.float32, sample_rate=16000, **lazy),
                        "lazy_fobj": F.Audio(**lazy),
                    }
                ),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(5, 4)}

        def _generate_examples(self, seed, n):
            import io
            import tempfile

            rng = _rng(seed)
            tmp = tempfile.mkdtemp(prefix="tfrx-golden-audio-")
            for i in range(n):
                frames = int(rng.integers(0, 9)) + i

                def wav(width, channels, name):
                    path = os.path.join(tmp, f"{i}-{name}.wav")
                    write_wav(
                        path,
                        rng.integers(0, 256, size=frames * width * channels, dtype=np.uint8).tobytes(),
                        width,
                        channels,
                    )
                    return path

                with open(wav(2, 1, "fobj"), "rb") as f:
                    fobj = io.BytesIO(f.read())
                yield (
                    i,
                    {
                        "eager": wav(2, 1, "eager"),
                        "eager_2ch": wav(2, 2, "eager2"),
                        "lazy": wav(2, 1, "lazy"),
                        "lazy_24bit_2ch": wav(3, 2, "lazy24"),
                        "lazy_8bit": wav(1, 1, "lazy8"),
                        "lazy_to_mono": wav(2, 2, "tomono"),
                        "lazy_to_stereo": wav(2, 1, "tostereo"),
                        "lazy_float": wav(4, 1, "float"),
                        "lazy_fobj": fobj,
                    },
                )

    class TfrxCmyk(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                description="CMYK and YCCK JPEGs, with and without an Adobe marker.",
                features=F.FeaturesDict(
                    {
                        "kind": F.Text(),
                        "image": F.Image(shape=(None, None, 3), encoding_format="jpeg"),
                        "any": F.Image(encoding_format="jpeg"),
                    }
                ),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(6)}

        def _generate_examples(self, seed):
            import io

            for i, (kind, data) in enumerate(cmyk_jpegs(seed)):
                yield i, {"kind": kind, "image": io.BytesIO(data), "any": io.BytesIO(data)}

    class TfrxOptional(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                # Text(optional=True) given None is left out: TFDS 4.9.10 fails reading it back
                # ("Feature: text (data type: string) is required but could not be found").
                description="Features declared optional=True, given None in some examples.",
                features=F.FeaturesDict(
                    {
                        "id": np.int64,
                        "i64": F.Scalar(dtype=np.int64, optional=True),
                        "i32": F.Scalar(dtype=np.int32, optional=True),
                        "u8": F.Scalar(dtype=np.uint8, optional=True),
                        "f32": F.Scalar(dtype=np.float32, optional=True),
                        "b": F.Scalar(dtype=np.bool_, optional=True),
                        "s": F.Scalar(dtype=np.str_, optional=True),
                        "vec": F.Tensor(shape=(3,), dtype=np.float32, optional=True),
                        "mat": F.Tensor(shape=(2, 2), dtype=np.int16, optional=True),
                        "nested": {"x": F.Scalar(dtype=np.int64, optional=True), "y": np.float32},
                    }
                ),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(7, 6)}

        def _generate_examples(self, seed, n):
            rng = _rng(seed)
            for i in range(n):

                def maybe(v, j, i=i):
                    return None if (i + j) % 3 == 0 else v

                yield (
                    i,
                    {
                        "id": i,
                        "i64": maybe(int(rng.integers(-(2**40), 2**40)), 0),
                        "i32": maybe(int(rng.integers(-1000, 1000)), 1),
                        "u8": maybe(int(rng.integers(0, 256)), 2),
                        "f32": maybe(float(rng.normal()), 0),
                        "b": maybe(bool(i % 2), 1),
                        "s": maybe(f"s{i}", 2),
                        "vec": maybe(rng.normal(size=3).astype(np.float32), 1),
                        "mat": maybe(rng.integers(-9, 9, size=(2, 2)).astype(np.int16), 2),
                        "nested": {"x": maybe(i * 10, 1), "y": float(i)},
                    },
                )

    class TfrxLabels(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                description="Label names: ClassLabel by names and by num_classes, LabeledImage.",
                features=F.FeaturesDict(
                    {
                        "by_count": F.ClassLabel(num_classes=4),
                        "by_names": F.ClassLabel(names=["zero", "one", "two"]),
                        "mask": F.LabeledImage(labels=["background", "car", "truck"], shape=(4, 5, 1)),
                        "mask_n": F.LabeledImage(labels=6, shape=(None, None, 1)),
                        "objects": F.Sequence(
                            {"label": F.ClassLabel(names=["a", "b"]), "n": F.ClassLabel(num_classes=2)}
                        ),
                    }
                ),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(8, 4)}

        def _generate_examples(self, seed, n):
            rng = _rng(seed)
            for i in range(n):
                h, w = int(rng.integers(1, 5)), int(rng.integers(1, 5))
                yield (
                    i,
                    {
                        "by_count": i % 4,
                        "by_names": ["zero", "one", "two"][i % 3],
                        "mask": rng.integers(0, 3, size=(4, 5, 1), dtype=np.uint8),
                        "mask_n": rng.integers(0, 6, size=(h, w, 1), dtype=np.uint8),
                        "objects": [{"label": ["a", "b"][j % 2], "n": (i + j) % 2} for j in range(i)],
                    },
                )

    class TfrxSteps(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                description="RLDS episodes whose steps hold nested dicts (observation, action).",
                features=F.FeaturesDict(
                    {
                        "episode_metadata": {"id": np.int64, "agent": {"name": F.Text(), "version": np.int32}},
                        "steps": F.Dataset(
                            {
                                "observation": {
                                    "image": F.Image(shape=(2, 3, 3)),
                                    "proprio": {
                                        "joints": F.Tensor(shape=(3,), dtype=np.float32),
                                        "gripper": np.float32,
                                    },
                                    "instruction": F.Text(),
                                },
                                "action": {"move": F.Tensor(shape=(2,), dtype=np.float32), "grip": np.bool_},
                                "reward": np.float32,
                                "is_last": np.bool_,
                            }
                        ),
                    }
                ),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples(9, 4)}

        def _generate_examples(self, seed, n):
            rng = _rng(seed)
            for i in range(n):
                t = int(rng.integers(1, 5))
                yield (
                    i,
                    {
                        "episode_metadata": {"id": i, "agent": {"name": f"agent{i}", "version": i + 1}},
                        "steps": [
                            {
                                "observation": {
                                    "image": rng.integers(0, 256, size=(2, 3, 3), dtype=np.uint8),
                                    "proprio": {
                                        "joints": rng.normal(size=3).astype(np.float32),
                                        "gripper": float(rng.uniform()),
                                    },
                                    "instruction": f"step {j} of {i}",
                                },
                                "action": {"move": rng.normal(size=2).astype(np.float32), "grip": bool(j % 2)},
                                "reward": float(j == t - 1),
                                "is_last": j == t - 1,
                            }
                            for j in range(t)
                        ],
                    },
                )

    class TfrxInterleave(tfds.core.GeneratorBasedBuilder):
        """Many shards of uneven length: as_dataset interleaves them (16 files at a time, blocks of 16)."""

        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(
                builder=self,
                description="20 shards per split, to pin the order TFDS interleaves shards in.",
                features=F.FeaturesDict({"id": np.int64, "split": F.Text()}),
            )

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples("train", 437), "test": self._generate_examples("test", 45)}

        def _generate_examples(self, split, n):
            for i in range(n):
                yield i, {"id": i, "split": split}

    return [TfrxTensors, TfrxImages, TfrxRlds, TfrxAudio, TfrxCmyk, TfrxOptional, TfrxLabels, TfrxSteps, TfrxInterleave]


NUM_SHARDS = {"tfrx_interleave": 20}


def cmyk_jpegs(seed):
    """(kind, JPEG bytes): CMYK with an Adobe marker (Pillow), YCCK (TurboJPEG), CMYK without a marker."""
    import io

    import simplejpeg
    from PIL import Image

    rng = _rng(seed)
    out = []
    for h, w in ((9, 13), (16, 16), (5, 3)):
        cmyk = rng.integers(0, 256, size=(h, w, 4), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(cmyk, "CMYK").save(buf, "JPEG", quality=90)
        adobe = buf.getvalue()
        out.append(("cmyk_adobe", adobe))
        out.append(("ycck", simplejpeg.encode_jpeg(cmyk, colorspace="CMYK", quality=85, colorsubsampling="420")))
        out.append(("cmyk_no_marker", strip_app14(adobe)))
    return out


def strip_app14(data: bytes) -> bytes:
    """The JPEG without its APP14 (Adobe) segments: libjpeg then reads 4 components as plain CMYK."""
    out = bytearray(data[:2])
    i = 2
    while i < len(data):
        marker = data[i + 1]
        if marker == 0xDA:
            out += data[i:]
            break
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if marker != 0xEE:
            out += data[i : i + 2 + length]
        i += 2 + length
    return bytes(out)


def write_wav(path, frames: bytes, width: int, channels: int, rate: int = 16000) -> None:
    """A PCM WAV file (written with the standard library) of raw little-endian ``frames``."""
    import wave

    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(frames)


def flatten(x, prefix, out):
    """``{"a": {"b": arr}}`` -> ``{"<prefix>a/b": arr}``; nested datasets as ``<prefix>steps/<j>/...``."""
    if type(x).__name__ == "RaggedTensor":  # nested Sequence: rows of arrays, innermost dense
        x = [row.numpy() if not hasattr(row, "ragged_rank") else row for row in x]
    if isinstance(x, dict):
        for k, v in x.items():
            flatten(v, f"{prefix}{k}/", out)
    elif hasattr(x, "__iter__") and not isinstance(x, (np.ndarray, bytes, str)):
        for j, v in enumerate(x):
            flatten(v, f"{prefix}{j}/", out)
    else:
        out[prefix.rstrip("/")] = np.asarray(x)


def label_names(feature, path):
    """``{"objects/label": {"names": [...], "num_classes": n}}`` for every ClassLabel / LabeledImage."""
    kind = type(feature).__name__
    if kind in ("ClassLabel", "LabeledImage"):
        return {path: {"names": list(feature.names), "num_classes": feature.num_classes}}
    if kind in ("Sequence", "Dataset"):
        return label_names(feature.feature, path)
    if kind == "FeaturesDict":
        out = {}
        for k, v in feature.items():
            out.update(label_names(v, f"{path}/{k}" if path else k))
        return out
    return {}


def save_expected(tfds, builder_dir, name):
    builder = tfds.builder_from_directory(builder_dir)
    out = {}
    # TFDS's default ReadConfig: shards interleaved 16 at a time in blocks of 16 examples.
    splits = {split: split for split in builder.info.splits}
    splits.update(EXTRA_SPLITS.get(name, {}))
    for split, alias in splits.items():
        for i, ex in enumerate(tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False))):
            flatten(ex, f"{alias}/{i}/", out)
    names = label_names(builder.info.features, "")
    if names:  # what TFDS's ClassLabel / LabeledImage give as .names and .num_classes, by feature path
        with open(os.path.join(HERE, f"{name}.names.json"), "w", encoding="utf-8") as f:
            json.dump(names, f, indent=1, sort_keys=True)
    # Object arrays of bytes: stored as fixed-width bytes ('S') arrays, with the
    # kind remembered so the tests compare bytes objects.
    np.savez_compressed(
        os.path.join(HERE, f"{name}.expected.npz"),
        **{k: (v.astype("S") if v.dtype == object else v) for k, v in out.items()},
    )


def main(argv=None):
    """Prepares every golden directory, or only the builders named (``make_golden.py tfrx_audio``)."""
    import tensorflow_datasets as tfds

    only = set((sys.argv[1:] if argv is None else argv))
    data_dir = os.path.join(HERE, "data")
    if not only:
        shutil.rmtree(data_dir, ignore_errors=True)
    for cls in define_builders(tfds):
        if only and cls.name not in only:
            continue
        shutil.rmtree(os.path.join(data_dir, cls.name), ignore_errors=True)
        b = cls(data_dir=data_dir)
        b.download_and_prepare(
            download_config=tfds.download.DownloadConfig(
                compute_stats=tfds.download.ComputeStatsMode.SKIP, num_shards=NUM_SHARDS.get(cls.name)
            )
        )
        save_expected(tfds, b.data_dir, b.name)
    if not only or "dummy_mnist" in only:
        mnist = tfds.testing.DummyMnist(data_dir=data_dir)
        mnist.download_and_prepare()
        save_expected(tfds, mnist.data_dir, mnist.name)
    shutil.rmtree(os.path.join(data_dir, "downloads"), ignore_errors=True)
    print("wrote", data_dir)


if __name__ == "__main__":
    sys.exit(main())
