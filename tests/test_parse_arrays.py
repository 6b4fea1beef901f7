"""SparseArray and RaggedArray: dense conversion, lists, framework hand-off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parse_differential import enc_example, enc_feature

import tfrx


def _records():
    return [
        enc_example(
            [
                ("v", enc_feature("int64", [1, 2, 3])),
                ("l", enc_feature("int64", [2, 1])),
                ("s", enc_feature("bytes", [b"a", b"b"])),
            ]
        ),
        enc_example(
            [("v", enc_feature("int64", [])), ("l", enc_feature("int64", [])), ("s", enc_feature("bytes", [b"c"]))]
        ),
        enc_example([("v", enc_feature("int64", [4])), ("l", enc_feature("int64", [0, 1]))]),
    ]


def test_sparse_to_dense_and_back(tf):
    out = tfrx.parse_example(_records(), {"v": tfrx.VarLenFeature(tfrx.int64), "s": tfrx.VarLenFeature(tfrx.string)})
    v = out["v"]
    assert v.shape == (3, 3) and v.nnz == 4 and v.dtype == np.int64
    np.testing.assert_array_equal(v.to_dense(), [[1, 2, 3], [0, 0, 0], [4, 0, 0]])
    np.testing.assert_array_equal(v.to_dense(-1), [[1, 2, 3], [-1, -1, -1], [4, -1, -1]])
    st = tf.sparse.SparseTensor(v.indices, v.values, v.dense_shape)
    np.testing.assert_array_equal(tf.sparse.to_dense(st).numpy(), v.to_dense())
    assert out["s"].to_dense().tolist() == [[b"a", b"b"], [b"c", b""], [b"", b""]]


def test_sparse_to_scipy_and_torch():
    v = tfrx.parse_example(_records(), {"v": tfrx.VarLenFeature(tfrx.int64)})["v"]
    scipy = pytest.importorskip("scipy")  # noqa: F841
    np.testing.assert_array_equal(v.to_scipy().toarray(), v.to_dense())
    pytest.importorskip("torch")
    np.testing.assert_array_equal(v.to_torch().to_dense().numpy(), v.to_dense())


def test_sparse_to_torch_refuses_out_of_range_indices():
    # A SparseFeature keeps an index past its size (as TensorFlow does); torch must not get it unchecked.
    pytest.importorskip("torch")
    spec = {"s": tfrx.SparseFeature(index_key="i", value_key="v", dtype=tfrx.float32, size=3)}
    ok = tfrx.encode_examples({"i": [[0, 2]], "v": [[1.0, 2.0]]})
    bad = tfrx.encode_examples({"i": [[0, 7]], "v": [[1.0, 2.0]]})
    assert tfrx.parse_example(ok, spec)["s"].to_torch().to_dense().tolist() == [[1.0, 0.0, 2.0]]
    with pytest.raises(RuntimeError):
        tfrx.parse_example(bad, spec)["s"].to_torch()


def test_ragged_lists_dense_and_splits(tf):
    R = tfrx.RaggedFeature
    spec = {
        "r": R(tfrx.int64, value_key="v", partitions=[R.RowLengths("l")], row_splits_dtype="int64"),
        "flat": R(tfrx.int64, value_key="v", row_splits_dtype="int64"),
    }
    out = tfrx.parse_example(_records(), spec)
    r = out["r"]
    assert r.to_list() == [[[1, 2], [3]], [], [[], [4]]]
    assert r.ragged_rank == 2 and len(r) == 3 and r.bounding_shape() == (3, 2, 2)
    assert [s.tolist() for s in r.nested_row_splits] == [[0, 2, 2, 4], [0, 2, 3, 3, 4]]
    expected = tf.io.parse_example(
        tf.constant(_records()),
        {
            "r": tf.io.RaggedFeature(
                tf.int64, value_key="v", partitions=[tf.io.RaggedFeature.RowLengths("l")], row_splits_dtype=tf.int64
            )
        },
    )
    np.testing.assert_array_equal(r.to_dense(), expected["r"].to_tensor().numpy())
    np.testing.assert_array_equal(out["flat"].to_dense(-7), [[1, 2, 3], [-7, -7, -7], [4, -7, -7]])
    assert out["flat"][2].tolist() == [4]
    assert out["flat"].row_lengths().tolist() == [3, 0, 1]


def test_ragged_to_torch_nested():
    torch = pytest.importorskip("torch")
    flat = tfrx.parse_example(
        _records(), {"f": tfrx.RaggedFeature(tfrx.int64, value_key="v", row_splits_dtype="int64")}
    )["f"]
    nt = flat.to_torch()
    assert isinstance(nt, torch.Tensor) and nt.is_nested
    assert [t.tolist() for t in nt.unbind()] == flat.to_list()


def test_varlen_indices_are_computed_from_row_splits_on_first_use(tf):
    recs = _records()
    out = tfrx.parse_example(recs, {"v": tfrx.VarLenFeature(tfrx.int64)})["v"]
    assert out._indices is None  # nothing written until asked for
    assert [s.tolist() for s in out.nested_row_splits] == [[0, 3, 3, 4]]
    assert out.shape == (3, 3)
    expected = tf.io.parse_example(tf.constant(recs), {"v": tf.io.VarLenFeature(tf.int64)})["v"]
    np.testing.assert_array_equal(out.indices, expected.indices.numpy())
    assert out.indices is out.indices  # computed once
    np.testing.assert_array_equal(out.to_dense(), tf.sparse.to_dense(expected).numpy())


def test_sequence_varlen_indices_from_row_splits(tf):
    from test_parse_sequence import enc_sequence_example as enc_seq  # noqa: PLC0415

    recs = [
        enc_seq([], [("t", [enc_feature("int64", [1, 2]), enc_feature("int64", []), enc_feature("int64", [3])])]),
        enc_seq([], []),
        enc_seq([], [("t", [enc_feature("int64", [4, 5, 6])])]),
    ]
    _, lists, _ = tfrx.parse_sequence_example(recs, sequence_features={"t": tfrx.VarLenFeature(tfrx.int64)})
    t = lists["t"]
    assert t._indices is None and len(t.nested_row_splits) == 2
    _, expected, _ = tf.io.parse_sequence_example(
        tf.constant(recs), sequence_features={"t": tf.io.VarLenFeature(tf.int64)}
    )
    e = expected["t"]
    np.testing.assert_array_equal(t.dense_shape, e.dense_shape.numpy())
    np.testing.assert_array_equal(t.indices, e.indices.numpy())
    assert t.to_ragged().to_list() == [[[1, 2], [], [3]], [], [[4, 5, 6]]]


def test_from_row_splits_and_to_ragged():
    s = tfrx.SparseArray.from_row_splits(np.array([7, 8, 9]), [np.array([0, 2, 2, 3])])
    assert s.shape == (3, 2)
    assert s.indices.tolist() == [[0, 0], [0, 1], [2, 0]]
    assert s.to_ragged().to_list() == [[7, 8], [], [9]]
    # From explicit COO indices (the rows' positions 0, 1, ...).
    coo = tfrx.SparseArray(np.array([[0, 0], [0, 1], [2, 0]]), np.array([7, 8, 9]), [3, 2])
    assert coo.nested_row_splits is None
    assert coo.to_ragged().to_list() == [[7, 8], [], [9]]
    with pytest.raises(ValueError, match="positions 0, 1"):
        tfrx.SparseArray(np.array([[0, 1]]), np.array([7]), [1, 2]).to_ragged()
    # Assigning indices drops the splits they would have come from.
    s.indices = np.array([[0, 0], [1, 0], [2, 1]])
    assert s.nested_row_splits is None and s.indices.tolist() == [[0, 0], [1, 0], [2, 1]]


@pytest.mark.parametrize(
    "splits, values, message",
    [
        ([[0, 2, 1]], [1], "non-decreasing"),
        ([[1, 2]], [1], "start at 0"),
        ([[0, 3]], [1, 2], "3 but there are 2 values"),
        ([[0, 2], [0, 1, 2, 3]], [1, 2, 3], "split 3 rows"),
        ([[0, 2], [0, 5, 1]], [1], "non-decreasing"),
        ([[0, -1, 0]], [], "non-decreasing"),
        ([[]], [], "non-empty"),
        ([[0], [0], [0]], [], "one or two"),
    ],
)
def test_from_row_splits_rejects_bad_splits(splits, values, message):
    with pytest.raises(ValueError, match=message):
        tfrx.SparseArray.from_row_splits(np.array(values, np.int64), [np.array(s, np.int64) for s in splits])


def test_sparse_pickles_lazily_and_eagerly():
    import pickle

    lazy = tfrx.parse_example(_records(), {"v": tfrx.VarLenFeature(tfrx.int64)})["v"]
    again = pickle.loads(pickle.dumps(lazy))
    assert again._indices is None and again == lazy
    eager = tfrx.SparseArray(lazy.indices.copy(), lazy.values, lazy.dense_shape)
    assert pickle.loads(pickle.dumps(eager)) == lazy


@pytest.mark.parametrize(
    "outer, inner",
    [([0, 5], [0, 1]), ([0, 2], [0, 3, 1]), ([3, 1], None), ([-2, 0], None), ([0, 2], [-4, 0, 1])],
)
def test_native_sparse_indices_checks_splits_before_writing(outer, inner):
    from tfrx import _native

    with pytest.raises(ValueError):
        _native.sparse_indices(np.array(outer, np.int64), None if inner is None else np.array(inner, np.int64))


def _splits(lengths):
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


@settings(max_examples=300, deadline=None)
@given(
    row_lengths=st.lists(st.integers(0, 11), max_size=12),
    step_lengths=st.lists(st.lists(st.integers(0, 11), max_size=6), max_size=8),
)
def test_sparse_indices_match_a_reference(row_lengths, step_lengths):
    """Indices from row splits enumerate [row, (step,) position] in order, whatever the row and step lengths."""
    two = tfrx.SparseArray.from_row_splits(np.arange(sum(row_lengths)), [_splits(row_lengths)])
    want2 = [[r, j] for r, n in enumerate(row_lengths) for j in range(n)]
    assert two.indices.shape == (len(want2), 2) and two.indices.tolist() == want2
    flat_steps = [n for row in step_lengths for n in row]
    three = tfrx.SparseArray.from_row_splits(
        np.arange(sum(flat_steps)), [_splits([len(row) for row in step_lengths]), _splits(flat_steps)]
    )
    want3 = [[r, m, j] for r, row in enumerate(step_lengths) for m, n in enumerate(row) for j in range(n)]
    assert three.indices.shape == (len(want3), 3) and three.indices.tolist() == want3
