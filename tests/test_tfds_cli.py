"""The tfrx command on TFDS directories: TFDS feature names, label names and split sizes."""

from __future__ import annotations

import json
import os

import pytest
from tfds_helpers import golden_dir

from tfrx.cli import main


def _run(capsys, *argv):
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_schema_shows_connectors_labels_and_splits(capsys):
    status, out, _ = _run(capsys, "schema", os.path.dirname(golden_dir("tfrx_tensors")))
    assert status == 0
    assert "split train: 7 examples in 1 shard(s)" in out and "split test: 4 examples" in out
    assert "'label': ClassLabel(shape=(), dtype=int64, num_classes=3)" in out
    assert "labels of 'label': 0=cat, 1=dog, 2=bird" in out and "labels of 'seq_dict/c': 0=x, 1=y" in out
    status, out, _ = _run(capsys, "schema", "--json", golden_dir("tfrx_tensors"))
    doc = json.loads(out)
    assert doc["splits"]["train"]["num_examples"] == 7 and doc["labels"]["label"] == ["cat", "dog", "bird"]


def test_inspect_a_shard_names_its_split_and_labels(capsys):
    shard = os.path.join(golden_dir("tfrx_images"), "tfrx_images-validation.tfrecord-00000-of-00001")
    status, out, _ = _run(capsys, "inspect", shard, "-n", "2")
    assert status == 0
    assert "validation example 1:" in out and "validation example 2:" not in out
    assert "  label: 0 (a)" in out or "  label: 1 (b)" in out
    assert "video: uint8[" in out
    status, out, _ = _run(capsys, "inspect", "--json", shard, "-n", "1")
    assert sorted(json.loads(out.splitlines()[0])) == sorted(
        ["audio", "audio_2ch", "audio_f", "cmap", "f32", "gray", "jpeg", "label", "rgb", "rgba", "u16", "video"]
    )
    assert not [f for f in os.listdir(golden_dir("tfrx_images")) if f.endswith("idx")]


def test_stats_counts_label_names(capsys):
    status, out, _ = _run(capsys, "stats", golden_dir("tfrx_images"))
    assert status == 0
    assert "train / label: a: 3, b: 2" in out and "validation / label: a: 2, b: 1" in out


def test_preview_uses_label_names(capsys, tmp_path):
    pytest.importorskip("PIL")
    png = tmp_path / "grid.png"
    status, _, err = _run(capsys, "preview", golden_dir("tfrx_images"), "-o", str(png), "-n", "4")
    assert status == 0 and png.stat().st_size > 0 and "labels from 'label'" in err
    shard = os.path.join(golden_dir("tfrx_images"), "tfrx_images-validation.tfrecord-00000-of-00001")
    status, _, err = _run(capsys, "preview", shard, "-o", str(tmp_path / "shard.png"))
    assert status == 0 and "3 images" in err and "labels from 'label'" in err


def test_raw_inspect_and_plain_files_are_unchanged(capsys, tmp_path):
    shard = os.path.join(golden_dir("dummy_mnist"), "dummy_mnist-test.tfrecord-00000-of-00001")
    status, out, _ = _run(capsys, "inspect", "--raw", shard, "-n", "1")
    assert status == 0 and out.startswith("record 0:")
    status, out, _ = _run(capsys, "count", shard)
    assert status == 0 and "20" in out


def _to_memory(name: str, tag: str) -> str:
    """The golden dataset ``name`` copied into fsspec's memory filesystem; returns the root above its version."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    d = golden_dir(name)
    version = os.path.basename(d)
    for f in os.listdir(d):
        with open(os.path.join(d, f), "rb") as fh:
            fs.pipe(f"/cli-{tag}/{name}/{version}/{f}", fh.read())
    return f"memory:///cli-{tag}/{name}"


def test_urls_of_a_directory_and_of_a_shard(capsys, tmp_path):
    root = _to_memory("tfrx_images", tmp_path.name)
    status, out, _ = _run(capsys, "schema", root)
    assert status == 0, out
    assert "TFDS dataset tfrx_images/0.2.0" in out and "split train: 5 examples in 1 shard(s)" in out
    assert "labels of 'label': 0=a, 1=b" in out
    shard = f"{root}/0.2.0/tfrx_images-validation.tfrecord-00000-of-00001"
    status, out, _ = _run(capsys, "inspect", shard, "-n", "1")
    assert status == 0 and "validation example 0:" in out and "validation example 1:" not in out
    assert "  label: 0 (a)" in out or "  label: 1 (b)" in out
    status, out, _ = _run(capsys, "stats", f"{root}/0.2.0")
    assert status == 0 and "train / label: a: 3, b: 2" in out
    status, out, _ = _run(capsys, "inspect", "--raw", shard, "-n", "1")
    assert status == 0 and out.startswith("record 0:")


def test_file_urls(capsys):
    url = "file://" + golden_dir("tfrx_tensors")
    status, out, _ = _run(capsys, "schema", url)
    assert status == 0 and "split test: 4 examples" in out and "labels of 'seq_dict/c': 0=x, 1=y" in out
    status, out, _ = _run(capsys, "stats", "file://" + os.path.dirname(golden_dir("tfrx_tensors")))
    assert status == 0 and "train / label: cat: 3, dog: 2, bird: 2" in out


def test_preview_of_a_url_uses_label_names(capsys, tmp_path):
    pytest.importorskip("PIL")
    root = _to_memory("dummy_mnist", tmp_path.name)
    png = tmp_path / "grid.png"
    status, _, err = _run(capsys, "preview", root, "-o", str(png), "-n", "4")
    assert status == 0 and png.stat().st_size > 0 and "labels from 'label'" in err


def test_label_names_of_counts_and_labeled_images(capsys, tmp_path):
    """ClassLabel(num_classes=n) shows as unnamed; a LabeledImage (a mask, not a label value) is not counted by stats."""
    import shutil

    d = tmp_path / "tfrx_labels"
    shutil.copytree(os.path.dirname(golden_dir("tfrx_labels")), d)
    status, out, _ = _run(capsys, "schema", str(d))
    assert status == 0
    assert "'mask': LabeledImage(shape=(4, 5, 1), dtype=uint8, num_classes=3)" in out
    assert "labels of 'by_count': 4 classes, no names" in out and "labels of 'by_names': 0=zero, 1=one, 2=two" in out
    assert "labels of 'mask'" not in out
    status, out, err = _run(capsys, "stats", str(d))
    assert status == 0, err
    assert "train / by_names: zero: 2, one: 1, two: 1" in out and "train / by_count: 0: 1, 1: 1, 2: 1, 3: 1" in out
    assert "train / mask" not in out
