"""No decoder allocates what its input only declares: shapes, lengths and counts far beyond the bytes.

Each case is a few bytes that declare gigabytes (or more): a TensorProto splat, an
events file holding one, Example and SequenceExample fields whose length prefixes
run past the end, a value_rowids partition asking for a billion rows, an index file
whose header claims 2**40 records. Each must raise a clear error; the cases run in a
fresh interpreter that reports its peak memory (VmHWM) and NumPy's peak traced
allocation (NumPy reports its buffers to tracemalloc), both checked here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tfrx.codec._tensor_proto import MAX_EXPANDED_BYTES, parse_tensor, serialize_tensor
from tfrx.errors import DecodeError


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _ld(number: int, payload: bytes, declared: int | None = None) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload) if declared is None else declared) + payload


def _tensor(dtype_enum: int, shape: list[int], values: bytes = b"") -> bytes:
    dims = b"".join(_ld(2, _varint(1 << 3) + _varint(d)) for d in shape)
    return _varint(1 << 3) + _varint(dtype_enum) + _ld(2, dims) + values


FLOAT_ONE = _varint(5 << 3 | 5) + np.float32(1.0).tobytes()  # float_val: 1.0
HOSTILE_TENSORS = {
    "float_splat": _tensor(1, [1 << 20, 1 << 20], FLOAT_ONE),
    "zeros": _tensor(9, [1 << 16, 1 << 16]),
    "int64_splat": _tensor(9, [1 << 40], _varint(10 << 3) + _varint(7)),
    "strings": _tensor(7, [1 << 30]),
    "string_splat": _tensor(7, [1 << 30], _ld(8, b"abc")),
    "wrapping_product": _tensor(1, [1 << 32, 1 << 32, 1 << 32], FLOAT_ONE),  # 2**96: int64 would wrap to 0
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TENSORS))
def test_parse_tensor_refuses_a_splat_beyond_the_limit_naming_the_shape(case):
    data = HOSTILE_TENSORS[case]
    assert len(data) < 40
    with pytest.raises(DecodeError, match=r"declares shape \[\d+.*max_expanded_bytes=67,108,864"):
        parse_tensor(data, None)


def test_the_limit_is_an_argument_and_values_in_the_bytes_are_never_limited():
    assert MAX_EXPANDED_BYTES == 64 << 20
    splat = _tensor(1, [1024, 1024], FLOAT_ONE)  # 4 MiB from 20 bytes
    assert parse_tensor(splat, None).shape == (1024, 1024)
    with pytest.raises(DecodeError, match=r"shape \[1024, 1024\].*4,194,304 bytes.*max_expanded_bytes=1,000,000"):
        parse_tensor(splat, None, max_expanded_bytes=1_000_000)
    full = parse_tensor(splat, None, max_expanded_bytes=None)
    assert full.dtype == np.float32 and full.shape == (1024, 1024) and np.all(full == 1.0)
    assert parse_tensor(_tensor(9, [3, 5]), None, max_expanded_bytes=120).tolist() == [[0] * 5] * 3
    with pytest.raises(DecodeError, match=r"\[3, 5\].*holds 0 values.*zeros"):
        parse_tensor(_tensor(9, [3, 5]), None, max_expanded_bytes=119)
    big = np.arange(300_000, dtype=np.int64)  # 2.4 MB held in the bytes: no expansion, no limit
    assert np.array_equal(parse_tensor(serialize_tensor(big), None, max_expanded_bytes=0), big)


def test_events_read_names_the_file_record_and_shape(tmp_path):
    import tfrx.events as events
    from tfrx.io import TFRecordWriter

    path = tmp_path / "events.out.tfevents.1.host"
    good = events.Event(step=1, wall_time=1.0)
    good.summary.value.add(tag="loss", simple_value=0.5)
    bad = events.Event(step=2, wall_time=2.0)
    bad.summary.value.add(tag="big", tensor=HOSTILE_TENSORS["float_splat"])
    with TFRecordWriter(str(path)) as w:
        w.write(good.SerializeToString())
        w.write(bad.SerializeToString())
    with pytest.raises(
        DecodeError, match=r"events\.out\.tfevents\.1\.host'?, event record 1: .*shape \[1048576, 1048576\]"
    ):
        events.read(path)
    small = events.Event(step=3, wall_time=3.0)
    small.summary.value.add(tag="t", tensor=_tensor(1, [2, 2], FLOAT_ONE))
    with TFRecordWriter(str(path)) as w:
        w.write(small.SerializeToString())
    assert events.read(path).tensors[0].value.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(DecodeError, match="max_expanded_bytes=8"):
        events.read(path, max_expanded_bytes=8)


_SCRIPT = textwrap.dedent(
    """
    import json, sys, tracemalloc
    import numpy as np
    import tfrx, tfrx.events
    import tfrx.io as tio
    from tfrx.codec import decode_example, make_example
    from tfrx.codec._tensor_proto import parse_tensor, serialize_tensor
    from tfrx.index import RecordIndex

    def hwm():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0

    cases = json.loads(sys.stdin.read())
    seq_spec = {"x": tio.FixedLenSequenceFeature([], tfrx.int64, allow_missing=True)}
    rowids = {"r": tio.RaggedFeature(tfrx.int64, value_key="v", partitions=[tio.RaggedFeature.ValueRowIds("ids")])}
    calls = {
        "tensor": lambda b: parse_tensor(b, None),
        "events": lambda b: tfrx.events.read(b.decode()),
        "example": lambda b: decode_example(b),
        "parse_example": lambda b: tio.parse_example([b], {"x": tio.VarLenFeature(tfrx.int64)}),
        "parse_single_example": lambda b: tio.parse_single_example(b, {"x": tio.FixedLenFeature([3], tfrx.int64)}),
        "sequence_example": lambda b: tio.parse_single_sequence_example(b, sequence_features=seq_spec),
        "sequence_examples": lambda b: tio.parse_sequence_example([b], sequence_features=seq_spec),
        "value_rowids": lambda b: tio.parse_example([b], rowids),
        "index": lambda b: RecordIndex.from_bytes(b, index_path="x.tfrx-index"),
    }
    # Warm every path with valid input first, so that the measure below is of the hostile cases only.
    parse_tensor(serialize_tensor(np.zeros(4, np.float32)), None)
    ex = make_example({"x": [1, 2, 3], "v": [1], "ids": [0]}).SerializeToString()
    decode_example(ex); tio.parse_example([ex], {"x": tio.VarLenFeature(tfrx.int64)}); tio.parse_example([ex], rowids)
    tio.parse_single_sequence_example(ex, sequence_features=seq_spec)
    base = hwm()
    tracemalloc.start()
    errors = {}
    peaks = {}
    for name, kind, data in cases:
        data = bytes.fromhex(data)
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        try:
            calls[kind](data)
        except Exception as e:
            errors[name] = f"{type(e).__name__}: {e}"
        else:
            errors[name] = None
        peaks[name] = tracemalloc.get_traced_memory()[1] - before
    print(json.dumps({"errors": errors, "traced_peaks": peaks, "hwm_growth": hwm() - base}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads VmHWM from /proc")
def test_every_decoder_refuses_declared_sizes_without_allocating_them(tmp_path):
    import tfrx.events as events
    from tfrx.codec import make_example
    from tfrx.index import HEADER_SIZE, MAGIC, VERSION, _HEADER
    from tfrx.io import TFRecordWriter

    huge = 1 << 40
    ev = events.Event(step=1)
    ev.summary.value.add(tag="t", tensor=HOSTILE_TENSORS["float_splat"])
    events_path = tmp_path / "events.out.tfevents.0.h"
    with TFRecordWriter(str(events_path)) as w:
        w.write(ev.SerializeToString())
    feature_named_x = _ld(1, b"x")
    cases = [(f"tensor_{k}", "tensor", v) for k, v in HOSTILE_TENSORS.items()]
    cases += [
        ("events", "events", str(events_path).encode()),
        ("example_features", "example", _ld(1, b"\x0a\x01a", declared=huge)),
        ("example_map_entry", "parse_example", _ld(1, _ld(1, feature_named_x + _ld(2, b""), declared=1 << 31))),
        ("example_value", "parse_single_example", _ld(1, _ld(1, feature_named_x + _ld(2, b"\x1a\x00", declared=huge)))),
        (
            "sequence_feature_list",
            "sequence_example",
            _ld(2, _ld(1, feature_named_x + _ld(2, b"\x0a\x00", declared=huge))),
        ),
        ("sequence_steps", "sequence_examples", _ld(2, _ld(1, feature_named_x + _ld(2, b"\x0a\x00")), declared=huge)),
        ("value_rowids", "value_rowids", make_example({"v": [1, 2], "ids": [0, 1 << 30]}).SerializeToString()),
        ("index_count", "index", _HEADER.pack(MAGIC, VERSION, HEADER_SIZE, huge, 100, 0, 0, 0) + b"\0" * 16),
    ]
    payload = json.dumps([(name, kind, data.hex()) for name, kind, data in cases])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], input=payload, capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    errors = report["errors"]
    # A nested length prefix longer than its enclosing message ends at that message's end in
    # TensorFlow's parser (the limits nest), so the record parses; it allocates nothing either.
    assert errors.pop("example_map_entry") is None
    for name, _, _ in cases:
        if name == "example_map_entry":
            continue
        assert errors[name], f"{name}: no error raised"
        assert errors[name].split(":")[0] in {"DecodeError", "ParseError", "IndexFileError"}, errors[name]
    assert "declares shape" in errors["events"] and "event record 0" in errors["events"]
    assert "1073741825 rows" in errors["value_rowids"]
    assert "expected" in errors["index_count"] and "records" in errors["index_count"]
    # Every case together allocated almost nothing: what they declare is gigabytes to zettabytes.
    # (reading the events file holds the reader's one read buffer, a few MiB, whatever the file)
    assert max(report["traced_peaks"].values()) < 16 << 20, report["traced_peaks"]
    assert report["hwm_growth"] < 32 << 20, report
