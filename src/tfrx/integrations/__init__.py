"""Frameworks and engines: one module per integration, each imported on first use.

``tfrx.integrations.torch`` (PyTorch), ``jax``, ``keras`` (Keras 3), ``grain``,
``arrow`` (pyarrow), ``ray`` (Ray Data), ``spark`` (a Spark 4 data source), ``dask``
(Dask DataFrames), and the query engines ``polars``, ``duckdb``, ``daft`` and ``hf``
(Hugging Face ``datasets``) build on the public layers below
them (``tfrx.data``, ``tfrx.parsing``, ``tfrx.io``) and never on each other's
private modules; the framework itself loads only when its module is imported.
``tfrx.torch``, ``tfrx.jax``, ... are the same modules under their older names.
"""

from __future__ import annotations

from tfrx._lazy import lazy_names

__all__: list[str] = []

#: The integrations, each a module of this package.
INTEGRATIONS = frozenset(
    {"arrow", "daft", "dask", "duckdb", "grain", "hf", "jax", "keras", "polars", "ray", "spark", "torch"}
)

__getattr__, __dir__ = lazy_names("tfrx.integrations", globals(), {}, INTEGRATIONS)
