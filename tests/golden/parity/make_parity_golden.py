"""Writes tests/golden/parity/parity.json: TensorFlow's outcome on every row of
docs/parsing.md's table of differences, and the SHA-256 of the level-0
GZIP/ZLIB files TensorFlow writes for ``level0_records``.

Run from the repository root with TensorFlow installed (the rows run in a
worker process, so rows where TensorFlow crashes are recorded as crashes):

    PYTHONPATH=src python tests/golden/parity/make_parity_golden.py
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS))

import parity_cases as pc
from tf_worker import TfWorker


def level0_records() -> list[bytes]:
    """Records whose level-0 stream has many stored blocks: sizes around the
    32 KiB stored-block minimum and the 256 KiB buffers, and a zero-length one."""
    out = []
    for i, n in enumerate((0, 5, 40_000, 1, 70_000, 300_000, 12, 32_000, 600_000, 100)):
        out.append(bytes((j * 7 + i) & 0xFF for j in range(n)))
    return out


LEVEL0_CASES = {"GZIP": [], "ZLIB": [], "GZIP flush": [3, 6], "ZLIB flush": [1]}  # flush() after these records


def write_level0(tf_or_tfrx, path: str, compression: str, flush_after: list) -> None:
    records = level0_records()
    if tf_or_tfrx.__name__ == "tfrx":
        w = tf_or_tfrx.TFRecordWriter(path, tf_or_tfrx.TFRecordOptions(compression, 0))
    else:
        w = tf_or_tfrx.io.TFRecordWriter(
            path, tf_or_tfrx.io.TFRecordOptions(compression_type=compression, compression_level=0)
        )
    with w:
        for i, r in enumerate(records):
            w.write(r)
            if i in flush_after:
                w.flush()


def sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    worker = TfWorker()
    rows = {name: pc.stored(pc.tf_answer(worker.call(pc.__file__, "tf_table_case", name))) for name, _, _ in pc.TABLE}
    worker.close()
    import tensorflow as tf

    digests = {}
    with tempfile.TemporaryDirectory() as d:
        for case, flush_after in LEVEL0_CASES.items():
            path = os.path.join(d, "f")
            write_level0(tf, path, case.split()[0], flush_after)
            digests[case] = sha256(path)
    out = {"tensorflow": tf.__version__, "rows": rows, "level0_sha256": digests}
    (HERE / "parity.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
