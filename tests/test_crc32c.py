import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx import _native

CHECK_VALUE = 0xE3069283  # CRC-32C of b"123456789" (RFC 3720 / iSCSI check value)


def test_check_value():
    assert tfrx.crc32c(b"123456789") == CHECK_VALUE
    assert _native.crc32c_portable(b"123456789") == CHECK_VALUE


def test_known_vectors():
    # RFC 3720 B.4 test vectors.
    assert tfrx.crc32c(bytes(32)) == 0x8A9136AA
    assert tfrx.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert tfrx.crc32c(bytes(range(32))) == 0x46DD794E
    assert tfrx.crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C


def test_is_not_plain_crc32():
    assert tfrx.crc32c(b"123456789") != zlib.crc32(b"123456789")


def test_empty():
    assert tfrx.crc32c(b"") == 0
    assert tfrx.crc32c(b"", 0x1234) == 0x1234


def test_buffer_protocol_without_copy():
    data = np.arange(1000, dtype=np.int64)
    assert tfrx.crc32c(data) == tfrx.crc32c(data.tobytes())
    assert tfrx.crc32c(memoryview(data.tobytes())[10:20]) == tfrx.crc32c(data.tobytes()[10:20])
    assert tfrx.crc32c(bytearray(b"123456789")) == CHECK_VALUE


def test_rejects_non_buffers():
    with pytest.raises(TypeError):
        tfrx.crc32c("a str is not bytes")


def test_masking_matches_tensorflow_formula():
    crc = tfrx.crc32c(b"hello")
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert tfrx.masked_crc32c(b"hello") == masked
    assert _native.crc32c_unmask(_native.crc32c_mask(crc)) == crc


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=5000), st.integers(0, 64))
def test_hardware_matches_portable_and_extends(data, split):
    split = min(split, len(data))
    whole = tfrx.crc32c(data)
    assert whole == _native.crc32c_portable(data)
    assert tfrx.crc32c(data[split:], tfrx.crc32c(data[:split])) == whole
    assert _native.crc32c_portable(data[split:], _native.crc32c_portable(data[:split])) == whole


def test_unaligned_large_buffers():
    rng = np.random.default_rng(0)
    buf = rng.integers(0, 256, size=1 << 20, dtype=np.uint8).tobytes()
    for off in range(9):
        assert tfrx.crc32c(buf[off:]) == _native.crc32c_portable(buf[off:])


def test_backend_is_named():
    assert tfrx.crc32c_backend() in {"sse4.2", "armv8-crc", "portable"}


@pytest.mark.parametrize(
    "size",
    [191, 192, 193, 383, 384, 583, 767, 768, 769, 768 + 192 + 5, 1535, 1536, 24575, 24576, 24577, 49152 + 771]
    + [3 * 8192 * 5 + 3 * 256 * 2 + 13, 3 * 8192 + 3 * 256 + 3 * 64 + 7],
)
def test_interleaved_streams_at_block_boundaries(size):
    # The hardware path splits buffers of 3 x 64 B, 3 x 256 B and 3 x 8 KiB into three
    # interleaved streams; every split point and tail must agree with the
    # portable implementation, from every alignment and seed.
    buf = np.random.default_rng(size).integers(0, 256, size=size + 8, dtype=np.uint8).tobytes()
    for off in (0, 1, 5):
        chunk = buf[off : off + size]
        assert tfrx.crc32c(chunk) == _native.crc32c_portable(chunk)
        assert tfrx.crc32c(chunk, 0xDEADBEEF) == _native.crc32c_portable(chunk, 0xDEADBEEF)


def test_many_long_blocks():
    assert tfrx.crc32c(b"a" * 1_000_000) == _native.crc32c_portable(b"a" * 1_000_000)
