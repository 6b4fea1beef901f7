import tensorflow as tf
# ruff: noqa: I001  (the first line is the one line a port changes)

# The input pipelines of the project's examples (examples/*.py: BERT
# pretraining records, JPEG images, raw images, SequenceExamples, an
# image-classifier input) written as TensorFlow code, to check that they port
# by changing the import line. Values are recorded with report(); lines
# marked "porting:" are listed in docs/porting.md.
#
#     python tests/porting/project_tutorials.py OUT.pickle [WORKDIR]
import base64
import os
import pickle
import sys
import tempfile

import numpy as np

OUT = sys.argv[1]
WORKDIR = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
RESULTS: dict = {}


def report(name, value):
    if isinstance(value, dict):
        for key in sorted(value):
            report(f"{name}/{key}", value[key])
        return
    if hasattr(value, "values") and hasattr(value, "dense_shape"):  # a sparse tensor
        for part in ("indices", "values", "dense_shape"):
            report(f"{name}/{part}", getattr(value, part))
        return
    if isinstance(value, bytes):  # NumPy converts bytes subclasses (tfrx.tf's scalar strings) only to object arrays
        RESULTS[name] = np.asarray(bytes(value), dtype=object)
        return
    array = np.asarray(value)
    RESULTS[name] = np.asarray(value, dtype=object) if array.dtype.kind == "S" else array


rng = np.random.default_rng(7)

# ---- BERT pretraining records (examples/bert_pretraining.py)
SEQ_LEN, MAX_PRED = 16, 4
bert_path = os.path.join(WORKDIR, "bert.tfrecord")
with tf.io.TFRecordWriter(bert_path) as writer:
    for i in range(20):
        feature = {
            "input_ids": tf.train.Feature(
                int64_list=tf.train.Int64List(value=rng.integers(0, 30000, SEQ_LEN).tolist())
            ),
            "input_mask": tf.train.Feature(int64_list=tf.train.Int64List(value=[1] * SEQ_LEN)),
            "masked_lm_positions": tf.train.Feature(
                int64_list=tf.train.Int64List(value=rng.integers(0, SEQ_LEN, MAX_PRED).tolist())
            ),
            "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=rng.random(MAX_PRED).tolist())),
            "next_sentence_labels": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
        }
        writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())

name_to_features = {
    "input_ids": tf.io.FixedLenFeature([SEQ_LEN], tf.int64),
    "input_mask": tf.io.FixedLenFeature([SEQ_LEN], tf.int64),
    "masked_lm_positions": tf.io.FixedLenFeature([MAX_PRED], tf.int64),
    "masked_lm_weights": tf.io.FixedLenFeature([MAX_PRED], tf.float32),
    "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
}


def decode_record(record):
    example = tf.io.parse_single_example(record, name_to_features)
    for name in list(example.keys()):
        t = example[name]
        if t.dtype == tf.int64:
            t = tf.cast(t, tf.int32)
        example[name] = t
    return example


ds = (
    tf.data.TFRecordDataset([bert_path])
    .map(decode_record, num_parallel_calls=tf.data.AUTOTUNE)
    .batch(8, drop_remainder=True)
)
for i, batch in enumerate(ds):
    report(f"bert/{i}", batch)
for i, batch in enumerate(
    tf.data.TFRecordDataset(bert_path).batch(6).map(lambda b: tf.io.parse_example(b, name_to_features))
):
    report(f"bert_batch_parse/{i}", batch)

# ---- JPEG images (examples/jpeg_images.py, imagenet_shards.py)
JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAYACADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD4B0TwJ9393+legaJ4E+7+7/SvStE8Cfd/d/pXf6J4E+7+7/St8JXPL4e4q294810TwJ9393+ld/ofgT7v7v8ASvStE8Cfd/d/pXf6J4E+7+7/AEr7HCVz+meHuKtveOL0PwJ9393+ld/ongT7v7v9KKK/MMJNn+YHD2Y4jT3j0DRPAn3f3f6V29j4Ri0+386ZdqjoAOWPoPeiiu/Oczr5Vk+Kx+Htz04Skr6q6Wl9vzP6g4Yx1edSEXLdo//Z"
)
img_path = os.path.join(WORKDIR, "images.tfrecord")
with tf.io.TFRecordWriter(img_path) as writer:
    for label in range(3):
        feature = {
            "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[JPEG])),
            "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label + 1])),
        }
        writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())

FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/class/label": tf.io.FixedLenFeature([], tf.int64),
}


def parse_and_decode(record):
    parsed = tf.io.parse_single_example(record, FEATURES)
    image = tf.io.decode_jpeg(parsed["image/encoded"], channels=3)
    image = tf.image.convert_image_dtype(image, tf.float32)
    return image, parsed["image/class/label"] - 1


def train_augment(image, label):
    image = tf.image.resize_with_crop_or_pad(image, 28, 28)
    image = tf.image.central_crop(image, 0.75)
    image = tf.image.resize(image, [16, 16])
    image = tf.image.per_image_standardization(image)
    return image, label


images = tf.data.TFRecordDataset(img_path).map(parse_and_decode).map(train_augment).batch(2)
for i, (image, label) in enumerate(images):
    report(f"resized_images/{i}", image)
    report(f"labels/{i}", label)

# ---- raw images (examples/raw_images.py)
raw = (np.arange(4 * 5 * 3) % 256).astype(np.uint8).reshape(4, 5, 3)
raw_path = os.path.join(WORKDIR, "raw.tfrecord")
with tf.io.TFRecordWriter(raw_path) as writer:
    feature = {
        "raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[raw.tobytes()])),
        "shape": tf.train.Feature(int64_list=tf.train.Int64List(value=list(raw.shape))),
        "tensor": tf.train.Feature(
            bytes_list=tf.train.BytesList(value=[tf.io.serialize_tensor(raw.astype(np.float32)).numpy()])
        ),
    }
    writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
for record in tf.data.TFRecordDataset(raw_path):
    parsed = tf.io.parse_single_example(
        record,
        {
            "raw": tf.io.FixedLenFeature([], tf.string),
            "shape": tf.io.FixedLenFeature([3], tf.int64),
            "tensor": tf.io.FixedLenFeature([], tf.string),
        },
    )
    report("raw_image", tf.reshape(tf.io.decode_raw(parsed["raw"], tf.uint8), parsed["shape"]))
    report("raw_tensor", tf.io.parse_tensor(parsed["tensor"], tf.float32))
    report("raw_flip", tf.image.flip_left_right(tf.reshape(tf.io.decode_raw(parsed["raw"], tf.uint8), parsed["shape"])))

# ---- SequenceExamples (examples/sequence_examples.py)
seq_path = os.path.join(WORKDIR, "seq.tfrecord")
with tf.io.TFRecordWriter(seq_path) as writer:
    for i in range(4):
        frames = [tf.train.Feature(float_list=tf.train.FloatList(value=rng.random(3).tolist())) for _ in range(i + 1)]
        tokens = [
            tf.train.Feature(int64_list=tf.train.Int64List(value=rng.integers(0, 100, i % 3 + 1).tolist()))
            for _ in range(i + 1)
        ]
        example = tf.train.SequenceExample(
            context=tf.train.Features(
                feature={"id": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"clip-{i}".encode()]))}
            ),
            feature_lists=tf.train.FeatureLists(
                feature_list={
                    "frames": tf.train.FeatureList(feature=frames),
                    "tokens": tf.train.FeatureList(feature=tokens),
                }
            ),
        )
        writer.write(example.SerializeToString())
context_features = {"id": tf.io.FixedLenFeature([], tf.string)}
sequence_features = {"frames": tf.io.FixedLenSequenceFeature([3], tf.float32), "tokens": tf.io.VarLenFeature(tf.int64)}
for i, record in enumerate(tf.data.TFRecordDataset(seq_path)):
    context, sequences = tf.io.parse_single_sequence_example(
        record, context_features=context_features, sequence_features=sequence_features
    )
    report(f"seq/{i}/context", context)
    report(f"seq/{i}/sequence", sequences)

# ---- reading with options and tf.data plumbing
files = tf.data.Dataset.list_files(os.path.join(WORKDIR, "*.tfrecord"), shuffle=False)
report("files", [os.path.basename(f.numpy()) for f in files])
counts = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
report("record_total", sum(1 for _ in counts))
report(
    "interleave",
    [len(r.numpy()) for r in files.interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=1)],
)
report("cardinality", tf.data.experimental.cardinality(tf.data.Dataset.range(10).batch(3)))
for i, b in enumerate(tf.data.Dataset.range(10).batch(4)):
    report(f"range_batch/{i}", b)
spec = tf.TensorSpec(shape=(None, 3), dtype=tf.float32)
report(
    "spec",
    [
        spec.is_compatible_with(tf.TensorSpec((2, 3), tf.float32)),
        spec.is_compatible_with(tf.TensorSpec((2, 4), tf.float32)),
        spec.is_compatible_with(tf.TensorSpec((2, 3), tf.int64)),
    ],
)

with open(OUT, "wb") as f:
    pickle.dump({"results": RESULTS, "torch_imported": "torch" in sys.modules}, f)
