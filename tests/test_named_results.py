"""Results are small named objects that still unpack as the tuples they replaced."""

from __future__ import annotations

import numpy as np
import pytest

import tfrx
from tfrx.parsing._bytes_array import PackedBytes


def _named(result, fields):
    assert isinstance(result, tuple) and result._fields == fields
    assert tuple(result) == tuple(getattr(result, f) for f in fields)  # unpacks in the documented order
    return result


def _sequence_example() -> bytes:
    return tfrx.make_sequence_example({"id": 7}, {"tok": [[1, 2], [3]]}).SerializeToString()


def test_sequence_example_results():
    record = _sequence_example()
    ctx_spec = {"id": tfrx.FixedLenFeature([], tfrx.int64)}
    seq_spec = {"tok": tfrx.VarLenFeature(tfrx.int64)}

    decoded = _named(tfrx.decode_sequence_example(record), ("context", "feature_lists"))
    context, lists = decoded
    assert context["id"].tolist() == [7] and [v.tolist() for v in lists["tok"]] == [[1, 2], [3]]

    batch = _named(tfrx.parse_sequence_example([record], ctx_spec, seq_spec), ("context", "feature_lists", "lengths"))
    assert batch.context["id"].tolist() == [7]
    single = _named(tfrx.parse_single_sequence_example(record, ctx_spec, seq_spec), ("context", "feature_lists"))
    context, lists = single
    assert int(context["id"]) == 7
    parser = tfrx.SequenceExampleParser(ctx_spec, seq_spec)
    _named(parser.parse([record]), ("context", "feature_lists", "lengths"))
    _named(parser.parse_single(record), ("context", "feature_lists"))


def test_sequence_feature_dicts():
    inferred = _named(tfrx.infer_features([_sequence_example()] * 2), ("context", "sequence"))
    assert set(inferred.context) == {"id"} and set(inferred.sequence) == {"tok"}
    again = _named(tfrx.features_from_json(tfrx.features_to_json(inferred)), ("context", "sequence"))
    assert again == inferred


def test_bytes_array_packed():
    parser = tfrx.ExampleParser({"b": tfrx.FixedLenFeature([2], tfrx.string)}, bytes_as="views")
    column = parser.parse([tfrx.make_example({"b": [b"ab", b"c"]}).SerializeToString()])["b"]
    packed = column.packed()
    assert isinstance(packed, PackedBytes)
    values, offsets = _named(packed, ("values", "offsets"))
    assert bytes(values) == b"abc" and offsets.tolist() == [0, 2, 3]


def test_sample_distorted_bounding_box():
    result = tfrx.image.sample_distorted_bounding_box(
        [40, 60, 3], np.zeros((1, 0, 4), np.float32), seed=1, use_image_if_no_bounding_boxes=True
    )
    begin, size, bboxes = _named(result, ("begin", "size", "bboxes"))
    assert begin.shape == size.shape == (3,) and bboxes.shape == (1, 1, 4)


def test_random_access_locate(tmp_path):
    for i in range(2):
        tfrx.write_records(str(tmp_path / f"p{i}.tfrecord"), [b"x" * 5] * 3)
    ds = tfrx.RandomAccessDataset(str(tmp_path / "p*.tfrecord"))
    path, record_index, offset = _named(ds.locate(4), ("path", "record_index", "offset"))
    assert path.endswith("p1.tfrecord") and record_index == 1 and offset == 21


def test_rank_and_world_size():
    pytest.importorskip("torch")
    from tfrx.integrations.torch import rank_and_world_size

    rank, world_size = _named(rank_and_world_size(2, 4), ("rank", "world_size"))
    assert (rank, world_size) == (2, 4)


def test_demo_results():
    from tfrx.tools.demo import make_images, softmax_regression

    images, labels = _named(make_images(8, 4), ("images", "labels"))
    x = (images.reshape(8, -1).astype(np.float32) - 128) / 64

    def batches(*_):
        return [(x, labels)]

    losses, accuracy = _named(
        softmax_regression(batches, batches, x.shape[1], 2, log=lambda *_: None), ("losses", "accuracy")
    )
    assert len(losses) == 2 and 0 <= accuracy <= 1


def test_commit_shards(tmp_path):
    from tfrx.io._commit import commit_shards, part_path

    part = part_path(str(tmp_path / "data"), ".part0")
    (tmp_path / ".tfrx").mkdir()
    tfrx.write_records(part, [b"a", b"b"])
    paths, manifest = _named(commit_shards([(part, 2)], str(tmp_path / "data")), ("paths", "manifest"))
    assert [p.rsplit("/", 1)[-1] for p in paths] == ["data.tfrecord-00000-of-00001"]
    assert manifest["num_records"] == 2
