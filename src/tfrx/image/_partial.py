"""Partial JPEG decoding through libjpeg-turbo: decode only a window's rows and iMCU columns.

The native decoder (``src/native/jpeg_partial.cpp``) follows TensorFlow's
``decode_and_crop_jpeg`` step by step, so with a libjpeg-turbo it equals
``tf.io.decode_and_crop_jpeg`` bit for bit. The library is loaded at run
time, never linked: Pillow's wheels carry libjpeg-turbo (Pillow is in the
``image`` extra), and most Linux systems have it as ``libjpeg.so.62``.
``TFRX_LIBJPEG=/path/to/libjpeg.so.62`` chooses another one.
"""

from __future__ import annotations

import glob
import os
import sys
import threading
from importlib.util import find_spec
from typing import Any

import numpy as np

from tfrx import _native
from tfrx.errors import DecodeError

_lock = threading.Lock()
_state: dict[str, Any] = {"tried": False, "path": None, "errors": []}


def _candidates() -> list[str]:
    explicit = os.environ.get("TFRX_LIBJPEG")
    if explicit:
        return [explicit]
    found = []
    spec = find_spec("PIL")
    if spec is not None and spec.submodule_search_locations:
        pil = list(spec.submodule_search_locations)[0]
        # Wheels repaired by auditwheel / delocate keep their libraries beside the package.
        patterns = [
            os.path.join(os.path.dirname(pil), "pillow.libs", "libjpeg*.so*"),
            os.path.join(pil, ".dylibs", "libjpeg*.dylib"),
        ]
        for pattern in patterns:
            found.extend(sorted(glob.glob(pattern)))
    found.extend(["libjpeg.62.dylib"] if sys.platform == "darwin" else ["libjpeg.so.62"])
    return found


def partial_jpeg_backend() -> str | None:
    """The libjpeg-turbo that decodes crop windows (a path or soname), ``None`` when none could be loaded.

    Without one, ``decode_and_crop_jpeg`` decodes the whole image and crops
    (exact only where no chroma is upsampled across the window's edges), and
    the fused crop-and-resize decodes decode whole images.
    """
    if not _state["tried"]:
        with _lock:
            if not _state["tried"]:
                for path in _candidates():
                    why = _native.jpeg_load_library(path)
                    if not why:
                        _state["path"] = path
                        break
                    _state["errors"].append(why)
                _state["tried"] = True
    return _state["path"]


def raise_for_status(result: Any, data: Any, window: list[int] | None, what: str) -> None:
    status = result.status
    if status == _native.JPEG_INVALID:
        raise DecodeError(f"invalid JPEG ({len(data)} bytes): {result.message}")
    if status == _native.JPEG_BAD_WINDOW:
        h = result.header
        raise ValueError(
            f"{what}: crop window {window} is not inside the image of size [{h.scaled_height}, {h.scaled_width}] "
            "(TensorFlow: 'Invalid JPEG data or crop window')"
        )
    if status == _native.JPEG_TOO_LARGE:
        h = result.header
        raise DecodeError(
            f"{what}: JPEG of {h.scaled_height}x{h.scaled_width}x{h.components} is too large or empty (TensorFlow's limit is 2^29 samples)"
        )
    raise RuntimeError(f"{what}: partial JPEG decoder failed with status {status}")


def decode_window(
    data: Any,
    window: list[int] | None,
    *,
    channels: int,
    scale: tuple[int, int] = (1, 1),
    fancy_upscaling: bool = True,
    fast_dct: bool = True,
    try_recover_truncated: bool = False,
    finish: bool = True,
    what: str = "decode_and_crop_jpeg",
) -> np.ndarray:
    """The ``window`` [y, x, h, w] (in pixels at ``scale``) of a JPEG; needs ``partial_jpeg_backend()``."""
    result = _native.jpeg_decode(
        data, channels, scale[0], scale[1], fancy_upscaling, fast_dct, try_recover_truncated, window, finish
    )
    if result.status != _native.JPEG_OK:
        raise_for_status(result, data, window, what)
    image: np.ndarray = result.image  # type: ignore[assignment]  # the stub types the decoded array as object
    return image


def jpeg_header(data: Any, scale: tuple[int, int] = (1, 1)) -> Any:
    """The native header (``width``, ``height``, ``scaled_width``, ``scaled_height``, ``components``, ...)."""
    result = _native.jpeg_header(data, scale[0], scale[1])
    if result.status != _native.JPEG_OK:
        raise_for_status(result, data, None, "jpeg header")
    return result.header
