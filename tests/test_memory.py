"""tfrx.memory: import leaves glibc malloc alone; the thresholds are set when asked and in tfrx's own processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tfrx import _native, memory

glibc = pytest.mark.skipif(not _native.malloc_tunable(), reason="malloc thresholds are glibc's")

# Creates and drops batches of 200 byte strings of ~100 KB (image records) and
# counts the minor page faults of the batches after the first.
_CHURN = """
import json, resource, sys
import tfrx
def batch():
    return [b"x" * 100_000 for _ in range(200)]
b = batch(); del b
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    b = batch(); del b
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"tuned": tfrx.memory.malloc_tuned(), "faults": faults}))
"""


def _run(code: str, **env_changes: str | None) -> dict:
    env = dict(os.environ)
    for name in ("TFRX_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"):
        env.pop(name, None)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@glibc
def test_import_leaves_malloc_alone_unless_asked_and_asking_stops_the_faults():
    untouched = _run(_CHURN)
    asked = _run(_CHURN, TFRX_MALLOC_TUNING="1")
    assert untouched["tuned"] is False and asked["tuned"] is True
    # 20 batches of 200 x 100 KB: glibc's start-up thresholds give the pages
    # back after every batch (about 25 faults per string); the settled ones keep them.
    assert untouched["faults"] > 20 * 200 * 10
    assert asked["faults"] < untouched["faults"] / 20


@glibc
def test_the_tfrx_command_tunes_its_own_process():
    code = (
        "import json, sys, tfrx.cli, tfrx.memory\n"
        "sys.argv = ['tfrx', '--version']\n"
        "try:\n    tfrx.cli.main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps({'tuned': tfrx.memory.malloc_tuned()}))"
    )
    assert _run(code) == {"tuned": True}
    assert _run(code, TFRX_MALLOC_TUNING="0") == {"tuned": False}
    # Called as a function (argv given), main() runs inside someone else's process: hands off.
    assert _run(
        "import json, tfrx.cli, tfrx.memory; tfrx.cli.main(['--version']); "
        "print(json.dumps({'tuned': tfrx.memory.malloc_tuned()}))"
    ) == {"tuned": False}


@glibc
@pytest.mark.parametrize(
    "env",
    [
        {"TFRX_MALLOC_TUNING": "off"},
        {"MALLOC_TRIM_THRESHOLD_": "131072"},
        {"MALLOC_MMAP_THRESHOLD_": "131072"},
        {"MALLOC_TOP_PAD_": "0"},
        {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"},
    ],
)
def test_settings_chosen_by_the_process_are_left_alone(env):
    code = "import json, tfrx.memory; tfrx.memory.tune_owned_process(); print(json.dumps({'tuned': tfrx.memory.malloc_tuned()}))"
    assert _run(code, **env) == {"tuned": False}


def test_chosen_elsewhere_reasons():
    assert memory._chosen_elsewhere({}) is None
    assert memory._chosen_elsewhere({"TFRX_MALLOC_TUNING": "1"}) is None
    assert memory._chosen_elsewhere({"TFRX_MALLOC_TUNING": " No "}) == "TFRX_MALLOC_TUNING"
    assert memory._chosen_elsewhere({"GLIBC_TUNABLES": "glibc.pthread.rseq=0"}) is None
    assert memory._chosen_elsewhere({"LD_PRELOAD": "/usr/lib/libjemalloc.so.2"}) == "LD_PRELOAD"
    assert memory._chosen_elsewhere({"LD_PRELOAD": "/usr/lib/libasan.so"}) is None


@glibc
def test_tune_malloc_explicit_values():
    assert memory.tune_malloc(memory.MMAP_THRESHOLD, memory.TRIM_THRESHOLD) is True
    assert memory.malloc_tuned() is True
    # mallopt takes an int: larger thresholds are refused rather than wrapped.
    assert memory.tune_malloc(1 << 31, memory.TRIM_THRESHOLD) is False
    assert memory.tune_malloc(memory.MMAP_THRESHOLD, memory.TRIM_THRESHOLD) is True
    with pytest.raises(ValueError):
        memory.tune_malloc(-1, 0)


# Parses batches of 64 image-like records (~85 KB bytes values, 5.4 MB a batch) and counts the minor page
# faults of the parses after the first, as benchmarks/parse.py's image workload does.
_PARSE_LARGE = """
import json, resource
import numpy as np
import tfrx
records = tfrx.encode_examples({"image": [bytes([i]) * 85_000 for i in range(64)], "label": np.arange(64)})
spec = {"image": tfrx.FixedLenFeature([], tfrx.string), "label": tfrx.FixedLenFeature([], tfrx.int64)}
parser = tfrx.ExampleParser(spec)
batch = np.array(records, dtype=object)
small = parser.parse(batch[:4])  # 340 KB: not yet
tuned_after_small = tfrx.memory.malloc_tuned()
out = parser.parse(batch); del out
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    out = parser.parse(batch)
    assert out["image"][7] == bytes([7]) * 85_000
    del out
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"small": tuned_after_small, "tuned": tfrx.memory.malloc_tuned(), "faults": faults}))
"""


@glibc
def test_the_first_batch_of_large_bytes_values_settles_malloc():
    # import tfrx leaves malloc alone (above); a parser that makes a batch of 2 MiB or more of bytes values
    # settles it, or every batch faults its values' pages in afresh (5-7x the parse's CPU time).
    got = _run(_PARSE_LARGE)
    assert got["small"] is False and got["tuned"] is True
    assert got["faults"] < 20 * 64  # settled: the pages are reused (unsettled: ~21 faults per value)
    assert _run(_PARSE_LARGE, TFRX_MALLOC_TUNING="0")["tuned"] is False
    assert _run(_PARSE_LARGE, MALLOC_TRIM_THRESHOLD_="131072")["tuned"] is False


# Reads an 11 MB file of BERT-like records (two int64 features of 512 values, 49 MB of columns) ten times
# through read_tfrecord, the scan engines use, and counts the minor page faults of the reads after the first.
_SCAN_NUMBERS = """
import json, os, resource, tempfile
import numpy as np
import tfrx
d = tempfile.mkdtemp()
n = 6000
ids = np.random.default_rng(0).integers(0, 30000, (n, 512))
records = tfrx.encode_examples({"ids": ids, "mask": np.ones((n, 512), np.int64), "label": np.arange(n)})
small, large = os.path.join(d, "small.tfrecord"), os.path.join(d, "large.tfrecord")
tfrx.write_records(small, records[:200])
tfrx.write_records(large, records)
spec = {"ids": tfrx.FixedLenFeature([512], tfrx.int64), "mask": tfrx.FixedLenFeature([512], tfrx.int64),
        "label": tfrx.FixedLenFeature([], tfrx.int64)}
tfrx.read_tfrecord(small, spec, num_parallel_calls=1)  # 370 KB: not yet
tuned_after_small = tfrx.memory.malloc_tuned()
for _ in range(2):  # settled during the first: the heap reaches its size by the second
    t = tfrx.read_tfrecord(large, spec, num_parallel_calls=1); del t
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    t = tfrx.read_tfrecord(large, spec, num_parallel_calls=1)
    assert t.num_rows == n and t.column("ids")[5].as_py() == ids[5].tolist()
    del t
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"small": tuned_after_small, "tuned": tfrx.memory.malloc_tuned(), "faults": faults}))
"""


@glibc
def test_a_file_parse_of_2_mib_or_more_of_any_records_settles_malloc():
    # The scan parses local files piece by piece into columns that grow on the heap: with glibc's start-up
    # thresholds the heap's top went back to the kernel after every batch and every page of the next one
    # faulted in again (BERT-like records: three times the CPU of the reader's path). Numbers, not only
    # bytes values, settle it there.
    pytest.importorskip("pyarrow")
    got = _run(_SCAN_NUMBERS)
    assert got["small"] is False and got["tuned"] is True
    unsettled = _run(_SCAN_NUMBERS, TFRX_MALLOC_TUNING="0")
    assert unsettled["tuned"] is False
    # (here: 400 to 14,000 against 120,000; unsettled, every pass faults in its 49 MB of columns)
    assert got["faults"] < unsettled["faults"] / 5
