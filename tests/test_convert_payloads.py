"""TFRecords to tables never drop data: SequenceExample feature lists convert and come back; other payloads are errors."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx import train
from tfrx.codec import decode_sequence_example, make_sequence_example
from tfrx.tools.convert import (
    ConvertError,
    jsonl_to_tfrecord,
    parquet_to_tfrecord,
    tfrecord_to_jsonl,
    tfrecord_to_parquet,
)


def _corpus_files(corpus_dir, corpus_sources, pattern: str) -> list[str]:
    """The corpus files (those SOURCES.tsv lists, not whatever else is in the folder) whose names match."""
    from fnmatch import fnmatch

    return sorted(str(corpus_dir / row["filename"]) for row in corpus_sources if fnmatch(row["filename"], pattern))


def _write(path, records) -> str:
    with tfrx.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)
    return str(path)


def _norm(value):
    """A decoded value in a form that compares with == (arrays by dtype and bytes, dicts by sorted key)."""
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in sorted(value.items())}
    if isinstance(value, (tuple, list)):
        return [_norm(v) for v in value]
    if isinstance(value, np.ndarray):
        return (str(value.dtype), value.tobytes())
    return value


def _decoded(paths):
    return [_norm(decode_sequence_example(r)) for r in tfrx.read_records(paths)]


def _empty_step():
    return train.Feature()  # a step whose Feature has no kind set


def _sequence_records():
    return [
        make_sequence_example(
            {"id": [1], "name": [b"first"]},
            {"tokens": [[1, 2], [], [3]], "scores": [[0.5], [1.5, 2.5]], "words": [[b"a"], [b"b", b"\xff"]]},
            kinds={"tokens": "int64", "scores": "float", "words": "bytes"},
        ).SerializeToString(),
        make_sequence_example(
            {"id": [2]},
            {"tokens": [], "scores": [[3.25]], "words": [_empty_step(), [b"c"]]},
            kinds={"tokens": "int64", "scores": "float", "words": "bytes"},
        ).SerializeToString(),
    ]


def test_sequence_examples_to_jsonl_as_nested_lists_and_back(tmp_path):
    src = _write(tmp_path / "seq.tfrecord", _sequence_records())
    summary = tfrecord_to_jsonl(src, tmp_path / "seq.jsonl")
    assert summary.records == 2 and summary.skipped == 0
    lines = [json.loads(line) for line in (tmp_path / "seq.jsonl").read_text().splitlines()]
    assert lines[0] == {
        "context": {"id": [1], "name": ["first"]},
        "feature_lists": {
            "tokens": [[1, 2], [], [3]],
            "scores": [[0.5], [1.5, 2.5]],
            "words": [["a"], ["b", {"base64": base64.b64encode(b"\xff").decode()}]],
        },
    }
    assert lines[1]["feature_lists"] == {"tokens": [], "scores": [[3.25]], "words": [None, ["c"]]}
    back = jsonl_to_tfrecord(tmp_path / "seq.jsonl", tmp_path / "back")
    assert back.records == 2 and back.skipped == 0
    assert _decoded(back.paths) == _decoded(src)


def test_sequence_examples_to_parquet_as_list_of_list_columns_and_back(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from tfrx.arrow import FEATURE_LISTS_KEY, to_sequence_examples

    src = _write(tmp_path / "seq.tfrecord", _sequence_records())
    summary = tfrecord_to_parquet(src, tmp_path / "seq.parquet")
    assert summary.records == 2 and summary.skipped == 0
    table = pq.read_table(tmp_path / "seq.parquet")
    assert table.schema.field("tokens").type == pa.list_(pa.list_(pa.int64()))
    assert table.schema.field("id").type == pa.list_(pa.int64())
    assert json.loads(table.schema.metadata[FEATURE_LISTS_KEY]) == ["scores", "tokens", "words"]
    assert table.column("words").to_pylist() == [[[b"a"], [b"b", b"\xff"]], [None, [b"c"]]]
    assert table.column("tokens").to_pylist() == [[[1, 2], [], [3]], []]
    back = parquet_to_tfrecord(tmp_path / "seq.parquet", tmp_path / "back")
    assert back.records == 2 and back.skipped == 0
    assert _decoded(back.paths) == _decoded(src)
    # tfrx.arrow reads the same columns (its encoder has no kind-less step: only the first row)
    first = [_norm(decode_sequence_example(r)) for r in to_sequence_examples(table.slice(0, 1))]
    assert first == _decoded(src)[:1]


def test_examples_and_sequence_examples_mixed_keep_their_kind(tmp_path):
    example = tfrx.make_example({"id": [7], "text": [b"plain"]}).SerializeToString(deterministic=True)
    records = [example, *_sequence_records(), example]
    src = _write(tmp_path / "mixed.tfrecord", records)
    tfrecord_to_jsonl(src, tmp_path / "mixed.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "mixed.jsonl").read_text().splitlines()]
    assert lines[0] == {"id": [7], "text": ["plain"]} and "feature_lists" in lines[1]
    back = jsonl_to_tfrecord(tmp_path / "mixed.jsonl", tmp_path / "back")
    assert _decoded(back.paths) == _decoded(src)
    assert list(tfrx.read_records(back.paths))[0] == example  # an Example stays an Example, byte for byte


_KINDS = {"a": "int64", "b": "float", "c": "bytes", "x": "int64", "y": "float", "z": "bytes"}
_VALUES = {
    "int64": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3),
    "float": st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=3),
    "bytes": st.lists(st.binary(max_size=6), max_size=3),
}


@st.composite
def _sequence_example(draw):
    context = {k: draw(_VALUES[_KINDS[k]]) for k in draw(st.sets(st.sampled_from("abc")))}
    lists = {}
    for k in draw(st.sets(st.sampled_from("xyz"))):
        step = st.one_of(st.none(), _VALUES[_KINDS[k]])
        lists[k] = [_empty_step() if s is None else s for s in draw(st.lists(step, max_size=4))]
    return make_sequence_example(context, lists, kinds=_KINDS).SerializeToString()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_sequence_example(), min_size=1, max_size=5), fmt=st.sampled_from(["jsonl", "parquet"]))
def test_sequence_examples_round_trip_through_tables(tmp_path_factory, records, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
        # a Parquet file without columns has no rows: records with no feature at all need one column somewhere
        assume(any(decode_sequence_example(r) != ({}, {}) for r in records))
    tmp = tmp_path_factory.mktemp("rt")
    src = _write(tmp / "in.tfrecord", records)
    to_table, back = (
        (tfrecord_to_jsonl, jsonl_to_tfrecord) if fmt == "jsonl" else (tfrecord_to_parquet, parquet_to_tfrecord)
    )
    assert to_table(src, tmp / f"t.{fmt}").records == len(records)
    # every feature list of these records is named in a spec, so kinds need not be inferred from the values
    out = back(tmp / f"t.{fmt}", tmp / "out", **({"spec": _KINDS} if fmt == "jsonl" else {}))
    assert out.skipped == 0
    assert _decoded(out.paths) == _decoded(src)


# ------------------------------------------------------------------ payloads that are not Examples
def test_tensorboard_events_are_an_error_naming_file_record_and_offset(tmp_path, corpus_dir, corpus_sources):
    events = _corpus_files(corpus_dir, corpus_sources, "*tfevents*")
    assert events
    for path in events:
        with pytest.raises(ConvertError) as e:
            tfrecord_to_jsonl(str(path), tmp_path / "ev.jsonl")
        assert f"{path}: record 0 at byte 0: not a tf.train.Example" in str(e.value)
        assert "TensorBoard" in str(e.value) and "raw=True" in str(e.value)
        assert not (tmp_path / "ev.jsonl").exists()
        n = sum(1 for _ in tfrx.read_records(str(path)))
        skipped = tfrecord_to_parquet(str(path), tmp_path / "ev.parquet", on_error="skip")
        assert (skipped.records, skipped.skipped) == (0, n)


def test_raw_converts_any_payload_as_bytes(tmp_path, corpus_dir, corpus_sources):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = _corpus_files(corpus_dir, corpus_sources, "*tfevents*")[0]
    records = list(tfrx.read_records(path))
    summary = tfrecord_to_jsonl(path, tmp_path / "ev.jsonl", raw=True, bytes_as="base64")
    assert summary.records == len(records)
    lines = [json.loads(line) for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    assert [base64.b64decode(line["record"]["base64"]) for line in lines] == records
    tfrecord_to_parquet(path, tmp_path / "ev.parquet", raw=True, batch_rows=7)
    assert pq.read_table(tmp_path / "ev.parquet").column("record").to_pylist() == records
    # and back, unchanged: the same file, byte for byte
    for table, back in ((tmp_path / "ev.jsonl", jsonl_to_tfrecord), (tmp_path / "ev.parquet", parquet_to_tfrecord)):
        out = back(table, tmp_path / f"back-{table.suffix[1:]}", num_shards=1, raw=True)
        assert out.records == len(records) and out.skipped == 0
        with open(out.paths[0], "rb") as f, open(path, "rb") as g:
            assert f.read() == g.read()
    text = tfrecord_to_jsonl(path, tmp_path / "text.jsonl", raw=True)  # bytes_as="auto": text where it is text
    assert text.records == len(records)
    back = jsonl_to_tfrecord(tmp_path / "text.jsonl", tmp_path / "back-text", raw=True)
    assert list(tfrx.read_records(back.paths)) == records


def test_a_foreign_record_among_examples_is_named_with_its_offset(tmp_path):
    good = [tfrx.make_example({"i": [i]}).SerializeToString() for i in range(4)]
    text = b"just a line of text"
    records = good[:2] + [text] + good[2:]
    src = _write(tmp_path / "mixed.tfrecord", records)
    offset = sum(16 + len(r) for r in records[:2])
    with pytest.raises(ConvertError, match=rf"record 2 at byte {offset}: not a tf.train.Example"):
        tfrecord_to_jsonl(src, tmp_path / "m.jsonl")
    summary = tfrecord_to_jsonl(src, tmp_path / "m.jsonl", on_error="skip")
    assert (summary.records, summary.skipped) == (4, 1)
    assert [json.loads(line)["i"] for line in (tmp_path / "m.jsonl").read_text().splitlines()] == [[0], [1], [2], [3]]


def test_cli_events_file_fails_and_advises_flags(capsys, tmp_path, corpus_dir, corpus_sources):
    from tfrx.cli import main

    path = _corpus_files(corpus_dir, corpus_sources, "*tfevents*")[0]
    assert main(["convert", path, str(tmp_path / "ev.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "record 0 at byte 0" in err and "--raw" in err and "--on-error skip" in err
    assert "on_error=" not in err and "raw=True" not in err
    # skipping every record converts nothing: not a success
    assert main(["convert", path, str(tmp_path / "ev.jsonl"), "--on-error", "skip"]) == 1
    assert main(["convert", path, str(tmp_path / "ev.jsonl"), "--raw"]) == 0
    assert len((tmp_path / "ev.jsonl").read_text().splitlines()) == sum(1 for _ in tfrx.read_records(path))
    assert main(["convert", str(tmp_path / "ev.jsonl"), str(tmp_path / "back"), "--raw", "--num-shards", "1"]) == 0
    assert list(tfrx.read_records(str(tmp_path / "back.tfrecord-00000-of-00001"))) == list(tfrx.read_records(path))


def _corpus_sequence_files(corpus_dir, corpus_sources):
    from tfrx.codec._sniff import SEQUENCE_EXAMPLE, payload_kind

    out = []
    for path in _corpus_files(corpus_dir, corpus_sources, "*"):
        try:
            sample = [r for _, r in zip(range(32), tfrx.read_records(path, on_error="skip"))]
        except Exception:  # noqa: BLE001 - not TFRecord at all
            continue
        if payload_kind(sample) == SEQUENCE_EXAMPLE:
            out.append(path)
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_corpus_sequence_examples_round_trip(tmp_path, corpus_dir, corpus_sources, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    files = _corpus_sequence_files(corpus_dir, corpus_sources)
    assert len(files) >= 3
    to_table, back = (
        (tfrecord_to_jsonl, jsonl_to_tfrecord) if fmt == "jsonl" else (tfrecord_to_parquet, parquet_to_tfrecord)
    )
    converted = 0
    for i, path in enumerate(files):
        original = [_norm(decode_sequence_example(r)) for r in tfrx.read_records(path, on_error="skip")]
        if fmt == "parquet" and any(set(c) & set(fl) for c, fl in original):
            continue  # a name both in the context and as a feature list: one Parquet column cannot hold both
        summary = to_table(path, tmp_path / f"{i}.{fmt}", on_error="skip")
        assert summary.records == len(original)
        out = back(tmp_path / f"{i}.{fmt}", tmp_path / f"back{i}")
        assert _decoded(out.paths) == original, path
        converted += 1
    assert converted >= 2
