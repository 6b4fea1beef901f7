"""Data validation in TFDV's formats without TensorFlow: statistics, schema, anomalies, drift and skew.

Statistics are ``tensorflow_metadata`` ``DatasetFeatureStatisticsList``
protos, schemas ``Schema`` protos and the result of a validation an
``Anomalies`` proto: the files TFX pipelines, Facets and TFDV itself read.
The protos come from the ``tensorflow-metadata`` package
(``pip install tfrx[validate]``). See docs/validate.md.
"""

from tfrx.validate.anomalies import anomalies_to_dicts, format_anomalies, validate_statistics
from tfrx.validate.io import (
    load_anomalies,
    load_schema,
    load_statistics,
    write_anomalies,
    write_schema,
    write_statistics,
)
from tfrx.validate.schema import infer_schema
from tfrx.validate.spec import schema_to_spec
from tfrx.validate.statistics import StatisticsAccumulator, StatsOptions, generate_statistics, statistics_from_records
from tfrx.validate.summary import compare_summaries, feature_summaries

__all__ = [
    "StatsOptions",
    "StatisticsAccumulator",
    "generate_statistics",
    "statistics_from_records",
    "infer_schema",
    "schema_to_spec",
    "validate_statistics",
    "anomalies_to_dicts",
    "format_anomalies",
    "feature_summaries",
    "compare_summaries",
    "load_statistics",
    "write_statistics",
    "load_schema",
    "write_schema",
    "load_anomalies",
    "write_anomalies",
]
