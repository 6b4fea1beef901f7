"""TFRecordWriter: byte-identical to TensorFlow, readable by TensorFlow and gzip."""

import gzip
import importlib.util
import io
import json
import zlib

import numpy as np
import pytest

import tfrx
from conftest import GOLDEN_DIR

_spec = importlib.util.spec_from_file_location("make_golden", GOLDEN_DIR / "make_golden.py")
assert _spec is not None and _spec.loader is not None
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)
GOLDEN_RECORDS = make_golden.golden_records()
MANIFEST = json.loads((GOLDEN_DIR / "MANIFEST.json").read_text())


@pytest.mark.parametrize("name", sorted(MANIFEST["files"]))
@pytest.mark.parametrize("how", ["write", "write_many", "batch"])
def test_matches_tensorflow_golden_bytes(tmp_path, name, how):
    info = MANIFEST["files"][name]
    records = GOLDEN_RECORDS[: info["records"]]
    out = tmp_path / name
    options = tfrx.TFRecordOptions(info["compression"], info["level"])
    with tfrx.TFRecordWriter(out, options) as w:
        if how == "write":
            for r in records:
                w.write(r)
        elif how == "write_many":
            w.write_many(records)
        else:
            w.write_many(tfrx.RecordBatch.from_records(records))
    assert out.read_bytes() == (GOLDEN_DIR / name).read_bytes()


@pytest.mark.parametrize("name", sorted(MANIFEST["files"]))
def test_reads_tensorflow_golden(name):
    info = MANIFEST["files"][name]
    assert list(tfrx.read_records(GOLDEN_DIR / name)) == GOLDEN_RECORDS[: info["records"]]


def test_gzip_output_is_plain_gzip(tmp_path):
    with tfrx.TFRecordWriter(tmp_path / "a.gz", compression="gzip") as w:
        w.write_many(GOLDEN_RECORDS)
    with tfrx.TFRecordWriter(tmp_path / "a") as w:
        w.write_many(GOLDEN_RECORDS)
    assert gzip.decompress((tmp_path / "a.gz").read_bytes()) == (tmp_path / "a").read_bytes()


def test_zlib_output_is_plain_zlib(tmp_path):
    with tfrx.TFRecordWriter(tmp_path / "a.z", compression="ZLIB") as w:
        w.write_many(GOLDEN_RECORDS)
    with tfrx.TFRecordWriter(tmp_path / "a") as w:
        w.write_many(GOLDEN_RECORDS)
    assert zlib.decompress((tmp_path / "a.z").read_bytes()) == (tmp_path / "a").read_bytes()


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tensorflow_reads_what_tfrx_writes(tf, tmp_path, compression):
    rng = np.random.default_rng(1)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 200_000, 20)] + [b""]
    path = tmp_path / "x.tfrecord"
    with tfrx.TFRecordWriter(path, compression=compression) as w:
        w.write_many(records[:10])
        for r in records[10:]:
            w.write(r)
    got = [t.numpy() for t in tf.data.TFRecordDataset(str(path), compression_type=compression)]
    assert got == records


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tfrx_reads_what_tensorflow_writes(tf, tmp_path, compression):
    rng = np.random.default_rng(2)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 300_000, 12)] + [b""]
    path = tmp_path / "x.tfrecord"
    with tf.io.TFRecordWriter(str(path), tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)
    assert list(tfrx.read_records(path)) == records
    assert list(tfrx.read_records(path, compression=compression or None)) == records
    # Small chunks force records to span buffer refills.
    with tfrx.RecordReader(path, chunk_size=1000) as r:
        assert list(r) == records


def test_options_spellings():
    assert tfrx.TFRecordOptions().compression_type == ""
    assert tfrx.TFRecordOptions(None).compression_type == ""
    assert tfrx.TFRecordOptions("none").compression_type == ""
    assert tfrx.TFRecordOptions("gzip").compression_type == "GZIP"
    assert tfrx.TFRecordOptions("ZLIB", 3).compression_level == 3
    assert tfrx.TFRecordOptions.get_compression_type_string(tfrx.TFRecordOptions("gzip")) == "GZIP"
    with pytest.raises(ValueError):
        tfrx.TFRecordOptions("bz2")
    with pytest.raises(ValueError):
        tfrx.TFRecordOptions("GZIP", 11)


def test_options_and_compression_are_exclusive(tmp_path):
    with pytest.raises(ValueError):
        tfrx.TFRecordWriter(tmp_path / "x", "GZIP", compression="gzip")
    with tfrx.TFRecordWriter(tmp_path / "x", "GZIP") as w:  # TF accepts a name as options
        w.write(b"a")
    assert (tmp_path / "x").read_bytes()[:2] == b"\x1f\x8b"


def test_write_accepts_buffers_and_rejects_str(tmp_path):
    arr = np.arange(100_000, dtype=np.int32)  # multi-byte items, large-record path
    with tfrx.TFRecordWriter(tmp_path / "x") as w:
        w.write(arr)
        w.write(bytearray(b"ab"))
        w.write(memoryview(b"xyz")[1:])
        w.write_many(np.array([b"q", b"rs"], dtype=object))
        w.write_many(r for r in [b"gen"])
        with pytest.raises(TypeError):
            w.write("text")
        with pytest.raises(TypeError):
            w.write_many(["text"])
        assert w.records_written == 6
    assert list(tfrx.read_records(tmp_path / "x")) == [arr.tobytes(), b"ab", b"yz", b"q", b"rs", b"gen"]


def test_write_accepts_messages_serialized_deterministically(tmp_path):
    example = tfrx.make_example({"b": [1, 2], "a": [b"x"], "c": [0.5]})
    sequence = tfrx.make_sequence_example({"id": [3]}, {"steps": [[1], [2, 3]]})
    with tfrx.TFRecordWriter(tmp_path / "x") as w:
        w.write(example)
        w.write_many([b"raw", sequence, example])
        with pytest.raises(TypeError, match=r"expects bytes, a buffer or a protobuf message .*, got int"):
            w.write(3)
        with pytest.raises(TypeError, match="got dict"):
            w.write_many([b"ok", {"a": 1}])
        assert w.records_written == 4
    encoded = tfrx.encode_examples({"b": [[1, 2]], "a": [[b"x"]], "c": [[0.5]]})[0]
    assert encoded == example.SerializeToString(deterministic=True)
    assert list(tfrx.read_records(tmp_path / "x")) == [
        encoded,
        b"raw",
        sequence.SerializeToString(deterministic=True),
        encoded,
    ]


def test_write_accepts_tensorflow_messages(tmp_path, tf):
    example = tf.train.Example(
        features=tf.train.Features(
            feature={name: tf.train.Feature(int64_list=tf.train.Int64List(value=[i])) for i, name in enumerate("zyxw")}
        )
    )
    # TensorFlow's own writer takes only bytes; tfrx's also takes the message itself.
    with tf.io.TFRecordWriter(str(tmp_path / "tf")) as w, pytest.raises(TypeError):
        w.write(example)
    with tfrx.TFRecordWriter(tmp_path / "x") as w:
        w.write(example)
    (record,) = tfrx.read_records(tmp_path / "x")
    assert record == example.SerializeToString(deterministic=True)
    assert tf.train.Example.FromString(record) == example


def test_file_object_is_flushed_not_closed():
    buf = io.BytesIO()
    with tfrx.TFRecordWriter(buf) as w:
        w.write(b"one")
    assert not buf.closed
    buf.seek(0)
    assert list(tfrx.read_records(buf)) == [b"one"]


def test_flush_keeps_gzip_stream_readable(tmp_path):
    path = tmp_path / "x.gz"
    w = tfrx.TFRecordWriter(path, compression="gzip")
    w.write(b"first")
    w.flush()
    d = zlib.decompressobj(31)
    partial = d.decompress(path.read_bytes())
    assert list(tfrx.read_records(io.BytesIO(partial))) == [b"first"]
    w.write(b"second")
    w.close()
    w.close()  # idempotent
    assert list(tfrx.read_records(path)) == [b"first", b"second"]
    with pytest.raises(ValueError):
        w.write(b"late")


def test_write_records_helper(tmp_path):
    assert tfrx.write_records(tmp_path / "x", [b"a", b"b"], compression="zlib") == 2
    assert list(tfrx.read_records(tmp_path / "x")) == [b"a", b"b"]


def test_records_larger_than_the_staging_buffer(tmp_path, monkeypatch):
    from tfrx.io import _writer as writer

    monkeypatch.setattr(writer, "STAGE_BYTES", 1000)
    records = [bytes([i]) * (i * 97) for i in range(20)]
    path = tmp_path / "x"
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(records)
        w.write_many(tfrx.RecordBatch.from_records(records))
        for r in records:
            w.write(r)
    assert list(tfrx.read_records(path)) == records * 3
    with tfrx.TFRecordWriter(tmp_path / "y", compression="gzip") as w:
        w.write_many(records)
    assert list(tfrx.read_records(tmp_path / "y")) == records


class _KeepsViews:
    """A file object that keeps what it is given without copying."""

    def __init__(self):
        self.parts = []

    def write(self, data):
        self.parts.append(data)
        return len(data)

    def flush(self):
        pass


def test_file_objects_never_get_the_reused_buffer(monkeypatch):
    from tfrx.io import _writer as writer

    monkeypatch.setattr(writer, "STAGE_BYTES", 100)
    sink = _KeepsViews()
    records = [bytes([i]) * 30 for i in range(10)]
    with tfrx.TFRecordWriter(sink) as w:
        w.write_many(records)
    data = b"".join(bytes(p) for p in sink.parts)
    assert list(tfrx.read_records(io.BytesIO(data))) == records
