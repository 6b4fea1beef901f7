"""The scripts in examples/ run at small sizes and do what they print."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tfrx

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SRC = Path(tfrx.__file__).resolve().parent.parent  # wherever the tested tfrx is installed


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"tfrx_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_raw_images_round_trip(tmp_path, capsys):
    ex = load("raw_images")
    images, labels = ex.make_images(40)
    out = ex.run(40, str(tmp_path))
    assert out["equal"]
    np.testing.assert_array_equal(out["images"], images)
    np.testing.assert_array_equal(out["labels"], labels)
    assert "pixels and labels equal" in capsys.readouterr().out
    assert ex.main(["--small", "--workdir", str(tmp_path / "main")]) == 0


def test_raw_images_readable_by_tensorflow(tmp_path, tf):
    ex = load("raw_images")
    out = ex.run(8, str(tmp_path))
    spec = {
        k: tf.io.FixedLenFeature([], tf.string if k == "image_raw" else tf.int64) for k in ex.IMAGE_FEATURE_DESCRIPTION
    }
    for i, record in enumerate(tf.data.TFRecordDataset(out["path"])):
        x = tf.io.parse_single_example(record, spec)
        image = tf.reshape(tf.io.decode_raw(x["image_raw"], tf.uint8), (x["height"], x["width"], x["depth"]))
        np.testing.assert_array_equal(image.numpy(), out["images"][i])
        assert int(x["label"]) == out["labels"][i]


def test_jpeg_images(tmp_path):
    ex = load("jpeg_images")
    out = ex.run(24, 40, str(tmp_path), batch=8)
    assert out["labels_equal"]
    assert out["shape"] == (24, 40, 40, 3)
    assert out["mean_abs_error"] < 8  # JPEG quality 90 on smooth pictures
    assert out["forms_max_diff"] < 1e-5  # per-image map and decode_batch agree
    assert ex.main(["--small", "--size", "32"]) == 0


def test_train_classifier_torch(tmp_path):
    pytest.importorskip("torch")
    ex = load("train_classifier")
    out = ex.run("torch", 256, 3, 64, str(tmp_path))
    assert out["losses"][-1] < out["losses"][0] * 0.5
    assert out["accuracy"] > 0.8


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_train_classifier_keras(backend, tmp_path):
    # Only looked up here (importing keras would load its default backend, TensorFlow); the script runs in a subprocess.
    for module in ("keras", backend):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    env = dict(
        os.environ, KERAS_BACKEND=backend, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "train_classifier.py"),
            "--framework",
            "keras",
            "--small",
            "--workdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    losses = [float(line.split("loss")[1]) for line in proc.stdout.splitlines() if line.startswith("epoch")]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert f"keras ({backend} backend)" in proc.stdout
    accuracy = float(proc.stdout.rsplit("test accuracy", 1)[1])
    assert accuracy > 0.8


def test_imagenet_shards(tmp_path):
    ex = load("imagenet_shards")
    out = ex.run(90, 4, 16, str(tmp_path))
    assert out["count"] == 90
    assert out["exactly_once"] and out["labels_ok"] and out["shapes_ok"]
    assert out["batches"] == 6


def test_bert_pretraining(tmp_path, capsys):
    pytest.importorskip("torch")
    ex = load("bert_pretraining")
    out = ex.run(str(tmp_path), seq_len=48, max_predictions=8, dupe_factor=2, batch_size=16)
    assert out["count"] == out["instances"] > 0 and out["batches"] == -(-out["count"] // 16)
    assert out["shapes"]["input_ids"] == ((16, 48), "int64") and out["shapes"]["masked_lm_weights"] == (
        (16, 8),
        "float32",
    )
    assert np.isfinite(out["loss_before"]) and out["loss_after"] < out["loss_before"]
    printed = capsys.readouterr().out
    assert "[CLS]" in printed and "[SEP]" in printed and "[MASK]" in printed


def test_bert_pretraining_vocab_is_what_build_vocab_makes(tmp_path):
    ex = load("bert_pretraining")
    ex.build_vocab(ex.CORPUS, tmp_path / "vocab.txt")
    assert (tmp_path / "vocab.txt").read_text(encoding="utf-8") == ex.VOCAB.read_text(encoding="utf-8")


def test_sequence_examples(tmp_path):
    ex = load("sequence_examples")
    out = ex.run(70, 32, str(tmp_path))
    assert out["single"] and out["batched"]
    assert out["inferred"] == (["id", "label", "length"], ["frames", "tokens"])


def test_sequence_examples_match_tensorflow(tmp_path, tf):
    ex = load("sequence_examples")
    sequences = ex.make_sequences(10)
    path = str(tmp_path / "s.tfrecord")
    ex.write(path, sequences)
    for record, s in zip(tf.data.TFRecordDataset(path), sequences):
        context, lists = tf.io.parse_single_sequence_example(
            record,
            {"id": tf.io.FixedLenFeature([], tf.string), "length": tf.io.FixedLenFeature([], tf.int64)},
            {"frames": tf.io.FixedLenSequenceFeature([ex.FRAME], tf.float32), "tokens": tf.io.RaggedFeature(tf.int64)},
        )
        assert context["id"].numpy() == s["id"] and int(context["length"]) == len(s["frames"])
        np.testing.assert_array_equal(lists["frames"].numpy(), s["frames"])
        assert lists["tokens"].to_list() == s["tokens"]


@pytest.mark.parametrize("name", ["raw_images", "sequence_examples"])
def test_scripts_run_as_programs(name):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), "--small"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("wrote ")


def _readme_scripts() -> list[str]:
    text = (EXAMPLES / "README.md").read_text()
    return sorted({line.split("`")[1][:-3] for line in text.splitlines() if line.startswith("| `") and ".py`" in line})


def test_the_readme_lists_every_example():
    assert _readme_scripts() == sorted(p.stem for p in EXAMPLES.glob("*.py"))


@pytest.mark.parametrize("name", _readme_scripts())
def test_every_example_runs_with_the_flags_its_readme_gives(name, tmp_path, capsys):
    # examples/README.md: "`--small` is a quick run", and each writes to a temporary directory or `--workdir`.
    assert "`--small` is a quick run" in (EXAMPLES / "README.md").read_text()
    if name in ("bert_pretraining", "train_classifier"):
        pytest.importorskip("torch")
    assert load(name).main(["--small", "--workdir", str(tmp_path / "work")]) == 0
