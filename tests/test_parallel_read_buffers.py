"""Where parallel reads read their files: buffers the caller gives the reader, reused once nothing views them,
and how many open files are read on background threads (the usable cores, not the open files)."""

import gc
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
import tfrx.data._parallel_reads as parallel_reads
from data_helpers import write_fake_files
from tfrx.data import Dataset, TFRecordDataset
from tfrx.data._parallel_reads import read_threads
from tfrx.io._buffer_pool import BufferPool
from tfrx.data._prefetch import PrefetchIterator
from tfrx.testing import assert_resumes_exactly


def _write(path, records):
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(records)
    return str(path)


class _Recording:
    """A pool that hands out fresh arrays and remembers what it was asked for."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int | None]] = []
        self.given: list[np.ndarray] = []

    def take(self, nbytes: int, fresh: int | None = None) -> np.ndarray:
        self.asked.append((nbytes, fresh))
        out = np.empty(max(nbytes, fresh or 0), np.uint8)
        self.given.append(out)
        return out


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_the_reader_reads_into_the_buffers_it_is_given(tmp_path):
    records = [bytes([i % 251]) * (3000 + 7 * i) for i in range(200)]
    path = _write(tmp_path / "a.tfrecord", records)
    pool = _Recording()
    with tfrx.RecordReader(path, buffers=pool, chunk_size=64 << 10) as r:
        batches = list(r.iter_batches(16))
    assert [bytes(x) for b in batches for x in b] == records
    assert pool.asked  # every buffer came from the pool ...
    bases = {_address(g) for g in pool.given}
    for b in batches:  # ... and each batch views one of them (or is a copy of a small tail)
        base = b.data
        while base.base is not None and isinstance(base.base, np.ndarray):
            base = base.base
        assert _address(base) in bases or b.data.nbytes * 16 < 128 << 10


@pytest.mark.parametrize("max_bytes", [50_000, 200_000, 1 << 20])
def test_an_exact_batch_reads_no_further_than_its_byte_limit(tmp_path, max_bytes):
    # Large records: the batch's record limit alone would read the whole file into one buffer.
    records = [bytes([i % 251]) * 40_000 for i in range(100)]
    path = _write(tmp_path / "big.tfrecord", records)
    pool = _Recording()
    got = []
    with tfrx.RecordReader(path, buffers=pool, chunk_size=64 << 10) as r:
        while (b := r.read_batch(4096, max_bytes, exact=True)) is not None:
            assert len(b) == 1 or int(b.lengths.sum()) <= max_bytes
            got += [bytes(x) for x in b]
    assert got == records
    largest = max(n for n, _ in pool.asked)
    # About the byte limit (and room for the largest records), never the 4 MB left in the file.
    assert largest <= max_bytes + 16 * 4096 + 4 * 40_016 + (64 << 10), (largest, max_bytes)


def test_slot_buffers_come_back_only_after_what_holds_them_is_gone():
    pool = BufferPool(max_bytes=1 << 20, mapped=True)
    a = pool.take(1000, 4096)
    a[:] = 7
    view = tfrx.RecordBatch(a[100:200], [0], [10])
    del a
    gc.collect()
    b = pool.take(1000)
    assert pool.allocations == 2  # the first block is still viewed by the batch
    assert (np.asarray(view.data) == 7).all()
    b[:] = 1
    del view, b
    gc.collect()
    assert pool.free_bytes >= 4096
    c = pool.take(2000)  # the smallest free block that fits, reused
    assert pool.allocations == 2 and c.shape[0] >= 2000


def test_slot_buffers_keep_at_most_max_bytes_free():
    pool = BufferPool(max_bytes=10_000, mapped=True)
    held = [pool.take(4000) for _ in range(4)]
    del held
    gc.collect()
    assert pool.free_bytes <= 10_000


@pytest.mark.parametrize("cores,expected", [(1, 0), (2, 0), (3, 1), (4, 2), (16, 4), (64, 4)])
def test_read_threads_are_sized_by_the_usable_cores(monkeypatch, cores, expected):
    monkeypatch.setattr(parallel_reads, "usable_cores", lambda: cores)
    assert read_threads(4) == expected


@pytest.mark.parametrize("cores", [2, 8])
def test_local_files_are_read_on_threads_only_where_cores_are_left(tmp_path, monkeypatch, cores):
    monkeypatch.setattr(parallel_reads, "usable_cores", lambda: cores)
    files = write_fake_files(tmp_path, [300, 300, 300, 300])
    seen = []
    real = parallel_reads.InterleavedBatchIterator._reader

    def spy(self, name):
        reader = real(self, name)
        seen.append(isinstance(reader, PrefetchIterator))
        return reader

    monkeypatch.setattr(parallel_reads.InterleavedBatchIterator, "_reader", spy)
    before = threading.active_count()
    it = iter(TFRecordDataset(files, num_parallel_reads=4).batch(7))
    next(it)
    threads = threading.active_count() - before
    assert seen.count(True) == read_threads(4) == (0 if cores == 2 else 4)
    assert threads <= read_threads(4)
    rest = [r for b in it for r in b]
    assert len(rest) + 7 == 1200


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Files of various sizes (records ``b"<file>-<record>"``) to draw file lists from."""
    return write_fake_files(tmp_path_factory.mktemp("pool"), [0, 1, 2, 4, 9, 17])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    cycle=st.integers(1, 4),
    block=st.integers(1, 4),
    size=st.integers(1, 20),
    piece=st.integers(1, 7),
    threads=st.integers(0, 4),
)
def test_every_mix_of_threads_gives_the_per_record_order(pool, monkeypatch, data, cycle, block, size, piece, threads):
    """Batch-native interleave and num_parallel_reads give tf.data's order however many files read on threads."""
    files = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5))
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", piece)  # pieces end inside runs and batches
    monkeypatch.setattr(parallel_reads, "read_threads", lambda k: min(k, threads))
    # The slow path: tf.data's interleave element by element (no batch-native form, no read-ahead).
    expected = list(Dataset.from_tensor_slices(files).interleave(lambda f: TFRecordDataset(f), cycle, block))
    native = Dataset.from_tensor_slices(files).interleave(TFRecordDataset, cycle, block, num_parallel_calls=cycle)
    batches = native.batch(size)._natively_batched()
    assert batches is not None
    assert [r for b in batches for r in b] == expected
    if block == 1:
        assert [r for b in TFRecordDataset(files, num_parallel_reads=cycle).record_batches(size) for r in b] == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    cycle=st.integers(1, 4),
    block=st.integers(1, 4),
    piece=st.integers(1, 7),
    parallel=st.sampled_from([None, 2]),
)
def test_record_by_record_interleave_of_tfrecord_datasets_reads_batch_native(
    pool, monkeypatch, data, cycle, block, piece, parallel
):
    """files.interleave(TFRecordDataset, ...) element by element takes the path of num_parallel_reads (runs of
    records read batch-native, then split) and gives the element-by-element interleave's order."""
    files = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5))
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", piece)
    made = []
    real = parallel_reads.InterleavedBatchIterator.__init__

    def spy(self, *args, **kwargs):
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(parallel_reads.InterleavedBatchIterator, "__init__", spy)
    expected = list(Dataset.from_tensor_slices(files).interleave(lambda f: TFRecordDataset(f), cycle, block))
    assert not made  # a lambda is not known to read records: element by element
    ds = Dataset.from_tensor_slices(files).interleave(TFRecordDataset, cycle, block, num_parallel_calls=parallel)
    assert list(ds) == expected
    assert made


def test_record_by_record_interleave_of_tfrecord_datasets_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", 2)
    files = write_fake_files(tmp_path, [4, 0, 7, 5, 1])
    assert_resumes_exactly(
        lambda: Dataset.from_tensor_slices(files).interleave(TFRecordDataset, cycle_length=3, block_length=2)
    )


def test_a_sloppy_interleave_of_tfrecord_datasets_stays_element_by_element(tmp_path, monkeypatch):
    files = write_fake_files(tmp_path, [3, 3])
    monkeypatch.setattr(
        parallel_reads.InterleavedBatchIterator, "__init__", lambda *a, **k: pytest.fail("batch-native read")
    )
    sloppy = Dataset.from_tensor_slices(files).interleave(
        TFRecordDataset, cycle_length=2, num_parallel_calls=2, deterministic=False
    )
    assert sorted(sloppy) == sorted(f"{f}-{r}".encode() for f in range(2) for r in range(3))
    by_options = Dataset.from_tensor_slices(files).interleave(TFRecordDataset, cycle_length=2, num_parallel_calls=2)
    assert len(list(by_options.with_options(deterministic=False))) == 6
