"""Polars, DuckDB, Daft and Hugging Face datasets over the Arrow scan: equal to tfrx's parse, pushdown parses less."""

from __future__ import annotations

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


def _same(got: pa.Table, expected: pa.Table | pa.RecordBatch) -> None:
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
