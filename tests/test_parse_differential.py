"""tfrx.parse_example / parse_single_example against tf.io on generated and hand-made Examples.

Where TensorFlow raises, tfrx must raise; where TensorFlow succeeds, tfrx
returns equal values (dtype, shape, NaN payload positions and all).
Records are encoded by the small wire encoder below so that packed and
unpacked encodings, duplicate keys and empty Features can all be produced.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx

# ------------------------------------------------------------------ wire encoder (test oracle input)


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ld(field: int, payload: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(payload)) + payload


KIND_FIELD = {"bytes": 1, "float": 2, "int64": 3}


def enc_feature(kind: str | None, values: list, packed: bool = True) -> bytes:
    """A serialized tf.train.Feature; kind None gives an empty Feature (no kind set)."""
    if kind is None:
        return b""
    if kind == "int64":
        if packed:
            inner = ld(1, b"".join(varint(v) for v in values)) if values else b""
        else:
            inner = b"".join(b"\x08" + varint(v) for v in values)
    elif kind == "float":
        if packed:
            inner = ld(1, struct.pack(f"<{len(values)}f", *values)) if values else b""
        else:
            inner = b"".join(b"\x0d" + struct.pack("<f", v) for v in values)
    else:
        inner = b"".join(ld(1, v) for v in values)
    return ld(KIND_FIELD[kind], inner)


def enc_example(entries: list[tuple[str, bytes]]) -> bytes:
    """An Example from (key, serialized Feature) pairs, in order (duplicates allowed)."""
    features = b"".join(ld(1, ld(1, k.encode()) + ld(2, f)) for k, f in entries)
    return ld(1, features)


# ------------------------------------------------------------------ comparison with TensorFlow results


def assert_same(tf, expected, actual, where: str = "") -> None:
    if isinstance(expected, dict):
        assert set(expected) == set(actual), where
        for k in expected:
            assert_same(tf, expected[k], actual[k], f"{where}[{k!r}]")
        return
    if isinstance(expected, tf.sparse.SparseTensor):
        assert isinstance(actual, tfrx.SparseArray), where
        np.testing.assert_array_equal(actual.indices, expected.indices.numpy(), err_msg=where)
        np.testing.assert_array_equal(actual.dense_shape, expected.dense_shape.numpy(), err_msg=where)
        assert_values(expected.values.numpy(), actual.values, where)
        return
    if isinstance(expected, tf.RaggedTensor):
        assert isinstance(actual, tfrx.RaggedArray), where
        exp_splits = [s.numpy() for s in expected.nested_row_splits]
        assert len(exp_splits) == len(actual.nested_row_splits), where
        for e, a in zip(exp_splits, actual.nested_row_splits):
            assert a.dtype == e.dtype, where
            np.testing.assert_array_equal(a, e, err_msg=where)
        assert_values(expected.flat_values.numpy(), actual.flat_values, where)
        return
    e = expected.numpy()
    if isinstance(e, bytes):  # a scalar string tensor
        assert isinstance(actual, bytes) and actual == e, where
        return
    assert_values(e, actual, where)


def assert_values(expected: np.ndarray, actual, where: str) -> None:
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind == "f":
        np.testing.assert_array_equal(actual.view(np.uint32), expected.view(np.uint32), err_msg=where)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=where)


def _tf_default(value, dtype: str):
    """A float default as a float32 array for TensorFlow.

    TensorFlow's eager scalar cache looks Python scalars up by value, and
    ``-0.0 == 0.0``: once any test has converted ``0.0``, a default of
    ``-0.0`` reaches TensorFlow's parser as ``+0.0``. An array is not cached.
    """
    if value is None or dtype != "float32":
        return value
    return np.asarray(value, np.float32)


def to_tf_spec(tf, spec):
    dt = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}
    if isinstance(spec, dict):
        return {k: to_tf_spec(tf, v) for k, v in spec.items()}
    if isinstance(spec, tfrx.FixedLenFeature):
        return tf.io.FixedLenFeature(
            list(spec.shape), dt[spec.dtype.name], _tf_default(spec.default_value, spec.dtype.name)
        )
    if isinstance(spec, tfrx.FixedLenSequenceFeature):
        return tf.io.FixedLenSequenceFeature(
            list(spec.shape),
            dt[spec.dtype.name],
            spec.allow_missing,
            _tf_default(spec.default_value, spec.dtype.name),
        )
    if isinstance(spec, tfrx.VarLenFeature):
        return tf.io.VarLenFeature(dt[spec.dtype.name])
    if isinstance(spec, tfrx.SparseFeature):
        return tf.io.SparseFeature(spec.index_key, spec.value_key, dt[spec.dtype.name], spec.size, spec.already_sorted)
    if isinstance(spec, tfrx.RaggedFeature):
        parts = []
        for p in spec.partitions:
            cls = getattr(tf.io.RaggedFeature, type(p).__name__)
            parts.append(cls(p.length) if type(p).__name__ == "UniformRowLength" else cls(p.key))
        return tf.io.RaggedFeature(
            dt[spec.dtype.name], spec.value_key, parts, getattr(tf, spec.row_splits_dtype.name), spec.validate
        )
    raise TypeError(spec)


def run_both(tf, fn_tf, fn_tfrx):
    """(tf_result, tfrx_result) or asserts both raise."""
    try:
        expected = fn_tf()
    except Exception as e:  # TensorFlow raises InvalidArgumentError, ValueError, even UnicodeDecodeError
        with pytest.raises(tfrx.TfrxError):
            fn_tfrx()
        return e, None
    return expected, fn_tfrx()


def check_batch(tf, records, spec, single=True):
    tf_spec = to_tf_spec(tf, spec)
    expected, actual = run_both(
        tf,
        lambda: tf.io.parse_example(tf.constant(records, dtype=tf.string), tf_spec),
        lambda: tfrx.parse_example(records, spec, num_parallel_calls=1),
    )
    if actual is not None:
        assert_same(tf, expected, actual)
    if single:
        for r in records[:2]:
            expected, actual = run_both(
                tf, lambda r=r: tf.io.parse_single_example(r, tf_spec), lambda r=r: tfrx.parse_single_example(r, spec)
            )
            if actual is not None:
                assert_same(tf, expected, actual, "single")


# ------------------------------------------------------------------ generated Examples and specs

KINDS = ["int64", "float", "bytes"]
DTYPE_OF = {"int64": tfrx.int64, "float": tfrx.float32, "bytes": tfrx.string}
f32 = st.floats(width=32, allow_nan=True, allow_infinity=True)


def values_of(kind: str, n: int):
    el: st.SearchStrategy
    if kind == "int64":
        el = st.integers(-(2**63), 2**63 - 1)
    elif kind == "float":
        el = f32
    else:
        el = st.binary(max_size=6)
    return st.lists(el, min_size=n, max_size=n)


def tf_overflows(kind: str, n: int, packed: bool, spec) -> bool:
    """Whether TensorFlow's own parser corrupts its heap on this feature (see below).

    tf.io.parse_example (2.21) writes unpacked float values for a dense float
    feature into the output before it checks their count: a batch of several
    records with more unpacked floats than the shape holds overwrites the heap
    and later aborts the process ("free(): invalid next size"). The oracle
    cannot be run on such input; test_unpacked_float_overflow_raises checks
    tfrx alone on it.
    """
    return (
        kind == "float"
        and not packed
        and isinstance(spec, tfrx.FixedLenFeature)
        and spec.dtype is tfrx.float32
        and n > int(np.prod(spec.shape, dtype=np.int64))
    )


@st.composite
def feature_for(draw, kind: str, count: int | None, spec=None):
    """A Feature that mostly follows (kind, count) and sometimes breaks it."""
    r = draw(st.integers(0, 19))
    if r == 0:
        return None  # absent
    if r == 1:
        return enc_feature(None, [])  # empty Feature
    if r == 2:
        other = draw(st.sampled_from([k for k in KINDS if k != kind]))
        return enc_feature(other, draw(values_of(other, draw(st.integers(0, 2)))))
    n = count if count is not None and r > 4 else draw(st.integers(0, 4))
    packed = draw(st.booleans()) or tf_overflows(kind, n, False, spec)
    return enc_feature(kind, draw(values_of(kind, n)), packed=packed)


@st.composite
def spec_for(draw, kind: str, count: int | None):
    dtype = DTYPE_OF[kind] if draw(st.integers(0, 9)) else draw(st.sampled_from(list(DTYPE_OF.values())))
    choice = draw(st.sampled_from(["fixed", "var", "seq", "ragged"]))
    if choice == "fixed":
        n = count if count is not None else draw(st.integers(1, 3))
        shape = draw(st.sampled_from([[n]] + ([[]] if n == 1 else []) + ([[2, n // 2]] if n % 2 == 0 and n else [])))
        default = None
        if draw(st.booleans()):
            vals = draw(values_of({"int64": "int64", "float32": "float", "string": "bytes"}[dtype.name], n))
            if dtype is tfrx.float32:
                vals = [v for v in vals]
            default = vals[0] if shape == [] else vals
        return tfrx.FixedLenFeature(shape, dtype, default)
    if choice == "var":
        return tfrx.VarLenFeature(dtype)
    if choice == "seq":
        shape = draw(st.sampled_from([[], [2]]))
        default = None
        if draw(st.booleans()):
            default = {"int64": 7, "float32": 1.5, "string": b"pad"}[dtype.name]
        return tfrx.FixedLenSequenceFeature(shape, dtype, allow_missing=True, default_value=default)
    return tfrx.RaggedFeature(dtype, row_splits_dtype=draw(st.sampled_from([np.int32, np.int64])))


@st.composite
def batches(draw):
    names = ["a", "b", "c", "d"][: draw(st.integers(1, 4))]
    schema = {n: (draw(st.sampled_from(KINDS)), draw(st.sampled_from([None, 1, 2]))) for n in names}
    spec = {n: draw(spec_for(*schema[n])) for n in names}
    records = []
    for _ in range(draw(st.integers(1, 5))):
        entries = []
        for n in names + ["zz_unrequested"]:
            kind, count = schema.get(n, ("bytes", None))
            f = draw(feature_for(kind, count, spec.get(n)))
            if f is not None:
                entries.append((n, f))
        if draw(st.integers(0, 9)) == 0 and entries:
            entries.append(entries[0])  # a duplicate key: the last occurrence wins
        records.append(enc_example(draw(st.permutations(entries))))
    return records, spec


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_generated_examples_match_tensorflow(tf, case):
    records, spec = case
    check_batch(tf, records, spec)


# ------------------------------------------------------------------ generated unusual encodings
# Encodings no writer emits, at every level of an Example: lengths in
# redundant forms, with bit 32 set, or running past (or stopping short of)
# their payload; lists split over several fields, Features holding several
# lists, packed and unpacked runs mixed, fields of other numbers in lists,
# Features, map entries and records; map entries with the value first, a
# field twice or missing; packed float runs of a length not a multiple of 4;
# duplicate keys with empty and non-empty Features.

UNKNOWN_FIELDS = [b"\x10\x01", b"\x18\x80\x01", b"\x21" + bytes(8), b"\x25" + bytes(4), b"\x2a\x00", b"\x32\x02ab"]


def payload(field: bytes) -> bytes:
    """The payload of one length-delimited field with a one-byte tag."""
    pos, n, shift = 1, 0, 0
    while True:
        b = field[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return field[pos : pos + n]


def varint_len(n: int, style: int) -> bytes:
    """A length: plainly, in a redundant two-byte form, or with bit 32 set (TensorFlow reads 32 bits)."""
    if style == 1 and n < 0x80:
        return bytes([n | 0x80, 0])
    if style == 2:
        return varint(n + (1 << 32))
    return varint(n)


def rare(draw, odds: int) -> bool:
    """True about once in `odds` draws."""
    return draw(st.integers(0, odds - 1)) == 0


@st.composite
def ld_odd(draw, field: int, body: bytes, odds: int = 1, cut: bool = True):
    """ld(), its length (when rare) in an unusual form, or (cut) a few bytes longer or shorter than the body."""
    n = len(body)
    style = draw(st.integers(1, 4)) if rare(draw, odds) else 0
    if cut and style == 3:
        n += draw(st.integers(1, 3))
    elif cut and style == 4 and n:
        n -= draw(st.integers(1, n))
    return varint(field << 3 | 2) + varint_len(n, style) + body


def _maybe_insert(draw, parts: list[bytes], choices: list[bytes], odds: int) -> list[bytes]:
    if rare(draw, odds):
        parts = list(parts)
        parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(choices)))
    return parts


@st.composite
def odd_list(draw, kind: str, values: list, odds: int, cut: bool = True):
    """The fields of a BytesList / FloatList / Int64List holding `values`, laid out unusually."""
    if kind == "bytes":
        parts = [draw(ld_odd(1, v, odds, cut)) for v in values]
        return b"".join(_maybe_insert(draw, parts, UNKNOWN_FIELDS + [b"\x0d" + bytes(4)], odds))
    one = varint if kind == "int64" else (lambda v: struct.pack("<f", v))
    unpacked_tag = b"\x08" if kind == "int64" else b"\x0d"
    mid = draw(st.integers(0, len(values)))
    a, b = values[:mid], values[mid:]

    def packed(vs: list) -> bytes:
        run = b"".join(one(v) for v in vs)
        if rare(draw, odds):  # a run that does not end on a value: a cut varint, or 1 to 3 float bytes more
            run += b"\x80" if kind == "int64" else bytes(draw(st.integers(1, 3)))
        return draw(ld_odd(1, run, odds, cut))

    def unpacked(vs: list) -> bytes:
        return b"".join(unpacked_tag + one(v) for v in vs)

    layout = draw(st.sampled_from(["packed", "unpacked", "split", "packed+unpacked", "unpacked+packed", "empty run"]))
    parts = {
        "packed": [packed(values)],
        "unpacked": [unpacked(values)],
        "split": [packed(a), packed(b)],
        "packed+unpacked": [packed(a), unpacked(b)],
        "unpacked+packed": [unpacked(a), packed(b)],
        "empty run": [ld(1, b""), packed(values)],
    }[layout]
    return b"".join(_maybe_insert(draw, parts, UNKNOWN_FIELDS + [b"\x0a\x00", b"\x1a\x00"], odds))


@st.composite
def odd_feature(draw, kind: str, count: int | None, odds: int, cut: bool = True, extra: bool = True):
    """A Feature of `kind`, often laid out unusually, sometimes (extra) holding other lists or fields too."""
    if rare(draw, odds):
        return draw(st.sampled_from([b""] + UNKNOWN_FIELDS))  # an empty Feature, or no list at all
    n = count if count is not None and not rare(draw, odds) else draw(st.integers(0, 3))
    values = draw(values_of(kind, n))
    if draw(st.booleans()):
        body = draw(odd_list(kind, values, odds, cut))
    else:  # the usual fields
        body = payload(enc_feature(kind, values, draw(st.booleans())))
    feature = draw(ld_odd(KIND_FIELD[kind], body, odds, cut))
    if extra and rare(draw, odds):
        extra = draw(st.integers(0, 2))
        if extra == 0:  # a second list of the same kind
            feature += ld(KIND_FIELD[kind], draw(odd_list(kind, draw(values_of(kind, 1)), odds, cut)))
        elif extra == 1:  # a list of another kind after it, or before it
            other = draw(st.sampled_from([k for k in KINDS if k != kind]))
            other_list = enc_feature(other, draw(values_of(other, 1)))
            feature = other_list + feature if draw(st.booleans()) else feature + other_list
        else:  # an unknown field after the list, or before it
            unknown = draw(st.sampled_from(UNKNOWN_FIELDS))
            feature = unknown + feature if draw(st.booleans()) else feature + unknown
    return feature


@st.composite
def odd_entry(draw, key: bytes, feature: bytes, odds: int):
    """A map entry of an Example's Features for (key, feature), sometimes laid out unusually."""
    k, v = ld(1, key), ld(2, feature)
    body = k + v
    if rare(draw, 2 * odds):
        body = draw(st.sampled_from([v + k, k + k, v + v, k, k + v + b"\x18\x01", b"\x18\x01" + k + v]))
    return draw(ld_odd(1, body, 4 * odds))


def leading_unpacked_floats(feature: bytes) -> int:
    """How many unpacked floats TensorFlow writes for a FloatList Feature before it looks at their count."""
    if not feature or feature[0] != 0x12:
        return 0
    pos, length, shift = 1, 0, 0
    while pos < len(feature):
        b = feature[pos]
        pos += 1
        length |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    end = min(pos + (length & 0xFFFFFFFF), len(feature))
    n = 0
    while pos + 5 <= end and feature[pos] == 0x0D:
        n, pos = n + 1, pos + 5
    return n


@st.composite
def odd_batches(draw):
    odds = draw(st.sampled_from([6, 24, 96]))  # how rare each oddity is in this batch
    names = ["a", "b", "c"][: draw(st.integers(1, 3))]
    schema = {n: (draw(st.sampled_from(KINDS)), draw(st.sampled_from([None, 1, 2]))) for n in names}
    spec = {n: draw(spec_for(*schema[n])) for n in names}
    records = []
    for _ in range(draw(st.integers(1, 3))):
        entries = []
        for n in names + ["zz_unrequested"]:
            kind, count = schema.get(n, ("bytes", None))
            for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):  # duplicate keys are common here
                f = draw(odd_feature(kind, count, odds))
                s = spec.get(n)
                if (
                    isinstance(s, tfrx.FixedLenFeature)
                    and s.dtype is tfrx.float32
                    and leading_unpacked_floats(f) > int(np.prod(s.shape, dtype=np.int64))
                ):
                    f = b""  # TensorFlow would write past its output row (see tf_overflows)
                entries.append(draw(odd_entry(n.encode(), f, odds)))
        entries = _maybe_insert(draw, draw(st.permutations(entries)), UNKNOWN_FIELDS, 4 * odds)  # no entry
        cut = draw(st.integers(0, len(entries)))  # entries over one or two Features messages
        fields = [ld(1, b"".join(entries[:cut])), ld(1, b"".join(entries[cut:]))]
        if rare(draw, 2 * odds):  # the last one's length runs past the record (or stops short)
            fields[-1] = draw(ld_odd(1, b"".join(entries[cut:])))
        top = UNKNOWN_FIELDS + [b"\x12\x03xyz", b"\x8a\x00", b"\x0b", b"\x00\x05", b"\x12\x80\x80\x80\x80\x08"]
        records.append(b"".join(_maybe_insert(draw, fields, top, 2 * odds)))
    return records, spec


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(odd_batches())
def test_unusual_encodings_match_tensorflow(tf, case):
    records, spec = case
    check_batch(tf, records, spec)


# ------------------------------------------------------------------ hand-made cases


@pytest.mark.parametrize("batch", [1, 4, 16])
def test_unpacked_float_overflow_raises(batch):
    """More unpacked floats than a dense row holds: a ParseError, nothing written past the row.

    TensorFlow itself corrupts its heap on this input (tf_overflows), so
    the expected error is stated here rather than asked of TensorFlow.
    """
    record = enc_example([("c", enc_feature("float", [1.0, 2.0, 3.0, 4.0], packed=False))])
    good = enc_example([("c", enc_feature("float", [5.0], packed=False))])
    spec = {"c": tfrx.FixedLenFeature([1], tfrx.float32)}
    for _ in range(20):
        with pytest.raises(tfrx.ParseError, match=r"(?s)\bc\b.*\b0\b"):
            tfrx.parse_example([record] * batch, spec)
    assert tfrx.parse_example([good] * batch, spec)["c"].tolist() == [[5.0]] * batch


def test_basic_kinds_defaults_and_shapes(tf):
    records = [
        enc_example(
            [
                ("i", enc_feature("int64", [1, -2, 2**63 - 1, -(2**63)])),
                ("f", enc_feature("float", [math.nan, math.inf, -0.0, 1e-45])),
                ("b", enc_feature("bytes", [b"a\x00b", b""])),
                ("s", enc_feature("int64", [5])),
            ]
        ),
        enc_example(
            [
                ("i", enc_feature("int64", [3, 4, 5, 6], packed=False)),
                ("f", enc_feature("float", [1, 2, 3, 4], packed=False)),
                ("b", enc_feature("bytes", [b"x", b"y"])),
            ]
        ),
    ]
    spec = {
        "i": tfrx.FixedLenFeature([2, 2], tfrx.int64),
        "f": tfrx.FixedLenFeature([4], tfrx.float32),
        "b": tfrx.FixedLenFeature([2], tfrx.string),
        "s": tfrx.FixedLenFeature([], tfrx.int64, default_value=-1),
        "m": tfrx.FixedLenFeature([2], tfrx.string, default_value=[b"p", b"q"]),
        "n": tfrx.FixedLenFeature([1, 2], tfrx.float32, default_value=[[0.5, math.nan]]),
    }
    check_batch(tf, records, spec)


@pytest.mark.parametrize(
    "feature,spec",
    [
        (enc_feature(None, []), tfrx.FixedLenFeature([], tfrx.int64)),  # empty Feature = absent -> required
        (enc_feature(None, []), tfrx.FixedLenFeature([], tfrx.int64, default_value=3)),
        (enc_feature("int64", []), tfrx.FixedLenFeature([], tfrx.int64, default_value=3)),  # count 0 != 1
        (enc_feature("float", []), tfrx.FixedLenFeature([], tfrx.int64, default_value=3)),  # kind mismatch
        (enc_feature("float", []), tfrx.VarLenFeature(tfrx.int64)),
        (enc_feature(None, []), tfrx.VarLenFeature(tfrx.int64)),
        (enc_feature(None, []), tfrx.RaggedFeature(tfrx.float32)),
        (enc_feature("int64", [1, 2, 3]), tfrx.FixedLenSequenceFeature([2], tfrx.int64, allow_missing=True)),
        (enc_feature("int64", [1, 2]), tfrx.FixedLenFeature([3], tfrx.int64)),
        (enc_feature("bytes", [b"a"]), tfrx.FixedLenFeature([], tfrx.float32, default_value=1.0)),
        (enc_feature("int64", []), tfrx.FixedLenFeature([0], tfrx.int64)),
        # the usual one-field layouts, with counts that do not fit the row
        (enc_feature("bytes", [b"ab"]), tfrx.FixedLenFeature([2], tfrx.string)),
        (enc_feature("bytes", [b""]), tfrx.FixedLenFeature([], tfrx.string)),
        (enc_feature("float", [1.0, 2.0]), tfrx.FixedLenFeature([3], tfrx.float32)),
        (enc_feature("float", [1.0, 2.0, 3.0]), tfrx.FixedLenFeature([3], tfrx.float32)),
        (enc_feature("int64", [300]), tfrx.FixedLenFeature([], tfrx.int64)),
        (enc_feature("int64", [1, 2]), tfrx.FixedLenFeature([], tfrx.int64)),
        (b"\x1a\x03\x0a\x01\x80", tfrx.FixedLenFeature([], tfrx.int64)),  # a cut varint
        (b"\x12\x05\x0a\x03\x00\x00\x80", tfrx.FixedLenFeature([], tfrx.float32)),  # 3 float bytes
    ],
)
def test_presence_kind_and_count_rules(tf, feature, spec):
    records = [enc_example([("k", feature)]), enc_example([("k", enc_feature("int64", [9]))])]
    check_batch(tf, records, {"k": spec})


def test_duplicate_keys_last_wins(tf):
    a1, a2 = enc_feature("int64", [1]), enc_feature("int64", [2, 3])
    # two entries in one Features message, and two Features messages in one Example
    recs = [enc_example([("a", a1), ("a", a2)]), enc_example([("a", a2)]) + enc_example([("a", a1)])]
    for spec in (
        tfrx.VarLenFeature(tfrx.int64),
        tfrx.FixedLenFeature([], tfrx.int64, default_value=0),
        tfrx.RaggedFeature(tfrx.int64),
    ):
        for r in recs:
            check_batch(tf, [r], {"a": spec})


def test_sparse_feature(tf):
    recs = [
        enc_example(
            [
                ("i", enc_feature("int64", [5, 1, 2])),
                ("v", enc_feature("float", [1, 2, 3])),
                ("j", enc_feature("int64", [0, 3, 1])),
            ]
        ),
        enc_example(
            [("i", enc_feature("int64", [0])), ("v", enc_feature("float", [7])), ("j", enc_feature("int64", [2]))]
        ),
        enc_example([]),
    ]
    for spec in (
        tfrx.SparseFeature("i", "v", tfrx.float32, 6),
        tfrx.SparseFeature("i", "v", tfrx.float32, 3, already_sorted=True),  # out of range index kept
        tfrx.SparseFeature(["i", "j"], "v", tfrx.float32, [6, 4]),
    ):
        check_batch(tf, recs, {"s": spec})
    bad = [enc_example([("i", enc_feature("int64", [1, 2])), ("v", enc_feature("float", [1]))])]
    check_batch(tf, bad, {"s": tfrx.SparseFeature("i", "v", tfrx.float32, 3)}, single=False)


@pytest.mark.parametrize("splits_dtype", [np.int32, np.int64])
def test_ragged_partitions(tf, splits_dtype):
    R = tfrx.RaggedFeature
    recs = [
        enc_example(
            [
                ("v", enc_feature("int64", [1, 2, 3, 4, 5, 6])),
                ("len", enc_feature("int64", [2, 1])),
                ("spl", enc_feature("int64", [0, 4, 6])),
                ("sta", enc_feature("int64", [0, 1, 3])),
                ("lim", enc_feature("int64", [2, 6])),
                ("ids", enc_feature("int64", [0, 0, 2, 2, 2, 3])),
                ("len3", enc_feature("int64", [3, 0])),
            ]
        ),
        enc_example(
            [
                ("v", enc_feature("int64", [7, 8])),
                ("len", enc_feature("int64", [0, 1])),
                ("spl", enc_feature("int64", [0, 0, 2])),
                ("sta", enc_feature("int64", [0])),
                ("lim", enc_feature("int64", [1, 2])),
                ("ids", enc_feature("int64", [1, 1])),
                ("len3", enc_feature("int64", [1])),
            ]
        ),
        enc_example([("spl", enc_feature("int64", [0]))]),
    ]
    specs = {
        "plain": R(tfrx.int64, value_key="v", row_splits_dtype=splits_dtype),
        "lengths": R(tfrx.int64, value_key="v", partitions=[R.RowLengths("len")], row_splits_dtype=splits_dtype),
        "splits": R(tfrx.int64, value_key="v", partitions=[R.RowSplits("spl")], row_splits_dtype=splits_dtype),
        "starts": R(tfrx.int64, value_key="v", partitions=[R.RowStarts("sta")], row_splits_dtype=splits_dtype),
        "limits": R(tfrx.int64, value_key="v", partitions=[R.RowLimits("lim")], row_splits_dtype=splits_dtype),
        "rowids": R(tfrx.int64, value_key="v", partitions=[R.ValueRowIds("ids")], row_splits_dtype=splits_dtype),
        "uniform": R(tfrx.int64, value_key="v", partitions=[R.UniformRowLength(2)], row_splits_dtype=splits_dtype),
    }
    for name, spec in specs.items():
        check_batch(tf, recs[:2], {name: spec})
    nested = R(
        tfrx.int64,
        value_key="v",
        partitions=[R.RowLengths("len3"), R.UniformRowLength(2)],
        row_splits_dtype=splits_dtype,
    )
    check_batch(tf, recs[:2], {"nested": nested})
    check_batch(tf, recs, {"splits": specs["splits"], "plain": specs["plain"]})


def test_ragged_validate_raises_where_tensorflow_does(tf):
    R = tfrx.RaggedFeature
    recs = [enc_example([("v", enc_feature("int64", [1, 2, 3])), ("l", enc_feature("int64", [2, 2]))])]
    check_batch(
        tf, recs, {"r": R(tfrx.int64, value_key="v", partitions=[R.RowLengths("l")], validate=True)}, single=False
    )


def test_empty_batch(tf):
    spec = {
        "a": tfrx.FixedLenFeature([2], tfrx.int64),
        "s": tfrx.FixedLenSequenceFeature([2], tfrx.int64, allow_missing=True),
        "v": tfrx.VarLenFeature(tfrx.float32),
        "b": tfrx.FixedLenFeature([], tfrx.string),
    }
    expected = tf.io.parse_example(tf.constant([], dtype=tf.string), to_tf_spec(tf, spec))
    assert_same(tf, expected, tfrx.parse_example([], spec))


@pytest.mark.parametrize(
    "record",
    [b"\xff\xff", b"\x0a\x05abc", b"\x0a\x03\x0a\x01"],
)
def test_malformed_records_raise(tf, record):
    spec = {"a": tfrx.VarLenFeature(tfrx.int64)}
    good = enc_example([("a", enc_feature("int64", [1]))])
    with pytest.raises(Exception):
        tf.io.parse_example(tf.constant([good, record]), to_tf_spec(tf, spec))
    with pytest.raises(tfrx.DecodeError) as info:
        tfrx.parse_example([good, record], spec)
    assert info.value.record_index == 1
    assert "record 1" in str(info.value)


# TensorFlow's parser (protobuf's CodedInputStream) keeps the enclosing
# limit when a length runs past it: a packed Int64List, a list, a map entry
# or a Features message whose length runs past what holds it is read to that
# end. A bytes value must fit. (Feature, spec, values; None: an error.)
LENGTHS_PAST_THEIR_MESSAGE = [
    (b"\x1a\x03\x0a\x05\x01", tfrx.VarLenFeature(tfrx.int64), [1]),
    (b"\x1a\x05\x0a\x01", tfrx.VarLenFeature(tfrx.int64), []),
    (b"\x1a\x05\x0a\x01\x05", tfrx.VarLenFeature(tfrx.int64), [5]),
    (b"\x1a\x05", tfrx.VarLenFeature(tfrx.int64), []),
    (b"\x12\x05", tfrx.VarLenFeature(tfrx.float32), []),
    (b"\x0a\x05", tfrx.VarLenFeature(tfrx.string), []),
    (b"\x0a\x03\x0a\x05a", tfrx.VarLenFeature(tfrx.string), None),  # a bytes value past its list
    (b"\x12\x06\x0a\x08\x00\x00\x80\x3f", tfrx.VarLenFeature(tfrx.float32), None),  # 2 floats declared, 1 held
    (b"\x1a\x83\x80\x80\x80\x10\x0a\x01\x05", tfrx.VarLenFeature(tfrx.int64), [5]),  # lengths are 32-bit
]
_ENTRY_A7 = ld(1, b"a") + ld(2, enc_feature("int64", [7]))
RECORDS_PAST_THEIR_END = [
    b"\x0a\x7f" + ld(1, _ENTRY_A7),  # the Features message
    b"\x0a" + varint(len(_ENTRY_A7) + 2) + b"\x0a\x7f" + _ENTRY_A7,  # its one entry
]


def test_lengths_past_their_message_are_cut_at_its_end():
    for feature, spec, expected in LENGTHS_PAST_THEIR_MESSAGE:
        record = enc_example([("a", feature)])
        if expected is None:
            with pytest.raises(tfrx.DecodeError, match="inside feature 'a'"):
                tfrx.parse_example([record], {"a": spec})
        else:
            assert tfrx.parse_example([record], {"a": spec})["a"].values.tolist() == expected
    # unrequested features are skipped without being decoded
    record = enc_example([("a", b"\x1a\x03\x0a\x05\x80")])
    assert tfrx.parse_example([record], {"b": tfrx.VarLenFeature(tfrx.int64)})["b"].nnz == 0
    # a Features message and a map entry whose lengths run past the record
    for record in RECORDS_PAST_THEIR_END:
        assert tfrx.parse_example([record], {"a": tfrx.VarLenFeature(tfrx.int64)})["a"].values.tolist() == [7]


def test_lengths_past_their_message_match_tensorflow(tf):
    for feature, spec, _ in LENGTHS_PAST_THEIR_MESSAGE:
        check_batch(tf, [enc_example([("a", feature)])], {"a": spec})
    for record in RECORDS_PAST_THEIR_END:
        check_batch(tf, [record], {"a": tfrx.VarLenFeature(tfrx.int64)})


# ------------------------------------------------------------------ TensorFlow's reading of unusual encodings
# tf.io.parse_example does not read a Feature as protobuf merges one: the
# Feature's first byte says its kind and only the list it opens is read; a
# list's first field decides between one packed run (the rest of the list is
# ignored) and unpacked values only; map entries are exactly a key and a
# value in either order; an empty Feature never overrides an earlier
# occurrence of a dense key. Each case states what TensorFlow 2.21 returns
# (None: it raises) and is also checked against TensorFlow itself.

I64, F32, STR = tfrx.int64, tfrx.float32, tfrx.string
FLOAT_1 = struct.pack("<f", 1.0)

UNUSUAL_FEATURES = [
    # (Feature bytes, spec, TensorFlow's values for the batch of one)
    (ld(3, ld(1, b"\x01\x02")) + ld(3, ld(1, b"\x03")), tfrx.VarLenFeature(I64), [1, 2]),  # the first list only
    (ld(3, ld(1, b"\x01\x02")) + ld(3, ld(1, b"\x03")), tfrx.FixedLenFeature([2], I64), [1, 2]),
    (ld(1, ld(1, b"zz")) + enc_feature("int64", [5]), tfrx.VarLenFeature(I64), None),  # first byte: bytes_list
    (ld(1, ld(1, b"zz")) + enc_feature("int64", [5]), tfrx.VarLenFeature(STR), [b"zz"]),
    (ld(3, ld(1, b"\x07") + ld(1, b"\x08")), tfrx.VarLenFeature(I64), [7]),  # two packed runs
    (ld(3, ld(1, b"\x07") + b"\x08\x09"), tfrx.VarLenFeature(I64), [7]),  # packed, then unpacked
    (ld(3, b"\x08\x09" + ld(1, b"\x07")), tfrx.VarLenFeature(I64), None),  # unpacked, then packed
    (ld(3, b"\x08\x09\x08\x0a"), tfrx.VarLenFeature(I64), [9, 10]),
    (ld(3, b"\x10\x01"), tfrx.VarLenFeature(I64), None),  # a field of another number in the list
    (ld(1, ld(1, b"x") + b"\x10\x01"), tfrx.VarLenFeature(STR), None),
    (b"\x08\x01", tfrx.VarLenFeature(I64), None),  # a first byte that opens no list
    (b"\x08\x01", tfrx.FixedLenFeature([], I64, default_value=3), None),
    (enc_feature("int64", [5]) + b"\x0b\xff", tfrx.VarLenFeature(I64), [5]),  # after the list: ignored
    (ld(2, ld(1, FLOAT_1 + b"\x01")), tfrx.VarLenFeature(F32), [1.0]),  # 5 bytes: one float
    (ld(2, ld(1, FLOAT_1 + b"\x01")), tfrx.FixedLenFeature([], F32), [1.0]),
    (ld(2, ld(1, b"\x01\x02\x03")), tfrx.VarLenFeature(F32), []),
    (ld(2, ld(1, FLOAT_1) + b"\x0d" + FLOAT_1), tfrx.VarLenFeature(F32), [1.0]),  # packed, then unpacked
    (ld(2, b"\x0d" + FLOAT_1 + ld(1, FLOAT_1)), tfrx.VarLenFeature(F32), None),  # unpacked, then packed
    (ld(2, b"\x0d" + FLOAT_1[:3]), tfrx.VarLenFeature(F32), None),
    (ld(3, ld(1, b"\xff" * 9 + b"\x7f")), tfrx.VarLenFeature(I64), [-1]),  # a 10-byte varint's top bits dropped
    (ld(3, b"\x08" + b"\xff" * 9 + b"\x7f"), tfrx.VarLenFeature(I64), [-1]),
    (ld(3, ld(1, b"\xff" * 10 + b"\x01")), tfrx.VarLenFeature(I64), None),  # 11 bytes
    (b"\x1a\x00\xff", tfrx.VarLenFeature(I64), []),
    (b"\x1a", tfrx.VarLenFeature(I64), None),
    (b"\x1a\x03\x08\x00\x08\x00", tfrx.VarLenFeature(I64), None),  # the list ends between a tag and its value
    (b"\x0a\x03\x0a\x00\x0a\x00", tfrx.VarLenFeature(STR), None),
]


@pytest.mark.parametrize("feature,spec,expected", UNUSUAL_FEATURES)
def test_unusual_feature_encodings(feature, spec, expected):
    record = enc_example([("a", feature)])
    if expected is None:
        with pytest.raises(tfrx.TfrxError, match="'a'"):
            tfrx.parse_example([record], {"a": spec})
        return
    got = tfrx.parse_example([record], {"a": spec})["a"]
    got = got.values if isinstance(got, tfrx.SparseArray) else got.reshape(-1)
    assert got.tolist() == expected


@pytest.mark.parametrize("feature,spec,expected", UNUSUAL_FEATURES)
def test_unusual_feature_encodings_match_tensorflow(tf, feature, spec, expected):
    kind, value = {"int64": ("int64", 1), "float32": ("float", 1.0), "string": ("bytes", b"1")}[spec.dtype.name]
    good = enc_example([("a", enc_feature(kind, [value]))])
    for records in ([enc_example([("a", feature)])], [good, enc_example([("a", feature)]), good]):
        check_batch(tf, records, {"a": spec})


def _dup(first: bytes, second: bytes) -> bytes:
    return enc_example([("a", first), ("a", second)])


FIVE, NINE, EMPTY = enc_feature("int64", [5]), enc_feature("int64", [9]), b""


DUPLICATE_KEYS = [
    # dense: an empty Feature never overrides; the last non-empty one counts
    (_dup(FIVE, EMPTY), tfrx.FixedLenFeature([], I64), [5], [5]),
    (_dup(EMPTY, FIVE), tfrx.FixedLenFeature([], I64), [5], [5]),
    (_dup(FIVE, NINE), tfrx.FixedLenFeature([], I64), [9], [9]),
    (_dup(EMPTY, EMPTY), tfrx.FixedLenFeature([], I64, default_value=3), [3], [3]),
    (_dup(FIVE, EMPTY), tfrx.FixedLenSequenceFeature([], I64, allow_missing=True), [5], [5]),
    # the others: the last occurrence counts even when empty, but not in
    # parse_single_example, which skips empty Features for every type
    (_dup(FIVE, EMPTY), tfrx.VarLenFeature(I64), [], [5]),
    (_dup(FIVE, EMPTY), tfrx.RaggedFeature(I64), [], [5]),
    (_dup(enc_feature("float", [1.0]), EMPTY), tfrx.VarLenFeature(I64), [], None),
    # an overridden occurrence is not read, except for its first byte
    (_dup(enc_feature("float", [1.0]), FIVE), tfrx.FixedLenFeature([], I64), [5], [5]),
    (_dup(enc_feature("float", [1.0]), FIVE), tfrx.VarLenFeature(I64), [5], [5]),
    (_dup(b"\x1a\x03\x0a\x01\x80", FIVE), tfrx.VarLenFeature(I64), [5], [5]),
    (_dup(enc_feature("int64", [1, 2]), FIVE), tfrx.FixedLenFeature([], I64), [5], [5]),
    (_dup(b"\x08\x01", FIVE), tfrx.FixedLenFeature([], I64), None, None),
    (_dup(FIVE, b"\x08\x01"), tfrx.VarLenFeature(I64), None, None),
    (_dup(FIVE, enc_feature("float", [1.0])), tfrx.FixedLenFeature([], I64), None, None),
]


@pytest.mark.parametrize("record,spec,expected,single", DUPLICATE_KEYS)
def test_duplicate_keys_follow_tensorflow(record, spec, expected, single):
    def values(out):
        out = out["a"]
        if isinstance(out, tfrx.SparseArray):
            return out.values.tolist()
        if isinstance(out, tfrx.RaggedArray):
            return out.flat_values.tolist()
        return np.asarray(out).reshape(-1).tolist()

    if expected is None:
        with pytest.raises(tfrx.TfrxError):
            tfrx.parse_example([record], {"a": spec})
    else:
        assert values(tfrx.parse_example([record], {"a": spec})) == expected
    if single is None:
        with pytest.raises(tfrx.TfrxError):
            tfrx.parse_single_example(record, {"a": spec})
    else:
        assert values(tfrx.parse_single_example(record, {"a": spec})) == single


@pytest.mark.parametrize("record,spec,expected,single", DUPLICATE_KEYS)
def test_duplicate_keys_match_tensorflow(tf, record, spec, expected, single):
    check_batch(tf, [record], {"a": spec})


KEY_A, VALUE_7 = ld(1, b"a"), ld(2, enc_feature("int64", [7]))


def _features(*entries: bytes) -> bytes:
    return ld(1, b"".join(ld(1, e) for e in entries))


UNUSUAL_RECORDS = [
    (_features(VALUE_7 + KEY_A), [7]),  # value before key
    (_features(KEY_A + KEY_A), []),  # key twice: no value, an empty Feature
    (_features(VALUE_7 + VALUE_7), []),  # value twice: the key is ""
    (_features(KEY_A), None),  # no value
    (_features(KEY_A + VALUE_7 + b"\x18\x01"), None),  # a third field
    (_features(b"\x18\x01" + KEY_A + VALUE_7), None),
    (_features(b"\x8a\x00\x01a" + VALUE_7), [7]),  # a key tag of two bytes
    (ld(1, b"\x10\x01" + ld(1, KEY_A + VALUE_7)), None),  # a Features field that is not an entry
    (ld(2, b"xyz") + _features(KEY_A + VALUE_7), [7]),  # unknown top-level fields are skipped
    (b"\x00\x05\x11" + bytes(8) + b"\x15" + bytes(4) + _features(KEY_A + VALUE_7), [7]),
    (b"\x8a\x00" + _features(KEY_A + VALUE_7)[1:], []),  # features under a two-byte tag: skipped
    (b"\x0b" + _features(KEY_A + VALUE_7), None),  # a group
    (_features(KEY_A + VALUE_7) + b"\x12\x50abc", [7]),  # an unknown field past the end: skipped to it
    (b"\x12\x80\x80\x80\x80\x08" + _features(KEY_A + VALUE_7), [7]),  # a length negative as int32: not skipped
    (_features(KEY_A + VALUE_7) + b"\x15\x00", None),
]


@pytest.mark.parametrize("record,expected", UNUSUAL_RECORDS)
def test_unusual_record_layouts(record, expected):
    spec = {"a": tfrx.VarLenFeature(I64)}
    if expected is None:
        with pytest.raises(tfrx.DecodeError):
            tfrx.parse_example([record], spec)
    else:
        assert tfrx.parse_example([record], spec)["a"].values.tolist() == expected


@pytest.mark.parametrize("record,expected", UNUSUAL_RECORDS)
def test_unusual_record_layouts_match_tensorflow(tf, record, expected):
    check_batch(tf, [record], {"a": tfrx.VarLenFeature(I64)})
    check_batch(tf, [record], {"": tfrx.VarLenFeature(I64), "a": tfrx.FixedLenFeature([], I64, default_value=0)})
    check_batch(tf, [record], {"": tfrx.VarLenFeature(I64), "a": tfrx.FixedLenFeature([], I64, default_value=0)})


def _mixed_width_int64s(rng: np.random.Generator, n: int) -> list[int]:
    """n int64 values in stretches of one encoded width (1 to 10 bytes), as real columns cluster."""
    out: list[int] = []
    while len(out) < n:
        width = int(rng.integers(1, 11))
        run = int(rng.integers(1, 40))
        if width == 10:
            vals = [-int(x) - 1 for x in rng.integers(0, 2**62, run)]
        else:
            lo, hi = (0 if width == 1 else 1 << (7 * (width - 1))), 1 << (7 * width)
            vals = [int(x) for x in rng.integers(lo, min(hi, 2**63 - 1), run, dtype=np.uint64)]
        out.extend(vals[: n - len(out)])
    return out


@pytest.mark.parametrize("seed", range(3))
def test_long_packed_int64_runs(tf, seed):
    # Long packed runs take the vectorized varint decoder: every width from
    # 1 to 10 bytes, stretches of each, into dense rows, variable-length
    # columns and feature lists; rows too short or too long raise.
    rng = np.random.default_rng(seed)
    lengths = [0, 1, 15, 16, 17, 31, 32, 33, 64, 100, 257, 600]
    values = [_mixed_width_int64s(rng, n) for n in lengths]
    records = [
        enc_example([("v", enc_feature("int64", v)), ("d", enc_feature("int64", v[:16] + [0] * (16 - len(v[:16]))))])
        for v in values
    ]
    out = tfrx.parse_example(
        records,
        {"v": tfrx.VarLenFeature(tfrx.int64), "d": tfrx.FixedLenFeature([16], tfrx.int64)},
        num_parallel_calls=1,
    )
    np.testing.assert_array_equal(out["v"].values, np.array([x for v in values for x in v], np.int64))
    check_batch(
        tf, records, {"v": tfrx.VarLenFeature(tfrx.int64), "d": tfrx.FixedLenFeature([16], tfrx.int64)}, single=False
    )
    for n in (32, 100, 600):
        same = [r for r, v in zip(records, values) if len(v) == n]
        dense = tfrx.parse_example(same, {"v": tfrx.FixedLenFeature([n], tfrx.int64)})["v"]
        np.testing.assert_array_equal(dense[0], np.array(values[lengths.index(n)], np.int64))
        for wrong in (n - 1, n + 1, n - 17):
            check_batch(tf, same, {"v": tfrx.FixedLenFeature([wrong], tfrx.int64)}, single=False)
    # a varint of 11 bytes in the middle of a long run is malformed
    bad = b"".join(varint(x) for x in values[-1][:40]) + b"\xff" * 10 + b"\x01" + b"\x00" * 40
    record = enc_example([("v", ld(3, ld(1, bad)))])
    with pytest.raises(tfrx.DecodeError):
        tfrx.parse_example([record], {"v": tfrx.VarLenFeature(tfrx.int64)})
    with pytest.raises(tfrx.DecodeError):
        tfrx.parse_example([record], {"v": tfrx.FixedLenFeature([81], tfrx.int64)})


def test_short_bytes_values_repeat_across_batches():
    # Short bytes values are shared between records and batches where they
    # repeat; equal values of different lengths (trailing zero bytes) stay
    # apart, and columns that stop repeating come out right as well.
    parser = tfrx.ExampleParser(
        {"c": tfrx.FixedLenFeature([], tfrx.string), "v": tfrx.VarLenFeature(tfrx.string)}, num_parallel_calls=1
    )
    tricky = [b"ab", b"ab\x00", b"ab\x00\x00", b"\x00\x00", b"\x00\x00\x00", b"abcdefgh", b"abcdefgh\x00", b"a", b""]
    rng = np.random.default_rng(0)
    for batch in range(40):
        if batch % 10 < 5:
            cs = [tricky[int(i)] for i in rng.integers(0, len(tricky), 64)]
        else:
            cs = [bytes(rng.integers(0, 256, int(rng.integers(0, 10)), dtype=np.uint8)) for _ in range(64)]
        vs = [cs[i : i + int(rng.integers(0, 4))] for i in range(64)]
        out = parser.parse(
            [enc_example([("c", enc_feature("bytes", [c])), ("v", enc_feature("bytes", v))]) for c, v in zip(cs, vs)]
        )
        assert out["c"].tolist() == cs
        assert out["v"].values.tolist() == [x for v in vs for x in v]


def test_error_messages_name_feature_record_and_counts():
    recs = [enc_example([("a", enc_feature("int64", [1]))]), enc_example([("a", enc_feature("int64", [1, 2]))])]
    with pytest.raises(tfrx.ParseError) as info:
        tfrx.parse_example(recs, {"a": tfrx.FixedLenFeature([], tfrx.int64)})
    e = info.value
    assert (e.feature, e.record_index) == ("a", 1)
    assert "expected 1 value (shape" in str(e) and "found 2" in str(e)
    with pytest.raises(tfrx.ParseError, match="required but missing in record 0"):
        tfrx.parse_example([enc_example([])], {"b": tfrx.FixedLenFeature([], tfrx.int64)})
    with pytest.raises(tfrx.ParseError, match="expected int64_list but found float_list"):
        tfrx.parse_example([enc_example([("a", enc_feature("float", [1]))])], {"a": tfrx.VarLenFeature(tfrx.int64)})
    assert issubclass(tfrx.ParseError, ValueError)


# ------------------------------------------------------------------ inputs, threads, memory


def _mixed_records(n: int) -> list[bytes]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        k = int(rng.integers(0, 5))
        out.append(
            enc_example(
                [
                    ("id", enc_feature("int64", [i])),
                    ("emb", enc_feature("float", rng.standard_normal(8).astype(np.float32).tolist())),
                    ("tok", enc_feature("int64", rng.integers(-5, 1000, k).tolist(), packed=bool(i % 2))),
                    ("txt", enc_feature("bytes", [b"r%d" % i] * (k % 3))),
                    ("pad", b"\x0a\x00" * 200),  # unrequested; makes batches big enough to split
                ]
            )
        )
    return out


MIXED_SPEC = {
    "id": tfrx.FixedLenFeature([], tfrx.int64),
    "emb": tfrx.FixedLenFeature([2, 4], tfrx.float32),
    "tok": tfrx.VarLenFeature(tfrx.int64),
    "txt": tfrx.RaggedFeature(tfrx.string),
    "fls": tfrx.FixedLenSequenceFeature([], tfrx.int64, allow_missing=True),
}


def _assert_results_equal(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert a[k].dtype == b[k].dtype
            np.testing.assert_array_equal(a[k], b[k])
        else:
            assert a[k] == b[k], k


def test_threads_and_input_forms_give_identical_results():
    recs = _mixed_records(3000)
    parser = tfrx.ExampleParser(MIXED_SPEC)
    one = parser.parse(recs, num_parallel_calls=1)
    for threads in (2, 3, 8):
        _assert_results_equal(one, parser.parse(recs, num_parallel_calls=threads))
    batch = tfrx.RecordBatch.from_records(recs)
    _assert_results_equal(one, parser.parse(batch))
    _assert_results_equal(one, parser.parse(np.array(recs, dtype=object)))
    _assert_results_equal(one, parser.parse(tuple(bytearray(r) for r in recs)))
    _assert_results_equal(parser.parse(recs[100:200]), parser.parse(batch[100:200]))


def test_parses_on_several_python_threads_at_once_give_identical_results():
    """Callers that split batches at the same time share the parked native workers or start their own."""
    import threading

    recs = _mixed_records(3000)
    parser = tfrx.ExampleParser(MIXED_SPEC)
    one = parser.parse(recs, num_parallel_calls=1)
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(tfrx.ExampleParser(MIXED_SPEC).parse(recs, num_parallel_calls=3))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(results) == 20
    for r in results:
        _assert_results_equal(one, r)


def test_threaded_parse_works_in_a_forked_child():
    """A child forked after the native workers started gets workers of its own (the parent's do not exist there)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    recs = _mixed_records(3000)
    expected = tfrx.parse_example(recs, MIXED_SPEC, num_parallel_calls=3)  # starts the workers here
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        ids = pool.apply_async(_parse_ids_threaded, (recs,)).get(timeout=120)
    assert ids == expected["id"].tolist()


def _parse_ids_threaded(recs):
    return tfrx.parse_example(recs, MIXED_SPEC, num_parallel_calls=3)["id"].tolist()


def test_threaded_error_is_the_first_bad_record():
    recs = _mixed_records(3000)
    recs[2500] = enc_example([("id", enc_feature("float", [1.0]))])
    recs[1700] = enc_example([("emb", enc_feature("float", [1.0]))])
    for threads in (1, 4):
        with pytest.raises(tfrx.ParseError) as info:
            tfrx.parse_example(recs, MIXED_SPEC, num_parallel_calls=threads)
        assert info.value.record_index == 1700


def test_record_batch_errors_name_the_file_record():
    recs = _mixed_records(10)
    recs[4] = b"\x0a"
    batch = tfrx.RecordBatch.from_records(recs)
    batch.path, batch.first_index = "train.tfrecord", 1000
    with pytest.raises(tfrx.DecodeError, match=r"record 1004 of 'train.tfrecord'"):
        tfrx.parse_example(batch, MIXED_SPEC)


def test_numeric_outputs_own_their_memory_and_wrap_without_copies():
    out = tfrx.parse_example(_mixed_records(50), MIXED_SPEC)
    emb = out["emb"]
    assert emb.flags.c_contiguous and emb.flags.writeable
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(emb)
    assert t.data_ptr() == emb.ctypes.data
    vals = out["tok"].values
    assert torch.from_numpy(vals).data_ptr() == vals.ctypes.data
    del out
    np.testing.assert_array_equal(t.numpy(), emb)  # the buffer outlives the result dict
    jnp = pytest.importorskip("jax.numpy")
    np.testing.assert_array_equal(np.asarray(jnp.asarray(emb)), emb)


def test_dlpack_zero_copy_to_jax():
    jax = pytest.importorskip("jax")
    emb = tfrx.parse_example(_mixed_records(8), MIXED_SPEC)["emb"]
    arr = jax.dlpack.from_dlpack(emb)
    if hasattr(arr, "unsafe_buffer_pointer"):
        assert arr.unsafe_buffer_pointer() == emb.ctypes.data
    np.testing.assert_array_equal(np.asarray(arr), emb)


def test_single_example_input_forms(tf):
    r = enc_example([("a", enc_feature("int64", [4]))])
    spec = {"a": tfrx.FixedLenFeature([], tfrx.int64)}
    assert tfrx.parse_single_example(r, spec)["a"] == 4
    assert tfrx.parse_single_example(np.array(r, dtype=object), spec)["a"] == 4
    assert tfrx.parse_single_example(tf.constant(r), spec)["a"] == 4
    with pytest.raises(TypeError):
        tfrx.parse_example(r, spec)


# ------------------------------------------------------------------ the parser's fast paths
# Dense features of the usual layout are written during the map walk, and an
# entry whose key is the one found at its position in the previous record is
# recognised by one masked comparison of its first bytes. These records mix
# that layout with every other, in batches where the previous record differs.


def _odd_layouts(key: str, kind: str, values: list) -> list[bytes]:
    """Features of one value list in the usual layout and unpacked."""
    return [enc_feature(kind, values), enc_feature(kind, values, packed=False)]


@pytest.mark.parametrize(
    "key", ["a", "label", "thirteen_char", "fourteen_chars", "a_key_much_longer_than_sixteen_bytes"]
)
def test_fast_paths_keys_layouts_and_duplicates(tf, key):
    spec = {
        key: tfrx.FixedLenFeature([], tfrx.int64),
        "s": tfrx.FixedLenFeature([], tfrx.string),
        "f": tfrx.FixedLenFeature([2], tfrx.float32),
        "v": tfrx.FixedLenFeature([3], tfrx.int64),
    }
    scalars = [0, 1, 127, 128, 300, 16383, 16384, 70000, -1, -(2**63), 2**63 - 1]
    records = []
    for i, x in enumerate(scalars):
        for layout in _odd_layouts(key, "int64", [x]):
            entries = [
                (key, layout),
                ("s", enc_feature("bytes", [b"s%d" % i])),
                ("f", enc_feature("float", [1.5, -i])),
                ("v", enc_feature("int64", [i, 2**40, -i])),
            ]
            if i % 3 == 1:
                entries.reverse()  # a different key order than the record before
            if i % 4 == 2:
                entries.append((key, enc_feature("int64", [x + 1])))  # a duplicate: the last one counts
            if i % 4 == 3:
                entries.insert(0, (key, enc_feature("int64", [5, 6])))  # a wrong count, overridden later
            if i % 5 == 4:
                entries.append(("unwanted", enc_feature("bytes", [b"x" * 200])))
            records.append(enc_example(entries))
    check_batch(tf, records, spec, single=False)


@pytest.mark.parametrize(
    "entries",
    [
        [("k", enc_feature("int64", [1, 2]))],  # wrong count in the usual layout, no later occurrence
        [("k", enc_feature("int64", [1]))] + [("k", enc_feature("int64", [1, 2]))],  # overridden by a wrong one
        [("k", enc_feature("float", [1.0]))],  # wrong kind
    ],
)
def test_fast_paths_errors_match_tensorflow(tf, entries):
    good = enc_example([("k", enc_feature("int64", [7]))])
    check_batch(tf, [good, good, enc_example(entries), good], {"k": tfrx.FixedLenFeature([], tfrx.int64)}, single=False)


def test_negative_zero_default_survives_tensorflows_scalar_cache(tf):
    """A ``-0.0`` default stays ``-0.0`` (sign bit set), as TensorFlow gives when its scalar cache is not involved."""
    tf.convert_to_tensor(0.0, tf.float32)  # what made the oracle return +0.0 before _tf_default
    spec = {"b": tfrx.FixedLenFeature([], tfrx.float32, default_value=-0.0)}
    records = [enc_example([]), enc_example([("b", b"")])]
    expected = tf.io.parse_example(tf.constant(records), to_tf_spec(tf, spec))["b"].numpy()
    got = tfrx.parse_example(records, spec)["b"]
    assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist() == [0x80000000] * 2
