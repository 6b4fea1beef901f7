"""Raw text to BERT pre-training TFRecords, and reading them back.

:func:`create_pretraining_data` is the library form of ``tfrx bert-data``;
:func:`read` feeds the records to a training loop. docs/bert.md has the
record layout and the choice between ``mode="exact"`` and ``mode="fast"``.
"""

from __future__ import annotations

import json
import os
import time
from array import array
from collections.abc import Callable
from typing import Any

from tfrx.errors import TfrxError
from tfrx.options import ProgressOption, renamed_arguments
from tfrx.text._bert_options import BertDataOptions
from tfrx.io._sidecars import BERT_METADATA_SUFFIX
from tfrx.text._output import BertDataResult, metadata_path_for, open_output, read_metadata, write_metadata
from tfrx.text._records import encode_columns, feature_spec, instances_to_columns
from tfrx.text._tokenization import FullTokenizer, Vocab

__all__ = ["create_pretraining_data", "read", "feature_spec", "BertDataResult", "MODES"]

MODES = ("exact", "fast")
_WRITE_CHUNK = 4096


@renamed_arguments(num_workers="num_parallel_calls")
def create_pretraining_data(  # noqa: PLR0913  mirrors the BERT reference's create_pretraining_data.py flags
    inputs,
    vocab: str | os.PathLike | Vocab,
    output,
    *,
    mode: str = "exact",
    num_shards: int = 1,
    compression: str | None = None,
    naming: str = "tfds",
    input_format: str = "lines",
    segmenter: str | Callable[[str], list[str]] | None = None,
    text_field: str = "text",
    document_separator: str | None = None,
    metadata_files=None,
    input_files_prefix: str = "",
    storage_options: dict | None = None,
    progress: ProgressOption = None,
    metadata: bool = True,
    options: BertDataOptions | None = None,
    **flags,
) -> BertDataResult:
    """Builds masked-LM + next-sentence instances from ``inputs`` and writes them as TFRecords.

    ``inputs``: paths, globs or fsspec URLs (a comma inside one string
    separates several, as the reference's ``--input_file``), in the layout
    ``input_format`` (``"lines"``: one sentence per line, blank lines between
    documents; ``"text"``: one document per file; ``"jsonl"``: one document
    per line in ``text_field``; ``document_separator`` splits a ``"text"``
    file into several documents at lines equal to it). Cerebras-style
    ``metadata_files`` (files listing data files, one per line, relative to
    ``input_files_prefix``) add their files to ``inputs`` (which may then be
    empty). ``output``: a prefix for ``num_shards``
    TFDS-named shards (``{prefix}.tfrecord-00000-of-00004``), or a list of
    file names (the reference's ``--output_file``); either way instance ``i``
    goes to file ``i % num_files``. ``compression="gzip"`` writes GZIP files.

    ``flags`` (or ``options=``) are :class:`BertDataOptions` fields with the
    reference's names and defaults: ``max_seq_length=128``,
    ``max_predictions_per_seq=20``, ``masked_lm_prob=0.15``,
    ``short_seq_prob=0.1``, ``dupe_factor=10``, ``random_seed=12345``,
    ``do_lower_case=True``, ``do_whole_word_mask=False``, and Cerebras'
    ``inverted_mask``, ``mlm_only``, ``disable_masking``, ``min_short_seq_length``.

    ``mode="exact"`` gives the reference's records, instance for instance;
    ``mode="fast"`` (:mod:`tfrx.text._fast`) draws the same distributions with
    NumPy, streams with bounded memory and can use several processes (pass
    ``num_parallel_calls=`` (processes; ``num_workers=`` is its deprecated name), ``shuffle_buffer=``, ``chunk_documents=``, ``use_ray=``,
    ``tokenizer="auto"|"hf"|"reference"``). ``metadata=True`` writes
    ``.tfrx/{prefix}.bert.json`` in the output folder: the options, the input files and documents, the counts.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    fast_names = ("num_parallel_calls", "shuffle_buffer", "chunk_documents", "use_ray", "tokenizer")
    fast_flags = {k: flags.pop(k) for k in fast_names if k in flags}
    if fast_flags and mode != "fast":
        raise ValueError(f"{sorted(fast_flags)} apply to mode='fast' only")
    if options is None:
        unknown = set(flags) - set(BertDataOptions.names())
        if unknown:
            raise TypeError(f"unknown options {sorted(unknown)}; the options are {BertDataOptions.names()}")
        options = BertDataOptions(**flags)
    elif flags:
        raise TypeError("pass either options= or the option keywords, not both")
    if not isinstance(vocab, Vocab):
        vocab = Vocab.from_file(vocab, storage_options=storage_options)
    from tfrx.text._sources import expand_inputs, files_from_metadata

    listed = [] if inputs is None else ([inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs))
    if metadata_files is not None:
        listed += files_from_metadata(
            metadata_files, input_files_prefix=input_files_prefix, storage_options=storage_options
        )
    if not listed:
        raise ValueError("no input files: pass inputs or metadata_files")
    files = expand_inputs(listed, storage_options=storage_options)
    common: dict[str, Any] = dict(
        options=options,
        num_shards=num_shards,
        compression=compression,
        naming=naming,
        input_format=input_format,
        segmenter=segmenter,
        text_field=text_field,
        storage_options=storage_options,
        progress=progress,
        metadata=metadata,
        document_separator=document_separator,
    )
    if mode == "fast":
        from tfrx.text._fast import create_fast

        return create_fast(files, vocab, output, **common, **fast_flags)
    return _create_exact(files, vocab, output, **common)


def _create_exact(  # noqa: PLR0913  the same reference flags, for the exact path
    files,
    vocab,
    output,
    *,
    options,
    num_shards,
    compression,
    naming,
    input_format,
    segmenter,
    text_field,
    storage_options,
    progress,
    metadata,
    document_separator=None,
) -> BertDataResult:
    from tfrx.text._exact import create_instances
    from tfrx.text._segment import get_segmenter
    from tfrx.text._sources import iter_documents
    from tfrx._progress import progress_bar

    t0 = time.perf_counter()
    tokenizer = FullTokenizer(vocab, do_lower_case=options.do_lower_case)
    seg = get_segmenter(segmenter) if segmenter is not None else None
    listed: list[tuple[str, int]] = []
    docs: list[list[array]] = []
    num_tokens = 0
    with progress_bar(None, desc="tokenize", unit="doc", enabled=progress) as bar:
        for doc in iter_documents(
            files,
            input_format=input_format,
            segmenter=seg,
            text_field=text_field,
            document_separator=document_separator,
            storage_options=storage_options,
            on_document=(lambda p, k: listed.append((p, k))) if metadata else None,
        ):
            sentences = [array("i", tokenizer.tokenize_to_ids(s)) for s in doc]
            num_tokens += sum(len(s) for s in sentences)
            docs.append(sentences)
            bar.update(1)
    instances = create_instances(docs, vocab, options)
    out = open_output(
        output, num_shards=num_shards, compression=compression, naming=naming, storage_options=storage_options
    )
    try:
        with progress_bar(len(instances), desc="write", unit="inst", enabled=progress) as bar:
            for lo in range(0, len(instances), _WRITE_CHUNK):
                part = instances[lo : lo + _WRITE_CHUNK]
                out.write_many(encode_columns(instances_to_columns(part, options)))
                bar.update(len(part))
    except BaseException:
        out.abort()
        raise
    paths = out.close()
    result = BertDataResult(paths, len(instances), len(docs), num_tokens, time.perf_counter() - t0, options=options)
    if metadata:
        result.metadata_path = write_metadata(
            out.metadata_path,
            result,
            mode="exact",
            files=files,
            vocab=vocab,
            documents=listed,
            storage_options=storage_options,
        )
    return result


@renamed_arguments(compression_type="compression")
def read(  # noqa: PLR0913  the reference's input_fn sizes, and the dataset options of every reader
    paths,
    *,
    batch_size: int | None = None,
    max_seq_length: int | None = None,
    max_predictions_per_seq: int | None = None,
    mlm_only: bool | None = None,
    disable_masking: bool | None = None,
    shuffle_buffer: int | None = None,
    seed: int | None = 0,
    repeat: bool = False,
    drop_remainder: bool = False,
    compression: str | None = "auto",
    num_parallel_reads: int | None = None,
    metadata: str | None = None,
    storage_options: dict | None = None,
):
    """A :class:`tfrx.Dataset` of parsed batches (dicts of NumPy arrays) of BERT pre-training records.

    The sizes and layout come from the arguments, else from the metadata file
    (``metadata=`` or ``.tfrx/{prefix}.bert.json`` found from the first file's name),
    else BERT's defaults (128, 20, both objectives). With ``batch_size=None``
    one record at a time is parsed (a dict of arrays without the batch axis).
    ``shuffle_buffer`` shuffles records (seeded) before batching; feed the
    dataset to PyTorch with ``.to_torch()``, to JAX/Keras as NumPy.
    """
    from tfrx.data import Dataset, TFRecordDataset
    from tfrx.parsing import parse_single_example

    meta = _find_metadata(paths, metadata, storage_options)
    opts = (meta or {}).get("options", {})

    def pick(value, name, default):
        return value if value is not None else opts.get(name, default)

    spec = feature_spec(
        max_seq_length=pick(max_seq_length, "max_seq_length", 128),
        max_predictions_per_seq=pick(max_predictions_per_seq, "max_predictions_per_seq", 20),
        mlm_only=pick(mlm_only, "mlm_only", False),
        disable_masking=pick(disable_masking, "disable_masking", False),
    )
    ds: Dataset = TFRecordDataset(
        paths, compression=compression, num_parallel_reads=num_parallel_reads, storage_options=storage_options
    )
    if repeat:
        ds = ds.repeat()
    if shuffle_buffer:
        ds = ds.shuffle(shuffle_buffer, seed=seed)
    if batch_size is None:
        return ds.map(lambda r: parse_single_example(r, spec))
    return ds.batch(batch_size, drop_remainder=drop_remainder).parse(spec).prefetch(2)


def _find_metadata(paths, metadata, storage_options):
    import re

    from tfrx.text._sources import read_bytes

    if metadata is not None:
        return read_metadata(metadata, storage_options=storage_options)
    first = paths[0] if isinstance(paths, (list, tuple)) and paths else paths
    if not isinstance(first, (str, os.PathLike)):
        return None
    first = os.fspath(first)
    # PREFIX.tfrecord-00000-of-00004 (or a glob of them) -> PREFIX's; a reference-style file -> FILE's: in the
    # sidecar folder, else beside the records, where earlier versions wrote it
    names = [re.sub(r"\.tfrecord-[^/]*$", "", first), first]
    candidates = [metadata_path_for(n) for n in names] + [n + BERT_METADATA_SUFFIX for n in names]
    for c in candidates:
        try:
            return json.loads(read_bytes(c, storage_options=storage_options))
        except (OSError, ValueError, TfrxError):
            continue
    return None
