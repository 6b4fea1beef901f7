"""Fault injection: read errors, a full disk, a killed writer, failing map functions, truncation."""

from __future__ import annotations

import errno
import gc
import glob
import io
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import tfrx
from data_helpers import working_threads
import tfrx.io._writer as writer_mod

RECORDS = [bytes([i % 251]) * (100 + i) for i in range(60)]
FRAMED_END = [sum(len(r) + 16 for r in RECORDS[: i + 1]) for i in range(len(RECORDS))]


def _framed(records=RECORDS) -> bytes:
    buf = io.BytesIO()
    with tfrx.TFRecordWriter(buf) as w:
        for r in records:
            w.write(r)
        w.flush()
        return buf.getvalue()


class FailingReader(io.RawIOBase):
    """Serves ``data`` but raises EIO once ``fail_at`` bytes have been read, ``times`` times."""

    def __init__(self, data: bytes, fail_at: int, times: int = 1 << 30) -> None:
        self._data = io.BytesIO(data)
        self.fail_at = fail_at
        self.times = times
        self.pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, view) -> int:
        if self.pos >= self.fail_at and self.times > 0:
            self.times -= 1
            raise OSError(errno.EIO, "injected read error")
        limit = len(view) if self.times <= 0 else min(len(view), self.fail_at - self.pos)
        n = self._data.readinto(memoryview(view)[:limit])
        self.pos += n
        return n


def _read_until_error(reader) -> tuple[list[bytes], BaseException | None]:
    got = []
    try:
        for r in reader:
            got.append(r)
    except Exception as e:  # noqa: BLE001 - the test inspects it
        return got, e
    return got, None


# ---------------------------------------------------------------- read errors
@pytest.mark.parametrize("fail_at", [0, 5, 1000, 3000, 3001, 7777])
@pytest.mark.parametrize("chunk", [64, 256, 1 << 16])
def test_read_error_mid_file_surfaces_after_every_complete_record(fail_at, chunk):
    data = _framed()
    got, err = _read_until_error(tfrx.RecordReader(FailingReader(data, fail_at), compression="", chunk_size=chunk))
    assert isinstance(err, OSError) and err.errno == errno.EIO
    complete = sum(end <= fail_at for end in FRAMED_END)
    assert got == RECORDS[:complete]


@pytest.mark.parametrize("fail_at", [100, 3000, 8000])
def test_transient_read_error_loses_nothing_on_retry(fail_at):
    data = _framed()
    reader = tfrx.RecordReader(FailingReader(data, fail_at, times=1), compression="", chunk_size=256)
    got, err = _read_until_error(reader)
    assert isinstance(err, OSError)
    rest, err2 = _read_until_error(reader)
    assert err2 is None
    assert got + rest == RECORDS


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_read_error_in_compressed_stream_surfaces_and_keeps_a_prefix(compression, tmp_path):
    path = tmp_path / "c.tfrecord"
    tfrx.write_records(path, RECORDS, compression=compression)
    data = path.read_bytes()
    got, err = _read_until_error(
        tfrx.RecordReader(FailingReader(data, len(data) // 2), compression=compression, chunk_size=256)
    )
    assert isinstance(err, (OSError, tfrx.TfrxError))
    assert got == RECORDS[: len(got)]


def test_file_truncated_while_being_read(tmp_path):
    path = tmp_path / "t.tfrecord"
    path.write_bytes(_framed())
    reader = tfrx.RecordReader(path, chunk_size=256)
    got = [next(reader) for _ in range(5)]
    cut = 3000
    os.truncate(path, cut)
    more, err = _read_until_error(reader)
    got += more
    complete = sum(end <= cut for end in FRAMED_END)
    assert isinstance(err, tfrx.CorruptRecordError) and err.record_index == complete
    assert got == RECORDS[:complete]
    # The message quotes the bytes that were really there, not the size seen at open.
    left = cut - FRAMED_END[complete - 1]
    assert (err.offset, err.actual, err.expected) == (FRAMED_END[complete - 1], left, len(RECORDS[complete]) + 16)
    assert f"but only {left} remain" in str(err)
    assert f"shrank by {FRAMED_END[-1] - cut} bytes while it was being read" in str(err)


def test_file_truncated_into_a_header_while_being_read(tmp_path):
    path = tmp_path / "t.tfrecord"
    path.write_bytes(_framed())
    reader = tfrx.RecordReader(path, chunk_size=256)
    got = [next(reader) for _ in range(5)]
    cut = FRAMED_END[29] + 5
    os.truncate(path, cut)
    more, err = _read_until_error(reader)
    assert got + more == RECORDS[:30]
    assert (err.kind, err.record_index, err.actual) == ("truncated", 30, 5)
    assert "the file ends 5 bytes into the 12-byte header" in str(err)


def test_file_truncated_while_being_read_skip_mode(tmp_path):
    path = tmp_path / "t.tfrecord"
    path.write_bytes(_framed())
    reader = tfrx.RecordReader(path, chunk_size=256, on_error="skip")
    got = [next(reader) for _ in range(5)]
    os.truncate(path, 3000)
    got += list(reader)
    assert got == RECORDS[: sum(end <= 3000 for end in FRAMED_END)]
    assert reader.skipped_records == 1


# ---------------------------------------------------------------- a full disk
class _Disk:
    """A byte budget shared by every file opened for writing; the write that exceeds it writes what
    fits and raises ENOSPC, as a full disk does."""

    def __init__(self, budget: int) -> None:
        self.budget = budget


class _FullDiskFile(io.RawIOBase):
    def __init__(self, path: str, disk: _Disk) -> None:
        self._f = open(path, "wb")
        self._disk = disk

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        data = memoryview(data).cast("B")
        room = max(self._disk.budget, 0)
        if len(data) > room:
            self._f.write(data[:room])
            self._disk.budget = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self._disk.budget -= len(data)
        return self._f.write(data)

    def flush(self) -> None:
        if not self._f.closed:
            self._f.flush()

    def fileno(self) -> int:
        return self._f.fileno()

    def close(self) -> None:
        super().close()
        self._f.close()


@pytest.fixture
def full_disk(monkeypatch):
    disk = _Disk(0)
    real = writer_mod.open_output

    def open_output(target, **kw):
        if isinstance(target, (str, os.PathLike)):
            return _FullDiskFile(os.fspath(target), disk)
        return real(target, **kw)

    monkeypatch.setattr(writer_mod, "open_output", open_output)
    return disk


def _final_shards(prefix) -> list[str]:
    return sorted(p for p in glob.glob(f"{prefix}*") if not os.path.basename(p).startswith("."))


def test_disk_full_during_sharded_write_keeps_finished_shards_intact(tmp_path, full_disk):
    prefix = str(tmp_path / "out" / "train.tfrecord")
    records = [bytes([i % 256]) * 1000 for i in range(100)]
    full_disk.budget = 5500 * 1016 // 1000 * 4  # room for about 22 records: shards 0 and 1 finish
    writer = tfrx.ShardedWriter(prefix, max_records_per_shard=10, sync=False)
    with pytest.raises(OSError) as info:
        for r in records:
            writer.write(r)
        writer.close()
    assert info.value.errno == errno.ENOSPC
    # Nothing carries a final shard name or a manifest: no reader mistakes the output for complete.
    assert _final_shards(prefix) == []
    assert not os.path.exists(writer.manifest_path)
    parts = sorted(glob.glob(str(tmp_path / "out" / ".tfrx" / "*.part")))
    assert len(parts) >= 2
    for k, part in enumerate(parts):
        assert list(tfrx.RecordReader(part, verify=True)) == records[10 * k : 10 * k + 10]
    partial = glob.glob(str(tmp_path / "out" / ".tfrx" / "*.tmp"))
    assert len(partial) == 1
    writer.abort()
    assert os.listdir(tmp_path / "out") == []


def test_disk_full_inside_context_manager_leaves_no_output(tmp_path, full_disk):
    prefix = str(tmp_path / "train.tfrecord")
    full_disk.budget = 50_000
    with pytest.raises(OSError):
        with tfrx.ShardedWriter(prefix, max_records_per_shard=10, sync=False) as w:
            for i in range(1000):
                w.write(bytes(1000))
    assert os.listdir(tmp_path) == []


def test_disk_full_leaves_earlier_complete_datasets_untouched(tmp_path, full_disk):
    full_disk.budget = 1 << 30
    done = tfrx.ShardedWriter(str(tmp_path / "a"), num_shards=2, sync=False)
    done.write_many(RECORDS)
    paths = done.close()
    before = {p: open(p, "rb").read() for p in paths}
    full_disk.budget = 2000
    with pytest.raises(OSError):
        with tfrx.ShardedWriter(str(tmp_path / "b"), num_shards=2, sync=False) as w:
            w.write_many(RECORDS * 10)
    assert {p: open(p, "rb").read() for p in paths} == before
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(p) for p in paths] + [".tfrx"])
    assert os.listdir(tmp_path / ".tfrx") == ["a.manifest.json"]  # b's temporaries are gone


def test_writer_process_killed_mid_shard_leaves_no_complete_looking_shard(tmp_path):
    prefix = str(tmp_path / "train.tfrecord")
    script = textwrap.dedent(f"""
        import sys, tfrx
        w = tfrx.ShardedWriter({prefix!r}, max_records_per_shard=50, sync=False)
        i = 0
        while True:
            w.write(bytes([i % 256]) * 500)
            i += 1
            if i == 120:
                print("ready", flush=True)
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert _final_shards(prefix) == []
    parts = sorted(glob.glob(str(tmp_path / ".tfrx" / "*.part")))
    assert len(parts) >= 2
    for k, part in enumerate(parts):
        assert list(tfrx.RecordReader(part)) == [bytes([i % 256]) * 500 for i in range(50 * k, 50 * k + 50)]


# ---------------------------------------------------------------- failing map functions under prefetch
def _wait_threads(baseline: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while working_threads() > baseline and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.02)
    return working_threads()


@pytest.fixture
def record_file(tmp_path):
    path = tmp_path / "r.tfrecord"
    tfrx.write_records(path, RECORDS * 20)
    return path


class _Boom(Exception):
    pass


@pytest.mark.timeout(60)
@pytest.mark.parametrize("exc", [_Boom, KeyboardInterrupt])
@pytest.mark.parametrize("parallel", [None, 4])
def test_exception_in_map_under_prefetch_surfaces_without_hang(record_file, exc, parallel):
    baseline = working_threads()
    seen = []

    def fn(r):
        if len(seen) >= 300:
            raise exc("from map")
        seen.append(len(r))
        return len(r)

    ds = tfrx.TFRecordDataset(str(record_file)).map(fn, num_parallel_calls=parallel).prefetch(8)
    got = []
    with pytest.raises(exc):
        for x in ds:
            got.append(x)
    # Results before the failure arrive in order and intact.
    assert got == [len(r) for r in (RECORDS * 20)[: len(got)]]
    del ds
    assert _wait_threads(baseline) <= baseline  # fewer: a thread of an earlier test ended meanwhile


@pytest.mark.timeout(60)
def test_abandoned_prefetching_iterators_leave_no_threads(record_file):
    baseline = working_threads()
    for _ in range(20):
        it = iter(tfrx.TFRecordDataset(str(record_file)).map(len, num_parallel_calls=4).prefetch(4))
        next(it)
        del it
    assert _wait_threads(baseline) <= baseline  # fewer: a thread of an earlier test ended meanwhile


def test_disk_full_while_closing_inside_context_manager_leaves_no_output(tmp_path, full_disk):
    # The records fit the writer's staging buffer, so the disk fills only when close() flushes them.
    full_disk.budget = 2000
    with pytest.raises(OSError):
        with tfrx.ShardedWriter(str(tmp_path / "b"), num_shards=2, sync=False) as w:
            w.write_many(RECORDS)
    assert os.listdir(tmp_path) == []
