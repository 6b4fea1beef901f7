"""tfrx.train: TensorFlow's tf.train schema in our own protobuf package."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

import tfrx
from tfrx import train
from tfrx.train import _descriptors

PROTO_DIR = Path(tfrx.__file__).parent / "proto"
MESSAGES = [
    "BytesList", "FloatList", "Int64List", "Feature", "Features",
    "FeatureList", "FeatureLists", "Example", "SequenceExample",
]  # fmt: skip


def _schema(descriptor, seen=None):
    """A comparable summary of a message: fields, numbers, types, labels, packing, oneofs, maps."""
    seen = set() if seen is None else seen
    if descriptor.name in seen:
        return descriptor.name
    seen.add(descriptor.name)
    fields = []
    for f in descriptor.fields:
        sub = _schema(f.message_type, seen) if f.message_type is not None else None
        packed = f.GetOptions().packed if f.GetOptions().HasField("packed") else None
        oneof = f.containing_oneof.name if f.containing_oneof is not None else None
        is_repeated = f.label == f.LABEL_REPEATED if hasattr(f, "label") else f.is_repeated
        fields.append((f.name, f.number, f.type, is_repeated, packed, oneof, sub))
    return (descriptor.name, descriptor.GetOptions().map_entry, tuple(fields))


@pytest.mark.parametrize("name", MESSAGES)
def test_schema_matches_tensorflow(tf, name):
    ours = getattr(train, name).DESCRIPTOR
    theirs = getattr(tf.train, name).DESCRIPTOR
    assert ours.full_name == f"tfrx.{name}"
    assert theirs.full_name == f"tensorflow.{name}"
    assert _schema(ours) == _schema(theirs)


def _proto_fields(text: str) -> dict[str, set[tuple[str, str, int]]]:
    """message name -> {(type, field name, number)} from a .proto file (enough for our two files)."""
    out: dict[str, set] = {}
    for m in re.finditer(r"message (\w+) \{(.*?)\n\}", text, re.S):
        body = m.group(2)
        fields = set()
        for f in re.finditer(r"^\s*(?:repeated\s+)?(map<string, \w+>|\w+) (\w+) = (\d+)", body, re.M):
            fields.add((f.group(1), f.group(2), int(f.group(3))))
        out[m.group(1)] = fields
    return out


_PROTO_TYPES = {9: "string", 12: "bytes", 2: "float", 3: "int64"}


def test_runtime_descriptor_matches_proto_files():
    declared = {}
    for name in ("feature.proto", "example.proto"):
        text = (PROTO_DIR / name).read_text()
        assert re.search(r"^package tfrx;$", text, re.M)
        assert 'syntax = "proto3";' in text
        declared.update(_proto_fields(text))
    assert set(declared) == set(MESSAGES)
    for name in MESSAGES:
        got = set()
        for f in getattr(train, name).DESCRIPTOR.fields:
            mt = f.message_type
            if mt is not None and mt.GetOptions().map_entry:
                ftype = f"map<string, {mt.fields_by_name['value'].message_type.name}>"
            elif mt is not None:
                ftype = mt.name
            else:
                ftype = _PROTO_TYPES[f.type]
            got.add((ftype, f.name, f.number))
        assert got == declared[name], name
    assert "[packed = true]" in (PROTO_DIR / "feature.proto").read_text()


def test_runtime_descriptor_matches_protoc(tmp_path):
    pytest.importorskip("grpc_tools")
    import subprocess
    import sys

    from google.protobuf import descriptor_pb2

    root = PROTO_DIR.parent.parent
    out = tmp_path / "set.pb"
    # protoc runs in its own process: in one with TensorFlow loaded, the two
    # bundled protobuf C++ runtimes clash.
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", f"--descriptor_set_out={out}",
         "tfrx/proto/feature.proto", "tfrx/proto/example.proto"],
        check=True, timeout=120,
    )  # fmt: skip
    compiled = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    assert list(compiled.file) == list(_descriptors.file_descriptors())


def _seed_example(t):
    """Tutorial-style construction, written once against a tf.train-like namespace."""

    def _bytes_feature(value):
        return t.Feature(bytes_list=t.BytesList(value=[value]))

    def _float_feature(value):
        return t.Feature(float_list=t.FloatList(value=[value]))

    def _int64_feature(value):
        return t.Feature(int64_list=t.Int64List(value=[value]))

    feature = {
        "height": _int64_feature(480),
        "width": _int64_feature(640),
        "label": _int64_feature(-7),
        "score": _float_feature(0.25),
        "image_raw": _bytes_feature(b"\x89PNG\x00\xff"),
    }
    return t.Example(features=t.Features(feature=feature))


def test_seed_tutorial_code_runs_unchanged():
    example = _seed_example(train)
    data = example.SerializeToString()
    parsed = train.Example.FromString(data)
    assert parsed == example
    again = train.Example()
    again.ParseFromString(data)
    assert again == example
    assert parsed.features.feature["label"].int64_list.value[0] == -7
    assert parsed.features.feature["image_raw"].bytes_list.value[0] == b"\x89PNG\x00\xff"
    assert parsed.features.feature["score"].float_list.value[0] == 0.25
    assert parsed.features.feature["height"].WhichOneof("kind") == "int64_list"
    assert "int64_list" in str(parsed)
    assert pickle.loads(pickle.dumps(parsed)) == parsed
    assert repr(train.Example) == "<class 'tfrx.train.Example'>"


def test_side_by_side_with_tensorflow_and_bytes_interchange(tf):
    import tfrx.train as t2  # imported after TensorFlow in this session: no registry clash

    ours = _seed_example(t2)
    theirs = _seed_example(tf.train)
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
    assert tf.train.Example.FromString(ours.SerializeToString()) == theirs
    assert train.Example.FromString(theirs.SerializeToString()) == ours
    # text format reads the same (only the package name differs, and it is not printed)
    assert str(ours) == str(theirs)
    seq_ours = train.SequenceExample(
        context=ours.features,
        feature_lists=train.FeatureLists(feature_list={"t": train.FeatureList(feature=[
            train.Feature(int64_list=train.Int64List(value=[1, 2])), train.Feature()])}),
    )  # fmt: skip
    seq_theirs = tf.train.SequenceExample.FromString(seq_ours.SerializeToString())
    assert str(seq_theirs) == str(seq_ours)
    assert train.SequenceExample.FromString(seq_theirs.SerializeToString(deterministic=True)) == seq_ours


@pytest.mark.slow
def test_import_in_a_fresh_interpreter_after_tensorflow(tf):
    import subprocess
    import sys

    code = (
        "import tensorflow as tf, tfrx\n"
        "e = tfrx.make_example({'a': 1})\n"
        "assert tf.train.Example.FromString(e.SerializeToString()).features.feature['a'].int64_list.value[0] == 1\n"
        "from google.protobuf import descriptor_pool\n"
        "assert descriptor_pool.Default().FindMessageTypeByName('tfrx.Example').full_name == 'tfrx.Example'\n"
        "assert descriptor_pool.Default().FindMessageTypeByName('tensorflow.Example').full_name == 'tensorflow.Example'\n"
    )
    env = {"PYTHONPATH": str(Path(tfrx.__file__).parent.parent), "TF_CPP_MIN_LOG_LEVEL": "3", "PATH": ""}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)


def test_reregistering_is_harmless():
    from google.protobuf import descriptor_pool

    _descriptors._register(descriptor_pool.Default())
    assert train.Example.DESCRIPTOR.file.name == "tfrx/proto/example.proto"
