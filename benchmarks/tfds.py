"""TFDS directories into PyTorch: ``tfrx.tfds.load`` vs TFDS's own ``tfds.as_numpy``, same prepared directories.

Two directories are prepared once with ``tfrx.tfds.write`` (TFDS loads them
with identical values: tests/test_tfds_oracle.py) under the benchmark data
folder: ``image`` (MNIST-like: 28x28x1 PNG + ClassLabel, 4 shards) and
``tabular`` (32 float32 columns, an int64 id and a ClassLabel, 4 shards).
Contenders, each reading the whole ``train`` split in batches of 64:

- ``tfrx``: ``tfrx.tfds.load(dir, split="train").batch(64).to_torch()``
  through a ``torch.utils.data.DataLoader`` (``num_workers=0``, so all the
  work is in the measured process);
- ``tfds``: ``tfds.as_numpy(tfds.builder_from_directory(dir).as_dataset("train").batch(64))``
  (TensorFlow's tf.data, its default threads).

Each contender lives in its own interpreter (TensorFlow and PyTorch must not
share one), started once and warmed by one untimed pass; then rounds
alternate between them (tfrx, tfds, tfds, tfrx, ...), one pass per
contender per round, so both see the same machine load. Each pass reports
wall time and the CPU time of its whole process (every thread). The table
gives the median and the range over the rounds of records/s (wall) and
records per CPU-second, and the load average before and after.

``python -m benchmarks tfds [--size full] [--repeat ROUNDS]`` or
``python -m benchmarks.tfds``. Without ``tensorflow_datasets`` the TFDS rows
say so and tfrx is measured alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from benchmarks import workloads

SIZES = {"small": 5_000, "full": 20_000}  # image examples; tabular has 4x as many
KINDS = ("image", "tabular")
CONTENDERS = ("tfrx", "tfds")
BATCH = 64


def prepare(kind: str, size: str) -> str:
    """The prepared directory of ``kind`` (written once, reused)."""
    import tfrx.tfds as tt

    n = SIZES[size] * (4 if kind == "tabular" else 1)
    d = workloads.DATA_DIR / f"tfds-{kind}-{size}" / "1.0.0"
    if (d / "dataset_info.json").exists():
        return str(d)
    rng = np.random.default_rng(0)
    if kind == "image":
        digits = [str(i) for i in range(10)]
        feats = {"image": tt.Image((28, 28, 1)), "label": tt.ClassLabel(names=digits)}
        examples = ({"image": rng.integers(0, 256, (28, 28, 1), dtype=np.uint8), "label": i % 10} for i in range(n))
    else:
        feats = {"x": tt.Tensor((32,), np.float32), "id": np.int64, "label": tt.ClassLabel(num_classes=2)}
        examples = ({"x": rng.normal(size=32).astype(np.float32), "id": i, "label": i % 2} for i in range(n))
    tt.write(d, features=feats, splits={"train": examples}, shard_size=-(-n // 4), name=f"tfds_{kind}")
    return str(d)


# ------------------------------------------------------------------ one contender's process
def _pass_fn(contender: str, path: str):
    if contender == "tfrx":
        import torch

        import tfrx.tfds as tt

        def one_pass() -> int:
            ds = tt.load(path, split="train").batch(BATCH).to_torch()
            n = 0
            for batch in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0):
                n += len(batch["label"])
            return n
    else:
        import tensorflow_datasets as tfds

        builder = tfds.builder_from_directory(path)

        def one_pass() -> int:
            n = 0
            for batch in tfds.as_numpy(builder.as_dataset(split="train").batch(BATCH)):
                n += len(batch["label"])
            return n

    return one_pass


def serve(contender: str, path: str) -> None:
    """Worker loop: one timed pass per line read from stdin, one JSON line per pass on stdout."""
    one_pass = _pass_fn(contender, path)
    one_pass()  # warm: imports, page cache, tfrx indexes, tf.data graph
    print(json.dumps({"ready": True}), flush=True)
    for _ in sys.stdin:
        c0, t0 = time.process_time(), time.perf_counter()
        records = one_pass()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(json.dumps({"records": records, "wall": wall, "cpu": cpu}), flush=True)


# ------------------------------------------------------------------ the driver
@dataclass
class Row:
    kind: str
    contender: str
    records: int = 0
    walls: list = field(default_factory=list)
    cpus: list = field(default_factory=list)
    note: str = ""


class _Worker:
    def __init__(self, contender: str, path: str) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        env.setdefault("CUDA_VISIBLE_DEVICES", "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.tfds", "--serve", contender, path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self._reply()  # ready

    def _reply(self) -> dict:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read().strip().splitlines()
                raise RuntimeError(err[-1] if err else "worker exited")
            if line.startswith("{"):
                return json.loads(line)

    def run(self) -> dict:
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


_LOAD: list = []  # 1-minute load averages at the start and the end of run()


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def run(size: str, names=None, repeat: int = 5) -> list[Row]:
    _LOAD[:] = [_load()]
    rows = []
    for kind in KINDS:
        path = prepare(kind, size)
        workers, kind_rows = {}, {}
        for c in CONTENDERS:
            kind_rows[c] = Row(kind, c)
            try:
                workers[c] = _Worker(c, path)
            except RuntimeError as e:
                kind_rows[c].note = f"skipped: {str(e)[:80]}"
        try:
            for r in range(repeat):
                order = CONTENDERS if r % 2 == 0 else CONTENDERS[::-1]
                for c in order:
                    if c in workers:
                        out = workers[c].run()
                        row = kind_rows[c]
                        row.records = out["records"]
                        row.walls.append(out["wall"])
                        row.cpus.append(out["cpu"])
        finally:
            for w in workers.values():
                w.close()
        rows.extend(kind_rows.values())
    _LOAD.append(_load())
    return rows


def _rate(records: int, seconds: list) -> tuple[float, float, float]:
    rates = sorted(records / s for s in seconds)
    return float(np.median(rates)), rates[0], rates[-1]


def render(rows: list[Row]) -> str:
    lines = [
        "| dataset | contender | records | records/s (wall): median [min-max] | "
        "records/CPU-s: median [min-max] | rounds | tfrx x (wall) | tfrx x (CPU) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    by_kind: dict = {}
    for r in rows:
        by_kind.setdefault(r.kind, []).append(r)
    for kind, krows in by_kind.items():
        base = next((r for r in krows if r.contender == "tfrx" and r.walls), None)
        for r in krows:
            if not r.walls:
                lines.append(f"| {kind} | {r.contender} | - | - | - | 0 | - | - | {r.note}")
                continue
            w, c = _rate(r.records, r.walls), _rate(r.records, r.cpus)
            xw = f"{_rate(base.records, base.walls)[0] / w[0]:.2f}" if base else "-"
            xc = f"{_rate(base.records, base.cpus)[0] / c[0]:.2f}" if base else "-"
            lines.append(
                f"| {kind} | {r.contender} | {r.records} | {w[0]:,.0f} [{w[1]:,.0f}-{w[2]:,.0f}] | "
                f"{c[0]:,.0f} [{c[1]:,.0f}-{c[2]:,.0f}] | {len(r.walls)} | {xw} | {xc} |"
            )
    if len(_LOAD) == 2:
        lines.append(f"\nload average (1 min): {_LOAD[0]:.2f} at the start, {_LOAD[1]:.2f} at the end")
    return "\n".join(lines) + _versions()


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for dist in ("tensorflow-datasets", "torch"):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} absent")
    return "\n" + ", ".join(parts)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        serve(argv[1], argv[2])
        return 0
    from benchmarks.report import suite_main

    return suite_main("python -m benchmarks.tfds", __doc__, run, argv, render=render)


if __name__ == "__main__":
    sys.exit(main())
