"""What every converter shares: the summary, the on_error policy, the job runner and the writer."""

from __future__ import annotations

import time
import warnings
from collections import deque
from collections.abc import Mapping
from contextlib import contextmanager
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field

from tfrx.errors import ConvertError
from tfrx.options import check_on_error
from tfrx.io._sharded import ShardedWriter

_ENGINES = ("local", "ray")
_MAX_KEPT_ERRORS = 100


@dataclass
class ConvertSummary:
    """What a conversion did: records written, inputs skipped (with messages), output paths, seconds."""

    records: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    seconds: float = 0.0
    spec: dict | None = None

    def __str__(self) -> str:
        rate = f", {self.records / self.seconds:,.0f} records/s" if self.seconds > 0 else ""
        return (
            f"{self.records} records written to {len(self.paths)} file(s), {self.skipped} inputs skipped "
            f"in {self.seconds:.2f} s{rate}"
        )


class _Errors:
    def __init__(self, on_error: str, summary: ConvertSummary) -> None:
        self.on_error = check_on_error(on_error)
        self.summary = summary

    def __call__(self, message: str) -> None:
        if self.on_error == "raise":
            raise ConvertError(message + '; pass on_error="skip" to leave such inputs out and count them')
        self.summary.skipped += 1
        if len(self.summary.errors) < _MAX_KEPT_ERRORS:
            self.summary.errors.append(message)
        if self.on_error == "warn":
            warnings.warn(message, stacklevel=3)

    def add(self, skipped: int, messages, *, warn: bool = True) -> None:
        """Counts inputs skipped elsewhere (a worker that ran with ``"skip"``), keeping and warning about its messages."""
        self.summary.skipped += skipped
        for m in messages:
            if len(self.summary.errors) < _MAX_KEPT_ERRORS:
                self.summary.errors.append(m)
            if warn and self.on_error == "warn":
                warnings.warn(m, stacklevel=3)


def _start(on_error: str) -> tuple[ConvertSummary, _Errors, float]:
    """A fresh summary, its error policy, and the start time."""
    summary = ConvertSummary()
    return summary, _Errors(on_error, summary), time.perf_counter()


def _worker_policy(on_error: str) -> str:
    """Workers collect messages instead of warning; the driver warns once it has them (``_Errors.add``)."""
    return "skip" if on_error == "warn" else on_error


def _check_engine(engine: str) -> None:
    if engine not in _ENGINES:
        raise ValueError(f"engine must be one of {_ENGINES}, got {engine!r}")


def _map_jobs(func, jobs, engine: str, workers: int, *, processes: bool = False):
    """``func(job)`` for every job, results in job order: as Ray tasks, or in a local pool.

    Ray tasks are submitted a few at a time ahead of the result being
    consumed, so results waiting in the object store stay bounded.
    """
    if engine == "ray":
        try:
            import ray
        except ImportError:
            raise ImportError("engine='ray' needs Ray: pip install 'tfrx[ray]'") from None
        if not ray.is_initialized():
            ray.init()
        task = ray.remote(func)
        ahead = max(2, 2 * int(ray.available_resources().get("CPU", workers) or workers))
        pending: deque = deque()
        for job in jobs:
            pending.append(task.remote(job))
            if len(pending) >= ahead:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())
        return
    pool = ProcessPoolExecutor if processes else ThreadPoolExecutor
    with pool(workers) as ex:
        yield from ex.map(func, jobs)


def _writer(output, sharding: Mapping | None, compression, total=None) -> ShardedWriter:
    sharding = dict(sharding or {})
    if sharding.get("num_shards") is not None and total is not None:
        sharding.setdefault("total_records", total)
    return ShardedWriter(output, compression=compression, **sharding)


def _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming) -> dict:
    return {
        "num_shards": num_shards,
        "max_records_per_shard": max_records_per_shard,
        "max_bytes_per_shard": max_bytes_per_shard,
        "naming": naming,
    }


@contextmanager
def _committing(writer: ShardedWriter, summary: ConvertSummary, t0: float):
    """Commits the shards when the block completes, aborts them when it raises; fills in the summary either way."""
    ok = False
    try:
        yield writer
        ok = True
    finally:
        if ok:
            summary.paths = writer.close()
        else:
            writer.abort()
        summary.records = writer.records_written
        summary.seconds = time.perf_counter() - t0
