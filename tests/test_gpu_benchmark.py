"""benchmarks/gpu.py: runs on a machine without a GPU (its CUDA contenders skipped, with the reason said)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def gpu(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import gpu, imagenet, pipeline, workloads

    monkeypatch.setattr(workloads, "DATA_DIR", tmp_path)
    monkeypatch.setitem(pipeline.COUNTS, "small", {**pipeline.COUNTS["small"], "bert": 300, "criteo": 600})
    monkeypatch.setitem(imagenet.COUNTS, "small", 8)
    return gpu


@pytest.mark.slow  # (the ImageNet-style file's 256 distinct JPEGs take a minute to make)
def test_the_contenders_deliver_every_record_here(gpu):
    from benchmarks import imagenet

    run, _ = gpu._numpy("bert", "small", 0)
    assert run() == 300 * gpu.SHARDS * gpu.EPOCHS
    imagenet.ensure("small")
    for device in (None, "cpu"):
        assert gpu._images("small", device)() == 8


def test_cuda_contenders_are_skipped_with_the_reason(gpu, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the CUDA contenders run")
    ran = []
    monkeypatch.setattr(gpu.imagenet, "ensure", lambda size: None)
    monkeypatch.setattr(gpu, "_rounds", lambda runs, size, repeat, log: ran.extend(runs) or {})
    lines = []
    gpu.run("small", ["bert"], 1, log=lines.append)
    assert any("to_torch(device='cuda') skipped: torch.cuda.is_available() is False" in line for line in lines)
    assert {c for c, _, _ in ran} == {"numpy (in-process)", "CPU fused decode", "device path on CPU (stand-in)"}
