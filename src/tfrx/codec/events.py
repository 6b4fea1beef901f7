"""TensorBoard event files without TensorFlow or TensorBoard: ``tfrx.codec.events.read(path_or_dir)``.

An event file (``events.out.tfevents.*``) is a TFRecord file of ``Event``
protos: a wall time, a step and one payload, usually a ``Summary`` of tagged
values. Three generations of writers store them differently, and all three are
read here into the same records:

- TensorFlow 1 (``tf.compat.v1.summary``) and PyTorch's ``SummaryWriter``:
  ``simple_value`` (scalars), ``histo`` (``HistogramProto``), ``image``
  (encoded PNG/JPEG), ``audio``;
- TensorFlow 2 (``tf.summary``): a ``tensor`` with ``metadata.plugin_data``
  naming the plugin: ``scalars`` (a 0-d tensor), ``histograms`` (``k x 3``:
  left edge, right edge, count), ``images`` (width, height, encoded images as
  strings), ``audio``, ``text`` (string tensors), ``hparams`` (the plugin's own
  proto, kept as bytes);
- any other plugin: its tensor and plugin name, in ``tensors``.

The messages are declared here (wire-compatible with TensorFlow's
``event.proto`` and ``summary.proto``, in tfrx's own proto package), so
nothing of TensorFlow is needed. ``Events.to_pandas()`` turns each kind into
a DataFrame when pandas is installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tfrx.codec._tensor_proto import MAX_EXPANDED_BYTES
from tfrx.train._descriptors import PACKAGE as _PACKAGE
from tfrx.train._descriptors import _field

__all__ = ["Events", "Scalar", "Histogram", "Image", "Audio", "Text", "Tensor", "read", "decode_event", "is_event_file"]

_FILE = "tfrx/proto/event.proto"
_F = descriptor_pb2.FieldDescriptorProto


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """Event, Summary and what they hold, with TensorFlow's field numbers (TensorProto kept as bytes)."""
    fd = descriptor_pb2.FileDescriptorProto(name=_FILE, package=_PACKAGE, syntax="proto3")
    m = fd.message_type.add(name="HistogramProto")
    for name, number in (("min", 1), ("max", 2), ("num", 3), ("sum", 4), ("sum_squares", 5)):
        _field(m, name, number, _F.TYPE_DOUBLE)
    _field(m, "bucket_limit", 6, _F.TYPE_DOUBLE, label=_F.LABEL_REPEATED, packed=True)
    _field(m, "bucket", 7, _F.TYPE_DOUBLE, label=_F.LABEL_REPEATED, packed=True)
    m = fd.message_type.add(name="SummaryPluginData")
    _field(m, "plugin_name", 1, _F.TYPE_STRING)
    _field(m, "content", 2, _F.TYPE_BYTES)
    m = fd.message_type.add(name="SummaryMetadata")
    _field(m, "plugin_data", 1, _F.TYPE_MESSAGE, type_name="SummaryPluginData")
    _field(m, "display_name", 2, _F.TYPE_STRING)
    _field(m, "summary_description", 3, _F.TYPE_STRING)
    _field(m, "data_class", 4, _F.TYPE_INT32)
    m = fd.message_type.add(name="SummaryImage")
    _field(m, "height", 1, _F.TYPE_INT32)
    _field(m, "width", 2, _F.TYPE_INT32)
    _field(m, "colorspace", 3, _F.TYPE_INT32)
    _field(m, "encoded_image_string", 4, _F.TYPE_BYTES)
    m = fd.message_type.add(name="SummaryAudio")
    _field(m, "sample_rate", 1, _F.TYPE_FLOAT)
    _field(m, "num_channels", 2, _F.TYPE_INT64)
    _field(m, "length_frames", 3, _F.TYPE_INT64)
    _field(m, "encoded_audio_string", 4, _F.TYPE_BYTES)
    _field(m, "content_type", 5, _F.TYPE_STRING)
    m = fd.message_type.add(name="SummaryValue")
    m.oneof_decl.add(name="value")
    _field(m, "tag", 1, _F.TYPE_STRING)
    _field(m, "simple_value", 2, _F.TYPE_FLOAT, oneof=0)
    _field(m, "obsolete_old_style_histogram", 3, _F.TYPE_BYTES, oneof=0)
    _field(m, "image", 4, _F.TYPE_MESSAGE, type_name="SummaryImage", oneof=0)
    _field(m, "histo", 5, _F.TYPE_MESSAGE, type_name="HistogramProto", oneof=0)
    _field(m, "audio", 6, _F.TYPE_MESSAGE, type_name="SummaryAudio", oneof=0)
    _field(m, "node_name", 7, _F.TYPE_STRING)
    _field(m, "tensor", 8, _F.TYPE_BYTES, oneof=0)  # a TensorProto (tfrx.codec._tensor_proto reads it)
    _field(m, "metadata", 9, _F.TYPE_MESSAGE, type_name="SummaryMetadata")
    m = fd.message_type.add(name="Summary")
    _field(m, "value", 1, _F.TYPE_MESSAGE, label=_F.LABEL_REPEATED, type_name="SummaryValue")
    m = fd.message_type.add(name="LogMessage")
    _field(m, "level", 1, _F.TYPE_INT32)
    _field(m, "message", 2, _F.TYPE_STRING)
    m = fd.message_type.add(name="SessionLog")
    _field(m, "status", 1, _F.TYPE_INT32)
    _field(m, "checkpoint_path", 2, _F.TYPE_STRING)
    _field(m, "msg", 3, _F.TYPE_STRING)
    m = fd.message_type.add(name="Event")
    m.oneof_decl.add(name="what")
    _field(m, "wall_time", 1, _F.TYPE_DOUBLE)
    _field(m, "step", 2, _F.TYPE_INT64)
    _field(m, "file_version", 3, _F.TYPE_STRING, oneof=0)
    _field(m, "graph_def", 4, _F.TYPE_BYTES, oneof=0)
    _field(m, "summary", 5, _F.TYPE_MESSAGE, type_name="Summary", oneof=0)
    _field(m, "log_message", 6, _F.TYPE_MESSAGE, type_name="LogMessage", oneof=0)
    _field(m, "session_log", 7, _F.TYPE_MESSAGE, type_name="SessionLog", oneof=0)
    _field(m, "tagged_run_metadata", 8, _F.TYPE_BYTES, oneof=0)
    _field(m, "meta_graph_def", 9, _F.TYPE_BYTES, oneof=0)
    return fd


def _message_class(name: str):
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_FILE)
    except KeyError:
        pool.AddSerializedFile(_file_descriptor().SerializeToString())
    descriptor = pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")
    get_class = getattr(message_factory, "GetMessageClass", None)
    return get_class(descriptor) if get_class else message_factory.MessageFactory().GetPrototype(descriptor)


Event = _message_class("Event")


# ------------------------------------------------------------------ records
@dataclass
class Scalar:
    run: str
    tag: str
    step: int
    wall_time: float
    value: float


@dataclass
class Histogram:
    """Bucket right edges ``limits`` and ``counts`` (TF1/PyTorch also give min/max/num/sum/sum_squares)."""

    run: str
    tag: str
    step: int
    wall_time: float
    limits: np.ndarray
    counts: np.ndarray
    min: float | None = None
    max: float | None = None
    num: float | None = None
    sum: float | None = None
    sum_squares: float | None = None

    def table(self) -> np.ndarray:
        """``k x 3`` rows of (left edge, right edge, count), as TensorBoard shows histograms."""
        k = len(self.counts)
        if not k:
            return np.zeros((0, 3))
        right = np.asarray(self.limits, np.float64).copy()
        if self.max is not None:
            right[-1] = self.max
        left = np.concatenate([[self.min if self.min is not None else right[0]], right[:-1]])
        return np.stack([left, right, np.asarray(self.counts, np.float64)], axis=1)


@dataclass
class Image:
    run: str
    tag: str
    step: int
    wall_time: float
    encoded: bytes
    width: int | None = None
    height: int | None = None


@dataclass
class Audio:
    run: str
    tag: str
    step: int
    wall_time: float
    encoded: bytes
    sample_rate: float | None = None
    content_type: str = ""


@dataclass
class Text:
    run: str
    tag: str
    step: int
    wall_time: float
    text: Any  # a str, or an array of str for a text tensor of several strings


@dataclass
class Tensor:
    """A summary tensor of a plugin read here only as its tensor (``hparams``: ``content`` holds its proto)."""

    run: str
    tag: str
    step: int
    wall_time: float
    plugin: str
    value: np.ndarray | None
    content: bytes = b""


@dataclass
class Events:
    """Everything read from event files, by kind; ``to_pandas()`` gives a DataFrame per kind."""

    scalars: list[Scalar] = field(default_factory=list)
    histograms: list[Histogram] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    audio: list[Audio] = field(default_factory=list)
    text: list[Text] = field(default_factory=list)
    tensors: list[Tensor] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    events: int = 0

    def tags(self) -> dict[str, list[str]]:
        """Tags seen per kind."""
        return {
            kind: sorted({r.tag for r in getattr(self, kind)})
            for kind in ("scalars", "histograms", "images", "audio", "text", "tensors")
            if getattr(self, kind)
        }

    def to_pandas(self) -> dict:
        """``{kind: pandas.DataFrame}`` for every kind that has records."""
        import dataclasses

        import pandas as pd

        return {
            kind: pd.DataFrame([dataclasses.asdict(r) for r in getattr(self, kind)])
            for kind in ("scalars", "histograms", "images", "audio", "text", "tensors")
            if getattr(self, kind)
        }


def _text_value(array: np.ndarray) -> Any:
    decoded = np.vectorize(lambda b: b.decode("utf-8", "replace"), otypes=[object])(array) if array.size else array
    return decoded.item() if decoded.shape == () else decoded


def decode_event(
    record: bytes, out: Events, run: str = "", *, max_expanded_bytes: int | None = MAX_EXPANDED_BYTES
) -> None:
    """Adds what one serialized Event holds to ``out``.

    ``max_expanded_bytes`` bounds a tensor whose shape asks for more values than
    its bytes hold (see :func:`tfrx.io.parse_tensor`); beyond it a
    :class:`tfrx.errors.DecodeError` names the shape.
    """
    event = Event.FromString(bytes(record))
    out.events += 1
    if event.WhichOneof("what") != "summary":
        return
    step, wall = int(event.step), float(event.wall_time)
    for v in event.summary.value:
        kind = v.WhichOneof("value")
        plugin = v.metadata.plugin_data.plugin_name if v.HasField("metadata") else ""
        tag = v.tag or v.node_name
        if kind == "simple_value":
            out.scalars.append(Scalar(run, tag, step, wall, float(v.simple_value)))
        elif kind == "histo":
            h = v.histo
            out.histograms.append(
                Histogram(
                    run,
                    tag,
                    step,
                    wall,
                    np.asarray(h.bucket_limit, np.float64),
                    np.asarray(h.bucket, np.float64),
                    h.min,
                    h.max,
                    h.num,
                    h.sum,
                    h.sum_squares,
                )
            )
        elif kind == "image":
            out.images.append(
                Image(run, tag, step, wall, bytes(v.image.encoded_image_string), v.image.width, v.image.height)
            )
        elif kind == "audio":
            out.audio.append(
                Audio(
                    run, tag, step, wall, bytes(v.audio.encoded_audio_string), v.audio.sample_rate, v.audio.content_type
                )
            )
        elif kind == "tensor":
            _decode_tensor_value(v, plugin, out, run, tag, step, wall, max_expanded_bytes)
        elif plugin:  # a plugin summary with no tensor (hparams' session records)
            out.tensors.append(Tensor(run, tag, step, wall, plugin, None, bytes(v.metadata.plugin_data.content)))


def _decode_tensor_value(
    v, plugin: str, out: Events, run: str, tag: str, step: int, wall: float, max_expanded_bytes: int | None
) -> None:
    """A ``tensor`` summary value: the plugins that TensorBoard stores as tensors, else a plain Tensor."""
    from tfrx.codec._tensor_proto import parse_tensor

    array = parse_tensor(v.tensor, None, max_expanded_bytes=max_expanded_bytes)
    if plugin == "scalars" and array.size == 1:
        out.scalars.append(Scalar(run, tag, step, wall, float(array.reshape(()))))
    elif plugin == "histograms" and array.ndim == 2 and array.shape[1] == 3:
        out.histograms.append(
            Histogram(
                run,
                tag,
                step,
                wall,
                array[:, 1].astype(np.float64),
                array[:, 2].astype(np.float64),
                float(array[0, 0]) if len(array) else None,
                float(array[-1, 1]) if len(array) else None,
                float(array[:, 2].sum()),
            )
        )
    elif plugin == "images" and array.dtype == object and array.ndim == 1 and len(array) >= 2:
        width, height = (int(x) for x in array[:2])
        for encoded in array[2:]:
            out.images.append(Image(run, tag, step, wall, bytes(encoded), width, height))
    elif plugin == "audio" and array.dtype == object:
        for encoded in array.reshape(-1, array.shape[-1])[:, 0] if array.ndim >= 2 else array:
            out.audio.append(Audio(run, tag, step, wall, bytes(encoded)))
    elif plugin == "text" and array.dtype == object:
        out.text.append(Text(run, tag, step, wall, _text_value(array)))
    else:
        content = bytes(v.metadata.plugin_data.content) if plugin else b""
        out.tensors.append(Tensor(run, tag, step, wall, plugin, array, content))


def is_event_file(name: str) -> bool:
    return "tfevents" in os.path.basename(name)


def _event_files(path: str) -> list[tuple[str, str]]:
    """(run, file) pairs: a file is its own run ''; a folder's files are named by their folder relative to it."""
    if os.path.isdir(path):
        out = []
        for root, _, files in os.walk(path):
            for name in sorted(files):
                if is_event_file(name):
                    rel = os.path.relpath(root, path)
                    out.append(("" if rel == "." else rel, os.path.join(root, name)))
        return sorted(out)
    from tfrx.io._data_files import expand_paths

    return [("", str(p)) for p in expand_paths(path)]


def read(path, *, on_error: str = "raise", max_expanded_bytes: int | None = MAX_EXPANDED_BYTES) -> Events:
    """Every summary in an event file, a glob of them, or a folder of runs (searched recursively).

    ``on_error`` applies to damaged records, as in :class:`tfrx.RecordReader`
    (a writer killed mid-record leaves a truncated last record).
    ``max_expanded_bytes`` (default 64 MiB, ``None``: no limit) bounds a tensor
    summary whose declared shape asks for more values than its bytes hold
    (TensorFlow's splat constants): a larger one raises
    :class:`tfrx.errors.DecodeError` naming the file, the record and the shape,
    so a hostile file cannot make the reader allocate what it declares.
    """
    from tfrx.errors import DecodeError
    from tfrx.io._reader import RecordReader
    from tfrx.options import check_on_error

    check_on_error(on_error)
    out = Events()
    for run, name in _event_files(os.fspath(path) if not isinstance(path, str) else path):
        out.files.append(name)
        with RecordReader(name, on_error=on_error) as reader:
            for index, record in enumerate(reader):
                try:
                    decode_event(record, out, run, max_expanded_bytes=max_expanded_bytes)
                except DecodeError as e:
                    raise DecodeError(f"{name!r}, event record {index}: {e}") from None
    return out
