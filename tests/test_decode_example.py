"""The native decoder on every valid encoding, and on malformed input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx import train
from tfrx.errors import DecodeError, TfrxError


# -- a tiny wire writer for hand-made encodings
def varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def ld(field: int, payload: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def vi(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value)


def f32(field: int, value: float) -> bytes:
    return varint(field << 3 | 5) + np.float32(value).tobytes()


def entry(key: bytes | None, value: bytes | None, *, value_first=False) -> bytes:
    parts = [] if key is None else [ld(1, key)]
    if value is not None:
        parts.insert(0 if value_first else len(parts), ld(2, value))
    return ld(1, b"".join(parts))


def example(*entries: bytes) -> bytes:
    return ld(1, b"".join(entries))


INTS = ld(3, ld(1, b"".join(varint(v) for v in [1, -2, 300])))


def test_packed_unpacked_and_mixed_values():
    unpacked_ints = ld(3, vi(1, 1) + vi(1, -2) + vi(1, 300))
    mixed_ints = ld(3, vi(1, 1) + ld(1, varint(-2)) + vi(1, 300))
    packed_floats = ld(2, ld(1, np.array([1.5, -0.0], np.float32).tobytes()))
    unpacked_floats = ld(2, f32(1, 1.5) + f32(1, -0.0))
    mixed_floats = ld(2, f32(1, 1.5) + ld(1, np.float32(-0.0).tobytes()))
    for ints in (INTS, unpacked_ints, mixed_ints):
        np.testing.assert_array_equal(tfrx.decode_example(example(entry(b"a", ints)))["a"], [1, -2, 300])
    for floats in (packed_floats, unpacked_floats, mixed_floats):
        got = tfrx.decode_example(example(entry(b"f", floats)))["f"]
        assert got.dtype == np.float32 and got.tolist() == [1.5, 0.0] and np.signbit(got[1])


def test_entry_field_order_missing_key_and_missing_value():
    d = tfrx.decode_example(example(entry(b"a", INTS, value_first=True), entry(None, INTS), entry(b"e", None)))
    assert list(d) == ["a", ""]
    assert d["a"].tolist() == [1, -2, 300]
    assert tfrx.decode_example(example(entry(b"e", None)), keep_empty=True) == {"e": None}


def test_duplicate_keys_last_wins_and_empty_feature_removes():
    data = example(entry(b"k", INTS), entry(b"k", ld(1, ld(1, b"x"))))
    assert tfrx.decode_example(data) == {"k": [b"x"]}
    assert train.Example.FromString(data).features.feature["k"].bytes_list.value == [b"x"]
    data = example(entry(b"k", INTS), entry(b"k", b""))
    assert tfrx.decode_example(data) == {}
    assert tfrx.decode_example(data, keep_empty=True) == {"k": None}


def test_empty_list_is_present_empty_feature_is_absent():
    data = example(entry(b"b", ld(1, b"")), entry(b"f", ld(2, b"")), entry(b"i", ld(3, b"")), entry(b"n", b""))
    d = tfrx.decode_example(data)
    assert d["b"] == [] and d["f"].dtype == np.float32 and d["i"].dtype == np.int64
    assert len(d["f"]) == len(d["i"]) == 0 and "n" not in d


JUNK = (
    vi(9, 5) + ld(10, b"zz") + varint(11 << 3 | 1) + b"\0" * 8 + f32(12, 1)
    + varint(13 << 3 | 3) + vi(1, 1) + varint(13 << 3 | 4)  # a group
)  # fmt: skip


def test_unknown_fields_skipped_at_every_level():
    ints = ld(3, JUNK + ld(1, varint(7)) + JUNK)
    data = JUNK + ld(1, JUNK + ld(1, ld(1, b"a") + ld(2, JUNK + ints + JUNK)) + JUNK) + JUNK
    assert train.Example.FromString(data).features.feature["a"].int64_list.value == [7]
    assert tfrx.decode_example(data)["a"].tolist() == [7]


@pytest.mark.parametrize("junk", [JUNK, vi(2, 1), vi(1, 1), ld(3, b"")])
def test_map_entry_with_unknown_fields_is_not_in_the_map_as_in_upb(junk):
    # upb keeps such an entry as an unknown field of Features; it neither adds nor replaces a key
    first = ld(1, ld(1, b"a") + ld(2, ld(1, ld(1, b"kept"))))
    data = example(first, ld(1, ld(1, b"a") + ld(2, INTS) + junk))
    assert dict(train.Example.FromString(data).features.feature)["a"].bytes_list.value == [b"kept"]
    assert tfrx.decode_example(data) == {"a": [b"kept"]}
    seq = ld(2, ld(1, ld(1, b"t") + ld(2, ld(1, INTS)) + junk))
    assert len(train.SequenceExample.FromString(seq).feature_lists.feature_list) == 0
    assert tfrx.decode_sequence_example(seq) == ({}, {})


def test_wrong_wire_type_for_a_known_field_is_an_unknown_field_as_in_protobuf():
    data = example(entry(b"a", ld(3, vi(1, 1) + f32(1, 2.0) + ld(1, varint(3)))), vi(1, 5)) + vi(1, 4)
    assert list(train.Example.FromString(data).features.feature["a"].int64_list.value) == [1, 3]
    assert tfrx.decode_example(data)["a"].tolist() == [1, 3]


def test_concatenated_messages_merge():
    a = tfrx.make_example({"x": [1, 2], "y": b"a"}).SerializeToString()
    b = tfrx.make_example({"x": [3], "z": 1.5}).SerializeToString()
    d = tfrx.decode_example(a + b)
    assert d["x"].tolist() == [3] and d["y"] == [b"a"] and d["z"].tolist() == [1.5]
    # inside one map entry two values merge: same kind concatenates, another kind replaces
    same = example(ld(1, ld(1, b"k") + ld(2, ld(3, ld(1, b"\x01"))) + ld(2, ld(3, ld(1, b"\x02")))))
    other = example(ld(1, ld(1, b"k") + ld(2, ld(3, ld(1, b"\x01"))) + ld(2, ld(1, ld(1, b"s")))))
    oneof = example(entry(b"k", ld(1, ld(1, b"s")) + ld(3, ld(1, b"\x05")) + ld(1, ld(1, b"t"))))
    for data in (same, other, oneof):
        msg = train.Example.FromString(data)
        kind = msg.features.feature["k"].WhichOneof("kind")
        assert tfrx.decode_example(data)["k"].__class__ in (list, np.ndarray)
        want = list(getattr(msg.features.feature["k"], kind).value)
        got = tfrx.decode_example(data)["k"]
        assert (got if isinstance(got, list) else got.tolist()) == want


def test_overlong_tenth_varint_byte_accepted_like_protobuf():
    ten = bytes([0xFF] * 9 + [0x7F])
    data = example(entry(b"a", ld(3, varint(8) + ten)))
    assert train.Example.FromString(data).features.feature["a"].int64_list.value == [-1]
    assert tfrx.decode_example(data)["a"].tolist() == [-1]


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b"\x0a", 0),  # length missing
        (b"\x0a\x05ab", 0),  # length past the end
        (example(entry(b"a", ld(3, ld(1, b"\x80")))), 11),  # packed run ends inside a varint
        (example(entry(b"a", ld(2, ld(1, b"abc")))), 11),  # packed floats not a multiple of 4
        (example(entry(b"a", ld(3, vi(1, 1)[:-1] + b"\x80"))), 11),  # unpacked varint runs off the end
        (b"\x08" + b"\xff" * 10 + b"\x01", 0),  # varint of 11 bytes
        (b"\x0b\x08\x01", 0),  # unterminated group
        (b"\x0b\x1c", 0),  # end-group of another field
        (b"\x00\x01", 0),  # field number 0
        (b"\x0f", 0),  # wire type 7
        (b"\x0c", 0),  # end-group without a start
        (b"\x0b" * 101 + b"\x0c" * 101, 100),  # groups nested too deep
    ],
)
def test_malformed_input_raises_decode_error_with_offset(data, offset):
    with pytest.raises(DecodeError) as info:
        tfrx.decode_example(data)
    assert info.value.offset == offset
    assert f"byte {offset}" in str(info.value)
    assert isinstance(info.value, (TfrxError, ValueError))
    with pytest.raises(Exception):
        train.Example.FromString(data)


def test_invalid_utf8_names_rejected_as_in_protobuf():
    data = example(entry(b"\xff\xfe", INTS))
    with pytest.raises(Exception):
        train.Example.FromString(data)
    with pytest.raises(DecodeError, match="UTF-8") as info:
        tfrx.decode_example(data)
    assert info.value.offset == 6


def test_accepts_buffers_and_returns_owned_writable_arrays():
    data = tfrx.make_example({"a": [1, 2]}).SerializeToString()
    for buf in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        arr = tfrx.decode_example(buf)["a"]
        assert arr.flags.owndata or arr.base is not None
        arr[0] = 9  # writable, and never shared with the input
    assert tfrx.decode_example(data)["a"].tolist() == [1, 2]
    assert tfrx.decode_example(b"") == {}


def test_decode_examples_names_the_record():
    good = tfrx.make_example({"a": 1}).SerializeToString()
    assert len(tfrx.decode_examples(tfrx.RecordBatch.from_records([good, good]))) == 2
    with pytest.raises(DecodeError) as info:
        tfrx.decode_examples([good, b"\x0a"])
    assert info.value.record_index == 1 and "record 1" in str(info.value)


def test_sequence_example_semantics():
    step_a = ld(3, ld(1, varint(1)))
    step_b = ld(1, ld(1, b"x"))
    fl_entry = ld(1, ld(2, ld(1, step_a) + ld(1, b"")) + ld(1, b"t") + ld(2, ld(1, step_b)))
    data = ld(1, example(entry(b"c", INTS))[2:]) + ld(2, fl_entry) + vi(7, 1)
    msg = train.SequenceExample.FromString(data)
    assert len(msg.feature_lists.feature_list["t"].feature) == 3
    context, lists = tfrx.decode_sequence_example(data)
    assert context["c"].tolist() == [1, -2, 300]
    steps = lists["t"]
    assert steps[0].tolist() == [1] and steps[1] is None and steps[2] == [b"x"]
    assert tfrx.decode_sequence_example(msg)[1]["t"][2] == [b"x"]
    with pytest.raises(TypeError, match="decode_sequence_example"):
        tfrx.decode_example(msg)


# -- truncations and bit flips never crash; where protobuf parses, we agree with it
def oracle(message: train.Example) -> dict:
    out = {}
    for name, feature in message.features.feature.items():
        kind = feature.WhichOneof("kind")
        if kind is not None:
            values = list(getattr(feature, kind).value)
            out[name] = (
                values if kind == "bytes_list" else np.array(values, np.float32 if kind == "float_list" else np.int64)
            )
    return out


def agree(data: bytes):
    try:
        expected = oracle(train.Example.FromString(data))
    except Exception:
        expected = None
    try:
        got = tfrx.decode_example(data)
    except DecodeError:
        assert expected is None, "protobuf parsed what tfrx rejected"
        return
    if expected is not None:
        assert got.keys() == expected.keys()
        for k, v in expected.items():
            if isinstance(v, list):
                assert got[k] == v
            elif v.dtype == np.float32:  # the oracle's float->double->float trip quiets NaNs
                nan = np.isnan(v)
                assert np.array_equal(np.isnan(got[k]), nan)
                np.testing.assert_array_equal(got[k][~nan].view(np.uint32), v[~nan].view(np.uint32))
            else:
                assert got[k].dtype == v.dtype
                np.testing.assert_array_equal(got[k].view(np.uint8), v.view(np.uint8))


messages = st.dictionaries(
    st.text(max_size=4),
    st.one_of(
        st.lists(st.binary(max_size=4), max_size=3),
        st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=3),
        st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=3),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=40, deadline=None)
@given(messages, st.data())
def test_truncations_and_bit_flips(features, data):
    kinds = {k: "bytes" for k, v in features.items() if not v}
    encoded = tfrx.make_example(features, kinds=kinds).SerializeToString(deterministic=True)
    for cut in range(len(encoded)):
        agree(encoded[:cut])
    for _ in range(30):
        i = data.draw(st.integers(0, len(encoded) * 8 - 1))
        flipped = bytearray(encoded)
        flipped[i // 8] ^= 1 << (i % 8)
        agree(bytes(flipped))


def test_random_bytes_never_crash():
    rng = np.random.default_rng(0)
    for n in range(2000):
        buf = rng.integers(0, 256, size=rng.integers(0, 40), dtype=np.uint8).tobytes()
        agree(buf)
        try:
            tfrx.decode_sequence_example(buf)
        except DecodeError:
            pass


def seq_oracle(message: train.SequenceExample):
    lists = {}
    for name, fl in message.feature_lists.feature_list.items():
        steps = []
        for feature in fl.feature:
            kind = feature.WhichOneof("kind")
            steps.append(None if kind is None else list(getattr(feature, kind).value))
        lists[name] = steps
    return oracle(train.Example(features=message.context)), lists


def agree_sequence(data: bytes):
    try:
        expected = seq_oracle(train.SequenceExample.FromString(data))
    except Exception:
        expected = None
    try:
        context, lists = tfrx.decode_sequence_example(data)
    except DecodeError:
        assert expected is None, "protobuf parsed what tfrx rejected"
        return
    if expected is not None:
        assert context.keys() == expected[0].keys()
        assert lists.keys() == expected[1].keys()
        for name, steps in expected[1].items():
            got = lists[name]
            assert len(got) == len(steps)
            for g, e in zip(got, steps):
                if e is None or isinstance(g, list):
                    assert g == e
                else:
                    assert (
                        np.array_equal(np.isnan(g), np.isnan(np.asarray(e, g.dtype)))
                        if g.dtype == np.float32
                        else g.tolist() == e
                    )


@settings(max_examples=30, deadline=None)
@given(messages, st.data())
def test_sequence_truncations_and_bit_flips(features, data):
    kinds = {k: "bytes" for k, v in features.items() if not v}
    encoded = tfrx.make_sequence_example(
        features, {k: [v, v] for k, v in features.items()}, kinds=kinds
    ).SerializeToString(deterministic=True)
    for cut in range(len(encoded)):
        agree_sequence(encoded[:cut])
    for _ in range(30):
        i = data.draw(st.integers(0, len(encoded) * 8 - 1))
        flipped = bytearray(encoded)
        flipped[i // 8] ^= 1 << (i % 8)
        agree_sequence(bytes(flipped))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF]), max_size=40))
def test_packed_int64_runs_agree_with_protobuf(run):
    payload = bytes(run)
    agree(example(entry(b"a", ld(3, ld(1, payload)))))
    agree(example(entry(b"a", ld(3, vi(1, 5) + ld(1, payload) + vi(1, 6)))))


def test_reentrant_decoding_from_a_finalizer():
    data = tfrx.make_example({"a": [1, 2], "b": b"x"}).SerializeToString()
    seen = []

    class DecodesWhenCollected:
        def __del__(self):
            seen.append(tfrx.decode_example(data)["a"].tolist())

    for _ in range(500):
        x = DecodesWhenCollected()
        x.cycle = [x]  # freed by the garbage collector, possibly in the middle of a decode
        del x
        assert tfrx.decode_example(data)["a"].tolist() == [1, 2]
    import gc

    gc.collect()
    assert seen and all(s == [1, 2] for s in seen)


def test_threads_decode_concurrently():
    import threading

    small = tfrx.make_example({"a": [1, 2], "b": b"x"}).SerializeToString()
    big = tfrx.encode_examples({"v": np.arange(40_000, dtype=np.int64)[None, :]})[0]  # decoded without the GIL
    errors = []

    def work():
        try:
            for _ in range(200):
                assert tfrx.decode_example(small)["a"].tolist() == [1, 2]
                assert tfrx.decode_example(big)["v"][-1] == 39_999
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
