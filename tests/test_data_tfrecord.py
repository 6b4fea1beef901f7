"""TFRecordDataset: file order, parallel reads, sharding, positions, record batches.

Small TFRecord files whose records name their file and index
(``data_helpers.write_fake_files``) make orders easy to read; the tests at
the end read files written by TensorFlow.
"""

import numpy as np
import pytest

import tfrx
import tfrx.data._parallel_reads as parallel_reads
from data_helpers import OpenedFiles, write_fake_files
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset, TFRecordDataset
from tfrx.data._shard import shard_pipeline


@pytest.fixture
def fake_reader(monkeypatch):
    return OpenedFiles(monkeypatch)


def _records(sizes, order=None):
    return [f"{f}-{r}".encode() for f in (order or range(len(sizes))) for r in range(sizes[f])]


def test_sequential_order(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [3, 0, 2])
    assert list(TFRecordDataset(files)) == _records([3, 0, 2])
    assert list(TFRecordDataset(str(tmp_path / "part-*.tfrecord"))) == _records([3, 0, 2])


def test_parallel_reads_interleave_records_one_by_one(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [3, 1, 2])
    out = list(TFRecordDataset(files, num_parallel_reads=2))
    # tf.data order (checked with TensorFlow): cycle_length=2, block_length=1 over the files.
    assert out == [b"0-0", b"1-0", b"0-1", b"0-2", b"2-0", b"2-1"]


def test_list_files_source(tmp_path, fake_reader):
    write_fake_files(tmp_path, [2, 2, 2])
    ds = TFRecordDataset(Dataset.list_files(str(tmp_path / "*.tfrecord"), seed=1))
    assert sorted(ds) == sorted(_records([2, 2, 2]))


@pytest.mark.parametrize("parallel", [None, 2])
def test_resume_at_every_step(tmp_path, fake_reader, parallel):
    files = write_fake_files(tmp_path, [4, 0, 3, 5])
    assert_resumes_exactly(lambda: TFRecordDataset(files, num_parallel_reads=parallel))
    assert_resumes_exactly(
        lambda: (
            TFRecordDataset(files, num_parallel_reads=parallel)
            .shuffle(4, seed=1)
            .map(lambda r: r.upper())
            .batch(3)
            .prefetch(2)
        )
    )


def test_state_names_file_and_position(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [4, 4])
    it = iter(TFRecordDataset(files))
    for _ in range(6):
        next(it)
    from tfrx.data._provenance import Provenance

    assert it.provenance(it.state_dict()) == Provenance(files[1], 1)


def test_map_error_names_file_and_record(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [3, 3])

    def fail_on(record):
        if record == b"1-2":
            raise ValueError("cannot use this record")
        return record

    for parallel in (None, 2):
        with pytest.raises(ValueError, match="cannot use") as info:
            list(TFRecordDataset(files).map(fail_on, num_parallel_calls=parallel))
        assert info.value.tfrx_path == files[1] and info.value.tfrx_record_index == 2
        assert any(files[1] in note and "record 2" in note for note in info.value.__notes__)


def test_record_batches_cross_files_exactly(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [5, 2, 4])
    batches = list(TFRecordDataset(files).record_batches(3))
    assert all(isinstance(b, tfrx.RecordBatch) for b in batches)
    assert [len(b) for b in batches] == [3, 3, 3, 2]
    assert [r for b in batches for r in b] == _records([5, 2, 4])
    assert [len(b) for b in TFRecordDataset(files).record_batches(3, drop_remainder=True)] == [3, 3, 3]


def test_record_batches_resume(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [5, 2, 4])
    assert_resumes_exactly(lambda: TFRecordDataset(files).record_batches(3).map(list))
    assert_resumes_exactly(lambda: TFRecordDataset(files, num_parallel_reads=2).record_batches(2).map(list))


@pytest.mark.parametrize("sizes", [[3, 1, 2], [5, 0, 3, 7, 1, 0, 4], [0, 0, 2], [9], [2, 6, 1, 1, 8]])
@pytest.mark.parametrize("parallel", [2, 3, 5])
def test_parallel_record_batches_follow_the_record_interleave(tmp_path, fake_reader, monkeypatch, sizes, parallel):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", 2)  # pieces end inside batches and rounds
    files = write_fake_files(tmp_path, sizes)
    # The reference: interleave over the files record by record (checked against tf.data in test_data_interleave).
    expected = list(
        Dataset.from_tensor_slices(files).interleave(TFRecordDataset, cycle_length=parallel, block_length=1)
    )
    assert list(TFRecordDataset(files, num_parallel_reads=parallel)) == expected
    for size in (1, 3, 4, 100):
        batches = list(TFRecordDataset(files, num_parallel_reads=parallel).record_batches(size))
        assert all(isinstance(b, tfrx.RecordBatch) for b in batches)
        assert [len(b) for b in batches[:-1]] == [size] * (len(batches) - 1)
        assert [r for b in batches for r in b] == expected
        dropped = list(TFRecordDataset(files, num_parallel_reads=parallel).record_batches(size, drop_remainder=True))
        assert [r for b in dropped for r in b] == expected[: len(expected) // size * size]


@pytest.mark.parametrize("parallel", [2, 3])
def test_parallel_record_batches_resume(tmp_path, fake_reader, monkeypatch, parallel):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", 2)
    files = write_fake_files(tmp_path, [4, 0, 3, 5, 1])
    assert_resumes_exactly(lambda: TFRecordDataset(files, num_parallel_reads=parallel).record_batches(3).map(list))
    assert_resumes_exactly(
        lambda: TFRecordDataset(files, num_parallel_reads=parallel).shuffle(4, seed=2).batch(3).map(list)
    )


@pytest.mark.parametrize(
    "sizes,shards", [([3, 1, 4, 1, 5], 2), ([3, 1, 4, 1, 5], 4), ([7], 3), ([2, 2], 4), ([5, 0, 3], 3)]
)
def test_sharding_partitions_records(tmp_path, fake_reader, sizes, shards):
    files = write_fake_files(tmp_path, sizes)
    ds = TFRecordDataset(files).map(lambda r: r)
    seen = []
    for i in range(shards):
        seen += list(shard_pipeline(ds, [(shards, i)]))
    assert sorted(seen) == sorted(_records(sizes))


def test_shards_by_files_when_there_are_enough(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [2, 2, 2, 2])
    list(shard_pipeline(TFRecordDataset(files), [(2, 1)]))
    assert fake_reader.opened == [files[1], files[3]]
    fake_reader.opened = []
    list(shard_pipeline(TFRecordDataset(files[:1]), [(2, 1)]))
    assert fake_reader.opened == [files[0]]  # by records: the one file, every other record


def test_bad_compression_type():
    with pytest.raises(ValueError, match="compression_type"):
        TFRecordDataset([], compression_type="LZ4")


# --------------------------------------------------------------------------- real files
needs_reader = pytest.mark.skipif(not hasattr(tfrx.io, "RecordReader"), reason="the record reader is not in this build")


def _write_tf_files(tf, tmp_path, sizes, compression=None):
    paths = []
    for f, n in enumerate(sizes):
        p = str(tmp_path / f"data-{f}.tfrecord")
        with tf.io.TFRecordWriter(p, options=compression) as w:
            for r in range(n):
                w.write(b"file %d record %d " % (f, r) + bytes(r % 7) * 10)
        paths.append(p)
    return paths


@needs_reader
@pytest.mark.parametrize("parallel", [None, 3])
@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_real_files_match_tf(tf, tmp_path, parallel, compression):
    paths = _write_tf_files(tf, tmp_path, [5, 0, 7, 3], compression)
    ours = list(TFRecordDataset(paths, compression_type=compression, num_parallel_reads=parallel))
    theirs = list(
        tf.data.TFRecordDataset(paths, compression_type=compression, num_parallel_reads=parallel).as_numpy_iterator()
    )
    assert ours == theirs


@needs_reader
@pytest.mark.parametrize("parallel", [2, 3, 6])
def test_real_parallel_record_batches_match_tf(tf, tmp_path, monkeypatch, parallel):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", 3)
    paths = _write_tf_files(tf, tmp_path, [5, 0, 7, 3, 1, 9])
    theirs = list(tf.data.TFRecordDataset(paths, num_parallel_reads=parallel).as_numpy_iterator())
    for size in (1, 4, 64):
        batches = list(TFRecordDataset(paths, num_parallel_reads=parallel).record_batches(size))
        assert [r for b in batches for r in b] == theirs


@needs_reader
def test_real_files_resume_at_every_step(tf, tmp_path):
    paths = _write_tf_files(tf, tmp_path, [6, 2, 5])
    assert_resumes_exactly(lambda: TFRecordDataset(paths).shuffle(4, seed=3).batch(2).prefetch(2))
    assert_resumes_exactly(lambda: TFRecordDataset(paths).record_batches(4).map(list))


@needs_reader
def test_real_record_batches_hold_records(tf, tmp_path):
    paths = _write_tf_files(tf, tmp_path, [6, 2, 5])
    flat = [r for b in TFRecordDataset(paths).record_batches(4) for r in b]
    assert flat == list(tf.data.TFRecordDataset(paths).as_numpy_iterator())
    assert np.all([isinstance(r, bytes) for r in flat])


@needs_reader
def test_real_files_shard_and_take_match_tf(tf, tmp_path):
    paths = _write_tf_files(tf, tmp_path, [5, 4, 6])
    ours = list(TFRecordDataset(paths).shard(3, 1).skip(1).take(3))
    theirs = list(tf.data.TFRecordDataset(paths).shard(3, 1).skip(1).take(3).as_numpy_iterator())
    assert ours == theirs


def test_abandoned_parallel_reads_stop_their_threads(tmp_path, fake_reader, monkeypatch):
    import gc
    import time

    import tfrx.data._parallel_reads as parallel_reads

    monkeypatch.setattr(parallel_reads, "read_threads", lambda cycle_length: cycle_length)  # as on many cores
    # Files far bigger than what the threads read ahead, so they are still running when abandoned.
    files = []
    for f in range(3):
        files.append(str(tmp_path / f"big-{f}.tfrecord"))
        with tfrx.TFRecordWriter(files[-1]) as w:
            w.write_many([b"%d-%d" % (f, r) + bytes(4096) for r in range(3000)])
    from data_helpers import working_threads as working

    baseline = working()
    it = iter(TFRecordDataset(files, num_parallel_reads=3))
    for _ in range(10):
        next(it)
    assert working() > baseline
    del it
    deadline = time.monotonic() + 10
    while working() > baseline and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.02)
    assert working() == baseline


def test_interleave_of_tfrecord_datasets_over_file_names(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [3, 2])
    names = Dataset.from_tensor_slices(files)  # bytes elements, as in tf.data
    out = list(names.interleave(lambda f: TFRecordDataset(f), cycle_length=2, num_parallel_calls=2))
    assert out == [b"0-0", b"1-0", b"0-1", b"1-1", b"0-2"]


def test_parallel_interleave_of_tfrecord_datasets_resumes(tmp_path, fake_reader):
    files = write_fake_files(tmp_path, [7, 0, 5, 9])
    assert_resumes_exactly(
        lambda: Dataset.from_tensor_slices(files).interleave(
            lambda f: TFRecordDataset(f), cycle_length=3, block_length=2, num_parallel_calls=3
        )
    )
    sloppy = Dataset.from_tensor_slices(files).interleave(
        lambda f: TFRecordDataset(f), cycle_length=3, num_parallel_calls=3, deterministic=False
    )
    assert sorted(sloppy) == sorted(f"{f}-{r}".encode() for f, n in enumerate([7, 0, 5, 9]) for r in range(n))
