"""The writer's checkpoint index: emitted while writing GZIP/ZLIB, used as the one a scan builds; sidecars."""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.io.inflate_index import (
    CompressedRandomReader,
    build_inflate_index,
    inflate_index_path,
    load_inflate_index,
)

SPACING = 1 << 16
RECORDS = [np.random.default_rng(k).integers(0, 32, 2_000 + 53 * k, dtype=np.uint8).tobytes() for k in range(400)]


@pytest.fixture()
def no_pass(monkeypatch):
    """Fails a test that inflates a whole file to index it."""

    def fail(*args, **kwargs):
        raise AssertionError("the file was indexed by a pass over it")

    monkeypatch.setattr("tfrx.io.inflate_index._build", fail)


def _write(path, records, **kw):
    kw.setdefault("compression", "GZIP")
    with tfrx.TFRecordWriter(str(path), checkpoint_index=kw.pop("checkpoint_index", True), **kw) as w:
        w.write_many(records[: len(records) // 2])
        for r in records[len(records) // 2 :]:
            w.write(r)


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_written_index_reads_every_record_without_a_pass(tmp_path, compression, no_pass):
    path = tmp_path / "a.tfrecord.gz"
    _write(path, RECORDS, compression=compression, checkpoint_spacing=SPACING)
    assert list(tfrx.read_records(str(path))) == RECORDS  # still an ordinary stream
    index = load_inflate_index(str(path), build=False)
    assert index.compression == compression
    assert len(index.points) > 10
    assert len(index.records) == len(RECORDS)
    ds = tfrx.RandomAccessDataset(str(path))
    picks = np.random.default_rng(0).permutation(len(RECORDS))[:50].tolist()
    assert ds[picks] == [RECORDS[i] for i in picks]
    with CompressedRandomReader(str(path), index) as reader:
        for i in picks[:10]:
            before = reader.inflated_bytes
            reader.read(int(index.records.offsets[i]), int(index.records.lengths[i]) + 16)
            assert reader.inflated_bytes - before <= SPACING + (1 << 16) + len(RECORDS[i]) + 16


def test_written_index_matches_the_scanned_records(tmp_path):
    path = tmp_path / "a.tfrecord.gz"
    _write(path, RECORDS, checkpoint_spacing=SPACING)
    written = load_inflate_index(str(path), build=False)
    scanned = build_inflate_index(str(path), index_path=str(tmp_path / "scan.tfrxzidx"))
    assert written.records == scanned.records
    assert written.file_size == scanned.file_size and written.fingerprint == scanned.fingerprint


def test_written_index_is_validated_against_the_file(tmp_path):
    path = tmp_path / "a.tfrecord.gz"
    _write(path, RECORDS[:50], checkpoint_spacing=SPACING)
    where = inflate_index_path(str(path))
    blob = open(where, "rb").read()
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched: another mtime
    with pytest.raises(tfrx.StaleIndexError, match="stale"):
        load_inflate_index(str(path), index_path=where)
    other = tmp_path / "b.tfrecord.gz"
    _write(other, RECORDS[50:100], checkpoint_spacing=SPACING)
    index_of_other = inflate_index_path(str(other))
    with pytest.raises(tfrx.StaleIndexError):
        load_inflate_index(str(path), index_path=index_of_other)
    assert load_inflate_index(str(path)).to_bytes() != blob  # the default path rebuilds a stale one


def test_sidecar_beside_the_file(tmp_path, no_pass):
    path = tmp_path / "a.tfrecord.gz"
    _write(path, RECORDS[:100], checkpoint_index="sidecar", checkpoint_spacing=SPACING)
    sidecar = tmp_path / ".tfrx" / "a.tfrecord.gz.tfrxzidx"
    assert sidecar.exists()
    assert not os.path.exists(inflate_index_path(str(path)))  # not in the cache
    assert tfrx.RandomAccessDataset(str(path))[[99, 3]] == [RECORDS[99], RECORDS[3]]
    assert tfrx.RandomAccessDataset(str(path), index="sidecar")[7] == RECORDS[7]


def test_scanned_index_honours_sidecar(tmp_path):
    path = tmp_path / "a.tfrecord.gz"
    tfrx.write_records(str(path), RECORDS[:60], compression="GZIP")
    cache = tmp_path / "cache"
    tfrx.build_index(str(path), sidecar=True, cache_dir=str(cache))
    assert (tmp_path / ".tfrx" / "a.tfrecord.gz.tfrxzidx").exists()
    assert not cache.exists() or not any(n.endswith(".tfrxzidx") for n in os.listdir(cache))
    other = tmp_path / "b.tfrecord.gz"
    tfrx.write_records(str(other), RECORDS[:5], compression="GZIP")
    assert len(tfrx.load_index(str(other), sidecar=True)) == 5
    assert (tmp_path / ".tfrx" / "b.tfrecord.gz.tfrxzidx").exists()
    default = tmp_path / "c.tfrecord.gz"
    tfrx.write_records(str(default), RECORDS[:5], compression="GZIP")
    tfrx.load_index(str(default))
    assert not (tmp_path / ".tfrx" / "c.tfrecord.gz.tfrxzidx").exists()  # opt-in only
    assert os.path.exists(inflate_index_path(str(default)))


def test_read_only_folder_falls_back_to_the_cache(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "a.tfrecord.gz"
    (folder / ".tfrx").write_bytes(b"")  # a file where the folder would go: the sidecar cannot be written
    with pytest.warns(RuntimeWarning, match="cached in"):
        _write(path, RECORDS[:20], checkpoint_index="sidecar")
    assert os.path.exists(inflate_index_path(str(path)))


def test_level_zero_and_flush(tmp_path, no_pass):
    path = tmp_path / "a.tfrecord.gz"
    with tfrx.TFRecordWriter(
        str(path), tfrx.TFRecordOptions("GZIP", compression_level=0), checkpoint_index=True, checkpoint_spacing=SPACING
    ) as w:
        w.write_many(RECORDS[:100])
        w.flush()
        w.write_many(RECORDS[100:200])
    assert gzip.decompress(path.read_bytes())  # a valid stream
    ds = tfrx.RandomAccessDataset(str(path))
    assert ds[[150, 0, 99, 100]] == [RECORDS[150], RECORDS[0], RECORDS[99], RECORDS[100]]


def test_url(no_pass):
    fsspec = pytest.importorskip("fsspec")
    url = "memory://ckpt-writer/a.tfrecord.gz"
    _write(url, RECORDS[:80], checkpoint_index="sidecar", checkpoint_spacing=SPACING)
    assert fsspec.filesystem("memory").exists("/ckpt-writer/.tfrx/a.tfrecord.gz.tfrxzidx")
    assert tfrx.RandomAccessDataset(url)[[79, 1]] == [RECORDS[79], RECORDS[1]]


def test_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="needs GZIP or ZLIB"):
        tfrx.TFRecordWriter(str(tmp_path / "a"), checkpoint_index=True)
    with pytest.raises(ValueError, match="not a file object"):
        with open(tmp_path / "b", "wb") as f:
            tfrx.TFRecordWriter(f, compression="GZIP", checkpoint_index=True)
    with pytest.raises(ValueError, match="checkpoint_index must be"):
        tfrx.TFRecordWriter(str(tmp_path / "c"), compression="GZIP", checkpoint_index="yes")
    with pytest.raises(ValueError, match="checkpoint_spacing"):
        tfrx.TFRecordWriter(str(tmp_path / "d"), compression="GZIP", checkpoint_index=True, checkpoint_spacing=10)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 40_000), min_size=0, max_size=60),
    level=st.sampled_from([0, 1, 6, 9]),
    kind=st.sampled_from(["GZIP", "ZLIB"]),
    flushes=st.sets(st.integers(0, 60), max_size=3),
)
def test_round_trip(tmp_path_factory, sizes, level, kind, flushes):
    folder = tmp_path_factory.mktemp("rt")
    path = folder / "x.tfrecord.gz"
    rng = np.random.default_rng(len(sizes))
    records = [rng.integers(0, 8, n, dtype=np.uint8).tobytes() for n in sizes]
    with tfrx.TFRecordWriter(
        str(path),
        tfrx.TFRecordOptions(kind, compression_level=level),
        checkpoint_index=True,
        checkpoint_spacing=32768,
    ) as w:
        for k, r in enumerate(records):
            if k in flushes:
                w.flush()
            w.write(r)
    raw = path.read_bytes()
    plain = gzip.decompress(raw) if kind == "GZIP" else zlib.decompress(raw)
    index = load_inflate_index(str(path), build=False)
    scanned = build_inflate_index(str(path), index_path=str(folder / "scan.tfrxzidx"))
    assert index.records == scanned.records
    assert index.records.file_size == len(plain)
    with CompressedRandomReader(str(path), index) as reader:
        for k in rng.permutation(len(records)).tolist():
            off, n = int(index.records.offsets[k]), int(index.records.lengths[k])
            assert reader.read(off + 12, n) == records[k]


def test_records_larger_than_the_staging_buffer(tmp_path, no_pass):
    big = np.random.default_rng(5).integers(0, 4, 3_000_000, dtype=np.uint8).tobytes()
    records = [b"a", big, b"b" * 10, big[:1_500_000], b""]
    path = tmp_path / "big.tfrecord.gz"
    with tfrx.TFRecordWriter(str(path), compression="GZIP", checkpoint_index=True, checkpoint_spacing=SPACING) as w:
        w.write(records[0])
        w.write(records[1])
        w.write_many(records[2:])
    index = load_inflate_index(str(path), build=False)
    assert len(index.points) > 40  # checkpoints inside the large records too
    ds = tfrx.RandomAccessDataset(str(path))
    assert ds[[4, 3, 1, 0, 2]] == [records[4], records[3], records[1], records[0], records[2]]
