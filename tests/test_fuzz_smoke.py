"""Each fuzz target in fuzz/ runs for a few seconds without a finding (skipped without atheris)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("atheris")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "fuzz", "run.py")
TARGETS = ["reader", "decode", "parse", "parse_sequence", "parse_file", "index"]
SECONDS = int(os.environ.get("TFRX_FUZZ_SECONDS", "3"))


@pytest.mark.slow
@pytest.mark.timeout(320)  # wall clock: seeding from the corpus takes ~15 s of CPU, far longer on a loaded host
@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target_runs_clean(target, tmp_path):
    cmd = [sys.executable, RUN, "--target", target, "--seconds", str(SECONDS), "--artifacts", str(tmp_path)]
    corpus = os.environ.get("TFRX_CORPUS")
    if corpus:
        cmd += ["--corpus", corpus]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-6000:]
    assert f"{target}: " in proc.stdout and "no finding" in proc.stdout
    executions = int(proc.stdout.split(f"{target}: ")[1].split()[0])
    assert executions > 0
    assert not [p for p in os.listdir(tmp_path) if p.startswith(("crash-", "timeout-", "oom-"))]
