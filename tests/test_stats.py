"""compute_stats and the payload sniffer on hand-made records."""

from __future__ import annotations

import numpy as np
import pytest

import tfrx
from tfrx.codec._sniff import EMPTY, EXAMPLE, OTHER, SEQUENCE_EXAMPLE, payload_kind, record_kind
from tfrx.tools._stats import compute_stats


def test_feature_statistics():
    recs = [
        tfrx.make_example({"x": [1.0, float("nan"), 3.0], "tag": "a", "n": 5}).SerializeToString(),
        tfrx.make_example({"x": [-2.0], "tag": ["a", "b"]}).SerializeToString(),
        tfrx.make_example({"tag": "a", "n": [7, 9]}).SerializeToString(),
    ]
    stats = compute_stats([tfrx.RecordBatch.from_records(recs)])
    assert stats.records == 3
    x, tag, n = stats.features["x"], stats.features["tag"], stats.features["n"]
    assert (x.present, x.kind, x.num_values_min, x.num_values_max) == (2, "float", 1, 3)
    assert (x.value_min, x.value_max, x.nan_count) == (-2.0, 3.0, 1)
    assert x.value_mean == pytest.approx(2.0 / 3)
    assert tag.top(2) == [(b"a", 3), (b"b", 1)]
    assert (n.present, n.value_min, n.value_max, n.value_mean, n.num_values_mean) == (2, 5, 9, 7, 1.5)


def test_empty_features_are_counted_apart():
    feature = tfrx.train.Feature()  # no kind set, as CSV converters write a missing value
    rec = tfrx.train.Example(features=tfrx.train.Features(feature={"a": feature})).SerializeToString()
    stats = compute_stats([rec, rec], max_records=1)
    assert stats.records == 1
    assert (stats.features["a"].present, stats.features["a"].empty, stats.features["a"].kind) == (0, 1, "none")


def test_mixed_kinds_are_reported():
    recs = [tfrx.make_example({"v": 1}).SerializeToString(), tfrx.make_example({"v": 1.5}).SerializeToString()]
    assert compute_stats(recs).features["v"].kind == "float/int64"


def test_sequence_statistics():
    rec = tfrx.make_sequence_example({"id": b"v1"}, {"frames": [[1.0, 2.0], [3.0], [4.0]]}).SerializeToString()
    stats = compute_stats([rec], sequence=True)
    f = stats.features["id"]
    fl = stats.feature_lists["frames"]
    assert f.top(1) == [(b"v1", 1)]
    assert (fl.steps_min, fl.num_values_max, fl.value_max) == (3, 4, 4.0)
    assert stats.to_dict()["feature_lists"][0]["steps"]["mean"] == 3.0


@pytest.mark.parametrize(
    "record,kind",
    [
        (b"", EMPTY),
        (b"1 1", OTHER),
        (b"\x09" + b"\x00" * 8 + b"\x1a\x0dbrain.Event:2", OTHER),  # a TensorBoard event
        (b"\x0a\x02\x08\x01", OTHER),  # a Features entry whose name field is a varint
    ],
)
def test_record_kind_rejects_other_payloads(record, kind):
    assert record_kind(record) == kind


def test_record_kind_accepts_examples():
    ex = tfrx.make_example({"a": 1, "b": b"x", "c": [0.5]}).SerializeToString()
    seq = tfrx.make_sequence_example({"a": 1}, {"s": [[1], [2]]}).SerializeToString()
    assert record_kind(ex) == EXAMPLE
    assert record_kind(seq) == SEQUENCE_EXAMPLE
    assert payload_kind([ex, b"", ex]) == EXAMPLE
    assert payload_kind([ex, seq]) == SEQUENCE_EXAMPLE
    assert payload_kind([ex, b"plain"]) == OTHER
    assert payload_kind([]) == EMPTY
    # an ExampleListWithContext repeats field 1: not one Example
    elwc = b"\x0a" + bytes([len(ex)]) + ex + b"\x0a" + bytes([len(ex)]) + ex
    assert record_kind(elwc) == OTHER
    assert record_kind(np.frombuffer(ex, np.uint8)) == EXAMPLE


def test_long_bytes_values_are_shortened_in_top_values():
    long = b"x" * 100
    stats = compute_stats([tfrx.make_example({"t": long}).SerializeToString()] * 3)
    assert stats.features["t"].top(1) == [(b"x" * 64 + b"...", 3)]


def test_top_values_count_whole_values_not_their_first_bytes():
    # Five different PNG-like values sharing their first 64 bytes (as images share a header) are five values.
    header = b"\x89PNG\r\n\x1a\n" + b"\x00" * 120
    values = [header + bytes([i]) * 50 for i in range(5)]
    recs = [tfrx.make_example({"img": v, "same": header}).SerializeToString() for v in values]
    stats = compute_stats(recs)
    img, same = stats.features["img"], stats.features["same"]
    assert sorted(n for _, n in img.top(10)) == [1, 1, 1, 1, 1]
    assert same.top(10) == [(header[:64] + b"...", 5)]
    shown = [label for label, _ in img.to_dict(10)["top"]]
    assert len(set(shown)) == 5  # told apart by length and digest
    assert all(label.startswith("0x89504e47") and "(178 bytes, blake2b " in label for label in shown)


def test_cli_stats_table_tells_long_values_apart(capsys, tmp_path):
    from tfrx.cli import main

    header = b"\x89PNG\r\n\x1a\n" + b"\x00" * 120
    path = str(tmp_path / "img.tfrecord")
    with tfrx.TFRecordWriter(path) as w:
        for i in range(5):
            w.write(tfrx.make_example({"img": header + bytes([i]) * 50}).SerializeToString())
    assert main(["stats", "--top", "5", path]) == 0
    out = capsys.readouterr().out
    assert out.count("(178 bytes, blake2b ") == 5 and "x5" not in out
