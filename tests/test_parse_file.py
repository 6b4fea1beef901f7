"""ParserCore.parse_file: a local uncompressed file read, checked and parsed piece by piece in one call.

Everything it returns must equal reading the records and parsing them as a
batch; on damage, a cut-short file, a record that does not parse or a failed
read it returns no columns and says which, so that the caller reads the range
with a RecordReader (which names file, record and byte offset).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
from tfrx.integrations._arrow_scan import scan  # noqa: E402
from tfrx.integrations import arrow as ta  # noqa: E402

SPEC = {
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "pair": tfrx.FixedLenFeature([2], tfrx.float32),
    "name": tfrx.FixedLenFeature([], tfrx.string, default_value=b"?"),
    "tags": tfrx.VarLenFeature(tfrx.string),
    "scores": tfrx.RaggedFeature(tfrx.float32),
    "counts": tfrx.VarLenFeature(tfrx.int64),
}


KINDS = {"id": "int64", "pair": "float", "name": "bytes", "tags": "bytes", "scores": "float", "counts": "int64"}


def _records(n: int, seed: int = 0, long_every: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        features = {
            "id": [i],
            "pair": rng.random(2).astype(np.float32).tolist(),
            "tags": [b"t%d" % k * int(rng.integers(1, 4)) for k in range(int(rng.integers(0, 4)))],
            "scores": rng.random(int(rng.integers(0, 3))).astype(np.float32).tolist(),
            "counts": rng.integers(0, 1 << 40, int(rng.integers(0, 5))).tolist(),
        }
        if i % 3:
            features["name"] = [b"n" * int(rng.integers(0, 40)) + b"%d" % i]
        if long_every and i % long_every == 0:
            features["name"] = [bytes(rng.integers(0, 256, 3000, dtype=np.uint8))]  # longer than small pieces
        out.append(tfrx.make_example(features, kinds=KINDS).SerializeToString())
    return out


def _write(path, records) -> str:
    tfrx.write_records(str(path), records)
    return str(path)


def _parse_file(parser, path, offset=0, end=None, max_records=1 << 30, piece=512 << 10):
    end = os.path.getsize(path) if end is None else end
    fd = os.open(path, os.O_RDONLY)
    try:
        return parser._core.parse_file(fd, offset, end, max_records, piece)
    finally:
        os.close(fd)


def _same(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        a, b = got[key], value
        if isinstance(b, tfrx.SparseArray):
            np.testing.assert_array_equal(a.indices, b.indices)
            np.testing.assert_array_equal(a.dense_shape, b.dense_shape)
            a, b = a.values, b.values
        elif isinstance(b, tfrx.RaggedArray):
            np.testing.assert_array_equal(a.row_splits, b.row_splits)
            a, b = a.values, b.values
        assert np.asarray(a).tolist() == np.asarray(b).tolist(), key


def _in_calls(parser, path, max_records, piece, max_bytes=0) -> tuple[list[dict], list[int]]:
    """The file in calls of at most max_records records, each starting where the last one stopped."""
    size, offset, parts, counts = os.path.getsize(path), 0, [], []
    while offset < size:
        done = parser._parse_file(*_fd_args(path, offset, size), max_records, piece, max_bytes)
        assert done is not None
        parsed, n, offset = done
        parts.append(parsed)
        counts.append(n)
    return parts, counts


_open_fds: list[int] = []


def _fd_args(path, offset, size):
    fd = os.open(path, os.O_RDONLY)
    _open_fds.append(fd)
    return fd, offset, size


@pytest.fixture(autouse=True)
def _close_fds():
    yield
    while _open_fds:
        os.close(_open_fds.pop())


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(0, 120),
    seed=st.integers(0, 2**16),
    piece=st.sampled_from([16, 100, 1000, 4096, 1 << 20]),
    max_records=st.integers(1, 200),
    long_every=st.sampled_from([0, 7]),
)
def test_parse_file_equals_reading_then_parsing_in_any_pieces_and_calls(
    tmp_path_factory, n, seed, piece, max_records, long_every
):
    path = _write(tmp_path_factory.mktemp("pf") / "a.tfrecord", _records(n, seed, long_every))
    parser = tfrx.ExampleParser(SPEC, num_parallel_calls=1, bytes_as="views")
    parts, counts = _in_calls(parser, path, max_records, piece)
    assert sum(counts) == n and len(parts) == -(-n // max_records)
    assert all(c == max_records for c in counts[:-1])
    # Each call's records are the next ones: parsed as a batch, they give the same columns.
    records, at = _records(n, seed, long_every), 0
    for part, count in zip(parts, counts):
        _same(part, parser.parse(records[at : at + count]))
        at += count


def test_strings_are_buffers_of_their_own_and_defaults_fill_missing_values(tmp_path):
    records = _records(50)
    path = _write(tmp_path / "a.tfrecord", records)
    parser = tfrx.ExampleParser(SPEC, num_parallel_calls=1, bytes_as="views")
    parsed, n, end = parser._parse_file(*_fd_args(path, 0, os.path.getsize(path)), 1000, 64)
    assert n == 50 and end == os.path.getsize(path)
    names = parsed["name"]
    assert names[0] == b"?" and names[1].endswith(b"1")
    assert names.data.nbytes == int(names.lengths.sum())  # the values end to end in a buffer of their own
    _same(parsed, parser.parse(records))


def _damaged(tmp_path, records, at: int, value: int) -> str:
    path = _write(tmp_path / "d.tfrecord", records)
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(bytes([value]))
    return path


def test_damage_a_cut_short_file_a_bad_record_and_a_failed_read_return_no_columns(tmp_path):
    records = _records(40)
    parser = tfrx.ExampleParser(SPEC, num_parallel_calls=1, bytes_as="views")
    path = _write(tmp_path / "ok.tfrecord", records)
    size = os.path.getsize(path)
    ok = _parse_file(parser, path)
    assert ok.status == 0 and ok.records == 40 and ok.next_offset == size
    # a payload byte of a record in the middle: its data CRC fails
    middle = size // 2
    bad = _damaged(tmp_path, records, middle, 0xFF ^ open(path, "rb").read()[middle])
    got = _parse_file(parser, bad, piece=256)
    assert got.status == 1 and len(got.result.columns) == 0
    # cut short: the last record is incomplete
    cut = str(tmp_path / "cut.tfrecord")
    with open(path, "rb") as f, open(cut, "wb") as g:
        g.write(f.read(size - 3))
    assert _parse_file(parser, cut).status == 1
    # a range whose end falls inside a record is cut short too
    assert _parse_file(parser, path, end=size - 3).status == 1
    # a record that does not parse: the error counts records from the call's first
    wrong = [
        tfrx.make_example({"id": [b"not an int"]}).SerializeToString() if i == 33 else r for i, r in enumerate(records)
    ]
    path2 = _write(tmp_path / "wrong.tfrecord", wrong)
    got = _parse_file(parser, path2, piece=300)
    assert got.status == 2 and got.result.error.record == 33 and len(got.result.columns) == 0
    # a failed read (a directory's descriptor)
    fd = os.open(str(tmp_path), os.O_RDONLY)
    try:
        got = parser._core.parse_file(fd, 0, 100, 10, 4096)
    finally:
        os.close(fd)
    assert got.status == 3 and got.io_error != 0
    with pytest.raises(ValueError):
        parser._core.parse_file(0, 10, 5, 1, 4096)
    sequence = tfrx.SequenceExampleParser({}, {"x": tfrx.FixedLenSequenceFeature([], tfrx.int64)}, bytes_as="views")
    with pytest.raises(ValueError, match="Examples only"):
        sequence._core.parse_file(0, 0, 0, 1, 4096)


def test_a_scan_of_damaged_or_unparsable_files_raises_what_the_reader_raises(tmp_path):
    """The scan reads local files by offsets; where the records are damaged it reads them again with the
    reader, so the error names file, record and byte offset as before, and the records before it count."""
    records = _records(300)
    path = _write(tmp_path / "ok.tfrecord", records)
    data = bytearray(open(path, "rb").read())
    at = int(len(data) * 0.8)
    data[at] ^= 0x55
    bad = str(tmp_path / "bad.tfrecord")
    open(bad, "wb").write(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as scanned:
        scan([bad], spec=SPEC, columns=["id", "name"]).read_all()
    with pytest.raises(tfrx.CorruptRecordError) as read:
        for _ in tfrx.RecordReader(bad).iter_batches():
            pass
    assert str(scanned.value) == str(read.value) and scanned.value.record_index == read.value.record_index > 200
    wrong = [tfrx.make_example({"id": [b"x"]}).SerializeToString() if i == 250 else r for i, r in enumerate(records)]
    path2 = _write(tmp_path / "wrong.tfrecord", wrong)
    with pytest.raises(tfrx.ParseError) as parsed:
        scan([path2], spec=SPEC, columns=["id"]).read_all()
    with pytest.raises(tfrx.ParseError) as batch:
        tfrx.ExampleParser({"id": SPEC["id"]}).parse(tfrx.RecordReader(path2).read_batch(1000))
    assert str(parsed.value).split(":")[-1] == str(batch.value).split(":")[-1]


def test_the_scan_reads_a_local_file_by_offsets_and_equals_the_reader_path(tmp_path, monkeypatch):
    """Local uncompressed files go through parse_file (one pass), a selective filter's first batch through the
    reader (two passes); both give the rows of filtering a full read afterwards."""
    from tfrx.integrations import _arrow_scan

    records = _records(3000, long_every=97)
    paths = [_write(tmp_path / f"p{k}.tfrecord", records) for k in range(2)]
    calls = []
    parse_file = _arrow_scan._Plan.parse_file
    monkeypatch.setattr(_arrow_scan._Plan, "parse_file", lambda self, *a: calls.append(a) or parse_file(self, *a))
    whole = tfrx.read_tfrecord(paths, SPEC)
    for expr in (None, pc.field("id") >= 100, pc.field("id") < 100):
        calls.clear()
        got = scan(paths, spec=SPEC, columns=["name", "tags", "pair"], filter=expr, batch_size=700).read_all()
        expected = (whole if expr is None else whole.filter(expr)).select(["name", "tags", "pair"])
        assert got.equals(expected), expr
        if expr is None or "<" not in str(expr):
            assert calls, expr  # read by offsets
        else:
            assert not calls, expr  # a selective filter: two passes through the reader throughout
    compressed = str(tmp_path / "c.tfrecord.gz")
    tfrx.write_records(compressed, records, compression="gzip")
    calls.clear()
    assert scan([compressed], spec=SPEC, columns=["id"]).read_all().num_rows == 3000 and not calls


def test_max_bytes_ends_a_call_once_the_records_payloads_reach_it(tmp_path):
    records = _records(200, seed=3, long_every=10)
    path = _write(tmp_path / "a.tfrecord", records)
    parser = tfrx.ExampleParser(SPEC, num_parallel_calls=1, bytes_as="views")
    parts, counts = _in_calls(parser, path, 1 << 30, 4096, max_bytes=5000)
    assert sum(counts) == 200 and len(parts) >= 20
    at = 0
    for part, count in zip(parts, counts):
        payload = sum(len(r) for r in records[at : at + count])
        assert payload - len(records[at + count - 1]) < 5000  # stopped at the first record that reached it
        _same(part, parser.parse(records[at : at + count]))
        at += count


def test_a_scan_of_large_records_keeps_its_batches_to_batch_bytes(tmp_path, monkeypatch):
    from tfrx.integrations import _arrow_scan

    records = _records(300, seed=4, long_every=1)  # every record about 3 KB
    path = _write(tmp_path / "big.tfrecord", records)
    monkeypatch.setattr(_arrow_scan, "MAX_BATCH_BYTES", 20_000)
    batches = list(scan([path], spec=SPEC, columns=["name", "id"]))
    assert len(batches) >= 300 * 3000 // 20_000 and max(b.num_rows for b in batches) <= 8
    expected = ta.to_table(tfrx.parse_example(records, SPEC)).select(["name", "id"])
    assert pa.Table.from_batches(batches).equals(expected)


@pytest.mark.parametrize("values", [600, 4])
def test_a_scans_batches_read_as_many_records_as_make_the_columns_size(tmp_path, monkeypatch, values):
    # Small integers decode to 8 bytes from 1-2 (600 a record: columns ~5x the records' bytes); a record of 4
    # of them and a 200-byte string makes fewer bytes of columns than of records. Batches after a range's
    # first read as many records as make BATCH_OUTPUT_BYTES of columns, so their columns stay near it.
    from tfrx.integrations import _arrow_scan

    n = 3000
    ids = np.random.default_rng(1).integers(0, 100, (n, values))
    records = tfrx.encode_examples({"ids": ids, "text": [b"t" * 200] * n})
    path = _write(tmp_path / "r.tfrecord", records)
    spec = {"ids": tfrx.FixedLenFeature([values], tfrx.int64), "text": tfrx.FixedLenFeature([], tfrx.string)}
    target = 200_000
    for name, value in [("FIRST_BATCH_BYTES", 20_000), ("BATCH_OUTPUT_BYTES", target), ("MIN_BATCH_BYTES", 1000)]:
        monkeypatch.setattr(_arrow_scan, name, value)
    batches = list(scan([path], spec=spec, num_parallel_calls=1))
    assert pa.Table.from_batches(batches).equals(ta.to_table(tfrx.parse_example(records, spec)))
    first_records = sum(len(r) for r in records[: batches[0].num_rows])
    assert abs(first_records - 20_000) <= len(records[0])  # the first: FIRST_BATCH_BYTES of records
    for batch in batches[1:-1]:  # (the last holds what is left)
        assert 0.7 * target < batch.nbytes < 1.3 * target


def test_a_named_pipe_is_scanned_as_a_stream_not_by_offsets(tmp_path):
    from tfrx.io.ranges import RecordRange, local_plain_file

    records = _records(20)
    path = _write(tmp_path / "a.tfrecord", records)
    assert local_plain_file(RecordRange(path)) == path
    assert local_plain_file(RecordRange(str(tmp_path))) is None  # a directory
    if not hasattr(os, "mkfifo"):
        return
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    assert local_plain_file(RecordRange(fifo)) is None  # not opened: its bytes would be consumed
    gz = str(tmp_path / "a.tfrecord.gz")
    tfrx.write_records(gz, records, compression="gzip")
    assert local_plain_file(RecordRange(gz)) is None and local_plain_file(RecordRange(gz), "") == gz
