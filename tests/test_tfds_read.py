"""tfrx.tfds reading prepared TFDS directories, checked against values TFDS produced (golden files)."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tfds_helpers import DATASETS, GOLDEN, assert_same, flatten, golden_dir

import tfrx.tfds as tt
from tfrx.errors import TfrxError


def _expected(name: str) -> dict:
    with np.load(os.path.join(GOLDEN, f"{name}.expected.npz")) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_split_equals_tfds(name, tmp_path):
    b = tt.builder(golden_dir(name))
    ours: dict = {}
    for split in b.info.splits:
        src = b.as_data_source(split, cache_dir=str(tmp_path))
        assert len(src) == b.info.splits[split].num_examples
        for i, ex in enumerate(src):
            flatten(ex, f"{split}/{i}/", ours)
    assert_same(ours, _expected(name))


def test_pipeline_equals_random_access(tmp_path):
    b = tt.builder(golden_dir("tfrx_tensors"))
    ds = b.as_dataset("train", cache_dir=str(tmp_path))
    src = b.as_data_source("train", cache_dir=str(tmp_path))
    a = flatten(list(ds), "", {})
    c = flatten(list(src), "", {})
    assert_same(a, c)
    assert ds.cardinality() == 7
    fresh = tt.builder(golden_dir("tfrx_tensors")).as_dataset("train[:50%]+test")
    assert fresh.cardinality() == 8 and len(fresh.shuffle(4).batch(3)) == 3  # no shard read, no index built


@pytest.mark.parametrize(
    "split,expected",
    [
        ("train[:10%]", [0]),  # round(0.7) = 1
        ("train[:50%]", [0, 1, 2, 3]),  # round(3.5) = 4 (half to even)
        ("train[2:5]", [2, 3, 4]),
        ("train[-2:]", [5, 6]),
        ("train[:-5]", [0, 1]),
        ("train[0shard]", [0, 1, 2, 3, 4, 5, 6]),
        ("train[1shard]", []),  # past the only shard: empty, as in TFDS
        ("train[:8]", None),  # more than the split holds
    ],
)
def test_split_slices_pick_the_tfds_examples(split, expected, tmp_path):
    b = tt.builder(golden_dir("tfrx_tensors"))
    full = list(b.as_data_source("train", cache_dir=str(tmp_path)))
    if expected is None:
        with pytest.raises(ValueError):
            b.as_data_source(split, cache_dir=str(tmp_path))
        return
    got = list(b.as_data_source(split, cache_dir=str(tmp_path)))
    assert_same(flatten(got, "", {}), flatten([full[i] for i in expected], "", {}))


def test_plus_and_even_splits(tmp_path):
    b = tt.builder(golden_dir("tfrx_tensors"))
    c = str(tmp_path)
    train, test = list(b.as_data_source("train", cache_dir=c)), list(b.as_data_source("test", cache_dir=c))
    both = list(b.as_data_source("train[:50%]+test", cache_dir=c))
    assert_same(flatten(both, "", {}), flatten(train[:4] + test, "", {}))
    parts = [list(b.as_data_source(s, cache_dir=c)) for s in tt.even_splits("train", 3)]
    assert [len(p) for p in parts] == [3, 2, 2]
    assert_same(flatten([x for p in parts for x in p], "", {}), flatten(train, "", {}))
    dropped = [len(b.as_data_source(s, cache_dir=c)) for s in tt.even_splits("train", 3, drop_remainder=True)]
    assert dropped == [2, 2, 2]
    assert len(b.as_data_source(tt.even_splits("train", 2)[1] + "test", cache_dir=c)) == 3 + 4
    assert len(b.as_data_source("all", cache_dir=c)) == 11
    ri = tt.ReadInstruction("train", 50, None, unit="%") + "test[:1]"
    assert len(b.as_data_source(ri, cache_dir=c)) == 3 + 1  # round(3.5) = 4 -> examples 4..6, then 1


def test_skip_decoding_keeps_image_bytes(tmp_path):
    b = tt.builder(golden_dir("tfrx_images"))
    ex = b.as_data_source(
        "train", decoders={"rgb": tt.SkipDecoding(), "video": tt.SkipDecoding()}, cache_dir=str(tmp_path)
    )[0]
    assert isinstance(ex["rgb"], bytes) and ex["rgb"][:4] == b"\x89PNG"
    assert ex["video"].dtype == object and all(v[:4] == b"\x89PNG" for v in ex["video"])
    assert ex["gray"].dtype == np.uint8
    import tfrx.image

    full = b.as_data_source("train", cache_dir=str(tmp_path))[0]
    np.testing.assert_array_equal(tfrx.image.decode_png(ex["rgb"], channels=3), full["rgb"])


def test_as_supervised_and_labels(tmp_path):
    b = tt.builder(golden_dir("tfrx_images"))
    img, label = b.as_data_source("train", as_supervised=True, cache_dir=str(tmp_path))[1]
    full = b.as_data_source("train", cache_dir=str(tmp_path))[1]
    np.testing.assert_array_equal(img, full["rgb"])
    assert label == full["label"] and label.dtype == np.int64
    with pytest.raises(ValueError, match="supervised_keys"):
        tt.builder(golden_dir("dummy_mnist")).as_data_source("train", as_supervised=True)
    t = tt.builder(golden_dir("tfrx_tensors"))
    lab = t.info.features["label"]
    assert lab.names == ["cat", "dog", "bird"]
    assert lab.int2str(2) == "bird" and lab.str2int("dog") == 1
    with pytest.raises(ValueError):
        lab.int2str(3)
    with pytest.raises(ValueError):
        lab.str2int("fish")
    assert t.info.features["seq_dict"].feature["c"].names == ["x", "y"]
    assert t.info.features["label_n"].names is None and t.info.features["label_n"].num_classes == 5


def test_info_is_printable(tmp_path):
    info = tt.builder(golden_dir("tfrx_tensors")).info
    text = repr(info)
    for needle in (
        "'label': ClassLabel(shape=(), dtype=int64, num_classes=3)",
        "'train': <SplitInfo num_examples=7",
        "Translation(languages=['de', 'en'])",
        "supervised_keys=('f32', 'label')",
    ):
        assert needle in text, needle
    assert info.splits["test"].num_examples == 4
    assert info.splits["train"].filenames[0].endswith("tfrx_tensors-train.tfrecord-00000-of-00001")


def test_load_finds_the_version_and_accepts_a_shard(tmp_path):
    root = os.path.join(GOLDEN, "data", "tfrx_rlds")
    ds, info = tt.load(root, split="train", with_info=True, cache_dir=str(tmp_path))
    assert info.version == "1.0.0" and len(list(ds)) == 4
    by_name = tt.load(
        "tfrx_rlds:1.0.0", data_dir=os.path.join(GOLDEN, "data"), split="train[:2]", cache_dir=str(tmp_path)
    )
    assert by_name.cardinality() == 2
    assert tt.load("dummy_mnist", data_dir=os.path.join(GOLDEN, "data"), split="test").cardinality() == 20
    shard = info.splits["train"].filenames[0]
    assert tt.builder(shard).info.name == "tfrx_rlds"
    steps = next(iter(ds))["steps"]
    assert isinstance(steps, list) and steps[0]["is_first"] and steps[-1]["is_last"]


def test_unknown_connector_fails_clearly_or_gives_raw(tmp_path):
    d = tmp_path / "ds"
    shutil.copytree(golden_dir("tfrx_tensors"), d)
    feats = json.loads((d / "features.json").read_text())
    feats["featuresDict"]["features"]["text"]["pythonClassName"] = "my_project.features.Fancy"
    (d / "features.json").write_text(json.dumps(feats))
    b = tt.builder(str(d))
    with pytest.raises(tt.features.SpecError, match=r"'text'.*my_project\.features\.Fancy"):
        b.as_data_source("train")[0]
    raw = b.as_data_source("train", unknown="raw")[0]["text"]
    assert raw == {"": [b""]}


def test_missing_info_and_wrong_lengths(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset_info.json"):
        tt.builder(str(tmp_path))
    d = tmp_path / "ds"
    shutil.copytree(golden_dir("tfrx_tensors"), d)
    info = json.loads((d / "dataset_info.json").read_text())
    info["splits"][0]["shardLengths"] = ["9"]
    (d / "dataset_info.json").write_text(json.dumps(info))
    src = tt.builder(str(d)).as_data_source(info["splits"][0]["name"])
    assert len(src) == 9  # from shardLengths, without reading the shard
    with pytest.raises(tt.features.SpecError, match="shardLengths"):
        src[0]


def test_legacy_features_json_layout(tmp_path):
    """The older ``{"type": ..., "content": ...}`` layout (TFDS < 4) reads to the same values."""
    d = tmp_path / "ds"
    shutil.copytree(golden_dir("dummy_mnist"), d)
    legacy = {
        "type": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
        "content": {
            "image": {
                "type": "tensorflow_datasets.core.features.image_feature.Image",
                "content": {"shape": [28, 28, 1], "dtype": "uint8", "encoding_format": "png"},
            },
            "label": {
                "type": "tensorflow_datasets.core.features.class_label_feature.ClassLabel",
                "content": {"num_classes": 10},
            },
        },
    }
    (d / "features.json").write_text(json.dumps(legacy))
    ours = flatten(list(tt.builder(str(d)).as_data_source("test")), "", {})
    ref = flatten(list(tt.builder(golden_dir("dummy_mnist")).as_data_source("test", cache_dir=str(tmp_path))), "", {})
    assert_same(ours, ref)


def test_fsspec_url_reads_and_writes(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    root = f"/tfds-{tmp_path.name}"
    d = golden_dir("tfrx_tensors")
    for f in os.listdir(d):
        with open(os.path.join(d, f), "rb") as fh:
            fs.pipe(f"{root}/tfrx_tensors/1.0.0/{f}", fh.read())
    b = tt.builder(f"memory://{root}/tfrx_tensors/1.0.0")
    assert b.info.splits["train"].num_examples == 7
    split = "train[:50%]+test"
    assert_same(
        flatten(list(b.as_data_source(split)), "", {}),
        flatten(list(tt.builder(d).as_data_source(split, cache_dir=str(tmp_path))), "", {}),
    )
    out = tt.write(
        f"memory://{root}/w/1.0.0",
        features={"x": tt.Tensor((2,), np.int64), "t": tt.Text()},
        splits={"train": [{"x": [i, -i], "t": f"t{i}"} for i in range(3)]},
    )
    got = list(tt.builder(out).as_data_source("train"))
    assert [g["t"] for g in got] == [b"t0", b"t1", b"t2"] and got[2]["x"].tolist() == [2, -2]


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_damaged_shard_raises_a_tfrx_error(tmp_path_factory, data):
    """A flipped byte anywhere in a shard is reported (CRC, framing or decoding), never returned as data."""
    d = tmp_path_factory.mktemp("damaged") / "ds"
    shutil.copytree(golden_dir("tfrx_tensors"), d)
    shard = d / "tfrx_tensors-test.tfrecord-00000-of-00001"
    blob = bytearray(shard.read_bytes())
    pos = data.draw(st.integers(0, len(blob) - 1))
    blob[pos] ^= data.draw(st.integers(1, 255))
    shard.write_bytes(bytes(blob))
    with pytest.raises(TfrxError):
        list(tt.builder(str(d)).as_data_source("test"))


def test_old_dataset_info_with_num_shards_only(tmp_path):
    """TFDS 1.x dataset_info.json: numShards and no shardLengths; lengths come from the shards themselves."""
    d = tmp_path / "ds"
    shutil.copytree(golden_dir("tfrx_tensors"), d)
    info = json.loads((d / "dataset_info.json").read_text())
    for s in info["splits"]:
        s["numShards"] = str(len(s.pop("shardLengths")))
        s.pop("filepathTemplate")
    (d / "dataset_info.json").write_text(json.dumps(info))
    b = tt.builder(str(d))
    assert b.info.splits["train"].num_examples == 7 and b.info.splits["test"].shard_lengths == [4]
    ref = tt.builder(golden_dir("tfrx_tensors")).as_data_source("train[2:6]", cache_dir=str(tmp_path))
    assert_same(flatten(list(b.as_data_source("train[2:6]")), "", {}), flatten(list(ref), "", {}))


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_parse_spec_reads_the_stored_keys(name):
    """tfrx's parser with the spec built from features.json reads every stored key of every record."""
    import tfrx
    from tfrx.tfds.features import parse_spec

    b = tt.builder(golden_dir(name))
    spec = parse_spec(b.info.features)
    for split, si in b.info.splits.items():
        for rec in tfrx.read_records(si.filenames[0]):
            raw = tfrx.decode_example(rec)
            assert set(raw) <= set(spec), (split, sorted(set(raw) - set(spec)))
            parsed = tfrx.parse_single_example(rec, spec)
            for k, v in raw.items():
                got = np.asarray(parsed[k])
                want = np.asarray(v, dtype=object) if isinstance(v, list) else np.asarray(v)
                np.testing.assert_array_equal(got.reshape(-1), want.reshape(-1), err_msg=k)


def test_reading_needs_no_optional_module(tmp_path):
    """Loading a tabular TFDS directory imports neither TensorFlow, PyTorch, Pillow nor fsspec."""
    import subprocess
    import sys

    code = (
        "import sys, tfrx.tfds as tt; "
        f"src = tt.builder({golden_dir('tfrx_tensors')!r}).as_data_source('train', cache_dir={str(tmp_path)!r}); "
        "list(src); "
        "print(sorted(m for m in ('tensorflow', 'torch', 'PIL', 'fsspec', 'tensorflow_datasets') if m in sys.modules))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_bad_image_names_its_record(tmp_path):
    """An image that does not decode is reported with the file, record and byte offset of its example."""
    pytest.importorskip("PIL")
    good = np.zeros((2, 2, 1), np.uint8)
    d = tt.write(
        tmp_path / "bad" / "1.0.0",
        features={"img": tt.Image((2, 2, 1)), "frames": tt.Video((None, 2, 2, 1))},
        splits={
            "train": [
                {"img": good, "frames": [good]},
                {"img": b"\x89PNG\r\n\x1a\nbroken", "frames": [good]},
                {"img": good, "frames": [good, b"not an image"]},
            ]
        },
    )
    src = tt.builder(d).as_data_source("train")
    assert src[0]["img"].shape == (2, 2, 1)
    with pytest.raises(
        TfrxError, match=r"bad-train\.tfrecord-00000-of-00001', record 1 at byte \d+ .*image feature 'img'"
    ):
        src[[0, 1]]
    with pytest.raises(TfrxError, match=r"record 2 at byte \d+ .*image feature 'frames'"):
        src[2]


def test_decoding_parses_blocks_natively(tmp_path, monkeypatch):
    """One ExampleParser call per block read, from one spec; no per-record schema-less decoding."""
    import tfrx.codec
    from tfrx.parsing import ExampleParser

    calls = []
    parse = ExampleParser.parse

    def counting(self, records, **kw):
        calls.append(len(records))
        return parse(self, records, **kw)

    def forbidden(*a, **k):
        raise AssertionError("decode_example called")

    monkeypatch.setattr(ExampleParser, "parse", counting)
    monkeypatch.setattr(tfrx.codec, "decode_example", forbidden)
    b = tt.builder(golden_dir("tfrx_tensors"))
    ds = b.as_dataset("train+test", block_size=4, cache_dir=str(tmp_path))
    assert len(list(ds)) == 11
    assert calls == [4, 3, 1, 3]  # blocks of 4 positions; the one spanning train and test is read per split
    calls.clear()
    assert len(b.as_data_source("train", cache_dir=str(tmp_path))[[6, 0, 3]]) == 3 and calls == [3]
