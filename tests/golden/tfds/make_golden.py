"""Writes the prepared TFDS directories under tests/golden/tfds/ with TFDS itself.

Run with TensorFlow and tensorflow-datasets installed (TFDS's ``tfds.testing``,
used for ``DummyMnist``, also imports ``importlib_resources``; the Audio
connector reads WAV files with ``pydub``):

    python tests/golden/tfds/make_golden.py [NAME ...]

(names: tfrx_tensors, tfrx_images, tfrx_rlds, tfrx_audio, dummy_mnist; none: all).

It prepares one small dataset per connector family with TFDS's own
``GeneratorBasedBuilder`` (plus TFDS's ``DummyMnist`` test builder), then saves
what ``tfds.as_numpy(builder.as_dataset(split))`` returns for every split as
``<name>.expected.npz`` (elements flattened to ``"<index>/<path>"`` keys) so
the tests can check tfrx's decoding where TFDS is not installed.
"""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


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

    return [TfrxTensors, TfrxImages, TfrxRlds, TfrxAudio]


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


def save_expected(tfds, builder_dir, name):
    builder = tfds.builder_from_directory(builder_dir)
    out = {}
    for split in builder.info.splits:
        for i, ex in enumerate(tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False))):
            flatten(ex, f"{split}/{i}/", out)
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
            download_config=tfds.download.DownloadConfig(compute_stats=tfds.download.ComputeStatsMode.SKIP)
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
