"""Where a reader stands (``RecordPosition``) and what it has read so far (``ReaderStats``)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RecordPosition", "ReaderStats"]


@dataclass(frozen=True)
class RecordPosition:
    """Where a reader stands: the next record to read.

    ``file_index`` indexes the reader's expanded file list, ``offset`` is the
    byte offset of the next record's header in the file's uncompressed
    stream, ``record_index`` is that record's index within the file.
    ``to_dict()`` / ``from_dict()`` give a JSON-serialisable form.
    """

    file_index: int = 0
    offset: int = 0
    record_index: int = 0

    def to_dict(self) -> dict:
        """A JSON-serialisable form; :meth:`from_dict` reads it back."""
        return {"file_index": self.file_index, "offset": self.offset, "record_index": self.record_index}

    @classmethod
    def from_dict(cls, state) -> RecordPosition:
        if isinstance(state, RecordPosition):
            return state
        if isinstance(state, (tuple, list)):
            return cls(*(int(v) for v in state))
        return cls(int(state["file_index"]), int(state["offset"]), int(state.get("record_index", 0)))


@dataclass
class ReaderStats:
    """Counters of a reader: records and payload bytes read, damage skipped."""

    records: int = 0
    bytes: int = 0
    files: int = 0
    skipped_records: int = 0
    skipped_bytes: int = 0
    errors: list = field(default_factory=list)  # the CorruptRecordError of each region and stream break
    regions: list = field(default_factory=list)  # a DamagedRegion for each skipped region
