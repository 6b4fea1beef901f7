"""Elements held by value: a dataset over a Python list, and a byte encoding of elements.

:class:`ElementsDataset` is the small dataset ``window`` and ``group_by_window``
hand to user functions (the elements of one window or group, any shapes).
:func:`encode_element` / :func:`decode_element` turn an element (NumPy
arrays and scalars, ``bytes``, dicts and tuples of them) into bytes and back,
exactly (dtype, shape and values); ``save`` writes them as records and
iterators whose state holds elements (a ``scan`` state, the open groups of
``group_by_window``) put them in their JSON state as base64 text
(:func:`element_to_json` / :func:`element_from_json`).
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext

__all__ = ["ElementsDataset", "encode_element", "decode_element", "element_to_json", "element_from_json"]


class ListIterator(DatasetIterator):
    """The elements of a list, in order; its state is the index of the next one."""

    def __init__(self, elements: list) -> None:
        self._elements = elements
        self._i = 0

    def __next__(self):
        if self._i >= len(self._elements):
            raise StopIteration
        self._i += 1
        return self._elements[self._i - 1]

    def get_state(self) -> dict:
        return {"index": self._i}

    def set_state(self, state: dict) -> None:
        self._i = int(state["index"])


class ElementsDataset(Dataset):
    """The elements of a Python list, in order (elements may differ in shape)."""

    def __init__(self, elements: list) -> None:
        super().__init__()
        self._elements = list(elements)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        return ListIterator(self._elements)

    def cardinality(self) -> int:
        return len(self._elements)


def _tree(x: Any, buffers: list) -> Any:
    """The JSON description of ``x``; leaf payloads are appended to ``buffers``."""
    if isinstance(x, dict):
        return {"dict": [[k, _tree(v, buffers)] for k, v in x.items()]}
    if isinstance(x, tuple):
        return {"tuple": [_tree(v, buffers) for v in x]}
    if isinstance(x, (bytes, np.bytes_)):
        buffers.append(bytes(x))
        return {"bytes": len(buffers[-1])}
    if isinstance(x, str):
        buffers.append(x.encode())
        return {"bytes": len(buffers[-1])}
    if isinstance(x, np.generic):
        a = np.asarray(x)
        buffers.append(a.tobytes())
        return {"scalar": a.dtype.str}
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind in "SU":
        items = [v.encode() if isinstance(v, str) else bytes(v) for v in a.ravel().tolist()]
        buffers.extend(items)
        return {"strings": list(a.shape), "lengths": [len(v) for v in items]}
    buffers.append(np.ascontiguousarray(a).tobytes())
    return {"array": a.dtype.str, "shape": list(a.shape)}


def encode_element(x: Any) -> bytes:
    """``x`` as bytes: a 4-byte header length, a JSON header, then the raw payloads."""
    buffers: list = []
    header = json.dumps(_tree(x, buffers), separators=(",", ":")).encode()
    return b"".join([struct.pack("<I", len(header)), header, *buffers])


def _untree(t: dict, data: memoryview, pos: list) -> Any:
    def take(n: int) -> bytes:
        start = pos[0]
        if start + n > len(data):
            raise ValueError(f"encoded element ends at byte {len(data)}, a payload needs bytes {start}..{start + n}")
        pos[0] = start + n
        return bytes(data[start : start + n])

    if "dict" in t:
        return {k: _untree(v, data, pos) for k, v in t["dict"]}
    if "tuple" in t:
        return tuple(_untree(v, data, pos) for v in t["tuple"])
    if "bytes" in t:
        return take(int(t["bytes"]))
    if "scalar" in t:
        dt = np.dtype(t["scalar"])
        return np.frombuffer(take(dt.itemsize), dtype=dt)[0]
    if "strings" in t:
        out = np.empty(len(t["lengths"]), dtype=object)
        out[:] = [take(int(n)) for n in t["lengths"]]
        return out.reshape(t["strings"])
    dt = np.dtype(t["array"])
    shape = tuple(t["shape"])
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    return np.frombuffer(take(n), dtype=dt).reshape(shape).copy()


def decode_element(data: bytes) -> Any:
    """The element :func:`encode_element` wrote; ``ValueError`` if ``data`` is not one."""
    view = memoryview(data)
    if len(view) < 4:
        raise ValueError(f"encoded element of {len(view)} bytes is shorter than its 4-byte header length")
    (n,) = struct.unpack_from("<I", view, 0)
    if 4 + n > len(view):
        raise ValueError(f"encoded element header claims {n} bytes, only {len(view) - 4} follow")
    try:
        tree = json.loads(bytes(view[4 : 4 + n]))
    except ValueError as e:
        raise ValueError(f"encoded element header is not JSON: {e}") from None
    pos = [4 + n]
    value = _untree(tree, view, pos)
    if pos[0] != len(view):
        raise ValueError(f"encoded element has {len(view) - pos[0]} bytes after its last payload")
    return value


def element_to_json(x: Any) -> str:
    """An element as ASCII text for a JSON iterator state."""
    return base64.b64encode(encode_element(x)).decode("ascii")


def element_from_json(text: str) -> Any:
    return decode_element(base64.b64decode(text))
