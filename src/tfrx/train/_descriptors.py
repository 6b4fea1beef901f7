"""Builds the tfrx.train descriptors at import time.

The message classes come from descriptors assembled here in Python rather than
from protoc-generated code: generated modules pin the protobuf runtime they
accept (code from a newer protoc refuses to load on an older runtime), while a
FileDescriptorProto loads on every protobuf release tfrx supports (>= 4.21).
The reference definitions are ``tfrx/proto/feature.proto`` and
``tfrx/proto/example.proto``; the test suite checks that both agree with each
other and with TensorFlow's own descriptors.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool

__all__ = ["FEATURE_FILE", "EXAMPLE_FILE", "PACKAGE", "file_descriptors", "message_descriptor"]

PACKAGE = "tfrx"
FEATURE_FILE = "tfrx/proto/feature.proto"
EXAMPLE_FILE = "tfrx/proto/example.proto"

_F = descriptor_pb2.FieldDescriptorProto


def _field(message, name, number, ftype, *, label=_F.LABEL_OPTIONAL, type_name=None, oneof=None, packed=None):
    field = message.field.add(name=name, number=number, type=ftype, label=label)
    field.json_name = "".join(p if i == 0 else p.capitalize() for i, p in enumerate(name.split("_")))
    if type_name is not None:
        field.type_name = f".{PACKAGE}.{type_name}"
    if oneof is not None:
        field.oneof_index = oneof
    if packed is not None:
        field.options.packed = packed
    return field


def _map_entry(message, entry_name, value_type):
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    return entry


def file_descriptors() -> tuple[descriptor_pb2.FileDescriptorProto, descriptor_pb2.FileDescriptorProto]:
    """The FileDescriptorProtos of feature.proto and example.proto."""
    feature = descriptor_pb2.FileDescriptorProto(name=FEATURE_FILE, package=PACKAGE, syntax="proto3")
    m = feature.message_type.add(name="BytesList")
    _field(m, "value", 1, _F.TYPE_BYTES, label=_F.LABEL_REPEATED)
    m = feature.message_type.add(name="FloatList")
    _field(m, "value", 1, _F.TYPE_FLOAT, label=_F.LABEL_REPEATED, packed=True)
    m = feature.message_type.add(name="Int64List")
    _field(m, "value", 1, _F.TYPE_INT64, label=_F.LABEL_REPEATED, packed=True)
    m = feature.message_type.add(name="Feature")
    m.oneof_decl.add(name="kind")
    _field(m, "bytes_list", 1, _F.TYPE_MESSAGE, type_name="BytesList", oneof=0)
    _field(m, "float_list", 2, _F.TYPE_MESSAGE, type_name="FloatList", oneof=0)
    _field(m, "int64_list", 3, _F.TYPE_MESSAGE, type_name="Int64List", oneof=0)
    m = feature.message_type.add(name="Features")
    _map_entry(m, "FeatureEntry", "Feature")
    _field(m, "feature", 1, _F.TYPE_MESSAGE, label=_F.LABEL_REPEATED, type_name="Features.FeatureEntry")
    m = feature.message_type.add(name="FeatureList")
    _field(m, "feature", 1, _F.TYPE_MESSAGE, label=_F.LABEL_REPEATED, type_name="Feature")
    m = feature.message_type.add(name="FeatureLists")
    _map_entry(m, "FeatureListEntry", "FeatureList")
    _field(m, "feature_list", 1, _F.TYPE_MESSAGE, label=_F.LABEL_REPEATED, type_name="FeatureLists.FeatureListEntry")

    example = descriptor_pb2.FileDescriptorProto(
        name=EXAMPLE_FILE, package=PACKAGE, syntax="proto3", dependency=[FEATURE_FILE]
    )
    m = example.message_type.add(name="Example")
    _field(m, "features", 1, _F.TYPE_MESSAGE, type_name="Features")
    m = example.message_type.add(name="SequenceExample")
    _field(m, "context", 1, _F.TYPE_MESSAGE, type_name="Features")
    _field(m, "feature_lists", 2, _F.TYPE_MESSAGE, type_name="FeatureLists")
    return feature, example


def _register(pool: descriptor_pool.DescriptorPool) -> None:
    for fdp in file_descriptors():
        try:
            existing = pool.FindFileByName(fdp.name)
        except KeyError:
            existing = None
        if existing is None:
            pool.AddSerializedFile(fdp.SerializeToString())


_POOL = descriptor_pool.Default()
_register(_POOL)


def message_descriptor(name: str):
    """The descriptor of ``tfrx.<name>`` in the default pool."""
    return _POOL.FindMessageTypeByName(f"{PACKAGE}.{name}")
