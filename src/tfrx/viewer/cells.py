"""A record as the viewer shows it: JSON cells by kind, images and boxes recognised.

Each feature becomes a cell: ``num`` (a few numbers inline), ``numlist``
(a long list summarised: count, range, mean and a 32-point sparkline),
``text`` (UTF-8 bytes), ``image`` / ``audio`` (recognised by their magic
bytes; fetched from ``/api/media`` when shown), ``raw_image`` (a bytes value
whose length fits the record's height x width x channels features), ``bytes``
(a hex head) or ``empty`` (a Feature with no kind, as TFX writes missing
values). The TF Object Detection API's ``image/object/bbox/*`` features give
``boxes`` with their labels. A SequenceExample gives its context cells and,
per feature list, the steps' cells. Any other payload gives a message and a
hex dump: it is never decoded as something it is not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.codec.sniff import EXAMPLE, SEQUENCE_EXAMPLE, record_kind

__all__ = ["record_view", "media_kind", "raw_image_shape", "boxes_of", "INLINE", "MAX_STEPS"]

INLINE = 8  # values shown inline before a list is summarised
MAX_STEPS = 64  # steps of a feature list sent per record
_TEXT_CHARS = 200

_MAGIC = [
    (b"\xff\xd8\xff", "image", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image", "image/png"),
    (b"GIF87a", "image", "image/gif"),
    (b"GIF89a", "image", "image/gif"),
    (b"BM", "image", "image/bmp"),
    (b"fLaC", "audio", "audio/flac"),
    (b"OggS", "audio", "audio/ogg"),
    (b"ID3", "audio", "audio/mpeg"),
]


def media_kind(value: bytes) -> tuple[str, str] | None:
    """("image" | "audio", MIME type) when ``value`` starts like a file of that kind."""
    head = bytes(value[:16])
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image", "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio", "audio/wav"
    for magic, kind, mime in _MAGIC:
        if head.startswith(magic):
            if magic == b"BM" and len(value) < 26:
                return None
            return kind, mime
    return None


def _scalar(features: dict, *names: str) -> int | None:
    for name in names:
        v = features.get(name)
        if isinstance(v, np.ndarray) and v.dtype.kind == "i" and v.size == 1:
            return int(v[0])
    return None


def raw_image_shape(features: dict, name: str, value: bytes) -> tuple[int, int, int] | None:
    """(height, width, channels) of a raw uint8 image in ``value``, from the record's shape features."""
    prefix = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
    h = _scalar(features, prefix + "height", "height", "image/height", prefix + "rows", "rows")
    w = _scalar(features, prefix + "width", "width", "image/width", prefix + "cols", "cols")
    if not h or not w or h <= 0 or w <= 0:
        return None
    c = _scalar(features, prefix + "depth", prefix + "channels", "depth", "channels", "image/channels")
    for channels in [c] if c else [1, 3, 4]:
        if channels in (1, 3, 4) and h * w * channels == len(value):
            return h, w, channels
    return None


def _text(value: bytes) -> str | None:
    try:
        s = bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None
    if s and all(ch.isprintable() or ch in "\n\t\r" for ch in s[:1000]):
        return s
    return None


def _spark(values: np.ndarray, points: int = 32) -> list[float]:
    v = values.astype(np.float64)
    if v.size > points:
        edges = np.linspace(0, v.size, points + 1).astype(np.int64)
        v = np.array([v[a:b].mean() for a, b in zip(edges[:-1], edges[1:])])
    finite = v[np.isfinite(v)]
    if not finite.size:
        return [0.0] * len(v)
    lo, hi = float(finite.min()), float(finite.max())
    span = hi - lo or 1.0
    return [round((x - lo) / span, 3) if np.isfinite(x) else 0.0 for x in v]


def _json_number(x) -> Any:
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float) and not np.isfinite(x):
        return str(x)
    return x


def value_cell(value: Any, features: dict | None = None, name: str = "") -> dict:
    """One feature's value (as ``decode_example`` gives it) as a cell."""
    if value is None:
        return {"t": "empty"}
    if isinstance(value, np.ndarray):
        kind = "int64" if value.dtype.kind == "i" else "float"
        if value.size <= INLINE:
            return {"t": "num", "kind": kind, "v": [_json_number(x) for x in value]}
        finite = value[np.isfinite(value)] if kind == "float" else value
        cell = {
            "t": "numlist",
            "kind": kind,
            "n": int(value.size),
            "head": [_json_number(x) for x in value[:INLINE]],
            "spark": _spark(value),
        }
        if finite.size:
            cell.update(
                min=_json_number(finite.min()), max=_json_number(finite.max()), mean=round(float(finite.mean()), 6)
            )
        return cell
    values = list(value)
    items = []
    for j, v in enumerate(values[:INLINE]):
        media = media_kind(v)
        if media:
            items.append({"t": media[0], "mime": media[1], "bytes": len(v), "j": j})
            continue
        shape = raw_image_shape(features or {}, name, v) if features is not None else None
        if shape:
            items.append({"t": "raw_image", "shape": list(shape), "bytes": len(v), "j": j})
            continue
        text = _text(v)
        if text is not None:
            items.append({"t": "text", "v": text[:_TEXT_CHARS], "cut": len(text) > _TEXT_CHARS})
        else:
            items.append({"t": "bytes", "hex": bytes(v[:32]).hex(), "bytes": len(v)})
    return {"t": "bytes_list", "n": len(values), "items": items}


def boxes_of(features: dict) -> list[dict]:
    """The Object Detection API's boxes (normalised corners) with their labels, when the record has them."""
    found = [features.get(f"image/object/bbox/{c}") for c in ("xmin", "ymin", "xmax", "ymax")]
    coords = [c for c in found if isinstance(c, np.ndarray)]
    if len(coords) != len(found):
        return []
    n = min(c.size for c in coords)
    texts = features.get("image/object/class/text")
    labels = features.get("image/object/class/label")
    out = []
    for i in range(n):
        box: dict[str, float | str] = {
            k: round(float(c[i]), 5) for k, c in zip(("xmin", "ymin", "xmax", "ymax"), coords)
        }
        if isinstance(texts, list) and i < len(texts):
            box["label"] = bytes(texts[i]).decode("utf-8", "replace")
        elif isinstance(labels, np.ndarray) and i < labels.size:
            box["label"] = str(int(labels[i]))
        out.append(box)
    return out


def record_view(record: bytes) -> dict:
    """The whole record as the viewer's JSON: kind, cells, boxes (or a message for other payloads)."""
    from tfrx.codec import decode_example, decode_sequence_example
    from tfrx.errors import DecodeError

    kind = record_kind(record)
    try:
        if kind == EXAMPLE or (kind != SEQUENCE_EXAMPLE and not record):
            features = decode_example(record, keep_empty=True)
            return {
                "kind": "Example",
                "size": len(record),
                "features": {k: value_cell(v, features, k) for k, v in sorted(features.items())},
                "boxes": boxes_of(features),
            }
        if kind == SEQUENCE_EXAMPLE:
            context, lists = decode_sequence_example(record, keep_empty=True)
            return {
                "kind": "SequenceExample",
                "size": len(record),
                "features": {k: value_cell(v, context, k) for k, v in sorted(context.items())},
                "feature_lists": {
                    k: {"steps": len(steps), "cells": [value_cell(s) for s in steps[:MAX_STEPS]]}
                    for k, steps in sorted(lists.items())
                },
                "boxes": boxes_of(context),
            }
    except DecodeError as e:
        return {"kind": "other", "size": len(record), "message": f"not a valid Example: {e}", "hex": record[:256].hex()}
    from tfrx.codec.sniff import describe

    return {
        "kind": "other",
        "size": len(record),
        "message": f"not a tf.train.Example or SequenceExample: {describe([record])}",
        "hex": record[:256].hex(),
    }
