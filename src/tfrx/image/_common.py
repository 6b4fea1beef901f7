"""Shared plumbing: optional imports, encoded inputs, format sniffing, the batch thread pool."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from tfrx.errors import DecodeError
from tfrx.options import resolve_parallelism

_lock = threading.Lock()
_modules: dict[str, Any] = {}


def _optional(name: str) -> Any:
    """Import an optional dependency once; ``None`` when it is not installed."""
    if name not in _modules:
        with _lock:
            if name not in _modules:
                try:
                    if name == "PIL":
                        from PIL import Image

                        _modules[name] = Image
                    else:
                        _modules[name] = __import__(name)
                except ImportError:
                    _modules[name] = None
    return _modules[name]


def _pil() -> Any:
    image = _optional("PIL")
    if image is None:
        raise ImportError("this image format needs Pillow: pip install 'tfrx[image]' (or pip install pillow)")
    return image


def jpeg_backend() -> str:
    """The library ``decode_jpeg`` uses: ``"simplejpeg"`` when installed, else ``"pillow"``."""
    return "simplejpeg" if _optional("simplejpeg") is not None else "pillow"


_SINGLE_TYPES = (bytes, bytearray, memoryview)


def _traced(value: Any) -> bool:
    """Whether ``value`` stands for a dataset element while ``tfrx.data`` traces a map function (to fuse its
    image work with ``batch``): the call is then recorded by ``value.__tfrx_trace__`` instead of run."""
    return hasattr(type(value), "__tfrx_trace__")


def _is_single(contents: Any) -> bool:
    if isinstance(contents, _SINGLE_TYPES):
        return True
    if isinstance(contents, np.ndarray):
        return contents.dtype == np.uint8 and contents.ndim == 1 or contents.ndim == 0
    return False


def _as_bytes(contents: Any) -> bytes | memoryview:
    if isinstance(contents, bytes):
        return contents
    if isinstance(contents, np.ndarray):
        if contents.ndim == 0:
            return _as_bytes(contents.item())
        return memoryview(np.ascontiguousarray(contents))  # type: ignore[arg-type]  # numpy stubs: __buffer__ on 3.12+ only
    if isinstance(contents, (bytearray, memoryview)):
        return memoryview(contents).cast("B")
    if isinstance(contents, str):
        raise TypeError("expected encoded image bytes, got str (open the file in binary mode or pass its bytes)")
    raise TypeError(f"expected encoded image bytes, got {type(contents).__name__}")


def _check_dtype(dtype: Any, allowed: Sequence[Any], what: str) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in [np.dtype(a) for a in allowed]:
        names = ", ".join(np.dtype(a).name for a in allowed)
        raise ValueError(f"{what}: dtype must be one of {names}, got {dt.name}")
    return dt


_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def image_format(contents: Any) -> str | None:
    """The format of encoded bytes from their magic number: ``"jpeg"``, ``"png"``, ``"gif"``, ``"bmp"``, ``"webp"`` or ``None``."""
    head = bytes(_as_bytes(contents)[:16])
    if head[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if head[:8] == _PNG_MAGIC:
        return "png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if head[:2] == b"BM":
        return "bmp"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return None


def _describe(data: Any) -> str:
    head = bytes(_as_bytes(data)[:8])
    return f"{len(_as_bytes(data))} bytes starting {head!r}"


_pools: dict[int, ThreadPoolExecutor] = {}


def _pool(threads: int) -> ThreadPoolExecutor:
    with _lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tfrx-image")
            _pools[threads] = pool
        return pool


def _forget_pools_in_child() -> None:
    # A forked child (a DataLoader worker) inherits the pools but not their threads:
    # work submitted to them would wait forever. It starts its own on first use.
    global _lock
    _lock = threading.Lock()
    _pools.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools_in_child)


_R = TypeVar("_R")


def _map(fn: Callable[[Any], _R], items: Sequence[Any], num_parallel_calls: int | None) -> list[_R]:
    threads = resolve_parallelism(num_parallel_calls, default=None)
    threads = min(threads, len(items))
    if threads <= 1:
        results = []
        for i, item in enumerate(items):
            results.append(_with_index(fn, item, i))
        return results
    futures = [_pool(threads).submit(_with_index, fn, item, i) for i, item in enumerate(items)]
    return [f.result() for f in futures]


def _with_index(fn: Callable[[Any], _R], item: Any, index: int) -> _R:
    try:
        return fn(item)
    except DecodeError as e:
        if e.record_index is None:
            e.record_index = index
            e.args = (f"image {index} of the batch: {e.args[0]}",) + e.args[1:]
        raise


def _stack_if_same(arrays: list[np.ndarray], stack: bool | str) -> np.ndarray | list[np.ndarray]:
    if stack is False:
        return arrays
    if arrays and all(a.shape == arrays[0].shape and a.dtype == arrays[0].dtype for a in arrays):
        return np.stack(arrays)
    if stack is True:
        shapes = sorted({a.shape for a in arrays})
        raise ValueError(
            f"cannot stack images of different shapes {shapes[:4]}; pass size=(h, w) to resize them or stack=False"
        )
    return arrays


def _batched(fn: Callable[[Any], np.ndarray], contents: Any, num_parallel_calls: int | None) -> Any:
    resolve_parallelism(num_parallel_calls, default=None)  # checked for one image too
    if _is_single(contents):
        return fn(contents)
    if isinstance(contents, str):
        raise TypeError("expected encoded image bytes, got str (open the file in binary mode or pass its bytes)")
    items = list(contents.ravel()) if isinstance(contents, np.ndarray) else list(contents)
    return _stack_if_same(_map(fn, items, num_parallel_calls), "auto")
