import numpy as np
import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def test_shuffle_is_a_permutation_and_seeded():
    ds = Dataset.range(100).shuffle(10, seed=7)
    a = to_py(list(ds.iterator(epoch=0)))
    assert sorted(a) == list(range(100)) and a != list(range(100))
    assert a == to_py(list(Dataset.range(100).shuffle(10, seed=7).iterator(epoch=0)))
    assert a != to_py(list(Dataset.range(100).shuffle(10, seed=8).iterator(epoch=0)))


def test_pinned_orders():
    # A change of order must be deliberate: these orders are part of the contract.
    ds = Dataset.range(10).shuffle(4, seed=42)
    assert to_py(list(ds.iterator(epoch=0))) == [3, 1, 5, 2, 0, 8, 9, 6, 7, 4]
    assert to_py(list(ds.iterator(epoch=1))) == [3, 0, 1, 2, 7, 6, 9, 8, 4, 5]


def test_window_bounds_displacement():
    # An element can only come out after at most buffer_size - 1 later elements were read.
    out = to_py(list(Dataset.range(1000).shuffle(16, seed=1).iterator(epoch=0)))
    for pos, value in enumerate(out):
        assert value <= pos + 15


def test_reshuffle_each_iteration():
    ds = Dataset.range(50).shuffle(50, seed=1)
    assert to_py(list(ds)) != to_py(list(ds))
    fixed = Dataset.range(50).shuffle(50, seed=1, reshuffle_each_iteration=False)
    assert to_py(list(fixed)) == to_py(list(fixed))


def test_reshuffles_under_repeat_like_tf(tf):
    ours = to_py(list(Dataset.range(20).shuffle(20, seed=3).repeat(2)))
    assert sorted(ours[:20]) == sorted(ours[20:]) == list(range(20)) and ours[:20] != ours[20:]
    same = to_py(list(Dataset.range(20).shuffle(20, seed=3, reshuffle_each_iteration=False).repeat(2)))
    assert same[:20] == same[20:]
    theirs = to_py(list(tf.data.Dataset.range(20).shuffle(20, seed=3, reshuffle_each_iteration=False).repeat(2)))
    assert theirs[:20] == theirs[20:]


def test_unseeded_is_random_but_resumable():
    ds = Dataset.range(30).shuffle(8)
    it = ds.iterator(epoch=0)
    [next(it) for _ in range(5)]
    state = it.state_dict()
    rest = to_py(list(it))
    other = Dataset.range(30).shuffle(8).iterator(epoch=0)
    other.load_state_dict(state)
    assert to_py(list(other)) == rest


def test_state_holds_no_elements():
    it = Dataset.range(10_000).map(lambda x: np.zeros(100)).shuffle(1000, seed=1).iterator(epoch=0)
    next(it)
    import json

    assert len(json.dumps(it.state_dict())) < 300


def test_shuffle_resumes_at_every_step():
    assert_resumes_exactly(lambda: Dataset.range(25).shuffle(6, seed=5).batch(4))
    assert_resumes_exactly(lambda: Dataset.range(12).shuffle(5, seed=5).repeat(2), epoch=3)


def test_an_input_error_surfaces_when_the_buffer_needs_that_element():
    # The buffer of 10 is refilled after each output: element 50 is needed for output 41, so the 41
    # outputs before it come first (elements read ahead do not move the error earlier), then the error.
    def check(x):
        if x == 50:
            raise ValueError("bad element")
        return x

    clean = [int(x) for x in Dataset.range(100).shuffle(10, seed=3)]
    it = iter(Dataset.range(100).map(check).shuffle(10, seed=3))
    got = []
    try:
        for x in it:
            got.append(int(x))
    except ValueError as e:
        assert "bad element" in str(e)
    else:
        raise AssertionError("the error was lost")
    assert got == clean[:41]
    import pytest

    with pytest.raises(ValueError):
        list(Dataset.range(100).map(check).shuffle(1000, seed=3))  # the first fill reads element 50


def test_record_store_moves_records_out_by_number_and_refuses_bad_input():
    from tfrx import _native

    store = _native.RecordStore()
    data = np.frombuffer(b"abcdefghij", np.uint8)
    store.add(data, np.array([0, 3, 5], np.int64), np.array([3, 2, 0], np.int64))
    store.add(data, np.array([9], np.int64), np.array([1], np.int64))
    assert (store.end, store.count, store.nbytes) == (4, 4, 6)
    with pytest.raises(ValueError, match="outside"):
        store.add(data, np.array([8], np.int64), np.array([3], np.int64))
    taken = store.take(np.array([3, 0, 2], np.int64))
    assert len(taken) == 3 and taken.nbytes == 4 and taken.lengths().tolist() == [1, 3, 0]
    assert taken.gather().tobytes() == b"jabc"
    assert (store.count, store.nbytes) == (1, 2)
    for ids in ([0], [7], [-1], [1, 1]):  # taken already, never added, a number twice
        with pytest.raises(ValueError, match="not held"):
            store.take(np.array(ids, np.int64))
    assert (store.count, store.nbytes) == (1, 2)  # (a failed take moves nothing)
    assert store.take(np.array([1], np.int64)).gather().tobytes() == b"de"
    out = np.zeros(8, np.uint8)
    assert taken.gather(out) is out and out[:4].tobytes() == b"jabc"
    with pytest.raises(ValueError, match="smaller"):
        taken.gather(np.zeros(3, np.uint8))


def test_record_store_reuses_the_allocations_of_records_that_left():
    from tfrx import _native

    rng = np.random.default_rng(5)
    payload = rng.integers(0, 256, 200_000, dtype=np.uint8)
    lengths = rng.integers(0, 5000, 60).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    store = _native.RecordStore()
    store.add(payload, starts, lengths)
    taken = store.take(np.arange(30, dtype=np.int64))
    assert store.recycled_bytes == 0
    del taken  # its records' allocations go back to the store's recycler
    kept = store.recycled_bytes
    assert kept >= int(lengths[:30].sum())
    later = _native.RecordStore(store)  # shares the recycler: its records take those allocations
    later.add(payload, starts, lengths)
    assert later.recycled_bytes < kept
    expected = [payload[s : s + n].tobytes() for s, n in zip(starts, lengths)]
    got = later.take(np.arange(60)[::-1].copy())
    blob = got.gather().tobytes()
    assert blob == b"".join(expected[::-1])
    rest = store.take(np.arange(30, 60, dtype=np.int64)).gather().tobytes()
    assert rest == b"".join(expected[30:])


def test_record_sets_outliving_their_store_still_hold_their_records():
    from tfrx import _native

    data = np.frombuffer(bytes(range(200)), np.uint8)
    store = _native.RecordStore()
    store.add(data, np.array([0, 50], np.int64), np.array([50, 150], np.int64))
    taken = store.take(np.array([1, 0], np.int64))
    del store
    assert taken.gather().tobytes() == bytes(range(50, 200)) + bytes(range(50))


@pytest.mark.parametrize("parallel", [1, 2])
@pytest.mark.parametrize("buffer_size,batch_size", [(1, 1), (7, 3), (50, 16), (300, 64), (5000, 32)])
def test_the_batch_native_store_holds_no_more_than_the_window(tmp_path, parallel, buffer_size, batch_size):
    """Memory in proportion to the window: the store never holds more records (or bytes) than ``buffer_size``
    of them, however large the reader's pieces, and the batches still hold every record once; a batch's
    records still enter the store together."""
    import tfrx
    from tfrx.data import TFRecordDataset

    rng = np.random.default_rng(3)
    records = [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes() for n in rng.integers(1, 400, 900)]
    paths = []
    for k in range(2):
        paths.append(str(tmp_path / f"part-{k}.tfrecord"))
        with tfrx.TFRecordWriter(paths[-1]) as w:
            w.write_many(records[k::2])
    largest = sorted(len(r) for r in records)[-buffer_size:]
    ds = TFRecordDataset(paths, num_parallel_reads=parallel).shuffle(buffer_size, seed=4).batch(batch_size)
    it = iter(ds._natively_batched())
    reads = []
    read = it._read_chunk
    it._read_chunk = lambda wanted: reads.append(wanted) or read(wanted)
    got = []
    batches = 0
    for batch in it:
        store = it._store
        assert store.count <= buffer_size and store.nbytes <= sum(largest)
        got += list(batch)
        batches += 1
    assert sorted(got) == sorted(records)
    # A batch's records enter in a read or two (where a piece ends), not one read per draw.
    pieces = -(-len(records) // 1024) + 2
    assert len(reads) <= 2 * batches + 2 * pieces + buffer_size // 1024 + 2, (len(reads), batches)


def test_shuffle_reads_its_pieces_in_small_reads_unless_the_user_chose_a_size(tmp_path, monkeypatch):
    # The batch-native shuffle copies each piece into its store at once, so the reader's buffer is pure
    # overhead: without a user's buffer_size the pieces are read 1 MiB at a time, with one the user's size holds.
    import tfrx
    from tfrx.data import _tfrecord
    from tfrx.data._files import PIECE_READ_BYTES

    path = str(tmp_path / "r.tfrecord")
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(tfrx.encode_examples({"x": np.arange(300, dtype=np.int64)}))
    seen = []
    real = _tfrecord.FilesIterator

    def spy(files, options, *args, **kwargs):
        seen.append(options.get("buffer_size"))
        return real(files, options, *args, **kwargs)

    monkeypatch.setattr(_tfrecord, "FilesIterator", spy)
    spec = {"x": tfrx.FixedLenFeature([], tfrx.int64)}
    for buffer_size, expected in ((None, PIECE_READ_BYTES), (3 << 20, 3 << 20)):
        seen.clear()
        ds = tfrx.data.TFRecordDataset(path, buffer_size=buffer_size).shuffle(100, seed=1).batch(32).parse(spec)
        got = np.concatenate([np.asarray(b["x"]) for b in ds])
        assert sorted(got.tolist()) == list(range(300))
        assert seen == [expected]
