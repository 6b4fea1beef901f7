"""tfrx.tfds reading prepared TFDS directories, checked against values TFDS produced (golden files)."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tfds_helpers import DATASETS, EXTRA_SPLITS, GOLDEN, assert_same, flatten, golden_dir

import tfrx.tfds as tt
from tfrx.errors import TfrxError


def _expected(name: str) -> dict:
    with np.load(os.path.join(GOLDEN, f"{name}.expected.npz")) as z:
        return {k: z[k] for k in z.files}


def _splits(b, name: str) -> dict:
    return {**{split: split for split in b.info.splits}, **EXTRA_SPLITS.get(name, {})}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_split_equals_tfds(name, tmp_path):
    """as_dataset, element by element, in TFDS's default order (its interleave of the shards)."""
    b = tt.builder(golden_dir(name))
    ours: dict = {}
    for split, alias in _splits(b, name).items():
        for i, ex in enumerate(b.as_dataset(split, cache_dir=str(tmp_path))):
            flatten(ex, f"{alias}/{i}/", ours)
    assert_same(ours, _expected(name))


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_data_source_in_tfds_order_equals_tfds(name, tmp_path):
    """as_data_source(interleave_cycle_length=None): random access numbered in TFDS's reading order."""
    b = tt.builder(golden_dir(name))
    ours: dict = {}
    for split, alias in _splits(b, name).items():
        src = b.as_data_source(split, cache_dir=str(tmp_path), interleave_cycle_length=None)
        if split in b.info.splits:
            assert len(src) == b.info.splits[split].num_examples
        for i, ex in enumerate(src[::-1][::-1]):  # one batched read of every index, reversed twice
            flatten(ex, f"{alias}/{i}/", ours)
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
    # ClassLabel(num_classes=5) is named "0".."4", as in TFDS
    assert t.info.features["label_n"].names == ["0", "1", "2", "3", "4"] and t.info.features["label_n"].num_classes == 5


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


# ---------------------------------------------------------------- label names (TFDS's own directory)
def _feature_at(features, path: str):
    f = features
    for part in path.split("/"):
        while isinstance(f, tt.Sequence):
            f = f.feature
        f = f[part]
    return f


def test_label_names_equal_tfds():
    """ClassLabel(num_classes=n) is named "0".."n-1" and LabeledImage keeps its names, as TFDS gives them."""
    with open(os.path.join(GOLDEN, "tfrx_labels.names.json"), encoding="utf-8") as f:
        want = json.load(f)
    feats = tt.builder(golden_dir("tfrx_labels")).info.features
    for path, w in want.items():
        got = _feature_at(feats, path)
        assert (got.names, got.num_classes) == (w["names"], w["num_classes"]), path
    mask = feats["mask"]
    assert isinstance(mask, tt.LabeledImage) and mask.int2str(2) == "truck" and mask.str2int("car") == 1
    assert not feats["by_count"].names_given and feats["by_names"].names_given


def test_features_json_round_trips_every_golden_directory():
    """Every connector TFDS wrote (optional tensors, LabeledImage, nested Dataset dicts...) is written back as TFDS wrote it."""
    for name in sorted(DATASETS):
        d = golden_dir(name)
        with open(os.path.join(d, "features.json"), encoding="utf-8") as f:
            assert tt.features.to_json(tt.builder(d).info.features) == json.load(f), name


# ---------------------------------------------------------------- optional features
def test_optional_features_read_as_tfds_defaults(tmp_path):
    """A None written by TFDS is absent from the Example; TFDS parses it with the feature's default."""
    b = tt.builder(golden_dir("tfrx_optional"))
    spec = tt.parse_spec(b.info.features)
    assert spec["i64"].default_value == np.iinfo(np.int64).min and spec["id"].default_value is None
    got = list(b.as_dataset("train", cache_dir=str(tmp_path)))
    missing = [ex for ex in got if ex["i64"] == np.iinfo(np.int64).min]
    assert missing and all(ex["i64"].dtype == np.int64 for ex in got)
    for ex in got:
        if ex["u8"] == 0 and ex["s"] == b"":  # written as None together (same pattern in the generator)
            assert ex["u8"].dtype == np.uint8
    vec_missing = [ex["vec"] for ex in got if ex["vec"][0] == np.finfo(np.float32).min]
    assert vec_missing and all(v.shape == (3,) and (v == np.finfo(np.float32).min).all() for v in vec_missing)


# ---------------------------------------------------------------- read order
def _stored(b, split: str, keys) -> list:
    """Each record's stored values of ``keys``, reading the split's shards one after another."""
    import tfrx
    from tfrx.io import read_records

    spec = {k: tt.parse_spec(b.info.features)[k] for k in keys}
    return [tfrx.parse_single_example(r, spec) for r in read_records(b.info.splits[split].filenames)]


def _ids_in_file_order(b, split: str) -> list:
    return [int(ex["id"]) for ex in _stored(b, split, ["id"])]


def test_shards_interleaved_by_default_file_order_by_option(tmp_path):
    b = tt.builder(golden_dir("tfrx_interleave"))
    assert b.info.splits["train"].num_shards == 20
    file_order = _ids_in_file_order(b, "train")
    interleaved = [int(ex["id"]) for ex in b.as_dataset("train", cache_dir=str(tmp_path))]
    expected = _expected("tfrx_interleave")
    assert interleaved == [int(expected[f"train/{i}/id"]) for i in range(437)]
    assert interleaved != file_order and sorted(interleaved) == sorted(file_order)
    by_file = [int(ex["id"]) for ex in b.as_dataset("train", cache_dir=str(tmp_path), interleave_cycle_length=1)]
    assert by_file == file_order
    assert [int(ex["id"]) for ex in b.as_data_source("train", cache_dir=str(tmp_path))] == file_order
    loaded = tt.load(golden_dir("tfrx_interleave"), split="train", cache_dir=str(tmp_path), interleave_cycle_length=1)
    assert [int(ex["id"]) for ex in loaded] == file_order
    # other ReadConfig values give tf.data's interleave of the same files
    two = [
        int(ex["id"])
        for ex in b.as_dataset("train", cache_dir=str(tmp_path), interleave_cycle_length=2, interleave_block_length=3)
    ]
    assert sorted(two) == sorted(file_order) and two not in (file_order, interleaved)


def test_disable_shuffling_reads_shard_after_shard(tmp_path):
    """TFDS reads datasets prepared with disable_shuffling in file order (its default cycle length is then 1)."""
    d = tmp_path / "tfrx_interleave" / "1.0.0"
    shutil.copytree(golden_dir("tfrx_interleave"), d)
    info = json.loads((d / "dataset_info.json").read_text())
    info["disableShuffling"] = True
    (d / "dataset_info.json").write_text(json.dumps(info))
    b = tt.builder(d)
    assert b.info.disable_shuffling
    assert [int(ex["id"]) for ex in b.as_dataset("train", cache_dir=str(tmp_path))] == _ids_in_file_order(b, "train")


def test_interleave_order_pinned():
    from tfrx.tfds._splits import interleave_order

    # files of 3, 20, 0 and 5 examples, 2 open at a time, blocks of 4 (worked through tf.data's rule by hand)
    assert interleave_order([3, 20, 0, 5], 2, 4).tolist() == (
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 23, 24, 25, 26, 11, 12, 13, 14, 27, 15, 16, 17, 18, 19, 20, 21, 22]
    )
    assert interleave_order([4, 4], 1, 16).tolist() == list(range(8))
    assert interleave_order([], 16, 16).tolist() == []
    with pytest.raises(ValueError, match="positive"):
        interleave_order([1, 2], 0, 16)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(0, 40), max_size=25),
    st.integers(1, 20),
    st.integers(1, 20),
)
def test_interleave_order_is_a_permutation_keeping_each_file_in_order(takes, cycle, block):
    from tfrx.tfds._splits import interleave_order

    order = interleave_order(takes, cycle, block).tolist()
    assert sorted(order) == list(range(sum(takes)))
    starts = np.cumsum([0] + takes)
    for f in range(len(takes)):
        mine = [j for j in order if starts[f] <= j < starts[f + 1]]
        assert mine == list(range(starts[f], starts[f + 1]))


# ---------------------------------------------------------------- CMYK JPEGs
def _cmyk_jpegs() -> list:
    b = tt.builder(golden_dir("tfrx_cmyk"))
    return [(ex["kind"], ex["image"]) for ex in _stored(b, "train", ["kind", "image"])]


def test_cmyk_jpegs_decode_as_tfds_without_libjpeg(monkeypatch, tmp_path):
    """The path without the native libjpeg-turbo (simplejpeg's CMYK samples, TensorFlow's RGB rule) is exact too."""
    pytest.importorskip("simplejpeg")
    import tfrx.image._jpeg as jpeg

    monkeypatch.setattr(jpeg, "partial_jpeg_backend", lambda: None)
    b = tt.builder(golden_dir("tfrx_cmyk"))
    ours = flatten(list(b.as_dataset("train", cache_dir=str(tmp_path))), "train/", {})
    assert_same(ours, _expected("tfrx_cmyk"))


def test_cmyk_adobe_marker_and_gray_request():
    from tfrx.errors import DecodeError
    from tfrx.image import decode_jpeg
    from tfrx.image._jpeg import saw_adobe_marker

    kinds = {bytes(k): saw_adobe_marker(bytes(data)) for k, data in _cmyk_jpegs()}
    assert kinds == {b"cmyk_adobe": True, b"ycck": True, b"cmyk_no_marker": False}
    for _, data in _cmyk_jpegs()[:3]:
        with pytest.raises(DecodeError, match="1 channel"):  # TensorFlow: "Unsupported color conversion request"
            decode_jpeg(bytes(data), channels=1)
