"""Examples to Arrow without a spec: one implementation (tfrx.arrow.ExampleBatchBuilder), which tfrecord_to_parquet
writes through.

Each edge case is pinned here, with TensorFlow's reading of it: a Feature whose kind is set but whose list is empty
is present with no values (a ``[]``, not a null), and its kind counts (TensorFlow's parser refuses a Feature of
another kind than the spec's, empty or not); a Feature with no kind set is absent, as ``parse_example`` skips it;
an absent feature is a null; int64 and float are never merged; bytes stay binary (never decoded as text); float32
values keep their bits. Before the converter used the shared builder, it rebuilt each value through Python floats
(a signalling NaN came back quiet) and named a conflicting record by a count over all files ("record 3"), not by
its file, index and byte offset.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx import train

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from tfrx.integrations.arrow import FEATURE_LISTS_KEY, ExampleBatchBuilder  # noqa: E402
from tfrx.tools.convert import ConvertError, tfrecord_to_parquet  # noqa: E402


def _ints(*v):
    return train.Feature(int64_list=train.Int64List(value=list(v)))


def _floats(*v):
    return train.Feature(float_list=train.FloatList(value=list(v)))


def _bytes(*v):
    return train.Feature(bytes_list=train.BytesList(value=list(v)))


def _example(**features) -> bytes:
    return train.Example(features=train.Features(feature=features)).SerializeToString()


def _sequence(context=None, **lists) -> bytes:
    message = train.SequenceExample(
        context=train.Features(feature=context or {}),
        feature_lists=train.FeatureLists(
            feature_list={k: train.FeatureList(feature=steps) for k, steps in lists.items()}
        ),
    )
    return message.SerializeToString()


def _write(path, records) -> str:
    with tfrx.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return str(path)


def _table(tmp_path, records, **kwargs):
    src = _write(tmp_path / "in.tfrecord", records)
    summary = tfrecord_to_parquet(src, tmp_path / "out.parquet", progress=False, **kwargs)
    return pq.read_table(tmp_path / "out.parquet"), summary


def test_empty_list_absent_and_kindless_feature(tmp_path):
    records = [_example(a=_ints(1)), _example(a=_ints()), _example(a=train.Feature()), _example()]
    table, _ = _table(tmp_path, records)
    assert table.schema.field("a").type == pa.list_(pa.int64())
    assert table.column("a").to_pylist() == [[1], [], None, None]


def test_an_empty_list_has_its_kind(tmp_path):
    table, summary = _table(tmp_path, [_example(a=_floats()), _example(a=_ints(3))], on_error="skip")
    assert table.schema.field("a").type == pa.list_(pa.float32())
    assert table.column("a").to_pylist() == [[]]
    assert summary.skipped == 1 and "feature 'a' is int64, earlier records have float" in summary.errors[0]


def test_a_kindless_feature_does_not_fix_the_kind(tmp_path):
    table, summary = _table(tmp_path, [_example(a=train.Feature()), _example(a=_floats(0.5))])
    assert summary.skipped == 0 and table.schema.field("a").type == pa.list_(pa.float32())
    assert table.column("a").to_pylist() == [None, [0.5]]


def test_int64_and_float_are_not_merged_and_the_error_names_file_record_and_offset(tmp_path):
    first = _write(tmp_path / "a.tfrecord", [_example(x=_ints(1))] * 3)
    second = _write(tmp_path / "b.tfrecord", [_example(x=_ints(2)), _example(x=_floats(2.5))])
    offset = 16 + len(_example(x=_ints(2)))  # one record: 12 bytes of header, 4 of footer
    with pytest.raises(ConvertError, match=rf"b\.tfrecord: record 1 at byte {offset}: feature 'x' is float"):
        tfrecord_to_parquet([first, second], tmp_path / "out.parquet", progress=False)
    summary = tfrecord_to_parquet([first, second], tmp_path / "out.parquet", on_error="skip", progress=False)
    assert summary.records == 4 and summary.skipped == 1
    assert pq.read_table(tmp_path / "out.parquet").column("x").to_pylist() == [[1], [1], [1], [2]]


def test_record_index_after_a_damaged_record_is_the_index_in_its_file(tmp_path):
    records = [_example(x=_ints(i)) for i in range(3)] + [_example(x=_bytes(b"no"))]
    path = _write(tmp_path / "d.tfrecord", records)
    data = bytearray(open(path, "rb").read())
    data[12] ^= 0xFF  # record 0's payload: a data CRC mismatch
    open(path, "wb").write(bytes(data))
    summary = tfrecord_to_parquet(path, tmp_path / "out.parquet", on_error="skip", progress=False)
    assert summary.records == 2 and summary.skipped == 2
    assert any("d.tfrecord: record 3 at byte" in e and "feature 'x' is bytes" in e for e in summary.errors)


def test_float_bits_int64_extremes_and_bytes_are_kept(tmp_path):
    nans = np.array([0x7FA00001, 0xFFC00123], np.uint32).view(np.float32)  # a signalling NaN, a negative quiet one
    # the message holds Python floats, which would quiet the NaN: write its bits into the serialized record
    records = [_example(f=_floats(0.0, 0.0), i=_ints(-(2**63), 2**63 - 1), b=_bytes(b"\xff\x00", b""))]
    zero_pair = np.zeros(2, np.float32).tobytes()
    raw = bytearray(records[0])
    at = raw.find(zero_pair)
    raw[at : at + 8] = nans.tobytes()
    table, _ = _table(tmp_path, [bytes(raw)])
    f = table.column("f").combine_chunks().flatten().to_numpy(zero_copy_only=False).view(np.uint32)
    assert [hex(v) for v in f] == ["0x7fa00001", "0xffc00123"]
    assert table.column("i").to_pylist() == [[-(2**63), 2**63 - 1]]
    assert table.schema.field("b").type == pa.list_(pa.binary())
    assert table.column("b").to_pylist() == [[b"\xff\x00", b""]]


def test_sequence_examples_kindless_steps_and_growth(tmp_path):
    records = [
        _sequence({"c": train.Feature()}, l=[train.Feature(), train.Feature()]),  # no step has a kind yet
        _sequence({"c": _bytes(b"x")}, l=[]),
        _example(c=_bytes(b"y")),  # an Example among SequenceExamples: no feature list
        _sequence({}, l=[train.Feature(), _ints(1, 2), _ints()]),
    ]
    for batch_rows in (1, 2, 100):
        table, summary = _table(tmp_path, records, batch_rows=batch_rows)
        assert summary.records == 4
        assert table.schema.field("l").type == pa.list_(pa.list_(pa.int64()))
        assert table.column("l").to_pylist() == [[None, None], [], None, [None, [1, 2], []]]
        assert table.column("c").to_pylist() == [None, [b"x"], [b"y"], None]
        assert table.schema.metadata[FEATURE_LISTS_KEY] == b'["l"]'


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([_sequence(l=[_ints(1), _floats(1.0)])], "feature list 'l' has steps of different kinds"),
        ([_sequence({"l": _ints(1)}, l=[_ints(1)])], "'l' is both a context feature and a feature list"),
        ([_sequence(l=[_ints(1)]), _example(l=_ints(1))], "feature 'l' is a context feature, earlier records"),
        ([_example(l=_ints(1)), _sequence(l=[_ints(1)])], "feature list 'l': earlier records have a context"),
        ([_sequence(l=[_ints(1)]), _sequence(l=[_bytes(b"a")])], "feature list 'l' is bytes, earlier records"),
    ],
)
def test_sequence_conflicts_are_bad_inputs(tmp_path, records, message):
    with pytest.raises(ConvertError, match=rf"in\.tfrecord: record {len(records) - 1} at byte \d+: {message}"):
        _table(tmp_path, records)


def test_builder_refuses_a_record_that_does_not_fit_and_keeps_the_rest():
    builder = ExampleBatchBuilder()
    builder.append({"a": np.array([1], np.int64)})
    with pytest.raises(ValueError, match="feature 'a' is float"):
        builder.append({"a": np.array([1.5], np.float32)})
    builder.append({"b": [b"z"]})
    batch = builder.flush()
    assert len(builder) == 0 and batch.schema.names == ["a", "b"]
    assert batch.to_pylist() == [{"a": [1], "b": None}, {"a": None, "b": [b"z"]}]
    assert builder.flush().num_rows == 0 and builder.flush().schema == batch.schema


_VALUE = {
    "int64": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3).map(lambda v: np.array(v, np.int64)),
    "float": st.lists(st.floats(width=32, allow_nan=False), max_size=3).map(lambda v: np.array(v, np.float32)),
    "bytes": st.lists(st.binary(max_size=4), max_size=3),
}
_KIND = {"i": "int64", "f": "float", "s": "bytes", "L": "int64", "M": "bytes"}


@st.composite
def _row(draw):
    context = {k: draw(_VALUE[_KIND[k]]) for k in draw(st.sets(st.sampled_from("ifs")))}
    lists = {
        k: draw(st.lists(st.one_of(st.none(), _VALUE[_KIND[k]]), max_size=3))
        for k in draw(st.sets(st.sampled_from("LM")))
    }
    return context, lists


def _py(value):
    return None if value is None else (value.tolist() if isinstance(value, np.ndarray) else list(value))


@settings(max_examples=60, deadline=None)
@given(st.lists(_row(), max_size=8))
def test_builder_matches_building_the_cells_one_by_one(rows):
    """The columns built over flat buffers hold what Arrow makes of the Python cells (the former converter's way)."""
    builder = ExampleBatchBuilder()
    for context, lists in rows:
        builder.append(context, lists)
    batch = builder.flush()
    for field in batch.schema:
        expected = []
        for context, lists in rows:
            if field.name in lists:
                expected.append([_py(s) for s in lists[field.name]])
            else:
                expected.append(_py(context.get(field.name)))
        assert batch.column(field.name).equals(pa.array(expected, field.type)), field.name


def test_a_spec_reads_absence_as_tensorflow_does_the_builder_keeps_it(tmp_path):
    """The two Example -> Arrow paths differ where TensorFlow's parse has no null: with a spec, an absent or
    kind-less VarLen feature (and a kind-less step of a RaggedFeature list) is an empty list, as
    tf.io.parse_example / parse_sequence_example give it; without one, the builder keeps the absence (null)."""
    path = _write(
        tmp_path / "a.tfrecord",
        [_example(a=_ints(1)), _example(a=_ints()), _example(a=train.Feature()), _example(b=_bytes(b"\xff"))],
    )
    spec = {"a": tfrx.VarLenFeature(tfrx.int64), "b": tfrx.VarLenFeature(tfrx.string)}
    with_spec = tfrx.arrow.read_tfrecord(path, spec)
    assert with_spec.column("a").to_pylist() == [[1], [], [], []]
    assert with_spec.column("b").to_pylist() == [[], [], [], [b"\xff"]]
    builder = ExampleBatchBuilder()
    for record in tfrx.read_records(path):
        builder.append(tfrx.decode_example(record))
    batch = builder.flush()
    assert batch.column("a").to_pylist() == [[1], [], None, None]
    assert batch.column("b").to_pylist() == [None, None, None, [b"\xff"]]
    assert with_spec.schema.field("b").type.value_type == batch.schema.field("b").type.value_type == pa.binary()

    seq = _write(tmp_path / "s.tfrecord", [_sequence(l=[train.Feature(), _ints(2)])])
    ragged = tfrx.arrow.read_tfrecord(seq, ({}, {"l": tfrx.RaggedFeature(tfrx.int64)}))
    assert ragged.column("l").to_pylist() == [[[], [2]]]
    builder = ExampleBatchBuilder()
    builder.append(*tfrx.decode_sequence_example(next(iter(tfrx.read_records(seq)))))
    assert builder.flush().column("l").to_pylist() == [[None, [2]]]
