import tensorflow as tf
# ruff: noqa: I001, E402, E501, E701, A001, F811  (the first line is the one line a port changes)
# The tutorial's cells as published (its quotes and two-space indents): not formatted.
# fmt: off

# TensorFlow's "Load CSV data" tutorial (site/en/tutorials/load_data/csv.ipynb,
# tensorflow/docs at TF 2.21): its tf.data cells on in-memory data (a pandas
# frame's columns through Dataset.from_tensor_slices, shuffle, batch), in
# order and unchanged. Lines marked "harness:" are not the tutorial's: a
# small local CSV stands in for the Titanic file it downloads, and what it
# prints is recorded. The Keras cells, and those reading CSV files with
# make_csv_dataset, CsvDataset, TextLineDataset and decode_csv (readers tfrx
# does not have), are left out.
#
#     python tests/porting/csv_tutorial.py OUT.pickle [WORKDIR]

from _harness import print, report, save, start  # harness: tests/porting/_harness.py
WORKDIR, RESULTS = start(tf)  # harness:


with open("train.csv", "w") as csv_file:  # harness: the first rows of the Titanic file the tutorial downloads
  csv_file.write("survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n"  # harness:
          "0,male,22.0,1,0,7.25,Third,unknown,Southampton,n\n"  # harness:
          "1,female,38.0,1,0,71.2833,First,C,Cherbourg,n\n"  # harness:
          "1,female,26.0,0,0,7.925,Third,unknown,Southampton,y\n"  # harness:
          "1,female,35.0,1,0,53.1,First,C,Southampton,n\n"  # harness:
          "0,male,28.0,0,0,8.4583,Third,unknown,Queenstown,y\n")  # harness:

# ---- cell 1 (without `from tensorflow.keras import layers`: the Keras cells are left out)
import pandas as pd
import numpy as np

# Make numpy values easier to read.
np.set_printoptions(precision=3, suppress=True)

# ---- cell 10
titanic = pd.read_csv("train.csv")  # harness: the tutorial reads it from storage.googleapis.com

# ---- cell 11
titanic_features = titanic.copy()
titanic_labels = titanic_features.pop('survived')

# ---- cell 20
titanic_features_dict = {name: np.array(value) 
                         for name, value in titanic_features.items()}

# ---- cell 26
import itertools

def slices(features):
  for i in itertools.count():
    # For each feature take index `i`
    example = {name:values[i] for name, values in features.items()}
    yield example

# ---- cell 27
for example in slices(titanic_features_dict):
  for name, value in example.items():
    print(f"{name:19s}: {value}")
  break

# ---- cell 28
features_ds = tf.data.Dataset.from_tensor_slices(titanic_features_dict)

# ---- cell 29
for example in features_ds:
  for name, value in example.items():
    print(f"{name:19s}: {value}")
  break

# ---- cell 30
titanic_ds = tf.data.Dataset.from_tensor_slices((titanic_features_dict, titanic_labels))

# ---- cell 31
titanic_batches = titanic_ds.shuffle(len(titanic_labels)).batch(32)
for features, labels in titanic_batches:  # harness: cell 32 trains on it; its content, sorted (the order differs)
  report("cell31/labels", np.sort(labels.numpy()))  # harness:
  report("cell31/age", np.sort(features["age"].numpy()))  # harness:
  report("cell31/sex", np.sort(features["sex"].numpy()))  # harness:

save()  # harness:
