"""Fuzz target: the record reader on arbitrary file contents, every compression.

The first byte picks how the rest is presented: as a raw file read with each
``compression`` setting, or compressed (gzip / zlib) from fuzzed framing so the
framing scanner sees damage behind a valid compressed stream. It also picks
``verify``, ``on_error`` and a small ``chunk_size`` so records straddle reads.
"""

from __future__ import annotations

import gzip
import io
import sys
import warnings
import zlib

import atheris
import numpy  # noqa: F401  (imported first so that only tfrx's own Python code is instrumented)

with atheris.instrument_imports():
    import tfrx
    from common import EXPECTED, corpus_files, framed, generated_examples, write_seed

_COMPRESSION = ["", "GZIP", "ZLIB", "auto"]
_ON_ERROR = ["raise", "skip", "warn"]


def _present(mode: int, body: bytes) -> tuple[bytes, str]:
    kind = mode & 7
    if kind < 4:
        return body, _COMPRESSION[kind]
    if kind == 4:
        return gzip.compress(body, mtime=0), "GZIP"
    if kind == 5:
        return zlib.compress(body), "ZLIB"
    if kind == 6:
        return gzip.compress(body, mtime=0), "auto"
    return zlib.compress(body), "auto"


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0], data[1:]
    payload, compression = _present(mode, body)
    chunk = (16, 64, 4096, 1 << 20)[(mode >> 3) & 3]
    on_error = _ON_ERROR[(mode >> 5) % 3]
    verify = not (mode & 0x80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            reader = tfrx.RecordReader(
                io.BytesIO(payload), compression=compression, verify=verify, on_error=on_error, chunk_size=chunk
            )
            total = 0
            for batch in reader.iter_batches(max_records=3):
                for record in batch:
                    total += len(record)
            reader.close()
        except EXPECTED:
            pass


def seeds(corpus_dir: str | None, out_dir: str) -> int:
    n = 0
    for path in corpus_files(corpus_dir):
        with open(path, "rb") as f:
            head = f.read(1 << 15)
        # auto compression, verify, raise; plus a skip-mode variant with small chunks
        write_seed(out_dir, f"file{n}", bytes([3]) + head)
        write_seed(out_dir, f"file{n}s", bytes([3 | 0x08 | 0x20]) + head)
        n += 2
    body = framed(generated_examples())
    for mode in (0, 4, 5, 6, 7, 0x28):
        write_seed(out_dir, f"gen{mode}", bytes([mode]) + body)
        n += 1
    return n


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
