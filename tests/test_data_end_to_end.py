"""The whole path: TFRecord files of Examples -> shuffle, batch, parse, prefetch -> a training step."""

import numpy as np
import pytest

import tfrx
from tfrx.data import TFRecordDataset

pytestmark = pytest.mark.skipif(
    not (hasattr(tfrx.io, "RecordReader") and hasattr(tfrx, "parse_example")),
    reason="needs the record reader and the Example parser",
)


def _write(tf, tmp_path, files=3, per_file=50):
    rng = np.random.default_rng(0)
    paths = []
    for f in range(files):
        path = str(tmp_path / f"train-{f:05d}-of-{files:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for i in range(per_file):
                x = rng.normal(size=16).astype(np.float32)
                feature = {
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(x.sum() > 0)])),
                    "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[f * 1000 + i])),
                }
                w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
        paths.append(path)
    return paths


def _spec():
    return {
        "x": tfrx.FixedLenFeature([16], tfrx.float32),
        "label": tfrx.FixedLenFeature([], tfrx.int64),
        "id": tfrx.FixedLenFeature([], tfrx.int64),
    }


def test_pipeline_matches_tf(tf, tmp_path):
    paths = _write(tf, tmp_path)
    spec_tf = {
        "x": tf.io.FixedLenFeature([16], tf.float32),
        "label": tf.io.FixedLenFeature([], tf.int64),
        "id": tf.io.FixedLenFeature([], tf.int64),
    }
    ours = list(TFRecordDataset(paths, num_parallel_reads=2).batch(32).map(lambda b: tfrx.parse_example(b, _spec())))
    theirs = list(
        tf.data.TFRecordDataset(paths, num_parallel_reads=2)
        .batch(32)
        .map(lambda b: tf.io.parse_example(b, spec_tf))
        .as_numpy_iterator()
    )
    assert len(ours) == len(theirs) == 5
    for a, b in zip(ours, theirs):
        for k in spec_tf:
            np.testing.assert_array_equal(a[k], b[k])
    fast = list(TFRecordDataset(paths).batch(32).parse(_spec()))
    slow = list(
        tf.data.TFRecordDataset(paths).batch(32).map(lambda b: tf.io.parse_example(b, spec_tf)).as_numpy_iterator()
    )
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a["id"], b["id"])


@pytest.mark.slow
def test_torch_training_steps(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    _write(tfrx, tmp_path)  # tfrx's writer and tf.train messages: TensorFlow never loads beside torch
    ds = (
        TFRecordDataset(tfrx.data.Dataset.list_files(str(tmp_path / "train-*.tfrecord"), seed=0))
        .shuffle(64, seed=0)
        .batch(25)
        .parse(_spec())
        .map(lambda b: (b["x"], b["label"]))
        .prefetch(2)
    )
    model = torch.nn.Linear(16, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in DataLoader(ds.to_torch(), batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=60):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    assert steps == 6  # 150 records; each worker reads whole files and batches its own stream


def test_resume_over_files_with_parse(tf, tmp_path):
    from tfrx.testing import assert_resumes_exactly

    paths = _write(tf, tmp_path, files=2, per_file=20)
    assert_resumes_exactly(lambda: TFRecordDataset(paths).shuffle(8, seed=1).batch(6).parse(_spec()).prefetch(2))
    assert_resumes_exactly(lambda: TFRecordDataset(paths).batch(7).parse(_spec()).unbatch(), steps=range(13))
