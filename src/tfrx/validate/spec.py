"""A TFX ``Schema`` -> the tfrx parse spec that reads the records it describes.

The mapping is TFX's own (TensorFlow Transform's ``schema_as_feature_spec``
and tfx_bsl's tensor representations):

- tensor representations of the schema's default group, when there are any,
  name the outputs: ``dense_tensor`` -> ``FixedLenFeature`` (its shape and
  default value), ``varlen_sparse_tensor`` -> ``VarLenFeature``,
  ``sparse_tensor`` -> ``SparseFeature`` (index columns, value column, dense
  shape), ``ragged_tensor`` -> ``RaggedFeature`` (``row_length`` partitions
  from other features, ``uniform_row_length`` ones as such); the features
  they read are not parsed again under their own names;
- ``sparse_feature`` entries -> ``SparseFeature``;
- any other feature: ``FixedLenFeature`` when it has a ``shape`` and is
  required (``presence.min_fraction`` 1), else ``VarLenFeature``
  (``RaggedFeature`` when ``represent_variable_length_as_ragged`` is set);
  a fixed shape on a feature that may be missing is refused, as TFT does;
- the ``##SEQUENCE##`` struct (feature lists of SequenceExamples) gives the
  sequence features: ``FixedLenSequenceFeature`` for a fixed inner shape,
  else ``RaggedFeature``; the result is then ``(context, sequence)``.

Deprecated features and features not in the given ``environment`` are left
out. Types: INT -> int64, FLOAT -> float32, BYTES -> string.
"""

from __future__ import annotations

from tfrx.errors import SpecError

__all__ = ["schema_to_spec"]

SEQUENCE_PARENT = "##SEQUENCE##"


def _dtype(feature_type: int, name: str):
    from tensorflow_metadata.proto.v0 import schema_pb2

    from tfrx import dtypes

    table = {schema_pb2.INT: dtypes.int64, schema_pb2.FLOAT: dtypes.float32, schema_pb2.BYTES: dtypes.string}
    if feature_type not in table:
        raise SpecError(
            f"schema feature {name!r} has type {schema_pb2.FeatureType.Name(feature_type)}, which no tf.train.Feature "
            "holds; give it type INT, FLOAT or BYTES"
        )
    return table[feature_type]


def _deprecated(feature) -> bool:
    from tensorflow_metadata.proto.v0 import schema_pb2

    return feature.deprecated or feature.lifecycle_stage in (schema_pb2.DEPRECATED, schema_pb2.DISABLED)


def _in_environment(feature, schema, environment: str | None) -> bool:
    if environment is None:
        return True
    if environment in feature.in_environment:
        return True
    if environment in feature.not_in_environment:
        return False
    return environment in schema.default_environment or not schema.default_environment


def _default(dv, dtype):
    which = dv.WhichOneof("kind")
    if which is None:
        return None
    v = getattr(dv, which)
    return v if which != "bytes_value" else bytes(v)


def _plain_feature(f, schema):
    from tfrx.parsing import FixedLenFeature, RaggedFeature, VarLenFeature

    dtype = _dtype(f.type, f.name)
    if f.HasField("shape"):
        dims = [d.size for d in f.shape.dim]
        if any(d < 0 for d in dims):
            raise SpecError(f"schema feature {f.name!r} has shape {dims} with an unknown dimension")
        if f.presence.min_fraction < 1:
            raise SpecError(
                f"schema feature {f.name!r} has a fixed shape but presence.min_fraction "
                f"{f.presence.min_fraction:g} < 1: a missing record has no value to fill it with "
                "(give it a dense_tensor representation with a default_value, or drop the shape)"
            )
        return FixedLenFeature(dims, dtype)
    if schema.represent_variable_length_as_ragged:
        return RaggedFeature(dtype=dtype)
    return VarLenFeature(dtype)


def _sequence_feature(f):
    from tfrx.parsing import FixedLenSequenceFeature, RaggedFeature

    dtype = _dtype(f.type, f.name)
    if f.HasField("shape") and len(f.shape.dim) >= 2:
        return FixedLenSequenceFeature([d.size for d in f.shape.dim[1:]], dtype)
    counts = list(f.value_counts.value_count)
    if len(counts) >= 2 and counts[1].min == counts[1].max and counts[1].min > 0:
        return FixedLenSequenceFeature([counts[1].min], dtype)
    return RaggedFeature(dtype=dtype)


def _from_representation(name: str, rep, by_name: dict):
    from tfrx.parsing import FixedLenFeature, RaggedFeature, SparseFeature, VarLenFeature

    which = rep.WhichOneof("kind")

    def feature(col: str):
        if col not in by_name:
            raise SpecError(f"tensor representation {name!r} reads feature {col!r}, which the schema does not have")
        return by_name[col]

    if which == "dense_tensor":
        d = rep.dense_tensor
        f = feature(d.column_name)
        dtype = _dtype(f.type, f.name)
        default = _default(d.default_value, dtype) if d.HasField("default_value") else None
        return FixedLenFeature([x.size for x in d.shape.dim], dtype, default_value=default), [d.column_name]
    if which == "varlen_sparse_tensor":
        f = feature(rep.varlen_sparse_tensor.column_name)
        return VarLenFeature(_dtype(f.type, f.name)), [f.name]
    if which == "sparse_tensor":
        s = rep.sparse_tensor
        f = feature(s.value_column_name)
        idx = list(s.index_column_names)
        size = [x.size for x in s.dense_shape.dim]
        return (
            SparseFeature(
                idx[0] if len(idx) == 1 else idx,
                s.value_column_name,
                _dtype(f.type, f.name),
                size[0] if len(size) == 1 else size,
                s.already_sorted,
            ),
            [*idx, s.value_column_name],
        )
    if which == "ragged_tensor":
        r = rep.ragged_tensor
        value_key = ".".join(r.feature_path.step)
        f = feature(value_key)
        parts: list = []
        used = [value_key]
        for p in r.partition:
            if p.WhichOneof("kind") == "uniform_row_length":
                parts.append(RaggedFeature.UniformRowLength(p.uniform_row_length))
            else:
                parts.append(RaggedFeature.RowLengths(p.row_length))
                used.append(p.row_length)
        import numpy as np

        splits = np.int32 if r.row_partition_dtype == 1 else np.int64  # RowPartitionDType INT32 = 1
        return RaggedFeature(
            _dtype(f.type, f.name), value_key=value_key, partitions=parts, row_splits_dtype=splits
        ), used
    raise SpecError(f"tensor representation {name!r} sets no kind")


def schema_to_spec(schema, *, environment: str | None = None):
    """The parse spec (a features dict, or ``(context_features, sequence_features)`` when the schema has the
    ``##SEQUENCE##`` struct of feature lists) that reads records described by a TFX ``Schema``, following
    TFX's own mapping (see the module docstring). ``schema``: a ``Schema`` proto or the path of a
    ``schema.pbtxt``."""
    from tfrx.parsing import SparseFeature

    if isinstance(schema, str) or hasattr(schema, "__fspath__"):
        from tfrx.validate.io import load_schema

        schema = load_schema(schema)
    features = [f for f in schema.feature if not _deprecated(f) and _in_environment(f, schema, environment)]
    by_name = {f.name: f for f in features}
    spec: dict = {}
    consumed: set[str] = set()
    group = schema.tensor_representation_group.get("") if schema.tensor_representation_group else None
    if group is not None:
        for name, rep in sorted(group.tensor_representation.items()):
            spec[name], used = _from_representation(name, rep, by_name)
            consumed.update(used)
    for sf in schema.sparse_feature:
        if sf.deprecated:
            continue
        value = sf.value_feature.name
        if value not in by_name:
            raise SpecError(f"sparse_feature {sf.name!r} reads value feature {value!r}, which the schema does not have")
        idx = [i.name for i in sf.index_feature]
        size = [d.size for d in sf.dense_shape.dim]
        spec[sf.name] = SparseFeature(
            idx[0] if len(idx) == 1 else idx,
            value,
            _dtype(by_name[value].type, value),
            (size[0] if len(size) == 1 else size) if size else None,
            sf.is_sorted,
        )
        consumed.update([*idx, value])
    sequence: dict | None = None
    for f in features:
        if f.name in consumed:
            continue
        if f.name == SEQUENCE_PARENT:
            sequence = {
                c.name: _sequence_feature(c)
                for c in f.struct_domain.feature
                if not _deprecated(c) and _in_environment(c, schema, environment)
            }
            continue
        if f.HasField("struct_domain"):
            raise SpecError(f"schema feature {f.name!r} is a STRUCT, which tf.train.Example cannot hold")
        spec[f.name] = _plain_feature(f, schema)
    if sequence is not None:
        return spec, sequence
    return spec
