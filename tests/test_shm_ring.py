"""tfrx.integrations._shm_ring: batches through a reused ring of shared-memory slots (what DataLoader workers send)."""

import collections
import gc
import os
import pickle

import numpy as np
import pytest

from tfrx.integrations import _shm_ring as shm_ring
from tfrx.parsing._arrays import RaggedArray, SparseArray
from tfrx.integrations._shm_ring import Ring, unpack


def _roundtrip(packed):
    return pickle.loads(pickle.dumps(packed))


def _batch(seed=0, rows=4):
    rng = np.random.default_rng(seed)
    return {
        "ids": rng.integers(0, 1000, size=(rows, 7)),
        "mask": rng.integers(0, 2, size=(rows, 7)).astype(np.int32),
        "w": rng.random((rows, 3), dtype=np.float32),
        "flag": np.ones(rows, dtype=bool),
        "empty": np.zeros((rows, 0), np.float64),
        "text": np.array([b"a", b"bc", b"", b"d"][:rows], dtype=object),
        "meta": ("x", np.arange(3, dtype=np.uint16)),
    }


def _assert_same(a, b):
    assert type(a) is type(b) or isinstance(b, np.ndarray)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def test_round_trip_views_the_slot_and_frees_it_on_release():
    ring = Ring(1 << 16, slots=2)
    try:
        batch = _batch()
        got = _roundtrip(ring.pack(batch))
        _assert_same(batch, got)
        assert got["ids"].flags.writeable and got["ids"].ctypes.data % 64 == 0
        # The numeric arrays view the ring's file; the bytes came back as an object array of bytes.
        assert got["text"].dtype == object and all(type(v) is bytes for v in got["text"])
        second = _roundtrip(ring.pack(_batch(1)))
        assert ring.pack(_batch(2), wait=0.0) is None  # both slots are held
        del got
        gc.collect()
        third = ring.pack(_batch(3), wait=0.0)
        assert third is not None
        _assert_same(_batch(1), second)  # the held batch was not overwritten
        _assert_same(_batch(3), _roundtrip(third))
    finally:
        ring.close()


def test_a_held_view_keeps_its_slot():
    ring = Ring(1 << 16, slots=1)
    try:
        got = _roundtrip(ring.pack(_batch()))
        row = got["ids"][1]  # a view of a view still holds the slot
        del got
        gc.collect()
        assert ring.pack(_batch(5), wait=0.0) is None
        np.testing.assert_array_equal(row, _batch()["ids"][1])
        del row
        gc.collect()
        assert ring.pack(_batch(5), wait=0.0) is not None
    finally:
        ring.close()


def test_too_large_and_nothing_to_pack():
    ring = Ring(4096, slots=2)
    try:
        with pytest.raises(ValueError, match="does not fit"):
            ring.pack({"x": np.zeros(10_000)})
        assert ring.pack({"s": "text", "n": 3, "u": np.array(["a"])}) is None
        big_endian = np.arange(4, dtype=">i4")
        mixed = np.array([b"x", "y", None], dtype=object)
        packed = ring.pack({"be": big_endian, "le": np.arange(4), "mixed": mixed})
        assert packed.size == 64  # only the native-order array took a place in the slot
        got = _roundtrip(packed)
        assert got["be"].tolist() == [0, 1, 2, 3] and got["be"].dtype == big_endian.dtype  # travelled by value
        assert got["mixed"].tolist() == [b"x", "y", None]  # not all bytes: by value too
    finally:
        ring.close()


def test_bytes_arrays_keep_shape_and_values_and_free_the_slot():
    ring = Ring(1 << 16, slots=1)
    try:
        words = np.array([[b"", b"a\x00b"], [b"x" * 300, b"\xff"], [b"q", b""]], dtype=object)
        packed = ring.pack({"w": words, "t": words[:, 1], "none": np.empty((0, 3), dtype=object)})
        got = _roundtrip(packed)
        assert got["w"].shape == (3, 2) and got["w"].tolist() == words.tolist()
        assert got["t"].tolist() == [b"a\x00b", b"\xff", b""]  # a strided view of another array
        assert got["none"].shape == (0, 3) and got["none"].dtype == object
        del got
        gc.collect()  # no numeric array views the slot: it was free as soon as it was unpacked
        assert ring.pack({"w": words}, wait=0.0) is not None
    finally:
        ring.close()


def _packed_columns(columns):
    """Columns of bytes packed as a slot holds them: (buffer, offsets_at, values_at, counts)."""
    buf, offsets_at, values_at = bytearray(), [], []
    for column in columns:
        offsets = np.cumsum([0] + [len(v) for v in column]).astype(np.int64)
        offsets_at.append(len(buf))
        buf += offsets.tobytes()
        values_at.append(len(buf))
        buf += b"".join(column)
    return buf, *(np.array(x, np.int64) for x in (offsets_at, values_at, [len(c) for c in columns]))


def test_bytes_columns_makes_every_column_in_one_call():
    from tfrx import _native

    rng = np.random.default_rng(3)
    codes = [f"{int(x):08x}".encode() for x in rng.integers(0, 1 << 32, 300)]
    columns = [codes, [codes[0]] * 300, [b"", b"\x00", b"long" * 100], []]
    buf, offsets_at, values_at, counts = _packed_columns(columns)
    for _ in range(3):  # the cache of short values and each column's hit rate carry over between calls
        got = _native.bytes_columns(buf, offsets_at, values_at, counts)
        assert [a.tolist() for a in got] == columns
        assert all(a.dtype == object and a.ndim == 1 for a in got)


@pytest.mark.parametrize(
    "damage",
    [
        lambda o, v, n: (o, v, n + np.array([0, 1])),  # more values than offsets in the buffer
        lambda o, v, n: (o + np.array([0, 8]), v, n),  # offsets not starting at 0
        lambda o, v, n: (o, v + np.array([0, 1 << 20]), n),  # values past the end
        lambda o, v, n: (o, v, -n),
        lambda o, v, n: (o[:1], v, n),
    ],
)
def test_bytes_columns_refuses_spans_outside_the_buffer(damage):
    from tfrx import _native

    buf, offsets_at, values_at, counts = _packed_columns([[b"ab", b"c"], [b"xyz"]])
    with pytest.raises(ValueError, match="bytes_columns"):
        _native.bytes_columns(buf, *damage(offsets_at, values_at, counts))


def test_bytes_columns_refuses_decreasing_offsets():
    from tfrx import _native

    buf, offsets_at, values_at, counts = _packed_columns([[b"ab", b"c", b"d"]])
    buf[8:16] = np.int64(3).tobytes()  # offsets 0, 3, 1, 4: decreasing
    buf[16:24] = np.int64(1).tobytes()
    with pytest.raises(ValueError, match="not increasing"):
        _native.bytes_columns(buf, offsets_at, values_at, counts)


Point = collections.namedtuple("Point", "x y")


def test_structures_keep_their_types():
    ring = Ring(1 << 16)
    try:
        shared = np.arange(5)
        sparse = SparseArray.from_row_splits(np.array([b"a", b"b", b"c"], dtype=object), [np.array([0, 2, 2, 3])])
        ragged = RaggedArray(np.arange(6, dtype=np.float32), np.array([0, 1, 6]))
        element = (Point(np.arange(3), np.float32(2.5)), {"a": np.eye(2), "s": sparse, "r": ragged}, [shared, shared])
        got = _roundtrip(ring.pack(element))
        assert type(got[0]) is Point
        np.testing.assert_array_equal(got[0].x, np.arange(3))
        assert got[0].y == np.float32(2.5)
        np.testing.assert_array_equal(got[1]["a"], np.eye(2))
        assert got[1]["s"] == sparse and got[1]["s"].values.tolist() == [b"a", b"b", b"c"]
        np.testing.assert_array_equal(got[1]["r"].values, ragged.values)
        np.testing.assert_array_equal(got[1]["r"].row_splits, ragged.row_splits)
        assert got[2][0] is got[2][1]  # an array met twice is placed once, as pickle keeps identity
    finally:
        ring.close()


def test_the_file_is_unlinked_once_mapped_and_never_left_behind():
    ring = Ring(1 << 16)
    path = ring.path
    first = _roundtrip(ring.pack(_batch()))
    assert os.path.exists(path)  # the worker learns of the mapping on its next batch
    second = _roundtrip(ring.pack(_batch(1)))
    assert not os.path.exists(path)
    ring.close()
    _assert_same(_batch(), first)  # the mapping outlives the name and the worker's close
    _assert_same(_batch(1), second)
    assert shm_ring._attached[path][1][shm_ring._CLOSED] == 1  # dropped from the cache on the next attach


def test_unpack_of_a_ring_never_mapped_is_unlinked_at_close_only_when_mapped():
    ring = Ring(1 << 16)
    packed = ring.pack(_batch())
    ring.close()
    assert os.path.exists(ring.path)  # a batch may still be in the queue: the name stays until the process exits
    _assert_same(_batch(), unpack(*packed.__reduce__()[1]))
    os.unlink(ring.path)


def test_slots_must_be_sane():
    with pytest.raises(ValueError, match="slots"):
        Ring(4096, slots=0)


def test_views_come_back_as_the_object_arrays_they_stand_for():
    from tfrx.parsing._bytes_array import BytesArray
    from tfrx.integrations._shm_ring import views_to_objects

    data = np.frombuffer(b"xxhelloworld!", np.uint8)
    views = BytesArray(data, np.array([[2, 7], [12, 0]]), np.array([[5, 5], [1, 0]]))
    expected = np.array([[b"hello", b"world"], [b"!", b""]], dtype=object)
    sparse = SparseArray.from_row_splits(BytesArray(data, np.array([2, 12]), np.array([5, 1])), [np.array([0, 1, 2])])
    element = {"v": views, "s": sparse, "n": np.arange(2)}
    ring = Ring(1 << 16)
    try:
        kept = _roundtrip(ring.pack(element))  # by default a BytesArray stays one
        assert type(kept["v"]) is BytesArray and kept["v"].tolist() == expected.tolist()
        for got in (_roundtrip(ring.put(shm_ring.prepare(element, views_as_objects=True))), views_to_objects(element)):
            assert type(got["v"]) is np.ndarray and got["v"].dtype == object and got["v"].shape == (2, 2)
            assert got["v"].tolist() == expected.tolist()
            assert type(got["s"].values) is np.ndarray and got["s"].values.tolist() == [b"hello", b"!"]
            np.testing.assert_array_equal(got["n"], np.arange(2))
    finally:
        ring.close()


def test_views_and_object_arrays_mixed_keep_their_places():
    from tfrx.parsing._bytes_array import BytesArray

    data = np.frombuffer(b"abcdefgh", np.uint8)
    element = {
        "a": BytesArray(data, np.array([0, 3]), np.array([3, 2])),
        "o": np.array([b"x", b"", b"yz"], dtype=object),
        "b": BytesArray(data, np.array([7]), np.array([1])),
        "c": np.array([b"q"], dtype=object),
    }
    ring = Ring(1 << 16, slots=1)
    try:
        got = _roundtrip(ring.put(shm_ring.prepare(element, views_as_objects=True)))
        assert {k: v.tolist() for k, v in got.items()} == {
            "a": [b"abc", b"de"],
            "o": [b"x", b"", b"yz"],
            "b": [b"h"],
            "c": [b"q"],
        }
        del got
        only = {"v": BytesArray(data, np.array([1]), np.array([2]))}  # no array to copy, one column to pack
        assert _roundtrip(ring.put(shm_ring.prepare(only, views_as_objects=True)))["v"].tolist() == [b"bc"]
    finally:
        ring.close()


def test_pack_span_columns_checks_its_spans_and_room():
    from tfrx import _native

    data = np.frombuffer(b"abcdef", np.uint8)
    starts, lengths = [np.array([0, 2], np.int64)], [np.array([2, 4], np.int64)]
    size = _native.span_columns_size(lengths)
    assert size == 64 + 64  # three offsets, then six bytes, each part aligned
    out = np.zeros(size, np.uint8)
    table = _native.pack_span_columns(out, 0, [data], starts, lengths)
    assert table.tolist() == [0, 64, 2]
    assert out[:24].view(np.int64).tolist() == [0, 2, 6] and bytes(out[64:70]) == b"abcdef"
    with pytest.raises(ValueError, match="do not fit"):
        _native.pack_span_columns(np.zeros(size - 1, np.uint8), 0, [data], starts, lengths)
    with pytest.raises(ValueError):
        _native.pack_span_columns(out, 0, [data], starts, [np.array([2, 5], np.int64)])  # past the data's end


def _parsed_records(rows=6):
    import tfrx

    spec = {
        "ids": tfrx.FixedLenFeature([4], tfrx.int64),
        "w": tfrx.FixedLenFeature([2], tfrx.float32),
        "name": tfrx.FixedLenFeature([], tfrx.string),
        "tags": tfrx.VarLenFeature(tfrx.int64),
    }
    records = [
        tfrx.make_example(
            {"ids": [i, i + 1, i + 2, i + 3], "w": [i / 2, -i], "name": [b"n%d" % i], "tags": list(range(1 + i % 3))}
        ).SerializeToString()
        for i in range(rows)
    ]
    return tfrx.ExampleParser(spec), records


def test_a_batch_parsed_into_a_leased_slot_equals_the_ordinary_batch_and_is_not_copied():
    parser, records = _parsed_records()
    expected = parser.parse(records)
    ring = Ring(1 << 16, slots=2)
    try:
        arena = ring.lease()
        with arena:
            batch = parser.parse(records)
        del arena
        prepared = shm_ring.prepare(batch, ring=ring)
        assert prepared.slot is not None and prepared.start > 0
        # Only what the parse did not write into the slot is copied: the bytes column and the sparse parts.
        copied = [x for x, _ in prepared.pieces]
        assert not any(np.shares_memory(x, batch["ids"]) or np.shares_memory(x, batch["w"]) for x in copied)
        got = _roundtrip(ring.put(prepared))
        assert got.keys() == expected.keys()
        for key in ("ids", "w", "name"):
            _assert_same(expected[key], got[key])
        assert got["tags"] == expected["tags"]
    finally:
        ring.close()


def test_leased_slots_are_recycled_and_never_handed_out_twice():
    parser, records = _parsed_records()
    ring = Ring(1 << 16, slots=2)
    try:
        first, second = ring.lease(), ring.lease()
        assert first is not None and second is not None and ring.lease() is None  # both leased
        assert ring.pack({"x": np.arange(3)}, wait=0.0) is None  # nor does a copy take a leased slot
        with first:
            batch = parser.parse(records)
        del first
        gc.collect()
        assert ring.lease() is None  # the batch's arrays still hold the first slot
        got = _roundtrip(ring.put(shm_ring.prepare(batch, ring=ring)))
        del batch
        gc.collect()
        assert ring.lease() is None  # sent: the slot is the receiver's until it lets go
        del got
        gc.collect()
        again = ring.lease()
        assert again is not None  # released by the receiver
        del second, again
        gc.collect()
        assert ring.lease() is not None  # a lease dropped unused frees its slot
        ring.close()
        assert ring.lease() is None  # a closed ring lends nothing
    finally:
        ring.close()


def test_outputs_that_do_not_fit_a_leased_slot_come_from_the_pool():
    parser, records = _parsed_records(rows=200)
    expected = parser.parse(records)
    ring = Ring(4096, slots=1)  # "w" (1,600 bytes) fits the slot, "ids" (6,400) does not
    try:
        arena = ring.lease()
        with arena:
            batch = parser.parse(records)
        assert arena.used <= arena.size == ring.slot_bytes
        del arena
        for key in ("ids", "w", "name"):
            _assert_same(expected[key], batch[key])
        prepared = shm_ring.prepare(batch, ring=ring)
        copied = [x for x, _ in prepared.pieces]
        assert prepared.slot is not None
        assert any(np.shares_memory(x, batch["ids"]) for x in copied)
        assert not any(np.shares_memory(x, batch["w"]) for x in copied)
        assert prepared.size > ring.slot_bytes  # what the worker does then: all of it into a larger ring
        with pytest.raises(ValueError, match="does not fit"):
            ring.put(prepared)
        assert shm_ring.prepare(batch).slot is None
    finally:
        ring.close()


def test_an_output_arena_is_active_only_inside_its_with_block():
    from tfrx import _native

    parser, records = _parsed_records()
    buffer = bytearray(1 << 16)
    arena = _native.OutputArena(buffer, 128)
    with arena:
        inside = parser.parse(records)
        with pytest.raises(ValueError, match="already active"):
            with _native.OutputArena(bytearray(64)):
                pass
    outside = parser.parse(records)
    region = np.frombuffer(buffer, np.uint8)
    assert np.shares_memory(inside["ids"], region) and not np.shares_memory(outside["ids"], region)
    assert arena.used > 128
    del arena, region
    buffer[:] = bytes(len(buffer))  # the arrays view the buffer itself
    assert not inside["ids"].any()
    with pytest.raises(ValueError, match="past the end"):
        _native.OutputArena(bytearray(8), 9)
