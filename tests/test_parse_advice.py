"""A required feature missing from the records: the error names the close keys they hold (a misspelled key),
rather than advising a default_value that would hide the typo; an optional feature keeps that advice."""

from __future__ import annotations

import pytest

import tfrx
from tfrx.codec import make_example, make_sequence_example

RECORDS = [make_example({"label": [i], "image/encoded": [b"x"]}).SerializeToString() for i in range(5)]


def _message(call) -> str:
    with pytest.raises(tfrx.ParseError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("form", ["list", "RecordBatch"])
def test_a_misspelled_key_gets_the_close_names(form):
    batch = RECORDS if form == "list" else tfrx.RecordBatch.from_records(RECORDS)
    message = _message(lambda: tfrx.parse_example(batch, {"lable": tfrx.FixedLenFeature([], tfrx.int64)}))
    assert message == (
        "feature 'lable' is required but missing in record 0 and in all 5 records looked at; "
        "did you mean 'label'? (a default_value would hide a misspelled key)"
    )


def test_single_records_and_pipelines_get_them_too(tmp_path):
    spec = {"image/encode": tfrx.FixedLenFeature([], tfrx.string)}
    message = _message(lambda: tfrx.parse_single_example(RECORDS[0], spec))
    assert message.endswith("in record 0; did you mean 'image/encoded'? (a default_value would hide a misspelled key)")
    path = tmp_path / "data.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        for r in RECORDS:
            w.write(r)
    message = _message(lambda: list(tfrx.TFRecordDataset(str(path)).batch(2).parse(spec)))
    assert "did you mean 'image/encoded'?" in message and "default_value would hide" in message


def test_no_close_name_lists_the_names_held():
    message = _message(lambda: tfrx.parse_example(RECORDS, {"zzz": tfrx.FixedLenFeature([], tfrx.int64)}))
    assert "in all 5 records looked at, which hold 'image/encoded', 'label'; check the key" in message
    assert "give its FixedLenFeature a default_value" not in message


def test_a_feature_some_records_have_keeps_the_default_value_advice():
    records = RECORDS + [make_example({"image/encoded": [b"y"]}).SerializeToString()]
    message = _message(lambda: tfrx.parse_example(records, {"label": tfrx.FixedLenFeature([], tfrx.int64)}))
    assert message == (
        "feature 'label' is required but missing in record 5; give its FixedLenFeature a default_value, "
        "or use VarLenFeature"
    )


def test_sequence_examples_name_context_and_feature_list_keys():
    records = [make_sequence_example({"id": [1]}, {"frames": [[1.0], [2.0]]}).SerializeToString()]
    context = {"idd": tfrx.FixedLenFeature([], tfrx.int64)}
    message = _message(lambda: tfrx.parse_sequence_example(records, context, None))
    assert message.endswith("did you mean 'id'? (a default_value would hide a misspelled key)")
    lists = {"frame": tfrx.FixedLenSequenceFeature([1], tfrx.float32)}
    message = _message(lambda: tfrx.parse_sequence_example(records, None, lists))
    assert message.startswith("feature list 'frame' is required but missing in record 0;")
    assert message.endswith("did you mean 'frames'? (allow_missing=True would hide a misspelled key)")
