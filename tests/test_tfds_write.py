"""tfrx.tfds.write: directories that read back (with tfrx here; with TFDS in test_tfds_oracle.py)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tfds_helpers import DATASETS, GOLDEN, assert_same, expected_splits, flatten, golden_dir, rewrite
from tfds_write_cases import examples, expected, features

import tfrx.tfds as tt


def _eq(a, b, path=""):
    if isinstance(b, dict):
        assert sorted(a) == sorted(b), path
        for k in b:
            _eq(a[k], b[k], f"{path}/{k}")
    elif isinstance(b, (list, tuple)) and not isinstance(a, np.ndarray):
        assert len(a) == len(b), path
        for j, (x, y) in enumerate(zip(a, b)):
            _eq(x, y, f"{path}/{j}")
    else:
        if isinstance(b, str):
            b = b.encode()
        elif isinstance(b, list):
            b = np.asarray(
                [x.encode() if isinstance(x, str) else x for x in b],
                dtype=object if b and isinstance(b[0], str) else None,
            )
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=path)


def test_write_then_read_every_connector(tmp_path):
    d = tt.write(
        tmp_path / "my_ds" / "1.0.0",
        features=features(),
        splits={"train": examples(0, 5), "test": examples(1, 3)},
        shard_size=2,
        supervised_keys=("rgb", "label"),
        description="written by tfrx",
    )
    b = tt.builder(tmp_path / "my_ds")
    assert b.info.name == "my_ds" and b.info.splits["train"].shard_lengths == [2, 2, 1]
    assert sorted(os.listdir(d))[:3] == ["dataset_info.json", "features.json", "label.labels.txt"]
    assert (tmp_path / "my_ds" / "1.0.0" / "seq_dict-c.labels.txt").read_text().split() == ["x", "y"]
    for split, seed, n in (("train", 0, 5), ("test", 1, 3)):
        got = list(b.as_data_source(split))
        for ex, want in zip(got, examples(seed, n)):
            assert ex["f64"].dtype == np.float64 and ex["u64"].dtype == np.uint64 and ex["b"].dtype == np.bool_
            np.testing.assert_array_equal(ex["f64"], want["f64"].astype(np.float32).astype(np.float64))
            assert ex["label"] == ["cat", "dog", "bird"].index(want["label"])
            pairs = sorted((lang, t) for lang, ts in want["tvl"].items() for t in ([ts] if isinstance(ts, str) else ts))
            assert list(ex["tvl"]["language"]) == [p[0].encode() for p in pairs]
            assert list(ex["tvl"]["translation"]) == [p[1].encode() for p in pairs]
            for k in (
                "f32",
                "i8",
                "u64",
                "b",
                "s",
                "ss",
                "var2",
                "varvar",
                "enc_bytes",
                "enc_zlib",
                "label_n",
                "text",
                "translation",
                "bbox",
                "seq_int",
                "seq_fixed",
                "seq_seq",
                "seq_seq_seq",
                "nested",
                "rgb",
                "gray",
                "u16",
                "fimg",
                "video",
                "audio",
                "steps",
            ):
                _eq(ex[k], want[k], k)
            c = ex["seq_dict"]
            assert list(c["c"]) == [s["c"] for s in want["seq_dict"]] and c["a"].dtype == np.int32
            for k in ("audio_wav", "audio_lazy"):  # WAV files: their samples, in the feature's dtype
                assert ex[k].dtype == expected(want)[k].dtype
                _eq(ex[k], expected(want)[k], k)


def test_written_features_json_is_tfds_layout(tmp_path):
    tt.write(
        tmp_path / "x" / "1.0.0",
        features={"image": tt.Image((2, 2, 1)), "label": tt.ClassLabel(names=["a"])},
        splits={"train": [{"image": np.zeros((2, 2, 1), np.uint8), "label": "a"}]},
    )
    feats = json.loads((tmp_path / "x" / "1.0.0" / "features.json").read_text())
    assert feats["pythonClassName"] == "tensorflow_datasets.core.features.features_dict.FeaturesDict"
    img = feats["featuresDict"]["features"]["image"]
    assert img["pythonClassName"].endswith("image_feature.Image")
    assert img["image"]["shape"]["dimensions"] == ["2", "2", "1"]
    info = json.loads((tmp_path / "x" / "1.0.0" / "dataset_info.json").read_text())
    assert info["splits"][0]["shardLengths"] == ["1"]


def test_write_rejects_bad_values(tmp_path):
    with pytest.raises(ValueError, match="'b' missing"):
        tt.write(tmp_path / "y" / "1.0.0", features={"a": np.int64, "b": np.int64}, splits={"train": [{"a": 1}]})
    with pytest.raises(ValueError, match=r"class label 5 is outside \[-1, 5\)"):
        tt.write(tmp_path / "n" / "1.0.0", features={"l": tt.ClassLabel(num_classes=5)}, splits={"train": [{"l": 5}]})
    with pytest.raises(ValueError, match="unknown label 'z'"):
        tt.write(tmp_path / "z" / "1.0.0", features={"l": tt.ClassLabel(names=["a"])}, splits={"train": [{"l": "z"}]})


_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float32, np.float64, np.bool_]


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_tensor_round_trip(tmp_path_factory, data):
    dt = np.dtype(data.draw(st.sampled_from(_DTYPES)))
    encoding = data.draw(st.sampled_from(["none", "bytes", "zlib"]))
    shape = data.draw(st.sampled_from([(), (3,), (None,), (None, 2), (2, 2)]))
    if encoding != "none" and dt in (np.uint64, np.bool_):
        encoding = "none"  # TFDS's bytes decoding has no uint64/bool path
    if dt == np.float64 and encoding == "none":  # stored as float32, as TFDS does: keep to its range
        elems = hnp.from_dtype(dt, allow_nan=False, allow_infinity=False, min_value=-3e38, max_value=3e38)
    elif dt.kind == "f":
        elems = hnp.from_dtype(dt, allow_nan=False, allow_infinity=False)
    else:
        elems = hnp.from_dtype(dt)
    values = []
    for _ in range(data.draw(st.integers(1, 4))):
        concrete = tuple(data.draw(st.integers(0, 3)) if d is None else d for d in shape)
        values.append(data.draw(hnp.arrays(dt, concrete, elements=elems)))
    d = tmp_path_factory.mktemp("rt") / "t" / "1.0.0"
    tt.write(d, features={"v": tt.Tensor(shape, dt, encoding)}, splits={"train": [{"v": v} for v in values]})
    got = [ex["v"] for ex in tt.builder(d).as_data_source("train")]
    for g, v in zip(got, values):
        want = v.astype(np.float32).astype(np.float64) if dt == np.float64 and encoding == "none" else v
        assert np.asarray(g).dtype == dt and np.asarray(g).shape == v.shape
        np.testing.assert_array_equal(np.asarray(g), want)


def test_streamed_write_of_a_generator_and_an_empty_split(tmp_path):
    d = tmp_path / "g" / "1.0.0"
    gen = ({"x": np.int64(i)} for i in range(5))
    tt.write(d, features={"x": np.int64}, splits={"train": gen, "empty": []}, shard_size=2)
    assert sorted(os.listdir(d)) == [
        "dataset_info.json",
        "features.json",
        "g-empty.tfrecord-00000-of-00001",
        "g-train.tfrecord-00000-of-00003",
        "g-train.tfrecord-00001-of-00003",
        "g-train.tfrecord-00002-of-00003",
    ]
    b = tt.builder(d)
    assert [int(ex["x"]) for ex in b.as_data_source("train")] == [0, 1, 2, 3, 4]
    assert len(b.as_data_source("empty")) == 0 and b.info.splits["empty"].shard_lengths == [0]


# ---------------------------------------------------------------- TFDS's own directories, rewritten
@pytest.mark.parametrize("name", sorted(DATASETS))
def test_rewritten_golden_directory_reads_back_equal(name, tmp_path):
    """Every golden directory TFDS prepared, read and written again by tfrx, reads back with TFDS's values."""
    d = rewrite(name, tmp_path / "out", cache_dir=str(tmp_path / "c"))
    b = tt.builder(d)
    ours: dict = {}
    for split in b.info.splits:
        for i, ex in enumerate(b.as_dataset(split, cache_dir=str(tmp_path / "c"))):
            flatten(ex, f"{split}/{i}/", ours)
    with np.load(os.path.join(GOLDEN, f"{name}.expected.npz")) as z:
        assert_same(ours, expected_splits({k: z[k] for k in z.files}, b.info.splits))
    with open(os.path.join(golden_dir(name), "features.json"), encoding="utf-8") as f:
        assert json.loads(open(os.path.join(d, "features.json"), encoding="utf-8").read()) == json.load(f)
    original = sorted(f for f in os.listdir(golden_dir(name)) if f.endswith(".labels.txt"))
    assert sorted(f for f in os.listdir(d) if f.endswith(".labels.txt")) == original
    for f in original:
        with open(os.path.join(d, f), encoding="utf-8") as ours, open(os.path.join(golden_dir(name), f)) as theirs:
            assert ours.read().split() == theirs.read().split()


def test_optional_none_is_left_out_and_reads_as_tfds_default(tmp_path):
    from tfrx.codec import decode_example
    from tfrx.io import read_records

    feats = {
        "a": tt.Scalar(np.int32, optional=True),
        "v": tt.Tensor((2,), np.float32, optional=True),
        "s": tt.Scalar(object, optional=True),
        "b": tt.Scalar(np.bool_, optional=True),
        "k": np.int64,
    }
    rows = [
        {"a": None, "v": None, "s": None, "b": None, "k": 1},
        {"a": 3, "v": [1.5, 2.0], "s": "x", "b": True, "k": 2},
    ]
    d = tt.write(tmp_path / "o" / "1.0.0", features=feats, splits={"train": rows})
    b = tt.builder(d)
    stored = [decode_example(r) for r in read_records(b.info.splits["train"].filenames)]
    assert sorted(stored[0]) == ["k"] and sorted(stored[1]) == ["a", "b", "k", "s", "v"]
    first, second = b.as_data_source("train")
    assert first["a"] == np.iinfo(np.int32).min and first["a"].dtype == np.int32
    np.testing.assert_array_equal(first["v"], np.full(2, np.finfo(np.float32).min, np.float32))
    assert first["s"] == b"" and not first["b"] and first["b"].dtype == np.bool_
    assert second["a"] == 3 and second["s"] == b"x" and bool(second["b"])
    assert json.loads((tmp_path / "o" / "1.0.0" / "features.json").read_text())["featuresDict"]["features"]["a"][
        "tensor"
    ]["optional"]


def test_none_for_a_required_feature_says_which(tmp_path):
    with pytest.raises(ValueError, match=r"feature 'x' .* is None but the feature is not optional"):
        tt.write(tmp_path / "r" / "1.0.0", features={"x": np.int64}, splits={"train": [{"x": None}]})


def test_label_names_written_for_labeled_image_not_for_counts(tmp_path):
    feats = {
        "mask": tt.LabeledImage(labels=["bg", "cat"], shape=(2, 2, 1)),
        "mask_n": tt.LabeledImage(labels=4, shape=(None, None, 1)),
        "n": tt.ClassLabel(num_classes=3),
    }
    rows = [{"mask": np.eye(2, dtype=np.uint8)[..., None], "mask_n": np.full((1, 3, 1), 3, np.uint8), "n": 2}]
    d = tt.write(tmp_path / "l" / "1.0.0", features=feats, splits={"train": rows})
    assert sorted(f for f in os.listdir(d) if f.endswith(".txt")) == ["mask.labels.txt"]
    f = tt.builder(d).info.features
    assert f["mask"].names == ["bg", "cat"] and f["mask_n"].names == ["0", "1", "2", "3"]
    assert f["n"].names == ["0", "1", "2"] and f["n"].int2str(2) == "2"
    (ex,) = tt.builder(d).as_data_source("train")
    np.testing.assert_array_equal(ex["mask"], rows[0]["mask"])
    with pytest.raises(ValueError, match="single channel"):
        tt.LabeledImage(labels=2, shape=(2, 2, 3))


_STEP = st.fixed_dictionaries(
    {
        "observation": st.fixed_dictionaries(
            {
                "pos": st.lists(st.floats(-1e6, 1e6, width=32), min_size=2, max_size=2),
                "arm": st.fixed_dictionaries({"open": st.booleans(), "joint": st.integers(-(2**40), 2**40)}),
            }
        ),
        "action": st.fixed_dictionaries({"text": st.text(max_size=5), "id": st.integers(0, 9)}),
        "reward": st.floats(-10, 10, width=32),
    }
)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(_STEP, max_size=4), min_size=1, max_size=3))
def test_nested_dicts_in_dataset_steps_round_trip(tmp_path_factory, episodes):
    steps = tt.Dataset(
        {
            "observation": {"pos": tt.Tensor((2,), np.float32), "arm": {"open": np.bool_, "joint": np.int64}},
            "action": {"text": tt.Text(), "id": tt.ClassLabel(num_classes=10)},
            "reward": np.float32,
        }
    )
    d = tt.write(
        tmp_path_factory.mktemp("steps") / "s" / "1.0.0",
        features={"steps": steps, "n": np.int64},
        splits={"train": [{"steps": ep, "n": len(ep)} for ep in episodes]},
    )
    for ep, got in zip(episodes, tt.builder(d).as_data_source("train")):
        assert len(got["steps"]) == len(ep) == got["n"]
        for s, g in zip(ep, got["steps"]):
            np.testing.assert_array_equal(g["observation"]["pos"], np.float32(s["observation"]["pos"]))
            assert bool(g["observation"]["arm"]["open"]) == s["observation"]["arm"]["open"]
            assert int(g["observation"]["arm"]["joint"]) == s["observation"]["arm"]["joint"]
            assert g["action"]["text"] == s["action"]["text"].encode() and int(g["action"]["id"]) == s["action"]["id"]
            assert g["reward"] == np.float32(s["reward"])


def test_a_step_missing_a_nested_key_is_named(tmp_path):
    feats = {"steps": tt.Dataset({"obs": {"x": np.int64, "y": np.int64}})}
    with pytest.raises(ValueError, match=r"'steps/obs/y' missing from step 1"):
        tt.write(
            tmp_path / "m" / "1.0.0",
            features=feats,
            splits={"train": [{"steps": [{"obs": {"x": 1, "y": 2}}, {"obs": {"x": 1}}]}]},
        )


def test_sequence_of_sequences_of_dicts_written_from_nested_lists(tmp_path):
    feats = {"s": tt.Sequence(tt.Sequence({"a": np.int64, "b": {"c": tt.Text()}}))}
    value = [[{"a": 1, "b": {"c": "p"}}, {"a": 2, "b": {"c": "q"}}], [], [{"a": 3, "b": {"c": "r"}}]]
    d = tt.write(tmp_path / "ss" / "1.0.0", features=feats, splits={"train": [{"s": value}]})
    (ex,) = tt.builder(d).as_data_source("train", cache_dir=str(tmp_path))
    assert [v.tolist() for v in ex["s"]["a"]] == [[1, 2], [], [3]]
    assert [v.tolist() for v in ex["s"]["b"]["c"]] == [[b"p", b"q"], [], [b"r"]]


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_optional_round_trip(tmp_path_factory, data):
    """Random optional tensors, each value None or given: read back as given, or as TFDS's default for None."""
    dt = np.dtype(data.draw(st.sampled_from([np.int8, np.uint8, np.int32, np.int64, np.float32, np.bool_, object])))
    shape = data.draw(st.sampled_from([(), (2,), (2, 3)]))
    feature = tt.Tensor(shape, dt, optional=True)
    elems = (
        st.text(max_size=3).map(str.encode)
        if dt == object
        else hnp.from_dtype(dt, allow_nan=False, allow_infinity=False)
    )
    values = data.draw(st.lists(st.one_of(st.none(), hnp.arrays(dt, shape, elements=elems)), min_size=1, max_size=5))
    d = tmp_path_factory.mktemp("opt") / "o" / "1.0.0"
    tt.write(d, features={"v": feature}, splits={"train": [{"v": v} for v in values]})
    got = [ex["v"] for ex in tt.builder(d).as_data_source("train", cache_dir=str(d.parent / "c"))]
    for g, v in zip(got, values):
        want = feature.default_value() if v is None else v
        if dt == object and shape == ():  # a string scalar is bytes, as in TFDS
            assert isinstance(g, bytes) and g == (want.item() if isinstance(want, np.ndarray) else want)
            continue
        g = np.asarray(g)
        assert g.dtype == dt and g.shape == shape
        np.testing.assert_array_equal(g, np.asarray(want, dtype=dt))
