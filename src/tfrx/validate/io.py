"""Reading and writing the protos in the files TFDV and TFX use.

Statistics: binary ``DatasetFeatureStatisticsList`` (``stats.pb``, what
TFDV's ``write_stats_binary`` / ``load_stats_binary`` use), a TFRecord file
of them (what TFX's StatisticsGen writes, ``FeatureStats.pb``), or protobuf
text. Schemas and anomalies: protobuf text (``schema.pbtxt``), or binary.
"""

from __future__ import annotations

import os

__all__ = [
    "load_statistics",
    "write_statistics",
    "load_schema",
    "write_schema",
    "load_anomalies",
    "write_anomalies",
]


def _read(path) -> bytes:
    from tfrx.io import read_file

    return read_file(os.fspath(path))


def _write(path, data: bytes) -> None:
    from tfrx.io import write_file

    write_file(os.fspath(path), data)


def _tfrecord_payloads(data: bytes) -> list[bytes] | None:
    """The records of ``data`` if it is a whole, valid TFRecord file, else None."""
    from tfrx import _native

    if len(data) < 16:
        return None
    scan = _native.scan_records(data, True)
    if scan.status != _native.ScanStatus.END or scan.consumed != len(data) or not len(scan.starts):
        return None
    return [data[s : s + n] for s, n in zip(scan.starts.tolist(), scan.lengths.tolist())]


def load_statistics(path):
    """A ``DatasetFeatureStatisticsList`` from a binary file, a TFRecord file of them (their datasets joined
    in order, as TFX's StatisticsGen shards them) or a text file."""
    from google.protobuf import text_format
    from google.protobuf.message import DecodeError
    from tensorflow_metadata.proto.v0 import statistics_pb2

    data = _read(path)
    out = statistics_pb2.DatasetFeatureStatisticsList()
    records = _tfrecord_payloads(data)
    if records is not None:
        for r in records:
            part = statistics_pb2.DatasetFeatureStatisticsList()
            part.ParseFromString(r)
            out.datasets.extend(part.datasets)
        return out
    try:
        out.ParseFromString(data)
        if out.datasets or not data:
            return out
    except DecodeError:
        pass
    try:
        return text_format.Parse(data.decode("utf-8"), statistics_pb2.DatasetFeatureStatisticsList())
    except (UnicodeDecodeError, text_format.ParseError) as e:
        raise ValueError(
            f"{os.fspath(path)!r} is not a DatasetFeatureStatisticsList (binary, TFRecord or text): {e}"
        ) from None


def write_statistics(stats, path, *, text: bool | None = None) -> None:
    """Writes statistics: protobuf text when ``text`` (default: when the name ends in ``.pbtxt`` / ``.txt``),
    else binary (what TFDV's ``load_stats_binary`` reads)."""
    from google.protobuf import text_format

    name = os.fspath(path)
    as_text = name.endswith((".pbtxt", ".txt")) if text is None else text
    _write(path, text_format.MessageToString(stats).encode() if as_text else stats.SerializeToString())


def _load_text_or_binary(path, message):
    from google.protobuf import text_format
    from google.protobuf.message import DecodeError

    data = _read(path)
    try:
        return text_format.Parse(data.decode("utf-8"), message)
    except (UnicodeDecodeError, text_format.ParseError) as text_error:
        message.Clear()
        try:
            message.ParseFromString(data)
            return message
        except DecodeError:
            raise ValueError(
                f"{os.fspath(path)!r} is not a {type(message).__name__} in protobuf text or binary: {text_error}"
            ) from None


def load_schema(path):
    """A ``Schema`` from a ``schema.pbtxt`` (protobuf text, what TFDV's ``write_schema_text`` writes) or binary."""
    from tensorflow_metadata.proto.v0 import schema_pb2

    return _load_text_or_binary(path, schema_pb2.Schema())


def write_schema(schema, path, *, text: bool = True) -> None:
    """Writes a schema as protobuf text (``schema.pbtxt``), or binary with ``text=False``."""
    from google.protobuf import text_format

    _write(path, text_format.MessageToString(schema).encode() if text else schema.SerializeToString())


def load_anomalies(path):
    """An ``Anomalies`` proto from protobuf text or binary."""
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    return _load_text_or_binary(path, anomalies_pb2.Anomalies())


def write_anomalies(anomalies, path, *, text: bool = True) -> None:
    """Writes anomalies as protobuf text (TFDV's ``write_anomalies_text``), or binary with ``text=False``."""
    from google.protobuf import text_format

    _write(path, text_format.MessageToString(anomalies).encode() if text else anomalies.SerializeToString())
