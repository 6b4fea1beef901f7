"""The Arrow -> Example mapping has one home (tfrx.integrations.arrow); parquet_to_tfrecord goes through it.

The cases are column shapes on which to_examples and parquet_to_tfrecord disagreed before they shared the
mapping (each says how), and a few on which they already agreed, kept so that they stay so: both now give the
same records, or both refuse the same rows.
"""

from __future__ import annotations

import datetime

import numpy as np
import pytest

import tfrx

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from tfrx.integrations.arrow import to_examples, to_sequence_examples  # noqa: E402
from tfrx.tools.convert import ConvertError, parquet_to_tfrecord  # noqa: E402


def _converted(tmp_path, table, **kwargs) -> list[bytes]:
    pq.write_table(table, tmp_path / "in.parquet")
    summary = parquet_to_tfrecord(tmp_path / "in.parquet", tmp_path / "out", num_shards=1, **kwargs)
    return list(tfrx.read_records(summary.paths))


SAME = {
    # dictionary arrays are an encoding of their values (to_examples refused them, the converter too)
    "dictionary": (pa.array(["x", "y", "x"]).dictionary_encode(), [[b"x"], [b"y"], [b"x"]]),
    # a null bool leaves the feature out (to_examples failed filling it with 0)
    "bool with null": (pa.array([True, None, False]), [[1], None, [0]]),
    # decimals are floating point (to_examples refused them; the converter called them float, then failed)
    "decimal": (pa.array([1, None], pa.decimal128(5, 2)), [[1.0], None]),
    # fixed-size binary is bytes (to_examples refused it)
    "fixed_size_binary": (pa.array([b"ab", b"cd"], pa.binary(2)), [[b"ab"], [b"cd"]]),
    # a column of nulls only is missing everywhere (to_examples refused its type)
    "null type": (pa.nulls(2), [None, None]),
    # already the same before
    "large_binary": (pa.array([b"x", b"yy"], pa.large_binary()), [[b"x"], [b"yy"]]),
    "large_string": (pa.array(["x", "yy"], pa.large_string()), [[b"x"], [b"yy"]]),
    "float64 to float32": (pa.array([0.1, None], pa.float64()), [[np.float32(0.1)], None]),
    "empty and null lists": (pa.array([[], [1, 2], None], pa.list_(pa.int64())), [[], [1, 2], None]),
    "fixed_size_list": (pa.array([[1, 2], [3, 4]], pa.list_(pa.int64(), 2)), [[1, 2], [3, 4]]),
}


@pytest.mark.parametrize("case", sorted(SAME))
def test_both_entry_points_give_the_same_records(tmp_path, case):
    column, expected = SAME[case]
    table = pa.table({"a": column, "id": pa.array(range(len(column)), pa.int64())})
    records = to_examples(table)
    assert _converted(tmp_path, table) == records
    decoded = [tfrx.decode_example(r).get("a") for r in records]
    assert [None if v is None else list(v) for v in decoded] == expected


REFUSED = {
    # a null inside a list has no Feature form: to_examples wrote 0 / b"", the converter failed the whole file
    "null in an int list": pa.array([[1], [1, None], [2]], pa.list_(pa.int64())),
    "null in a string list": pa.array([["x"], ["x", None], ["y"]], pa.list_(pa.string())),
    # Int64List is signed: to_examples wrapped 2**63 + 5 to a negative number, the converter failed the whole file
    "uint64 past int64": pa.array([1, 2**63 + 5, 3], pa.uint64()),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_both_entry_points_refuse_the_same_row(tmp_path, case):
    table = pa.table({"a": REFUSED[case], "id": pa.array([0, 1, 2], pa.int64())})
    with pytest.raises(ValueError, match="'a'.*(null|int64)"):
        to_examples(table)
    with pytest.raises(ConvertError, match="row 1: column 'a'"):
        _converted(tmp_path, table)
    # on_error="skip" leaves out that row only, and the others are the Arrow path's records
    kept = _converted(tmp_path, table, on_error="skip")
    assert kept == to_examples(table.take([0, 2]))


def test_types_without_a_feature_kind_are_refused_by_both(tmp_path):
    table = pa.table({"a": pa.array([datetime.datetime(2020, 1, 1)], pa.timestamp("us"))})
    with pytest.raises(TypeError, match="cast it"):
        to_examples(table)
    with pytest.raises(ValueError, match="cast it"):
        _converted(tmp_path, table)


def test_lists_of_lists_are_feature_lists(tmp_path):
    """The converter reads list<list<...>> as SequenceExample feature lists, as to_sequence_examples does;
    to_examples says so instead of failing inside NumPy."""
    table = pa.table(
        {
            "c": pa.array([1, 2, 3], pa.int64()),
            "a": pa.array([[[1, 2], [3]], None, [[]]], pa.list_(pa.list_(pa.int64()))),
            "w": pa.array([[["x"], ["y", "z"]], [["q"]], []], pa.list_(pa.list_(pa.string()))),
        }
    )
    with pytest.raises(TypeError, match="to_sequence_examples"):
        to_examples(table)
    assert _converted(tmp_path, table) == list(to_sequence_examples(table, feature_lists=["a", "w"]))


def test_a_null_step_is_a_feature_with_no_kind(tmp_path):
    """to_sequence_examples wrote a null step as an empty list of the column's kind, the converter as a Feature
    with no kind (what tfrecord_to_parquet writes such a step as): both write the Feature with no kind now."""
    table = pa.table(
        {
            "c": pa.array(["a", None], pa.string()),
            "a": pa.array([[[1, 2], None], [[5]]], pa.list_(pa.list_(pa.int64()))),
        }
    )
    records = list(to_sequence_examples(table, feature_lists=["a"]))
    assert _converted(tmp_path, table) == records
    message = tfrx.train.SequenceExample.FromString(records[0])
    steps = message.feature_lists.feature_list["a"].feature
    assert list(steps[0].int64_list.value) == [1, 2] and steps[1].WhichOneof("kind") is None
    assert tfrx.decode_sequence_example(records[1])[0] == {}  # a null context value leaves it out
