"""Every Example and SequenceExample file of the real corpus parses with its inferred
spec, and equals TensorFlow's parse with the same spec."""

from __future__ import annotations

import re

import pytest
from conftest import load_corpus_sources
from test_parse_differential import assert_same, to_tf_spec

import tfrx

PAYLOAD = re.compile(r"^(Example|SequenceExample) x\d+$")
ROWS = [r for r in load_corpus_sources() if PAYLOAD.match(r["payload"]) and r["crc_status"] == "ok"]


def _read(tf, path, compression):
    return [t.numpy() for t in tf.data.TFRecordDataset(str(path), compression_type=compression)]


@pytest.mark.parametrize("row", ROWS, ids=[r["filename"] for r in ROWS])
def test_corpus_file_parses_like_tensorflow(tf, corpus_dir, row):
    compression = "GZIP" if row["compression"].startswith("GZIP") else ""
    records = _read(tf, corpus_dir / row["filename"], compression)
    assert len(records) == int(row["records"])
    spec = tfrx.infer_features(records, max_records=len(records))
    batch = tfrx.RecordBatch.from_records(records)
    if row["payload"].startswith("SequenceExample"):
        context, sequence = spec
        assert isinstance(context, dict) and isinstance(sequence, dict)
        expected = tf.io.parse_sequence_example(
            tf.constant(records), to_tf_spec(tf, context) or None, to_tf_spec(tf, sequence) or None
        )
        actual = tfrx.parse_sequence_example(batch, context or None, sequence or None)
        for e, a in zip(expected, actual):
            assert_same(tf, e, a)
        single = tfrx.parse_single_sequence_example(records[0], context or None, sequence or None)
        assert len(single) == 2
    else:
        assert isinstance(spec, dict) and spec
        expected = tf.io.parse_example(tf.constant(records), to_tf_spec(tf, spec))
        assert_same(tf, expected, tfrx.parse_example(batch, spec))
        assert_same(tf, expected, tfrx.parse_example(records, spec, num_parallel_calls=2))
        assert_same(
            tf,
            tf.io.parse_single_example(records[-1], to_tf_spec(tf, spec)),
            tfrx.parse_single_example(records[-1], spec),
        )


def test_corpus_has_example_files(corpus_dir):
    assert len(ROWS) >= 20
