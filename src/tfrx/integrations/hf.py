"""Hugging Face ``datasets``: TFRecord files as a ``datasets.Dataset`` (Arrow, cached) or an ``IterableDataset``.

:func:`load_dataset` scans the files with
:func:`tfrx.integrations._arrow_scan.scan` (only the ``columns`` asked for
are parsed) and either writes the Arrow batches into an Arrow file in the
``datasets`` cache and memory-maps it as a ``datasets.Dataset`` (the cache
file is named by a fingerprint of the files' paths, sizes and modification
times, the spec and the columns, so a second load of unchanged files reads
nothing), or (``streaming=True``) returns an ``IterableDataset`` that
scans the files as it is iterated, one shard per file. Nothing is
downloaded; ``map``, ``filter``, ``with_format("torch")`` and the Trainer
tooling work on either as on any dataset.

``datasets`` is imported when this module is: ``pip install 'tfrx[hf]'``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

try:
    import datasets
    import pyarrow as pa
    from datasets.arrow_writer import ArrowWriter
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("tfrx.integrations.hf needs Hugging Face datasets: pip install 'tfrx[hf]'") from None

from tfrx.integrations._arrow_scan import ScanStats, resolve_spec, scan, scan_schema
from tfrx.io._data_files import expand_paths
from tfrx.io._paths import is_url, url_to_fs
from tfrx.options import renamed_arguments

__all__ = ["load_dataset"]


def _version(path: str, storage_options: dict | None) -> str:
    """What changes when a file changes: its size and modification time (an object's ETag or time on a store)."""
    if not is_url(path):
        st = os.stat(path)
        return f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_mtime_ns}"
    fs, inner = url_to_fs(path, storage_options)
    info = fs.info(inner)
    stamps = [str(info.get(k)) for k in ("size", "ETag", "etag", "mtime", "LastModified", "updated", "md5Hash")]
    return "\0".join([path, *stamps])


def _fingerprint(files: Sequence[str], spec, columns, storage_options: dict | None = None) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(_version(f, storage_options).encode() + b"\0")
    h.update(repr(spec).encode())
    h.update(repr(columns).encode())
    return h.hexdigest()[:32]


def _rows(files: list[str], options: dict[str, Any]) -> Iterator[dict]:
    for batch in scan(files, **options):
        yield from batch.to_pylist()


@renamed_arguments(num_threads="num_parallel_calls")
def load_dataset(
    paths,
    *,
    spec: Mapping | tuple | None = None,
    columns: Sequence[str] | None = None,
    streaming: bool = False,
    cache_dir: str | os.PathLike | None = None,
    compression: str | None = "auto",
    on_error: str = "raise",
    num_parallel_calls: int | None = None,
    infer_records: int = 1000,
    storage_options: dict | None = None,
    stats: ScanStats | None = None,
) -> datasets.Dataset | datasets.IterableDataset:
    """TFRecord files of Examples or SequenceExamples as a Hugging Face dataset (local files; no network use).

    ``paths``: a path, a glob or a list of them. ``spec``: a parse spec or a
    ``(context_features, sequence_features)`` pair; ``None`` infers one from
    the first ``infer_records`` records. ``columns``: the features to parse
    (all when ``None``). ``streaming=False``: a ``datasets.Dataset`` backed
    by an Arrow file in ``cache_dir`` (default: the ``datasets`` cache,
    ``datasets.config.HF_DATASETS_CACHE``, folder ``tfrx``), reused while
    the files are unchanged; ``streaming=True``: an ``IterableDataset``
    reading the files as it is iterated. ``storage_options`` go to fsspec
    for URLs (the cache is then keyed by each object's size and ETag or
    modification time). Damaged records raise
    :class:`tfrx.CorruptRecordError` naming file, record and byte offset
    (``on_error="skip"`` leaves them out).
    """
    files = [str(p) for p in expand_paths(paths, storage_options=storage_options)]
    where: dict[str, Any] = {"compression": compression, "storage_options": storage_options}
    spec = resolve_spec(files, spec, infer_records=infer_records, **where)
    schema = scan_schema(files, spec=spec, columns=columns, **where)
    features = datasets.Features.from_arrow_schema(schema)
    options: dict[str, Any] = {
        "spec": spec,
        "columns": list(columns) if columns is not None else None,
        "compression": compression,
        "storage_options": storage_options,
        "on_error": on_error,
        "num_parallel_calls": num_parallel_calls,
        "stats": stats,
    }
    if streaming:
        one_thread = {**options, "num_parallel_calls": 1}
        return datasets.IterableDataset.from_generator(
            _rows, features=features, gen_kwargs={"files": files, "options": one_thread}
        )
    folder = os.path.join(os.fspath(cache_dir) if cache_dir else datasets.config.HF_DATASETS_CACHE, "tfrx")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, f"tfrecord-{_fingerprint(files, spec, columns, storage_options)}.arrow")
    if not os.path.exists(target):
        tmp = f"{target}.{os.getpid()}.tmp"
        try:
            with ArrowWriter(features=features, path=tmp) as writer:
                for batch in scan(files, **options):
                    writer.write_table(pa.Table.from_batches([batch]))
                writer.finalize()
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return datasets.Dataset.from_file(target)
