"""tfrx demo: the workflow runs end to end, in-process and as ``python -m tfrx.demo``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tfrx
import tfrx.demo as demo

SRC = Path(tfrx.__file__).resolve().parent.parent  # wherever the tested tfrx is installed
SMALL = ["--records", "400", "--shards", "4", "--epochs", "3", "--batch-size", "32", "--image-size", "8"]


def test_main_in_process_numpy(tmp_path, capsys):
    assert demo.main([*SMALL, "--framework", "numpy", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for step in ("1. generate", "2. write", "3. inspect", "4. verify", "5. read", "6. train"):
        assert step in out
    assert "records/s" in out and "MB/s" in out
    assert "softmax regression in NumPy" in out
    assert 'key: "image_raw"' in out  # the first record in text format
    # --workdir keeps the shards; together they hold every record.
    shards = sorted(tmp_path.glob("images.tfrecord-*-of-00004"))
    assert len(shards) == 4
    assert sum(1 for _ in tfrx.read_records([str(p) for p in shards])) == 400


def test_run_reports_what_it_did(tmp_path):
    out = demo.run(
        records=300,
        shards=3,
        epochs=4,
        batch_size=32,
        image_size=12,
        framework="numpy",
        workdir=str(tmp_path),
        log=lambda *a: None,
    )
    assert out["verified"] == 300
    assert out["read"] == 200  # the last shard is held out
    assert out["losses"][-1] < out["losses"][0]
    assert out["accuracy"] > 0.3  # ten classes: chance is 0.1
    assert set(out["schema"]) == {"image_raw", "label", "height", "width", "depth"}


def test_namespace_from_the_cli(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    args = parser.parse_args([*SMALL, "--framework", "numpy"])
    assert demo.main(args) == 0
    assert "temporary files were removed" in capsys.readouterr().out


def test_bad_sizes_exit_2(capsys):
    assert demo.main(["--records", "3", "--shards", "4"]) == 2
    assert "at least" in capsys.readouterr().err


def test_shards_are_tensorflow_readable(tmp_path, tf):
    out = demo.run(
        records=120,
        shards=2,
        epochs=1,
        batch_size=32,
        image_size=8,
        framework="numpy",
        workdir=str(tmp_path),
        log=lambda *a: None,
    )
    images, labels = demo.make_images(120, 8, 0)
    spec = {"image_raw": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
    got = [tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(out["paths"])]
    assert len(got) == 120
    np.testing.assert_array_equal(
        np.stack([tf.io.decode_raw(g["image_raw"], tf.uint8).numpy() for g in got]), images.reshape(120, -1)
    )
    np.testing.assert_array_equal([int(g["label"]) for g in got], labels)


def test_softmax_regression_learns():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 3, (demo.CLASSES, 5)).astype(np.float32)
    y = rng.integers(0, demo.CLASSES, 2000)
    x = centres[y] + rng.normal(0, 1, (2000, 5)).astype(np.float32)
    batches = [(x[i : i + 100], y[i : i + 100]) for i in range(0, 1600, 100)]
    losses, accuracy = demo.softmax_regression(
        lambda epoch: batches, lambda: [(x[1600:], y[1600:])], 5, 5, log=lambda *a: None
    )
    assert losses[-1] < losses[0]
    assert accuracy > 0.8


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_frameworks(framework, tmp_path):
    pytest.importorskip(framework)
    out = demo.run(
        records=240,
        shards=3,
        epochs=3,
        batch_size=32,
        image_size=8,
        framework=framework,
        workdir=str(tmp_path),
        log=lambda *a: None,
    )
    assert out["framework"] == framework
    assert out["losses"][-1] < out["losses"][0]


def test_python_dash_m(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "tfrx.demo", *SMALL, "--framework", "numpy"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6. train" in proc.stdout and "held-out accuracy" in proc.stdout


def test_shards_hold_contiguous_runs_in_order(tmp_path):
    lines = []
    out = demo.run(
        records=200,
        shards=2,
        epochs=1,
        batch_size=32,
        image_size=8,
        framework="numpy",
        seed=3,
        workdir=str(tmp_path),
        log=lines.append,
    )
    assert [os.path.basename(p) for p in out["paths"]] == [
        "images.tfrecord-00000-of-00002",
        "images.tfrecord-00001-of-00002",
    ]
    _, labels = demo.make_images(200, 8, seed=3)
    got = [int(tfrx.decode_example(r)["label"][0]) for r in tfrx.read_records(out["paths"])]
    assert got == labels.tolist()
    assert any("with tfrx.ShardedWriter" in line for line in lines)


def test_missing_framework_exits_2(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jax" else real(name, *a))
    assert demo.main([*SMALL, "--framework", "jax"]) == 2
    assert "jax is not installed" in capsys.readouterr().err
