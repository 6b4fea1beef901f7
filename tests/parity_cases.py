"""Inputs and outcomes for comparing tfrx with TensorFlow (and protobuf).

Specs are plain tuples (picklable, so the TensorFlow worker of
``tf_worker.py`` can build the same specs with ``tf.io``); ``build_specs``
turns them into tfrx's or TensorFlow's feature classes. Outcomes are
``("ok", canonical value)``, ``("error",)`` for a documented error,
``("bug", type name)`` for any other exception from tfrx, and
``("crash", code)`` when TensorFlow's process died. Canonical values keep
dtypes, shapes, row splits and every float's bits.

Generators take a ``random.Random`` so that Hypothesis (``st.randoms``)
and the long run (``tests/parity_run.py``) share them.

Spec tuples:

* ``("fixed", shape, dtype, default)``: FixedLenFeature; a float default is
  float32 bytes (bit patterns survive pickling and JSON as hex);
* ``("fls", shape, dtype, default)``: FixedLenSequenceFeature(allow_missing=True);
* ``("varlen", dtype)``;
* ``("ragged", dtype, value_key, partitions, splits_dtype, validate)`` with
  partitions ``[(kind, key or length), ...]``, kind one of ``PARTITION_KINDS``.
"""

from __future__ import annotations

import itertools
import random
import struct

import numpy as np

PARTITION_KINDS = ("row_splits", "row_lengths", "row_starts", "row_limits", "value_rowids", "uniform")
_CLASSES = {
    "row_splits": "RowSplits",
    "row_lengths": "RowLengths",
    "row_starts": "RowStarts",
    "row_limits": "RowLimits",
    "value_rowids": "ValueRowIds",
    "uniform": "UniformRowLength",
}
# float32 bit patterns a default may hold: signalling and quiet NaNs with
# payloads, zeros, subnormals, infinities, extremes.
SPECIAL_FLOAT_BITS = (
    0x7F800001,
    0xFF800001,
    0x7FA00000,
    0x7FC00000,
    0x7FC12345,
    0xFFFFFFFF,
    0x80000000,
    0x00000000,
    0x00000001,
    0x807FFFFF,
    0x7F800000,
    0xFF800000,
    0x7F7FFFFF,
    0x3F800000,
)


def _io(lib):
    """The module holding the feature classes: ``tf.io`` or ``tfrx``."""
    return lib.io if hasattr(getattr(lib, "io", None), "RaggedFeature") else lib


def _dtype(lib, name: str):
    return getattr(lib, name)


def _default(dtype: str, default):
    if default is None:
        return None
    if dtype == "float32" and isinstance(default, (bytes, bytearray)):
        return np.frombuffer(bytes(default), dtype="<f4").copy()
    return default


def build_specs(lib, descs: dict) -> dict:
    io = _io(lib)
    out = {}
    for key, d in descs.items():
        kind = d[0]
        if kind == "fixed":
            out[key] = io.FixedLenFeature(list(d[1]), _dtype(lib, d[2]), default_value=_default(d[2], d[3]))
        elif kind == "fls":
            out[key] = io.FixedLenSequenceFeature(
                list(d[1]), _dtype(lib, d[2]), allow_missing=True, default_value=_default(d[2], d[3])
            )
        elif kind == "varlen":
            out[key] = io.VarLenFeature(_dtype(lib, d[1]))
        elif kind == "ragged":
            _, dtype, value_key, parts, splits, validate = d
            R = io.RaggedFeature
            partitions = [getattr(R, _CLASSES[k])(v) for k, v in parts]
            splits_dtype = splits if lib.__name__ == "tfrx" else _dtype(lib, splits)
            out[key] = R(
                _dtype(lib, dtype),
                value_key=value_key,
                partitions=partitions,
                row_splits_dtype=splits_dtype,
                validate=validate,
            )
        else:
            raise ValueError(f"unknown spec tuple {d!r}")
    return out


# ------------------------------------------------------------------ canonical values


def canon(x):
    """Both libraries' results as comparable plain data (float bits kept)."""
    if isinstance(x, (tuple, list)):
        return [canon(v) for v in x]
    if isinstance(x, dict):
        return {k: canon(v) for k, v in sorted(x.items())}
    if hasattr(x, "nested_row_splits") and hasattr(x, "flat_values"):
        splits = [np.asarray(s) for s in x.nested_row_splits]
        return ["ragged", canon(x.flat_values), [[s.dtype.name, s.tolist()] for s in splits]]
    if hasattr(x, "dense_shape") and hasattr(x, "indices"):
        return ["sparse", np.asarray(x.indices).tolist(), canon(x.values), np.asarray(x.dense_shape).tolist()]
    a = np.asarray(x)
    if a.dtype.kind in "OSU":
        flat = [bytes(v) if not isinstance(v, str) else v.encode() for v in a.reshape(-1).tolist()]
        return ["bytes", list(a.shape), [v.hex() for v in flat]]
    return [a.dtype.name, list(a.shape), np.ascontiguousarray(a).tobytes().hex()]


def rx_outcome(fn, *args, **kwargs):
    """tfrx's outcome: a TfrxError is a documented error; any other exception is a bug."""
    import tfrx

    try:
        return ("ok", canon(fn(*args, **kwargs)))
    except tfrx.errors.TfrxError:
        return ("error",)
    except Exception as e:  # noqa: BLE001 - classified, not hidden
        return ("bug", type(e).__name__)


# ------------------------------------------------------------------ run in the TensorFlow worker


def tf_parse_example(tf, records: list, descs: dict):
    out = tf.io.parse_example(tf.constant(records, dtype=tf.string), build_specs(tf, descs))
    return canon({k: v for k, v in out.items()})


def tf_parse_sequence(tf, records: list, context: dict, sequence: dict):
    _, lists, _ = tf.io.parse_sequence_example(
        tf.constant(records, dtype=tf.string),
        context_features=build_specs(tf, context) or None,
        sequence_features=build_specs(tf, sequence),
    )
    return canon(lists)


def rx_parse_example(records: list, descs: dict):
    import tfrx

    return rx_outcome(lambda: tfrx.parse_example(records, build_specs(tfrx, descs)))


def rx_parse_sequence(records: list, context: dict, sequence: dict):
    import tfrx

    return rx_outcome(
        lambda: tfrx.parse_sequence_example(
            records, context_features=build_specs(tfrx, context) or None, sequence_features=build_specs(tfrx, sequence)
        )[1]
    )


def tf_answer(answer) -> tuple:
    """A worker answer as an outcome: TensorFlow's errors all count as errors."""
    return ("error",) if answer[0] == "error" else answer


def compare(tf_out: tuple, rx_out: tuple) -> str | None:
    """None when the outcomes agree, else the disagreement's class name."""
    if rx_out[0] == "bug":
        return f"tfrx raised {rx_out[1]}"
    if tf_out[0] == "crash":
        return None  # TensorFlow died: any clean tfrx outcome stands
    if tf_out[0] != rx_out[0]:
        return f"tf {tf_out[0]} / tfrx {rx_out[0]}"
    if tf_out[0] == "ok" and tf_out[1] != rx_out[1]:
        return "different values"
    return None


# ------------------------------------------------------------------ records (protobuf, no TensorFlow)


def _fill(feature, kind: str, values: list) -> None:
    if kind == "f":
        feature.float_list.value.extend(values)
    elif kind == "i":
        feature.int64_list.value.extend(values)
    else:
        feature.bytes_list.value.extend(values)


def example(features: dict) -> bytes:
    """An Example from ``{key: (kind "f"/"i"/"b", values)}``."""
    import tfrx

    ex = tfrx.train.Example()
    for k, (kind, values) in features.items():
        _fill(ex.features.feature[k], kind, values)
    return ex.SerializeToString()


def sequence_example(lists: dict) -> bytes:
    """A SequenceExample from ``{key: (kind, [step values, ...])}``."""
    import tfrx

    ex = tfrx.train.SequenceExample()
    for k, (kind, steps) in lists.items():
        fl = ex.feature_lists.feature_list[k]
        for values in steps:
            _fill(fl.feature.add(), kind, values)
    return ex.SerializeToString()


# ------------------------------------------------------------------ generators


def _partition_values(r: random.Random, parts: list, nvals: int) -> dict:
    """Values of each keyed partition for one record (or step) holding `nvals` values; valid unless perturbed."""
    out = {}
    m = nvals
    for kind, arg in reversed(parts):  # the last partition is the innermost
        if kind == "uniform":
            m = m // arg if m % arg == 0 else m // arg + 1
            continue
        rows = r.randint(0 if m == 0 else 1, m + 1) if m else r.choice([0, 0, 1, 2])
        cuts = sorted(r.randint(0, m) for _ in range(max(rows - 1, 0)))
        splits = [0] + cuts + [m] if rows else [0]
        lengths = [b - a for a, b in itertools.pairwise(splits)]
        if kind == "row_splits":
            vals = splits
        elif kind == "row_lengths":
            vals = lengths
        elif kind == "row_starts":
            vals = splits[:-1]
        elif kind == "row_limits":
            vals = splits[1:]
        else:
            vals = [i for i, n in enumerate(lengths) for _ in range(n)]
        out[arg] = vals
        m = len(lengths)
    return out


def _perturb(r: random.Random, vals: list) -> list:
    vals = list(vals)
    how = r.randrange(5)
    if how == 0 or not vals:
        vals.append(r.choice([0, 1, 3, -1]))
    elif how == 1:
        vals.pop(r.randrange(len(vals)))
    elif how == 2:
        vals[r.randrange(len(vals))] = r.choice([-1, 2**32 + 1, 5, 0])
    elif how == 3:
        r.shuffle(vals)
    else:
        vals[r.randrange(len(vals))] += 1
    return vals


def gen_partitions(r: random.Random) -> list:
    parts = []
    for i in range(r.choice([0, 1, 1, 2, 2, 3])):
        kind = r.choice(PARTITION_KINDS)
        parts.append((kind, r.choice([1, 2, 3]) if kind == "uniform" else f"p{i}"))
    return parts


def gen_ragged_example(r: random.Random) -> tuple[list, dict]:
    """(records, specs) of RaggedFeatures over a batch of 0-4 Examples: all six
    partition kinds, nested, empty rows, invalid values with validate on and off."""
    parts = gen_partitions(r)
    dtype = r.choice(["float32", "int64"])
    kind = "f" if dtype == "float32" else "i"
    spec = ("ragged", dtype, "v", parts, r.choice(["int32", "int64"]), r.random() < 0.5)
    records = []
    for _ in range(r.choice([0, 1, 1, 2, 3, 4])):
        n = r.randint(0, 7)
        feats = {"v": (kind, [float(i) if kind == "f" else i for i in range(n)])}
        for key, vals in _partition_values(r, parts, n).items():
            if r.random() < 0.15:
                vals = _perturb(r, vals)
            if r.random() > 0.05:
                feats[key] = ("i", vals)
        if r.random() < 0.05:
            del feats["v"]
        records.append(example(feats))
    return records, {"r": spec}


def gen_ragged_sequence(r: random.Random) -> tuple[list, dict]:
    """(records, sequence specs): a ragged feature list over steps, its
    partition lists usually with as many steps (sometimes not), zero-step and empty batches."""
    parts = [p for p in gen_partitions(r)][:2]
    dtype = r.choice(["float32", "int64"])
    kind = "f" if dtype == "float32" else "i"
    spec = ("ragged", dtype, "v", parts, r.choice(["int32", "int64"]), r.random() < 0.5)
    records = []
    for _ in range(r.choice([0, 1, 1, 2, 3])):
        steps = r.choice([0, 0, 1, 2, 3])
        lists: dict = {"v": (kind, [])}
        pl: dict = {v: ("i", []) for k, v in parts if k != "uniform"}
        for _ in range(steps):
            n = r.randint(0, 5)
            lists["v"][1].append([float(i) if kind == "f" else i for i in range(n)])
            for key, vals in _partition_values(r, parts, n).items():
                pl[key][1].append(_perturb(r, vals) if r.random() < 0.1 else vals)
        for key, (k, st) in pl.items():
            if r.random() < 0.1:
                st.append([0]) if r.random() < 0.5 or not st else st.pop()
            lists[key] = (k, st)
        if steps == 0 and r.random() < 0.5:
            lists = {}
        records.append(sequence_example(lists))
    return records, {"r": spec}


def _bits(values: list) -> bytes:
    return struct.pack(f"<{len(values)}I", *values)


def gen_default_bits(r: random.Random) -> tuple[list, dict]:
    """FixedLenFeature defaults and FixedLenSequenceFeature padding with special float bit patterns."""
    a = [r.choice(SPECIAL_FLOAT_BITS) for _ in range(2)]
    b = r.choice(SPECIAL_FLOAT_BITS)
    specs = {"a": ("fixed", [2], "float32", _bits(a)), "b": ("fls", [], "float32", _bits([b]))}
    records = []
    for _ in range(r.randint(0, 4)):
        feats = {}
        if r.random() < 0.5:
            feats["a"] = ("f", [r.choice([0.5, -2.0]) for _ in range(2)])
        if r.random() < 0.7:
            feats["b"] = ("f", [1.5] * r.randint(0, 3))
        records.append(example(feats))
    return records, specs


GENERATORS = {
    "ragged example": (gen_ragged_example, "example"),
    "ragged sequence": (gen_ragged_sequence, "sequence"),
    "default bits": (gen_default_bits, "example"),
}


def _step_mismatch(records: list, specs: dict) -> bool:
    import tfrx

    for rec in records:
        lists = tfrx.train.SequenceExample.FromString(rec).feature_lists.feature_list
        for d in specs.values():
            steps = {
                len(lists[k].feature) if k in lists else 0
                for k in [d[2]] + [a for kind, a in d[3] if kind != "uniform"]
            }
            if len(steps) > 1:
                return True
    return False


def _unsorted_row_ids(family: str, records: list, specs: dict) -> bool:
    import tfrx

    keys = [a for d in specs.values() if not d[5] for kind, a in d[3] if kind == "value_rowids"]
    for rec in records:
        if family == "ragged example":
            feats = tfrx.train.Example.FromString(rec).features.feature
            lists = [list(feats[k].int64_list.value) for k in keys if k in feats]
        else:
            fl = tfrx.train.SequenceExample.FromString(rec).feature_lists.feature_list
            lists = [list(f.int64_list.value) for k in keys if k in fl for f in fl[k].feature]
        if any(v != sorted(v) for v in lists):
            return True
    return False


def known_difference(family: str, inputs: tuple, tf_out: tuple, rx_out: tuple) -> str | None:
    """The documented difference (docs/parsing.md) that explains a disagreement, if one does."""
    records, specs = inputs
    if family in ("ragged example", "ragged sequence") and _unsorted_row_ids(family, records, specs):
        return "unsorted ValueRowIds with validate=False (tfrx counts rows to the largest id)"
    if family == "ragged sequence" and tf_out[0] == "ok" and rx_out[0] == "error" and _step_mismatch(records, specs):
        return "sequence partition steps differ from value steps (tfrx always raises)"
    return None


def run_case(worker, family: str, r: random.Random) -> tuple[str | None, tuple, tuple, tuple]:
    """(disagreement class or None, tf outcome, tfrx outcome, inputs) of one generated case."""
    gen, how = GENERATORS[family]
    records, specs = gen(r)
    if how == "example":
        tf_out = tf_answer(worker.call(__file__, "tf_parse_example", records, specs))
        rx_out = rx_parse_example(records, specs)
    else:
        tf_out = tf_answer(worker.call(__file__, "tf_parse_sequence", records, {}, specs))
        rx_out = rx_parse_sequence(records, {}, specs)
    diff = compare(tf_out, rx_out)
    known = known_difference(family, (records, specs), tf_out, rx_out) if diff is not None else None
    if known:
        diff = "documented: " + known
    return diff, tf_out, rx_out, (records, specs)


# ------------------------------------------------------------------ the differences table of docs/parsing.md
#
# Each row: (id, function of the library module (tf or tfrx), expectation).
# "same": tfrx's outcome equals TensorFlow's. "tfrx error" / "tfrx ok":
# a documented difference, tfrx's outcome kind given; "pinned": TensorFlow's
# result is not stable, tfrx's value is pinned by its own test. TensorFlow's
# outcome (error, value or crash) is recorded in the golden file either way.


def _R(lib):
    return _io(lib).RaggedFeature


def _splits(lib, name):
    return name if lib.__name__ == "tfrx" else getattr(lib, name)


def _ragged(lib, dtype, parts, *, splits="int32", validate=False, value_key="v"):
    return _R(lib)(
        getattr(lib, dtype),
        value_key=value_key,
        partitions=parts,
        row_splits_dtype=_splits(lib, splits),
        validate=validate,
    )


def _pe(lib, records, specs):
    return _io(lib).parse_example(records if lib.__name__ == "tfrx" else lib.constant(records, lib.string), specs)


def _pse(lib, records, context, sequence):
    recs = records if lib.__name__ == "tfrx" else lib.constant(records, lib.string)
    return _io(lib).parse_sequence_example(recs, context_features=context, sequence_features=sequence)


def t_value_rowids_empty_batch(lib):
    return _pe(lib, [], {"r": _ragged(lib, "float32", [_R(lib).ValueRowIds("i")])})


def t_value_rowids_zero_steps(lib):
    recs = [sequence_example({}), sequence_example({"v": ("f", []), "i": ("i", [])})]
    return _pse(lib, recs, None, {"r": _ragged(lib, "float32", [_R(lib).ValueRowIds("i")])})[1]


def t_value_rowids_wrap_int32(lib):
    recs = [example({"v": ("f", [1.0]), "i": ("i", [2**32 + 1])}), example({"v": ("f", [2.0]), "i": ("i", [0])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).ValueRowIds("i")])})


def t_value_rowids_many_rows(lib):
    recs = [example({"v": ("f", [1.0]), "i": ("i", [3_000_000])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).ValueRowIds("i")], splits="int64")})


def t_value_rowids_unsorted(lib):
    recs = [
        example({"v": ("f", [1.0, 2.0, 3.0]), "i": ("i", [2, 0, 1])}),
        example({"v": ("f", [4.0]), "i": ("i", [1])}),
    ]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).ValueRowIds("i")])})


def t_value_rowids_unsorted_last(lib):
    recs = [example({"v": ("f", [1.0, 2.0]), "i": ("i", [1, 0])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).ValueRowIds("i")])})


def t_value_rowids_negative(lib):
    recs = [example({"v": ("f", [1.0, 2.0]), "i": ("i", [-1, 0])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).ValueRowIds("i")])})


def t_uniform_not_dividing(lib):
    recs = [example({"v": ("f", [1.0, 2.0, 3.0])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).UniformRowLength(2)], validate=False)})


def t_uniform_zero_on_zero_values(lib):
    recs = [example({"v": ("f", [])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).UniformRowLength(0)])})


def t_uniform_zero_on_zero_values_single(lib):
    record = example({"v": ("f", [])})
    spec = {"r": _ragged(lib, "float32", [_R(lib).UniformRowLength(0)])}
    return _io(lib).parse_single_example(record if lib.__name__ == "tfrx" else lib.constant(record, lib.string), spec)


def t_sequence_steps_mismatch(lib):
    recs = [sequence_example({"v": ("f", [[1.0], [2.0]]), "s": ("i", [[0, 1], [0, 1], [0]])})]
    return _pse(lib, recs, None, {"r": _ragged(lib, "float32", [_R(lib).RowSplits("s")])})[1]


def t_sequence_steps_mismatch_lengths(lib):
    recs = [sequence_example({"v": ("f", [[1.0], [2.0]]), "l": ("i", [[1], [1], [0]])})]
    return _pse(lib, recs, None, {"r": _ragged(lib, "float32", [_R(lib).RowLengths("l")])})[1]


def t_sequence_steps_mismatch_hidden(lib):
    recs = [sequence_example({"v": ("f", []), "s": ("i", [[0]])})]
    return _pse(lib, recs, None, {"r": _ragged(lib, "float32", [_R(lib).RowSplits("s")])})[1]


def t_partition_key_empty(lib):
    recs = [example({"v": ("f", [1.0, 2.0]), "": ("i", [1, 1])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).RowLengths("")])})


def t_conflicting_splits_dtype(lib):
    recs = [example({"v": ("f", [1.0, 2.0]), "l": ("i", [1, 1])})]
    return _pe(
        lib,
        recs,
        {
            "r": _ragged(lib, "float32", [_R(lib).RowLengths("l")]),
            "s": _ragged(lib, "int64", [], splits="int64", value_key="l"),
        },
    )


def t_row_starts_no_rows_validate(lib):
    recs = [example({"v": ("f", [1.0, 2.0]), "s": ("i", [])})]
    return _pe(lib, recs, {"r": _ragged(lib, "float32", [_R(lib).RowStarts("s")], validate=True)})


def t_single_row_splits_not_from_zero(lib):
    rec = example({"v": ("f", [1.0, 2.0, 3.0]), "s": ("i", [1, 2, 3])})
    rec = rec if lib.__name__ == "tfrx" else lib.constant(rec)
    return _io(lib).parse_single_example(rec, {"r": _ragged(lib, "float32", [_R(lib).RowSplits("s")])})


def t_single_row_splits_missing(lib):
    rec = example({"v": ("f", [1.0, 2.0])})
    rec = rec if lib.__name__ == "tfrx" else lib.constant(rec)
    return _io(lib).parse_single_example(rec, {"r": _ragged(lib, "float32", [_R(lib).RowSplits("s")])})


def t_snan_default(lib):
    d = np.frombuffer(_bits([0x7F800001, 0xFFC12345]), "<f4").copy()
    p = np.frombuffer(_bits([0x7FA00001]), "<f4").copy()
    io = _io(lib)
    recs = [example({"b": ("f", [1.0])}), example({"b": ("f", [1.0, 2.0, 3.0])})]
    return _pe(
        lib,
        recs,
        {
            "a": io.FixedLenFeature([2], lib.float32, default_value=d),
            "b": io.FixedLenSequenceFeature([], lib.float32, allow_missing=True, default_value=p),
        },
    )


def t_fixed_zero_size_empty_default(lib):
    io = _io(lib)
    return _pe(lib, [example({})], {"a": io.FixedLenFeature([0], lib.float32, default_value=[])})


def t_sequence_empty_batch_required_context(lib):
    io = _io(lib)
    return _pse(lib, [], {"c": io.FixedLenFeature([], lib.int64)}, {"s": io.VarLenFeature(lib.int64)})[0]


def t_fls_zero_size(lib):
    io = _io(lib)
    recs = [sequence_example({"s": ("i", [[], []])})]
    return _pse(lib, recs, None, {"s": io.FixedLenSequenceFeature([0], lib.int64)})[1]


def t_sequence_bytes_past_message(lib):
    # feature_lists {feature_list {key "s" value {feature {bytes_list {value: <length 40, 3 bytes left>}}}}}
    bl = b"\x0a\x28abc"
    feat = b"\x0a" + bytes([len(bl)]) + bl
    fl = b"\x0a" + bytes([len(feat)]) + feat
    entry = b"\x0a\x01s\x12" + bytes([len(fl)]) + fl
    lists = b"\x0a" + bytes([len(entry)]) + entry
    rec = b"\x12" + bytes([len(lists)]) + lists + b"\x1a\x40" + b"x" * 64  # an unknown field after it
    return _pse(lib, [rec], None, {"s": _io(lib).VarLenFeature(lib.string)})[1]


def t_sparse_duplicate_indices(lib):
    io = _io(lib)
    recs = [example({"i": ("i", [1, 0, 1, 1]), "x": ("f", [1.0, 2.0, 3.0, 4.0])})]
    return _pe(lib, recs, {"sp": io.SparseFeature("i", "x", lib.float32, 3)})


def long_prefix_record() -> bytes:
    """An Example whose Feature {int64_list {value: 7}} sits behind a 6-byte length prefix."""
    body = b"\x1a\x02\x08\x07"
    entry = b"\x0a\x01k\x12\x84\x80\x80\x80\x80\x00" + body
    return b"\x0a" + bytes([len(entry) + 2]) + b"\x0a" + bytes([len(entry)]) + entry


def t_parse_length_prefix_over_5_bytes(lib):
    return _pe(lib, [long_prefix_record()], {"k": _io(lib).VarLenFeature(lib.int64)})


TABLE = (
    ("value_rowids_empty_batch", t_value_rowids_empty_batch, "same"),
    ("value_rowids_zero_steps", t_value_rowids_zero_steps, "same"),
    ("value_rowids_wrap_int32", t_value_rowids_wrap_int32, "same"),
    ("value_rowids_many_rows", t_value_rowids_many_rows, "tfrx error"),
    ("value_rowids_unsorted", t_value_rowids_unsorted, "same"),
    ("value_rowids_unsorted_last_not_largest", t_value_rowids_unsorted_last, "tfrx ok"),
    ("value_rowids_negative", t_value_rowids_negative, "same"),
    ("uniform_not_dividing", t_uniform_not_dividing, "same"),
    ("uniform_zero_on_zero_values", t_uniform_zero_on_zero_values, "same"),
    ("uniform_zero_on_zero_values_single", t_uniform_zero_on_zero_values_single, "tfrx error"),
    ("sequence_steps_mismatch", t_sequence_steps_mismatch, "same"),
    ("sequence_steps_mismatch_lengths", t_sequence_steps_mismatch_lengths, "tfrx error"),
    ("sequence_steps_mismatch_hidden", t_sequence_steps_mismatch_hidden, "tfrx error"),
    ("partition_key_empty", t_partition_key_empty, "same"),
    ("conflicting_splits_dtype", t_conflicting_splits_dtype, "same"),
    ("row_starts_no_rows_validate", t_row_starts_no_rows_validate, "same"),
    ("single_row_splits_not_from_zero", t_single_row_splits_not_from_zero, "tfrx ok"),
    ("single_row_splits_missing", t_single_row_splits_missing, "tfrx ok"),
    ("snan_default", t_snan_default, "same"),
    ("fixed_zero_size_empty_default", t_fixed_zero_size_empty_default, "tfrx ok"),
    ("sequence_empty_batch_required_context", t_sequence_empty_batch_required_context, "tfrx ok"),
    ("fls_zero_size", t_fls_zero_size, "tfrx ok"),
    ("sequence_bytes_past_message", t_sequence_bytes_past_message, "tfrx error"),
    ("sparse_duplicate_indices", t_sparse_duplicate_indices, "pinned"),
    ("parse_length_prefix_over_5_bytes", t_parse_length_prefix_over_5_bytes, "same"),
)
TABLE_FUNCS = {name: fn for name, fn, _ in TABLE}


def tf_table_case(tf, name: str):
    return canon(TABLE_FUNCS[name](tf))


def rx_table_case(name: str):
    import tfrx

    return rx_outcome(TABLE_FUNCS[name], tfrx)


def stored(outcome) -> list:
    """An outcome as kept in the golden file: as JSON data, or its SHA-256 when that is large."""
    import hashlib
    import json

    text = json.dumps(list(outcome), sort_keys=True)
    if len(text) > 2000:
        return ["sha256", hashlib.sha256(text.encode()).hexdigest()]
    return json.loads(text)


# ------------------------------------------------------------------ reader quirks (files)


def quirk_files() -> dict:
    """name -> (file bytes, compression): files TensorFlow reads to a quiet end and tfrx rejects."""
    import zlib as _zlib

    import tfrx

    framed = b"".join(
        tfrx._native.record_framing(r).header + r + tfrx._native.record_framing(r).footer for r in (b"one", b"two")
    )
    z = _zlib.compressobj(6, _zlib.DEFLATED, 15, 9)
    zstream = z.compress(framed) + z.flush()
    g = _zlib.compressobj(6, _zlib.DEFLATED, 31, 9)
    gstream = g.compress(framed) + g.flush()
    cut = len(tfrx._native.record_framing(b"one").header) + 3 + 4 + 5  # 5 bytes into the second header
    return {
        "bytes_after_zlib_stream": (zstream + b"\x00junk", "ZLIB"),
        "partial_header_at_end": (framed + b"\x05\x00\x00", ""),
        "gzip_cut_inside_header": (gzip_cut(framed[:cut]), "GZIP"),
        "complete_gzip": (gstream, "GZIP"),
    }


def gzip_cut(prefix: bytes) -> bytes:
    """A GZIP member holding `prefix` with no trailer (a file cut after those bytes)."""
    import zlib as _zlib

    g = _zlib.compressobj(6, _zlib.DEFLATED, 31, 9)
    return g.compress(prefix) + g.flush(_zlib.Z_SYNC_FLUSH)


def tf_read_quirk(tf, name: str):
    import tempfile

    data, compression = quirk_files()[name]
    with tempfile.NamedTemporaryFile(suffix=".tfrecord") as f:
        f.write(data)
        f.flush()
        return [r.numpy().hex() for r in tf.data.TFRecordDataset(f.name, compression_type=compression)]


def rx_read_quirk(name: str, path: str):
    import tfrx

    data, compression = quirk_files()[name]
    with open(path, "wb") as f:
        f.write(data)
    return rx_outcome(lambda: [r.hex() for r in tfrx.read_records(path, compression=compression or None)])
