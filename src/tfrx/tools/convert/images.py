"""Image folders (one subfolder per class) to TFRecord shards of Examples."""

from __future__ import annotations

import io
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tfrx.options import ProgressOption, renamed_arguments, resolve_parallelism
from tfrx.tools.convert._common import ConvertSummary, _check_engine, _committing, _map_jobs, _sharding, _start, _writer
from tfrx._progress import progress_bar

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp")


def _list_images(root: str, extensions) -> tuple[list[str], list[tuple[str, int]]]:
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no such directory: {root!r}")
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    if not classes:
        raise ValueError(
            f"{root!r} has no class subfolders; expected one folder per class (ImageNet layout): "
            f"{root}/cat/001.jpg, {root}/dog/002.jpg, ..."
        )
    files = []
    for label, name in enumerate(classes):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, name)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in sorted(filenames):
                if f.lower().endswith(extensions) and not f.startswith("."):
                    files.append((os.path.join(dirpath, f), label))
    return classes, files


def _image_size(data: bytes) -> tuple[int, int]:
    """(height, width) from the image header, without decoding the pixels."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        width, height = im.size
    return height, width


def _image_record(path: str, label: int, classes, root, resize, reencode, quality, validate="full"):
    """One image's features, or an error message (the work runs in threads: decoding releases the GIL)."""
    from tfrx.image import decode_image, encode_jpeg, encode_png, image_format

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"{path}: cannot read: {e.strerror or e}"
    fmt = image_format(data) if data else None
    if fmt is None:
        return f"{path}: not an image (unknown format)"
    if validate == "header" and resize is None and reencode is None:
        try:
            height, width = _image_size(data)
        except Exception as e:  # noqa: BLE001 - any header failure is a bad input
            return f"{path}: cannot read the {fmt} header: {e}"
        return (data, fmt, label, classes[label], height, width, os.path.relpath(path, root))
    try:
        image = decode_image(data, channels=None if reencode is None and resize is None else 3, expand_animations=False)
    except Exception as e:  # noqa: BLE001 - any decoder failure is a bad input
        return f"{path}: cannot decode {fmt}: {e}"
    if resize is not None:
        from tfrx.image import resize as resize_image

        image = np.clip(np.rint(resize_image(image, resize, antialias=True)), 0, 255).astype(np.uint8)
    if reencode is not None or resize is not None:
        fmt = reencode or ("png" if fmt == "png" else "jpeg")
        data = encode_jpeg(image, quality=quality) if fmt == "jpeg" else encode_png(image)
    return (data, fmt, label, classes[label], int(image.shape[0]), int(image.shape[1]), os.path.relpath(path, root))


def _image_part_job(job) -> list:
    """A Ray task: the results of ``_image_record`` for one part of the file list."""
    part, options = job
    return [_image_record(path, label, *options) for path, label in part]


def _image_results(parts, options, engine: str, workers: int):
    """For each part of the file list, the list of its ``_image_record`` results."""
    if engine == "ray":
        yield from _map_jobs(_image_part_job, [(part, options) for part in parts], engine, workers)
        return
    with ThreadPoolExecutor(workers) as pool:
        for part in parts:
            yield list(pool.map(lambda fl: _image_record(fl[0], fl[1], *options), part))


@renamed_arguments(workers="num_parallel_calls")
def images_to_tfrecord(  # noqa: PLR0913  the converters' shared options, and image resize/re-encode
    root: str | os.PathLike,
    output: str | os.PathLike,
    *,
    num_shards: int | None = None,
    max_records_per_shard: int | None = None,
    max_bytes_per_shard: int | None = None,
    compression: str | None = None,
    naming: str = "tfds",
    resize: tuple[int, int] | None = None,
    reencode: str | None = None,
    quality: int = 95,
    validate: str = "full",
    shuffle: bool = True,
    seed: int = 0,
    num_parallel_calls: int | None = None,
    extensions=IMAGE_EXTENSIONS,
    on_error: str = "raise",
    progress: ProgressOption = None,
    engine: str = "local",
) -> ConvertSummary:
    """Converts a folder with one subfolder per class (ImageNet layout) into TFRecord shards.

    Each image becomes one Example with the keys TensorFlow's ImageNet
    scripts and TFDS use: ``image/encoded`` (the file's bytes, or the
    re-encoded image), ``image/format`` (``jpeg``, ``png``, ...),
    ``image/class/label`` (index of the class folder in sorted order),
    ``image/class/text`` (the folder name), ``image/height``,
    ``image/width`` and ``image/filename`` (relative to ``root``).

    With ``validate="full"`` (the default) every image is decoded, which
    reads its size and catches damaged files; ``validate="header"`` reads
    only the header (several times faster; a file cut short after its header
    goes through unnoticed). ``resize=(height, width)`` resizes (bilinear, antialiased) and
    ``reencode="jpeg"|"png"`` re-encodes (a resized image is re-encoded as
    JPEG unless it was a PNG). The file order is shuffled with ``seed``
    unless ``shuffle=False`` (sorted by class then name). ``num_parallel_calls`` threads
    (default: the usable cores; ``workers=`` is the deprecated name) decode in parallel; decoding releases the GIL.
    ``engine="ray"`` decodes parts of the file list as Ray tasks instead.
    Output naming and sharding are as :class:`tfrx.ShardedWriter` (the
    default, without sharding arguments, is one shard per 1024 images).
    """
    from tfrx.codec import encode_examples

    _check_engine(engine)
    root = os.fspath(root)
    if validate not in ("full", "header"):
        raise ValueError(f"validate must be 'full' or 'header', got {validate!r}")
    if reencode is not None:
        reencode = {"jpg": "jpeg"}.get(reencode.lower(), reencode.lower())
        if reencode not in ("jpeg", "png"):
            raise ValueError(f"reencode must be 'jpeg' or 'png', got {reencode!r}")
    classes, files = _list_images(root, tuple(e.lower() for e in extensions))
    if shuffle:
        order = np.random.default_rng(seed).permutation(len(files))
        files = [files[i] for i in order]
    summary, errors, t0 = _start(on_error)
    if num_shards is None and max_records_per_shard is None and max_bytes_per_shard is None:
        max_records_per_shard = 1024
    writer = _writer(output, _sharding(num_shards, max_records_per_shard, max_bytes_per_shard, naming), compression)
    workers = resolve_parallelism(num_parallel_calls, default=None)
    chunk = max(64, 16 * workers)
    parts = [files[lo : lo + chunk] for lo in range(0, len(files), chunk)]
    options = (classes, root, resize, reencode, quality, validate)
    with _committing(writer, summary, t0):
        with progress_bar(len(files), desc="images", unit="img", enabled=progress) as bar:
            for part, results in zip(parts, _image_results(parts, options, engine, workers)):
                rows = []
                for r in results:
                    if isinstance(r, str):
                        errors(r)
                    else:
                        rows.append(r)
                bar.update(len(part))
                if not rows:
                    continue
                cols = list(zip(*rows))
                columns = {
                    "image/encoded": list(cols[0]),
                    "image/format": [f.encode() for f in cols[1]],
                    "image/class/label": np.asarray(cols[2], np.int64),
                    "image/class/text": [t.encode() for t in cols[3]],
                    "image/height": np.asarray(cols[4], np.int64),
                    "image/width": np.asarray(cols[5], np.int64),
                    "image/filename": [f.encode() for f in cols[6]],
                }
                writer.write_many(
                    encode_examples(
                        columns,
                        kinds={k: "bytes" for k in columns if k.endswith(("encoded", "format", "text", "filename"))},
                        as_batch=True,
                    )
                )
    summary.spec = {"classes": classes}
    return summary
