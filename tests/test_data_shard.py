from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
import tfrx.data._shard as shard_module
from data_helpers import to_py, write_fake_files
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
