"""Damage in a GZIP/ZLIB stream loses nothing that inflates before it.

The reference is zlib fed one compressed byte at a time: everything it
returns before the byte that fails is what the damaged file still holds.
Parsed by the framing parser of ``framing_oracle.py``, that prefix gives the
records each mode must deliver, whatever the reader's chunk size and with or
without the isal inflater.
"""

from __future__ import annotations

import gzip
import io
import warnings
import zlib

import pytest
from framing_oracle import frame, oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.io import _compression as compression_module

WBITS = {"GZIP": 31, "ZLIB": 15}


def inflate_until_damage(data: bytes, compression: str) -> tuple[bytes, int | None]:
    """The bytes zlib inflates from ``data`` before it fails, and the offset of the failing byte (None if none)."""
    if not data:
        return b"", None  # an empty file is an empty stream
    d = zlib.decompressobj(WBITS[compression])
    out = []
    i = 0
    while i < len(data):
        try:
            out.append(d.decompress(data[i : i + 1]))
        except zlib.error:
            return b"".join(out), i
        i += 1
        if d.eof and i < len(data):
            rest = data[i:]
            if compression == "GZIP" and not rest.strip(b"\0"):
                return b"".join(out), None
            if compression == "ZLIB":
                return b"".join(out), i
            d = zlib.decompressobj(WBITS[compression])  # the next gzip member
    return b"".join(out), None if d.eof else len(data)


def compress(raw: bytes, compression: str) -> bytes:
    return gzip.compress(raw, mtime=0) if compression == "GZIP" else zlib.compress(raw)


class Unseekable(io.RawIOBase):
    """A stream that cannot seek back (as a pipe)."""

    def __init__(self, data: bytes) -> None:
        self._f = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self._f.readinto(b)


@pytest.fixture(params=["backend", "zlib"])
def inflater(request):
    """The module's own choice (isal where installed), then plain zlib."""
    if request.param == "zlib":
        saved = compression_module._BACKEND, compression_module._BACKEND_COPIES
        compression_module._BACKEND, compression_module._BACKEND_COPIES = zlib, True
        yield "zlib"
        compression_module._BACKEND, compression_module._BACKEND_COPIES = saved
    else:
        yield compression_module.decompressor_backend()


def read(source, **options):
    """(records, error) read until the end or the first error."""
    got = []
    try:
        for rec in tfrx.RecordReader(source, **options):
            got.append(rec)
    except tfrx.CorruptRecordError as e:
        return got, e
    return got, None


damage = st.one_of(
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.floats(0, 1), st.just(0)),
    st.tuples(st.just("trailer"), st.integers(1, 8), st.integers(1, 255)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.binary(max_size=40).map(lambda b: b * 20), min_size=1, max_size=40),
    compression=st.sampled_from(["GZIP", "ZLIB"]),
    hurt=damage,
    chunk=st.sampled_from([64, 1000, 1 << 20]),
    seekable=st.booleans(),
)
def test_every_record_before_the_break_is_delivered(tmp_path, inflater, records, compression, hurt, chunk, seekable):
    raw = b"".join(frame(r) for r in records)
    data = bytearray(compress(raw, compression))
    kind, where, value = hurt
    if kind == "flip":
        data[int(where * (len(data) - 1))] ^= value
    elif kind == "truncate":
        del data[int(where * (len(data) - 1)) :]
    else:
        data[-where] ^= value
    data = bytes(data)
    path = tmp_path / "damaged"
    path.write_bytes(data)
    source = (lambda: str(path)) if seekable else (lambda: io.BufferedReader(Unseekable(data)))

    prefix, broke_at = inflate_until_damage(data, compression)
    want, regions = oracle(prefix)
    options = {"compression": compression, "chunk_size": chunk}

    # raise: every record up to the first problem, then the error
    got, err = read(source(), **options)
    first_problem = regions[0][0] if regions else len(prefix)
    assert got == [r for _, off, r in want if off < first_problem]
    if regions or broke_at is not None:
        assert err is not None
    if err is not None and err.kind == "compression":
        assert err.compressed_offset == broke_at
        assert err.offset == len(prefix) and err.record_index == len(got)
        assert (f"records 0 to {len(got) - 1} were read" if got else "no record was read") in str(err)

    # skip and warn: every record of the inflated prefix, the break reported last
    for mode in ("skip", "warn"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with tfrx.RecordReader(source(), on_error=mode, **options) as r:
                assert list(r) == [rec for _, _, rec in want]
                stats = r.stats
        counted = sum(count for *_, count in regions)
        assert counted <= stats.skipped_records <= counted + 1
        if broke_at is not None:
            (broke,) = [e for e in stats.errors if e.kind == "compression"]
            assert broke.compressed_offset == broke_at
            assert any(str(w.message).startswith(str(broke)) for w in caught)


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_a_damaged_end_check_keeps_every_record(tmp_path, inflater, compression):
    records = [(b"record %d " % i) * 5 for i in range(30_000)]
    data = bytearray(compress(b"".join(frame(r) for r in records), compression))
    data[-6 if compression == "GZIP" else -2] ^= 1  # the CRC-32 / Adler-32 of the stream
    path = tmp_path / "trailer"
    path.write_bytes(bytes(data))
    got, err = read(path)
    assert got == records
    assert err.kind == "compression" and err.record_index == len(records)
    assert "records 0 to 29999 were read and verified" in str(err)
    with pytest.warns(tfrx.CorruptRecordWarning):
        with tfrx.RecordReader(path, on_error="skip") as r:
            assert list(r) == records
            assert r.skipped_records == 0 and len(r.stats.errors) == 1


def test_backends_agree_on_a_flipped_byte(tmp_path):
    records = [bytes([i % 251]) * (50 + i) for i in range(400)]
    data = bytearray(compress(b"".join(frame(r) for r in records), "GZIP"))
    data[len(data) * 3 // 4] ^= 0x55
    path = tmp_path / "flip.gz"
    path.write_bytes(bytes(data))
    prefix, broke_at = inflate_until_damage(bytes(data), "GZIP")
    want = [rec for _, _, rec in oracle(prefix)[0]]
    results = []
    saved = compression_module._BACKEND, compression_module._BACKEND_COPIES
    try:
        for backend in (saved[0], zlib):
            compression_module._BACKEND = backend
            compression_module._BACKEND_COPIES = hasattr(backend.decompressobj(), "copy")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with tfrx.RecordReader(path, on_error="skip") as r:
                    results.append((list(r), [e.compressed_offset for e in r.stats.errors if e.compressed_offset]))
    finally:
        compression_module._BACKEND, compression_module._BACKEND_COPIES = saved
    assert results[0] == results[1]
    assert results[0][0] == want
    assert results[0][1] == ([] if broke_at is None else [broke_at])


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_a_stream_that_can_be_opened_again_is_inflated_again_after_damage(inflater, compression):
    from tfrx.io._compression import DecompressingReader

    records = [bytes([i % 7]) * (30 + i) for i in range(300)]
    whole = compress(b"".join(frame(r) for r in records), compression)
    for at in range(len(whole) * 2 // 3, len(whole)):  # the first flip zlib notices
        data = bytearray(whole)
        data[at] ^= 0x3C
        data = bytes(data)
        prefix, broke_at = inflate_until_damage(data, compression)
        if broke_at is not None:
            break
    opened = []

    def reopen():
        opened.append(io.BufferedReader(Unseekable(data)))
        return opened[-1]

    stream = DecompressingReader(io.BufferedReader(Unseekable(data)), compression, reopen=reopen)
    out = bytearray()
    buf = bytearray(1000)
    with pytest.raises(tfrx.CorruptRecordError) as info:
        while n := stream.readinto(buf):
            out += buf[:n]
    assert bytes(out) == prefix and info.value.compressed_offset == broke_at
    # The member is inflated again from its start rather than copying state before every call.
    assert len(opened) == 1
    stream.close()
    assert all(f.closed for f in opened)


@pytest.mark.parametrize("flag", [0x20, 0x40, 0x80])
def test_a_reserved_gzip_flag_is_damage_with_every_inflater(tmp_path, inflater, flag):
    # RFC 1952 makes a set reserved FLG bit an error; zlib (and so TensorFlow) refuses the member, isal would not.
    data = bytearray(compress(b"".join(frame(b"x" * n) for n in range(12)), "GZIP"))
    data[3] |= flag
    path = tmp_path / "reserved.gz"
    path.write_bytes(bytes(data))
    got, err = read(str(path), compression="GZIP")
    assert got == [] and err is not None and err.kind == "compression"
    assert err.compressed_offset == 3 == inflate_until_damage(bytes(data), "GZIP")[1]


def _auto_vs_named(path, compression):
    """(records, error text) read with the default compression="auto" and with the compression named, raise and skip."""
    out = []
    for given_compression in ("auto", compression):
        got, err = read(str(path), compression=given_compression)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            skipped = list(tfrx.RecordReader(str(path), compression=given_compression, on_error="skip"))
        out.append((got, None if err is None else (err.kind, err.offset, err.record_index), skipped))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.binary(max_size=60), min_size=1, max_size=12),
    compression=st.sampled_from(["GZIP", "ZLIB"]),
    level=st.sampled_from([0, 6]),
    incompressible=st.booleans(),
    where=st.floats(0, 1),
    value=st.integers(1, 255),
)
def test_auto_reads_a_damaged_stored_stream_as_its_named_compression(
    tmp_path, records, compression, level, incompressible, where, value
):
    # Level 0, or records that do not compress, store the TFRecord bytes as they are inside the
    # deflate stream; damage anywhere after the GZIP/ZLIB header must not make "auto" take the
    # file for a damaged plain file (which loses every record and blames "record 0 at byte 0").
    if incompressible:
        records = [bytes((17 * i + 101 * len(r) + b) % 256 for i, b in enumerate(r * 3)) for r in records]
    raw = b"".join(frame(r) for r in records)
    data = bytearray(gzip.compress(raw, level, mtime=0) if compression == "GZIP" else zlib.compress(raw, level))
    header = 10 if compression == "GZIP" else 2
    data[header + int(where * (len(data) - header - 1))] ^= value
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(data))
    auto, named = _auto_vs_named(path, compression)
    assert auto == named


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
@pytest.mark.parametrize("part", ["block_header", "block_length", "first_record", "middle", "end_check"])
def test_a_small_damaged_level_0_file_is_read_as_compressed(tmp_path, compression, part):
    records = [bytes([i]) * 20 for i in range(6)]
    raw = b"".join(frame(r) for r in records)
    data = bytearray(gzip.compress(raw, 0, mtime=0) if compression == "GZIP" else zlib.compress(raw, 0))
    stored = (10 if compression == "GZIP" else 2) + 5  # where the stored block's data (the records) starts
    at = {
        "block_header": stored - 5,
        "block_length": stored - 3,
        "first_record": stored + 2,
        "middle": stored + len(raw) // 2,
        "end_check": len(data) - 6,
    }[part]
    data[at] ^= 0x5A
    path = tmp_path / "small.tfrecord"
    path.write_bytes(bytes(data))
    auto, named = _auto_vs_named(path, compression)
    assert auto == named
    got, err, skipped = auto
    if part in ("middle", "end_check"):
        assert len(skipped) >= 5  # every intact record
    if err is not None:
        assert not (err[0] == "length_crc" and err[1] == 0 and part != "first_record")


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_a_damaged_stored_stream_read_as_plain_is_named_compressed(tmp_path, compression):
    # compression="" given: the first header fails, and the error says which compression to name
    # although the stream no longer inflates (its end check fails)
    raw = b"".join(frame(bytes([i]) * 20) for i in range(6))
    data = bytearray(gzip.compress(raw, 0, mtime=0) if compression == "GZIP" else zlib.compress(raw, 0))
    data[len(data) // 2] ^= 0x5A
    path = tmp_path / "stored.tfrecord"
    path.write_bytes(bytes(data))
    got, err = read(str(path), compression="")
    assert got == [] and err is not None and err.kind == "compressed"
    assert f"looks {compression}-compressed" in str(err)
