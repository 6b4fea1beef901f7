"""Parsers pickle as their arguments, so pipelines with a parse stage reach spawned DataLoader workers."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx


def _examples(rows):
    return [
        tfrx.make_example(
            {"id": [i], "tokens": tokens, "name": [b"n%d" % i], "score": [float(t % 7) for t in tokens]},
            kinds={"tokens": "int64", "score": "float"},
        ).SerializeToString()
        for i, tokens in enumerate(rows)
    ]


SPEC = {
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "tokens": tfrx.VarLenFeature(tfrx.int64),
    "name": tfrx.FixedLenFeature([], tfrx.string, default_value=b""),
    "missing": tfrx.FixedLenFeature([2], tfrx.float32, default_value=[0.5, 1.5]),
    "ragged": tfrx.RaggedFeature(tfrx.float32, value_key="score"),
}


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.tolist() == y.tolist()
        else:
            assert repr(x) == repr(y)


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4), min_size=1, max_size=6))
def test_example_parser_round_trips_through_pickle(rows):
    parser = tfrx.ExampleParser(SPEC, num_parallel_calls=1)
    again = pickle.loads(pickle.dumps(parser))
    assert type(again) is tfrx.ExampleParser and again is not parser
    assert again.features == parser.features and again.num_parallel_calls == 1 and again.bytes_as == "bytes"
    batch = _examples(rows)
    _same(parser.parse(batch), again.parse(batch))


def test_pickled_parser_keeps_its_options():
    parser = tfrx.ExampleParser({"name": tfrx.FixedLenFeature([], tfrx.string)}, bytes_as="views")
    again = pickle.loads(pickle.dumps(parser))
    assert again.bytes_as == "views"
    out = again.parse(_examples([[1], [2]]))
    assert isinstance(out["name"], tfrx.BytesArray) and out["name"].tolist() == [b"n0", b"n1"]


def test_sequence_example_parser_round_trips_through_pickle():
    context = {"id": tfrx.FixedLenFeature([], tfrx.int64)}
    sequence = {"frames": tfrx.FixedLenSequenceFeature([2], tfrx.float32), "words": tfrx.VarLenFeature(tfrx.string)}
    records = [
        tfrx.make_sequence_example(
            {"id": [i]}, {"frames": [[float(i), 1.0]] * (i + 1), "words": [[b"w%d" % i]] * (i + 1)}
        ).SerializeToString()
        for i in range(3)
    ]
    parser = tfrx.SequenceExampleParser(context, sequence)
    again = pickle.loads(pickle.dumps(parser))
    for x, y in zip(parser.parse(records), again.parse(records)):
        _same(x, y)


def test_a_parsed_pipeline_pickles(tmp_path):
    path = tmp_path / "a.tfrecord"
    tfrx.write_records(str(path), _examples([[1, 2], [3], []]))
    ds = tfrx.TFRecordDataset([str(path)]).batch(2).parse({"id": tfrx.FixedLenFeature([], tfrx.int64)})
    again = pickle.loads(pickle.dumps(ds))
    assert [b["id"].tolist() for b in again] == [b["id"].tolist() for b in ds] == [[0, 1], [2]]
