"""Validating statistics against a schema: TFDV's ``validate_statistics``, giving an ``Anomalies`` proto.

Per schema feature (deprecated ones and ones outside ``environment`` are
skipped), with TFDV's anomaly types and wording:

- missing from the statistics while required (``presence`` min_count or
  min_fraction above 0): SCHEMA_MISSING_COLUMN; present in no record:
  FEATURE_TYPE_NOT_PRESENT;
- presence below ``min_count`` / ``min_fraction`` (or missing somewhere when
  ``min_fraction`` is 1): FEATURE_TYPE_LOW_NUMBER_PRESENT / _LOW_FRACTION_PRESENT;
- values per record outside ``value_count`` / ``value_counts``:
  FEATURE_TYPE_LOW_NUMBER_VALUES / _HIGH_NUMBER_VALUES; a ``shape`` that the
  data does not keep: INVALID_FEATURE_SHAPE;
- type other than the schema's: UNEXPECTED_DATA_TYPE;
- domains: string values outside the string domain (beyond
  ``distribution_constraints.min_domain_mass``): ENUM_TYPE_UNEXPECTED_STRING_VALUES;
  ints outside ``int_domain``: INT_TYPE_SMALL_INT / _BIG_INT; floats outside
  ``float_domain``: FLOAT_TYPE_SMALL_FLOAT / _BIG_FLOAT, NaN or infinity where
  disallowed: FLOAT_TYPE_HAS_NAN / _HAS_INF; ints other than 0 and 1 under a
  ``bool_domain``: BOOL_TYPE_SMALL_INT / _BIG_INT; unique counts outside
  ``unique_constraints``: FEATURE_TYPE_LOW_UNIQUE / _HIGH_UNIQUE;
- drift (against ``previous``) and skew (against ``serving``) with the
  thresholds of ``drift_comparator`` / ``skew_comparator``: L-infinity
  distance (COMPARATOR_L_INFTY_HIGH), normalized absolute difference
  (COMPARATOR_NORMALIZED_ABSOLUTE_DIFFERENCE_HIGH) and approximate
  Jensen-Shannon divergence (COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH); the
  measurements go to ``drift_skew_info``;

and per feature in the statistics but not the schema: SCHEMA_NEW_COLUMN.
A dataset without records sets ``data_missing``. Several reasons of one
feature are joined as TFDV joins them ("Multiple errors").
"""

from __future__ import annotations

import math

from tfrx.validate.comparators import jensen_shannon_divergence, linf_distance, normalized_abs_difference
from tfrx.validate.stats_view import DatasetView, FeatureView, first_dataset

__all__ = ["validate_statistics", "anomalies_to_dicts", "format_anomalies"]


def _six(x: float) -> str:
    """absl::SixDigits: up to six significant digits."""
    return f"{x:.6g}"


def _percent(count: float, total: float) -> str:
    if not total:
        return "?"
    p = 100 * count / total
    return "<1%" if p < 1.0 else f"~{int(math.floor(p))}%"


def _schema_features(schema, environment: str | None):
    """(serialized path, Feature) of every feature of the schema, struct children included."""
    from tfrx.validate.spec import _deprecated, _in_environment

    def walk(features, prefix):
        for f in features:
            name = prefix + f.name
            yield name, f, _deprecated(f) or not _in_environment(f, schema, environment)
            if f.HasField("struct_domain"):
                yield from walk(f.struct_domain.feature, name + ".")

    yield from walk(schema.feature, "")


def _stats_type_to_schema(t: int) -> int:
    # statistics INT 0, FLOAT 1, STRING 2, BYTES 3, STRUCT 4 -> schema INT 2, FLOAT 3, BYTES 1, STRUCT 4
    return {0: 2, 1: 3, 2: 1, 3: 1, 4: 4}.get(t, 0)


def _type_name(schema_type: int) -> str:
    from tensorflow_metadata.proto.v0 import schema_pb2

    return schema_pb2.FeatureType.Name(schema_type)


def _string_domain(f, schema):
    if f.HasField("string_domain"):
        return f.string_domain
    if f.HasField("domain"):
        for d in schema.string_domain:
            if d.name == f.domain:
                return d
        raise ValueError(f"schema feature {f.name!r} names string domain {f.domain!r}, which the schema does not have")
    return None


def _check_domain(v: FeatureView, f, schema, out: list) -> None:
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    which = f.WhichOneof("domain_info")
    sd = _string_domain(f, schema) if which in ("domain", "string_domain") else None
    if sd is not None:
        if v.has_invalid_utf8:
            out.append(
                (A.ENUM_TYPE_INVALID_UTF8, "Invalid UTF8 strings", "Found strings that were not valid UTF8 strings.")
            )
            return
        allowed = set(sd.value)
        missing = {k: c for k, c in v.string_values_with_counts().items() if k not in allowed}
        total = v.total_value_count()
        mass = sum(missing.values())
        dc = f.distribution_constraints
        max_off = (
            (1.0 - dc.min_domain_mass)
            if f.HasField("distribution_constraints") and dc.HasField("min_domain_mass")
            else 0.0
        )
        if (total and mass / total > max_off) or (max_off == 0 and missing):
            listed = ", ".join(f"{k} ({_percent(c, total)})" for k, c in sorted(missing.items()))
            out.append(
                (
                    A.ENUM_TYPE_UNEXPECTED_STRING_VALUES,
                    "Unexpected string values",
                    f"Examples contain values missing from the schema: {listed}. ",
                )
            )
        return
    ns = v.proto.num_stats if v.proto.WhichOneof("stats") == "num_stats" else None
    if which == "int_domain" and ns is not None and v.num_present:
        d = f.int_domain
        if d.HasField("min") and ns.min < d.min:
            out.append((A.INT_TYPE_SMALL_INT, "Out-of-range values", f"Unexpectedly small value: {int(ns.min)}."))
        if d.HasField("max") and ns.max > d.max:
            out.append((A.INT_TYPE_BIG_INT, "Out-of-range values", f"Unexpectedly large value: {int(ns.max)}."))
    elif which == "float_domain" and ns is not None and v.num_present:
        d = f.float_domain
        if d.HasField("min") and ns.min < d.min:
            out.append(
                (
                    A.FLOAT_TYPE_SMALL_FLOAT,
                    "Out-of-range values",
                    f"Unexpectedly low values: {_six(ns.min)}<{_six(d.min)}(upto six significant digits)",
                )
            )
        if d.HasField("max") and ns.max > d.max:
            out.append(
                (
                    A.FLOAT_TYPE_BIG_FLOAT,
                    "Out-of-range values",
                    f"Unexpectedly high value: {_six(ns.max)}>{_six(d.max)}(upto six significant digits)",
                )
            )
        nan = max((h.num_nan for h in ns.histograms), default=0)
        if d.disallow_nan and nan:
            out.append((A.FLOAT_TYPE_HAS_NAN, "Invalid values", "Float feature has NaN values."))
        if d.disallow_inf and (math.isinf(ns.min) or math.isinf(ns.max)):
            out.append((A.FLOAT_TYPE_HAS_INF, "Invalid values", "Float feature has Inf values."))
    elif which == "bool_domain" and ns is not None and v.num_present and v.type == 0:
        # TFDV reports one of the two: values below 0 first
        if ns.min < 0:
            out.append(
                (
                    A.BOOL_TYPE_SMALL_INT,
                    "Non-boolean values",
                    f"Integers (such as {_six(ns.min)}) not in {{0, 1}}: converting to an integer.",
                )
            )
        elif ns.max > 1:
            out.append(
                (
                    A.BOOL_TYPE_BIG_INT,
                    "Non-boolean values",
                    f"Integers (such as {_six(ns.max)}) not in {{0, 1}}: converting to an integer.",
                )
            )


def _check_nested_counts(vcs, counts, out: list) -> None:
    """``value_counts``: one min/max per nestedness level."""
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    if len(vcs) != len(counts):
        out.append(
            (
                A.VALUE_NESTEDNESS_MISMATCH,
                "Mismatched value nest level",
                "The values have a different nest level than expected. Value counts will not be checked.",
            )
        )
    else:
        for i, (vc, (lo, hi)) in enumerate(zip(vcs, counts)):
            if vc.HasField("min") and lo < vc.min:
                out.append(
                    (
                        A.FEATURE_TYPE_LOW_NUMBER_VALUES,
                        "Missing values",
                        f"Some examples have fewer values than expected at nestedness level {i}.",
                    )
                )
            if vc.HasField("max") and hi > vc.max:
                out.append(
                    (
                        A.FEATURE_TYPE_HIGH_NUMBER_VALUES,
                        "Superfluous values",
                        f"Some examples have more values than expected at nestedness level {i}.",
                    )
                )


def _check_counts(v: FeatureView, f, out: list) -> None:
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    counts = v.min_max_num_values()
    if f.HasField("value_count"):
        if len(counts) > 1:
            out.append(
                (
                    A.VALUE_NESTEDNESS_MISMATCH,
                    "Mismatched value nest level",
                    "This feature has a value_count, but the nestedness level of the feature > 1. For features with "
                    "nestedness levels greater than 1, value_counts, not value_count, should be specified.",
                )
            )
        else:
            vc = f.value_count
            if vc.HasField("min") and counts[0][0] < vc.min:
                out.append(
                    (
                        A.FEATURE_TYPE_LOW_NUMBER_VALUES,
                        "Missing values",
                        "Some examples have fewer values than expected.",
                    )
                )
            if vc.HasField("max") and counts[0][1] > vc.max:
                out.append(
                    (
                        A.FEATURE_TYPE_HIGH_NUMBER_VALUES,
                        "Superfluous values",
                        "Some examples have more values than expected.",
                    )
                )
    elif f.HasField("value_counts"):
        _check_nested_counts(f.value_counts.value_count, counts, out)
    if f.HasField("shape"):
        expected = 1
        for d in f.shape.dim:
            expected *= d.size
        actual = 1
        for lo, hi in counts:
            if lo == hi and lo != 0:
                actual *= lo
            else:
                actual = -1
                break
        if actual <= 0 or any(m != 0 for m in v.num_missing_nested()):
            out.append(
                (
                    A.INVALID_FEATURE_SHAPE,
                    "Feature shape dropped",
                    "The feature has a shape, but it's not always present (if the feature is nested, then it should "
                    "always be present at each nested level) or its value lengths vary.",
                )
            )
        elif actual != expected:
            out.append(
                (
                    A.INVALID_FEATURE_SHAPE,
                    "Feature shape dropped",
                    f"The feature has fixed value length {actual} but it's not compatible with the specified shape.",
                )
            )


def _check_presence(v: FeatureView, f, out: list) -> None:
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    p = f.presence
    present = v.num_present
    if p.HasField("min_count") and present < p.min_count:
        out.append(
            (
                A.FEATURE_TYPE_LOW_NUMBER_PRESENT,
                "Column dropped",
                f"The feature was present in fewer examples than expected: minimum count = {p.min_count}, actual = {int(present)}",
            )
        )
    if p.HasField("min_fraction") and v.num_examples:
        fraction = present / v.num_examples
        if fraction < p.min_fraction:
            out.append(
                (
                    A.FEATURE_TYPE_LOW_FRACTION_PRESENT,
                    "Column dropped",
                    "The feature was present in fewer examples than expected: minimum fraction = "
                    f"{p.min_fraction:f}, actual = {fraction:f}",
                )
            )
        elif p.min_fraction == 1.0 and v.num_missing != 0:
            # a fraction that rounds to 1.0 while records miss the feature (TFDV checks this apart)
            out.append(
                (
                    A.FEATURE_TYPE_LOW_FRACTION_PRESENT,
                    "Column dropped",
                    f"The feature was expected everywhere, but was missing in {v.num_missing:g} examples.",
                )
            )


def _check_unique(v: FeatureView, f, out: list) -> None:
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    if not f.HasField("unique_constraints"):
        return
    if v.proto.WhichOneof("stats") != "string_stats":
        out.append(
            (
                A.FEATURE_TYPE_NO_UNIQUE,
                "No unique values",
                "UniqueConstraints specified for the feature, but unique values were not counted (i.e., feature is not "
                "string or categorical).",
            )
        )
        return
    u = v.proto.string_stats.unique
    uc = f.unique_constraints
    if uc.HasField("min") and u < uc.min:
        out.append(
            (
                A.FEATURE_TYPE_LOW_UNIQUE,
                "Low number of unique values",
                f"Expected at least {uc.min} unique values but found only {u}.",
            )
        )
    if uc.HasField("max") and u > uc.max:
        out.append(
            (
                A.FEATURE_TYPE_HIGH_UNIQUE,
                "High number of unique values",
                f"Expected no more than {uc.max} unique values but found {u}.",
            )
        )


def _compare(v: FeatureView, control: FeatureView | None, comparator, treatment: str, control_name: str, out, measures):
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    M = anomalies_pb2.DriftSkewInfo.Measurement
    has_linf = comparator.infinity_norm.HasField("threshold")
    has_nad = comparator.normalized_abs_difference.HasField("threshold")
    has_js = comparator.jensen_shannon_divergence.HasField("threshold")
    if not (has_linf or has_nad or has_js):
        return
    if control is None:
        out.append(
            (A.COMPARATOR_CONTROL_DATA_MISSING, f"{control_name} data missing", f"{control_name} data is missing.")
        )
        return
    if has_linf:
        t = comparator.infinity_norm.threshold
        key, d = linf_distance(v.string_values_with_counts(), control.string_values_with_counts())
        measures.append(M(type=M.L_INFTY, value=d, threshold=t))
        if d > t:
            out.append(
                (
                    A.COMPARATOR_L_INFTY_HIGH,
                    f"High Linfty distance between {treatment} and {control_name}",
                    f"The Linfty distance between {treatment} and {control_name} is {_six(d)} (up to six significant "
                    f"digits), above the threshold {_six(t)}. The feature value with maximum difference is: {key}",
                )
            )
    if has_nad:
        t = comparator.normalized_abs_difference.threshold
        key, d = normalized_abs_difference(v.string_values_with_counts(), control.string_values_with_counts())
        measures.append(M(type=M.NORMALIZED_ABSOLUTE_DIFFERENCE, value=d, threshold=t))
        if d > t:
            out.append(
                (
                    A.COMPARATOR_NORMALIZED_ABSOLUTE_DIFFERENCE_HIGH,
                    f"High normalized absolute difference between {treatment} and {control_name}",
                    f"The normalized absolute difference between {treatment} and {control_name} is {_six(d)} (up to six "
                    f"significant digits), above the threshold {_six(t)}. The feature value with maximum difference "
                    f"is: {key}",
                )
            )
    if has_js:
        t = comparator.jensen_shannon_divergence.threshold
        quantiles = comparator.jensen_shannon_divergence.source.type == 1  # HistogramSelection.QUANTILES
        try:
            d = jensen_shannon_divergence(v, control, quantiles=quantiles)
        except ValueError:
            return  # TFDV logs a warning and measures nothing (no histogram to compare)
        measures.append(M(type=M.JENSEN_SHANNON_DIVERGENCE, value=d, threshold=t))
        if d > t:
            out.append(
                (
                    A.COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH,
                    f"High approximate Jensen-Shannon divergence between {treatment} and {control_name}",
                    f"The approximate Jensen-Shannon divergence between {treatment} and {control_name} is {_six(d)} "
                    f"(up to six significant digits), above the threshold {_six(t)}.",
                )
            )


def _add(anomalies, name: str, path_steps: list[str], reasons: list) -> None:
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    info = anomalies.anomaly_info[name]
    info.path.step.extend(path_steps)
    info.severity = A.ERROR
    for t, short, long in reasons:
        info.reason.add(type=t, short_description=short, description=long)
    if len(reasons) == 1:
        info.short_description, info.description = reasons[0][1], reasons[0][2]
    else:
        info.short_description = "Multiple errors"
        info.description = " ".join(r[2] for r in reasons)


def _check_feature(v, f, schema, reasons: list) -> None:
    """The checks of one present feature against its schema entry: counts, presence, type or domain, uniqueness."""
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    _check_counts(v, f, reasons)
    if f.HasField("presence"):
        _check_presence(v, f, reasons)
    if f.HasField("type") and _stats_type_to_schema(v.type) != f.type:
        reasons.append(
            (
                A.UNEXPECTED_DATA_TYPE,
                "Unexpected data type",
                f"Expected data of type: {_type_name(f.type)} but got "
                f"{v.proto.DESCRIPTOR.fields_by_name['type'].enum_type.values_by_number[v.type].name}",
            )
        )
    else:
        _check_domain(v, f, schema, reasons)
    _check_unique(v, f, reasons)


def _measure(out, name: str, v, f, previous, serving, reasons: list) -> None:
    """Skew against serving data and drift against the previous span, with the schema's comparators."""
    measures: list = []
    if serving is not None and f.HasField("skew_comparator"):
        m: list = []
        _compare(v, serving.get(name), f.skew_comparator, "training", "serving", reasons, m)
        if m:
            measures.append(("skew", m))
    if previous is not None and f.HasField("drift_comparator"):
        m = []
        _compare(v, previous.get(name), f.drift_comparator, "current", "previous", reasons, m)
        if m:
            measures.append(("drift", m))
    if measures:
        info = out.drift_skew_info.add()
        info.path.step.extend(list(v.proto.path.step) or [name])
        for kind, ms in measures:
            (info.skew_measurements if kind == "skew" else info.drift_measurements).extend(ms)


def validate_statistics(
    statistics,
    schema,
    *,
    environment: str | None = None,
    previous_statistics=None,
    serving_statistics=None,
):
    """Checks statistics (a ``DatasetFeatureStatisticsList``; its first dataset) against a ``Schema``, as
    TFDV's ``validate_statistics``: an ``Anomalies`` proto, empty ``anomaly_info`` when all is well.

    ``previous_statistics``: the previous span's statistics, for the schema's
    ``drift_comparator`` thresholds; ``serving_statistics``: serving data's,
    for the ``skew_comparator`` thresholds. ``environment``: features
    outside it (``in_environment`` / ``not_in_environment`` /
    ``default_environment``) are not expected.
    """
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    if isinstance(schema, str) or hasattr(schema, "__fspath__"):
        from tfrx.validate.io import load_schema

        schema = load_schema(schema)
    A = anomalies_pb2.AnomalyInfo
    out = anomalies_pb2.Anomalies()
    out.baseline.CopyFrom(schema)
    out.anomaly_name_format = anomalies_pb2.Anomalies.SERIALIZED_PATH
    view = DatasetView(first_dataset(statistics))
    if view.num_examples == 0:
        out.data_missing = True
        return out
    previous = DatasetView(first_dataset(previous_statistics)) if previous_statistics is not None else None
    serving = DatasetView(first_dataset(serving_statistics)) if serving_statistics is not None else None
    known: set[str] = set()
    for name, f, skipped in _schema_features(schema, environment):
        known.add(name)
        if skipped:
            continue
        v = view.get(name)
        required = f.presence.min_count > 0 or f.presence.min_fraction > 0
        reasons: list = []
        if v is None:
            if required:
                reasons.append((A.SCHEMA_MISSING_COLUMN, "Column dropped", "Column is completely missing"))
                _add(out, name, name.split("."), reasons)
            continue
        if v.num_present == 0:
            if required:
                reasons.append(
                    (A.FEATURE_TYPE_NOT_PRESENT, "Column dropped", "The feature was not present in any examples.")
                )
                _add(out, name, list(v.proto.path.step) or [name], reasons)
            continue
        _check_feature(v, f, schema, reasons)
        _measure(out, name, v, f, previous, serving, reasons)
        if reasons:
            _add(out, name, list(v.proto.path.step) or [name], reasons)
    for name, v in view.features.items():
        if name not in known:
            _add(
                out,
                name,
                list(v.proto.path.step) or [name],
                [(A.SCHEMA_NEW_COLUMN, "New column", "New column (column in data but not in schema)")],
            )
    return out


def anomalies_to_dicts(anomalies) -> list[dict]:
    """The anomalies as JSON-ready dicts, one per feature, sorted by feature:
    ``{"feature", "severity", "short_description", "description", "reasons": [{"type", "short_description",
    "description"}]}``."""
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    A = anomalies_pb2.AnomalyInfo
    out = []
    for name in sorted(anomalies.anomaly_info):
        info = anomalies.anomaly_info[name]
        out.append(
            {
                "feature": name,
                "severity": A.Severity.Name(info.severity),
                "short_description": info.short_description,
                "description": info.description,
                "reasons": [
                    {
                        "type": A.Type.Name(r.type),
                        "short_description": r.short_description,
                        "description": r.description,
                    }
                    for r in info.reason
                ],
            }
        )
    return out


def format_anomalies(anomalies, *, width: int = 100) -> str:
    """A readable table of the anomalies (feature, short description, description), or a line saying none."""
    rows = anomalies_to_dicts(anomalies)
    if anomalies.data_missing:
        return "No data: the statistics hold no records.\n"
    if not rows:
        return "No anomalies found.\n"
    import textwrap

    w1 = max(len("Feature"), *(len(r["feature"]) for r in rows))
    w2 = max(len("Anomaly"), *(len(r["short_description"]) for r in rows))
    w3 = max(20, width - w1 - w2 - 4)
    lines = [f"{'Feature':<{w1}}  {'Anomaly':<{w2}}  Description", f"{'-' * w1}  {'-' * w2}  {'-' * min(w3, 40)}"]
    for r in rows:
        wrapped = textwrap.wrap(r["description"], w3) or [""]
        lines.append(f"{r['feature']:<{w1}}  {r['short_description']:<{w2}}  {wrapped[0]}")
        lines.extend(f"{'':<{w1}}  {'':<{w2}}  {more}" for more in wrapped[1:])
    return "\n".join(lines) + "\n"
