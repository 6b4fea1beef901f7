"""``tfrx demo``: the whole TFRecord workflow, end to end, on generated data.

1. generate small labelled images (each class its own pattern, plus noise);
2. write them as ``tf.train.Example`` records into sharded TFRecord files
   with ``tfrx.ShardedWriter``;
3. inspect: the first record in protobuf text format and the feature schema
   inferred from the files;
4. verify: read every record and check both CRCs of each;
5. read the training shards through the input pipeline
   (interleave, shuffle, batch, parse, map, prefetch);
6. train a classifier on them for a few epochs with the framework that is
   installed (PyTorch, else JAX, else a NumPy softmax regression) and report
   the accuracy on the held-out last shard.

Every step prints what it did, with records/s and MB/s. Files go to a
temporary directory that is removed afterwards, or to ``--workdir`` (kept).
Run it with ``tfrx demo`` or ``python -m tfrx.tools.demo``; ``--records`` and
``--epochs`` scale it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import NamedTuple
from collections.abc import Callable, Sequence

import numpy as np

import tfrx

__all__ = ["add_arguments", "fit_torch", "main", "make_images", "softmax_regression"]


class Images(NamedTuple):
    """:func:`make_images`' result: unpacks as ``images, labels``."""

    images: np.ndarray
    labels: np.ndarray


class Training(NamedTuple):
    """What a training run gives: unpacks as ``losses, accuracy`` (mean loss per epoch, test accuracy)."""

    losses: list[float]
    accuracy: float


CLASSES = 10
FEATURES = {
    "image_raw": tfrx.FixedLenFeature([], tfrx.string),
    "label": tfrx.FixedLenFeature([], tfrx.int64),
    "height": tfrx.FixedLenFeature([], tfrx.int64),
    "width": tfrx.FixedLenFeature([], tfrx.int64),
    "depth": tfrx.FixedLenFeature([], tfrx.int64),
}
FRAMEWORKS = ("auto", "torch", "jax", "numpy")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the demo's options to ``parser`` (used by ``tfrx demo`` and ``python -m tfrx.tools.demo``)."""
    parser.add_argument("--records", type=int, default=4000, help="images to generate (default: %(default)s)")
    parser.add_argument(
        "--shards",
        type=int,
        default=4,
        help="TFRecord files to write; the last is held out for testing (default: %(default)s)",
    )
    parser.add_argument("--epochs", type=int, default=3, help="training epochs (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=128, help="(default: %(default)s)")
    parser.add_argument(
        "--image-size", type=int, default=16, help="images are SIZE x SIZE x 3 uint8 (default: %(default)s)"
    )
    parser.add_argument("--framework", choices=FRAMEWORKS, default="auto", help="auto: torch, else jax, else numpy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--workdir", help="write the files here and keep them (default: a temporary directory, removed)"
    )


# ------------------------------------------------------------------ data
def make_images(n: int, size: int, seed: int = 0) -> Images:
    """``n`` uint8 images (size, size, 3) and labels; class k is a colour stripe pattern plus noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    templates = np.empty((CLASSES, size, size, 3), np.float32)
    for k in range(CLASSES):
        angle = np.pi * k / CLASSES
        stripes = np.sin(2 * np.pi * 2 * (x * np.cos(angle) + y * np.sin(angle)))
        colour = np.array([np.cos(k), np.sin(k), np.cos(2 * k)], np.float32)
        templates[k] = 128 + 30 * stripes[..., None] * colour
    labels = rng.integers(0, CLASSES, n)
    noise = rng.normal(0, 90, (n, size, size, 3)).astype(np.float32)
    images = np.clip(templates[labels] + noise, 0, 255).astype(np.uint8)
    return Images(images, labels)


def _write_shards(prefix: str, records: tfrx.RecordBatch, shards: int) -> list[str]:
    """Contiguous runs of records in ``shards`` files named like TFDS's ``{prefix}.tfrecord-00000-of-00004``."""
    with tfrx.ShardedWriter(prefix, num_shards=shards, total_records=len(records)) as writer:
        writer.write_many(records)
        return [str(p) for p in writer.close()]


def _rate(count: int, nbytes: int, seconds: float) -> str:
    seconds = max(seconds, 1e-9)
    return f"{count / seconds:,.0f} records/s, {nbytes / seconds / 1e6:,.1f} MB/s"


def _text_format(record: bytes, max_width: int = 96) -> str:
    """The record as protobuf text format, long values shortened."""
    text = str(tfrx.train.Example.FromString(record))
    lines = []
    for line in text.splitlines():
        if len(line) > max_width:
            line = line[: max_width - 5] + '..." (shortened)'
        lines.append("    " + line)
    return "\n".join(lines)


# ------------------------------------------------------------------ pipeline
def _to_features(size: int):
    def to_features(batch: dict) -> tuple[np.ndarray, np.ndarray]:
        n = len(batch["label"])
        pixels = tfrx.decode_raw(batch["image_raw"], np.uint8).reshape(n, size * size * 3)
        return (pixels.astype(np.float32) - 128.0) / 64.0, batch["label"].astype(np.int64)

    return to_features


def _pipeline(paths: list[str], size: int, batch_size: int, *, shuffle: bool, seed: int) -> tfrx.data.Dataset:
    if shuffle:
        files = tfrx.data.Dataset.list_files(paths, shuffle=True, seed=seed)
        ds = files.interleave(tfrx.TFRecordDataset, cycle_length=len(paths), num_parallel_calls=tfrx.AUTOTUNE)
        ds = ds.shuffle(4096, seed=seed).batch(batch_size)
    else:
        ds = tfrx.TFRecordDataset(paths).batch(batch_size)
    return ds.parse(FEATURES).map(_to_features(size)).prefetch(2)


# ------------------------------------------------------------------ models
def softmax_regression(train, test, dim: int, epochs: int, *, lr: float = 0.1, seed: int = 0, log=print):
    """Multinomial logistic regression trained with minibatch SGD in NumPy.

    ``train`` and ``test`` are re-iterable sources of ``(x, y)`` batches
    (``x`` float32 (n, dim), ``y`` int labels). Returns :class:`Training`
    ``(losses per epoch, test accuracy)``.
    """
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.01, (dim, CLASSES)).astype(np.float32)
    b = np.zeros(CLASSES, np.float32)
    losses = []
    for epoch in range(epochs):
        total, seen = 0.0, 0
        for x, y in train(epoch):
            logits = x @ w + b
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            n = len(y)
            total += float(-np.log(p[np.arange(n), y] + 1e-12).sum())
            seen += n
            p[np.arange(n), y] -= 1.0  # d(cross entropy)/d(logits)
            w -= lr * (x.T @ p) / n
            b -= lr * p.mean(axis=0)
        losses.append(total / seen)
        log(f"    epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    correct = seen = 0
    for x, y in test():
        correct += int(((x @ w + b).argmax(axis=1) == y).sum())
        seen += len(y)
    return Training(losses, correct / max(seen, 1))


def _train_torch(train, test, dim: int, epochs: int, seed: int, log=print):
    import torch

    torch.manual_seed(seed)
    # The model is tiny: torch's own thread pool would only spin against the pipeline's threads.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _torch_loop(torch, train, test, dim, epochs, log)
    finally:
        torch.set_num_threads(threads)


def _torch_loop(torch, train, test, dim: int, epochs: int, log):
    model = torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.ReLU(), torch.nn.Linear(64, CLASSES))
    return fit_torch(model, train, test, epochs, log=lambda line: log("    " + line))


def fit_torch(model, train, test, epochs: int, *, lr: float = 1e-3, log=print) -> Training:
    """Trains a PyTorch classifier with Adam and cross-entropy; returns :class:`Training` ``(losses, accuracy)``.

    ``train(epoch)`` returns the epoch's ``(inputs, labels)`` batches and
    ``test()`` the held-out ones, as NumPy arrays or tensors (a tfrx pipeline,
    ``ds.to_torch()`` or a ``DataLoader`` over it). Logs ``epoch i/n: loss x``
    after every epoch. The loop is the plain one from the PyTorch tutorials::

        for x, y in train(epoch):
            loss = cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
    """
    import torch

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for epoch in range(epochs):
        total, seen = 0.0, 0
        for x, y in train(epoch):
            x, y = torch.as_tensor(x), torch.as_tensor(y).long()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
            seen += len(y)
        losses.append(total / seen)
        log(f"epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    correct = seen = 0
    with torch.no_grad():
        for x, y in test():
            correct += int((model(torch.as_tensor(x)).argmax(1) == torch.as_tensor(y)).sum())
            seen += len(y)
    return Training(losses, correct / max(seen, 1))


def _train_jax(train, test, dim: int, epochs: int, seed: int, log=print):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(seed)
    params = {"w": jax.random.normal(key, (dim, CLASSES)) * 0.01, "b": jnp.zeros(CLASSES)}

    def loss_fn(params, x, y):
        logits = x @ params["w"] + params["b"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss

    losses = []
    for epoch in range(epochs):
        total, seen = 0.0, 0
        for x, y in train(epoch):
            params, loss = step(params, x, y.astype(np.int32))
            total += float(loss) * len(y)
            seen += len(y)
        losses.append(total / seen)
        log(f"    epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    correct = seen = 0
    for x, y in test():
        correct += int((np.asarray(x @ params["w"] + params["b"]).argmax(axis=1) == y).sum())
        seen += len(y)
    return Training(losses, correct / max(seen, 1))


def _pick_framework(requested: str) -> str:
    from importlib.util import find_spec

    if requested != "auto":
        if requested != "numpy" and find_spec(requested) is None:
            raise ValueError(f"--framework {requested}: {requested} is not installed; pass --framework auto or numpy")
        return requested
    for name in ("torch", "jax"):
        if find_spec(name) is not None:
            return name
    return "numpy"


# ------------------------------------------------------------------ the demo
def run(
    *,
    records: int = 4000,
    shards: int = 4,
    epochs: int = 3,
    batch_size: int = 128,
    image_size: int = 16,
    framework: str = "auto",
    seed: int = 0,
    workdir: str,
    log=print,
) -> dict:
    """Runs the demo in ``workdir``; returns what it measured (for tests and callers)."""
    if records < 2 * shards or shards < 2:
        raise ValueError(
            f"the demo needs at least 2 shards and 2 records per shard, got records={records}, shards={shards}"
        )
    name = _pick_framework(framework)  # before any work: a framework that is missing is reported at once
    out: dict = {}
    size = image_size
    log(f"tfrx {tfrx.__version__} demo in {workdir}")

    t0 = time.perf_counter()
    images, labels = make_images(records, size, seed)
    columns = {
        "image_raw": [img.tobytes() for img in images],
        "label": labels,
        "height": np.full(records, size),
        "width": np.full(records, size),
        "depth": np.full(records, 3),
    }
    batch = tfrx.encode_examples(columns, as_batch=True)
    log(
        f"1. generate  {records} images {size}x{size}x3 uint8 in {CLASSES} classes -> {records} tf.train.Example records, "
        f"{batch.nbytes / 1e6:.1f} MB ({time.perf_counter() - t0:.2f}s)"
    )

    t0 = time.perf_counter()
    paths = _write_shards(os.path.join(workdir, "images"), batch, shards)
    seconds = time.perf_counter() - t0
    file_bytes = sum(os.path.getsize(p) for p in paths)
    log(
        f"2. write     {len(paths)} shards with tfrx.ShardedWriter: {os.path.basename(paths[0])} ... {os.path.basename(paths[-1])}, "
        f"{file_bytes / 1e6:.1f} MB in {seconds:.3f}s ({_rate(records, file_bytes, seconds)})"
    )
    out["paths"] = paths

    first = next(iter(tfrx.read_records(paths[0])))
    inferred = tfrx.infer_features(paths)
    log("3. inspect   first record of " + os.path.basename(paths[0]) + ":")
    log(_text_format(first))
    log("   inferred schema: " + ", ".join(f"{k}: {v!r}" for k, v in sorted(inferred.items())))
    out["schema"] = inferred

    t0 = time.perf_counter()
    verified = 0
    with tfrx.RecordReader(paths, verify=True) as reader:
        for b in reader.iter_batches():
            verified += len(b)
    seconds = time.perf_counter() - t0
    log(
        f"4. verify    {verified} records, length and data CRC-32C of each checked ({tfrx.crc32c_backend()}): all good "
        f"in {seconds:.3f}s ({_rate(verified, file_bytes, seconds)})"
    )
    out["verified"] = verified

    train_paths, test_paths = paths[:-1], paths[-1:]
    train_bytes = sum(os.path.getsize(p) for p in train_paths)
    t0 = time.perf_counter()
    seen = 0
    shapes: tuple = ((), None)
    for x, y in _pipeline(train_paths, size, batch_size, shuffle=True, seed=seed):
        if not seen:
            shapes = (x.shape[1:], x.dtype)
        seen += len(y)
    seconds = time.perf_counter() - t0
    log(
        f"5. read      {seen} records of {len(train_paths)} training shards through interleave -> shuffle(4096) -> "
        f"batch({batch_size}) -> parse -> decode_raw -> prefetch, batches of {shapes[0]} {shapes[1]} "
        f"in {seconds:.3f}s ({_rate(seen, train_bytes, seconds)})"
    )
    out["read"] = seen

    trainers: dict[str, Callable[..., tuple[list[float], float]]] = {
        "torch": _train_torch,
        "jax": _train_jax,
        "numpy": softmax_regression,
    }
    trainer = trainers[name]
    model = {
        "torch": "a 2-layer MLP in PyTorch",
        "jax": "softmax regression in JAX",
        "numpy": "softmax regression in NumPy",
    }[name]
    log(f"6. train     {model}, {epochs} epochs on {seen} records; the last shard ({records - seen} records) held out")
    dim = size * size * 3
    if name != "numpy":
        __import__(name)  # the import (seconds for torch) is not part of the training time
    t0 = time.perf_counter()
    losses, accuracy = trainer(
        lambda epoch: _pipeline(train_paths, size, batch_size, shuffle=True, seed=seed + epoch),
        lambda: _pipeline(test_paths, size, batch_size, shuffle=False, seed=seed),
        dim,
        epochs,
        seed=seed,
        log=log,
    )
    seconds = time.perf_counter() - t0
    log(
        f"   trained in {seconds:.2f}s ({seen * epochs / seconds:,.0f} records/s including the model); "
        f"final loss {losses[-1]:.4f}, held-out accuracy {accuracy:.3f} (chance {1 / CLASSES:.2f})"
    )
    out.update(framework=name, losses=losses, accuracy=accuracy)
    return out


def _as_namespace(args) -> argparse.Namespace:
    if isinstance(args, argparse.Namespace):
        defaults = argparse.ArgumentParser()
        add_arguments(defaults)
        merged = vars(defaults.parse_args([]))
        merged.update({k: v for k, v in vars(args).items() if k in merged})
        return argparse.Namespace(**merged)
    parser = argparse.ArgumentParser(prog="python -m tfrx.tools.demo", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return parser.parse_args(None if args is None else list(args))


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Runs the demo; ``args`` is a parsed namespace (``tfrx demo``) or an argv list. Returns the exit status."""
    ns = _as_namespace(args)
    params = dict(
        records=ns.records,
        shards=ns.shards,
        epochs=ns.epochs,
        batch_size=ns.batch_size,
        image_size=ns.image_size,
        framework=ns.framework,
        seed=ns.seed,
    )
    t0 = time.perf_counter()
    try:
        if ns.workdir:
            os.makedirs(ns.workdir, exist_ok=True)
            out = run(workdir=ns.workdir, **params)
        else:
            with tempfile.TemporaryDirectory(prefix="tfrx-demo-") as d:
                out = run(workdir=d, **params)
    except ValueError as e:
        print(f"tfrx demo: {e}", file=sys.stderr)
        return 2
    print(f"done in {time.perf_counter() - t0:.1f}s" + ("" if ns.workdir else "; the temporary files were removed"))
    ok = out["verified"] == ns.records and out["losses"][-1] < out["losses"][0]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
