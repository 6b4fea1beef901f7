"""Schema inference from statistics, as TFDV's ``infer_schema`` does it.

For each feature in the statistics (TFDV's Schema::Updater::CreateColumn):

- ``type``: INT, FLOAT, BYTES (strings), STRUCT;
- ``presence``: ``min_count`` 1 when some record holds it (else 0),
  ``min_fraction`` 1.0 when no record misses it;
- ``shape`` (``infer_feature_shape=True``) when every record holds the same
  number of values at every level, else ``value_count`` / ``value_counts``
  (``min``/``max`` both set when the count never varies, else ``min: 1`` when
  no present record is empty);
- a domain: none for strings that are not UTF-8; ``bool_domain`` for ints
  within {0, 1} reaching 1 and for strings whose values are one true-like and
  one false-like word; ``int_domain`` for strings that all spell integers;
  a ``string_domain`` named after the feature listing its values when there
  are at most ``max_string_domain_size`` of them (TFDV's default 100).

Feature lists (paths under ``##SEQUENCE##``) become the children of a
STRUCT feature's ``struct_domain``, as TFDV writes nested paths.
"""

from __future__ import annotations

import re

from tfrx.validate.stats_view import DatasetView, FeatureView, first_dataset

__all__ = ["infer_schema", "TRUE_VALUES", "FALSE_VALUES"]

TRUE_VALUES = frozenset({"TRUE", "true", "SET", "set", "1", ""})
FALSE_VALUES = frozenset({"FALSE", "false", "CLEAR", "clear", "0"})
_INT = re.compile(r"^[+-]?[0-9]+$")
_I64 = (-(2**63), 2**63 - 1)


def _schema_type(stats_type: int) -> int:
    from tensorflow_metadata.proto.v0 import schema_pb2, statistics_pb2

    FNS = statistics_pb2.FeatureNameStatistics
    return {
        FNS.INT: schema_pb2.INT,
        FNS.FLOAT: schema_pb2.FLOAT,
        FNS.STRING: schema_pb2.BYTES,
        FNS.BYTES: schema_pb2.BYTES,
        FNS.STRUCT: schema_pb2.STRUCT,
    }[stats_type]


def _is_bool_candidate(v: FeatureView) -> bool:
    from tensorflow_metadata.proto.v0 import statistics_pb2

    FNS = statistics_pb2.FeatureNameStatistics
    if v.type == FNS.INT:
        ns = v.proto.num_stats
        return ns.min >= 0.0 and ns.max == 1.0
    if v.type != FNS.STRING:
        return False
    tokens = sorted(v.string_values_with_counts())
    if not tokens or len(tokens) > 2:
        return False
    true_seen = false_seen = False
    for t in tokens:
        if not true_seen and t in TRUE_VALUES:
            true_seen = True
        elif not false_seen and t in FALSE_VALUES:
            false_seen = True
        else:
            return False
    return True


def _bool_domain(v: FeatureView, feature) -> None:
    from tensorflow_metadata.proto.v0 import statistics_pb2

    d = feature.bool_domain
    d.SetInParent()
    if v.type == statistics_pb2.FeatureNameStatistics.STRING:
        tokens = sorted(v.string_values_with_counts())
        t = next((x for x in tokens if x in TRUE_VALUES), None)
        f = next((x for x in tokens if x in FALSE_VALUES), None)
        if t is not None:
            d.true_value = t
        if f is not None:
            d.false_value = f


def _is_int_candidate(v: FeatureView) -> bool:
    from tensorflow_metadata.proto.v0 import statistics_pb2

    if v.type != statistics_pb2.FeatureNameStatistics.STRING or v.has_invalid_utf8:
        return False
    values = v.string_values_with_counts()
    if not values:
        return False
    for s in values:
        if not _INT.match(s) or not _I64[0] <= int(s) <= _I64[1]:
            return False
    return True


def _presence_and_shape(v: FeatureView, feature, infer_shape: bool) -> None:
    from tensorflow_metadata.proto.v0 import schema_pb2

    present = v.num_present
    feature.presence.min_count = 0 if present < 1.0 else 1
    if present <= 0:
        return
    if v.num_missing == 0.0:
        feature.presence.min_fraction = 1.0
    counts = v.min_max_num_values()
    if infer_shape and feature.type != schema_pb2.STRUCT:
        missing = v.num_missing_nested()
        if all(m == 0 for m in missing) and all(lo == hi and lo > 0 for lo, hi in counts):
            for lo, _ in counts:
                feature.shape.dim.add(size=lo)
    if feature.HasField("shape"):
        return

    def set_count(lo: int, hi: int, vc) -> None:
        vc.SetInParent()
        if lo > 0:
            if lo == hi:
                vc.min, vc.max = lo, hi
            else:
                vc.min = 1

    if v.nested:
        for lo, hi in counts:
            set_count(lo, hi, feature.value_counts.value_count.add())
    elif len(counts) == 1 and counts[0][0] > 0:
        set_count(counts[0][0], counts[0][1], feature.value_count)


def _create_feature(v: FeatureView, container, schema, name: str, infer_shape: bool, max_domain: int) -> None:
    from tensorflow_metadata.proto.v0 import statistics_pb2

    FNS = statistics_pb2.FeatureNameStatistics
    feature = container.add(name=name, type=_schema_type(v.type))
    _presence_and_shape(v, feature, infer_shape)
    if v.type == FNS.STRUCT:
        feature.struct_domain.SetInParent()
        return
    if v.has_invalid_utf8 or v.type == FNS.BYTES:
        return
    if _is_bool_candidate(v):
        _bool_domain(v, feature)
    elif _is_int_candidate(v):
        feature.int_domain.SetInParent()
    else:
        values = sorted(v.string_values_with_counts())
        if values and len(values) <= max_domain:
            domain = schema.string_domain.add(name=v.name)
            domain.value.extend(values)
            feature.domain = domain.name


def infer_schema(statistics, *, infer_feature_shape: bool = True, max_string_domain_size: int = 100):
    """A ``tensorflow_metadata`` ``Schema`` inferred from statistics (a ``DatasetFeatureStatisticsList``; its
    first dataset is used), by TFDV's rules (see the module docstring)."""
    from tensorflow_metadata.proto.v0 import schema_pb2

    view = DatasetView(first_dataset(statistics))
    schema = schema_pb2.Schema()
    structs: dict[str, object] = {}
    for name, v in view.features.items():
        steps = list(v.proto.path.step) or [name]
        if len(steps) == 1:
            container = schema.feature
        else:
            parent = structs.get(".".join(steps[:-1]))
            if parent is None:
                raise ValueError(f"statistics list feature {name!r} before its parent {'.'.join(steps[:-1])!r}")
            container = parent.struct_domain.feature  # type: ignore[attr-defined]
        _create_feature(v, container, schema, steps[-1], infer_feature_shape, max_string_domain_size)
        if v.type == 4:  # STRUCT
            structs[name] = container[len(container) - 1]
    return schema
