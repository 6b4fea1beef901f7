"""A record as the viewer shows it: JSON cells by kind, images and boxes recognised.

Each feature becomes a cell: ``num`` (a few numbers inline), ``numlist``
(a long list summarised: count, range, mean and a 32-point sparkline),
``text`` (UTF-8 bytes), ``image`` / ``audio`` (recognised by their magic
bytes; fetched from ``/api/media`` when shown), ``raw_image`` (a bytes value
whose length fits the record's height x width x channels features), ``bytes``
(a hex head) or ``empty`` (a Feature with no kind, as TFX writes missing
values). The TF Object Detection API's ``image/object/bbox/*`` features give
``boxes`` with their labels, and so do a TFDS directory's ``BBoxFeature``s
(``ymin, xmin, ymax, xmax`` per box, labelled by the ClassLabel beside them).
Depth and float images (16-bit grey PNGs, a TFDS ``Image(dtype=float32)``)
are marked ``colormap``: ``/api/media`` sends them through a colour map
(:func:`colormap_png`). A SequenceExample gives its context cells and, per
feature list, the steps' cells. A TensorBoard events file's records are
decoded into their step, wall time and one cell per tag (:func:`event_view`).
Any other payload gives a message and a hex dump: it is never decoded as
something it is not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrx.codec._sniff import EXAMPLE, SEQUENCE_EXAMPLE, record_kind

__all__ = [
    "record_view",
    "event_view",
    "event_media",
    "media_kind",
    "raw_image_shape",
    "boxes_of",
    "colormap_png",
    "is_deep_png",
    "thumbnail",
    "INLINE",
    "MAX_STEPS",
]

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


def is_deep_png(value: bytes) -> bool:
    """A 16-bit greyscale PNG (depth maps): browsers show only its high byte, so it goes through a colour map."""
    head = bytes(value[:26])
    return head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and head[24] == 16 and head[25] in (0, 4)


def value_cell(value: Any, features: dict | None = None, name: str = "", colormap: frozenset = frozenset()) -> dict:
    """One feature's value (as ``decode_example`` gives it) as a cell.

    ``colormap`` names the features whose images are depth or float data.
    """
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
            item = {"t": media[0], "mime": media[1], "bytes": len(v), "j": j}
            if media[0] == "image" and (name in colormap or is_deep_png(v)):
                item["colormap"] = True
            items.append(item)
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


def boxes_of(features: dict, tfds_boxes=(), labels: dict | None = None) -> list[dict]:
    """The boxes to draw (normalised corners) with their labels, when the record has them.

    The Object Detection API's ``image/object/bbox/*`` features, and each
    TFDS ``BBoxFeature`` named in ``tfds_boxes`` (``(bbox key, label key)``
    pairs; values ``ymin, xmin, ymax, xmax`` per box), labelled by the class
    names in ``labels`` (by file stem, as TFDS names its label files).
    """
    found = [features.get(f"image/object/bbox/{c}") for c in ("xmin", "ymin", "xmax", "ymax")]
    coords = [c for c in found if isinstance(c, np.ndarray)]
    out: list[dict] = []
    if len(coords) == len(found):
        n = min(c.size for c in coords)
        texts = features.get("image/object/class/text")
        numbers = features.get("image/object/class/label")
        for i in range(n):
            box: dict[str, float | str] = {
                k: round(float(c[i]), 5) for k, c in zip(("xmin", "ymin", "xmax", "ymax"), coords)
            }
            if isinstance(texts, list) and i < len(texts):
                box["label"] = bytes(texts[i]).decode("utf-8", "replace")
            elif isinstance(numbers, np.ndarray) and i < numbers.size:
                box["label"] = str(int(numbers[i]))
            out.append(box)
    for key, label_key in tfds_boxes:
        values = features.get(key)
        if not isinstance(values, np.ndarray) or values.dtype.kind != "f" or values.size % 4:
            continue
        classes = features.get(label_key) if label_key else None
        names = (labels or {}).get(label_key.replace("/", "-"), []) if label_key else []
        for i, (ymin, xmin, ymax, xmax) in enumerate(values.reshape(-1, 4).tolist()):
            box = {"xmin": round(xmin, 5), "ymin": round(ymin, 5), "xmax": round(xmax, 5), "ymax": round(ymax, 5)}
            if isinstance(classes, np.ndarray) and classes.dtype.kind == "i" and i < classes.size:
                c = int(classes[i])
                box["label"] = names[c] if 0 <= c < len(names) else str(c)
            out.append(box)
    return out


def record_view(record: bytes, *, tfds=None, events: bool = False) -> dict:
    """The whole record as the viewer's JSON: kind, cells, boxes (or a message for other payloads).

    ``tfds`` is a :class:`tfrx.viewer._source.TfdsHints` (boxes, colour-mapped
    images, class names); ``events`` reads the record as a TensorBoard Event.
    """
    from tfrx.codec import decode_example, decode_sequence_example
    from tfrx.errors import DecodeError

    if events:
        view = event_view(record)
        if view is not None:
            return view
    colormap = frozenset(tfds.colormap) if tfds is not None else frozenset()
    tfds_boxes = tfds.boxes if tfds is not None else ()
    labels = tfds.labels if tfds is not None else None
    kind = record_kind(record)
    try:
        if kind == EXAMPLE or (kind != SEQUENCE_EXAMPLE and not record):
            features = decode_example(record, keep_empty=True)
            return {
                "kind": "Example",
                "size": len(record),
                "features": {k: value_cell(v, features, k, colormap) for k, v in sorted(features.items())},
                "boxes": boxes_of(features, tfds_boxes, labels),
            }
        if kind == SEQUENCE_EXAMPLE:
            context, lists = decode_sequence_example(record, keep_empty=True)
            return {
                "kind": "SequenceExample",
                "size": len(record),
                "features": {k: value_cell(v, context, k, colormap) for k, v in sorted(context.items())},
                "feature_lists": {
                    k: {"steps": len(steps), "cells": [value_cell(s) for s in steps[:MAX_STEPS]]}
                    for k, steps in sorted(lists.items())
                },
                "boxes": boxes_of(context, tfds_boxes, labels),
            }
    except DecodeError as e:
        return {"kind": "other", "size": len(record), "message": f"not a valid Example: {e}", "hex": record[:256].hex()}
    from tfrx.codec._sniff import describe

    return {
        "kind": "other",
        "size": len(record),
        "message": f"not a tf.train.Example or SequenceExample: {describe([record])}",
        "hex": record[:256].hex(),
    }


# ---------------------------------------------------------------------- TensorBoard events
def _event(record: bytes):
    from tfrx.codec.events import Events, decode_event

    out = Events()
    try:
        decode_event(record, out)
    except Exception:  # not an Event, or one whose tensor cannot be read: shown as other bytes
        return None
    return out


def event_view(record: bytes) -> dict | None:
    """A TensorBoard Event as a row: ``step``, ``wall_time`` and one cell per tag; ``None`` if it is not one.

    Scalars are numbers, histograms a ``numlist`` of their bucket counts,
    images ``image`` items (``/api/media`` serves them by tag), text as text,
    other plugins' tensors by shape. An event without a summary (the file's
    ``file_version``, graphs, session logs) shows what it holds.
    """
    from tfrx.codec.events import Event

    out = _event(record)
    if out is None:
        return None
    event = Event.FromString(bytes(record))
    import datetime

    wall = float(event.wall_time)
    when = datetime.datetime.fromtimestamp(wall, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    cells: dict[str, dict] = {
        "step": {"t": "num", "kind": "int64", "v": [int(event.step)]},
        "wall_time": {"t": "bytes_list", "n": 1, "items": [{"t": "text", "v": f"{when} UTC", "cut": False}]},
    }
    what = event.WhichOneof("what")
    if what != "summary":
        text = event.file_version if what == "file_version" else (what or "empty")
        cells["(event)"] = {"t": "bytes_list", "n": 1, "items": [{"t": "text", "v": str(text), "cut": False}]}
    for s in out.scalars:
        value = float(str(np.float32(s.value))) if np.isfinite(s.value) else str(s.value)  # float32's digits
        cells[s.tag] = {"t": "num", "kind": "float", "v": [value]}
    for h in out.histograms:
        cells[h.tag] = value_cell(np.asarray(h.counts, np.float64).astype(np.float32))
        cells[h.tag]["histogram"] = True
    for j, im in enumerate(out.images):
        kind = media_kind(im.encoded)
        item = {"t": "image" if kind else "bytes", "mime": kind[1] if kind else "", "bytes": len(im.encoded), "j": j}
        if not kind:
            item["hex"] = im.encoded[:32].hex()
        prev = cells.get(im.tag)
        if prev and prev["t"] == "bytes_list":
            prev["items"].append(item)
            prev["n"] += 1
        else:
            cells[im.tag] = {"t": "bytes_list", "n": 1, "items": [item]}
    for a in out.audio:
        cells[a.tag] = {"t": "bytes_list", "n": 1, "items": [{"t": "audio", "bytes": len(a.encoded), "j": 0}]}
    for t in out.text:
        text = t.text if isinstance(t.text, str) else " | ".join(map(str, np.asarray(t.text).ravel()[:INLINE]))
        cut = len(text) > _TEXT_CHARS
        cells[t.tag] = {"t": "bytes_list", "n": 1, "items": [{"t": "text", "v": text[:_TEXT_CHARS], "cut": cut}]}
    for tensor in out.tensors:
        shape = "x".join(map(str, tensor.value.shape)) if tensor.value is not None else "no tensor"
        desc = f"{tensor.plugin or 'tensor'}: {shape}"
        cells[tensor.tag] = {"t": "bytes_list", "n": 1, "items": [{"t": "text", "v": desc, "cut": False}]}
    return {"kind": "Event", "size": len(record), "features": cells, "boxes": []}


def event_media(record: bytes, tag: str, j: int) -> tuple[bytes, str] | None:
    """The ``j``-th image (or audio clip) of ``tag`` in an Event, with its MIME type."""
    out = _event(record)
    if out is None:
        return None
    images = [im.encoded for im in out.images if im.tag == tag]
    if 0 <= j < len(images):
        kind = media_kind(images[j])
        return images[j], kind[1] if kind else "application/octet-stream"
    clips = [a for a in out.audio if a.tag == tag]
    if 0 <= j < len(clips):
        kind = media_kind(clips[j].encoded)
        return clips[j].encoded, (kind[1] if kind else clips[j].content_type or "application/octet-stream")
    return None


# ---------------------------------------------------------------------- depth and float images
# Viridis at nine points (matplotlib's, public domain), interpolated between them.
_VIRIDIS = np.array(
    [
        [68, 1, 84],
        [71, 44, 122],
        [59, 81, 139],
        [44, 113, 142],
        [33, 144, 141],
        [39, 173, 129],
        [92, 200, 99],
        [170, 220, 50],
        [253, 231, 37],
    ],
    np.float64,
)


def colormap(values: np.ndarray) -> np.ndarray:
    """A 2-D array of numbers as RGB through viridis, from its 1st to 99th percentile; NaN and infinities black."""
    v = np.asarray(values, np.float64)
    finite = np.isfinite(v)
    out = np.zeros(v.shape + (3,), np.uint8)
    if not finite.any():
        return out
    lo, hi = np.percentile(v[finite], [1, 99])
    if hi <= lo:
        lo, hi = float(v[finite].min()), float(v[finite].max())
    scaled = np.clip((v - lo) / (hi - lo if hi > lo else 1.0), 0, 1) * (len(_VIRIDIS) - 1)
    scaled = np.where(finite, scaled, 0)
    i = np.minimum(scaled.astype(np.int64), len(_VIRIDIS) - 2)
    f = (scaled - i)[..., None]
    rgb = _VIRIDIS[i] * (1 - f) + _VIRIDIS[i + 1] * f
    out[...] = np.round(rgb).astype(np.uint8)
    out[~finite] = 0
    return out


def colormap_png(value: bytes, dtype: str | None = None) -> bytes:
    """An encoded depth or float image shown through a colour map, as PNG.

    ``dtype="float32"``: a TFDS float image (a 4-channel 8-bit PNG holding the
    float's little-endian bytes); otherwise the image's own values (16-bit
    grey, or 8-bit class ids with ``use_colormap``), its first channel.
    """
    from tfrx.image import decode_image, encode_png

    if dtype == "float32":
        rgba = np.ascontiguousarray(decode_image(value, channels=4, dtype=np.uint8))
        plane = rgba.view("<f4")[..., 0]
    else:
        deep = is_deep_png(value)
        img = np.asarray(decode_image(value, dtype=np.uint16 if deep else np.uint8))
        plane = img[..., 0] if img.ndim == 3 else img
    return encode_png(colormap(plane))


def thumbnail(value: bytes, max_side: int = 128) -> tuple[bytes, str] | None:
    """A small JPEG (PNG for images with alpha) of an encoded image, at most ``max_side`` pixels a side."""
    from tfrx.image import decode_image, encode_jpeg, encode_png, resize

    try:
        img = np.asarray(decode_image(value, expand_animations=False))
    except Exception:
        return None
    if img.ndim == 2:
        img = img[..., None]
    h, w = img.shape[:2]
    scale = max_side / max(h, w)
    if scale < 1:
        size = (max(1, round(h * scale)), max(1, round(w * scale)))
        img = np.clip(np.asarray(resize(img, size, method="area")), 0, 255).astype(np.uint8)
    if img.shape[-1] in (2, 4):
        return encode_png(img), "image/png"
    return encode_jpeg(img, quality=80), "image/jpeg"
