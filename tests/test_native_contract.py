"""The native contract of docs/architecture.md ("Native code rules"): bindings return named, typed
objects, never bare tuples, and every bind_<concern>.cpp is declared in bindings.h and called once
from module.cpp."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tfrx
from tfrx import _native

NATIVE = Path(__file__).resolve().parent.parent / "src" / "native"


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a is b or a == b


def _named(result, cls, fields: tuple[str, ...]):
    """A named result: not a tuple, its fields by name, and it unpacks, indexes and len()s in field order."""
    assert not isinstance(result, tuple), f"{cls.__name__} came back as a bare tuple"
    assert type(result) is cls and cls._fields == fields
    values = [getattr(result, f) for f in fields]
    assert len(result) == len(fields)
    assert all(_same(a, b) for a, b in zip(tuple(result), values))  # unpacks in the documented order
    assert all(_same(result[i], v) for i, v in enumerate(values))
    assert _same(result[-1], values[-1])
    with pytest.raises(IndexError):
        result[len(fields)]
    assert repr(result).startswith(f"{cls.__name__}({fields[0]}=")
    with pytest.raises(AttributeError):  # read-only
        setattr(result, fields[0], None)
    return result


def test_framing_results_are_named():
    buf = bytearray(64)
    progress = _named(_native.frame_into([b"abc", b"x" * 100], 0, buf), _native.FrameProgress, ("next", "used"))
    assert (progress.next, progress.used) == (1, 3 + 16)
    data = np.frombuffer(b"abcdef", np.uint8)
    starts, lengths = np.array([0, 3], np.int64), np.array([3, 3], np.int64)
    progress = _named(_native.frame_batch_into(data, starts, lengths, 1, buf), _native.FrameProgress, ("next", "used"))
    assert (progress.next, progress.used) == (2, 3 + 16)
    framing = _named(_native.record_framing(b"abc"), _native.RecordFraming, ("header", "footer"))
    assert framing.header + b"abc" + framing.footer == _native.frame_records([b"abc"])
    packed = _named(_native.pack_spans(data, starts, lengths - 1), _native.PackedValues, ("values", "offsets"))
    assert bytes(packed.values) == b"abde" and packed.offsets.tolist() == [0, 2, 4]


def test_codec_results_are_named():
    packed = _named(_native.pack_bytes([b"ab", b"", b"c"]), _native.PackedValues, ("values", "offsets"))
    assert bytes(packed.values) == b"abc" and packed.offsets.tolist() == [0, 2, 2, 3]
    record = tfrx.make_sequence_example({"id": 7}, {"tok": [[1, 2], [3]]}).SerializeToString()
    decoded = _named(
        _native.decode_sequence_example(record), _native.DecodedSequenceExample, ("context", "feature_lists")
    )
    assert decoded.context["id"].tolist() == [7] and len(decoded.feature_lists["tok"]) == 2
    column = _native.EncodeColumn(
        "x", _native.FeatureKind.INT64, np.arange(3, dtype=np.int64), np.arange(4, dtype=np.int64)
    )
    batch = _named(_native.encode_examples([column], 3, True), _native.EncodedBatch, ("data", "starts", "lengths"))
    assert len(batch.starts) == 3 and int(batch.lengths.sum()) == len(batch.data)
    assert isinstance(_native.encode_examples([column], 3, False), list)  # without as_batch: a list of bytes
    seq = _native.encode_sequence_examples([], [], 2, True)
    _named(seq, _native.EncodedBatch, ("data", "starts", "lengths"))


def test_parser_results_are_named():
    splits = np.array([0, 2, 3], np.int64)
    sparse = _named(_native.sparse_indices(splits), _native.SparseIndices, ("indices", "dense_shape"))
    assert sparse.indices.tolist() == [[0, 0], [0, 1], [1, 0]] and sparse.dense_shape.tolist() == [2, 2]
    assert _native.sparse_indices(splits, None, False).indices is None

    record = tfrx.make_sequence_example({"id": [1, 2]}, {"tok": [[1, 2], [3]]}).SerializeToString()
    core = _native.ParserCore(
        [_native.ColumnSpec("id", _native.FeatureKind.INT64)],
        [_native.SequenceColumnSpec("tok", _native.FeatureKind.INT64)],
        True,
    )
    result = core.parse_list([record, record], 1)
    assert result.error is None
    (ragged,) = result.columns
    _named(ragged, _native.RaggedColumn, ("values", "row_splits"))
    assert ragged.values.tolist() == [1, 2, 1, 2] and ragged.row_splits.tolist() == [0, 2, 4]
    (steps,) = result.sequence_columns
    _named(steps, _native.SequenceColumn, ("values", "step_splits", "record_splits"))
    assert steps.values.tolist() == [1, 2, 3] * 2
    assert steps.step_splits.tolist() == [0, 2, 3, 5, 6] and steps.record_splits.tolist() == [0, 2, 4]


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def test_no_binding_builds_a_bare_tuple():
    """No native source returns a tuple to Python: nb::make_tuple only inside results.h's fields()."""
    offenders = []
    for path in sorted(NATIVE.glob("*.[ch]*")):
        for number, line in enumerate(_strip_comments(path.read_text()).splitlines(), 1):
            if re.search(r"\bnb::tuple\s+\w+\s*\(|make_tuple", line) and not (
                path.name == "results.h" and "fields() const" in line
            ):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert not offenders, "bare tuples handed to Python (use a named result, results.h):\n" + "\n".join(offenders)


def test_every_binding_file_is_declared_and_called_once():
    header = _strip_comments((NATIVE / "bindings.h").read_text())
    module = _strip_comments((NATIVE / "module.cpp").read_text())
    declared = set(re.findall(r"void (bind_\w+)\(nanobind::module_& m\);", header))
    called = re.findall(r"tfrx::py::(bind_\w+)\(m\);", module)
    files = sorted(NATIVE.glob("bind_*.cpp"))
    assert files
    for path in files:
        name = path.stem
        source = _strip_comments(path.read_text())
        assert re.search(rf"void {name}\(nb::module_& m\)", source), f"{path.name} does not define {name}"
        assert name in declared, f"{name} ({path.name}) is not declared in bindings.h"
        assert called.count(name) == 1, f"module.cpp calls {name} {called.count(name)} times, not once"
    assert declared == {p.stem for p in files}, "bindings.h declares a bind_* without its bind_<concern>.cpp"
    assert len(called) == len(files)
    assert len(re.findall(r"\bbind_\w+\(m\);", module)) == len(called), "module.cpp calls a bind_* outside tfrx::py"
    assert "namespace py" in header
    # Only binding files define Python functions on the module.
    for path in sorted(NATIVE.glob("*.cpp")):
        if not path.name.startswith("bind_"):
            assert not re.search(r"\bm\.def\(", _strip_comments(path.read_text())), f"{path.name} binds outside bind_*"
