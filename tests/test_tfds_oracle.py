"""tfrx.tfds against TFDS itself: reading TFDS-prepared directories and TFDS reading tfrx-written ones.

TFDS imports TensorFlow, so every test here goes through the ``tf`` fixture.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tfds_helpers import DATASETS, GOLDEN, assert_same, expected_splits, flatten, golden_dir, rewrite
from tfds_write_cases import examples, features

import tfrx.tfds as tt


@pytest.fixture(scope="module")
def tfds(tf):
    return pytest.importorskip("tensorflow_datasets")


def _tfds_values(tfds, d, split):
    b = tfds.builder_from_directory(d)
    rc = tfds.ReadConfig(interleave_cycle_length=1)  # file order, as tfrx reads
    return flatten(list(tfds.as_numpy(b.as_dataset(split=split, shuffle_files=False, read_config=rc))), "", {})


def _tfrx_values(d, split, cache):
    return flatten(list(tt.builder(d).as_data_source(split, cache_dir=cache)), "", {})


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_connector_equals_tfds(tfds, name, tmp_path):
    d = golden_dir(name)
    for split in tfds.builder_from_directory(d).info.splits:
        assert_same(_tfrx_values(d, split, str(tmp_path)), _tfds_values(tfds, d, split))


@pytest.mark.parametrize(
    "split",
    [
        "train[:10%]",
        "train[:50%]+test",
        "train[1:4]",
        "train[-3:]",
        "train[33%:67%]",
        "test[0shard]",
        "train[:-5]",
        "all",
    ],
)
def test_split_strings_equal_tfds(tfds, split, tmp_path):
    d = golden_dir("tfrx_tensors")
    assert_same(_tfrx_values(d, split, str(tmp_path)), _tfds_values(tfds, d, split))


@pytest.mark.parametrize("n,drop", [(3, False), (3, True), (2, False)])
def test_even_splits_equal_tfds(tfds, n, drop, tmp_path):
    d = golden_dir("dummy_mnist")
    ours = tt.even_splits("train[10%:]", n, drop_remainder=drop)
    theirs = tfds.even_splits("train[10%:]", n, drop_remainder=drop)
    for a, b in zip(ours, theirs):
        assert_same(_tfrx_values(d, a, str(tmp_path)), _tfds_values(tfds, d, b))


def test_percent_rounding_equals_tfds(tfds, tmp_path):
    b = tfds.builder_from_directory(golden_dir("dummy_mnist"))
    ours = tt.builder(golden_dir("dummy_mnist"))
    for pct in (1, 3, 5, 12.5, 33, 49.5, 50, 66.6, 99):
        for spec in (f"train[:{pct}%]", f"train[{pct}%:]", f"test[-{pct}%:]"):
            want = b.info.splits[spec].num_examples
            assert len(ours.as_data_source(spec, cache_dir=str(tmp_path))) == want, spec


@pytest.mark.slow
def test_tfds_loads_what_tfrx_writes(tfds, tmp_path):
    d = tt.write(
        tmp_path / "written" / "1.0.0",
        features=features(),
        splits={"train": iter(examples(0, 5)), "test": examples(1, 3), "empty": []},
        shard_size=2,
        supervised_keys=("rgb", "label"),
    )
    b = tfds.builder_from_directory(str(d))
    assert b.info.splits["empty"].num_examples == 0
    assert b.info.splits["train"].num_examples == 5 and b.info.features["label"].names == ["cat", "dog", "bird"]
    for split in ("train", "test", "train[1:4]+test[:1]"):
        assert_same(_tfrx_values(str(d), split, str(tmp_path)), _tfds_values(tfds, str(d), split))


_BOUND = st.one_of(
    st.none(),
    st.integers(-20, 20).map(str),
    st.integers(-100, 100).map(lambda p: f"{p}%"),
    st.decimals(-100, 100, places=1, allow_nan=False).map(lambda p: f"{p}%"),
)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_split_arithmetic_equals_tfds(tfds, data):
    """Random slice strings: the examples tfrx selects are the ones TFDS's file instructions select."""
    from tfrx.tfds._splits import file_instructions, resolve

    b = tfds.builder_from_directory(golden_dir("dummy_mnist"))
    ours_b = tt.builder(golden_dir("dummy_mnist"))
    parts = []
    for _ in range(data.draw(st.integers(1, 2))):
        f, t = data.draw(_BOUND), data.draw(_BOUND)
        if f is None and t is None:
            parts.append(data.draw(st.sampled_from(["train", "test"])))
            continue
        if (f or "").endswith("%") != (t or "").endswith("%") and f is not None and t is not None:
            t = None  # mixed units are rejected by both; keep the case valid
        parts.append(f"{data.draw(st.sampled_from(['train', 'test']))}[{f or ''}:{t or ''}]")
    spec = "+".join(parts)
    try:
        theirs = [(os.path.basename(fi.filename), fi.skip, fi.take) for fi in b.info.splits[spec].file_instructions]
    except (ValueError, AssertionError):
        with pytest.raises(ValueError):
            resolve(spec, {k: v.shard_lengths for k, v in ours_b.info.splits.items()})
        return
    lengths = {
        os.path.basename(f): n for si in ours_b.info.splits.values() for f, n in zip(si.filenames, si.shard_lengths)
    }
    if any(t < -1 for _, _, t in theirs):  # TFDS fails when reading such a split
        with pytest.raises(ValueError, match="ends before it starts"):
            ours_b.as_data_source(spec)
        return
    theirs = [(f, s, lengths[f] - s if t == -1 else t) for f, s, t in theirs]
    ours = []
    for name, start, stop in resolve(spec, {k: v.shard_lengths for k, v in ours_b.info.splits.items()}):
        si = ours_b.info.splits[name]
        ours += [
            (os.path.basename(f), s, t) for f, s, t in file_instructions(start, stop, si.filenames, si.shard_lengths)
        ]
    assert ours == theirs, spec


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_tfds_reads_every_rewritten_golden_directory(tfds, name, tmp_path):
    """Each directory TFDS prepared, read and written again by tfrx.tfds.write: TFDS reads the copy with equal values."""
    d = rewrite(name, tmp_path / "out", cache_dir=str(tmp_path / "c"))
    b = tfds.builder_from_directory(d)
    theirs: dict = {}
    for split in b.info.splits:
        for i, ex in enumerate(tfds.as_numpy(b.as_dataset(split=split, shuffle_files=False))):
            flatten(ex, f"{split}/{i}/", theirs)
    with np.load(os.path.join(GOLDEN, f"{name}.expected.npz")) as z:
        assert_same(theirs, expected_splits({k: z[k] for k in z.files}, b.info.splits))
    original = tfds.builder_from_directory(golden_dir(name)).info.features
    assert repr(b.info.features) == repr(original)
    for key in original.keys():
        for attr in ("names", "num_classes"):
            if hasattr(original[key], attr):
                assert getattr(b.info.features[key], attr) == getattr(original[key], attr), (key, attr)


def test_tfds_reads_none_written_for_optional_features(tfds, tmp_path):
    feats = {
        "i": tt.Scalar(np.int64, optional=True),
        "u": tt.Scalar(np.uint8, optional=True),
        "v": tt.Tensor((2, 2), np.float32, optional=True),
        "b": tt.Scalar(np.bool_, optional=True),
        "s": tt.Scalar(object, optional=True),
        "k": np.int64,
    }
    rows = [
        {"i": None, "u": None, "v": None, "b": None, "s": None, "k": 0},
        {"i": -5, "u": 7, "v": np.eye(2, dtype=np.float32), "b": True, "s": "x", "k": 1},
    ]
    d = tt.write(tmp_path / "opt" / "1.0.0", features=feats, splits={"train": rows})
    b = tfds.builder_from_directory(str(d))
    assert b.info.features["i"].get_tensor_info().optional
    theirs = flatten(list(tfds.as_numpy(b.as_dataset(split="train", shuffle_files=False))), "", {})
    ours = flatten(list(tt.builder(d).as_dataset("train", cache_dir=str(tmp_path))), "", {})
    assert_same(ours, theirs)
    assert theirs["0/i"] == np.iinfo(np.int64).min and theirs["1/i"] == -5


def test_as_dataset_order_equals_tfds_default_read_config(tfds, tmp_path):
    """Many shards of uneven length, split strings across shards and splits: tfrx's default order is TFDS's."""
    d = tt.write(
        tmp_path / "many" / "1.0.0",
        features={"id": np.int64},
        splits={"train": [{"id": i} for i in range(500)], "test": [{"id": -i} for i in range(1, 60)]},
        shard_size=23,
    )
    b = tfds.builder_from_directory(str(d))
    ours_b = tt.builder(d)
    for split in ("train", "test", "train+test", "train[7:333]", "test[3:]+train[:100]", "train[3shard:]"):
        theirs = [int(ex["id"]) for ex in tfds.as_numpy(b.as_dataset(split=split, shuffle_files=False))]
        ours = [int(ex["id"]) for ex in ours_b.as_dataset(split, cache_dir=str(tmp_path))]
        assert ours == theirs, split
        rc = tfds.ReadConfig(interleave_cycle_length=3, interleave_block_length=5)
        theirs = [int(ex["id"]) for ex in tfds.as_numpy(b.as_dataset(split=split, read_config=rc))]
        got = ours_b.as_dataset(split, cache_dir=str(tmp_path), interleave_cycle_length=3, interleave_block_length=5)
        assert [int(ex["id"]) for ex in got] == theirs, split


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=20), st.integers(1, 18), st.integers(1, 18))
def test_interleave_order_equals_tf_data(tf, takes, cycle, block):
    from tfrx.tfds._splits import interleave_order

    starts = np.cumsum([0] + takes[:-1]).astype(np.int64) if takes else np.zeros(0, np.int64)
    files = tf.data.Dataset.from_tensor_slices((starts, np.asarray(takes, np.int64)))
    ds = files.interleave(
        lambda s, n: tf.data.Dataset.range(s, s + n),
        cycle_length=cycle,
        block_length=block,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    assert interleave_order(takes, cycle, block).tolist() == [int(x) for x in ds.as_numpy_iterator()]


@pytest.mark.parametrize("native", [True, False])
def test_cmyk_jpegs_decode_as_tensorflow(tf, monkeypatch, native):
    """CMYK/YCCK JPEGs (Adobe marker or not) against tf.io.decode_jpeg, over its options, with and without libjpeg."""
    import tfrx
    import tfrx.image._jpeg as jpeg
    from tfrx.image import decode_jpeg
    from tfrx.io import read_records

    if not native:
        pytest.importorskip("simplejpeg")
        monkeypatch.setattr(jpeg, "partial_jpeg_backend", lambda: None)
    b = tt.builder(golden_dir("tfrx_cmyk"))
    spec = {"image": tt.parse_spec(b.info.features)["image"]}
    records = read_records(b.info.splits["train"].filenames)
    images = [bytes(tfrx.parse_single_example(r, spec)["image"]) for r in records]
    assert len(images) == 9
    for data in images:
        for channels, ratio, fancy, dct in [(0, 1, True, ""), (3, 2, True, ""), (3, 1, False, "INTEGER_ACCURATE")]:
            want = tf.io.decode_jpeg(
                data, channels=channels, ratio=ratio, fancy_upscaling=fancy, dct_method=dct
            ).numpy()
            got = decode_jpeg(data, channels=channels, ratio=ratio, fancy_upscaling=fancy, dct_method=dct)
            np.testing.assert_array_equal(got, want)


def test_tfds_reads_sequences_of_dicts_written_as_lists_of_dicts(tfds, tmp_path):
    """Steps given as dicts at every level: Sequence(Sequence(dict)), a Sequence of dicts inside Dataset steps."""
    feats = {
        "s": tt.Sequence(tt.Sequence({"a": np.int64, "b": {"c": tt.Text()}})),
        "steps": tt.Dataset({"obs": {"x": tt.Sequence({"y": np.int64})}, "r": np.float32}),
    }
    rows = [
        {
            "s": [[{"a": 1, "b": {"c": "p"}}, {"a": 2, "b": {"c": "q"}}], [{"a": 3, "b": {"c": "r"}}], []],
            "steps": [{"obs": {"x": [{"y": 1}, {"y": 2}]}, "r": 0.5}, {"obs": {"x": []}, "r": 1.0}],
        },
        {"s": [], "steps": []},
    ]
    d = tt.write(tmp_path / "sd" / "1.0.0", features=feats, splits={"train": rows})
    b = tfds.builder_from_directory(str(d))
    theirs = flatten(list(tfds.as_numpy(b.as_dataset(split="train", shuffle_files=False))), "", {})
    ours = flatten(list(tt.builder(d).as_dataset("train", cache_dir=str(tmp_path))), "", {})
    assert_same(ours, theirs)
    assert [int(v) for v in theirs["0/s/a/0"]] == [1, 2] and bytes(theirs["0/s/b/c/1"][0]) == b"r"
