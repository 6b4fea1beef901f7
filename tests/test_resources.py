"""Resource checks: memory and threads stay flat over repeated work; absurd lengths cost nothing.

Sizes are modest so the module runs in seconds; ``TFRX_RESOURCE_SCALE`` multiplies the loop
counts for a longer soak run.
"""

from __future__ import annotations

import gc
import gzip
import io
import os
import struct
import threading
import time
import tracemalloc

import numpy as np
import pytest

import tfrx

psutil = pytest.importorskip("psutil")

SCALE = int(os.environ.get("TFRX_RESOURCE_SCALE", "1"))
MiB = 1 << 20


def _rss() -> int:
    gc.collect()
    return psutil.Process().memory_info().rss


def _records(n: int = 64) -> list[bytes]:
    return tfrx.encode_examples(
        {
            "id": np.arange(n, dtype=np.int64),
            "x": np.random.default_rng(0).random((n, 8), dtype=np.float32),
            "tag": [b"t%d" % i for i in range(n)],
        }
    )


SPEC = {
    "id": tfrx.FixedLenFeature((), tfrx.int64),
    "x": tfrx.FixedLenFeature((8,), tfrx.float32),
    "tag": tfrx.VarLenFeature(tfrx.string),
    "missing": tfrx.RaggedFeature(tfrx.int64),
}


def _out_bytes(out) -> int:
    """Bytes of the arrays in a call's result (nested dicts, lists, tuples and tfrx's array types)."""
    if isinstance(out, np.ndarray):
        return out.nbytes
    if isinstance(out, dict):
        return sum(_out_bytes(v) for v in out.values())
    if isinstance(out, (list, tuple)):
        return sum(_out_bytes(v) for v in out)
    return sum(_out_bytes(v) for v in vars(out).values()) if hasattr(out, "__dict__") else 0


def _call_bytes(fn) -> int:
    """What one call produces, measured: its traced allocation peak plus the bytes of its result arrays."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak + _out_bytes(out)


def _flat(name: str, fn, calls: int, segments: int = 5) -> None:
    """``fn`` retains nothing per call: RSS and traced allocations stay flat over ``calls`` calls.

    The calls run in equal segments after a warm-up. A per-call leak grows memory in every
    segment, while caches, pools and allocator arenas grow once, so the median growth per
    segment is what is bounded, relative to what one call produces (``_call_bytes``): less
    than a thousandth of it per call in traced memory and a hundredth in RSS. Every segment's
    growth is printed (``pytest -s``) for the record.
    """
    per_call = _call_bytes(fn)
    per = max(calls // segments, 1)
    for _ in range(per):  # warm caches, pools and allocator arenas
        fn()
    traced, rss = [], []
    cpu = time.process_time()
    tracemalloc.start()
    try:
        for i in range(segments + 1):
            if i:
                for _ in range(per):
                    fn()
            rss.append(_rss())
            traced.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    cpu = time.process_time() - cpu
    d_traced, d_rss = np.diff(traced), np.diff(rss)
    print(
        f"\n{name}: {per * segments} calls in {cpu:.1f} CPU s, {per_call} B per call; growth per segment of "
        f"{per}: traced {d_traced.tolist()} B, RSS {(d_rss >> 10).tolist()} KiB; "
        f"RSS {rss[0] / MiB:.1f} -> {rss[-1] / MiB:.1f} MiB"
    )
    assert np.median(d_traced) <= per * per_call / 1000, f"traced allocations grew by {d_traced.tolist()} B"
    assert np.median(d_rss) <= per * per_call / 100, f"RSS grew by {d_rss.tolist()} B"


@pytest.mark.slow
def test_parse_calls_do_not_grow_memory():
    records = _records()
    batch = tfrx.RecordBatch.from_records(records)
    parser = tfrx.ExampleParser(SPEC)

    def work():
        return parser.parse(batch), tfrx.parse_example(records[:4], SPEC), tfrx.decode_example(records[0])

    _flat("parse_example / decode_example", work, 3000 * SCALE)


@pytest.mark.slow
def test_sequence_parse_and_encode_do_not_grow_memory():
    seq = tfrx.make_sequence_example({"id": [1]}, {"f": [[1, 2], [3]], "g": [[b"a"], [b"b", b"c"]]})
    blob = seq.SerializeToString()
    parser = tfrx.SequenceExampleParser(
        {"id": tfrx.FixedLenFeature((), tfrx.int64)},
        {"f": tfrx.VarLenFeature(tfrx.int64), "g": tfrx.RaggedFeature(tfrx.string)},
    )
    cols = {"a": np.arange(32, dtype=np.int64), "b": [b"v"] * 32}

    def work():
        return parser.parse([blob] * 8), tfrx.decode_sequence_example(blob), tfrx.encode_examples(cols)

    _flat("SequenceExample parse / decode, encode_examples", work, 2000 * SCALE)


@pytest.mark.slow
def test_malformed_input_errors_do_not_leak():
    bad = [b"\x0a\x05\x0a\x03", b"\xff" * 40, bytes(range(256))]
    spec = {"id": tfrx.FixedLenFeature((), tfrx.int64)}

    def work():
        errors = []
        for b in bad:
            for call in (
                lambda: tfrx.decode_example(b),
                lambda: tfrx.parse_example([b], spec),
                lambda: tfrx.decode_sequence_example(b),
            ):
                try:
                    call()
                except ValueError as e:
                    errors.append(str(e))
        return errors

    _flat("malformed input errors", work, 2000 * SCALE)


@pytest.fixture
def record_file(tmp_path):
    path = tmp_path / "r.tfrecord"
    tfrx.write_records(path, _records(256))
    return str(path)


def _working_threads() -> int:
    """Threads alive, less the prefetch threads idle in their pool: an ended iterator's thread waits there up to
    30 s to run the next one (tfrx.data._prefetch._Threads), and is not a leak. Counting it made these tests
    pass or fail by whether a test before them had left an idle thread behind."""
    from tfrx.data._prefetch import _THREADS

    with _THREADS._lock:
        idle = len(_THREADS._idle)
    return threading.active_count() - idle


def _wait_threads(baseline: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while _working_threads() > baseline and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.02)
    return _working_threads()


@pytest.mark.slow
@pytest.mark.timeout(120 * SCALE)
def test_dataset_creation_and_abandonment_is_flat(record_file):
    baseline = _working_threads()

    def work():
        ds = (
            tfrx.TFRecordDataset(record_file)
            .shuffle(64, seed=1)
            .map(lambda r: len(r), num_parallel_calls=2)
            .batch(8)
            .prefetch(2)
        )
        it = iter(ds)
        next(it)
        next(it)
        del it, ds

    _flat("dataset created and abandoned", work, 150 * SCALE)
    assert _wait_threads(baseline) <= baseline  # fewer: a thread of an earlier test ended meanwhile


@pytest.mark.timeout(60)
def test_reader_and_parser_threads_return_to_baseline(record_file):
    baseline = _working_threads()
    for _ in range(10):
        ds = (
            tfrx.TFRecordDataset(record_file)
            .batch(32)
            .map(lambda b: tfrx.parse_example(b, SPEC, num_parallel_calls=4), num_parallel_calls=4)
            .prefetch(4)
        )
        for _batch in ds:
            pass
        del ds
    assert _wait_threads(baseline) <= baseline  # fewer: a thread of an earlier test ended meanwhile


# ---------------------------------------------------------------- absurd lengths
def _header(length: int) -> bytes:
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", tfrx.masked_crc32c(head))


def _peak(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("length", [1 << 60, (1 << 64) - 1, 1 << 40, 1 << 31])
@pytest.mark.parametrize("how", ["path", "stream", "gzip"])
def test_a_record_claiming_huge_length_costs_no_memory(tmp_path, length, how):
    good = tfrx.make_example({"a": [1]}).SerializeToString()
    body = io.BytesIO()
    with tfrx.TFRecordWriter(body) as w:
        w.write(good)
        w.flush()
        data = body.getvalue() + _header(length) + b"x" * 1000
    if how == "path":
        path = tmp_path / "huge.tfrecord"
        path.write_bytes(data)
        make = lambda: tfrx.RecordReader(path)  # noqa: E731
    elif how == "stream":
        make = lambda: tfrx.RecordReader(io.BytesIO(data), compression="")  # noqa: E731
    else:
        packed = gzip.compress(data)
        make = lambda: tfrx.RecordReader(io.BytesIO(packed), compression="GZIP")  # noqa: E731
    got = []

    def read():
        with pytest.raises(tfrx.CorruptRecordError) as info:
            for r in make():
                got.append(r)
        assert info.value.record_index == 1

    assert _peak(read) < 32 * MiB
    assert got == [good]
    skipped = []
    assert (
        _peak(
            lambda: skipped.extend(
                tfrx.RecordReader(
                    path if how == "path" else io.BytesIO(data if how == "stream" else gzip.compress(data)),
                    compression="auto",
                    on_error="skip",
                )
            )
        )
        < 32 * MiB
    )
    assert skipped == [good]


@pytest.mark.parametrize("length", [1 << 60, (1 << 63) - 1, 1 << 32])
def test_an_example_claiming_a_huge_field_costs_no_memory(length):
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    blob = b"\x0a" + varint(length) + b"\x0a\x00" * 8  # Example.features claiming `length` bytes
    spec = {"a": tfrx.VarLenFeature(tfrx.int64)}

    def run():
        for call in (lambda: tfrx.decode_example(blob), lambda: tfrx.decode_sequence_example(blob)):
            with pytest.raises(ValueError):  # protobuf's rules: a length past the end is an error
                call()
        # TensorFlow's parser reads lengths as 32-bit values and cuts one that runs past the
        # record at its end: 2^60 and 2^32 read as 0 (empty features, parsed), 2^63-1 as a
        # length past the end (the entries inside are then malformed).
        if length & 0xFFFFFFFF == 0:
            assert tfrx.parse_example([blob], spec)["a"].nnz == 0
        else:
            with pytest.raises(ValueError):
                tfrx.parse_example([blob], spec)

    assert _peak(run) < 4 * MiB


def test_a_parser_finalised_late_ends_the_process_quietly(tmp_path):
    """A parser that outlives the module's teardown (kept by gc.callbacks here) is no leak report at exit."""
    import subprocess
    import sys

    if "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("sanitizer builds keep nanobind's leak reports on purpose")

    script = tmp_path / "late.py"
    script.write_text(
        "import gc, tfrx\n"
        "parser = tfrx.ExampleParser({'a': tfrx.FixedLenFeature([], tfrx.int64)})\n"
        "parser.parse([tfrx.make_example({'a': [1]}).SerializeToString()])\n"
        "def callback(phase, info):\n"
        "    parser\n"
        "gc.callbacks.append(callback)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr, done.stderr
