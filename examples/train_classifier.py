"""A small dense classifier trained on 64x64 float images read from TFRecords.

Writes ``--records`` 64x64 single-channel float32 images (four classes, each a
different blurred pattern plus noise) as ``FloatList`` features, then trains
on them through a tfrx pipeline (shuffle, batch, parse, prefetch):

* ``--framework torch``: ``ds.to_torch()`` into a ``DataLoader`` and the
  plain PyTorch training loop of ``tfrx.demo.fit_torch`` (shared with
  ``tfrx demo``);
* ``--framework keras``: ``model.fit(ds.to_keras())`` with Keras 3 on the
  backend named by ``KERAS_BACKEND`` (``torch`` or ``jax``; set it before
  running, as Keras reads it at import).

Prints the loss of every epoch and the final accuracy on a held-out file.

    KERAS_BACKEND=jax python examples/train_classifier.py --framework keras
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import tfrx

SIDE, CLASSES = 64, 4
FEATURES = {
    "image": tfrx.FixedLenFeature([SIDE, SIDE], tfrx.float32),
    "label": tfrx.FixedLenFeature([], tfrx.int64),
}


def make_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Class k: a bright band whose orientation and position depend on k, plus noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:SIDE, 0:SIDE].astype(np.float32) / SIDE
    patterns = np.stack(
        [
            np.exp(-((x - 0.3) ** 2) * 40),
            np.exp(-((y - 0.3) ** 2) * 40),
            np.exp(-((x - 0.7) ** 2) * 40),
            np.exp(-((x + y - 1.0) ** 2) * 20),
        ]
    )
    labels = rng.integers(0, CLASSES, n)
    images = patterns[labels] + rng.normal(0, 2.0, (n, SIDE, SIDE)).astype(np.float32)
    return images.astype(np.float32), labels


def write(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    with tfrx.TFRecordWriter(path) as w:
        w.write_many(tfrx.encode_examples({"image": images, "label": labels}, as_batch=True))


def to_pair(batch: dict):
    """Keras and the training loop take (inputs, targets): flatten the images for a dense model."""
    return batch["image"].reshape(len(batch["label"]), SIDE * SIDE), batch["label"].astype(np.int32)


def pipeline(path: str, batch_size: int, *, shuffle: bool, seed: int = 0):
    ds = tfrx.TFRecordDataset(path)
    if shuffle:
        ds = ds.shuffle(2048, seed=seed)
    return ds.batch(batch_size).parse(FEATURES).map(to_pair).prefetch(2)


def train_torch(train_path: str, test_path: str, epochs: int, batch_size: int) -> tuple[list[float], float]:
    import torch

    from tfrx.demo import fit_torch  # the tutorials' loop: Adam, cross-entropy, loss.backward(), opt.step()

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(SIDE * SIDE, 64), torch.nn.ReLU(), torch.nn.Linear(64, CLASSES))
    loader = torch.utils.data.DataLoader(pipeline(train_path, batch_size, shuffle=True).to_torch(), batch_size=None)

    def train(epoch: int):
        loader.dataset.set_epoch(epoch)  # a new shuffle order each epoch
        return loader

    def test():
        return pipeline(test_path, batch_size, shuffle=False).to_torch()

    return fit_torch(model, train, test, epochs, lr=1e-3)


def train_keras(train_path: str, test_path: str, epochs: int, batch_size: int) -> tuple[list[float], float]:
    import warnings

    import keras

    # The pipeline's length is unknown until it is read, so Keras learns where an epoch ends by
    # running out of data and says so once; that is the intended behaviour here.
    warnings.filterwarnings("ignore", message="Your input ran out of data")
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((SIDE * SIDE,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(CLASSES)]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    history = model.fit(pipeline(train_path, batch_size, shuffle=True).to_keras(), epochs=epochs, verbose=0)
    losses = [float(v) for v in history.history["loss"]]
    for i, v in enumerate(losses):
        print(f"epoch {i + 1}/{epochs}: loss {v:.4f}")
    _, accuracy = model.evaluate(pipeline(test_path, batch_size, shuffle=False).to_keras(), verbose=0)
    return losses, float(accuracy)


def run(framework: str, records: int, epochs: int, batch_size: int, workdir: str) -> dict:
    train_path, test_path = os.path.join(workdir, "train.tfrecord"), os.path.join(workdir, "test.tfrecord")
    write(train_path, *make_data(records, seed=1))
    write(test_path, *make_data(max(records // 4, batch_size), seed=2))
    label = framework if framework == "torch" else f"keras ({os.environ.get('KERAS_BACKEND', 'default')} backend)"
    print(
        f"wrote {records} training and {max(records // 4, batch_size)} test images of {SIDE}x{SIDE} float32; training with {label}"
    )
    t0 = time.perf_counter()
    losses, accuracy = (train_torch if framework == "torch" else train_keras)(train_path, test_path, epochs, batch_size)
    seconds = time.perf_counter() - t0
    print(
        f"trained {epochs} epochs in {seconds:.1f}s ({records * epochs / seconds:,.0f} images/s); test accuracy {accuracy:.3f}"
    )
    return {"losses": losses, "accuracy": accuracy}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--framework", choices=["torch", "keras"], default="torch")
    p.add_argument("--records", type=int, default=4096)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--small", action="store_true", help="a quick run (384 records, 3 epochs)")
    p.add_argument("--workdir", help="where to write (default: a temporary directory)")
    args = p.parse_args(argv)
    records, epochs = (384, 3) if args.small else (args.records, args.epochs)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        out = run(args.framework, records, epochs, args.batch_size, workdir)
    return 0 if out["losses"][-1] < out["losses"][0] else 1


if __name__ == "__main__":
    sys.exit(main())
