"""TFRecordDataset over every readable file of the real corpus, against tf.data."""

import pytest

from tfrx.testing import assert_resumes_exactly
from tfrx.data import TFRecordDataset


@pytest.fixture(scope="module")
def readable(tf, corpus_dir, corpus_sources):
    """(path, compression, records) of the corpus files TensorFlow reads without error."""
    out = []
    for row in corpus_sources:
        kind = (row.get("compression") or "").split()[0].upper() if row.get("compression") else ""
        compression = kind if kind in ("GZIP", "ZLIB") else ""
        path = str(corpus_dir / row["filename"])
        try:
            records = list(tf.data.TFRecordDataset(path, compression_type=compression).as_numpy_iterator())
        except Exception:  # noqa: BLE001 - damaged on purpose: the reader's tests cover those
            continue
        out.append((path, compression, records))
    return out


def test_every_readable_file_matches_tf(readable):
    files = readable
    assert files
    for path, compression, records in files:
        assert list(TFRecordDataset(path, compression_type=compression or None)) == records, path


def test_parallel_reads_over_the_uncompressed_corpus_match_tf(tf, readable):
    paths = [p for p, c, _ in readable if not c]
    ours = list(TFRecordDataset(paths, num_parallel_reads=4))
    theirs = list(tf.data.TFRecordDataset(paths, num_parallel_reads=4).as_numpy_iterator())
    assert ours == theirs
    batches = list(TFRecordDataset(paths).record_batches(64))
    assert [r for b in batches for r in b] == list(tf.data.TFRecordDataset(paths).as_numpy_iterator())


def test_resume_over_corpus_files(readable):
    files = [(p, c) for p, c, recs in readable if 0 < len(recs) <= 400]
    paths = [p for p, c in files if not c][:6]

    def first_steps(make, k):
        return range(min(k, sum(1 for _ in make())) + 1)

    shuffled = lambda: TFRecordDataset(paths).shuffle(16, seed=0).batch(5).prefetch(2)  # noqa: E731
    assert_resumes_exactly(shuffled, steps=first_steps(shuffled, 40))
    gz = [p for p, c in files if c == "GZIP"][:3]
    if gz:
        batched = lambda: TFRecordDataset(gz, compression_type="GZIP").batch(7)  # noqa: E731
        assert_resumes_exactly(batched, steps=first_steps(batched, 20))
