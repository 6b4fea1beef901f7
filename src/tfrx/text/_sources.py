"""Reading text corpora: files, globs and fsspec URLs in the three input layouts.

* ``"lines"`` - the reference layout of BERT's ``create_pretraining_data``:
  one sentence per line, a blank line between documents. Lines end at
  ``"\\n"`` only and every ``"\\r"`` is dropped (TensorFlow's ``GFile.readline``);
  each is decoded as UTF-8 (invalid bytes dropped) and stripped with
  ``str.strip()``. As in the reference, a document is not closed at the end
  of a file: only a blank line ends it.
* ``"text"`` - one document per file, raw text split into sentences by a
  segmenter (:mod:`tfrx.text._segment`).
* ``"jsonl"`` - JSON Lines, one document per line in the field ``text_field``
  (default ``"text"``), split into sentences the same way.

Every reader yields documents as lists of sentence strings, empty sentences
and empty documents left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator

from tfrx.errors import InputFormatError

__all__ = ["INPUT_FORMATS", "read_bytes", "expand_inputs", "files_from_metadata", "iter_documents", "InputFormatError"]

INPUT_FORMATS = ("lines", "text", "jsonl")


def read_bytes(path: str, *, storage_options: dict | None = None) -> bytes:
    """The whole content of a local file or fsspec URL (``.gz`` files are decompressed)."""
    from tfrx.io._paths import open_input

    with open_input(path, buffering=-1, storage_options=storage_options) as f:
        data = f.read()
    if str(path).endswith(".gz"):
        import gzip

        data = gzip.decompress(data)
    return data


def expand_inputs(paths, *, storage_options: dict | None = None) -> list[str]:
    """Paths, globs (sorted) and URLs to a flat list; a comma inside one string separates several, as in the reference."""
    from tfrx.io._data_files import expand_paths

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    items: list[str] = []
    for p in paths:
        p = os.fspath(p)
        items.extend(part for part in p.split(",") if part) if "://" not in p else items.append(p)
    return [str(x) for x in expand_paths(items, storage_options=storage_options)]


def files_from_metadata(
    metadata_files, *, input_files_prefix: str = "", storage_options: dict | None = None
) -> list[str]:
    """The data files listed in Cerebras-style metadata files: one path per line, relative to ``input_files_prefix``."""
    if isinstance(metadata_files, (str, os.PathLike)):
        metadata_files = [metadata_files]
    out: list[str] = []
    for meta in metadata_files:
        for line in read_bytes(os.fspath(meta), storage_options=storage_options).decode("utf-8").split("\n"):
            line = line.strip()
            if line:
                out.append(
                    line
                    if not input_files_prefix
                    else (
                        input_files_prefix.rstrip("/") + "/" + line
                        if "://" in input_files_prefix
                        else os.path.join(input_files_prefix, line)
                    )
                )
    if not out:
        raise InputFormatError(f"the metadata files {list(map(os.fspath, metadata_files))} list no data files")
    return out


def _open_binary(path: str, storage_options: dict | None):
    """A buffered binary file to iterate by lines (``.gz`` decompressed on the fly)."""
    import io

    from tfrx.io._paths import open_input

    f = open_input(path, buffering=1 << 20, storage_options=storage_options)
    if not isinstance(f, io.BufferedIOBase):
        f = io.BufferedReader(f, 1 << 20)
    if str(path).endswith(".gz"):
        import gzip

        return gzip.GzipFile(fileobj=f, mode="rb")
    return f


def _reference_lines(path: str, storage_options: dict | None) -> Iterator[str]:
    # The reference reads with tf.io.gfile.GFile(path, "rb").readline(), TensorFlow's
    # BufferedInputStream::ReadLine: a line ends at b"\n" only (a final one starts no empty line)
    # and every b"\r" is dropped, wherever it is, before the line is decoded as UTF-8 with invalid
    # bytes dropped and str.strip()ped. The reference stops at the first line that decodes to "":
    # before the end that cannot happen (the line holds its b"\n"), at the end it is a last line
    # without b"\n" made only of b"\r" or invalid bytes, which is then not a (blank) line at all.
    with _open_binary(path, storage_options) as f:
        for raw in f:
            line = raw.replace(b"\r", b"").decode("utf-8", "ignore")
            if not line:
                return
            yield line.strip()


def iter_documents(
    paths,
    *,
    input_format: str = "lines",
    segmenter: Callable[[str], list[str]] | None = None,
    text_field: str = "text",
    document_separator: str | None = None,
    storage_options: dict | None = None,
    on_document: Callable[[str, int], None] | None = None,
) -> Iterator[list[str]]:
    """Yields each document of ``paths`` as a list of sentences.

    ``segmenter`` splits raw text into sentences for the ``"text"`` and
    ``"jsonl"`` layouts (default: :func:`tfrx.text._segment.default_segmenter`).
    ``document_separator``: with ``"text"``, a file holds several documents
    separated by lines equal to this string (Cerebras'
    ``multiple_docs_separator``). ``on_document(path, index)`` is called for
    every document yielded (it fills the metadata file's list of documents).
    """
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format must be one of {INPUT_FORMATS}, got {input_format!r}")
    files = expand_inputs(paths, storage_options=storage_options)
    if input_format == "lines":
        yield from _iter_reference(files, storage_options, on_document)
        return
    if segmenter is None:
        from tfrx.text._segment import default_segmenter

        segmenter = default_segmenter()
    for path in files:
        if input_format == "text":
            text = read_bytes(path, storage_options=storage_options).decode("utf-8", "ignore")
            texts: Iterable[str] = [text] if not document_separator else _split_documents(text, document_separator)
        else:
            texts = _jsonl_texts(path, storage_options, text_field)
        for k, text in enumerate(texts):
            sentences = [s.strip() for s in segmenter(text)]
            sentences = [s for s in sentences if s]
            if sentences:
                if on_document is not None:
                    on_document(path, k)
                yield sentences


def _iter_reference(files: list[str], storage_options, on_document) -> Iterator[list[str]]:
    document: list[str] = []
    first_path, first_line = None, 0
    for path in files:
        for n, line in enumerate(_reference_lines(path, storage_options)):
            if not line:
                if document:
                    if on_document is not None:
                        on_document(first_path, first_line)
                    yield document
                document = []
                continue
            if not document:
                first_path, first_line = path, n
            document.append(line)
    if document:
        if on_document is not None:
            on_document(first_path, first_line)
        yield document


def _split_documents(text: str, separator: str) -> list[str]:
    docs: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        if line.strip() == separator:
            docs.append("\n".join(current))
            current = []
        else:
            current.append(line)
    docs.append("\n".join(current))
    return docs


def _jsonl_texts(path: str, storage_options: dict | None, field: str) -> Iterator[str]:
    with _open_binary(path, storage_options) as f:
        yield from _jsonl_lines(path, f, field)


def _jsonl_lines(path: str, f, field: str) -> Iterator[str]:
    for n, raw in enumerate(f):
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputFormatError(
                f"{path!r}, line {n + 1}: not valid JSON ({e.msg} at column {e.colno}); "
                "JSON Lines input needs one JSON object per line"
            ) from None
        if not isinstance(obj, dict) or field not in obj:
            raise InputFormatError(
                f"{path!r}, line {n + 1}: no field {field!r} in the JSON object; "
                "pass text_field= (--text-field) naming the field that holds the text"
            )
        text = obj[field]
        if not isinstance(text, str):
            raise InputFormatError(
                f"{path!r}, line {n + 1}: field {field!r} holds {type(text).__name__}, expected a string"
            )
        yield text
