"""Index files: building, the tfrx binary format, validation, DALI / tfrecord interop, caching."""

from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.io.index import HEADER_SIZE, RecordIndex, default_index_path, index_cache_dir, scan_index


def _records(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.bytes(int(k)) for k in rng.integers(0, 300, n)]


@pytest.fixture
def data(tmp_path):
    recs = _records(50)
    path = tmp_path / "a.tfrecord"
    tfrx.write_records(str(path), recs)
    return str(path), recs


def _ix(path):
    """Where an index is kept beside its data file: the hidden sidecar folder."""
    return os.path.join(os.path.dirname(path), ".tfrx", os.path.basename(path) + ".tfrxidx")


def _expected_offsets(recs):
    return np.cumsum([0] + [len(r) + 16 for r in recs[:-1]])


def test_build_index_offsets_and_lengths(data):
    path, recs = data
    ix = tfrx.build_index(path, sidecar=True)
    assert len(ix) == 50
    np.testing.assert_array_equal(ix.offsets, _expected_offsets(recs))
    np.testing.assert_array_equal(ix.lengths, [len(r) for r in recs])
    assert ix.file_size == os.path.getsize(path)
    assert os.path.exists(_ix(path))
    assert os.path.getsize(_ix(path)) == HEADER_SIZE + 8 * 50
    assert tfrx.load_index(path, build=False) == ix


def test_empty_file(tmp_path):
    path = str(tmp_path / "empty.tfrecord")
    open(path, "wb").close()
    assert len(tfrx.build_index(path)) == 0
    assert len(tfrx.load_index(path)) == 0
    assert tfrx.count_records(path) == 0


def test_count_records_from_indexes(tmp_path, monkeypatch):
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    for i, n in enumerate([3, 0, 7]):
        tfrx.write_records(str(tmp_path / f"p{i}.tfrecord"), _records(n, i))
    assert tfrx.count_records(str(tmp_path / "*.tfrecord")) == 10
    assert len(list(Path(index_cache_dir()).glob("*.tfrxidx"))) == 3
    assert sorted(os.listdir(tmp_path)) == ["cache", *(f"p{i}.tfrecord" for i in range(3))]  # nothing beside the data


def test_verify_data_crc_while_building(data, tmp_path):
    path, recs = data
    blob = bytearray(open(path, "rb").read())
    blob[12 + 5] ^= 1  # inside the payload of record 0 (length >= 6 below is checked)
    assert len(recs[0]) > 5
    bad = str(tmp_path / "bad.tfrecord")
    open(bad, "wb").write(bytes(blob))
    assert len(scan_index(bad)) == 50  # framing only: payload damage is not seen
    with pytest.raises(tfrx.CorruptRecordError, match="data CRC mismatch") as e:
        tfrx.build_index(bad, verify=True)
    assert e.value.record_index == 0


def test_damaged_framing_raises(data, tmp_path):
    path, recs = data
    blob = open(path, "rb").read()
    trunc = str(tmp_path / "trunc.tfrecord")
    open(trunc, "wb").write(blob[:-3])
    with pytest.raises(tfrx.CorruptRecordError, match="truncated") as e:
        tfrx.build_index(trunc)
    assert e.value.record_index == 49
    bad = bytearray(blob)
    bad[int(_expected_offsets(recs)[3]) + 9] ^= 0xFF  # record 3's length CRC
    bad_path = str(tmp_path / "badlen.tfrecord")
    open(bad_path, "wb").write(bytes(bad))
    with pytest.raises(tfrx.CorruptRecordError, match="length CRC") as e:
        tfrx.build_index(bad_path)
    assert e.value.record_index == 3 and e.value.offset == _expected_offsets(recs)[3]


def test_compressed_file_gets_a_checkpoint_index(tmp_path):
    # A GZIP file is indexed through its checkpoint index (tfrx.io.inflate_index): offsets in the
    # uncompressed stream, and random access works; a DALI text index of it cannot be made.
    path = str(tmp_path / "z.tfrecord.gz")
    tfrx.write_records(path, _records(5), compression="GZIP")
    index = tfrx.build_index(path)
    assert len(index) == 5 and index.offsets[0] == 0
    assert tfrx.load_index(path) == index
    assert tfrx.RandomAccessDataset([path])[4] == _records(5)[4]
    with pytest.raises(tfrx.CompressedFileError, match=r"GZIP-compressed.*tfrx reshard --output-compression none"):
        tfrx.build_index(path, format="dali")


# ---------------------------------------------------------------- validation
def test_stale_after_append(data):
    path, recs = data
    tfrx.build_index(path, sidecar=True)
    with open(path, "ab") as f:
        f.write(tfrx._native.frame_records([b"more"]))
    with pytest.raises(tfrx.StaleIndexError, match="stale"):
        tfrx.load_index(path, index_path=_ix(path))
    # A stale sidecar is passed over (and left alone) unless sidecars are asked for; then it is rebuilt.
    assert len(tfrx.load_index(path)) == 51
    with pytest.raises(tfrx.StaleIndexError, match="stale"):
        tfrx.load_index(path, index_path=_ix(path))
    assert len(tfrx.load_index(path, sidecar=True)) == 51
    assert len(tfrx.load_index(path, index_path=_ix(path))) == 51


def test_truncated_index(data):
    path, _ = data
    tfrx.build_index(path, sidecar=True)
    ixp = _ix(path)
    blob = open(ixp, "rb").read()
    for cut in (len(blob) - 3, HEADER_SIZE - 1, 4):
        open(ixp, "wb").write(blob[:cut])
        with pytest.raises(tfrx.IndexFileError, match="truncated"):
            tfrx.load_index(path, index_path=ixp)


def test_corrupt_magic_and_offsets(data):
    path, _ = data
    tfrx.build_index(path, sidecar=True)
    ixp = _ix(path)
    blob = bytearray(open(ixp, "rb").read())
    bad = bytes(b"XFRXIDX\0" + blob[8:])
    open(ixp, "wb").write(bad)
    with pytest.raises(tfrx.IndexFileError, match="magic"):
        tfrx.load_index(path, index_path=ixp, format="tfrx")
    blob[HEADER_SIZE + 8] ^= 1
    open(ixp, "wb").write(bytes(blob))
    with pytest.raises(tfrx.IndexFileError, match="CRC mismatch"):
        tfrx.load_index(path, index_path=ixp)
    assert issubclass(tfrx.IndexFileError, ValueError) and issubclass(tfrx.IndexFileError, tfrx.TfrxError)
    assert not issubclass(tfrx.IndexFileError, IndexError)


def test_index_of_another_file(tmp_path):
    a, b = str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")
    tfrx.write_records(a, [b"x" * 10] * 5)
    tfrx.write_records(b, [b"y" * 10] * 5)  # same size, other contents
    tfrx.build_index(a, sidecar=True)
    with pytest.raises(tfrx.StaleIndexError, match="another file"):
        tfrx.load_index(b, index_path=_ix(a))


def test_index_cache_location(data, tmp_path, monkeypatch):
    path, _ = data
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    ix = tfrx.load_index(path)
    where = default_index_path(path)
    assert where.startswith(str(tmp_path / "cache" / "index")) and os.path.exists(where)
    assert not os.path.exists(_ix(path))
    assert tfrx.load_index(path, build=False) == ix
    monkeypatch.delenv("TFRX_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert index_cache_dir() == str(tmp_path / "xdg" / "tfrx" / "index")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # invalid by the XDG spec: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert index_cache_dir() == str(tmp_path / "home" / ".cache" / "tfrx" / "index")


def test_explicit_cache_dir(data, tmp_path):
    path, _ = data
    ix = tfrx.build_index(path, cache_dir=str(tmp_path / "c"))
    assert not os.path.exists(_ix(path))
    assert len(os.listdir(tmp_path / "c")) == 1
    assert tfrx.load_index(path, cache_dir=str(tmp_path / "c"), build=False) == ix


# ---------------------------------------------------------------- DALI / tfrecord interop
# The tfrecord package registers tensorflow.Example in protobuf's default pool,
# which breaks a later `import tensorflow` in the same process: it runs in a subprocess.
_TFRECORD_INTEROP = r"""
import sys
from tfrecord.reader import tfrecord_iterator
from tfrecord.tools.tfrecord2idx import create_index

data, ours, theirs = sys.argv[1:4]
create_index(data, theirs)
got = []
for shard in range(3):
    got += [bytes(r).hex() for r in tfrecord_iterator(data, ours, shard=(shard, 3))]
print(",".join(got))
"""


def _tfrecord_interop(data: str, ours: str, theirs: str) -> list[bytes]:
    if importlib.util.find_spec("tfrecord") is None:
        pytest.skip("the tfrecord package is not installed")
    out = subprocess.run(
        [sys.executable, "-c", _TFRECORD_INTEROP, data, ours, theirs],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    line = out.stdout.strip()
    return [bytes.fromhex(h) for h in line.split(",")] if line else []


@pytest.mark.slow
def test_dali_index_interop_with_the_tfrecord_package(data, tmp_path):
    path, recs = data
    ours, theirs = str(tmp_path / "ours.idx"), str(tmp_path / "theirs.idx")
    tfrx.build_index(path, index_path=ours, format="dali")
    # Their reader, given our index, reads every record (in 3 index shards).
    assert _tfrecord_interop(path, ours, theirs) == recs
    # Their tfrecord2idx writes the same text; we read their index.
    assert open(ours).read() == open(theirs).read()
    ix = tfrx.load_index(path, index_path=theirs)  # sniffed as text
    assert ix == tfrx.load_index(path)
    ds = tfrx.RandomAccessDataset([path], index=[theirs])
    assert ds[[7, 0, 49]] == [recs[7], recs[0], recs[49]]


def test_stale_dali_index(data, tmp_path):
    path, _ = data
    ours = str(tmp_path / "ours.idx")
    tfrx.build_index(path, index_path=ours, format="dali")
    with open(path, "ab") as f:
        f.write(tfrx._native.frame_records([b"more"]))
    with pytest.raises(tfrx.StaleIndexError):
        tfrx.load_index(path, index_path=ours)
    open(ours, "w").write("0 12\nbogus\n")
    with pytest.raises(tfrx.IndexFileError):
        tfrx.load_index(path, index_path=ours)


def test_binary_roundtrip():
    ix = RecordIndex("x", np.array([0, 20, 56]), 100)
    assert RecordIndex.from_bytes(ix.to_bytes()) == ix
    assert RecordIndex.from_dali(ix.to_dali(), file_size=100) == ix
    np.testing.assert_array_equal(ix.lengths, [4, 20, 28])


def test_corpus_files_index(corpus_dir):
    checked = 0
    for p in sorted(corpus_dir.iterdir()):
        if p.suffix in (".tsv", ".md", ".txt") or p.is_dir():
            continue
        head = p.read_bytes()[:12]
        if tfrx.io._compression.detect_compression(head):
            continue
        try:
            expected = list(tfrx.read_records(str(p)))
        except (tfrx.CorruptRecordError, ValueError):
            continue
        ix = scan_index(str(p), verify=True)
        ds = tfrx.RandomAccessDataset([str(p)], index=[ix])
        assert ds[list(range(len(ds)))] == list(expected), p.name
        checked += 1
    assert checked > 5


def test_index_matches_the_framing_for_any_records(tmp_path):
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=40, deadline=None)
    @hypothesis.given(st.lists(st.binary(max_size=200), max_size=30))
    def check(recs):
        path = str(tmp_path / "h.tfrecord")
        tfrx.write_records(path, recs)
        ix = scan_index(path, verify=True)
        assert len(ix) == len(recs)
        if recs:
            np.testing.assert_array_equal(ix.offsets, _expected_offsets(recs))
            np.testing.assert_array_equal(ix.lengths, [len(r) for r in recs])
        assert RecordIndex.from_bytes(ix.to_bytes()) == ix
        assert RecordIndex.from_dali(ix.to_dali(), file_size=ix.file_size) == ix
        ds = tfrx.RandomAccessDataset([path], index=[ix])
        assert ds[list(range(len(recs)))[::-1]] == recs[::-1]

    check()


# ---------------------------------------------------------------- one error for one damage
_READ_HINT = 'pass on_error="skip" to skip corrupt records'
_INDEX_HINT = "the file is damaged and cannot be indexed past this record"


def _without_read_advice(message: str) -> str:
    """A reader's error message less the reader's advice (the index cannot skip, so it gives its own)."""
    for advice in (
        "; " + _READ_HINT,
        ' (on_error="skip" would read no record from it)',  # not a TFRecord file
        '; if it is a TFRecord file whose start is damaged, pass on_error="skip" to read what follows',
    ):
        if message.endswith(advice):
            return message[: -len(advice)]
    raise AssertionError(f"no reader advice at the end of {message!r}")


def _first_damage(path: str, how: str):
    """The error the reader raises at ``path``'s first damaged record, and the one the index raises."""
    from hypothesis import note

    with pytest.raises(tfrx.CorruptRecordError) as read:
        for _ in tfrx.read_records(path, compression="", verify=True):
            pass
    with pytest.raises(tfrx.CorruptRecordError) as scanned:
        scan_index(path, verify=True)
    note(f"{how}: {read.value} / {scanned.value}")
    return read.value, scanned.value


@given(
    sizes=st.lists(st.integers(0, 200), min_size=1, max_size=8),
    damage=st.sampled_from(["length", "length_crc", "data", "data_crc", "truncate"]),
    which=st.integers(0, 7),
    bit=st.integers(0, 7),
    data=st.data(),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_reader_and_index_describe_the_same_damage_the_same_way(tmp_path, sizes, damage, which, bit, data):
    recs = [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    path = str(tmp_path / "damaged.tfrecord")
    tfrx.write_records(path, recs)
    blob = bytearray(open(path, "rb").read())
    k = which % len(recs)
    start = sum(len(r) + 16 for r in recs[:k])
    if damage == "truncate":
        cut = data.draw(st.integers(start + 1, len(blob) - 1), label="cut at")
        assume(cut not in itertools.accumulate(len(r) + 16 for r in recs))  # a cut between records is no damage
        del blob[cut:]
    else:
        span = {"length": (0, 8), "length_crc": (8, 12), "data": (12, 12 + len(recs[k])), "data_crc": (-4, 0)}
        lo, hi = span[damage]
        lo, hi = (
            (start + 12 + len(recs[k]) + lo + 4, start + 12 + len(recs[k]) + 4) if lo < 0 else (start + lo, start + hi)
        )
        if hi <= lo:
            return  # an empty record has no data bytes to damage
        blob[data.draw(st.integers(lo, hi - 1), label="byte")] ^= 1 << bit
    open(path, "wb").write(bytes(blob))
    read, scanned = _first_damage(path, damage)
    assert _INDEX_HINT in str(scanned)
    assert str(scanned).split("; " + _INDEX_HINT)[0] == _without_read_advice(str(read))
    for field in ("path", "record_index", "offset", "kind", "expected", "actual"):
        assert getattr(scanned, field) == getattr(read, field), field


# ---------------------------------------------------------------- storage_options
@pytest.fixture
def locked_store():
    """A memory filesystem that opens only with ``storage_options={"token": "secret"}``."""
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    class Locked(MemoryFileSystem):
        protocol = "lockedmem"

        def __init__(self, *args, token=None, **kwargs):
            if token != "secret":
                raise PermissionError("lockedmem needs storage_options={'token': 'secret'}")
            super().__init__(*args, **kwargs)

        @classmethod
        def _strip_protocol(cls, path):
            return MemoryFileSystem._strip_protocol(str(path).removeprefix("lockedmem://"))

    fsspec.register_implementation("lockedmem", Locked, clobber=True)
    opts = {"token": "secret"}
    url = "lockedmem://vocab-test/a.tfrecord"
    tfrx.write_records(url, _records(7), storage_options=opts)
    yield url, opts
    fsspec.filesystem("lockedmem", token="secret").rm("/vocab-test", recursive=True)


def test_index_functions_take_storage_options(locked_store):
    url, opts = locked_store
    with pytest.raises(OSError, match="needs storage_options"):
        scan_index(url)
    assert len(scan_index(url, storage_options=opts)) == 7
    assert len(tfrx.build_index(url, storage_options=opts)) == 7  # its index object beside it, with the options
    assert len(tfrx.load_index(url, build=False, storage_options=opts)) == 7
    assert tfrx.count_records(url, storage_options=opts) == 7
    (check,) = tfrx.tools.verify_files(url, storage_options=opts, progress=False)
    assert check.ok and check.records == 7


def test_indexing_a_file_that_is_not_tfrecord_says_so(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some text, no records in it\n" * 20)
    with pytest.raises(tfrx.CorruptRecordError, match="is not a TFRecord file") as e:
        tfrx.build_index(str(path))
    assert str(e.value).endswith(_INDEX_HINT + " (`tfrx verify` lists its damaged regions)")
    assert "on_error" not in str(e.value)  # the index has no on_error to pass


def test_a_plain_file_whose_damage_forms_a_zlib_header_is_indexed_as_a_damaged_plain_file(tmp_path):
    """120 = 0x78 in the first length byte; a flipped bit in the second makes 78 01, a valid zlib header.
    The index takes the readers' rule (a header that only looks compressed is plain) and names the damage."""
    path = str(tmp_path / "damaged.tfrecord")
    tfrx.write_records(path, [b"\0" * 120])
    blob = bytearray(open(path, "rb").read())
    blob[1] ^= 1
    open(path, "wb").write(bytes(blob))
    with pytest.raises(tfrx.CorruptRecordError) as read:
        list(tfrx.read_records(path, compression="", verify=True))
    with pytest.raises(tfrx.CorruptRecordError) as scanned:
        scan_index(path, verify=True)
    assert scanned.value.kind == read.value.kind and scanned.value.offset == read.value.offset == 0
    with pytest.raises(tfrx.CorruptRecordError):
        tfrx.build_index(path)
