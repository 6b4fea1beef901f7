from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
import tfrx.data._shard as shard_module
from data_helpers import sized_files, to_py, write_fake_files
from tfrx.data import Dataset, TFRecordDataset
from tfrx.data._shard import shard_pipeline
from tfrx.io._batch import MultiBufferRecordBatch, ScatteredRecordBatch
from tfrx.testing import assert_resumes_exactly


@pytest.mark.parametrize("n,shards,index", [(10, 3, 0), (10, 3, 2), (7, 7, 6), (3, 5, 4), (0, 2, 1)])
def test_shard_matches_tf(tf, n, shards, index):
    ours = Dataset.range(n).shard(shards, index)
    theirs = tf.data.Dataset.range(n).shard(shards, index)
    assert to_py(list(ours)) == to_py(list(theirs.as_numpy_iterator()))
    assert ours.cardinality() == int(theirs.cardinality())


def test_shard_validates():
    with pytest.raises(ValueError):
        Dataset.range(3).shard(0, 0)
    with pytest.raises(ValueError):
        Dataset.range(3).shard(2, 2)


def test_shard_resumes():
    assert_resumes_exactly(lambda: Dataset.range(11).filter(lambda x: x != 4).shard(3, 1))


# ---------------------------------------------------------------- record-level shard, batch-native


class RawParser:
    """A parser object that returns the raw records and records the batch types it was given."""

    def __init__(self):
        self.inputs = []

    def parse(self, records):
        self.inputs.append(type(records))
        return {"raw": np.array(list(records), dtype=object)}


def _raw(batches):
    return [list(b["raw"]) if isinstance(b, dict) else list(b) for b in batches]


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 12), min_size=1, max_size=4),
    shards=st.integers(1, 5),
    data=st.data(),
    batch=st.integers(1, 7),
    drop=st.booleans(),
    piece_bytes=st.sampled_from([1, 20, 4 << 20]),
    reads=st.sampled_from([1, 2]),
)
def test_record_level_shard_batches_natively_with_the_per_record_order(
    tmp_path_factory, sizes, shards, data, batch, drop, piece_bytes, reads
):
    index = data.draw(st.integers(0, shards - 1))
    files = write_fake_files(tmp_path_factory.mktemp("shard"), sizes)
    with mock.patch.object(shard_module, "_PIECE_BYTES", piece_bytes):
        parser = RawParser()
        fast = TFRecordDataset(files, num_parallel_reads=reads).shard(shards, index).batch(batch, drop).parse(parser)
        slow = TFRecordDataset(files, num_parallel_reads=reads).shard(shards, index).batch(batch, drop)
        assert _raw(fast) == _raw(slow)
        assert set(parser.inputs) <= {tfrx.RecordBatch, MultiBufferRecordBatch}
        # shuffle over the shard takes its pieces (the shuffle's draws are the per-record form's)
        parser = RawParser()
        fast = TFRecordDataset(files).shard(shards, index).shuffle(5, seed=2).batch(batch).parse(parser)
        slow = TFRecordDataset(files).shard(shards, index).shuffle(5, seed=2).batch(batch)
        assert _raw(fast) == _raw(slow)
        assert set(parser.inputs) <= {ScatteredRecordBatch}


@pytest.mark.parametrize("piece_bytes", [1, 25, 4 << 20])
def test_record_level_shard_batches_resume_exactly(tmp_path, monkeypatch, piece_bytes):
    monkeypatch.setattr(shard_module, "_PIECE_BYTES", piece_bytes)
    files = write_fake_files(tmp_path, [7, 0, 9, 4])
    got = assert_resumes_exactly(lambda: TFRecordDataset(files).shard(3, 1).batch(2).parse(RawParser()))
    assert [r for b in _raw(got) for r in b] == list(TFRecordDataset(files))[1::3]
    assert_resumes_exactly(lambda: TFRecordDataset(files, num_parallel_reads=2).shard(2, 0).batch(3).parse(RawParser()))
    assert_resumes_exactly(lambda: TFRecordDataset(files).shard(3, 2).shuffle(4, seed=1).batch(2).parse(RawParser()))


def test_a_parse_error_in_a_shard_names_the_record_in_its_file(tmp_path):
    path = str(tmp_path / "one.tfrecord")
    records = [tfrx.make_example({"n": [i]}).SerializeToString() for i in range(20)]
    records[10] = b"\x0a\x05not an example"
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(records)
    spec = {"n": tfrx.FixedLenFeature([], tfrx.int64)}
    out = TFRecordDataset(path).shard(3, 1).batch(2).parse(spec)
    with pytest.raises(tfrx.DecodeError, match=f"record 10 of {path!r}"):
        list(out)
    good = list(TFRecordDataset(path).shard(3, 2).batch(2).parse(spec))
    assert [int(n) for b in good for n in b["n"]] == list(range(2, 20, 3))


def test_explain_shows_a_record_level_shard_batch_native(tmp_path):
    files = write_fake_files(tmp_path, [5])
    plan = TFRecordDataset(files).shard(2, 0).batch(4).parse(RawParser())._plan()
    assert "parse(RawParser) on RecordBatch es (batch-native)" in plan
    assert "shard(2, 0), batch-native" in plan and "makes its own elements" not in plan
    plan = TFRecordDataset(files).map(lambda r: r).shard(2, 0).batch(4).parse(RawParser())._plan()
    assert "map(" in plan.splitlines()[0] and "makes its own elements" not in plan.splitlines()[0]


def test_more_workers_than_files_keep_the_batch_native_path(tmp_path):
    files = write_fake_files(tmp_path, [9, 6])
    for ds in (
        TFRecordDataset(files).shuffle(4, seed=3).batch(3).parse(RawParser()),
        TFRecordDataset(files).batch(3).parse(RawParser()),
    ):
        seen = []
        for i in range(4):
            part = shard_pipeline(ds, [(4, i)])
            assert "not batch-native" not in part._plan()
            seen += [r for b in _raw(part) for r in b]
        assert sorted(seen) == sorted(TFRecordDataset(files))


def test_strided_record_batches_keep_each_records_index():
    batch = tfrx.RecordBatch(np.arange(10, dtype=np.uint8), np.arange(10), np.ones(10), path="f", first_index=100)
    strided = batch[1::3]
    assert strided.to_list() == [b"\x01", b"\x04", b"\x07"]
    assert [strided.record_index(i) for i in range(3)] == [101, 104, 107]
    assert strided[1:].record_index(0) == 104 and strided[::2].record_index(1) == 107
    joined = MultiBufferRecordBatch.join([strided, batch[8:]])
    assert joined.to_list() == [b"\x01", b"\x04", b"\x07", b"\x08", b"\t"]
    assert joined[1:4].to_list() == [b"\x04", b"\x07", b"\x08"] and isinstance(joined[1:4], MultiBufferRecordBatch)
    assert MultiBufferRecordBatch.join([joined, strided]).to_list() == joined.to_list() + strided.to_list()


# ---------------------------------------------------------------- shard over a TFRecordDataset: a strided reader

import os  # noqa: E402

import tfrx.io._scanner as scanner_module  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(
    files=st.lists(st.lists(st.integers(0, 300), max_size=12), min_size=1, max_size=4),
    levels=st.lists(st.integers(1, 4), min_size=1, max_size=2),
    data=st.data(),
    batch=st.integers(1, 5),
    drop=st.booleans(),
    hop=st.sampled_from([1, 100, 1 << 30]),  # record size from which only headers are read
    cached=st.booleans(),  # the files' headers known from an earlier pass
)
def test_a_strided_shard_reads_the_per_record_shards_records(
    tmp_path_factory, files, levels, data, batch, drop, hop, cached
):
    shards = [(n, data.draw(st.integers(0, n - 1))) for n in levels]
    paths, records = sized_files(tmp_path_factory.mktemp("strided"), files)
    want = records
    for n, i in shards:
        want = want[i::n]
    with (
        mock.patch.object(scanner_module, "_HOP_RECORD_BYTES", hop),
        mock.patch.object(scanner_module, "_CACHED_RECORDS", 1 << 20 if cached else 0),
    ):
        if cached:
            list(TFRecordDataset(paths).shard(2, 1))  # walks every file's headers once
        ds = TFRecordDataset(paths)
        for n, i in shards:
            ds = ds.shard(n, i)
        assert list(ds) == want
        parser = RawParser()
        got = _raw(ds.batch(batch, drop).parse(parser))
        assert got == [want[k : k + batch] for k in range(0, len(want), batch) if not drop or k + batch <= len(want)]
        assert set(parser.inputs) <= {tfrx.RecordBatch, MultiBufferRecordBatch}
        shuffled = _raw(ds.shuffle(4, seed=1).batch(batch).parse(RawParser()))
        assert shuffled == (_raw(Dataset.from_tensor_slices(want).shuffle(4, seed=1).batch(batch)) if want else [])
        # DDP ranks then workers, as shard_pipeline nests them (by records: more shards than files)
        if shards[0][0] > len(paths):
            part = shard_pipeline(TFRecordDataset(paths).shuffle(3, seed=0).batch(batch).parse(RawParser()), shards)
            assert sorted(r for b in _raw(part) for r in b) == sorted(want)


def test_explain_shows_the_strided_reader(tmp_path):
    files = write_fake_files(tmp_path, [5])
    plan = TFRecordDataset(files).shard(2, 0).batch(4).parse(RawParser())._plan()
    assert "shard(2, 0), batch-native: the reader keeps records 0, 0+2" in plan
    plan = TFRecordDataset(files, num_parallel_reads=2).shard(2, 0).batch(4).parse(RawParser())._plan()
    assert "strided views of each piece" in plan


def _read_bytes() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="counts the bytes read through /proc/self/io")
@pytest.mark.parametrize("cached", [False, True])
def test_a_shard_of_large_records_reads_only_its_own_records(tmp_path, cached):
    paths, records = sized_files(tmp_path, [[64 << 10] * 40])
    size = os.path.getsize(paths[0])
    with mock.patch.object(scanner_module, "_CACHED_RECORDS", 1 << 20 if cached else 0):
        list(TFRecordDataset(paths).shard(4, 0).batch(8))  # warm up: imports, and the headers when cached
        for i in range(4):
            before = _read_bytes()
            got = [r for b in TFRecordDataset(paths).shard(4, i).batch(8).parse(RawParser()) for r in b["raw"]]
            read = _read_bytes() - before
            assert got == records[i::4]
            # its 10 records, the other 30 records' 12-byte headers, and the first header twice (0.25 + ~1%)
            assert size / 4 <= read < size * 0.26, (read, size)


def test_only_a_scan_of_the_whole_file_walks_all_its_headers_into_the_cache(tmp_path):
    paths, records = sized_files(tmp_path, [[20_000] * 40])
    start = tfrx.RecordPosition(0, 20 * (20_000 + 16), 20)  # record 20: the scan reads the second half only
    with mock.patch.object(scanner_module, "_HEADER_CACHE", scanner_module._HeaderCache(1 << 20)) as cache:
        with tfrx.RecordReader(paths[0], stride=(4, 1), start=start) as r:
            assert [bytes(x) for b in r.iter_batches() for x in b] == records[20:][1::4]
        assert cache._records == 0  # its own headers walked, not the first half's
        with tfrx.RecordReader(paths[0], stride=(4, 1)) as r:
            assert [bytes(x) for b in r.iter_batches() for x in b] == records[1::4]
        assert cache._records == 40


@pytest.mark.parametrize("size", [40, 20_000])
def test_damage_in_a_record_another_shard_keeps(tmp_path, size):
    """TensorFlow reads and checks every record in every shard; a strided shard steps over the records it
    drops on their lengths: a damaged payload raises only in the shard that keeps it, a damaged length
    in every shard (nothing after it can be found without it)."""
    paths, records = sized_files(tmp_path, [[size] * 12])
    data = bytearray(open(paths[0], "rb").read())
    start = 5 * (size + 16)  # record 5's header
    data[start + 12 + size // 2] ^= 0x40
    damaged = str(tmp_path / "payload.tfrecord")
    open(damaged, "wb").write(bytes(data))
    for i in (0, 1):
        assert list(TFRecordDataset(damaged).shard(3, i)) == records[i::3]
    with pytest.raises(tfrx.CorruptRecordError, match=r"data CRC mismatch .* record 5 at byte") as e:
        list(TFRecordDataset(damaged).shard(3, 2).batch(2).parse(RawParser()))
    assert (e.value.path, e.value.record_index, e.value.offset) == (damaged, 5, start)
    # with on_error="skip" every record is checked: the shards partition the intact records
    parts = [list(TFRecordDataset(damaged, on_error="skip").shard(3, i)) for i in range(3)]
    intact = records[:5] + records[6:]
    assert [p for i in range(3) for p in parts[i]] == [r for i in range(3) for r in intact[i::3]]
    data = bytearray(open(paths[0], "rb").read())
    data[start] ^= 0x01  # record 5's length
    open(damaged, "wb").write(bytes(data))
    for i in range(3):
        with pytest.raises(tfrx.CorruptRecordError, match=r"length CRC mismatch .* record 5 at byte") as e:
            list(TFRecordDataset(damaged).shard(3, i))
        assert e.value.record_index == 5 and e.value.offset == start


@pytest.mark.parametrize("size", [40, 20_000])
def test_a_strided_shard_resumes_exactly(tmp_path, size):
    paths, _ = sized_files(tmp_path, [[size] * 7, [], [size] * 9, [size] * 4])
    assert_resumes_exactly(lambda: TFRecordDataset(paths).shard(3, 1).batch(2).parse(RawParser()))
    assert_resumes_exactly(lambda: TFRecordDataset(paths).shard(2, 1).shard(2, 0))
    assert_resumes_exactly(lambda: TFRecordDataset(paths).shard(3, 2).shuffle(4, seed=1).batch(2).parse(RawParser()))


def test_a_truncated_file_raises_in_a_shard_that_hops(tmp_path):
    paths, records = sized_files(tmp_path, [[20_000] * 9])
    data = open(paths[0], "rb").read()
    cut = str(tmp_path / "cut.tfrecord")
    open(cut, "wb").write(data[: len(data) - 100])
    for i in range(3):
        got = []
        with pytest.raises(tfrx.CorruptRecordError, match="truncated record .* record 8 at byte"):
            for r in TFRecordDataset(cut).shard(3, i):
                got.append(r)
        assert got == records[i:8:3]


def test_known_headers_of_a_file_rewritten_unnoticed_fail_loudly(tmp_path):
    """The headers kept for a file are keyed by its size and modification time; a file rewritten in place
    with both kept (as nothing normal does) is still checked record by record: an error, never wrong data."""
    paths, records = sized_files(tmp_path, [[20_000] * 8])
    assert list(TFRecordDataset(paths).shard(2, 1)) == records[1::2]  # its headers walked and kept
    (tmp_path / "other").mkdir()
    other, _ = sized_files(tmp_path / "other", [[30_000, 10_000] * 4])
    st = os.stat(paths[0])
    with open(paths[0], "r+b") as f:
        f.write(open(other[0], "rb").read())
    os.utime(paths[0], ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(tfrx.CorruptRecordError, match="changed while it was read|CRC mismatch"):
        list(TFRecordDataset(paths).shard(2, 1))


@pytest.mark.parametrize("size", [40, 20_000])
def test_a_strided_shard_of_tensorflows_files_matches_tf(tf, tmp_path, size):
    paths = []
    for f, n in enumerate([7, 0, 9, 4]):
        p = str(tmp_path / f"tf-{f}.tfrecord")
        with tf.io.TFRecordWriter(p) as w:
            for r in range(n):
                w.write(f"{f}-{r}-".encode().ljust(size + r, b"z"))
        paths.append(p)
    for n, i in [(2, 1), (3, 0), (4, 3), (25, 5)]:
        theirs = list(tf.data.TFRecordDataset(paths).shard(n, i).as_numpy_iterator())
        assert list(TFRecordDataset(paths).shard(n, i)) == theirs
        assert [r for b in _raw(TFRecordDataset(paths).shard(n, i).batch(3).parse(RawParser())) for r in b] == theirs
    theirs = list(tf.data.TFRecordDataset(paths).shard(2, 1).shard(3, 2).as_numpy_iterator())
    assert list(TFRecordDataset(paths).shard(2, 1).shard(3, 2)) == theirs
