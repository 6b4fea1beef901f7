import tensorflow as tf
# ruff: noqa: I001  (the first line is the one line a port changes)

# The earlier edition of TensorFlow's "TFRecord and tf.train.Example" guide
# (writing with tf.data: from_tensor_slices, from_generator,
# tf.data.experimental.TFRecordWriter) and what it notes beside the cells
# (parse_example on batches, TF1's tf_record_iterator, serialize_tensor, JPEG
# crops), written as TensorFlow code to run unattended: seeded NumPy data, a
# small embedded JPEG instead of downloaded photos, values recorded with
# report(). tfrecord_guide.py is the current edition, cell by cell.
#
#     python tests/porting/tfrecord_more.py OUT.pickle [WORKDIR]
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
    """Keeps a value as NumPy (np.asarray reads tensors and arrays alike)."""
    if isinstance(value, dict):
        for key in sorted(value):
            report(f"{name}/{key}", value[key])
        return
    if isinstance(value, str):
        RESULTS[name] = value
        return
    if isinstance(value, bytes):  # NumPy converts bytes subclasses (tfrx.tf's scalar strings) only to object arrays
        RESULTS[name] = np.asarray(bytes(value), dtype=object)
        return
    array = np.asarray(value)
    RESULTS[name] = np.asarray(value, dtype=object) if array.dtype.kind == "S" else array  # "S" drops trailing NULs


def report_example(name, serialized):
    """Keeps a serialized Example in canonical form: protobuf writes map entries in no fixed order."""
    serialized = serialized.numpy() if hasattr(serialized, "numpy") else serialized
    RESULTS[name] = tf.train.Example.FromString(serialized).SerializeToString(deterministic=True)


# ---- tf.train.Example data types
def _bytes_feature(value):
    """Returns a bytes_list from a string / byte."""
    if isinstance(value, type(tf.constant(0))):
        value = value.numpy()
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _float_feature(value):
    """Returns a float_list from a float / double."""
    return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))


def _int64_feature(value):
    """Returns an int64_list from a bool / enum / int / uint."""
    # int(): protobuf 5 refuses bools in Int64List, with TensorFlow's classes too (tf-fix).
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))


report("bytes_feature", str(_bytes_feature(b"test_string")))
report("bytes_feature_utf8", str(_bytes_feature(b"test_bytes")))
report("float_feature", str(_float_feature(np.exp(1))))
report("int64_feature_bool", str(_int64_feature(True)))
report("int64_feature", str(_int64_feature(1)))
feature = _float_feature(np.exp(1))
report("float_feature_bytes", feature.SerializeToString())

# ---- Creating a tf.train.Example message
n_observations = 200
rng = np.random.default_rng(0)
feature0 = rng.choice([False, True], n_observations)
feature1 = rng.integers(0, 5, n_observations)
strings = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"])
feature2 = strings[feature1]
feature3 = rng.standard_normal(n_observations)


def serialize_example(feature0, feature1, feature2, feature3):
    """Creates a tf.train.Example message ready to be written to a file."""
    feature = {
        "feature0": _int64_feature(feature0),
        "feature1": _int64_feature(feature1),
        "feature2": _bytes_feature(feature2),
        "feature3": _float_feature(feature3),
    }
    example_proto = tf.train.Example(features=tf.train.Features(feature=feature))
    return example_proto.SerializeToString()


serialized_example = serialize_example(False, 4, b"goat", 0.9876)
report_example("serialized_example", serialized_example)
example_proto = tf.train.Example.FromString(serialized_example)
report("example_proto", str(example_proto))

# ---- TFRecord files using tf.data: writing
features_dataset = tf.data.Dataset.from_tensor_slices((feature0, feature1, feature2, feature3))
for f0, f1, f2, f3 in features_dataset.take(1):
    report("slice/f0", f0)
    report("slice/f1", f1)
    report("slice/f2", f2)
    report("slice/f3", f3)


def generator():
    for features in features_dataset:
        yield serialize_example(*features)


serialized_features_dataset = tf.data.Dataset.from_generator(generator, output_types=tf.string, output_shapes=())
filename = os.path.join(WORKDIR, "test.tfrecord")
writer = tf.data.experimental.TFRecordWriter(filename)
writer.write(serialized_features_dataset)

# ---- Reading a TFRecord file
filenames = [filename]
raw_dataset = tf.data.TFRecordDataset(filenames)
for i, raw_record in enumerate(raw_dataset.take(10)):
    report_example(f"raw_record/{i}", raw_record)

feature_description = {
    "feature0": tf.io.FixedLenFeature([], tf.int64, default_value=0),
    "feature1": tf.io.FixedLenFeature([], tf.int64, default_value=0),
    "feature2": tf.io.FixedLenFeature([], tf.string, default_value=""),
    "feature3": tf.io.FixedLenFeature([], tf.float32, default_value=0.0),
}


def _parse_function(example_proto):
    # Parse the input tf.train.Example proto using the dictionary above.
    return tf.io.parse_single_example(example_proto, feature_description)


parsed_dataset = raw_dataset.map(_parse_function)
for i, parsed_record in enumerate(parsed_dataset.take(10)):
    report(f"parsed/{i}", parsed_record)
report("record_count", sum(1 for _ in raw_dataset))

# ---- TFRecord files in Python: tf.io.TFRecordWriter
with tf.io.TFRecordWriter(filename) as writer:
    for i in range(n_observations):
        example = serialize_example(feature0[i], feature1[i], feature2[i], feature3[i])
        writer.write(example)

report("file_size", len(tf.io.read_file(filename).numpy()))
filenames = [filename]
raw_dataset = tf.data.TFRecordDataset(filenames)
for raw_record in raw_dataset.take(1):
    example = tf.train.Example()
    example.ParseFromString(raw_record.numpy())
    report("parsed_in_python", str(example))

result = {}
for key, feature in example.features.feature.items():
    kind = feature.WhichOneof("kind")
    result[key] = np.array(getattr(feature, kind).value)
report("as_dict", result)

# A batch: parse_example over a batch of records.
for batch in raw_dataset.batch(32).take(2):
    report("parse_example", tf.io.parse_example(batch, feature_description))

# The records again through TensorFlow 1's iterator.
for i, record in enumerate(tf.compat.v1.python_io.tf_record_iterator(filename)):
    if i < 5:
        report_example(f"tf1_iterator/{i}", record)
report("tf1_iterator_count", i + 1)

# ---- serialize_tensor / parse_tensor (the format notes of the guide)
tensor = tf.constant([[1.5, 2.0], [3.25, -4.0]])
serialized = tf.io.serialize_tensor(tensor)
report("serialize_tensor", serialized)
report("parse_tensor", tf.io.parse_tensor(serialized, out_type=tf.float32))
report("serialize_tensor_str", tf.io.serialize_tensor(tf.constant([b"a", b"bc"])))

# ---- Walkthrough: reading and writing image data
image_string = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAYACADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD4B0TwJ9393+legaJ4E+7+7/SvStE8Cfd/d/pXf6J4E+7+7/St8JXPL4e4q294810TwJ9393+ld/ofgT7v7v8ASvStE8Cfd/d/pXf6J4E+7+7/AEr7HCVz+meHuKtveOL0PwJ9393+ld/ongT7v7v9KKK/MMJNn+YHD2Y4jT3j0DRPAn3f3f6V29j4Ri0+386ZdqjoAOWPoPeiiu/Oczr5Vk+Kx+Htz04Skr6q6Wl9vzP6g4Yx1edSEXLdo//Z"
)  # the guide downloads two photos with tf.keras.utils.get_file
image_labels = {"gradient": 0}
report("decoded_shape", tf.io.decode_jpeg(image_string).shape)
report("decoded_pixels", tf.io.decode_jpeg(image_string))


def image_example(image_string, label):
    image_shape = tf.io.decode_jpeg(image_string).shape
    feature = {
        "height": _int64_feature(image_shape[0]),
        "width": _int64_feature(image_shape[1]),
        "depth": _int64_feature(image_shape[2]),
        "label": _int64_feature(label),
        "image_raw": _bytes_feature(image_string),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))


for line in str(image_example(image_string, 0)).split("\n")[:15]:
    report("image_example_line/" + str(len(RESULTS)), line)

record_file = os.path.join(WORKDIR, "images.tfrecords")
with tf.io.TFRecordWriter(record_file) as writer:
    for filename, label in image_labels.items():
        tf_example = image_example(image_string, label)
        writer.write(tf_example.SerializeToString())

raw_image_dataset = tf.data.TFRecordDataset(record_file)
image_feature_description = {
    "height": tf.io.FixedLenFeature([], tf.int64),
    "width": tf.io.FixedLenFeature([], tf.int64),
    "depth": tf.io.FixedLenFeature([], tf.int64),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "image_raw": tf.io.FixedLenFeature([], tf.string),
}


def _parse_image_function(example_proto):
    return tf.io.parse_single_example(example_proto, image_feature_description)


parsed_image_dataset = raw_image_dataset.map(_parse_image_function)
for image_features in parsed_image_dataset:
    image_raw = image_features["image_raw"]
    report("image_raw", image_raw)
    report("image_back", tf.io.decode_jpeg(image_raw, channels=3))
    report("image_crop", tf.io.decode_and_crop_jpeg(image_raw, [3, 5, 10, 12], channels=1))

# ---- The tf.data guide, "Consuming TFRecord data" (its file is a download; the one written above stands in)
dataset = tf.data.TFRecordDataset(filenames=[record_file])
raw_example = next(iter(dataset))
parsed = tf.train.Example.FromString(raw_example.numpy())
report("consuming/label", str(parsed.features.feature["label"]))
report("consuming/height", parsed.features.feature["height"].int64_list.value[0])

with open(OUT, "wb") as f:
    pickle.dump({"results": RESULTS, "torch_imported": "torch" in sys.modules}, f)
