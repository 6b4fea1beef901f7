import tensorflow as tf
# ruff: noqa: I001, E402, E501, E701, A001, F811  (the first line is the one line a port changes)
# The guide's cells as published (its quotes and two-space indents): not formatted.
# fmt: off

# TensorFlow's "tf.data: Build TensorFlow input pipelines" guide
# (site/en/guide/data.ipynb, tensorflow/docs at TF 2.21): the cells that use
# what tfrx has (tf.data sources and transformations, TFRecord files,
# tf.io.parse_example, windows), in order and unchanged. Lines marked
# "harness:" are not the guide's: they make the run unattended (a working
# directory, a seeded NumPy, a local TFRecord file for the downloaded FSNS
# one, print and matplotlib recorded with report()). Cells left out use what
# tfrx does not have (tf.random, tf.keras, tf.strings, TextLineDataset,
# CsvDataset, Dataset.reduce, rejection_resample, tf.train.Checkpoint); the
# shuffled cell is run but its order, which differs, is not compared.
#
#     python tests/porting/data_guide.py OUT.pickle [WORKDIR]
import os, struct, types, zlib  # harness:

from _harness import print, report, save, start, state  # harness: tests/porting/_harness.py
WORKDIR, RESULTS = start(tf)  # harness:


plt = types.SimpleNamespace(  # harness: matplotlib.pyplot, recording what it would draw
    imshow=lambda image: report(f"imshow/{len(RESULTS):04d}", image),
    axis=lambda *a: None,
    title=lambda text: report(f"title/{len(RESULTS):04d}", text),
)


def png(width, height):  # harness: a small RGB PNG, written without an image library
    rows = b"".join(b"\x00" + bytes((x * 40 + y * 7) % 256 for x in range(width) for _ in range(3)) for y in range(height))
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# ---- cell 2 (matplotlib and pandas are not needed by the cells kept here)
import pathlib  # noqa: F401
import os
import numpy as np

np.set_printoptions(precision=4)

# ---- cell 3
dataset = tf.data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])

# ---- cell 4
for elem in dataset:
  print(elem.numpy())

# ---- cell 5
it = iter(dataset)

print(next(it).numpy())

# ---- cell 19
def count(stop):
  i = 0
  while i<stop:
    yield i
    i += 1

# ---- cell 20
for n in count(5):
  print(n)

# ---- cell 21
ds_counter = tf.data.Dataset.from_generator(count, args=[25], output_types=tf.int32, output_shapes = (), )

# ---- cell 22
for count_batch in ds_counter.repeat().batch(10).take(10):
  print(count_batch.numpy())

# ---- cell 23
np.random.seed(0)  # harness:
def gen_series():
  i = 0
  while True:
    size = np.random.randint(0, 10)
    yield i, np.random.normal(size=(size,))
    i += 1

# ---- cell 24
for i, series in gen_series():
  print(i, ":", str(series))
  if i > 5:
    break

# ---- cell 25
ds_series = tf.data.Dataset.from_generator(
    gen_series,
    output_types=(tf.int32, tf.float32),
    output_shapes=((), (None,)))

# ---- cell 26
state.recording = False  # harness: the shuffle order differs from TensorFlow's
ds_series_batch = ds_series.shuffle(20).padded_batch(10)

ids, sequence_batch = next(iter(ds_series_batch))
print(ids.numpy())
print()
print(sequence_batch.numpy())
state.recording = True  # harness:
report("cell26", str((ids.numpy().shape, ids.numpy().dtype.name, sequence_batch.numpy().dtype.name, sequence_batch.numpy().shape[0])))  # harness:

# ---- cell 33
fsns_test_file = os.path.abspath("fsns.tfrec")  # harness: the guide downloads FSNS test data with tf.keras.utils.get_file
with tf.io.TFRecordWriter(fsns_test_file) as writer:  # harness:
  for i in range(12):  # harness:
    feature = {"image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png(8 + i, 4)])),  # harness:
               "image/text": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"Rue %d" % i]))}  # harness:
    writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())  # harness:

# ---- cell 34
dataset = tf.data.TFRecordDataset(filenames = [fsns_test_file])

# ---- cell 35
raw_example = next(iter(dataset))
parsed = tf.train.Example.FromString(raw_example.numpy())

report("cell35", str(parsed.features.feature['image/text']))  # harness: the cell shows it

# ---- cell 62
inc_dataset = tf.data.Dataset.range(100)
dec_dataset = tf.data.Dataset.range(0, -100, -1)
dataset = tf.data.Dataset.zip((inc_dataset, dec_dataset))
batched_dataset = dataset.batch(4)

for batch in batched_dataset.take(4):
  print([arr.numpy() for arr in batch])

# ---- cell 64
batched_dataset = dataset.batch(7, drop_remainder=True)
report("cell64", [b[0].shape for b in batched_dataset.take(2)])  # harness: the cell shows the dataset's shapes

# ---- cell 85
dataset = tf.data.TFRecordDataset(filenames = [fsns_test_file])

# ---- cell 86
raw_example = next(iter(dataset))
parsed = tf.train.Example.FromString(raw_example.numpy())

feature = parsed.features.feature
raw_img = feature['image/encoded'].bytes_list.value[0]
img = tf.image.decode_png(raw_img)
plt.imshow(img)
plt.axis('off')
_ = plt.title(feature["image/text"].bytes_list.value[0])

# ---- cell 87
raw_example = next(iter(dataset))

# ---- cell 88
def tf_parse(eg):
  example = tf.io.parse_example(
      eg[tf.newaxis], {
          'image/encoded': tf.io.FixedLenFeature(shape=(), dtype=tf.string),
          'image/text': tf.io.FixedLenFeature(shape=(), dtype=tf.string)
      })
  return example['image/encoded'][0], example['image/text'][0]

# ---- cell 89
img, txt = tf_parse(raw_example)
print(txt.numpy())
print(repr(img.numpy()[:20]), "...")

# ---- cell 90
decoded = dataset.map(tf_parse)

# ---- cell 91
image_batch, text_batch = next(iter(decoded.batch(10)))
report("cell91", image_batch.shape)  # harness: the cell shows image_batch.shape
report("cell91/text", text_batch)  # harness:

# ---- cell 92
range_ds = tf.data.Dataset.range(100000)

# ---- cell 93
batches = range_ds.batch(10, drop_remainder=True)

for batch in batches.take(5):
  print(batch.numpy())

# ---- cell 94
def dense_1_step(batch):
  # Shift features and labels one step relative to each other.
  return batch[:-1], batch[1:]

predict_dense_1_step = batches.map(dense_1_step)

for features, label in predict_dense_1_step.take(3):
  print(features.numpy(), " => ", label.numpy())

# ---- cell 95
batches = range_ds.batch(15, drop_remainder=True)

def label_next_5_steps(batch):
  return (batch[:-5],   # Inputs: All except the last 5 steps
          batch[-5:])   # Labels: The last 5 steps

predict_5_steps = batches.map(label_next_5_steps)

for features, label in predict_5_steps.take(3):
  print(features.numpy(), " => ", label.numpy())

# ---- cell 96
feature_length = 10
label_length = 3

features = range_ds.batch(feature_length, drop_remainder=True)
labels = range_ds.batch(feature_length).skip(1).map(lambda labels: labels[:label_length])

predicted_steps = tf.data.Dataset.zip((features, labels))

for features, label in predicted_steps.take(5):
  print(features.numpy(), " => ", label.numpy())

# ---- cell 97 (without its print of the window datasets' reprs)
window_size = 5

windows = range_ds.window(window_size, shift=1)

# ---- cell 98
for x in windows.flat_map(lambda x: x).take(30):
   print(x.numpy(), end=' ')

# ---- cell 99
def sub_to_batch(sub):
  return sub.batch(window_size, drop_remainder=True)

for example in windows.flat_map(sub_to_batch).take(5):
  print(example.numpy())

# ---- cell 100
def make_window_dataset(ds, window_size=5, shift=1, stride=1):
  windows = ds.window(window_size, shift=shift, stride=stride)

  def sub_to_batch(sub):
    return sub.batch(window_size, drop_remainder=True)

  windows = windows.flat_map(sub_to_batch)
  return windows

# ---- cell 101
ds = make_window_dataset(range_ds, window_size=10, shift = 5, stride=3)

for example in ds.take(10):
  print(example.numpy())

# ---- cell 102
dense_labels_ds = ds.map(dense_1_step)

for inputs,labels in dense_labels_ds.take(3):
  print(inputs.numpy(), "=>", labels.numpy())

save()  # harness:
