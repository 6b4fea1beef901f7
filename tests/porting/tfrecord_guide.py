import tensorflow as tf
# ruff: noqa: I001, E402, E501, E701, A001  (the first line is the one line a port changes)
# The guide's cells as published (its quotes and two-space indents): not formatted.
# fmt: off

# TensorFlow's "TFRecord and tf.train.Example" guide
# (site/en/tutorials/load_data/tfrecord.ipynb, tensorflow/docs at TF 2.21),
# its code cells in order and unchanged. Lines marked "harness:" are not the
# guide's: they make the run unattended (a working directory, a seeded NumPy,
# local JPEGs instead of downloaded photos, print() and IPython's display
# recorded with report()); cells that are shell commands or notebook display
# only are left out. The one line marked "tf-fix:" differs from the guide
# because TensorFlow itself fails on it today (docs/porting.md).
#
#     python tests/porting/tfrecord_guide.py OUT.pickle [WORKDIR]
import base64, os, types  # harness:

from _harness import canonical, print, report, save, start  # harness: tests/porting/_harness.py
WORKDIR, RESULTS = start(tf)  # harness:


JPEG = base64.b64decode("/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAYACADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD4B0TwJ9393+legaJ4E+7+7/SvStE8Cfd/d/pXf6J4E+7+7/St8JXPL4e4q294810TwJ9393+ld/ofgT7v7v8ASvStE8Cfd/d/pXf6J4E+7+7/AEr7HCVz+meHuKtveOL0PwJ9393+ld/ongT7v7v9KKK/MMJNn+YHD2Y4jT3j0DRPAn3f3f6V29j4Ri0+386ZdqjoAOWPoPeiiu/Oczr5Vk+Kx+Htz04Skr6q6Wl9vzP6g4Yx1edSEXLdo//Z")  # harness: a 32x24 JPEG stands in for the two photos
display = types.SimpleNamespace(  # harness: IPython.display, recording what it would show
    display=lambda obj: report(f"display/{len(RESULTS):04d}", obj),
    Image=lambda filename=None, data=None: data if data is not None else open(filename, "rb").read(),
    HTML=lambda html: html,
)

# ---- cell 1
import numpy as np

# ---- cell 2
# The following functions can be used to convert a value to a type compatible
# with tf.train.Example.

def _bytes_feature(value):
  """Returns a bytes_list from a string / byte."""
  if isinstance(value, type(tf.constant(0))):
    value = value.numpy() # BytesList won't unpack a string from an EagerTensor.
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

def _float_feature(value):
  """Returns a float_list from a float / double."""
  return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))

def _int64_feature(value):
  """Returns an int64_list from a bool / enum / int / uint."""
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))  # tf-fix: protobuf 5 refuses bools here, under TensorFlow too

# ---- cell 3
print(_bytes_feature(b'test_string'))
print(_bytes_feature(u'test_bytes'.encode('utf-8')))

print(_float_feature(np.exp(1)))

print(_int64_feature(True))
print(_int64_feature(1))

# ---- cell 4
feature = _float_feature(np.exp(1))

report("cell4", feature.SerializeToString())  # harness: the cell shows feature.SerializeToString()

# ---- cell 5
np.random.seed(0)  # harness: the same observations in every run
# The number of observations in the dataset.
n_observations = int(1e4)

# Boolean feature, encoded as False or True.
feature0 = np.random.choice([False, True], n_observations)

# Integer feature, random from 0 to 4.
feature1 = np.random.randint(0, 5, n_observations)

# String feature.
strings = np.array([b'cat', b'dog', b'chicken', b'horse', b'goat'])
feature2 = strings[feature1]

# Float feature, from a standard normal distribution.
feature3 = np.random.randn(n_observations)

# ---- cell 6
@tf.py_function(Tout=tf.string)
def serialize_example(feature0, feature1, feature2, feature3):
  """
  Creates a tf.train.Example message ready to be written to a file.
  """
  # Create a dictionary mapping the feature name to the tf.train.Example-compatible
  # data type.
  feature = {
      'feature0': _int64_feature(feature0),
      'feature1': _int64_feature(feature1),
      'feature2': _bytes_feature(feature2),
      'feature3': _float_feature(feature3),
  }

  # Create a Features message using tf.train.Example.

  example_proto = tf.train.Example(features=tf.train.Features(feature=feature))
  return example_proto.SerializeToString()

# ---- cell 7
# This is an example observation from the dataset.

example_observation = [False, 4, b'goat', 0.9876]
serialized_example = serialize_example(*example_observation)
report("cell7", canonical(repr(serialized_example)))  # harness: the cell shows serialized_example

# ---- cell 8
example_proto = tf.train.Example.FromString(serialized_example.numpy())
report("cell8", str(example_proto))  # harness: the cell shows example_proto

# ---- cell 9
filename = 'test.tfrecord'

# ---- cell 10
# Write the `tf.train.Example` observations to the file.
with tf.io.TFRecordWriter(filename) as writer:
  for i in range(n_observations):
    example = serialize_example(feature0[i], feature1[i], feature2[i], feature3[i])
    writer.write(example.numpy())

report("cell11", os.path.getsize(filename))  # harness: cell 11 is `!du -sh {filename}`

# ---- cell 12
filenames = [filename]
raw_dataset = tf.data.TFRecordDataset(filenames)

# ---- cell 13
for raw_record in raw_dataset.take(1):
  example = tf.train.Example()
  example.ParseFromString(raw_record.numpy())
  print(example)

# ---- cell 14
result = {}
# example.features.feature is the dictionary
for key, feature in example.features.feature.items():
  # The values are the Feature objects which contain a `kind` which contains:
  # one of three fields: bytes_list, float_list, int64_list

  kind = feature.WhichOneof('kind')
  result[key] = np.array(getattr(feature, kind).value)

report("cell14", result)  # harness: the cell shows result

# ---- cell 15
filenames = [filename]
raw_dataset = tf.data.TFRecordDataset(filenames)

# ---- cell 16
for raw_record in raw_dataset.take(10):
  print(repr(raw_record))

# ---- cell 17
# Create a description of the features.
feature_description = {
    'feature0': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    'feature1': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    'feature2': tf.io.FixedLenFeature([], tf.string, default_value=''),
    'feature3': tf.io.FixedLenFeature([], tf.float32, default_value=0.0),
}

def _parse_function(example_proto):
  # Parse the input `tf.train.Example` proto using the dictionary above.
  return tf.io.parse_single_example(example_proto, feature_description)

# ---- cell 18
parsed_dataset = raw_dataset.map(_parse_function)

# ---- cell 19
for parsed_record in parsed_dataset.take(10):
  print(repr(parsed_record))

# ---- cell 20
cat_in_snow = os.path.abspath('320px-Felis_catus-cat_on_snow.jpg')  # harness: the guide downloads it with tf.keras.utils.get_file
williamsburg_bridge = os.path.abspath('194px-New_East_River_Bridge_from_Brooklyn_det.4a09796u.jpg')  # harness: ditto
for path in (cat_in_snow, williamsburg_bridge):  # harness:
  with open(path, 'wb') as f:  # harness:
    f.write(JPEG)  # harness:

# ---- cell 23
image_labels = {
    cat_in_snow : 0,
    williamsburg_bridge : 1,
}

# ---- cell 24
# This is an example, just using the cat image.
image_string = open(cat_in_snow, 'rb').read()

label = image_labels[cat_in_snow]

# Create a dictionary with features that may be relevant.
def image_example(image_string, label):
  image_shape = tf.io.decode_jpeg(image_string).shape

  feature = {
      'height': _int64_feature(image_shape[0]),
      'width': _int64_feature(image_shape[1]),
      'depth': _int64_feature(image_shape[2]),
      'label': _int64_feature(label),
      'image_raw': _bytes_feature(image_string),
  }

  return tf.train.Example(features=tf.train.Features(feature=feature))

for line in str(image_example(image_string, label)).split('\n')[:15]:
  print(line)
print('...')

# ---- cell 25
# Write the raw image files to `images.tfrecords`.
# First, process the two images into `tf.train.Example` messages.
# Then, write to a `.tfrecords` file.
record_file = 'images.tfrecords'
with tf.io.TFRecordWriter(record_file) as writer:
  for filename, label in image_labels.items():
    image_string = open(filename, 'rb').read()
    tf_example = image_example(image_string, label)
    writer.write(tf_example.SerializeToString())

report("cell26", os.path.getsize(record_file))  # harness: cell 26 is `!du -sh {record_file}`

# ---- cell 27
raw_image_dataset = tf.data.TFRecordDataset('images.tfrecords')

# Create a dictionary describing the features.
image_feature_description = {
    'height': tf.io.FixedLenFeature([], tf.int64),
    'width': tf.io.FixedLenFeature([], tf.int64),
    'depth': tf.io.FixedLenFeature([], tf.int64),
    'label': tf.io.FixedLenFeature([], tf.int64),
    'image_raw': tf.io.FixedLenFeature([], tf.string),
}

def _parse_image_function(example_proto):
  # Parse the input tf.train.Example proto using the dictionary above.
  return tf.io.parse_single_example(example_proto, image_feature_description)

parsed_image_dataset = raw_image_dataset.map(_parse_image_function)

# ---- cell 28
for image_features in parsed_image_dataset:
  image_raw = image_features['image_raw'].numpy()
  display.display(display.Image(data=image_raw))

save()  # harness:
