"""Where BERT pre-training records go: the output files or shards, and the metadata written beside them."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from tfrx.io._sidecars import BERT_METADATA_SUFFIX, sidecar_path
from tfrx.text._bert_options import BertDataOptions
from tfrx.text._records import feature_spec
from tfrx.text._tokenization import Vocab

__all__ = ["BertDataResult", "metadata_path_for", "open_output", "write_metadata", "read_metadata"]


@dataclass
class BertDataResult:
    """What :func:`create_pretraining_data` wrote."""

    paths: list[str]
    num_instances: int
    num_documents: int
    num_tokens: int
    seconds: float
    metadata_path: str | None = None
    options: BertDataOptions = field(default_factory=BertDataOptions)


class _RoundRobinFiles:
    """The reference's output: the given files, record i into file i % len(files)."""

    def __init__(self, paths: Sequence[str], compression: str | None, storage_options: dict | None) -> None:
        from tfrx.io._writer import TFRecordWriter

        self.paths = [os.fspath(p) for p in paths]
        for p in self.paths:
            d = os.path.dirname(p)
            if d and "://" not in p:
                os.makedirs(d, exist_ok=True)
        self._writers = [
            TFRecordWriter(p, compression=compression, storage_options=storage_options) for p in self.paths
        ]
        self._next = 0

    def write_many(self, batch) -> None:
        n, k = len(batch), len(self._writers)
        first = self._next % k
        for j in range(min(k, n)):
            self._writers[(first + j) % k].write_many(batch[j::k])
        self._next += n

    def close(self) -> list[str]:
        for w in self._writers:
            w.close()
        return self.paths

    def abort(self) -> None:
        for w in self._writers:
            try:
                w.abort()
            except Exception:
                pass

    @property
    def metadata_path(self) -> str:
        return metadata_path_for(self.paths[0])


class _Sharded:
    def __init__(self, prefix: str, num_shards: int, compression, naming, storage_options) -> None:
        from tfrx.io._sharded import ShardedWriter

        self._w = ShardedWriter(
            prefix, num_shards=num_shards, compression=compression, naming=naming, storage_options=storage_options
        )
        self.prefix = os.fspath(prefix)

    def write_many(self, batch) -> None:
        self._w.write_many(batch)

    def close(self) -> list[str]:
        return self._w.close()

    def abort(self) -> None:
        self._w.abort()

    @property
    def metadata_path(self) -> str:
        return metadata_path_for(self.prefix)


def metadata_path_for(name) -> str:
    """Where the metadata of records written under ``name`` (a prefix, or the first output file) goes:
    ``<folder>/.tfrx/<name>.bert.json``, tfrx's sidecar folder, which no shard glob matches
    (``out*`` or ``out.tfrecord*`` never list it; earlier versions wrote ``<name>.bert.json`` beside
    the records, which such globs did match, and :func:`read` still finds it there)."""
    return sidecar_path(name, BERT_METADATA_SUFFIX)


def open_output(
    output,
    *,
    num_shards: int = 1,
    compression: str | None = None,
    naming: str = "tfds",
    storage_options: dict | None = None,
):
    """A list of files (written round-robin as the reference does) or a prefix for TFDS-named shards."""
    if isinstance(output, (list, tuple)):
        if not output:
            raise ValueError("output: an empty list of files")
        return _RoundRobinFiles(output, compression, storage_options)
    return _Sharded(output, num_shards, compression, naming, storage_options)


def write_metadata(
    path: str,
    result: BertDataResult,
    *,
    mode: str,
    files: list[str],
    vocab: Vocab,
    documents: list[tuple[str, int]] | None,
    storage_options: dict | None = None,
    extra: dict | None = None,
) -> str:
    """``.tfrx/{prefix}.bert.json``: how the data was made (options, inputs, documents, counts, the record spec)."""
    from tfrx.io._paths import is_url
    from tfrx.io._paths import open_output as open_path

    if not is_url(path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    body = {
        "format": "tfrx-bert-data/1",
        "mode": mode,
        "options": result.options.to_dict(),
        "vocab": {"path": vocab.path, "size": len(vocab)},
        "input_files": list(files),
        "num_documents": result.num_documents,
        "num_tokens": result.num_tokens,
        "num_instances": result.num_instances,
        "files": [os.path.basename(p) if "://" not in p else p.rsplit("/", 1)[-1] for p in result.paths],
        "features": {
            k: {"shape": list(v.shape), "dtype": str(v.dtype)}
            for k, v in feature_spec(
                max_seq_length=result.options.max_seq_length,
                max_predictions_per_seq=result.options.max_predictions_per_seq,
                mlm_only=result.options.mlm_only,
                disable_masking=result.options.disable_masking,
            ).items()
        },
        # one entry per document used: the file and the document's first line ("lines") or its index in the file
        "documents": [[p, k] for p, k in documents] if documents is not None else None,
    }
    if extra:
        body.update(extra)
    text = json.dumps(body, indent=1) + "\n"
    with open_path(path, storage_options=storage_options) as f:
        f.write(text.encode())
    return path


def read_metadata(path: str, *, storage_options: dict | None = None) -> dict:
    """The ``.bert.json`` written with the records (in their folder's ``.tfrx/``)."""
    from tfrx.text._sources import read_bytes

    return json.loads(read_bytes(path, storage_options=storage_options))
