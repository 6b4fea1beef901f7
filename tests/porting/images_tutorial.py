import tensorflow as tf
# ruff: noqa: I001, E402, E501, E701, A001, F811  (the first line is the one line a port changes)
# The tutorial's cells as published (its quotes and two-space indents): not formatted.
# fmt: off

# TensorFlow's "Load and preprocess images" tutorial
# (site/en/tutorials/load_data/images.ipynb, tensorflow/docs at TF 2.21): its
# tf.data cells that use what tfrx has (list_files, shuffle, skip/take,
# cardinality, decode_jpeg, resize), in order and unchanged. Lines marked
# "harness:" are not the tutorial's: a small directory of JPEGs stands in for
# the flower photos it downloads, and what it prints is recorded (the
# shuffled file names sorted, as the order differs from TensorFlow's). The
# Keras cells (image_dataset_from_directory, layers, fit) and those using
# tf.strings and tf.argmax (get_label, process_path) are left out.
#
#     python tests/porting/images_tutorial.py OUT.pickle [WORKDIR]
import base64, os  # harness:

from _harness import print, report, save, start, state  # harness: tests/porting/_harness.py
WORKDIR, RESULTS = start(tf)  # harness:


JPEG = base64.b64decode("/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAYACADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD4B0TwJ9393+legaJ4E+7+7/SvStE8Cfd/d/pXf6J4E+7+7/St8JXPL4e4q294810TwJ9393+ld/ofgT7v7v8ASvStE8Cfd/d/pXf6J4E+7+7/AEr7HCVz+meHuKtveOL0PwJ9393+ld/ongT7v7v9KKK/MMJNn+YHD2Y4jT3j0DRPAn3f3f6V29j4Ri0+386ZdqjoAOWPoPeiiu/Oczr5Vk+Kx+Htz04Skr6q6Wl9vzP6g4Yx1edSEXLdo//Z")  # harness: a 32x24 JPEG stands in for the two photos
# ---- cell 1 (PIL and tensorflow_datasets are used by cells left out)
import numpy as np
import os

# ---- cell 3
import pathlib
data_dir = pathlib.Path(WORKDIR) / 'flower_photos'  # harness: the tutorial downloads and extracts flower_photos.tgz
for i, name in enumerate(['daisy', 'dandelion', 'roses', 'sunflowers', 'tulips']):  # harness:
  (data_dir / name).mkdir(parents=True)  # harness:
  for j in range(i + 2):  # harness:
    (data_dir / name / f'{j}.jpg').write_bytes(JPEG)  # harness:
(data_dir / 'LICENSE.txt').write_text('CC-BY')  # harness:

# ---- cell 4
image_count = len(list(data_dir.glob('*/*.jpg')))
print(image_count)

# ---- cell 7
batch_size = 32
img_height = 180
img_width = 180

# ---- cell 15 (its first line)
AUTOTUNE = tf.data.AUTOTUNE

# ---- cell 19
list_ds = tf.data.Dataset.list_files(str(data_dir/'*/*'), shuffle=False)
list_ds = list_ds.shuffle(image_count, reshuffle_each_iteration=False)

# ---- cell 20
state.recording = False  # harness: the shuffled order differs from TensorFlow's
for f in list_ds.take(5):
  print(f.numpy())
state.recording = True  # harness:
report("cell20", sorted(os.path.relpath(f.numpy().decode(), WORKDIR) for f in list_ds))  # harness:

# ---- cell 21
class_names = np.array(sorted([item.name for item in data_dir.glob('*') if item.name != "LICENSE.txt"]))
print(class_names)

# ---- cell 22
val_size = int(image_count * 0.2)
train_ds = list_ds.skip(val_size)
val_ds = list_ds.take(val_size)

# ---- cell 23
print(tf.data.experimental.cardinality(train_ds).numpy())
print(tf.data.experimental.cardinality(val_ds).numpy())

# ---- cell 25
def decode_img(img):
  # Convert the compressed string to a 3D uint8 tensor
  img = tf.io.decode_jpeg(img, channels=3)
  # Resize the image to the desired size
  return tf.image.resize(img, [img_height, img_width])

decoded_ds = tf.data.Dataset.list_files(str(data_dir/'*/*.jpg'), shuffle=False).map(tf.io.read_file).map(decode_img)  # harness: cell 26's process_path needs tf.strings
for image in decoded_ds.take(1):  # harness: what cell 28 prints of it
  print("Image shape: ", image.numpy().shape)  # harness:
  report("resized", image.numpy())  # harness:

save()  # harness:
