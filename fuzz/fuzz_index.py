"""Fuzz target: index loading on arbitrary bytes.

The first byte picks the path: ``tfrx.load_index`` on the bytes as an index
file (format sniffed, ``"tfrx"`` or ``"dali"``), or ``RecordIndex.from_bytes``
on the bytes with a valid header and offsets CRC rebuilt around them, so the
offset checks behind the CRC are reached too.
"""

from __future__ import annotations

import atexit
import os
import shutil
import struct
import sys
import tempfile

import atheris
import numpy  # noqa: F401  (imported first so that only tfrx's own Python code is instrumented)

with atheris.instrument_imports():
    import tfrx
    from tfrx import index as index_mod
    from common import EXPECTED, framed, generated_examples, write_seed

# libFuzzer ends the process with C exit(), so Python's atexit does not run: run.py gives a scratch folder that it
# removes itself; a target started by hand falls back to a temporary one.
_DIR = os.environ.get("TFRX_FUZZ_SCRATCH") or tempfile.mkdtemp(prefix="tfrx-fuzz-index-")
if "TFRX_FUZZ_SCRATCH" not in os.environ:
    atexit.register(shutil.rmtree, _DIR, True)
_DATA = os.path.join(_DIR, "data.tfrecord")
_INDEX = os.path.join(_DIR, "data.idx")
with open(_DATA, "wb") as f:
    f.write(framed(generated_examples()))
_SIZE = os.path.getsize(_DATA)
_FORMATS = [None, "tfrx", "dali"]


def _with_header(body: bytes, size: int) -> bytes:
    body = body[: len(body) // 8 * 8]
    header = index_mod._HEADER.pack(
        index_mod.MAGIC, index_mod.VERSION, index_mod.HEADER_SIZE, len(body) // 8, size, 0, 0, tfrx.crc32c(body)
    )
    return header + body


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0], data[1:]
    try:
        if mode & 3 == 3:
            size = struct.unpack("<Q", (body[:8] + bytes(8))[:8])[0] if mode & 4 else _SIZE
            index = tfrx.RecordIndex.from_bytes(_with_header(body[8:], size))
            len(index)
            return
        with open(_INDEX, "wb") as f:
            f.write(body)
        index = tfrx.load_index(_DATA, index_path=_INDEX, format=_FORMATS[mode & 3])
        list(index.offsets[:4])
    except EXPECTED:
        pass


def seeds(corpus_dir: str | None, out_dir: str) -> int:
    index = tfrx.build_index(_DATA, index_path=os.path.join(_DIR, "seed.tfrxidx"))
    write_seed(out_dir, "tfrx", bytes([0]) + index.to_bytes())
    write_seed(out_dir, "dali", bytes([2]) + index.to_dali().encode())
    write_seed(out_dir, "offsets", bytes([3]) + bytes(8) + index.offsets.astype("<u8").tobytes())
    return 3


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
