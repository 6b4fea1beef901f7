"""The tfrx error hierarchy.

Every error tfrx raises derives from :class:`TfrxError`. Each subclass also
derives from the builtin exception that callers already catch (``ValueError``
for bad data, ``TypeError`` for a wrong argument type), so ``except ValueError``
keeps working for code ported from TensorFlow or other readers.
"""

from __future__ import annotations

__all__ = [
    "TfrxError",
    "CorruptRecordError",
    "DecodeError",
    "ParseError",
    "SpecError",
    "SidecarFileError",
    "IncompleteShardSetError",
    "IndexFileError",
    "StaleIndexError",
    "CompressedFileError",
    "ConvertError",
    "InputFormatError",
    "FilterError",
    "CorruptRecordWarning",
]


class TfrxError(Exception):
    """Root of every error raised by tfrx."""


class CorruptRecordError(TfrxError, ValueError):
    """A TFRecord file is damaged: truncated, a CRC mismatch, or a bogus length.

    Attributes name where: ``path`` (file name or ``None`` for anonymous
    streams), ``record_index`` (0-based index of the record in its file),
    ``offset`` (byte offset of the record's header in the uncompressed
    stream), and what: ``kind`` (``"truncated"``, ``"length_crc"``,
    ``"data_crc"``, ``"bogus_length"``, ``"compression"``, or ``"compressed"``
    for a GZIP/ZLIB file read as uncompressed), ``expected`` and ``actual``;
    for ``"compression"``, ``compressed_offset`` is the byte of the file
    where the compressed stream broke.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        record_index: int | None = None,
        offset: int | None = None,
        kind: str | None = None,
        expected: object = None,
        actual: object = None,
        compressed_offset: int | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.record_index = record_index
        self.offset = offset
        self.kind = kind
        self.expected = expected
        self.actual = actual
        self.compressed_offset = compressed_offset


class DecodeError(TfrxError, ValueError):
    """Bytes cannot be decoded: not a valid protocol buffer of the expected type, or a corrupt image.

    ``offset`` is the byte offset inside the serialized message where decoding
    failed; ``record_index`` is set when the message came from a batch.
    """

    def __init__(self, message: str, *, offset: int | None = None, record_index: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.record_index = record_index


class ParseError(TfrxError, ValueError):
    """A record does not match the parse spec (TensorFlow's InvalidArgumentError cases).

    ``feature`` names the feature, ``record_index`` the record's index in the
    batch.
    """

    def __init__(self, message: str, *, feature: str | None = None, record_index: int | None = None) -> None:
        super().__init__(message)
        self.feature = feature
        self.record_index = record_index


class SpecError(TfrxError, ValueError):
    """A feature spec or option is invalid (raised when the spec is built, not per record)."""


class SidecarFileError(TfrxError, ValueError):
    """A file tfrx writes beside data (an index, a manifest, a commit journal) was given as data.

    ``path`` is the file, ``kind`` what it is (``"index"``, ``"manifest"``,
    ``"journal"``, ``"sidecar directory"``), ``data_path`` the data file or
    shard prefix it belongs to when that follows from its name.
    """

    def __init__(self, message: str, *, path: str, kind: str, data_path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.kind = kind
        self.data_path = data_path


class IncompleteShardSetError(TfrxError, FileNotFoundError):
    """Files given as a set of shards are not all there (``-NNNNN-of-MMMMM`` names, or an interrupted commit).

    ``missing`` lists the paths of the shards that are absent.
    """

    def __init__(self, message: str, *, missing: list[str]) -> None:
        super().__init__(message)
        self.missing = list(missing)


class IndexFileError(TfrxError, ValueError):
    """An index file is damaged, truncated, of an unknown version, or not an index."""

    def __init__(self, message: str, *, index_path: str | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.index_path = index_path
        self.path = path


class StaleIndexError(IndexFileError):
    """An index no longer matches its data file (changed since, or another file's index)."""


class CompressedFileError(TfrxError, ValueError):
    """A GZIP/ZLIB TFRecord file was given where random access is needed."""


class ConvertError(TfrxError, ValueError):
    """An input could not be converted (with ``on_error="raise"``)."""


class InputFormatError(TfrxError, ValueError):
    """A text input cannot be read in the layout asked for (bad JSON, missing text field)."""


class FilterError(TfrxError, ValueError):
    """A viewer filter expression is not valid (the message says where)."""


class CorruptRecordWarning(UserWarning):
    """Issued by ``on_error="warn"`` for each damaged region that is skipped."""
