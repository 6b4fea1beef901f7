"""tfrx.spark against a real local Spark 4 session: reads, writes, splits, damage, failed writes, filters.

One session for the module (local[2], small memory, quiet logs); Spark needs a Java 17+ runtime, which CI
installs (Debian's ``openjdk-17-jre-headless``); without one these tests skip. The checks that need no Spark
job (the writer's commit of speculative attempts, the reader's filters, inference over files) call the data
source's classes directly.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shutil
import sys

import numpy as np
import pytest

import tfrx

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from pyspark.sql import datasource as ds  # noqa: E402

from tfrx.integrations import _scaleout as so  # noqa: E402
from tfrx.integrations import spark as ts  # noqa: E402

pytestmark = pytest.mark.timeout(600)


def _java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and os.path.exists(os.path.join(home, "bin", "java"))))


@pytest.fixture(scope="module")
def spark():
    if not _java():
        pytest.skip("Spark needs a Java 17+ runtime (apt-get install openjdk-17-jre-headless); none found")
    from pyspark.sql import SparkSession

    # The workers import tfrx from where this process did: the installed package (CI), or src/ with the
    # extension built in place (make dev); never a checkout's src/ that has no extension.
    src = os.path.dirname(os.path.dirname(os.path.abspath(tfrx.__file__)))
    saved = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYTHONPATH")}
    # Spark's Python workers: this interpreter, and tfrx from this checkout (they inherit the environment)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("tfrx-tests")
        .config("spark.driver.memory", "512m")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    ts.register(session)
    yield session
    session.stop()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _write_examples(path, n: int, *, compression=None) -> None:
    with tfrx.TFRecordWriter(str(path), compression=compression) as w:
        for i in range(n):
            w.write(
                tfrx.train.Example(
                    features=tfrx.train.Features(
                        feature={
                            "id": tfrx.train.Feature(int64_list=tfrx.train.Int64List(value=[i])),
                            "name": tfrx.train.Feature(bytes_list=tfrx.train.BytesList(value=[b"n%d" % (i % 7)])),
                            "pad": tfrx.train.Feature(float_list=tfrx.train.FloatList(value=[0.5] * 40)),
                        }
                    )
                ).SerializeToString()
            )


ROUND_TRIP_DDL = (
    "id long, i int, f float, d double, b binary, s string, t boolean, "
    "li array<long>, lf array<float>, lb array<binary>, ls array<string>"
)


def _rows(n: int) -> list[tuple]:
    rows = []
    for k in range(n):
        rows.append(
            (
                k,
                None if k % 5 == 3 else k * 3 - 7,
                None if k % 4 == 1 else k / 4,
                k * 0.5,
                b"\x00\xff" * (k % 3),
                "s\u00e9%d" % k,
                k % 2 == 0,
                list(range(k % 4)),
                [k / 2] * (k % 3),
                [b"b%d" % k] * (k % 2),
                ["x", "y\u00fc"][: k % 3],
            )
        )
    return rows


def test_round_trip_of_every_type_with_nulls(spark, tmp_path):
    rows = _rows(60)
    df = spark.createDataFrame(rows, ROUND_TRIP_DDL).repartition(3)
    out = str(tmp_path / "out")
    df.write.format("tfrecord").mode("overwrite").save(out)
    shards = sorted(n for n in os.listdir(out) if not n.startswith("."))
    assert shards == [f"part.tfrecord-{i:05d}-of-00003" for i in range(3)]
    assert not [n for n in os.listdir(os.path.join(out, ".tfrx")) if n.endswith(".part")]

    back = spark.read.format("tfrecord").schema(ROUND_TRIP_DDL).load(out).orderBy("id").collect()
    assert [tuple(r) for r in back] == rows

    # without a schema: inferred from the files, int64 -> long, float -> float, bytes -> binary
    inferred = spark.read.format("tfrecord").load(out)
    types = dict(inferred.dtypes)
    assert types["id"] == "bigint" and types["f"] == "float" and types["b"] == "binary" and types["t"] == "bigint"
    assert types["li"] == "array<bigint>" and types["lf"] == "array<float>" and types["ls"] == "array<binary>"


def test_sequence_examples_and_raw_records_round_trip(spark, tmp_path):
    ddl = "id long, ctx array<float>, steps array<array<float>>, words array<array<binary>>"
    rows = [
        (k, [k / 2] * (k % 3), [[float(k)] * j for j in range(k % 4)], [[b"w%d" % j] for j in range(k % 3)])
        for k in range(30)
    ]
    out = str(tmp_path / "seq")
    spark.createDataFrame(rows, ddl).write.format("tfrecord").option("recordType", "SequenceExample").option(
        "compression", "gzip"
    ).mode("overwrite").save(out)
    read = spark.read.format("tfrecord").option("recordType", "SequenceExample").load(out)
    assert dict(read.dtypes)["steps"] == "array<array<float>>"
    assert dict(read.dtypes)["words"] == "array<array<binary>>"
    got = read.select("id", "ctx", "steps", "words").orderBy("id").collect()
    assert [tuple(r) for r in got] == rows

    raw = spark.read.format("tfrecord").option("recordType", "bytes").load(out)
    assert raw.columns == ["record"]
    records = sorted(r.record for r in raw.collect())
    expected = sorted(
        bytes(r) for p in sorted(tfrx.io._data_files.expand_paths(out + "/part.*")) for r in tfrx.read_records(p)
    )
    assert records == expected


def _normal(value):
    """A value of tfrx's parse or of Spark's JSON as comparable data (bytes as base64, floats as float32)."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, float):
        return "nan" if math.isnan(value) else float(np.float32(value))
    if value in ("NaN",):
        return "nan"
    return value


def _corpus_rows():
    from conftest import load_corpus_sources

    ok = re.compile(r"^(Example|SequenceExample) x\d+$")
    return [r for r in load_corpus_sources() if ok.match(r["payload"]) and r["crc_status"] == "ok"]


def test_every_corpus_file_reads_through_spark_equal_to_tfrxs_parse(spark, corpus_dir):
    """All corpus files in one Spark job: each read with its spec, its rows as JSON, the reads unioned."""
    from pyspark.sql import functions as F

    from tfrx.integrations.arrow import to_record_batch

    frames, expected = [], {}
    for row in _corpus_rows():
        path = str(corpus_dir / row["filename"])
        kind = "sequence" if row["payload"].startswith("Sequence") else "example"
        records = list(tfrx.read_records(path))
        spec = tfrx.infer_features(records, max_records=len(records), kind=kind)
        if kind == "sequence":  # feature lists as Spark reads them: array<array<...>>
            spec = (spec[0], {k: tfrx.RaggedFeature(v.dtype) for k, v in spec[1].items()})
        parse = tfrx.parse_sequence_example if kind == "sequence" else tfrx.parse_example
        try:
            batch = to_record_batch(parse(records, *(spec if kind == "sequence" else (spec,))))
        except ValueError:  # a name that is both a context feature and a feature list: one column cannot hold both
            continue
        expected[row["filename"]] = [_normal(r) for r in batch.to_pylist()]
        df = spark.read.format("tfrecord").option("spec", tfrx.features_to_json(spec)).load(path)
        frames.append(
            df.select(
                F.lit(row["filename"]).alias("file"),
                F.to_json(F.struct(*df.columns), {"ignoreNullFields": "false"}).alias("row"),
            )
        )
    assert len(expected) >= 30
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionAll(frame)
    got: dict[str, list] = {}
    for r in union.collect():
        got.setdefault(r.file, []).append(_normal(json.loads(r.row)))
    assert sorted(got) == sorted(k for k, v in expected.items() if v)
    for name, rows in expected.items():
        assert got.get(name, []) == rows, name


def test_one_large_file_splits_into_tasks_and_gives_every_record_once(spark, tmp_path):
    path = tmp_path / "big.tfrecord"
    _write_examples(path, 3000)
    size = os.path.getsize(path)
    by_bytes = spark.read.format("tfrecord").option("splitBytes", str(size // 5)).load(str(path))
    assert by_bytes.rdd.getNumPartitions() >= 5
    assert sorted(r.id for r in by_bytes.select("id").collect()) == list(range(3000))

    indexed = spark.read.format("tfrecord").option("splitBytes", str(size // 4)).option("buildIndex", "true")
    df = indexed.load(str(path))
    assert df.rdd.getNumPartitions() >= 4
    assert len(tfrx.io.index.load_index(str(path), build=False)) == 3000  # built on the driver
    ids = df.select("id").collect()
    assert sorted(r.id for r in ids) == list(range(3000))

    gz = tmp_path / "big.tfrecord.gz"
    _write_examples(gz, 500, compression="gzip")
    assert spark.read.format("tfrecord").option("splitBytes", "1000").load(str(gz)).rdd.getNumPartitions() == 1


def test_damaged_input_raises_tfrxs_located_error_through_spark(spark, tmp_path):
    path = tmp_path / "damaged.tfrecord"
    _write_examples(path, 50)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as local:
        list(tfrx.read_records(str(path)))
    spec = tfrx.features_to_json({"id": tfrx.FixedLenFeature([], tfrx.int64)})
    with pytest.raises(Exception) as remote:
        spark.read.format("tfrecord").option("spec", spec).load(str(path)).collect()
    message = str(remote.value)
    assert "CorruptRecordError" in message
    assert str(path) in message
    assert f"record {local.value.record_index}" in message
    assert str(local.value.offset) in message


def test_a_task_killed_mid_write_leaves_no_shard_and_no_part(spark, tmp_path):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    out = tmp_path / "out"
    spark.range(40).write.format("tfrecord").mode("overwrite").save(str(out))
    before = {n: (out / n).read_bytes() for n in os.listdir(out) if not n.startswith(".")}

    @F.udf(LongType())
    def die_at(i):
        if i == 150:
            os._exit(3)  # the Python worker dies with the task's part half written
        return i

    failing = spark.range(0, 200, numPartitions=2).select(die_at("id").alias("id"))
    with pytest.raises(Exception):
        failing.write.format("tfrecord").mode("overwrite").save(str(out))
    after = {n: (out / n).read_bytes() for n in os.listdir(out) if not n.startswith(".")}
    assert after == before  # the earlier set is untouched, nothing of the failed job is there
    leftovers = [n for n in os.listdir(out / ".tfrx") if n.endswith(".part")] if (out / ".tfrx").exists() else []
    assert leftovers == []
    assert spark.read.format("tfrecord").load(str(out)).count() == 40


def test_pushed_filters_and_projection_through_spark(spark, tmp_path):
    path = tmp_path / "f.tfrecord"
    _write_examples(path, 300)
    df = spark.read.format("tfrecord").load(str(path))
    got = df.filter("id >= 250 and name = 'n3'").select("id").collect()
    assert sorted(r.id for r in got) == [i for i in range(250, 300) if i % 7 == 3]
    only = spark.read.format("tfrecord").option("columns", "id").load(str(path))
    assert only.columns == ["id"] and only.count() == 300


def test_partition_by_writes_hive_folders(spark, tmp_path):
    out = tmp_path / "parted"
    df = spark.range(0, 30, numPartitions=2).selectExpr("id", "cast(id % 3 as long) as k")
    df.write.format("tfrecord").option("partitionBy", "k").mode("overwrite").save(str(out))
    assert sorted(n for n in os.listdir(out) if not n.startswith(".")) == ["k=0", "k=1", "k=2"]
    for k in range(3):
        folder = out / f"k={k}"
        assert all(re.match(r"part\.tfrecord-\d{5}-of-\d{5}$", n) for n in os.listdir(folder) if not n.startswith("."))
        ids = sorted(r.id for r in spark.read.format("tfrecord").load(str(folder)).collect())
        assert ids == [i for i in range(30) if i % 3 == k]
    # the folder read whole: its k=v folders give the column back
    whole = spark.read.format("tfrecord").load(str(out))
    assert dict(whole.dtypes)["k"] == "bigint"
    assert sorted((r.id, r.k) for r in whole.collect()) == [(i, i % 3) for i in range(30)]


# ------------------------------------------------------------------ without Spark jobs
def test_commit_takes_only_the_successful_attempts_and_removes_the_others(tmp_path, monkeypatch):
    schema = ts.StructType([ts.StructField("id", ts.LongType())])
    writer = ts.TFRecordWriter({"path": str(tmp_path)}, schema, overwrite=True)
    batch = pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["id"])
    messages = {}
    for partition, attempt in [(0, 10), (0, 11), (1, 12)]:  # partition 0 ran twice (speculation)
        monkeypatch.setattr(ts, "_task_ids", lambda p=partition, a=attempt: (p, a))
        messages[attempt] = writer.write(iter([batch]))
    parts = os.listdir(tmp_path / ".tfrx")
    assert len([p for p in parts if p.endswith(".part")]) == 3
    writer.commit([messages[11], messages[12]])
    assert sorted(os.listdir(tmp_path)) == [".tfrx", "part.tfrecord-00000-of-00002", "part.tfrecord-00001-of-00002"]
    assert not [p for p in os.listdir(tmp_path / ".tfrx") if p.endswith(".part")]
    assert [
        tfrx.train.Example.FromString(r).features.feature["id"].int64_list.value[0]
        for r in tfrx.read_records(sorted(str(p) for p in tmp_path.glob("part.*")))
    ] == [1, 2, 3, 1, 2, 3]


def test_abort_and_a_failing_task_leave_nothing(tmp_path, monkeypatch):
    schema = ts.StructType([ts.StructField("id", ts.LongType())])
    writer = ts.TFRecordWriter({"path": str(tmp_path)}, schema, overwrite=False)
    batch = pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["id"])

    def failing():
        yield batch
        raise RuntimeError("the task dies here")

    with pytest.raises(RuntimeError):
        writer.write(failing())
    assert not [p for p in os.listdir(tmp_path / ".tfrx") if p.endswith(".part")]
    message = writer.write(iter([batch]))
    assert os.path.exists(message.parts[0][1])
    writer.abort([message, None])
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("given", [False, True], ids=["inferred", "spec"])
def test_reader_applies_pushed_filters_and_returns_the_rest(tmp_path, given):
    path = tmp_path / "f.tfrecord"
    _write_examples(path, 100)
    options = {"path": str(path)}
    if given:  # required scalars: the filter runs inside the parse plan
        spec = {"id": tfrx.FixedLenFeature([], tfrx.int64), "name": tfrx.FixedLenFeature([], tfrx.string)}
        options["spec"] = tfrx.features_to_json(spec)
    source = ts.TFRecordDataSourcePushingFilters(options)
    schema = source.schema()
    reader = source.reader(schema)
    contains = ds.StringContains(("name",), "3")
    left = list(reader.pushFilters([ds.GreaterThan(("id",), 90), ds.In(("name",), ("n1", "n2")), contains]))
    assert left == [contains]
    rows = [r for p in reader.partitions() for b in reader.read(p) for r in b.to_pylist()]
    assert sorted(r["id"] for r in rows) == [i for i in range(91, 100) if i % 7 in (1, 2)]
    assert all(isinstance(r["name"], bytes) for r in rows)


def test_projection_parses_only_the_schemas_features(tmp_path):
    path = tmp_path / "p.tfrecord"
    _write_examples(path, 20)
    spec = {"id": tfrx.FixedLenFeature([], tfrx.int64), "absent": tfrx.FixedLenFeature([], tfrx.int64)}
    source = ts.TFRecordDataSource({"path": str(path), "spec": tfrx.features_to_json(spec)})
    whole = source.reader(source.schema())
    with pytest.raises(tfrx.TfrxError, match="absent"):
        [b for p in whole.partitions() for b in whole.read(p)]
    only = source.reader(ts.StructType([ts.StructField("id", ts.LongType())]))
    assert [r["id"] for p in only.partitions() for b in only.read(p) for r in b.to_pylist()] == list(range(20))


def _example(**features) -> bytes:
    feature = {}
    for name, value in features.items():
        if isinstance(value[0], float):
            feature[name] = tfrx.train.Feature(float_list=tfrx.train.FloatList(value=value))
        else:
            feature[name] = tfrx.train.Feature(int64_list=tfrx.train.Int64List(value=value))
    return tfrx.train.Example(features=tfrx.train.Features(feature=feature)).SerializeToString()


def test_inference_samples_several_files_and_reports_conflicts(tmp_path):
    files = []
    for i in range(10):
        path = tmp_path / f"f{i}.tfrecord"
        kind = [1.5] if i == 9 else [7]  # the last file disagrees on the kind of 'a'
        width = [1, 2] if i == 5 else [1]  # one file disagrees on the count of 'b'
        with tfrx.TFRecordWriter(str(path)) as w:
            w.write(_example(a=kind, b=width, c=[i]))
        files.append(str(path))
    found = so.infer_spec(files, files=10)
    assert len(found.files) == 10
    assert len(found.conflicts) == 1 and "'a'" in found.conflicts[0] and "f9.tfrecord: float32" in found.conflicts[0]
    assert len(found.widened) == 1 and "'b'" in found.widened[0]
    assert isinstance(found.spec["b"], tfrx.VarLenFeature)
    with pytest.raises(ValueError, match="disagree on the kind of 1 feature"):
        found.check()
    # the first file alone would hide both; a sample of 4 spread files still includes the last one
    assert so.infer_spec(files, files=1).conflicts == []
    assert len(so.infer_spec(files, files=4).conflicts) == 1
    source = ts.TFRecordDataSource({"path": str(tmp_path / "*.tfrecord"), "inferFiles": "4"})
    with pytest.raises(ValueError, match="'a'"):
        source.schema()


def _read_all(reader) -> list[dict]:
    return [r for p in reader.partitions() for b in reader.read(p) for r in b.to_pylist()]


def test_bytes_as_string_and_a_scalar_column_over_several_values(tmp_path):
    path = tmp_path / "s.tfrecord"
    _write_examples(path, 5)
    source = ts.TFRecordDataSource({"path": str(path), "bytesAs": "string", "columns": "id,name"})
    schema = source.schema()
    assert [(f.name, f.dataType.simpleString()) for f in schema.fields] == [("id", "bigint"), ("name", "string")]
    assert [r["name"] for r in _read_all(source.reader(schema))] == ["n0", "n1", "n2", "n3", "n4"]
    # a schema that says scalar for a feature of 40 values: the error says what to declare
    plain = ts.TFRecordDataSource({"path": str(path)})
    with pytest.raises(ValueError, match=r"'pad' holds 40 values .* declare it an array"):
        _read_all(plain.reader(ts.StructType([ts.StructField("pad", ts.FloatType())])))
    with pytest.raises(ValueError, match="unknown option"):
        ts.TFRecordDataSource({"path": str(path), "compresion": "gzip"}).schema()


def test_write_options_index_name_and_append(tmp_path):
    schema = ts.StructType([ts.StructField("id", ts.LongType())])
    batch = pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["id"])
    first = ts.TFRecordWriter({"path": str(tmp_path), "name": "train", "index": "true"}, schema, overwrite=True)
    first.commit([first.write(iter([batch]))])
    assert os.path.exists(tmp_path / "train.tfrecord-00000-of-00001")
    assert os.path.exists(tmp_path / ".tfrx" / "train.tfrecord-00000-of-00001.tfrxidx")
    second = ts.TFRecordWriter({"path": str(tmp_path), "name": "train"}, schema, overwrite=False)
    second.commit([second.write(iter([batch]))])  # append: a set of its own, the first kept
    shards = sorted(n for n in os.listdir(tmp_path) if not n.startswith("."))
    assert shards[-1] == "train.tfrecord-00000-of-00001"
    assert re.fullmatch(r"train-[0-9a-f]{12}\.tfrecord-00000-of-00001", shards[0])
    assert len(list(tfrx.read_records([str(tmp_path / n) for n in shards]))) == 6


def test_short_name_and_on_error_skip(tmp_path):
    import tfrx.spark

    assert tfrx.spark is ts
    path = tmp_path / "damaged.tfrecord"
    _write_examples(path, 30)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    spec = tfrx.features_to_json({"id": tfrx.FixedLenFeature([], tfrx.int64)})
    source = ts.TFRecordDataSource({"path": str(path), "spec": spec, "onError": "skip"})
    ids = [r["id"] for r in _read_all(source.reader(source.schema()))]
    assert len(ids) == 29 and ids == sorted(ids)


def test_a_job_without_rows_writes_one_empty_shard(tmp_path):
    schema = ts.StructType([ts.StructField("id", ts.LongType())])
    writer = ts.TFRecordWriter({"path": str(tmp_path)}, schema, overwrite=True)
    writer.commit([writer.write(iter([])), writer.write(iter([]))])
    assert sorted(n for n in os.listdir(tmp_path) if not n.startswith(".")) == ["part.tfrecord-00000-of-00001"]
    assert list(tfrx.read_records(str(tmp_path / "part.tfrecord-00000-of-00001"))) == []


def test_partition_folders_become_columns(tmp_path):
    schema = ts.StructType([ts.StructField("id", ts.LongType()), ts.StructField("lang", ts.StringType())])
    writer = ts.TFRecordWriter({"path": str(tmp_path), "partitionBy": "lang"}, schema, overwrite=True)
    batch = pa.record_batch([pa.array([1, 2, 3, 4]), pa.array(["en", "de/at", None, "en"])], names=["id", "lang"])
    writer.commit([writer.write(iter([batch]))])
    assert sorted(n for n in os.listdir(tmp_path) if not n.startswith(".")) == [
        "lang=__HIVE_DEFAULT_PARTITION__",
        "lang=de%2Fat",
        "lang=en",
    ]
    source = ts.TFRecordDataSource({"path": str(tmp_path)})
    read_schema = source.schema()
    assert [(f.name, f.dataType.simpleString()) for f in read_schema.fields] == [("id", "bigint"), ("lang", "string")]
    rows = sorted((r["id"], r["lang"]) for r in _read_all(source.reader(read_schema)))
    assert rows == [(1, "en"), (2, "de/at"), (3, None), (4, "en")]
