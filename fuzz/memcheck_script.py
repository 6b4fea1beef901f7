"""A small read / parse / encode / decode workload, valid and malformed, for valgrind's memcheck.

    PYTHONMALLOC=malloc valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite \\
        python fuzz/memcheck_script.py [CORPUS_DIR]

See docs/reliability.md for how the report is read (only frames in tfrx's _native module count).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile

import numpy as np

import tfrx


def main(corpus: str | None) -> None:
    cols = {
        "id": np.arange(50, dtype=np.int64),
        "x": np.linspace(0, 1, 150, dtype=np.float32).reshape(50, 3),
        "s": [b"v%d" % i for i in range(50)],
    }
    records = tfrx.encode_examples(cols)
    seqs = tfrx.encode_sequence_examples(
        {"id": np.arange(4, dtype=np.int64)}, {"f": [[[1, 2], [3]], [[4]], [], [[5, 6, 7]]]}
    )
    with tempfile.TemporaryDirectory() as d:
        for compression in ("", "GZIP", "ZLIB"):
            path = os.path.join(d, f"r{compression}.tfrecord")
            tfrx.write_records(path, records, compression=compression)
            assert list(tfrx.RecordReader(path, verify=True)) == list(records)
        index = tfrx.build_index(os.path.join(d, "r.tfrecord"))
        assert len(tfrx.load_index(os.path.join(d, "r.tfrecord"))) == len(index) == 50
        damaged = bytearray(open(os.path.join(d, "r.tfrecord"), "rb").read())
        damaged[300] ^= 0xFF
        list(tfrx.RecordReader(io.BytesIO(bytes(damaged)), on_error="skip", chunk_size=128))
    spec = {
        "id": tfrx.FixedLenFeature((), tfrx.int64),
        "x": tfrx.FixedLenFeature((3,), tfrx.float32),
        "s": tfrx.VarLenFeature(tfrx.string),
        "m": tfrx.RaggedFeature(tfrx.int64),
    }
    out = tfrx.parse_example(records, spec, num_parallel_calls=2)
    assert out["id"].tolist() == list(range(50))
    for r in records[:5]:
        tfrx.decode_example(r)
    ctx, lists, lengths = tfrx.parse_sequence_example(
        seqs, {"id": tfrx.FixedLenFeature((), tfrx.int64)}, {"f": tfrx.RaggedFeature(tfrx.int64)}
    )
    tfrx.decode_sequence_example(seqs[0])
    # malformed input: every path must reject it cleanly
    rng = np.random.default_rng(0)
    bad = [r[: len(r) // 2] for r in records[:5]] + [rng.bytes(64) for _ in range(20)]
    for b in bad:
        for call in (
            lambda: tfrx.decode_example(b),
            lambda: tfrx.decode_sequence_example(b),
            lambda: tfrx.parse_example([b], spec),
        ):
            try:
                call()
            except ValueError:
                pass
    if corpus and os.path.isdir(corpus):
        for name in sorted(os.listdir(corpus))[:20]:
            path = os.path.join(corpus, name)
            try:
                for i, r in enumerate(tfrx.RecordReader(path, on_error="skip")):
                    if i >= 20:
                        break
                    try:
                        tfrx.decode_example(r)
                    except ValueError:
                        pass
            except (ValueError, OSError):
                pass
    print("memcheck workload done")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TFRX_CORPUS"))
