"""parse(): the fast path hands whole RecordBatches to the parser; other inputs work too."""

import numpy as np
import pytest

import tfrx
import tfrx.data._parallel_reads as parallel_reads
from data_helpers import to_py, write_fake_files
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset, TFRecordDataset
from tfrx.io._batch import MultiBufferRecordBatch, ScatteredRecordBatch


class RecordingParser:
    """A parser object (the ``ExampleParser(spec)`` shape) that records what it was given."""

    def __init__(self):
        self.inputs = []

    def parse(self, records):
        self.inputs.append(type(records))
        return {"n": np.array([len(r) for r in records], dtype=np.int64), "raw": np.array(list(records), dtype=object)}


@pytest.fixture
def files(tmp_path):
    return write_fake_files(tmp_path, [5, 3, 4])


def test_batch_then_parse_reads_record_batches(files):
    parser = RecordingParser()
    out = list(TFRecordDataset(files).batch(5).parse(parser))
    assert set(parser.inputs) == {tfrx.RecordBatch}
    assert [len(b["raw"]) for b in out] == [5, 5, 2]
    assert [r for b in out for r in b["raw"]] == list(TFRecordDataset(files))


def test_parse_after_other_stages_uses_object_arrays(files):
    parser = RecordingParser()
    out = list(TFRecordDataset(files).map(lambda r: r).batch(5).parse(parser, num_parallel_calls=None))
    assert set(parser.inputs) == {np.ndarray}
    assert [r for b in out for r in b["raw"]] == list(TFRecordDataset(files))


def _raw_batches(ds, epoch=0):
    with ds.iterator(epoch=epoch) as it:
        return [list(b["raw"]) if isinstance(b, dict) else list(b) for b in it]


@pytest.mark.parametrize("chunk", [1, 2, 128])
@pytest.mark.parametrize(
    "buffer_size,batch_size,drop",
    [(1, 4, False), (3, 5, False), (7, 2, True), (4, 12, False), (100, 3, False), (5, 1, False)],
)
def test_shuffle_batch_parse_is_batch_native_and_matches_shuffle(
    files, monkeypatch, chunk, buffer_size, batch_size, drop
):
    import tfrx.data._shuffle as shuffle_batch

    monkeypatch.setattr(shuffle_batch, "_CHUNK_RECORDS", chunk)
    for epoch in (0, 1):
        parser = RecordingParser()
        fast = TFRecordDataset(files).shuffle(buffer_size, seed=3).batch(batch_size, drop_remainder=drop).parse(parser)
        slow = TFRecordDataset(files).shuffle(buffer_size, seed=3).batch(batch_size, drop_remainder=drop)
        assert _raw_batches(fast, epoch) == _raw_batches(slow, epoch)
        assert set(parser.inputs) == {ScatteredRecordBatch}  # the records where the shuffle keeps them


def test_shuffle_batch_parse_resumes_and_shares_the_state_format(files, monkeypatch):
    import tfrx.data._shuffle as shuffle_batch

    monkeypatch.setattr(shuffle_batch, "_CHUNK_RECORDS", 2)
    assert_resumes_exactly(
        lambda: TFRecordDataset(files).shuffle(5, seed=9).batch(3).parse(RecordingParser()).prefetch(2), epoch=1
    )
    fast = TFRecordDataset(files).shuffle(5, seed=9).batch(3).parse(RecordingParser(), num_parallel_calls=None)
    slow = TFRecordDataset(files).shuffle(5, seed=9).batch(3).map(RecordingParser().parse)
    for k in range(5):
        for a, b in ((fast, slow), (slow, fast)):
            with a.iterator(epoch=2) as it:
                for _ in range(k):
                    next(it)
                state = it.state_dict()
            with b.iterator(epoch=2) as restored:
                restored.load_state_dict(state)
                rest = [list(x["raw"]) for x in restored]
            with b.iterator(epoch=2) as whole:
                assert rest == [list(x["raw"]) for x in whole][k:]


@pytest.mark.parametrize("parallel", [2, 3])
def test_parse_with_parallel_reads_is_batch_native_and_keeps_the_record_order(files, monkeypatch, parallel):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", 2)
    import tfrx.data._shuffle as shuffle_batch

    monkeypatch.setattr(shuffle_batch, "_CHUNK_RECORDS", 3)
    for epoch in (0, 1):
        parser = RecordingParser()
        fast = TFRecordDataset(files, num_parallel_reads=parallel).shuffle(4, seed=1).batch(5).parse(parser)
        slow = TFRecordDataset(files, num_parallel_reads=parallel).shuffle(4, seed=1).batch(5)
        assert _raw_batches(fast, epoch) == _raw_batches(slow, epoch)
        assert set(parser.inputs) == {ScatteredRecordBatch}  # the records where the shuffle keeps them
    parser = RecordingParser()
    fast = TFRecordDataset(files, num_parallel_reads=parallel).batch(5).parse(parser)
    assert _raw_batches(fast) == _raw_batches(TFRecordDataset(files, num_parallel_reads=parallel).batch(5))
    # the records where the files' readers put them: runs in several pieces, or one piece's buffer
    assert MultiBufferRecordBatch in set(parser.inputs) <= {tfrx.RecordBatch, MultiBufferRecordBatch}
    assert_resumes_exactly(
        lambda: (
            TFRecordDataset(files, num_parallel_reads=parallel)
            .shuffle(4, seed=1)
            .batch(5)
            .parse(RecordingParser())
            .prefetch(2)
        )
    )


def test_parse_single_records(files):
    parser = RecordingParser()
    out = list(TFRecordDataset(files).parse(parser))
    assert to_py(out[0]) == {"n": 3, "raw": b"0-0"}


def test_parse_fast_path_resumes(files):
    assert_resumes_exactly(lambda: TFRecordDataset(files).batch(4).parse(RecordingParser()).prefetch(2))


def test_parse_error_is_annotated(files):
    class Failing:
        def parse(self, records):
            raise tfrx.ParseError("feature 'x' missing", feature="x", record_index=0)

    with pytest.raises(tfrx.ParseError) as info:
        list(TFRecordDataset(files).batch(4).parse(Failing()))
    assert info.value.tfrx_path == files[0]


needs_parser = pytest.mark.skipif(not hasattr(tfrx, "parse_example"), reason="the Example parser is not in this build")


@needs_parser
def test_parse_with_spec_matches_tf(tf):
    spec_tf = {"x": tf.io.FixedLenFeature([], tf.int64), "s": tf.io.FixedLenFeature([], tf.string)}
    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                    "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"v%d" % i])),
                }
            )
        ).SerializeToString()
        for i in range(10)
    ]
    spec = {"x": tfrx.FixedLenFeature([], tfrx.int64), "s": tfrx.FixedLenFeature([], tfrx.string)}
    ours = list(Dataset.from_tensor_slices(np.array(examples, dtype=object)).batch(4).parse(spec))
    theirs = list(
        tf.data.Dataset.from_tensor_slices(examples)
        .batch(4)
        .map(lambda x: tf.io.parse_example(x, spec_tf))
        .as_numpy_iterator()
    )
    assert to_py(ours) == to_py(theirs)
    mapped = list(
        Dataset.from_tensor_slices(np.array(examples, dtype=object)).batch(4).map(lambda x: tfrx.parse_example(x, spec))
    )
    assert to_py(mapped) == to_py(theirs)


def test_shuffle_batch_parse_over_real_files_matches_shuffle(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for f, n in enumerate([300, 1, 0, 517]):
        records = [bytes(rng.integers(0, 256, size=int(rng.integers(0, 300)), dtype=np.uint8)) for _ in range(n)]
        paths.append(str(tmp_path / f"part-{f}.tfrecord"))
        tfrx.write_records(paths[-1], records)
    parser = RecordingParser()
    fast = TFRecordDataset(paths).shuffle(200, seed=5).batch(64).parse(parser)
    slow = TFRecordDataset(paths).shuffle(200, seed=5).batch(64)
    assert _raw_batches(fast) == _raw_batches(slow)
    assert set(parser.inputs) == {ScatteredRecordBatch}  # the records where the shuffle keeps them


def _example_files(tmp_path, counts):
    paths, records = [], []
    for f, n in enumerate(counts):
        recs = [
            tfrx.make_example(
                {"id": [f * 1000 + i], "w": [float(i)] * (i % 3), "s": [b"r%d" % i]}, kinds={"w": "float"}
            ).SerializeToString()
            for i in range(n)
        ]
        paths.append(str(tmp_path / f"ex-{f}.tfrecord"))
        tfrx.write_records(paths[-1], recs)
        records += recs
    return paths, records


def test_shuffle_batch_parse_with_parsers_equals_the_element_wise_chain(tmp_path):
    paths, _ = _example_files(tmp_path, [130, 0, 77, 301])
    spec = {
        "id": tfrx.FixedLenFeature([], tfrx.int64),
        "w": tfrx.VarLenFeature(tfrx.float32),
        "s": tfrx.FixedLenFeature([], tfrx.string),
    }
    expected = [tfrx.parse_example(b, spec) for b in TFRecordDataset(paths).shuffle(100, seed=4).batch(32)]
    assert to_py(list(TFRecordDataset(paths).shuffle(100, seed=4).batch(32).parse(spec))) == to_py(expected)
    seq = tfrx.SequenceExampleParser({"id": tfrx.FixedLenFeature([], tfrx.int64)})
    got_seq = [c["id"].tolist() for c, _, _ in TFRecordDataset(paths).shuffle(50, seed=1).batch(16).parse(seq)]
    assert got_seq == [b["id"].tolist() for b in TFRecordDataset(paths).shuffle(50, seed=1).batch(16).parse(spec)]
    assert_resumes_exactly(lambda: TFRecordDataset(paths).shuffle(64, seed=2).batch(40).parse(spec), steps=range(7))


@pytest.mark.parametrize("buffer_size", [40, 300])
def test_batch_native_shuffle_holds_exactly_the_buffered_records(tmp_path, monkeypatch, buffer_size):
    import tfrx.data._shuffle as shuffle_mod

    rng = np.random.default_rng(1)
    paths, records = [], []
    for f, n in enumerate([700, 0, 900]):
        part = [bytes(rng.integers(0, 256, size=int(rng.integers(0, 2000)), dtype=np.uint8)) for _ in range(n)]
        paths.append(str(tmp_path / f"big-{f}.tfrecord"))
        tfrx.write_records(paths[-1], part)
        records += part
    monkeypatch.setattr(shuffle_mod, "_CHUNK_RECORDS", 16)
    ds = TFRecordDataset(paths, buffer_size=4096).shuffle(buffer_size, seed=7).batch(25)
    seen = []
    with ds._natively_batched().iterator(epoch=0) as it:
        for batch in it:
            seen.append(batch.to_list())
            # The store holds the records read and not yet drawn, and nothing else: at most the buffer
            # and one chunk read ahead, whatever reader buffers they came from.
            live = it._draws.live()
            assert it._store.count == len(live) <= buffer_size + 16
            assert it._store.nbytes == sum(len(records[i]) for i in live.tolist())
    assert it._store.count == 0
    assert sorted(r for b in seen for r in b) == sorted(records)
    assert seen == _raw_batches(ds)  # the order is shuffle's
    assert_resumes_exactly(
        lambda: (
            TFRecordDataset(paths, buffer_size=4096).shuffle(buffer_size, seed=7).batch(25).parse(RecordingParser())
        ),
        steps=[0, 1, 17, 40],
    )


def test_explain_shows_the_batch_native_plan_and_why_not(files, capsys):
    TFRecordDataset(files).shuffle(4, seed=1).batch(5).parse(RecordingParser()).prefetch(2).explain()
    plan = capsys.readouterr().out
    assert "batch-native" in plan.splitlines()[1] and "shuffle(4, seed=1).batch(5), batch-native" in plan
    TFRecordDataset(files).map(lambda r: r).batch(5).parse(RecordingParser()).explain()
    plan = capsys.readouterr().out
    assert "not batch-native: map(<lambda>) makes each record a Python object before batch" in plan.splitlines()[0]
    assert [line.strip() for line in plan.splitlines()[1:]] == ["batch(5)", "map(<lambda>)", "TFRecordDataset(3 files)"]
    TFRecordDataset(files).parse(RecordingParser()).explain()
    assert "its input is not batches of records" in capsys.readouterr().out


@pytest.mark.parametrize("bytes_as", ["bytes", "views"])
def test_the_parser_reads_a_shuffled_batch_where_its_records_lie(tmp_path, bytes_as):
    paths, records = _example_files(tmp_path, [130, 0, 77])
    spec = {
        "id": tfrx.FixedLenFeature([], tfrx.int64),
        "w": tfrx.VarLenFeature(tfrx.float32),
        "s": tfrx.FixedLenFeature([], tfrx.string),
    }
    parser = tfrx.ExampleParser(spec, bytes_as=bytes_as)
    batches = list(TFRecordDataset(paths).shuffle(50, seed=8)._record_batches(16, False))
    assert all(type(b) is ScatteredRecordBatch for b in batches)

    def plain(out):
        return to_py({k: v.tolist() if hasattr(v, "to_numpy") else v for k, v in out.items()})

    got = [plain(parser.parse(b)) for b in batches]  # the records where the shuffle keeps them
    gathered = [tfrx.RecordBatch(b.data, b.starts, b.lengths) for b in batches]  # the same records, gathered
    assert sorted(r for b in gathered for r in b.to_list()) == sorted(records)
    assert got == [plain(parser.parse(b)) for b in gathered] == [plain(parser.parse(b.to_list())) for b in gathered]


def test_a_bad_record_in_a_shuffled_batch_is_named_by_its_place_in_the_batch(tmp_path):
    good = tfrx.make_example({"id": [1]}).SerializeToString()
    path = str(tmp_path / "bad.tfrecord")
    tfrx.write_records(path, [good] * 5 + [b"\xff\xff"] + [good] * 5)
    spec = {"id": tfrx.FixedLenFeature([], tfrx.int64)}
    batch = next(iter(TFRecordDataset(path).shuffle(11, seed=0)._record_batches(11, False)))
    expected = tfrx.RecordBatch(batch.data, batch.starts, batch.lengths)
    with pytest.raises(tfrx.errors.TfrxError) as scattered:
        tfrx.ExampleParser(spec).parse(batch)
    with pytest.raises(tfrx.errors.TfrxError) as contiguous:
        tfrx.ExampleParser(spec).parse(expected)
    assert str(scattered.value) == str(contiguous.value)
    assert "record" in str(scattered.value)
