"""Polars, DuckDB, Daft and Hugging Face datasets over the Arrow scan: equal to tfrx's parse, pushdown parses less."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tfrx

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
from tfrx.integrations import arrow as ta  # noqa: E402
from tfrx.integrations._arrow_scan import ScanStats, scan  # noqa: E402

ENGINES = ["polars", "duckdb", "daft", "hf"]
N = 2000
WIDE = {f"f{i}": tfrx.FixedLenFeature([], tfrx.int64) for i in range(37)}
SPEC = {
    **WIDE,
    "x": tfrx.FixedLenFeature([], tfrx.float32),
    "name": tfrx.FixedLenFeature([], tfrx.string),
    "tags": tfrx.VarLenFeature(tfrx.int64),
}


def _columns(n: int, first: int = 0) -> dict:
    rng = np.random.default_rng(first)
    lengths = rng.integers(0, 4, n)
    ids = np.arange(first, first + n, dtype=np.int64)
    x = rng.random(n).astype(np.float32)
    x[::97] = np.nan
    return {
        **{f"f{i}": ids * (i + 1) % 1000 for i in range(37)},
        "x": x,
        "name": [b"n%d" % i for i in ids],
        "tags": tfrx.Ragged(rng.integers(0, 100, int(lengths.sum())), row_lengths=lengths),
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("engines")
    paths = []
    for k in range(2):
        p = str(d / f"part-{k}.tfrecord")
        tfrx.write_records(p, tfrx.encode_examples(_columns(N, k * N)))
        paths.append(p)
    return paths


def _plain(values):
    """Python values with NaN made comparable (NaN != NaN)."""
    if isinstance(values, list):
        return [_plain(v) for v in values]
    if isinstance(values, float) and values != values:
        return "NaN"
    return values


def _same(got, expected) -> None:
    """Equal values, whatever Arrow layout the engine chose (large lists, views, fixed-size lists as lists)."""
    assert got.column_names == expected.schema.names
    assert got.num_rows == expected.num_rows
    for name in got.column_names:
        want = expected.column(name)
        have = got.column(name).cast(want.type)
        assert _plain(have.to_pylist()) == _plain(want.to_pylist()), name


# ------------------------------------------------------------------ one reader per engine
def _polars(path, spec, columns=None, where=None, stats=None, limit=None):
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    frame = tp.scan_tfrecord(path, spec=spec, stats=stats)
    if where is not None:
        frame = frame.filter(where["polars"])
    if columns is not None:
        frame = frame.select(columns)
    if limit is not None:
        frame = frame.head(limit)
    del pl
    return frame.collect().to_arrow()


def _duckdb(path, spec, columns=None, where=None, stats=None, limit=None):
    duckdb = pytest.importorskip("duckdb")
    from tfrx.integrations import duckdb as td

    con = duckdb.connect()
    if isinstance(path, list):  # several files: a source registered under a name
        con.register("train", td.source(path, spec=spec, stats=stats))
        table = "train"
    else:  # one path or glob: the tfrecord() table macro
        td.register(con, path, spec=spec, stats=stats)
        table = "tfrecord(?)"
    select = "*" if columns is None else ", ".join(f'"{c}"' for c in columns)
    query = f"SELECT {select} FROM {table}"
    if where is not None:
        query += f" WHERE {where['sql']}"
    if limit is not None:
        query += f" LIMIT {limit}"
    return con.sql(query.replace("?", f"'{path}'")).to_arrow_table()


def _daft(path, spec, columns=None, where=None, stats=None, limit=None):
    pytest.importorskip("daft")
    from tfrx.integrations import daft as tdf

    frame = tdf.read_tfrecord(path, spec=spec, stats=stats)
    if where is not None:
        frame = frame.where(where["daft"]())
    if columns is not None:
        frame = frame.select(*columns)
    if limit is not None:
        frame = frame.limit(limit)
    return frame.to_arrow()


def _hf(path, spec, columns=None, where=None, stats=None, limit=None, tmp=None):
    pytest.importorskip("datasets")
    from tfrx.integrations import hf

    wanted = None if columns is None or where is None else [*columns, *(c for c in where["names"] if c not in columns)]
    ds = hf.load_dataset(path, spec=spec, columns=wanted or columns, stats=stats, cache_dir=tmp)
    table = ds.data.table
    if where is not None:  # datasets has no predicate to push: filter the loaded table
        table = table.filter(where["arrow"])
    if columns is not None:
        table = table.select(columns)
    return table.slice(0, limit) if limit is not None else table


READERS = {"polars": _polars, "duckdb": _duckdb, "daft": _daft, "hf": _hf}


def _read(engine, path, spec, tmp_path, **kw):
    if engine == "hf":
        kw["tmp"] = str(tmp_path / "hf-cache")
    return READERS[engine](path, spec, **kw)


def _where_f1():
    import importlib

    pl = importlib.import_module("polars") if importlib.util.find_spec("polars") else None
    return {
        "polars": pl.col("f1") < 50 if pl else None,
        "sql": '"f1" < 50',
        "daft": lambda: __import__("daft").col("f1") < 50,
        "arrow": pc.field("f1") < 50,
        "names": ["f1"],
    }


# ------------------------------------------------------------------ behaviour on every engine
@pytest.mark.parametrize("engine", ENGINES)
def test_whole_scan_equals_tfrxs_parse(engine, files, tmp_path):
    _same(_read(engine, files, SPEC, tmp_path), tfrx.read_tfrecord(files, SPEC).select(list(SPEC)))


@pytest.mark.parametrize("engine", ENGINES)
def test_two_of_forty_features_parse_only_those_two(engine, files, tmp_path):
    stats = ScanStats()
    got = _read(engine, files, SPEC, tmp_path, columns=["f3", "name"], stats=stats)
    _same(got, tfrx.read_tfrecord(files, SPEC).select(["f3", "name"]))
    assert stats.parsed == {"f3": 2 * N, "name": 2 * N}  # none of the 38 others


@pytest.mark.parametrize("engine", ["polars", "duckdb", "daft"])
def test_a_predicate_equals_filtering_afterwards_and_parses_the_rest_for_kept_rows_only(engine, files, tmp_path):
    stats = ScanStats()
    got = _read(engine, files, SPEC, tmp_path, columns=["name", "tags"], where=_where_f1(), stats=stats)
    expected = tfrx.read_tfrecord(files, SPEC).filter(pc.field("f1") < 50).select(["name", "tags"])
    assert expected.num_rows > 0
    _same(got, expected)
    assert stats.parsed["f1"] == 2 * N
    assert stats.parsed["name"] == stats.parsed["tags"] == expected.num_rows
    assert "f2" not in stats.parsed


@pytest.mark.parametrize("engine", ENGINES)
def test_predicate_and_limit_equal_filtering_then_taking_rows(engine, files, tmp_path):
    got = _read(engine, files, SPEC, tmp_path, columns=["name", "tags"], where=_where_f1(), limit=7)
    expected = tfrx.read_tfrecord(files, SPEC).filter(pc.field("f1") < 50).select(["name", "tags"])
    assert got.num_rows == 7
    if engine in ("polars", "hf"):  # ordered: the first rows
        _same(got, expected.slice(0, 7))
    else:  # DuckDB's LIMIT and Daft's tasks give any 7 of the rows kept
        rows = dict(zip(*(_plain(expected.column(c).to_pylist()) for c in ("name", "tags")), strict=True))
        for name, tags in zip(*(_plain(got.column(c).to_pylist()) for c in ("name", "tags")), strict=True):
            assert rows[name] == tags


@pytest.mark.parametrize("engine", ENGINES)
def test_schema_of_features_absent_in_some_records(engine, tmp_path):
    path = str(tmp_path / "sparse.tfrecord")
    rows = [{"a": [i], **({"b": [b"x%d" % i, b"y"]} if i % 3 else {})} for i in range(30)]
    tfrx.write_examples(path, rows)
    got = _read(engine, path, None, tmp_path)  # the spec inferred from the records
    assert sorted(got.column_names) == ["a", "b"]
    assert [len(v) for v in got.column("b").to_pylist()] == [0 if i % 3 == 0 else 2 for i in range(30)]
    assert got.column("a").to_pylist() == list(range(30))


@pytest.fixture(scope="module")
def damaged(files, tmp_path_factory):
    data = bytearray(open(files[0], "rb").read())
    data[5000] ^= 0xFF
    bad = tmp_path_factory.mktemp("bad") / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as e:
        scan(str(bad), spec=SPEC, columns=["f0"]).read_all()
    return str(bad), e.value


@pytest.mark.parametrize("engine", ENGINES)
def test_damage_raises_naming_file_record_and_offset_through_the_engine(engine, damaged, tmp_path):
    bad, error = damaged
    with pytest.raises(Exception) as e:  # noqa: PT011 - each engine wraps it in its own exception
        _read(engine, bad, SPEC, tmp_path, columns=["f0"])
    text = "".join(str(x) for x in _chain(e.value))
    assert bad in text and f"record {error.record_index}" in text and str(error.offset) in text, text


def _chain(error):
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


# ------------------------------------------------------------------ the corpus through every engine
def _corpus_rows():
    from conftest import load_corpus_sources

    ok = re.compile(r"^(Example|SequenceExample) x\d+$")
    return [r for r in load_corpus_sources() if ok.match(r["payload"]) and r["crc_status"] == "ok"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("row", _corpus_rows(), ids=lambda r: r["filename"])
def test_every_corpus_file_through_the_engine_equals_tfrxs_parse(engine, row, corpus_dir, tmp_path):
    path = str(corpus_dir / row["filename"])
    kind = "sequence" if row["payload"].startswith("Sequence") else "example"
    records = list(tfrx.read_records(path))
    spec = tfrx.infer_features(records, max_records=len(records), kind=kind)
    parse = tfrx.parse_sequence_example if kind == "sequence" else tfrx.parse_example
    try:
        expected = ta.to_record_batch(parse(records, *(spec if kind == "sequence" else (spec,))))
    except ValueError:  # a name both a context feature and a feature list: no one table holds it (test_arrow_scan)
        pytest.skip("a feature name is both a context feature and a feature list")
    if not expected.num_columns:
        pytest.skip("no features")
    got = _read(engine, path, spec, tmp_path)
    _same(got, expected.select(got.column_names))
    assert sorted(got.column_names) == sorted(expected.schema.names)


# ------------------------------------------------------------------ Polars
def test_polars_predicates_pushed_translated_or_evaluated_by_polars_and_on_lists(files):
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    whole = pl.from_arrow(tfrx.read_tfrecord(files, SPEC).select(list(SPEC)))
    cases = {
        "translated": (pl.col("f1") < 50) & ~pl.col("f2").is_null(),
        "polars (floats, NaN ordered last)": pl.col("x") > 0.9,
        "polars (is_in, arithmetic)": pl.col("f2").is_in([4, 6, 8]) | ((pl.col("f1") + pl.col("f3")) % 7 == 0),
        "a list feature": pl.col("tags").list.len() > 2,
    }
    for label, predicate in cases.items():
        stats = ScanStats()
        got = tp.scan_tfrecord(files, spec=SPEC, stats=stats).filter(predicate).select("name").collect()
        expected = whole.filter(predicate).select("name")
        assert expected.height > 0 and got.equals(expected), label
        if label != "a list feature":  # pushed: the name parsed for the kept rows only
            assert stats.parsed["name"] == expected.height, label
        else:
            assert stats.parsed["name"] == 2 * N, label
    assert tp._translate(cases["translated"], tp.scan_schema(files, spec=SPEC), ["f1", "f2"]) is not None
    assert tp._translate(cases["polars (floats, NaN ordered last)"], tp.scan_schema(files, spec=SPEC), ["x"]) is None


def test_polars_predicates_as_polars_hands_them_to_the_source_become_arrow_expressions(files, monkeypatch):
    """Polars casts a literal to its column's type before it hands the predicate to an IO source ({"Scalar":
    {"Int64": 50}}, not the {"Dyn": {"Int": 50}} a user's expression serializes to): those are translated too,
    and so is is_between, instead of each batch going through a Polars DataFrame."""
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    translated = []

    def spy(predicate, schema, names):
        result = tp_translate(predicate, schema, names)
        translated.append(result is not None)
        return result

    tp_translate = tp._translate
    monkeypatch.setattr(tp, "_translate", spy)
    whole = pl.from_arrow(tfrx.read_tfrecord(files, SPEC).select(list(SPEC)))
    for predicate in [
        pl.col("f1") > 50,
        pl.col("f1") > pl.lit(50, pl.UInt8),
        pl.col("f1").is_between(10, 20),
        pl.col("f1").is_between(10, 20, closed="none") | (pl.col("f2") <= 3.5),
    ]:
        translated.clear()
        got = tp.scan_tfrecord(files, spec=SPEC).filter(predicate).select("name").collect()
        expected = whole.filter(predicate).select("name")
        assert expected.height > 0 and got.equals(expected), predicate
        assert translated == [True], predicate
    schema = tp.scan_schema(files, spec=SPEC)
    assert tp._translate(pl.col("f1") > 2**64, schema, ["f1"]) is None
    nan_below = pl.col("f1") < pl.lit(float("nan"), pl.Float64)  # true for every row in Polars: NaN is ordered last
    assert tp._translate(nan_below, schema, ["f1"]) is None
    assert tp.scan_tfrecord(files, spec=SPEC).filter(nan_below).select("name").collect().equals(whole.select("name"))


def test_polars_limit_before_a_filter_and_counts(files):
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    frame = tp.scan_tfrecord(files, spec=SPEC)
    whole = pl.from_arrow(tfrx.read_tfrecord(files, SPEC).select(list(SPEC)))
    assert frame.head(100).filter(pl.col("f1") < 50).collect().equals(whole.head(100).filter(pl.col("f1") < 50))
    assert frame.filter(pl.col("f1") < 50).head(3).collect().equals(whole.filter(pl.col("f1") < 50).head(3))
    assert frame.select(pl.len()).collect().item() == 2 * N
    stats = ScanStats()
    four = files + files  # four files read on one thread: two ranges in flight at most
    assert (
        tp.scan_tfrecord(four, spec=SPEC, stats=stats, num_parallel_calls=1).head(10).select("f0").collect().height
        == 10
    )
    assert stats.rows_out == 10 and stats.records_read <= 2 * N  # the limit reached the scan, which stopped early


def test_polars_write_then_read_round_trip_with_lists_nulls_and_sequences(tmp_path):
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    df = pl.DataFrame(
        {"id": [1, 2, 3], "w": [0.5, None, 2.0], "s": ["a", "b", None], "v": [[1, 2], [], [3]]},
        schema={"id": pl.Int64, "w": pl.Float32, "s": pl.Utf8, "v": pl.List(pl.Int64)},
    )
    (path,) = tp.write_tfrecord(df, tmp_path / "out.tfrecord")
    spec = {
        "id": tfrx.FixedLenFeature([], tfrx.int64),
        "w": tfrx.VarLenFeature(tfrx.float32),
        "s": tfrx.VarLenFeature(tfrx.string),
        "v": tfrx.VarLenFeature(tfrx.int64),
    }
    back = tp.read_tfrecord(path, spec=spec)
    assert back["id"].to_list() == [1, 2, 3]
    assert back["w"].to_list() == [[0.5], [], [2.0]]  # a null is a missing feature
    assert back["s"].to_list() == [[b"a"], [b"b"], []]
    assert back["v"].to_list() == [[1, 2], [], [3]]
    shards = tp.write_tfrecord(df, tmp_path / "train", num_shards=2)
    assert len(shards) == 2 and sum(1 for _ in tfrx.read_records(shards)) == 3
    seq = pl.DataFrame({"id": [7, 8], "steps": [[[1], [2, 3]], [[]]]})
    (path,) = tp.write_tfrecord(seq, tmp_path / "seq.tfrecord", feature_lists=["steps"])
    seq_spec = ({"id": tfrx.FixedLenFeature([], tfrx.int64)}, {"steps": tfrx.RaggedFeature(tfrx.int64)})
    back = tp.read_tfrecord(path, spec=seq_spec)
    assert back["id"].to_list() == [7, 8] and back["steps"].to_list() == [[[1], [2, 3]], [[]]]


# ------------------------------------------------------------------ DuckDB
def test_duckdb_filters_pushed_only_where_exact_and_explained(files, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    from tfrx.integrations import duckdb as td

    con = duckdb.connect()
    stats = ScanStats()
    con.register("train", td.source(files, spec=SPEC, stats=stats))
    plan = "".join(row[1] for row in con.sql('EXPLAIN SELECT name FROM train WHERE "f1" < 50').fetchall())
    assert "Filters" in plan and "f1" in plan and "Projections: name" in plan
    whole = tfrx.read_tfrecord(files, SPEC)
    nan_kept = con.sql("SELECT count(*) FROM train WHERE x > 0.9").fetchall()[0][0]
    xs = np.asarray(whole.column("x").to_numpy(zero_copy_only=False))
    assert nan_kept == int(((xs > 0.9) | np.isnan(xs)).sum())  # DuckDB orders NaN above every number
    stats.parsed.clear()
    listed = con.sql("SELECT name FROM train WHERE len(tags) > 2").fetchall()  # a list: DuckDB filters
    assert len(listed) == sum(len(t) > 2 for t in whole.column("tags").to_pylist())
    assert stats.parsed["name"] == 2 * N
    (out,) = td.write_tfrecord(con.sql('SELECT "f1", tags FROM train WHERE "f1" < 5'), tmp_path / "out.tfrecord")
    back = tfrx.read_tfrecord(out, {"f1": SPEC["f1"], "tags": SPEC["tags"]})
    _same(back, whole.filter(pc.field("f1") < 5).select(["f1", "tags"]))


def test_duckdb_macro_over_a_glob_and_an_unregistered_path(files):
    duckdb = pytest.importorskip("duckdb")
    from tfrx.integrations import duckdb as td

    con = duckdb.connect()
    glob = files[0].replace("part-0", "part-*")
    td.register(con, glob, spec=SPEC)
    assert con.sql(f"SELECT count(*), sum(f2) FROM tfrecord('{glob}')").fetchall()[0] == (
        2 * N,
        sum(tfrx.read_tfrecord(files, SPEC).column("f2").to_pylist()),
    )
    with pytest.raises(duckdb.CatalogException, match="nope"):
        con.sql("SELECT * FROM tfrecord('nope')").fetchall()


# ------------------------------------------------------------------ Daft
def test_daft_sink_writes_committed_shards(files, tmp_path):
    daft = pytest.importorskip("daft")
    from tfrx.integrations import daft as tdf

    sink = tdf.TFRecordSink(tmp_path / "out" / "train")
    frame = tdf.read_tfrecord(files, spec=SPEC).where(daft.col("f1") < 50).select("name", "tags")
    result = frame.write_sink(sink).to_pydict()
    assert result["path"] == sink.paths and all(".tfrecord-" in p for p in sink.paths)
    expected = tfrx.read_tfrecord(files, SPEC).filter(pc.field("f1") < 50).select(["name", "tags"])
    back = tfrx.read_tfrecord(sink.paths, {"name": SPEC["name"], "tags": SPEC["tags"]})
    assert sorted(_plain(back.to_pylist()), key=str) == sorted(_plain(expected.to_pylist()), key=str)
    assert sum(result["records"]) == expected.num_rows


@pytest.mark.parametrize("indexed", [False, True])
def test_daft_splits_large_files_into_record_ranges(files, tmp_path, indexed):
    """As Spark, Dask and Ray do: a file larger than split_bytes is read by several tasks, one per record range
    (by the index's record offsets when there is one, else at record boundaries), every record exactly once."""
    daft = pytest.importorskip("daft")
    import shutil

    from tfrx.integrations import daft as tdf

    paths = [shutil.copy(p, tmp_path) for p in files]
    if indexed:
        for p in paths:
            tfrx.build_index(p)
    stats = ScanStats()
    source = tdf.TFRecordSource(paths, spec=SPEC, stats=stats, split_bytes=64 << 10)
    assert len(source.ranges) >= 2 * (os.path.getsize(paths[0]) // (64 << 10))
    assert all(r.exact for r in source.ranges) == indexed
    got = source.read().select("name", "f1", "tags").to_arrow()
    expected = tfrx.read_tfrecord(paths, SPEC).select(["name", "f1", "tags"])
    assert got.to_pylist() == expected.to_pylist()  # in file and record order
    assert stats.records_read == 2 * N
    where = source.read().where(daft.col("f1") < 50).select("name").to_arrow()
    assert where.column("name").to_pylist() == expected.filter(pc.field("f1") < 50).column("name").to_pylist()
    assert source.read().limit(7).to_arrow().num_rows == 7
    whole = tdf.TFRecordSource(paths, spec=SPEC)  # 32 MiB: a task per file
    assert [r.source for r in whole.ranges] == paths and all(r.start == 0 and r.end is None for r in whole.ranges)


def test_daft_range_task_names_the_damaged_record(files, tmp_path):
    pytest.importorskip("daft")
    from tfrx.integrations import daft as tdf

    path = str(tmp_path / "damaged.tfrecord")
    data = bytearray(open(files[0], "rb").read())
    data[len(data) * 3 // 4] ^= 0xFF  # in a record of the file's last quarter: a later range's task
    open(path, "wb").write(bytes(data))
    source = tdf.TFRecordSource(path, spec=SPEC, split_bytes=64 << 10)
    assert len(source.ranges) > 2
    with pytest.raises(Exception, match=r"damaged\.tfrecord.*record \d+ at byte \d+"):
        source.read().to_arrow()


# ------------------------------------------------------------------ Hugging Face datasets
def test_hf_cache_reused_streaming_equal(files, tmp_path):
    pytest.importorskip("datasets")
    from tfrx.integrations import hf

    stats = ScanStats()
    first = hf.load_dataset(files, spec=SPEC, columns=["f0", "tags"], cache_dir=tmp_path, stats=stats)
    again = hf.load_dataset(files, spec=SPEC, columns=["f0", "tags"], cache_dir=tmp_path, stats=stats)
    assert stats.records_read == 2 * N  # the second load read the cache file only
    assert first.cache_files[0]["filename"].startswith(str(tmp_path))
    assert again.data.table.equals(first.data.table)
    streamed = hf.load_dataset(files, spec=SPEC, columns=["f0", "tags"], streaming=True)
    assert list(streamed) == first.to_list()
    assert first.filter(lambda r: r["f0"] < 3).num_rows == sum(v < 3 for v in first["f0"])


# ------------------------------------------------------------------ Hypothesis: round trips and damage
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_INTS = st.integers(-(2**63), 2**63 - 1)
_FLOATS = st.floats(width=32, allow_nan=False)
_TEXT = st.binary(max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            _INTS,
            st.none() | _FLOATS,
            st.none() | _TEXT,
            st.lists(_INTS, max_size=4),
            st.lists(st.lists(_FLOATS, max_size=3), max_size=3),
        ),
        max_size=25,
    ),
    per_shard=st.sampled_from([None, 1, 7]),
)
def test_polars_write_read_round_trip(rows, per_shard, tmp_path_factory):
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    df = pl.DataFrame(
        rows,
        schema={
            "i": pl.Int64,
            "f": pl.Float32,
            "b": pl.Binary,
            "v": pl.List(pl.Int64),
            "steps": pl.List(pl.List(pl.Float32)),
        },
        orient="row",
    )
    out = tmp_path_factory.mktemp("rt") / "data"
    paths = tp.write_tfrecord(df, out, feature_lists=["steps"], max_records_per_shard=per_shard)  # shards in order
    spec = (
        {
            "i": tfrx.FixedLenFeature([], tfrx.int64),
            "f": tfrx.VarLenFeature(tfrx.float32),
            "b": tfrx.VarLenFeature(tfrx.string),
            "v": tfrx.VarLenFeature(tfrx.int64),
        },
        {"steps": tfrx.RaggedFeature(tfrx.float32)},
    )
    if not rows:
        assert sum(1 for _ in tfrx.read_records(paths)) == 0
        return
    back = tp.read_tfrecord(paths, spec=spec)
    assert back["i"].to_list() == df["i"].to_list()
    assert back["f"].to_list() == [[] if x is None else [x] for x in df["f"].to_list()]  # null: feature absent
    assert back["b"].to_list() == [[] if x is None else [x] for x in df["b"].to_list()]
    assert back["v"].to_list() == df["v"].to_list()
    assert back["steps"].to_list() == df["steps"].to_list()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(0, 10_000), engine=st.sampled_from(ENGINES))
def test_any_flipped_byte_is_reported_where_it_is_through_any_engine(position, engine, tmp_path_factory):
    d = tmp_path_factory.mktemp("flip")
    path = d / "f.tfrecord"
    tfrx.write_records(str(path), tfrx.encode_examples(_columns(100)))
    data = bytearray(path.read_bytes())
    position %= len(data)
    data[position] ^= 0x5A
    path.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as ref:
        scan(str(path), spec=SPEC, columns=["f0"]).read_all()
    assert ref.value.offset is not None and ref.value.offset <= position
    with pytest.raises(Exception) as e:  # noqa: PT011 - each engine wraps it in its own exception
        _read(engine, str(path), SPEC, d, columns=["f0"])
    text = "".join(str(x) for x in _chain(e.value))
    assert str(path) in text and f"record {ref.value.record_index}" in text and str(ref.value.offset) in text


def test_polars_streaming_engine_and_sink_parquet(files, tmp_path):
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    frame = tp.scan_tfrecord(files, spec=SPEC)
    expected = pl.from_arrow(tfrx.read_tfrecord(files, SPEC).select(list(SPEC)))
    query = frame.filter(pl.col("f1") < 50).select("name", "tags")
    assert query.collect(engine="streaming").equals(expected.filter(pl.col("f1") < 50).select("name", "tags"))
    frame.select("f0", "tags").sink_parquet(tmp_path / "out.parquet")  # a conversion in one streaming pass
    assert pl.read_parquet(tmp_path / "out.parquet").equals(expected.select("f0", "tags"))
    assert "PYTHON[tfrx]" in frame.explain()


@pytest.mark.parametrize(
    ("module", "engine", "extra"),
    [
        ("polars", "polars", "polars"),
        ("duckdb", "duckdb", "duckdb"),
        ("daft", "daft", "daft"),
        ("hf", "datasets", "hf"),
    ],
)
def test_a_missing_engine_is_an_import_error_naming_the_extra(module, engine, extra):
    import subprocess
    import sys

    code = f"import sys; sys.modules[{engine!r}] = None; import tfrx.integrations.{module}"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and f"pip install 'tfrx[{extra}]'" in proc.stderr, proc.stderr[-500:]


def test_hf_cache_follows_changed_files_and_urls(tmp_path):
    pytest.importorskip("datasets")
    fsspec = pytest.importorskip("fsspec")
    from tfrx.integrations import hf

    path = tmp_path / "a.tfrecord"
    tfrx.write_examples(str(path), [{"a": [i]} for i in range(5)])
    spec = {"a": tfrx.FixedLenFeature([], tfrx.int64)}
    assert hf.load_dataset(str(path), spec=spec, cache_dir=tmp_path / "c")["a"] == list(range(5))
    tfrx.write_examples(str(path), [{"a": [i]} for i in range(7)])  # changed: size and time
    assert hf.load_dataset(str(path), spec=spec, cache_dir=tmp_path / "c")["a"] == list(range(7))
    with fsspec.open("memory://tfrx-hf/b.tfrecord", "wb") as f:
        f.write(path.read_bytes())
    stats = ScanStats()
    ds = hf.load_dataset("memory://tfrx-hf/b.tfrecord", spec=spec, cache_dir=tmp_path / "c", stats=stats)
    again = hf.load_dataset("memory://tfrx-hf/b.tfrecord", spec=spec, cache_dir=tmp_path / "c", stats=stats)
    assert ds["a"] == again["a"] == list(range(7)) and stats.records_read == 7


def test_polars_predicates_over_column_patterns_and_dtypes(files):
    pl = pytest.importorskip("polars")
    from tfrx.integrations import polars as tp

    frame = tp.scan_tfrecord(files, spec=SPEC)
    whole = pl.from_arrow(tfrx.read_tfrecord(files, SPEC).select(list(SPEC)))
    for predicate in (pl.any_horizontal(pl.col("^f[12]$") < 20), pl.all_horizontal(pl.col(pl.Int64) > 10)):
        got = frame.filter(predicate).select("name").collect()
        assert got.height > 0 and got.equals(whole.filter(predicate).select("name"))
