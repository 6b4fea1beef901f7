"""The Arrow scan engines read through: projection parses less, filter and limit equal filtering afterwards."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import tfrx

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
from tfrx.integrations import arrow as ta  # noqa: E402
from tfrx.integrations._arrow_scan import RAW_COLUMN, ScanStats, filter_columns, scan, scan_schema  # noqa: E402

N = 3000
WIDE = {f"f{i}": tfrx.FixedLenFeature([], tfrx.int64) for i in range(38)}
SPEC = {**WIDE, "name": tfrx.FixedLenFeature([], tfrx.string), "tags": tfrx.VarLenFeature(tfrx.float32)}


def _columns(n: int, first: int = 0) -> dict:
    rng = np.random.default_rng(first)
    lengths = rng.integers(0, 4, n)
    ids = np.arange(first, first + n, dtype=np.int64)
    return {
        **{f"f{i}": ids * (i + 1) % 1000 for i in range(38)},
        "name": [b"n%d" % i for i in ids],
        "tags": tfrx.Ragged(rng.random(int(lengths.sum())).astype(np.float32), row_lengths=lengths),
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("scan")
    paths = []
    for k in range(3):
        p = str(d / f"part-{k}.tfrecord")
        tfrx.write_records(p, tfrx.encode_examples(_columns(N, k * N)))
        paths.append(p)
    return paths


def _whole(paths, spec=SPEC):
    """The parse of every record, files in order, as a table: the reference each scan is checked against."""
    paths = [paths] if isinstance(paths, str) else paths
    return ta.to_table(tfrx.parse_example([r for p in paths for r in tfrx.read_records(p)], spec))


def test_scan_equals_read_tfrecord(files):
    got = scan(files, spec=SPEC).read_all()
    assert got.column_names == list(SPEC)  # the spec's order
    assert got.equals(_whole(files).select(list(SPEC)))


def test_projection_parses_only_the_named_features(files):
    stats = ScanStats()
    got = scan(files, spec=SPEC, columns=["f3", "name"], stats=stats).read_all()
    assert got.column_names == ["f3", "name"]
    assert got.equals(_whole(files).select(["f3", "name"]))
    assert stats.parsed == {"f3": 3 * N, "name": 3 * N}  # none of the 38 others
    assert stats.records_read == 3 * N and stats.rows_out == 3 * N


def test_filter_equals_filtering_afterwards_and_parses_the_rest_for_selected_rows_only(files):
    expr = (pc.field("f1") < 50) & (pc.field("f2") > 100)
    stats = ScanStats()
    got = scan(files, spec=SPEC, columns=["name", "tags", "f1"], filter=expr, stats=stats).read_all()
    expected = _whole(files).filter(expr).select(["name", "tags", "f1"])
    assert got.num_rows == expected.num_rows > 0
    assert got.equals(expected)
    assert stats.parsed["f1"] == stats.parsed["f2"] == 3 * N  # the filter's features: every record
    assert stats.parsed["name"] == stats.parsed["tags"] == expected.num_rows  # the rest: selected records only
    assert "f5" not in stats.parsed


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("limit", [0, 1, 2999, 3001, 10_000])
def test_limit_stops_early_with_the_first_rows(files, limit, threads):
    stats = ScanStats()
    got = scan(files, spec=SPEC, columns=["f0"], limit=limit, num_parallel_calls=threads, stats=stats).read_all()
    assert got.equals(_whole(files).select(["f0"]).slice(0, limit))
    if limit <= N:
        # One thread reads the ranges in turn, as they are asked for: the second and third files are never
        # read. On two, ranges in flight = 3: each is read at most once.
        assert stats.records_read <= (N if threads == 1 else 3 * N)
    if threads == 1:  # no pool: nothing to start or wait for
        assert not [t for t in threading.enumerate() if t.name.startswith("tfrx-scan")]


def test_a_large_file_is_read_in_ranges_and_each_record_comes_once(tmp_path):
    path = str(tmp_path / "big.tfrecord")
    tfrx.write_records(path, tfrx.encode_examples(_columns(20_000)))
    got = scan(
        path, spec=SPEC, columns=["f0", "name"], min_split_bytes=1, num_parallel_calls=4, batch_size=700
    ).read_all()
    assert got.equals(_whole(path).select(["f0", "name"]))


def test_schema_without_reading_and_from_a_sample(files):
    schema = scan_schema(files, spec=SPEC, columns=["tags", "f7"])
    assert schema.names == ["tags", "f7"] and schema.field("f7").type == pa.int64()
    inferred = scan_schema(files)
    assert set(inferred.names) == set(SPEC)
    assert scan(files, spec=SPEC, columns=["tags", "f7"]).schema == schema
    assert scan_schema(files, spec=SPEC) == scan(files, spec=SPEC).schema  # the spec's order in both


def test_features_absent_in_some_records(tmp_path):
    path = str(tmp_path / "sparse.tfrecord")
    rows = [{"a": [i], **({"b": [b"x%d" % i]} if i % 3 else {})} for i in range(30)]
    tfrx.write_examples(path, rows)
    spec = {"a": tfrx.FixedLenFeature([], tfrx.int64), "b": tfrx.VarLenFeature(tfrx.string)}
    got = scan(path, spec=spec, filter=pc.field("a") >= 10).read_all()
    assert got.num_rows == 20
    assert [len(v) for v in got.column("b").to_pylist()] == [0 if i % 3 == 0 else 1 for i in range(10, 30)]


def test_sequence_examples_and_raw_records(tmp_path):
    path = str(tmp_path / "seq.tfrecord")
    records = tfrx.encode_sequence_examples(
        {"id": np.arange(5, dtype=np.int64)},
        {"steps": tfrx.Ragged(np.arange(10, dtype=np.int64), row_lengths=[1, 2, 3, 4, 0])},
    )
    tfrx.write_records(path, records)
    spec = ({"id": tfrx.FixedLenFeature([], tfrx.int64)}, {"steps": tfrx.RaggedFeature(tfrx.int64)})
    got = scan(path, spec=spec, filter=pc.field("id") > 1).read_all()
    assert got.column("id").to_pylist() == [2, 3, 4]
    assert [len(s) for s in got.column("steps").to_pylist()] == [3, 4, 0]
    # The schema names the feature lists, as to_record_batch's does: the table writes back as SequenceExamples.
    assert scan(path, spec=spec).read_all().schema.metadata == {ta.FEATURE_LISTS_KEY: b'["steps"]'}
    assert ta.to_sequence_examples(scan(path, spec=spec).read_all()) == records
    assert scan(path, spec=spec, columns=["id"]).read_all().schema.metadata == {ta.FEATURE_LISTS_KEY: b"[]"}
    assert scan_schema(path, spec=spec).metadata == {ta.FEATURE_LISTS_KEY: b'["steps"]'}
    raw = scan(path, raw=True).read_all()
    assert raw.column_names == [RAW_COLUMN] and raw.column(RAW_COLUMN).to_pylist() == list(tfrx.read_records(path))
    with pytest.raises(ValueError, match="needs parsed features"):
        scan(path, raw=True, filter=pc.field("id") > 1)


def test_bad_names_and_damage_are_reported(files, tmp_path):
    with pytest.raises(KeyError, match="nope"):
        scan(files, spec=SPEC, columns=["nope"])
    with pytest.raises(KeyError, match="zzz"):
        scan(files, spec=SPEC, filter=pc.field("zzz") > 1)
    data = bytearray(open(files[0], "rb").read())
    data[5000] ^= 0xFF
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError, match=re.escape(str(bad))) as e:
        scan(str(bad), spec=SPEC, columns=["f0"]).read_all()
    assert e.value.offset is not None and e.value.record_index is not None
    skipped = scan(str(bad), spec=SPEC, columns=["f0"], on_error="skip").read_all()
    assert 0 < skipped.num_rows < N


def test_filter_columns_finds_every_name():
    expr = (pc.field("b") > 1) | ~(pc.field("a").is_null()) & (pc.field("c") == "x")
    assert sorted(filter_columns(expr, ["a", "b", "c", "d"])) == ["a", "b", "c"]


def _corpus_rows():
    from conftest import load_corpus_sources

    ok = re.compile(r"^(Example|SequenceExample) x\d+$")
    return [r for r in load_corpus_sources() if ok.match(r["payload"]) and r["crc_status"] == "ok"]


@pytest.mark.parametrize("row", _corpus_rows(), ids=lambda r: r["filename"])
def test_every_corpus_file_scans_equal_to_tfrxs_parse(corpus_dir, row):
    path = str(corpus_dir / row["filename"])
    kind = "sequence" if row["payload"].startswith("Sequence") else "example"
    records = list(tfrx.read_records(path))
    spec = tfrx.infer_features(records, max_records=len(records), kind=kind)
    parse = tfrx.parse_sequence_example if kind == "sequence" else tfrx.parse_example
    args = spec if kind == "sequence" else (spec,)
    try:
        expected = ta.to_record_batch(parse(records, *args))
    except ValueError as e:  # a name that is both a context feature and a feature list: one column cannot hold both
        with pytest.raises(ValueError, match=re.escape(str(e))):
            scan(path, spec=spec).read_all()
        return
    got = scan(path, spec=spec).read_all()
    assert got.num_rows == len(records)
    if records:
        assert got.combine_chunks().to_batches()[0].equals(expected.select(got.column_names))


def test_a_callable_filter_reads_its_columns_first_and_equals_filtering_afterwards(files):
    def keep(table):
        return pc.less(pc.add(table.column("f1"), table.column("f2")), 300)

    stats = ScanStats()
    got = scan(files, spec=SPEC, columns=["name"], filter=keep, filter_columns=["f1", "f2"], stats=stats).read_all()
    whole = _whole(files)
    expected = whole.filter(keep(whole)).select(["name"])
    assert got.num_rows == expected.num_rows > 0 and got.equals(expected)
    assert stats.parsed == {"f1": 3 * N, "f2": 3 * N, "name": expected.num_rows}
    with pytest.raises(ValueError, match="filter_columns"):
        scan(files, spec=SPEC, filter=keep)


def test_a_filter_keeping_most_records_parses_in_one_pass_after_the_first_batch(files):
    from tfrx.integrations._arrow_scan import ONE_PASS_ABOVE

    expr = pc.field("f1") >= 100  # keeps about 90%
    stats = ScanStats()
    got = scan(
        files, spec=SPEC, columns=["name", "f1"], filter=expr, batch_size=1000, num_parallel_calls=1, stats=stats
    )
    got = got.read_all()
    expected = _whole(files).filter(expr).select(["name", "f1"])
    assert expected.num_rows / (3 * N) > ONE_PASS_ABOVE
    assert got.equals(expected)
    first_kept = _whole(files).slice(0, 1000).filter(expr).num_rows
    # the first batch: name for its kept records only; every later batch: name for all its records
    assert stats.parsed["name"] == first_kept + (3 * N - 1000)
    low = ScanStats()  # a selective filter stays two-pass throughout
    scan(files, spec=SPEC, columns=["name"], filter=pc.field("f1") < 50, batch_size=1000, stats=low).read_all()
    assert low.parsed["name"] == _whole(files).filter(pc.field("f1") < 50).num_rows


def test_a_filter_takes_rows_of_every_kind_of_column_before_packing_and_equals_filtering_afterwards(tmp_path):
    """The kept rows of dense features (scalars, shaped, strings) are taken before their values are packed; the
    others (VarLen, Ragged) are converted whole, then taken: in one pass and in two, the rows are the same."""
    rng = np.random.default_rng(5)
    n = 2500
    lengths = rng.integers(0, 4, n)
    columns = {
        "k": np.arange(n, dtype=np.int64) % 100,
        "pair": rng.integers(0, 9, (n, 2)),
        "word": [b"w%d" % i * (i % 3) for i in range(n)],
        "words": rng.integers(0, 5, (n, 2)).astype(str).astype(object).astype(bytes),
        "tags": tfrx.Ragged(rng.random(int(lengths.sum())).astype(np.float32), row_lengths=lengths),
        "more": tfrx.Ragged(np.arange(int(lengths.sum()), dtype=np.int64), row_lengths=lengths[::-1]),
    }
    path = str(tmp_path / "mixed.tfrecord")
    tfrx.write_records(path, tfrx.encode_examples(columns))
    spec = {
        "k": tfrx.FixedLenFeature([], tfrx.int64),
        "pair": tfrx.FixedLenFeature([2], tfrx.int64),
        "word": tfrx.FixedLenFeature([], tfrx.string),
        "words": tfrx.FixedLenFeature([2], tfrx.string),
        "tags": tfrx.VarLenFeature(tfrx.float32),
        "ragged": tfrx.RaggedFeature(tfrx.int64, value_key="more"),
    }
    whole = _whole([path], spec)
    out = ["word", "pair", "tags", "words", "ragged", "k"]
    for expr in (pc.field("k") < 20, pc.field("k") >= 20):  # two passes, then one after the first batch
        got = scan([path], spec=spec, columns=out, filter=expr, batch_size=700).read_all()
        expected = whole.filter(expr).select(out)
        assert 0 < got.num_rows < n and got.equals(expected), expr


def test_a_filter_of_literals_keeps_every_row_or_none_and_a_mask_of_the_wrong_length_is_an_error(files):
    assert scan(files, spec=SPEC, columns=["f1"], filter=pc.scalar(True)).read_all().num_rows == 3 * N
    assert scan(files, spec=SPEC, columns=["f1"], filter=pc.scalar(False)).read_all().num_rows == 0
    with pytest.raises(ValueError, match="one boolean per row"):
        scan(files, spec=SPEC, filter=lambda t: pa.array([True]), filter_columns=["f1"]).read_all()


def test_the_scan_reads_into_the_pool_of_the_process(files, monkeypatch):
    """Each range's chunks are read into buffers of the process's pool, so that a scan's threads do not fault
    fresh pages in for every chunk (the batch is parsed into columns of its own before the next is read)."""
    from tfrx.io._buffer_pool import READ_BUFFERS

    taken = []
    take = READ_BUFFERS.take
    monkeypatch.setattr(READ_BUFFERS, "take", lambda *a, **k: taken.append(a) or take(*a, **k))
    got = scan(files, spec=SPEC, columns=["name"], filter=pc.field("f1") < 500).read_all()
    assert got.equals(_whole(files).filter(pc.field("f1") < 500).select(["name"]))
    assert len(taken) >= len(files)


def test_strings_are_binary_columns_of_their_own_equal_to_the_default_parse(tmp_path):
    """The scan parses strings as views of the records and packs them (no bytes object per value): the columns
    are the default parse's, binary, in memory of their own even where a record's values lie end to end."""
    from tfrx.integrations._arrow_convert import _record_batch
    from tfrx.integrations._arrow_scan import _parser

    rows = [{"s": [b"ab", b"", b"c" * (i % 5)], "t": [b"x%d" % i], "q": [b"\xff" * i], "n": [i]} for i in range(300)]
    path = str(tmp_path / "s.tfrecord")
    tfrx.write_records(path, [tfrx.make_example(r).SerializeToString() for r in rows])
    spec = {
        "s": tfrx.VarLenFeature(tfrx.string),
        "t": tfrx.FixedLenFeature([], tfrx.string),
        "q": tfrx.RaggedFeature(tfrx.string),
        "n": tfrx.FixedLenFeature([], tfrx.int64),
    }
    got = scan(path, spec=spec).read_all()
    expected = ta.read_tfrecord(path, spec)  # bytes objects, then binary arrays
    assert got.equals(expected.select(got.column_names))
    assert got.schema.field("t").type == pa.binary() and got.schema.field("s").type == pa.large_list(pa.binary())
    # one record: each column's values lie end to end in it, where packing them needs no gather
    records = tfrx.RecordBatch.from_records([tfrx.make_example(rows[7]).SerializeToString()])
    parsed = _parser(spec).parse(records)
    batch = _record_batch(parsed, packed=True)
    assert batch.to_pylist() == [{"n": 7, "q": [b"\xff" * 7], "s": [b"ab", b"", b"cc"], "t": b"x7"}]
    record_bytes = np.frombuffer(records.data, np.uint8)
    for name in ("s", "t", "q"):
        column = batch.column(name)
        values = column.flatten() if not pa.types.is_binary(column.type) else column
        assert not np.may_share_memory(np.frombuffer(values.buffers()[2], np.uint8), record_bytes), name


def test_packed_strings_share_a_buffer_holding_only_them_and_copy_out_of_records():
    """A binary column over values that fill their buffer (parse_file packed them) shares it; values lying end
    to end inside a larger buffer (records) are copied, so the column does not keep the records alive."""
    from tfrx.integrations._arrow_convert import _binary

    own = np.frombuffer(b"abcdef", np.uint8)
    column = _binary(tfrx.BytesArray(own, [0, 2], [2, 4]))
    assert column.to_pylist() == [b"ab", b"cdef"]
    assert column.buffers()[2].address == own.ctypes.data
    records = np.frombuffer(b"xxabcdefxx", np.uint8)
    column = _binary(tfrx.BytesArray(records, [2, 4], [2, 4]))
    assert column.to_pylist() == [b"ab", b"cdef"]
    assert column.buffers()[2].address != records.ctypes.data + 2


def test_a_selective_filter_parses_other_numbers_in_the_same_pass_and_strings_for_kept_records_only(files):
    """Decoding a few more numbers of the dropped records costs less than walking the kept ones a second time;
    strings (which may be large) are still parsed for the kept records only when the filter is selective."""
    expr = pc.field("f1") < 50  # keeps about 5%
    whole = _whole(files).filter(expr)
    numbers = ScanStats()
    got = scan(files, spec=SPEC, columns=["f3", "f4"], filter=expr, batch_size=1000, stats=numbers).read_all()
    assert got.equals(whole.select(["f3", "f4"])) and whole.num_rows < 0.1 * 3 * N
    assert numbers.parsed["f3"] == 3 * N  # one pass
    strings = ScanStats()
    got = scan(files, spec=SPEC, columns=["name", "f4"], filter=expr, batch_size=1000, stats=strings).read_all()
    assert got.equals(whole.select(["name", "f4"]))
    assert strings.parsed["name"] == whole.num_rows  # two passes
