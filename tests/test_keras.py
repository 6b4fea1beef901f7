"""Keras 3 adapter: model.fit on a tfrx dataset with the torch and jax backends (in subprocesses)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("keras") is None:  # not imported in this process: forks follow
    pytest.skip("keras is not installed", allow_module_level=True)

import tfrx  # noqa: E402

SRC = str(Path(tfrx.__file__).resolve().parent.parent)  # wherever the tested tfrx is installed

SCRIPT = r"""
import warnings

import numpy as np
import keras
import tfrx
import tfrx.keras
from tfrx.data import Dataset

rng = np.random.default_rng(0)
x = rng.normal(size=(96, 8)).astype("float32")
y = (x.sum(axis=1) > 0).astype("int64")
passes = []

def pipeline(n=96):
    def count_pass(i):  # the pipeline counts its complete passes (Keras also starts one to build the model)
        if i == n - 1:
            passes.append(n)
        return i

    return (Dataset.range(n).map(count_pass).map(lambda i: (x[i], y[i]))
            .shuffle(32, seed=1).batch(16).prefetch(2))

def steps():
    it = model.optimizer.iterations
    return int(it.numpy() if hasattr(it, "numpy") else it)

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)])
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

# Three epochs over the dataset, each a new pass; validation_data after each epoch.
history = model.fit(pipeline().to_keras(), validation_data=pipeline(32).to_keras(), epochs=3, verbose=0)
assert len(history.history["loss"]) == 3 and len(history.history["val_loss"]) == 3, history.history
assert steps() == 18, steps()  # 6 batches x 3 epochs
assert passes == [96, 32] * 3, passes  # each epoch: a training pass, then a validation pass

# steps_per_epoch over an endless pipeline: the iterator carries on across epochs.
passes.clear()
model.fit(pipeline().repeat().to_keras(), steps_per_epoch=4, epochs=3, verbose=0)
assert steps() == 18 + 12, steps()
assert len(passes) == 2, passes  # 12 batches of 6 per pass: two passes started

# steps_per_epoch below the length of a finite pipeline.
model.fit(pipeline().to_keras(), steps_per_epoch=3, epochs=2, verbose=0)
assert steps() == 36, steps()

# A pipeline of unknown length (from files): Keras learns where the epoch ends.
path = "keras-test.tfrecord"
with tfrx.TFRecordWriter(path) as w:
    w.write_many(tfrx.encode_examples({"x": x, "y": y}, as_batch=True))
spec = {"x": tfrx.FixedLenFeature([8], tfrx.float32), "y": tfrx.FixedLenFeature([], tfrx.int64)}
files = tfrx.TFRecordDataset(path).shuffle(96, seed=0).batch(32).parse(spec).map(lambda b: (b["x"], b["y"]))
assert files.cardinality() < 0
with warnings.catch_warnings():
    warnings.filterwarnings("error", message=".*ran out of data")  # none at the natural end of a finite dataset
    history = model.fit(files, epochs=2, verbose=0)  # the dataset itself, as a tf.data one
    assert len(history.history["loss"]) == 2
    assert steps() == 42, steps()  # 3 batches x 2 epochs
    model.fit(files.to_keras(), epochs=1, verbose=0)  # the length learned by the complete passes above
    assert steps() == 45, steps()
    model.fit(pipeline(), epochs=1, verbose=0)  # known cardinality
    assert steps() == 51, steps()
    model.evaluate(tfrx.keras.as_keras(pipeline()), verbose=0)
assert not [f for f in warnings.filters if "ran out" in str(f[1])], warnings.filters  # the quieting filter is gone

# steps_per_epoch beyond the data still warns, as Keras does for any input.
fresh = tfrx.TFRecordDataset(path).batch(32).parse(spec).map(lambda b: (b["x"], b["y"]))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model.fit(fresh, steps_per_epoch=5, epochs=1, verbose=0)
assert any("ran out of data" in str(w.message) for w in caught), [str(w.message) for w in caught]
before = steps()

# Under import tfrx.tf as tf: tf.keras is Keras, and fit takes tf.data datasets of tensors.
import tfrx.tf as tf
assert tf.keras is keras
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(96, seed=2).batch(32)
with warnings.catch_warnings():
    warnings.filterwarnings("error", message=".*ran out of data")
    tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)]).compile(optimizer="adam", loss="mse")
    model.fit(ds, epochs=1, verbose=0)
print("steps", steps() - before)
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_fit_with_backend(backend, tmp_path):
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed")
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("CUDA_VISIBLE_DEVICES", "")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-1] == "3"  # the tf.data dataset's 3 batches
