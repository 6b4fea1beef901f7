"""decode_image (format sniffed from magic bytes) and decode_batch (decode + resize on a thread pool)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.options import renamed_arguments
from tfrx.image._common import (
    _batched,
    _check_dtype,
    _is_single,
    _map,
    _stack_if_same,
    _traced,
)
from tfrx.image._any import _decode_image_one
from tfrx.image._fused import decode_and_resize
from tfrx.image._resize import resize


@renamed_arguments(num_threads="num_parallel_calls")
def decode_image(
    contents: Any,
    channels: int | None = None,
    dtype: Any = np.uint8,
    expand_animations: bool = True,
    *,
    num_parallel_calls: int | None = None,
) -> Any:
    """``tf.io.decode_image``: sniff the format from magic bytes and decode.

    JPEG, PNG and BMP give (h, w, c); GIF gives (frames, h, w, 3) unless
    ``expand_animations=False`` (first frame, 3-D). WebP is decoded when
    Pillow supports it. ``dtype`` uint8, uint16 or float32 (scaled to [0, 1]
    like TensorFlow).
    """
    ch = 0 if channels is None else channels
    if ch not in (0, 1, 3, 4):
        raise ValueError(f"decode_image: channels must be None, 0, 1, 3 or 4, got {channels!r}")
    dt = _check_dtype(dtype, (np.uint8, np.uint16, np.float32), "decode_image")
    if _traced(contents):
        return contents.__tfrx_trace__(
            "decode_image", channels=ch, dtype=dt.name, expand_animations=bool(expand_animations)
        )
    return _batched(lambda c: _decode_image_one(c, ch, dt, expand_animations), contents, num_parallel_calls)


@renamed_arguments(num_threads="num_parallel_calls")
def decode_batch(
    contents: Any,
    channels: int | None = 3,
    *,
    size: tuple[int, int] | None = None,
    method: str = "bilinear",
    antialias: bool = False,
    dtype: Any = np.uint8,
    num_parallel_calls: int | None = None,
    stack: bool | str = "auto",
) -> Any:
    """Decode many encoded images (any supported format) on a thread pool.

    With ``size=(h, w)`` each image is resized in the worker (``resize``
    semantics, float32 except for ``method="nearest"``) and the batch is
    stacked into (n, h, w, c). Without it the batch is stacked when all shapes
    agree (``stack="auto"``), always (``True``, raising otherwise) or never.
    ``num_parallel_calls`` defaults to the usable cores.
    """
    ch = 0 if channels is None else channels
    dt = _check_dtype(dtype, (np.uint8, np.uint16, np.float32), "decode_batch")
    if _is_single(contents):
        contents = [contents]
    items = list(contents.ravel()) if isinstance(contents, np.ndarray) else list(contents)

    if size is not None and method == "bilinear" and not antialias and items:
        # decode_and_resize: JPEGs decoded and resized by one native call, other images resized straight
        # into their rows of the batch (the same pixels as below).
        return decode_and_resize(
            items, size, channels=ch, format="image", dtype=dt, num_parallel_calls=num_parallel_calls
        )

    def work(c: Any) -> np.ndarray:
        img = _decode_image_one(c, ch, dt, expand_animations=False)
        return img if size is None else resize(img, size, method=method, antialias=antialias)

    images = _map(work, items, num_parallel_calls)
    if not images and size is not None:
        return np.zeros((0, size[0], size[1], ch or 3), np.float32)
    return _stack_if_same(images, True if size is not None else stack)
