"""tfrx.ray: read_tfrecords / write_tfrecords on a local Ray instance, against tfrx's single-process results."""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pytest

import tfrx

pa = pytest.importorskip("pyarrow")
ray = pytest.importorskip("ray")
tray = pytest.importorskip("tfrx.ray")
from tfrx.arrow import read_tfrecord  # noqa: E402

SPEC = {
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "score": tfrx.FixedLenFeature([], tfrx.float32),
    "vec": tfrx.FixedLenFeature([3], tfrx.float32),
    "name": tfrx.FixedLenFeature([], tfrx.string),
    "tags": tfrx.VarLenFeature(tfrx.int64),
    "words": tfrx.RaggedFeature(tfrx.string),
}


def _columns(n: int, first: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 4, n)
    words = rng.integers(0, 3, n)
    # payloads of very different sizes, so split points land inside records of every size
    return {
        "id": np.arange(first, first + n, dtype=np.int64),
        "score": rng.random(n).astype(np.float32),
        "vec": rng.random((n, 3)).astype(np.float32),
        "name": [b"n%d-" % i + b"x" * int(k) for i, k in zip(range(first, first + n), rng.integers(0, 300, n))],
        "tags": tfrx.Ragged(rng.integers(0, 100, int(lengths.sum())).astype(np.int64), row_lengths=lengths),
        "words": tfrx.Ragged([b"w%d" % i for i in range(int(words.sum()))], row_lengths=words),
    }


def _write(path, n, first, seed, compression=None) -> str:
    tfrx.write_records(str(path), tfrx.encode_examples(_columns(n, first, seed)), compression=compression)
    return str(path)


@pytest.fixture(scope="module")
def cluster():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("ray-shards")
    shards = [_write(d / f"train-{i}.tfrecord", 150, 150 * i, i) for i in range(3)]
    big = _write(d / "big.tfrecord", 2000, 10_000, 7)
    gz = [_write(d / f"gz-{i}.tfrecord.gz", 120, 20_000 + 120 * i, 10 + i, "gzip") for i in range(2)]
    return {"shards": shards, "big": big, "gz": gz}


def _table(ds) -> Any:
    return pa.concat_tables(ray.get(ds.to_arrow_refs()))


def _assert_same(table: Any, expected: Any) -> None:
    assert table.schema == expected.schema
    assert table.to_pydict() == expected.to_pydict()


def test_several_shards_equal_the_single_process_read(cluster, files):
    paths = files["shards"] + [files["big"]]
    _assert_same(_table(tray.read_tfrecords(paths, SPEC)), read_tfrecord(paths, SPEC))


def test_files_are_grouped_when_fewer_blocks_are_asked_for(files):
    assert tfrx.ray is tray  # the facade imports it lazily
    source = tray.TFRecordDatasource(files["shards"], SPEC)
    assert len(source.get_read_tasks(8)) == 3  # one per shard
    tasks = source.get_read_tasks(2)
    assert len(tasks) == 2
    assert sorted(f for t in tasks for f in t.metadata.input_files) == sorted(files["shards"])
    assert all(t.schema == source.schema for t in tasks)


def test_a_large_shard_splits_into_byte_ranges_on_record_boundaries(cluster, files):
    source = tray.TFRecordDatasource(files["big"], SPEC, min_split_bytes=1, use_index=False)
    tasks = source.get_read_tasks(7)
    assert len(tasks) == 7 and all(t.metadata.num_rows is None for t in tasks)
    ds = tray.read_tfrecords(files["big"], SPEC, min_split_bytes=1, use_index=False, override_num_blocks=7)
    _assert_same(_table(ds), read_tfrecord(files["big"], SPEC))


def test_a_large_shard_splits_by_its_index(cluster, files, tmp_path):
    path = _write(tmp_path / "indexed.tfrecord", 900, 0, 3)
    tfrx.build_index(path)
    source = tray.TFRecordDatasource(path, SPEC, min_split_bytes=1)
    tasks = source.get_read_tasks(4)
    assert [t.metadata.num_rows for t in tasks] == [225, 225, 225, 225]
    ds = tray.read_tfrecords(path, SPEC, min_split_bytes=1, override_num_blocks=4)
    _assert_same(_table(ds), read_tfrecord(path, SPEC))


def test_gzip_files_are_read_whole(cluster, files):
    source = tray.TFRecordDatasource(files["gz"], SPEC, min_split_bytes=1)
    assert len(source.get_read_tasks(10)) == 2
    ds = tray.read_tfrecords(files["gz"], SPEC, min_split_bytes=1, override_num_blocks=10)
    _assert_same(_table(ds), read_tfrecord(files["gz"], SPEC))


def test_inferred_schema(cluster, files):
    paths = files["shards"]
    ds = tray.read_tfrecords(paths)
    expected = read_tfrecord(paths)  # infers from the first records too
    _assert_same(_table(ds), expected)
    assert ds.schema().names == sorted(SPEC)


def test_raw_records(cluster, files):
    ds = tray.read_tfrecords(files["shards"], raw=True)
    table = _table(ds)
    assert table.column_names == ["record"]
    assert table.column("record").to_pylist() == list(tfrx.read_records(files["shards"]))
    # The same column as tfrx.arrow's and the converters' raw=True.
    assert table.column("record").to_pylist() == read_tfrecord(files["shards"], raw=True).column("record").to_pylist()


def test_raw_records_former_spelling_warns(cluster, files):
    """features=False keeps working for one release, with its former column name."""
    with pytest.warns(DeprecationWarning, match="raw=True"):
        ds = tray.read_tfrecords(files["shards"], features=False)
    table = _table(ds)
    assert table.column_names == ["bytes"]
    assert table.column("bytes").to_pylist() == list(tfrx.read_records(files["shards"]))


def test_raw_and_features_conflict(files):
    with pytest.raises(TypeError, match="not both"):
        tray.TFRecordDatasource(files["shards"], {"x": tfrx.FixedLenFeature([], tfrx.int64)}, raw=True)


def _corrupt(src: str, dst, record: int) -> tuple[str, int]:
    """A copy of ``src`` with one payload byte of ``record`` flipped; returns (path, header offset)."""
    data = bytearray(open(src, "rb").read())
    offset = int(tfrx.build_index(src, index_path=str(dst) + ".idx").offsets[record])
    data[offset + 12] ^= 0xFF
    open(dst, "wb").write(bytes(data))
    return str(dst), offset


def test_a_corrupt_record_raises_with_file_and_offset(cluster, files, tmp_path):
    path, offset = _corrupt(files["shards"][1], tmp_path / "bad.tfrecord", 40)
    with pytest.raises(Exception, match=rf"data CRC mismatch in '.*bad.tfrecord', record 40 at byte {offset}"):
        _table(tray.read_tfrecords(path, SPEC))


def test_skip_loses_only_the_corrupt_record(cluster, files, tmp_path):
    path, _ = _corrupt(files["shards"][1], tmp_path / "bad.tfrecord", 40)
    table = _table(tray.read_tfrecords(path, SPEC, on_error="skip"))
    expected = read_tfrecord(files["shards"][1], SPEC)
    keep = [i for i in range(expected.num_rows) if i != 40]
    _assert_same(table, expected.take(keep))


def test_skip_drops_records_that_are_not_examples(cluster, files, tmp_path):
    records = list(tfrx.read_records(files["shards"][0]))
    path = str(tmp_path / "mixed.tfrecord")
    tfrx.write_records(path, records[:10] + [b"\xff\xff\xff"] + records[10:])
    with pytest.raises(Exception):
        _table(tray.read_tfrecords(path, SPEC))
    _assert_same(_table(tray.read_tfrecords(path, SPEC, on_error="skip")), read_tfrecord(files["shards"][0], SPEC))


def test_a_corrupt_record_at_a_split_point_is_never_lost(cluster, files, tmp_path):
    # With 5 byte ranges, find a record whose header starts in a range after its start:
    # the corrupt record is the first one the range would begin with.
    size = os.path.getsize(files["big"])
    offsets = tfrx.build_index(files["big"], index_path=str(tmp_path / "i.idx")).offsets
    split = size * 2 // 5
    record = int(np.searchsorted(offsets, split))
    path, _ = _corrupt(files["big"], tmp_path / "bad-big.tfrecord", record)
    args = dict(min_split_bytes=1, use_index=False, override_num_blocks=5)
    with pytest.raises(Exception, match="data CRC mismatch"):
        _table(tray.read_tfrecords(path, SPEC, **args))
    table = _table(tray.read_tfrecords(path, SPEC, on_error="skip", **args))
    expected = read_tfrecord(files["big"], SPEC)
    _assert_same(table, expected.take([i for i in range(expected.num_rows) if i != record]))


def test_write_round_trips_with_tfds_names(cluster, files, tmp_path):
    paths = files["shards"]
    expected = read_tfrecord(paths, SPEC)
    out = tray.write_tfrecords(tray.read_tfrecords(paths, SPEC), tmp_path / "out" / "train", num_shards=4)
    assert [os.path.basename(p) for p in out] == [f"train.tfrecord-{i:05d}-of-00004" for i in range(4)]
    assert sorted(os.listdir(tmp_path / "out")) == sorted([".tfrx", *map(os.path.basename, out)])
    assert os.listdir(tmp_path / "out" / ".tfrx") == ["train.manifest.json"]  # no .part, no journal left
    assert sum(1 for _ in tfrx.read_records(out)) == expected.num_rows
    _assert_same(read_tfrecord(out, SPEC), expected)


def test_write_one_shard_per_block_gzip(cluster, files, tmp_path):
    ds = ray.data.from_arrow(read_tfrecord(files["shards"], SPEC)).repartition(3)
    out = tray.write_tfrecords(ds, str(tmp_path / "gz" / "data"), compression="gzip")
    assert len(out) == 3 and all(re.fullmatch(r"data\.tfrecord-0000[0-2]-of-00003", os.path.basename(p)) for p in out)
    assert open(out[0], "rb").read(2) == b"\x1f\x8b"
    _assert_same(read_tfrecord(out, SPEC), read_tfrecord(files["shards"], SPEC))
    assert not [n for n in os.listdir(tmp_path / "gz" / ".tfrx") if not n.endswith(".manifest.json")]


def test_write_selects_and_casts_features(cluster, tmp_path):
    ds = ray.data.from_items([{"a": i, "b": float(i) / 2, "c": "t%d" % i} for i in range(20)])
    features = {"a": tfrx.FixedLenFeature([], tfrx.int64), "b": tfrx.FixedLenFeature([], tfrx.float32)}
    out = tray.write_tfrecords(ds, tmp_path / "sel", features=features)
    table = read_tfrecord(out, features)
    assert table.column("a").to_pylist() == list(range(20))
    assert table.column("b").to_pylist() == [i / 2 for i in range(20)]
    assert set(tfrx.decode_example(next(tfrx.read_records(out)))) == {"a", "b"}


def test_a_failed_write_leaves_no_files(cluster, tmp_path):
    ds = ray.data.from_items([{"a": {"nested": 1}} for _ in range(5)])  # a struct has no Feature kind
    with pytest.raises(Exception, match="no tf.train.Example counterpart"):
        tray.write_tfrecords(ds, tmp_path / "bad" / "x")
    assert os.listdir(tmp_path / "bad") == []


def test_a_commit_stopped_midway_is_refused_by_readers(cluster, tmp_path, monkeypatch):
    """The sink commits through ShardedWriter's journalled commit: stopped after one shard moved, readers refuse."""
    import tfrx.io._commit as commit

    steps = []

    def before(step):
        steps.append(step)
        if step == "move 1":
            raise RuntimeError("stopped at " + step)

    monkeypatch.setattr(commit, "_before_step", before)
    ds = ray.data.from_items([{"a": i} for i in range(30)]).repartition(3)
    with pytest.raises(Exception, match="stopped at move 1"):
        tray.write_tfrecords(ds, tmp_path / "out" / "train", num_shards=3)
    assert steps == ["journal", "clear", "move 0", "move 1"]
    assert os.path.exists(tmp_path / "out" / "train.tfrecord-00000-of-00003")
    with pytest.raises(tfrx.IncompleteShardSetError, match="train.tfrecord-00001-of-00003"):
        list(tfrx.read_records(str(tmp_path / "out" / "train*")))


def _list_columns(n: int, seed: int) -> dict:
    """Columns for Ray's own reader, which turns single-value features into scalars and
    longer ones into lists: every list feature holds two or more values in every record."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 5, n)
    return {
        "id": np.arange(n, dtype=np.int64) + 1000 * seed,
        "score": rng.random(n).astype(np.float32),
        "vec": rng.random((n, 3)).astype(np.float32),
        "name": [b"r%d" % i for i in range(n)],
        "tags": tfrx.Ragged(rng.integers(0, 100, int(lengths.sum())).astype(np.int64), row_lengths=lengths),
    }


def test_equals_rays_own_reader(cluster, tf, tmp_path):
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"part-{i}.tfrecords"))
        tfrx.write_records(paths[-1], tfrx.encode_examples(_list_columns(200, i)))
    ours = _table(tray.read_tfrecords(paths)).to_pydict()
    theirs: dict = {}
    # Ray's blocks order their columns as each record's feature map happens to iterate
    for block in ray.get(ray.data.read_tfrecords(paths, override_num_blocks=1).to_arrow_refs()):
        for name, values in block.to_pydict().items():
            theirs.setdefault(name, []).extend(values)
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        assert ours[name] == theirs[name], name


# ------------------------------------------------------------------ converters as Ray tasks
def _records(paths) -> list[bytes]:
    return list(tfrx.read_records(paths))


def test_csv_converter_on_ray_equals_the_local_conversion(cluster, tmp_path):
    from tfrx.tools.convert import csv_to_tfrecord

    src = tmp_path / "t.csv"
    rows = ["id,text,x"] + [f'{i},"r{i}, ""q""",{"bad" if i == 700 else i / 4}' for i in range(1500)]
    src.write_text("\n".join(rows) + "\n")
    args = dict(
        spec={"id": "int64", "text": "bytes", "x": "float"}, parallel_chunk_bytes=4096, num_shards=3, on_error="skip"
    )
    local = csv_to_tfrecord(src, tmp_path / "local" / "t", num_parallel_calls=1, **args)
    remote = csv_to_tfrecord(src, tmp_path / "ray" / "t", engine="ray", **args)
    assert (
        (remote.records, remote.skipped, remote.errors)
        == (local.records, local.skipped, local.errors)
        == (1499, 1, [f"{src}: line 702: column 'x': 'bad' is not float"])
    )
    assert [_records(p) for p in remote.paths] == [_records(p) for p in local.paths]


def test_image_converter_on_ray_equals_the_local_conversion(cluster, tmp_path):
    from tfrx.tools.convert import images_to_tfrecord

    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(1)
    for i in range(70):  # more than one part of the file list (64 images)
        d = tmp_path / "img" / ("a" if i % 3 else "b")
        d.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (6 + i % 5, 7, 3), dtype=np.uint8)).save(d / f"{i}.png")
    (tmp_path / "img" / "a" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    args = dict(num_shards=2, num_parallel_calls=1, on_error="skip", resize=(4, 4))
    local = images_to_tfrecord(tmp_path / "img", tmp_path / "local" / "i", **args)
    remote = images_to_tfrecord(tmp_path / "img", tmp_path / "ray" / "i", engine="ray", **args)
    assert (remote.records, remote.skipped) == (local.records, local.skipped) == (70, 1)
    assert [_records(p) for p in remote.paths] == [_records(p) for p in local.paths]


def test_parquet_converter_on_ray_equals_the_local_conversion(cluster, tmp_path):
    import pyarrow.parquet as pq

    from tfrx.tools.convert import parquet_to_tfrecord

    n = 1000
    table = pa.table(
        {
            "a": np.arange(n),
            "b": [None if i % 9 == 0 else f"{i / 2}" for i in range(n)],
            "c": [[i, i + 1] for i in range(n)],
        }
    )
    table = table.set_column(
        1, "b", pa.array([("x" if i == 333 else v) for i, v in enumerate(table.column("b").to_pylist())])
    )
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=300)
    args = dict(spec={"b": "float"}, max_records_per_shard=400, on_error="skip", batch_rows=128)
    local = parquet_to_tfrecord(tmp_path / "t.parquet", tmp_path / "local" / "p", **args)
    remote = parquet_to_tfrecord(tmp_path / "t.parquet", tmp_path / "ray" / "p", engine="ray", **args)
    assert (remote.records, remote.skipped, remote.errors) == (local.records, local.skipped, local.errors)
    assert local.skipped == 1 and "row 333" in local.errors[0]
    assert [_records(p) for p in remote.paths] == [_records(p) for p in local.paths]


def test_read_and_write_on_s3(cluster, s3, files):
    from conftest import S3_BUCKET

    s3.clear_faults()
    opts = s3.storage_options()
    prefix = f"s3://{S3_BUCKET}/ray"
    import fsspec

    fs = fsspec.filesystem("s3", **opts)
    for i, path in enumerate(files["shards"]):
        fs.put_file(path, f"{S3_BUCKET}/ray/in/train-{i}.tfrecord")
    expected = read_tfrecord(files["shards"], SPEC)
    ds = tray.read_tfrecords(f"{prefix}/in/train-*.tfrecord", SPEC, storage_options=opts)
    _assert_same(_table(ds), expected)
    # a file split into byte ranges read over HTTP range requests
    source = tray.TFRecordDatasource(f"{prefix}/in/train-1.tfrecord", SPEC, storage_options=opts, min_split_bytes=1)
    assert len(source.get_read_tasks(3)) == 3
    ds = tray.read_tfrecords(
        f"{prefix}/in/train-1.tfrecord", SPEC, storage_options=opts, min_split_bytes=1, override_num_blocks=3
    )
    _assert_same(_table(ds), read_tfrecord(files["shards"][1], SPEC))
    out = tray.write_tfrecords(
        tray.read_tfrecords(files["shards"], SPEC), f"{prefix}/out/train", num_shards=2, storage_options=opts
    )
    assert out == [f"{prefix}/out/train.tfrecord-0000{i}-of-00002" for i in range(2)]
    names = sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"{S3_BUCKET}/ray/out", detail=False))
    assert names == [".tfrx", "train.tfrecord-00000-of-00002", "train.tfrecord-00001-of-00002"]
    names = sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"{S3_BUCKET}/ray/out/.tfrx", detail=False))
    assert names == ["train.manifest.json"]
    back = tray.read_tfrecords(f"{prefix}/out/train.tfrecord-*", SPEC, storage_options=opts)
    _assert_same(_table(back), expected)


SEQ_CONTEXT = {"id": tfrx.FixedLenFeature([], tfrx.int64), "name": tfrx.FixedLenFeature([], tfrx.string)}
SEQ_LISTS = {
    "tok": tfrx.RaggedFeature(tfrx.int64),
    "emb": tfrx.FixedLenSequenceFeature([2], tfrx.float32, allow_missing=True),
    "word": tfrx.RaggedFeature(tfrx.string),
}


def _write_sequences(path, n: int, first: int, seed: int) -> str:
    """SequenceExamples with steps of varying length, empty steps and examples without steps."""
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, 4, n)
    steps[1] = 0
    context = {"id": np.arange(first, first + n, dtype=np.int64), "name": [b"seq-%d" % i for i in range(n)]}
    lists = {
        "tok": [[list(rng.integers(0, 50, rng.integers(0, 3))) for _ in range(k)] for k in steps],
        "emb": [rng.random((k, 2)).astype(np.float32) for k in steps],
        "word": [[[b"w%d-%d" % (i, t)] for t in range(k)] for i, k in enumerate(steps)],
    }
    records = tfrx.encode_sequence_examples(context, lists, kinds={"tok": "int64", "word": "bytes"})
    tfrx.write_records(str(path), records)
    return str(path)


def test_sequence_examples_read_and_write_back(cluster, tmp_path):
    paths = [_write_sequences(tmp_path / f"seq-{i}.tfrecord", 40, 40 * i, i) for i in range(2)]
    spec = (SEQ_CONTEXT, SEQ_LISTS)
    expected = read_tfrecord(paths, spec)
    _assert_same(_table(tray.read_tfrecords(paths, spec)), expected)
    # a file split into byte ranges
    _assert_same(
        _table(tray.read_tfrecords(paths[0], spec, min_split_bytes=1, override_num_blocks=3)),
        read_tfrecord(paths[0], spec),
    )
    # recognised and inferred as read_tfrecord does
    _assert_same(_table(tray.read_tfrecords(paths)), read_tfrecord(paths))
    # written back as SequenceExamples (the feature lists named by the schema, or by the spec)
    out = tray.write_tfrecords(tray.read_tfrecords(paths, spec), tmp_path / "out" / "seq", num_shards=2)
    _assert_same(read_tfrecord(out, spec), expected)
    ds = ray.data.from_arrow(expected.replace_schema_metadata(None))
    out = tray.write_tfrecords(ds, tmp_path / "out2" / "seq", features=spec)
    _assert_same(read_tfrecord(out, spec), expected)
    _, lists, lengths = tfrx.parse_sequence_example([next(tfrx.read_records(out))], *spec)
    assert set(lists) == set(SEQ_LISTS) and int(lengths["emb"][0]) == len(expected.column("emb")[0])
