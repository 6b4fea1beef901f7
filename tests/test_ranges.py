"""tfrx.io.ranges: the planner Ray, Spark and Dask share; every record in exactly one range."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.io.ranges import RecordRange, group_ranges, plan_ranges, read_range, record_boundary, record_bounds


def _write(path, sizes, compression=None) -> str:
    records = [b"%d:" % i + b"x" * int(n) for i, n in enumerate(sizes)]
    tfrx.write_records(str(path), records, compression=compression)
    return str(path)


def _records(ranges, **kw) -> list[bytes]:
    return [r for piece in ranges for batch in read_range(piece, **kw) for r in batch.to_list()]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    rng = np.random.default_rng(7)
    sizes = rng.integers(0, 3000, 1500)  # payloads of very different sizes: cuts land inside records of every size
    return _write(tmp_path_factory.mktemp("ranges") / "big.tfrecord", sizes), sizes


def test_record_boundary_finds_every_header(big):
    path, _ = big
    index = tfrx.build_index(path, index_path=path + ".idx-check")
    size = os.path.getsize(path)
    offsets = index.offsets.tolist()
    for k in (1, 2, 500, 1499):
        o = offsets[k]
        assert record_boundary(path, o, size) == o
        assert record_boundary(path, o - 1, size) == o
        assert record_boundary(path, offsets[k - 1] + 1, size) == o
    assert record_boundary(path, offsets[-1] + 1, size) == size
    assert record_boundary(path, 0, size) == 0


def test_record_bounds_moves_byte_ranges_to_record_boundaries(big):
    path, _ = big
    offsets = tfrx.build_index(path, index_path=path + ".idx-bounds").offsets.tolist()
    size = os.path.getsize(path)
    # an exact range is read as it is, even between record boundaries
    assert record_bounds(RecordRange(path, 5, 17, exact=True)) == (5, 17)
    # a byte range's ends move to the next header; the open end stays open
    assert record_bounds(RecordRange(path, offsets[3] - 1, offsets[9] + 1, exact=False)) == (offsets[3], offsets[10])
    assert record_bounds(RecordRange(path, offsets[3] + 1, None, exact=False)) == (offsets[4], None)
    assert record_bounds(RecordRange(path, 0, size, exact=False)) == (0, size)
    # no header starts inside the range: nothing to read
    assert record_bounds(RecordRange(path, offsets[3] + 1, offsets[4] - 1, exact=False)) is None


@pytest.mark.parametrize("num_ranges", [1, 2, 7, 64])
def test_byte_ranges_deliver_every_record_once_in_order(big, num_ranges):
    path, sizes = big
    ranges = plan_ranges([path], num_ranges=num_ranges, min_split_bytes=1, use_index=False)
    assert len(ranges) == num_ranges
    assert all(not r.exact for r in ranges) or num_ranges == 1
    assert _records(ranges) == list(tfrx.read_records(path))


def test_index_ranges_are_exact_with_row_counts(big, tmp_path):
    _, sizes = big
    path = _write(tmp_path / "indexed.tfrecord", sizes[:900])
    tfrx.build_index(path)
    ranges = plan_ranges([path], num_ranges=5, min_split_bytes=1)
    assert len(ranges) == 5 and all(r.exact for r in ranges)
    assert sum(r.rows or 0 for r in ranges) == 900
    assert [r.first_index for r in ranges] == list(np.cumsum([0] + [r.rows or 0 for r in ranges[:-1]]))
    assert _records(ranges) == list(tfrx.read_records(path))


def test_compressed_files_stay_whole_and_small_files_are_not_split(tmp_path):
    rng = np.random.default_rng(3)
    gz = tmp_path / "a.tfrecord.gz"
    tfrx.write_records(str(gz), [rng.bytes(1000) for _ in range(200)], compression="gzip")  # incompressible
    small = _write(tmp_path / "b.tfrecord", [10] * 5)
    ranges = plan_ranges([str(gz), small], num_ranges=8, min_split_bytes=1000)
    assert ranges == [
        RecordRange(str(gz), nbytes=os.path.getsize(gz)),
        RecordRange(small, nbytes=os.path.getsize(small)),
    ]
    assert _records(ranges) == list(tfrx.read_records([str(gz), small]))
    uncompressed = _write(tmp_path / "c.tfrecord", [1000] * 200)
    assert len(plan_ranges([uncompressed], num_ranges=8, min_split_bytes=1000)) == 8


def test_group_ranges_is_contiguous_and_bounded():
    ranges = [RecordRange(f"f{i}") for i in range(10)]
    groups = group_ranges(ranges, 3)
    assert len(groups) == 3 and [r for g in groups for r in g] == ranges
    assert group_ranges(ranges, 20) == [[r] for r in ranges]


def test_damage_in_a_byte_range_names_where_the_range_starts(big, tmp_path):
    path, sizes = big
    data = bytearray(open(path, "rb").read())
    index = tfrx.build_index(path, index_path=str(tmp_path / "x.idx"))
    victim = int(index.offsets[1200]) + 20  # inside record 1200's payload
    data[victim] ^= 0xFF
    damaged = tmp_path / "damaged.tfrecord"
    damaged.write_bytes(bytes(data))
    ranges = plan_ranges([str(damaged)], num_ranges=4, min_split_bytes=1, use_index=False)
    with pytest.raises(tfrx.CorruptRecordError, match="where this range starts") as e:
        _records(ranges)
    assert e.value.offset == int(index.offsets[1200])


def test_resume_reads_on_from_a_record_of_the_range_and_numbers_records_from_the_range(big, tmp_path):
    """read_range(resume=(offset, k)) starts at the range's k-th record, whose header is at offset (a caller
    that read the first k records another way); batches tell where the next record starts (end_offset)."""
    path, sizes = big
    index = tfrx.build_index(path, index_path=str(tmp_path / "r.idx"))
    whole = tfrx.RecordReader(path).read_all()
    piece = RecordRange(path, int(index.offsets[300]), int(index.offsets[900]), first_index=300)
    got = [r for b in read_range(piece, resume=(int(index.offsets[500]), 200)) for r in b.to_list()]
    assert got == whole[500:900]
    first = next(read_range(piece, batch_size=7, resume=(int(index.offsets[500]), 200)))
    assert first.first_index == 500 and first.end_offset() == int(index.offsets[507])
    data = bytearray(open(path, "rb").read())
    data[int(index.offsets[700]) + 14] ^= 0xFF
    damaged = tmp_path / "damaged.tfrecord"
    damaged.write_bytes(bytes(data))
    byte_range = RecordRange(str(damaged), int(index.offsets[300]) + 5, None, exact=False)
    with pytest.raises(tfrx.CorruptRecordError, match="where this range starts") as e:
        for _ in read_range(byte_range, resume=(int(index.offsets[500]), 199)):
            pass
    assert e.value.offset == int(index.offsets[700]) and e.value.record_index == 399  # counted from record 301
    assert tfrx.RecordBatch(np.zeros(0, np.uint8), [], []).end_offset() is None


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(0, 400), min_size=1, max_size=60), num_ranges=st.integers(1, 9))
def test_any_cut_delivers_each_record_exactly_once(tmp_path_factory, sizes, num_ranges):
    path = _write(tmp_path_factory.mktemp("cut") / "r.tfrecord", sizes)
    ranges = plan_ranges([path], num_ranges=num_ranges, min_split_bytes=1, use_index=False)
    assert _records(ranges) == list(tfrx.read_records(path))
