"""benchmarks/tfds.py: the tfrx contender reads every example of both prepared directories; the table's medians."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def bench(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import tfds, workloads

    monkeypatch.setattr(workloads, "DATA_DIR", tmp_path)
    monkeypatch.setitem(tfds.SIZES, "small", 30)
    return tfds


@pytest.mark.parametrize("kind,count,shards", [("image", 30, [8, 8, 8, 6]), ("tabular", 120, [30] * 4)])
def test_tfrx_contender_reads_every_example(bench, kind, count, shards):
    import tfrx.tfds as tt

    path = bench.prepare(kind, "small")
    assert tt.builder(path).info.splits["train"].shard_lengths == shards
    assert bench._pass_fn("tfrx", path)() == count
    assert bench.prepare(kind, "small") == path  # prepared once


def test_table_gives_medians_and_ranges(bench):
    rows = [
        bench.Row("tabular", "tfrx", 100, [1.0, 2.0, 4.0], [0.5, 0.5, 1.0]),
        bench.Row("tabular", "tfds", 100, [2.0, 4.0, 8.0], [2.0, 2.0, 2.0]),
        bench.Row("image", "tfds", note="skipped: no module named tensorflow_datasets"),
    ]
    text = bench.render(rows)
    assert "| tabular | tfrx | 100 | 50 [25-100] | 200 [100-200] | 3 | 1.00 | 1.00 |" in text
    assert "| tabular | tfds | 100 | 25 [12-50] | 50 [50-50] | 3 | 2.00 | 4.00 |" in text
    assert "skipped: no module named tensorflow_datasets" in text
