"""Shared pieces of the fuzz targets: which exceptions are a clean rejection, and seed helpers.

A target passes an input when tfrx either accepts it or rejects it with one of
``EXPECTED``; anything else (another exception, a crash, a sanitizer report,
a hang) is a finding.
"""

from __future__ import annotations

import io
import os
import zlib

import tfrx

# Malformed input must be rejected with these; ValueError covers tfrx's errors
# (they also inherit it), OSError/EOFError/zlib.error come from damaged
# compressed streams surfacing through the standard library.
EXPECTED = (tfrx.TfrxError, ValueError, OSError, EOFError, zlib.error)

MAX_SEED_BYTES = 1 << 16


def corpus_files(corpus_dir: str | None) -> list[str]:
    if not corpus_dir or not os.path.isdir(corpus_dir):
        return []
    out = []
    for name in sorted(os.listdir(corpus_dir)):
        path = os.path.join(corpus_dir, name)
        if os.path.isfile(path) and not name.endswith((".tsv", ".md")):
            out.append(path)
    return out


def corpus_records(corpus_dir: str | None, per_file: int = 4, max_bytes: int = MAX_SEED_BYTES) -> list[bytes]:
    """A few small records from each corpus file (damaged files contribute what precedes the damage)."""
    records = []
    for path in corpus_files(corpus_dir):
        try:
            reader = tfrx.RecordReader(path, on_error="skip")
            for i, record in enumerate(reader):
                if i >= per_file:
                    break
                if len(record) <= max_bytes:
                    records.append(record)
            reader.close()
        except EXPECTED:
            continue
    return records


def generated_examples() -> list[bytes]:
    """Examples and SequenceExamples covering every feature kind, empty lists and odd shapes."""
    out = [
        tfrx.make_example({"a": [1, 2, 3], "b": [0.5, -1.0], "c": [b"x", b""]}).SerializeToString(),
        tfrx.make_example({"a": [7], "s": [b"hello"]}).SerializeToString(),
        tfrx.make_example({}).SerializeToString(),
        tfrx.make_example({"a": [], "b": [1.5]}, kinds={"a": "int64"}).SerializeToString(),
    ]
    seq = tfrx.make_sequence_example(
        {"a": [1], "c": [b"ctx"]},
        {"a": [[1, 2], [3]], "b": [[0.25], []], "c": [[b"p"], [b"q", b"r"]]},
        kinds={"b": "float"},
    )
    out.append(seq.SerializeToString())
    return out


def write_seed(out_dir: str, name: str, data: bytes) -> None:
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)


def framed(records: list[bytes]) -> bytes:
    buf = io.BytesIO()
    with tfrx.TFRecordWriter(buf) as w:
        for r in records:
            w.write(r)
        w.flush()
        return buf.getvalue()


# ---------------------------------------------------------------- specs drawn from the input
# Layout shared by the parse targets: byte 0 is the number of features (mod 5),
# then three bytes per feature (key, kind, parameter), one byte of options,
# then the records, separated by RECORD_SEP.
KEYS = ["a", "b", "c", "s", "ix", "v"]
RECORD_SEP = b"\xffREC"
_DTYPES = [tfrx.int64, tfrx.float32, tfrx.string]
_ZERO = {0: 0, 1: 0.0, 2: b""}


def _feature(kind: int, param: int, key: str, sequence: bool):
    d = param % 3
    dtype, zero = _DTYPES[d], _ZERO[d]
    k = (param >> 2) % 4
    other = KEYS[(param >> 4) % len(KEYS)]
    if sequence:
        kind = kind % 4
        if kind == 0:
            return tfrx.FixedLenSequenceFeature((), dtype, allow_missing=bool(param & 0x40))
        if kind == 1:
            return tfrx.FixedLenSequenceFeature((k,), dtype, allow_missing=True)
        if kind == 2:
            return tfrx.VarLenFeature(dtype)
        return tfrx.RaggedFeature(dtype)
    kind = kind % 10
    if kind == 0:
        return tfrx.FixedLenFeature((), dtype)
    if kind == 1:
        return tfrx.FixedLenFeature((), dtype, default_value=zero)
    if kind == 2:
        return tfrx.FixedLenFeature((k,), dtype, default_value=[zero] * k)
    if kind == 3:
        return tfrx.FixedLenFeature((k, 2), dtype)
    if kind == 4:
        return tfrx.VarLenFeature(dtype)
    if kind == 5:
        return tfrx.RaggedFeature(dtype)
    if kind == 6:
        return tfrx.RaggedFeature(dtype, partitions=[tfrx.RaggedFeature.RowLengths(other)])
    if kind == 7:
        return tfrx.RaggedFeature(dtype, partitions=[tfrx.RaggedFeature.UniformRowLength(max(k, 1))])
    if kind == 8:
        return tfrx.SparseFeature(index_key=other, value_key=key, dtype=dtype, size=param)
    return tfrx.FixedLenSequenceFeature((), dtype, allow_missing=True, default_value=zero)


def draw_spec(data: bytes, sequence: bool = False) -> tuple[dict, int, list[bytes]]:
    """``(features, options byte, records)`` from a fuzz input; spec errors propagate."""
    n = data[0] % 5 if data else 0
    pos = 1
    features = {}
    for _ in range(n):
        key_b, kind, param = (data[pos : pos + 3] + b"\0\0\0")[:3]
        pos += 3
        key = KEYS[key_b % len(KEYS)]
        features[key] = _feature(kind, param, key, sequence and bool(key_b & 0x80))
    options = data[pos] if pos < len(data) else 0
    records = data[pos + 1 :].split(RECORD_SEP)
    return features, options, records


def spec_header(features: list[tuple[int, int, int]], options: int = 0) -> bytes:
    """The bytes :func:`draw_spec` turns into ``features`` (``(key byte, kind, param)`` triples)."""
    out = bytearray([len(features)])
    for t in features:
        out += bytes(t)
    out.append(options)
    return bytes(out)


def run_parser(data: bytes, make_parser, sequence: bool = False) -> None:
    """One input of a parse target: draw a spec, build a parser, parse the records.

    ``make_parser(features, num_threads)`` builds the parser; a spec it refuses
    ends the input. Options bit 0 picks two threads, bit 1 ``parse_single`` on
    the first record instead of the batch.
    """
    try:
        features, options, records = draw_spec(data, sequence)
        parser = make_parser(features, 1 + (options & 1))
    except (tfrx.TfrxError, ValueError, TypeError):
        return
    try:
        if options & 2:
            parser.parse_single(records[0])
        else:
            parser.parse(records)
    except EXPECTED:
        pass


def write_parse_seeds(
    out_dir: str, corpus_dir: str | None, specs: list, records: list[bytes], single: bytes | None = None
) -> int:
    """Seeds for a parse target: each spec over ``records`` as a batch (and over ``single`` alone),
    then two records of each corpus file under the specs in turn. Returns the number written."""
    n = 0
    for i, spec in enumerate(specs):
        write_seed(out_dir, f"gen{i}", spec_header(spec) + RECORD_SEP.join(records))
        n += 1
        if single is not None:
            write_seed(out_dir, f"single{i}", spec_header(spec, 2) + single)
            n += 1
    for i, r in enumerate(corpus_records(corpus_dir, per_file=2)):
        write_seed(out_dir, f"rec{i}", spec_header(specs[i % len(specs)]) + r)
        n += 1
    return n
