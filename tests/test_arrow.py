"""tfrx.arrow: parsed batches to pyarrow without copying numeric data, Tables back to Examples, read_tfrecord."""

from __future__ import annotations

import numpy as np
import pytest

import tfrx

pa = pytest.importorskip("pyarrow")
ta = pytest.importorskip("tfrx.arrow")


def _columns(n: int = 7, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 4, n)
    return {
        "id": np.arange(n, dtype=np.int64),
        "score": rng.random(n).astype(np.float32),
        "emb": rng.random((n, 2, 3)).astype(np.float32),
        "name": [b"row-%d" % i for i in range(n)],
        "tags": tfrx.Ragged(rng.integers(0, 100, int(lengths.sum())).astype(np.int64), row_lengths=lengths),
        "words": tfrx.Ragged([b"w%d" % i for i in range(int(lengths.sum()))], row_lengths=lengths),
    }


FEATURES = {
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "score": tfrx.FixedLenFeature([], tfrx.float32),
    "emb": tfrx.FixedLenFeature([2, 3], tfrx.float32),
    "name": tfrx.FixedLenFeature([], tfrx.string),
    "tags": tfrx.VarLenFeature(tfrx.int64),
    "words": tfrx.RaggedFeature(tfrx.string),
}


def _address(arr) -> int:
    return arr.buffers()[1].address


def test_numeric_columns_share_the_parsed_buffers():
    records = tfrx.encode_examples(_columns())
    parsed = tfrx.parse_example(records, FEATURES)
    batch = ta.to_record_batch(parsed)
    assert _address(batch.column("id")) == parsed["id"].ctypes.data
    assert _address(batch.column("score")) == parsed["score"].ctypes.data
    emb = batch.column("emb")
    assert pa.types.is_fixed_size_list(emb.type) and emb.type.list_size == 2
    assert _address(emb.flatten().flatten()) == parsed["emb"].ctypes.data
    tags = batch.column("tags")
    assert pa.types.is_large_list(tags.type)
    assert _address(tags.flatten()) == parsed["tags"].values.ctypes.data
    words = batch.column("words")
    assert pa.types.is_list(words.type)  # int32 row_splits, RaggedFeature's default
    assert words.offsets.buffers()[1].address == parsed["words"].row_splits.ctypes.data
    assert pa.types.is_binary(batch.column("name").type)


def test_values_match_the_parse():
    cols = _columns(11, seed=3)
    records = tfrx.encode_examples(cols)
    parsed = tfrx.parse_example(records, FEATURES)
    table = ta.to_table(parsed)
    d = table.to_pydict()
    assert d["id"] == cols["id"].tolist()
    np.testing.assert_array_equal(np.array(d["emb"], np.float32), cols["emb"])
    assert d["name"] == cols["name"]
    splits = cols["tags"].row_splits
    assert d["tags"] == [cols["tags"].values[a:b].tolist() for a, b in zip(splits[:-1], splits[1:])]
    assert d["words"] == [cols["words"].values[a:b] for a, b in zip(splits[:-1], splits[1:])]


def test_round_trip_through_examples():
    records = tfrx.encode_examples(_columns(9, seed=5))
    parsed = tfrx.parse_example(records, FEATURES)
    batch = ta.to_record_batch(parsed)
    again = ta.to_examples(batch)
    assert ta.to_record_batch(tfrx.parse_example(again, FEATURES)).equals(batch)
    as_batch = ta.to_examples(pa.Table.from_batches([batch, batch]), as_batch=True)
    assert isinstance(as_batch, tfrx.RecordBatch) and len(as_batch) == 18


def test_nulls_become_missing_features():
    table = pa.table(
        {
            "x": pa.array([1, None, 3], pa.int64()),
            "v": pa.array([[1.5], None, []], pa.list_(pa.float32())),
            "s": pa.array(["a", None, "c"]),
        }
    )
    records = ta.to_examples(table)
    rows = [tfrx.decode_example(r) for r in records]
    assert sorted(rows[0]) == ["s", "v", "x"] and "x" not in rows[1] and "s" not in rows[1]
    parsed = tfrx.parse_example(
        records,
        {
            "x": tfrx.FixedLenFeature([], tfrx.int64, default_value=-1),
            "v": tfrx.VarLenFeature(tfrx.float32),
            "s": tfrx.FixedLenFeature([], tfrx.string, default_value=b"?"),
        },
    )
    assert parsed["x"].tolist() == [1, -1, 3]
    assert parsed["s"].tolist() == [b"a", b"?", b"c"]
    assert ta.to_record_batch(parsed).column("v").to_pylist() == [[1.5], [], []]


def test_read_tfrecord_infers_features(tmp_path):
    cols = _columns(20, seed=1)
    path = str(tmp_path / "a.tfrecord")
    tfrx.write_records(path, tfrx.encode_examples(cols))
    table = tfrx.read_tfrecord(path)
    assert table.num_rows == 20
    assert table.column("id").to_pylist() == list(range(20))
    assert table.column("name").to_pylist() == cols["name"]
    explicit = tfrx.read_tfrecord(path, FEATURES, batch_size=6)
    assert explicit.num_rows == 20 and explicit.column("emb").type.list_size == 2
    assert explicit.column("tags").combine_chunks().equals(table.column("tags").combine_chunks())
    lazy = list(ta.iter_record_batches(path, FEATURES, batch_size=6))
    assert [b.num_rows for b in lazy] == [6, 6, 6, 2]
    assert pa.Table.from_batches(lazy).equals(explicit)


def test_read_tfrecord_empty_file(tmp_path):
    path = str(tmp_path / "empty.tfrecord")
    tfrx.write_records(path, [])
    assert tfrx.read_tfrecord(path).num_rows == 0
    table = tfrx.read_tfrecord(path, {"id": tfrx.FixedLenFeature([], tfrx.int64)})
    assert table.num_rows == 0 and table.schema.names == ["id"]


def _shards(tmp_path, records: list[bytes], k: int) -> list[str]:
    paths = []
    for i in range(k):
        paths.append(str(tmp_path / f"part-{i}.tfrecord"))
        tfrx.write_records(paths[-1], records[i::k])
    return paths


@pytest.mark.parametrize("threads", [1, 3])
def test_read_tfrecord_equals_the_parse_of_every_record_in_the_files_order(tmp_path, threads):
    # The readers go through the parallel scan; the table is still the whole parse, files and records in order,
    # columns in the parse's order (sorted, not the spec's), and batches of at most batch_size rows.
    records = tfrx.encode_examples(_columns(500, seed=7))
    paths = _shards(tmp_path, records, 4)
    in_order = [r for p in paths for r in tfrx.read_records(p)]
    expected = ta.to_table(tfrx.parse_example(in_order, FEATURES))
    for spec in (FEATURES, dict(reversed(FEATURES.items()))):
        table = tfrx.read_tfrecord(paths, spec, num_parallel_calls=threads, batch_size=37)
        assert table.column_names == sorted(FEATURES)
        assert table.equals(expected, check_metadata=True)
    batches = list(ta.iter_record_batches(paths, FEATURES, num_parallel_calls=threads, batch_size=37))
    assert max(b.num_rows for b in batches) <= 37
    assert pa.Table.from_batches(batches).equals(expected)


@pytest.mark.parametrize("threads", [1, 3])
def test_read_tfrecord_of_sequence_examples_names_the_feature_lists(tmp_path, threads):
    records, _, _ = _sequence_records(60, seed=11)
    paths = _shards(tmp_path, records, 3)
    in_order = [r for p in paths for r in tfrx.read_records(p)]
    expected = ta.to_table(tfrx.parse_sequence_example(in_order, SEQ_CONTEXT, SEQ_LISTS))
    table = tfrx.read_tfrecord(paths, (SEQ_CONTEXT, SEQ_LISTS), num_parallel_calls=threads, batch_size=7)
    assert table.equals(expected, check_metadata=True)  # the schema names emb, tok and word as feature lists
    assert ta.to_sequence_examples(table) == in_order
    for batch in ta.iter_record_batches(paths, (SEQ_CONTEXT, SEQ_LISTS), batch_size=7):
        assert batch.schema.metadata == expected.schema.metadata


def test_read_tfrecord_with_nothing_to_infer_from_is_an_empty_table(tmp_path):
    path = tmp_path / "cut.tfrecord"
    tfrx.write_records(str(path), tfrx.encode_examples(_columns(1)))
    path.write_bytes(path.read_bytes()[:-3])  # the one record cut short
    with pytest.raises(tfrx.CorruptRecordError, match="cut.tfrecord"):
        tfrx.read_tfrecord(str(path))
    assert tfrx.read_tfrecord(str(path), on_error="skip").num_rows == 0
    assert list(ta.iter_record_batches(str(path), on_error="skip")) == []


def test_unsupported_inputs():
    with pytest.raises(TypeError, match="Table or RecordBatch"):
        ta.to_examples({"a": [1]})
    with pytest.raises(TypeError, match="no tf.train.Example counterpart"):
        ta.to_examples(pa.table({"t": pa.array([1], pa.timestamp("s"))}))


# ---------------------------------------------------------------- the real corpus
def _corpus_example_rows():
    import re

    from conftest import load_corpus_sources

    pattern = re.compile(r"^Example x\d+$")
    return [r for r in load_corpus_sources() if pattern.match(r["payload"]) and r["crc_status"] == "ok"]


CORPUS_ROWS = _corpus_example_rows()


@pytest.mark.parametrize("row", CORPUS_ROWS, ids=[r["filename"] for r in CORPUS_ROWS])
def test_corpus_file_reads_into_arrow(corpus_dir, row):
    path = str(corpus_dir / row["filename"])
    records = list(tfrx.read_records(path))
    spec = tfrx.infer_features(records, max_records=len(records), kind="example")
    table = tfrx.read_tfrecord(path, spec)
    assert table.num_rows == int(row["records"])
    expected = ta.to_record_batch(tfrx.parse_example(records, spec))
    assert table.combine_chunks().to_batches()[0].equals(expected) if table.num_rows else True
    # ... and back: the Examples written from the table parse to the same table.
    again = ta.to_record_batch(tfrx.parse_example(ta.to_examples(table), spec))
    assert again.equals(expected)


def test_fixed_shape_strings_and_zero_sizes():
    records = tfrx.encode_examples(
        {"pair": [[b"a", b"b"], [b"c", b"d"]], "n": np.arange(2, dtype=np.int64), "none": np.zeros((2, 0), np.float32)}
    )
    spec = {
        "pair": tfrx.FixedLenFeature([2], tfrx.string),
        "none": tfrx.FixedLenFeature([0], tfrx.float32),
        "n": tfrx.FixedLenFeature([], tfrx.int64),
    }
    batch = ta.to_record_batch(tfrx.parse_example(records, spec))
    assert batch.column("pair").type == pa.list_(pa.binary(), 2)
    assert batch.column("pair").to_pylist() == [[b"a", b"b"], [b"c", b"d"]]
    assert batch.column("none").to_pylist() == [[], []]
    again = tfrx.parse_example(ta.to_examples(batch), spec)
    assert ta.to_record_batch(again).equals(batch)


# ---------------------------------------------------------------- SequenceExamples
def _sequence_records(n: int = 6, seed: int = 0) -> tuple[list[bytes], dict, dict]:
    """SequenceExamples with steps of varying length (empty steps included) and examples without steps."""
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, 4, n)
    steps[1] = 0
    tok_steps = [[list(rng.integers(0, 50, rng.integers(0, 3))) for _ in range(k)] for k in steps]
    context = {"id": np.arange(n, dtype=np.int64), "name": [b"seq-%d" % i for i in range(n)]}
    lists = {
        "tok": tok_steps,
        "emb": [rng.random((k, 2)).astype(np.float32) for k in steps],
        "word": [[[b"w%d-%d" % (i, t)] for t in range(k)] for i, k in enumerate(steps)],
    }
    records = tfrx.encode_sequence_examples(context, lists, kinds={"tok": "int64", "word": "bytes"})
    return records, context, lists


SEQ_CONTEXT = {"id": tfrx.FixedLenFeature([], tfrx.int64), "name": tfrx.FixedLenFeature([], tfrx.string)}
SEQ_LISTS = {
    "tok": tfrx.RaggedFeature(tfrx.int64),
    "emb": tfrx.FixedLenSequenceFeature([2], tfrx.float32, allow_missing=True),
    "word": tfrx.RaggedFeature(tfrx.string),
}


def _tf_sequence_specs(tf):
    ctx = {"id": tf.io.FixedLenFeature([], tf.int64), "name": tf.io.FixedLenFeature([], tf.string)}
    seq = {
        "tok": tf.io.RaggedFeature(tf.int64),
        "emb": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "word": tf.io.RaggedFeature(tf.string),
    }
    return ctx, seq


def _tf_sequence_rows(tf, records) -> dict:
    """TensorFlow's parse of ``records`` as Python lists per column (padding of dense lists dropped)."""
    ctx, seq = _tf_sequence_specs(tf)
    c, s, lengths = tf.io.parse_sequence_example(tf.constant(records), context_features=ctx, sequence_features=seq)
    emb, n = s["emb"].numpy(), lengths["emb"].numpy()
    return {
        "id": c["id"].numpy().tolist(),
        "name": c["name"].numpy().tolist(),
        "tok": s["tok"].to_list(),
        "word": s["word"].to_list(),
        "emb": [emb[i, : n[i]].tolist() for i in range(len(records))],
    }


def test_sequence_examples_to_arrow_match_tensorflow(tf):
    records, _, _ = _sequence_records(7, seed=1)
    parsed = tfrx.parse_sequence_example(records, SEQ_CONTEXT, SEQ_LISTS)
    batch = ta.to_record_batch(parsed)
    assert batch.schema.names == ["emb", "id", "name", "tok", "word"]
    assert str(batch.schema.field("tok").type) == "list<item: list<item: int64>>"
    assert str(batch.schema.field("emb").type) == "large_list<item: fixed_size_list<item: float>[2]>"
    assert batch.to_pydict() == _tf_sequence_rows(tf, records)
    # Nested row_splits are used as they are: the values and both offset levels are the parser's buffers.
    tok = batch.column("tok")
    assert tok.offsets.buffers()[1].address == parsed[1]["tok"].row_splits.ctypes.data
    assert tok.flatten().offsets.buffers()[1].address == parsed[1]["tok"].values.row_splits.ctypes.data
    assert _address(tok.flatten().flatten()) == parsed[1]["tok"].values.values.ctypes.data
    assert ta.FEATURE_LISTS_KEY in batch.schema.metadata


def test_sequence_examples_round_trip_through_arrow(tf):
    records, _, _ = _sequence_records(9, seed=2)
    table = ta.to_table(
        [
            tfrx.parse_sequence_example(records[:4], SEQ_CONTEXT, SEQ_LISTS),
            tfrx.parse_sequence_example(records[4:], SEQ_CONTEXT, SEQ_LISTS),
        ]
    )
    again = ta.to_sequence_examples(table)
    assert again == records  # the same bytes: deterministic serialization of the same message
    assert _tf_sequence_rows(tf, again) == _tf_sequence_rows(tf, records)
    # Named explicitly (no metadata), and with a null: the feature list is left out of that example.
    plain = table.replace_schema_metadata(None)
    with pytest.raises(ValueError, match="feature_lists"):
        ta.to_sequence_examples(plain)
    words = table.column("word").combine_chunks()
    mask = pa.array([i == 3 for i in range(len(words))])
    nulled = plain.set_column(plain.schema.get_field_index("word"), "word", pa.compute.if_else(mask, None, words))
    out = ta.to_sequence_examples(nulled, feature_lists=["tok", "emb", "word"])
    _, lists = tfrx.decode_sequence_example(out[3])
    assert "word" not in lists and "tok" in lists
    assert [r for i, r in enumerate(out) if i != 3] == [r for i, r in enumerate(records) if i != 3]
    rows, expected = _tf_sequence_rows(tf, out), _tf_sequence_rows(tf, records)
    expected["word"][3] = []
    assert rows == expected


def test_varlen_feature_lists(tf):
    records, _, lists = _sequence_records(6, seed=4)
    parsed = tfrx.parse_sequence_example(records, SEQ_CONTEXT, {"tok": tfrx.VarLenFeature(tfrx.int64)})
    got = ta.to_record_batch(parsed).column("tok").to_pylist()
    # A SparseArray keeps no trailing empty steps: each example's steps end at its last value.
    expected = []
    for steps in lists["tok"]:
        last = max([i + 1 for i, s in enumerate(steps) if len(s)], default=0)
        expected.append([[int(v) for v in s] for s in steps[:last]])
    assert got == expected


def test_read_tfrecord_sequence_examples(tmp_path, tf):
    records, _, _ = _sequence_records(8, seed=5)
    path = str(tmp_path / "seq.tfrecord")
    tfrx.write_records(path, records)
    table = tfrx.read_tfrecord(path, batch_size=3)  # inferred; VarLen feature lists read as ragged
    rows = _tf_sequence_rows(tf, records)
    assert table.column("tok").to_pylist() == rows["tok"]
    # One value in every step: inferred as FixedLenSequenceFeature([]), a list of the steps' values.
    assert table.column("word").to_pylist() == [[w for (w,) in steps] for steps in rows["word"]]
    assert table.column("emb").to_pylist() == rows["emb"]
    assert ta.to_sequence_examples(table) == records
    explicit = tfrx.read_tfrecord(path, (SEQ_CONTEXT, SEQ_LISTS))
    assert explicit.to_pydict() == ta.to_table(tfrx.parse_sequence_example(records, SEQ_CONTEXT, SEQ_LISTS)).to_pydict()
    assert explicit.column("emb").to_pylist() == rows["emb"]


def test_context_and_feature_list_with_one_name():
    records = tfrx.encode_sequence_examples(
        {"x": np.arange(2, dtype=np.int64)}, {"x": [[[1]], [[2], [3]]]}, kinds={"x": "int64"}
    )
    parsed = tfrx.parse_sequence_example(
        records, {"x": tfrx.FixedLenFeature([], tfrx.int64)}, {"x": tfrx.RaggedFeature(tfrx.int64)}
    )
    with pytest.raises(ValueError, match="both context features and feature lists"):
        ta.to_record_batch(parsed)


@pytest.mark.parametrize("batches", [1, 2, 3, 4])
def test_to_table_of_any_number_of_batches(batches):
    # A list of 2 or 3 Example batches has the shape of one (context, feature_lists[, lengths]) parse.
    records = tfrx.encode_examples(_columns(4 * batches, seed=batches))
    parsed = [tfrx.parse_example(records[4 * i : 4 * i + 4], FEATURES) for i in range(batches)]
    table = ta.to_table(parsed)
    assert table.num_rows == 4 * batches
    assert table.to_pydict() == ta.to_table(tfrx.parse_example(records, FEATURES)).to_pydict()
    seq, _, _ = _sequence_records(3 * batches, seed=batches)
    parsed = [tfrx.parse_sequence_example(seq[3 * i : 3 * i + 3], SEQ_CONTEXT, SEQ_LISTS) for i in range(batches)]
    table = ta.to_table(parsed)
    assert table.num_rows == 3 * batches
    assert ta.to_sequence_examples(table) == seq


def test_read_tfrecord_of_other_payloads_says_what_they_are(corpus_dir):
    for name, looks in [
        ("guild__events.out.tfevents.1548797801.omaha", "TensorBoard Event"),
        ("grain__morris_sequence_first_5.tfrecord", "plain text"),
        ("ranking__eval_elwc.tfrecord", "another protocol buffer message"),
    ]:
        path = str(corpus_dir / name)
        with pytest.raises(tfrx.DecodeError, match=rf"record 0 at byte 0 is not a tf.train.Example.*{looks}"):
            ta.read_tfrecord(path)


def test_raw_records_one_column_name_everywhere(tmp_path):
    """raw=True reads records unparsed into the binary column RAW_COLUMN, the column the converters write and read."""
    import pyarrow.parquet as pq

    from tfrx.integrations.arrow import RAW_COLUMN, read_tfrecord
    from tfrx.tools.convert import parquet_to_tfrecord, tfrecord_to_parquet

    records = [b"not an Example", tfrx.encode_examples({"x": np.array([[1, 2]], np.int64)})[0], b""]
    path = str(tmp_path / "in.tfrecord")
    with tfrx.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    table = read_tfrecord(path, raw=True)
    assert RAW_COLUMN == "record"
    assert table.schema.names == [RAW_COLUMN] and table.schema.field(RAW_COLUMN).type == pa.binary()
    assert table.column(RAW_COLUMN).to_pylist() == records
    tfrecord_to_parquet(path, tmp_path / "raw.parquet", raw=True)
    assert pq.read_table(tmp_path / "raw.parquet").equals(table)
    pq.write_table(table, tmp_path / "arrow.parquet")
    summary = parquet_to_tfrecord(tmp_path / "arrow.parquet", tmp_path / "back", raw=True, num_shards=1)
    assert list(tfrx.read_records(summary.paths)) == records
    open(tmp_path / "empty.tfrecord", "wb").close()
    empty = read_tfrecord(str(tmp_path / "empty.tfrecord"), raw=True)
    assert empty.num_rows == 0 and empty.schema.names == [RAW_COLUMN]


def test_raw_and_features_are_exclusive(tmp_path):
    from tfrx.integrations.arrow import read_tfrecord

    with pytest.raises(TypeError, match="not both"):
        read_tfrecord(str(tmp_path / "x.tfrecord"), {"x": tfrx.FixedLenFeature([], tfrx.int64)}, raw=True)
