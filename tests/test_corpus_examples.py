"""Every Example / SequenceExample file of the real corpus decodes exactly as TensorFlow parses it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tfrx
from tfrx import train

from conftest import CORPUS_DIR, load_corpus_sources

PAYLOAD = re.compile(r"^(Example|SequenceExample) x(\d+)$")
COMPARED = 2000  # records per file checked against the oracle (all of them are decoded)


def _files(kind: str) -> list:
    out = []
    for row in load_corpus_sources():
        m = PAYLOAD.match(row["payload"])
        if m and m.group(1) == kind and row["crc_status"].startswith("ok"):
            out.append((row["filename"], int(m.group(2))))
    return out or [pytest.param("", 0, marks=pytest.mark.skip(reason=f"corpus not found at {CORPUS_DIR}"))]


def read_records(path) -> list[bytes]:
    return list(tfrx.read_records(path))


def expected_features(features) -> dict:
    out = {}
    for name, feature in features.feature.items():
        kind = feature.WhichOneof("kind")
        if kind is not None:
            out[name] = expected_value(feature)
    return out


def expected_value(feature):
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None
    values = list(getattr(feature, kind).value)
    if kind == "bytes_list":
        return values
    return np.array(values, dtype=np.float32 if kind == "float_list" else np.int64)


def assert_same(got, want):
    if want is None or isinstance(want, list):
        assert got == want
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def assert_same_dict(got: dict, want: dict):
    assert got.keys() == want.keys()
    for k in want:
        assert_same(got[k], want[k])


@pytest.mark.parametrize(("name", "count"), _files("Example"))
def test_corpus_examples_match_tensorflow(tf, corpus_dir, name, count):
    records = read_records(corpus_dir / name)
    assert len(records) == count
    tfrx.decode_examples(records)
    empties = 0
    for data in records[:COMPARED]:
        theirs = tf.train.Example.FromString(data)
        got = tfrx.decode_example(data)
        assert_same_dict(got, expected_features(theirs.features))
        with_empty = tfrx.decode_example(data, keep_empty=True)
        empties += sum(v is None for v in with_empty.values())
        ours = train.Example.FromString(data)
        assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
    if "csv_example_gen" in name:
        assert empties == 345  # the SOURCES.tsv count of empty Feature messages


@pytest.mark.parametrize(("name", "count"), _files("Example"))
def test_corpus_examples_reencode_byte_identical(corpus_dir, name, count):
    """Decoded dicts re-encoded by the columnar encoder equal protobuf's deterministic bytes."""
    records = read_records(corpus_dir / name)[:COMPARED]
    dicts = tfrx.decode_examples(records)
    kinds = {}
    for d in dicts:
        for k, v in d.items():
            kinds.setdefault(k, "bytes" if isinstance(v, list) else str(v.dtype).replace("float32", "float"))
    columns = {k: [d.get(k) for d in dicts] for k in kinds}
    encoded = tfrx.encode_examples(columns, kinds=kinds)
    for data, again in zip(records, encoded):
        message = train.Example.FromString(data)
        for k in [k for k, f in message.features.feature.items() if f.WhichOneof("kind") is None]:
            del message.features.feature[k]  # empty Features are absent from the dicts
        assert again == message.SerializeToString(deterministic=True)


@pytest.mark.parametrize(("name", "count"), _files("SequenceExample"))
def test_corpus_sequence_examples_match_tensorflow(tf, corpus_dir, name, count):
    records = read_records(corpus_dir / name)
    assert len(records) == count
    for data in records:
        tfrx.decode_sequence_example(data)
    for data in records[:COMPARED]:
        theirs = tf.train.SequenceExample.FromString(data)
        context, lists = tfrx.decode_sequence_example(data)
        assert_same_dict(context, expected_features(theirs.context))
        assert lists.keys() == set(theirs.feature_lists.feature_list.keys())
        for k, fl in theirs.feature_lists.feature_list.items():
            assert len(lists[k]) == len(fl.feature)
            for got, feature in zip(lists[k], fl.feature):
                assert_same(got, expected_value(feature))
