"""Fuzz target: ``ParserCore.parse_file`` (what the Arrow scan reads local files with) on arbitrary file contents.

The input is a parse target's (``common.draw_spec``: a spec, an options byte,
records). Options bit 0 frames the records into a valid file; otherwise the
record bytes themselves are the file, so the framing scanner sees damage. Bits
1-2 pick the piece size (16 B .. 64 KiB, so records straddle and outgrow
pieces), bits 3-4 the records per call. Whatever the call returns with
status 0 must equal reading the same records with a ``RecordReader`` and
parsing them as one batch; any other status must leave the columns empty.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

import atheris
import numpy  # noqa: F401  (imported first so that only tfrx's own Python code is instrumented)

with atheris.instrument_imports():
    import tfrx
    from common import EXPECTED, RECORD_SEP, draw_spec, framed, generated_examples, spec_header, write_seed

_DIR = os.environ.get("TFRX_FUZZ_SCRATCH") or tempfile.mkdtemp(prefix="tfrx-fuzz-parse-file-")
if "TFRX_FUZZ_SCRATCH" not in os.environ:
    atexit.register(shutil.rmtree, _DIR, True)
_PATH = os.path.join(_DIR, "file.tfrecord")
_PIECES = [16, 100, 4096, 1 << 16]
_CALLS = [1, 3, 1000, 1 << 30]


def _flat(value):
    """A parse result's value as nested lists (comparable whatever its array type)."""
    if isinstance(value, tfrx.SparseArray):
        return [value.indices.tolist(), _flat(value.values), value.dense_shape.tolist()]
    if isinstance(value, tfrx.RaggedArray):
        return [_flat(value.values), value.row_splits.tolist()]
    array = numpy.asarray(value)
    if array.dtype.kind == "f":  # bit for bit: a NaN equals itself
        return [array.shape, array.tobytes()]
    return array.tolist()


def _built(parser, columns, records):
    """The parse result as the parser builds it from the native columns, or the name of the error it raises."""
    try:
        return {k: _flat(v) for k, v in parser._plan.build(columns, records).items()}
    except tfrx.TfrxError as e:
        return type(e).__name__


def TestOneInput(data: bytes) -> None:
    try:
        features, options, records = draw_spec(data)
        parser = tfrx.ExampleParser(features, num_parallel_calls=1, bytes_as="views")
    except (tfrx.TfrxError, ValueError, TypeError):
        return
    body = framed(records) if options & 1 else RECORD_SEP.join(records)
    with open(_PATH, "wb") as f:
        f.write(body)
    piece, calls = _PIECES[(options >> 1) & 3], _CALLS[(options >> 3) & 3]
    parts, offset = [], 0
    fd = os.open(_PATH, os.O_RDONLY)
    try:
        while offset < len(body):
            out = parser._core.parse_file(fd, offset, len(body), calls, piece)
            if out.status:
                assert len(out.result.columns) == 0 and out.records == 0
                return
            assert out.records > 0 and out.next_offset > offset
            parts.append((offset, out.next_offset, _built(parser, out.result.columns, out.records)))
            offset = out.next_offset
    finally:
        os.close(fd)
    for start, end, got in parts:  # every call's records, read and parsed the usual way
        try:
            reader = tfrx.RecordReader(_PATH, start=tfrx.io.RecordPosition(0, start, 0), end_offset=end)
            with reader:
                batch = tfrx.io.RecordBatch.concat(list(reader.iter_batches()))
        except EXPECTED:
            raise AssertionError("parse_file read records the reader refuses") from None
        try:
            expected = {k: _flat(v) for k, v in parser.parse(batch).items()}
        except tfrx.TfrxError as e:  # a check of the whole batch (a SparseFeature's index and value counts)
            expected = type(e).__name__
        assert got == expected


def seeds(corpus_dir: str | None, out_dir: str) -> int:
    specs = [[(0, 4, 0), (1, 4, 1), (2, 4, 2)], [(0, 2, 0x04 * 3), (1, 1, 1)], [(2, 0, 2)]]
    n = 0
    for i, spec in enumerate(specs):
        for options in (1, 1 | 2, 1 | 8 | 16, 0):
            write_seed(out_dir, f"gen{i}-{options}", spec_header(spec, options) + RECORD_SEP.join(generated_examples()))
            n += 1
    return n


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
