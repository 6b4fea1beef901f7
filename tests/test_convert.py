"""Converters: image folders, CSV, JSON Lines, Parquet to TFRecords and back; bad inputs are counted."""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest

import tfrx
from tfrx.tools.convert import (
    ConvertError,
    csv_to_tfrecord,
    images_to_tfrecord,
    jsonl_to_tfrecord,
    parquet_to_tfrecord,
    tfrecord_to_jsonl,
    tfrecord_to_parquet,
)

Image = pytest.importorskip("PIL.Image")


def _image_bytes(h, w, fmt, seed):
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format=fmt)
    return buf.getvalue()


@pytest.fixture
def image_folder(tmp_path):
    root = tmp_path / "photos"
    sizes = {"cat": [(20, 30, "JPEG"), (25, 15, "PNG")], "dog": [(10, 10, "JPEG"), (12, 40, "JPEG"), (8, 9, "PNG")]}
    seed = 0
    for cls, items in sizes.items():
        (root / cls).mkdir(parents=True)
        for i, (h, w, fmt) in enumerate(items):
            ext = "jpg" if fmt == "JPEG" else "png"
            (root / cls / f"{i}.{ext}").write_bytes(_image_bytes(h, w, fmt, seed))
            seed += 1
    (root / "dog" / "notes.txt").write_text("not an image, and not picked up")
    return root


def _examples(paths):
    return [tfrx.decode_example(r) for r in tfrx.read_records(paths)]


def test_image_folder(tmp_path, image_folder):
    summary = images_to_tfrecord(image_folder, tmp_path / "out" / "photos-train", num_shards=2, num_parallel_calls=2)
    assert summary.records == 5 and summary.skipped == 0
    assert [os.path.basename(p) for p in summary.paths] == [
        "photos-train.tfrecord-00000-of-00002",
        "photos-train.tfrecord-00001-of-00002",
    ]
    rows = sorted(_examples(summary.paths), key=lambda d: d["image/filename"][0])
    assert [d["image/filename"][0] for d in rows] == [
        b"cat/0.jpg",
        b"cat/1.png",
        b"dog/0.jpg",
        b"dog/1.jpg",
        b"dog/2.png",
    ]
    assert [int(d["image/class/label"][0]) for d in rows] == [0, 0, 1, 1, 1]
    assert [d["image/class/text"][0] for d in rows] == [b"cat", b"cat", b"dog", b"dog", b"dog"]
    assert [d["image/format"][0] for d in rows] == [b"jpeg", b"png", b"jpeg", b"jpeg", b"png"]
    assert [(int(d["image/height"][0]), int(d["image/width"][0])) for d in rows] == [
        (20, 30),
        (25, 15),
        (10, 10),
        (12, 40),
        (8, 9),
    ]
    assert rows[1]["image/encoded"][0] == (image_folder / "cat" / "1.png").read_bytes()


def test_image_header_validation_reads_the_same_sizes(tmp_path, image_folder):
    full = images_to_tfrecord(image_folder, tmp_path / "full")
    header = images_to_tfrecord(image_folder, tmp_path / "header", validate="header")
    assert list(tfrx.read_records(full.paths)) == list(tfrx.read_records(header.paths))
    (image_folder / "cat" / "junk.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    summary = images_to_tfrecord(image_folder, tmp_path / "h2", validate="header", on_error="skip")
    assert summary.skipped == 1 and "junk.png" in summary.errors[0]


def test_image_order_is_seeded(tmp_path, image_folder):
    a = images_to_tfrecord(image_folder, tmp_path / "a", seed=3, num_parallel_calls=1)
    b = images_to_tfrecord(image_folder, tmp_path / "b", seed=3, num_parallel_calls=2)
    c = images_to_tfrecord(image_folder, tmp_path / "c", shuffle=False)
    names = lambda s: [d["image/filename"][0] for d in _examples(s.paths)]  # noqa: E731
    assert names(a) == names(b)
    assert names(c) == sorted(names(c))


def test_image_resize_and_reencode(tmp_path, image_folder, tf):
    summary = images_to_tfrecord(image_folder, tmp_path / "r", resize=(16, 24), reencode="jpeg", quality=90)
    for d in _examples(summary.paths):
        assert (int(d["image/height"][0]), int(d["image/width"][0])) == (16, 24)
        assert d["image/format"][0] == b"jpeg"
        assert tuple(tf.io.decode_jpeg(d["image/encoded"][0]).shape) == (16, 24, 3)


def test_bad_images_follow_on_error(tmp_path, image_folder):
    (image_folder / "cat" / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 truncated")
    (image_folder / "dog" / "empty.png").write_bytes(b"")
    with pytest.raises(ConvertError, match="broken.jpg|empty.png"):
        images_to_tfrecord(image_folder, tmp_path / "x", num_parallel_calls=1)
    assert not os.path.exists(tmp_path / "x.manifest.json")
    assert [n for n in os.listdir(tmp_path) if n.startswith(("x", ".x"))] == []
    summary = images_to_tfrecord(image_folder, tmp_path / "y", on_error="skip")
    assert summary.records == 5 and summary.skipped == 2
    assert sorted(e.split(":")[0].rsplit("/", 1)[-1] for e in summary.errors) == ["broken.jpg", "empty.png"]
    with pytest.warns(UserWarning):
        images_to_tfrecord(image_folder, tmp_path / "z", on_error="warn")


def test_image_folder_without_classes(tmp_path):
    (tmp_path / "flat").mkdir()
    with pytest.raises(ValueError, match="one folder per class"):
        images_to_tfrecord(tmp_path / "flat", tmp_path / "o")
    with pytest.raises(FileNotFoundError):
        images_to_tfrecord(tmp_path / "missing", tmp_path / "o")


# ------------------------------------------------------------------ CSV
def test_csv_inferred_spec(tmp_path, tf):
    src = tmp_path / "t.csv"
    src.write_text('id,price,name,maybe\n1,2.5,apple,\n2,3,pear,7\n3,-1e3,"fig, dried",8\n')
    summary = csv_to_tfrecord(src, tmp_path / "t", num_shards=2)
    assert summary.spec == {"id": "int64", "price": "float", "name": "bytes", "maybe": "int64"}
    assert summary.records == 3
    rows = _examples(summary.paths)
    rows.sort(key=lambda d: int(d["id"][0]))
    assert [d["name"][0] for d in rows] == [b"apple", b"pear", b"fig, dried"]
    assert "maybe" not in rows[0] and int(rows[1]["maybe"][0]) == 7  # an empty field is a missing value
    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "price": tf.io.FixedLenFeature([], tf.float32)}
    parsed = tf.io.parse_example(list(tfrx.read_records(summary.paths)), spec)
    assert sorted(parsed["price"].numpy().tolist()) == [-1000.0, 2.5, 3.0]


def test_csv_bad_rows_are_counted(tmp_path):
    src = tmp_path / "bad.csv"
    src.write_text("a,b\n1,x\n2\n3,y,extra\nfour,z\n5,w\n")
    with pytest.raises(ConvertError, match="line 3: 1 fields"):
        csv_to_tfrecord(src, tmp_path / "o1", spec={"a": "int64"})
    summary = csv_to_tfrecord(src, tmp_path / "o2", spec={"a": "int64"}, on_error="skip")
    assert summary.records == 2 and summary.skipped == 3
    assert any("'four' is not int64" in e for e in summary.errors)
    assert [int(d["a"][0]) for d in _examples(summary.paths)] == [1, 5]


def test_csv_given_spec_as_features(tmp_path):
    src = tmp_path / "s.csv"
    src.write_text("x,y\n1,2\n3,4\n")
    summary = csv_to_tfrecord(src, tmp_path / "s", spec={"x": tfrx.FixedLenFeature([], tfrx.float32), "y": "bytes"})
    d = _examples(summary.paths)[0]
    assert d["x"].dtype == np.float32 and d["y"] == [b"2"]
    with pytest.raises(ValueError, match="does not have"):
        csv_to_tfrecord(src, tmp_path / "s2", spec={"zzz": "int64"})


# ------------------------------------------------------------------ JSON Lines
def test_jsonl_round_trip(tmp_path):
    src = tmp_path / "r.jsonl"
    lines = [
        {"id": 1, "tags": ["a", "b"], "v": [1.5, 2], "ok": True},
        {"id": 2, "tags": [], "v": [0.25], "ok": False, "blob": {"base64": "AAE="}},
        {"id": 3, "tags": ["c"], "v": None},
    ]
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    summary = jsonl_to_tfrecord(src, tmp_path / "r")
    assert summary.spec == {"id": "int64", "tags": "bytes", "v": "float", "ok": "int64", "blob": "bytes"}
    rows = _examples(summary.paths)
    assert rows[1]["blob"] == [b"\x00\x01"] and rows[0]["tags"] == [b"a", b"b"]
    np.testing.assert_array_equal(rows[0]["v"], [1.5, 2.0])
    back = tmp_path / "back.jsonl"
    tfrecord_to_jsonl(summary.paths, back)
    got = [json.loads(x) for x in back.read_text().splitlines()]
    assert got[0] == {"id": [1], "tags": ["a", "b"], "v": [1.5, 2.0], "ok": [1]}
    assert got[1]["blob"] == [{"base64": "AAE="}] and got[1]["tags"] == []
    # and back again gives the same records
    again = jsonl_to_tfrecord(back, tmp_path / "again", spec=summary.spec)
    assert list(tfrx.read_records(again.paths)) == list(tfrx.read_records(summary.paths))


def test_jsonl_bad_lines(tmp_path):
    src = tmp_path / "b.jsonl"
    src.write_text('{"a": 1}\nnot json\n[1, 2]\n{"a": "text"}\n{"a": 2.5}\n{"a": 3}\n')
    summary = jsonl_to_tfrecord(src, tmp_path / "b", spec={"a": "int64"}, on_error="skip")
    assert summary.records == 2 and summary.skipped == 4
    with pytest.raises(ConvertError, match="line 2: not JSON"):
        jsonl_to_tfrecord(src, tmp_path / "c", spec={"a": "int64"})


# ------------------------------------------------------------------ Parquet
def test_parquet_round_trip(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "i": pa.array([1, 2, None, 4], pa.int32()),
            "f": pa.array([0.5, 1.5, 2.5, 3.5], pa.float64()),
            "s": pa.array(["a", None, "c", "d"]),
            "l": pa.array([[1, 2], [], None, [3]], pa.list_(pa.int64())),
            "b": pa.array([True, False, True, True]),
        }
    )
    src = tmp_path / "t.parquet"
    pq.write_table(table, src)
    summary = parquet_to_tfrecord(src, tmp_path / "t", max_records_per_shard=3)
    assert summary.records == 4 and len(summary.paths) == 2
    rows = _examples(summary.paths)
    assert "i" not in rows[2] and "s" not in rows[1] and "l" not in rows[2]
    assert rows[0]["l"].tolist() == [1, 2] and rows[1]["l"].tolist() == []
    out = tmp_path / "back.parquet"
    back = tfrecord_to_parquet(summary.paths, out)
    assert back.records == 4
    t2 = pq.read_table(out)
    assert t2.column("i").to_pylist() == [[1], [2], None, [4]]
    assert t2.column("s").to_pylist() == [[b"a"], None, [b"c"], [b"d"]]
    assert t2.column("f").to_pylist() == [[0.5], [1.5], [2.5], [3.5]]


def test_parquet_value_not_fitting_spec(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    src = tmp_path / "s.parquet"
    pq.write_table(pa.table({"x": ["1", "two", "3"]}), src)
    summary = parquet_to_tfrecord(src, tmp_path / "s", spec={"x": "int64"}, on_error="skip")
    assert summary.records == 2 and summary.skipped == 1
    assert [int(d["x"][0]) for d in _examples(summary.paths)] == [1, 3]


def test_tfrecord_to_parquet_on_corpus_file(tmp_path, corpus_dir):
    pq = pytest.importorskip("pyarrow.parquet")
    src = corpus_dir / "tfx__penguin_eval_data_tfrecord-00000-of-00001.gz"
    summary = tfrecord_to_parquet(src, tmp_path / "p.parquet")
    t = pq.read_table(tmp_path / "p.parquet")
    assert t.num_rows == summary.records == 100
    assert set(t.column_names) == {"body_mass_g", "culmen_depth_mm", "culmen_length_mm", "flipper_length_mm", "species"}


@pytest.mark.parametrize("workers", [1, 3])
def test_csv_split_across_processes_keeps_order_and_quotes(tmp_path, workers):
    src = tmp_path / "big.csv"
    lines = ["id,text,x"]
    for i in range(3000):
        text = f'"row {i}, with ""quotes""\nand a newline"' if i % 7 == 0 else f"plain {i}"
        x = "oops" if i in (1234, 2900) else str(i / 4)
        lines.append(f"{i},{text},{x}")
    src.write_text("\n".join(lines) + "\n")
    spec = {"id": "int64", "text": "bytes", "x": "float"}
    summary = csv_to_tfrecord(
        src,
        tmp_path / "o",
        spec=spec,
        num_parallel_calls=workers,
        parallel_chunk_bytes=4096,
        chunk_rows=100,
        on_error="skip",
    )
    assert summary.skipped == 2 and summary.records == 2998
    assert sorted(e.split(": ")[1] for e in summary.errors) == ["line 1413", "line 3317"]  # where the row starts
    rows = _examples(summary.paths)
    ids = [int(d["id"][0]) for d in rows]
    assert ids == [i for i in range(3000) if i not in (1234, 2900)]
    assert rows[7]["text"] == [b'row 7, with "quotes"\nand a newline']
    bad = tmp_path / "bad.csv"
    bad.write_text('a,b\n1,"two\nlines"\n2,x,extra\n')
    summary = csv_to_tfrecord(bad, tmp_path / "q", num_parallel_calls=workers, on_error="skip")
    assert summary.errors[0].split(": ")[1] == "line 4"
    with pytest.raises(ConvertError, match="'oops' is not float"):
        csv_to_tfrecord(src, tmp_path / "p", spec=spec, num_parallel_calls=workers, parallel_chunk_bytes=4096)
    assert not (tmp_path / "p.manifest.json").exists()


@pytest.mark.parametrize("batch_rows", [2, 3, 100])
def test_tfrecord_to_parquet_adds_features_first_seen_late(tmp_path, batch_rows):
    """A feature first seen after the first batch of rows becomes a column, null in the rows before it."""
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"a": [i]} for i in range(5)] + [{"a": [5], "late": [b"x"]}, {"later": [0.5]}]
    path = tmp_path / "late.tfrecord"
    with tfrx.TFRecordWriter(path) as w:
        for r in rows:
            w.write(tfrx.make_example(r).SerializeToString())
    out = tmp_path / "late.parquet"
    summary = tfrecord_to_parquet(path, out, batch_rows=batch_rows)
    table = pq.read_table(out)
    assert summary.records == 7 and table.column_names == ["a", "late", "later"]
    assert table.column("a").to_pylist() == [[0], [1], [2], [3], [4], [5], None]
    assert table.column("late").to_pylist() == [None] * 5 + [[b"x"], None]
    assert table.column("later").to_pylist() == [None] * 6 + [[0.5]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late.parquet", "late.tfrecord"]
