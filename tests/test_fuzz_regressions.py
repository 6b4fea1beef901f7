"""Inputs the fuzz targets in fuzz/ found; each must be rejected cleanly."""

from __future__ import annotations


import os

import numpy as np
import pytest

import tfrx
from tfrx.io import index as index_mod


def _tfrx_index(offsets: list[int], file_size: int) -> bytes:
    body = np.asarray(offsets, dtype="<u8").tobytes()
    header = index_mod._HEADER.pack(
        index_mod.MAGIC, index_mod.VERSION, index_mod.HEADER_SIZE, len(offsets), file_size, 0, 0, tfrx.crc32c(body)
    )
    return header + body


def test_index_claiming_a_file_beyond_int64_is_rejected():
    with pytest.raises(tfrx.IndexFileError, match="claims a file"):
        tfrx.RecordIndex.from_bytes(_tfrx_index([0], 2**64 - 1))


def test_index_offsets_whose_end_overflows_int64_are_rejected():
    with pytest.raises(tfrx.IndexFileError, match="not increasing record starts"):
        tfrx.RecordIndex.from_bytes(_tfrx_index([0, 2**63 - 1], 1 << 62))


@pytest.mark.parametrize("text", [b"\xff\xff71 113\xff\xff\xff72 113", b"99999999999999999999 16\n"])
def test_dali_index_with_numbers_beyond_int64_is_rejected(text):
    with pytest.raises(tfrx.IndexFileError):
        tfrx.RecordIndex.from_dali(text)


def test_dali_index_whose_end_overflows_int64_is_rejected():
    with pytest.raises(tfrx.IndexFileError):
        tfrx.RecordIndex.from_dali(b"9223372036854775800 100\n")


def test_load_index_rebuilds_over_a_cached_index_with_an_absurd_size(tmp_path):
    path = tmp_path / "data.tfrecord"
    tfrx.write_records(path, [b"a", b"bc"])
    cached = index_mod.default_index_path(str(path))
    os.makedirs(os.path.dirname(cached), exist_ok=True)  # the .tfrx/ folder beside the data
    with open(cached, "wb") as f:
        f.write(_tfrx_index([0], 2**64 - 1))
    index = tfrx.load_index(path)
    assert len(index) == 2 and index.file_size == path.stat().st_size


@pytest.mark.parametrize("dtype", [tfrx.int64, tfrx.float32, tfrx.string])
def test_missing_fixed_len_feature_of_zero_size_takes_its_empty_default(dtype):
    # Found by the parse target under UBSan: copying the empty default passed a null pointer to memcpy.
    records = [tfrx.make_example({"other": [1]}).SerializeToString()] * 3
    spec = {
        "a": tfrx.FixedLenFeature((0,), dtype, default_value=[]),
        "b": tfrx.FixedLenFeature((2, 0), dtype, default_value=[]),
    }
    out = tfrx.parse_example(records, spec)
    assert out["a"].shape == (3, 0) and out["b"].shape == (3, 2, 0)
