"""Smoke test of an installed tfrx wheel (run by .ci/run outside the source tree, with no compiler on PATH).

Checks that the installed package (not the source tree) is imported, that its native extension loads,
and that every intact file of the real corpus reads back with the record count SOURCES.tsv gives;
uncompressed ones through a RandomAccessDataset too (the index scan, cached outside the corpus).
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
import tempfile

import tfrx
from tfrx import _native

here = os.path.dirname(os.path.abspath(tfrx.__file__))
assert "site-packages" in here, f"tfrx imported from {here}, not from the installed wheel"
assert not any(shutil.which(c) for c in ("cc", "c++", "gcc", "g++", "clang")), "a compiler is on PATH"
print(f"tfrx from {here}; native extension {os.path.basename(_native.__file__)}")

corpus = os.environ.get("TFRX_CORPUS", "")
sources = os.path.join(corpus, "SOURCES.tsv")
if not os.path.exists(sources):
    sys.exit(f"no corpus at {corpus!r} (set TFRX_CORPUS)")
os.environ["TFRX_CACHE_DIR"] = cache = tempfile.mkdtemp(prefix="tfrx-wheel-smoke-")
try:
    checked = 0
    with open(sources, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["crc_status"] != "ok":
                continue
            path = os.path.join(corpus, row["filename"])
            want = int(row["records"])
            records = [bytes(r) for r in tfrx.read_records(path)]
            assert len(records) == want, f"{path}: {len(records)} records, SOURCES.tsv says {want}"
            if row["compression"] == "NONE":
                ds = tfrx.RandomAccessDataset(path)
                assert [bytes(ds[i]) for i in range(len(ds))] == records, path
            checked += 1
    assert checked, "no intact corpus file listed"
    print(f"{checked} corpus files read back with their record counts")
finally:
    shutil.rmtree(cache, ignore_errors=True)
