"""Shared by the BERT data tests: the golden cases and record-by-record comparison of parsed values."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).resolve().parent / "golden" / "bert"
# loaded under its own name: tests/golden/make_golden.py is another script of the same file name
_spec = importlib.util.spec_from_file_location("bert_make_golden", GOLDEN / "make_golden.py")
assert _spec is not None and _spec.loader is not None
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)
CASES = make_golden.load_cases()


def parsed_records(path, *, max_seq_length: int, max_predictions_per_seq: int, **layout) -> list[dict]:
    import tfrx
    from tfrx.text import feature_spec

    spec = feature_spec(max_seq_length=max_seq_length, max_predictions_per_seq=max_predictions_per_seq, **layout)
    compression = "GZIP" if str(path).endswith(".gz") else None
    return [tfrx.parse_single_example(r, spec) for r in tfrx.TFRecordDataset([str(path)], compression_type=compression)]


def assert_same_records(expected_path, actual_path, flags: dict) -> int:
    """Every feature of every record equal; returns the number of records."""
    sizes = {"max_seq_length": flags["max_seq_length"], "max_predictions_per_seq": flags["max_predictions_per_seq"]}
    want = parsed_records(expected_path, **sizes)
    got = parsed_records(actual_path, **sizes)
    assert len(got) == len(want), f"{actual_path}: {len(got)} records, the reference wrote {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        assert set(w) == set(g)
        for name in w:
            assert g[name].dtype == w[name].dtype, (i, name)
            assert np.array_equal(g[name], w[name]), f"record {i}, feature {name}: {g[name]} != {w[name]}"
    return len(want)
