"""Checking the CRC of every record of TFRecord files."""

from __future__ import annotations

from dataclasses import dataclass, field

from tfrx.errors import CorruptRecordError
from tfrx.io.data_files import expand_paths
from tfrx.io.paths import source_name
from tfrx.io.reader import DamagedRegion, RecordReader

__all__ = ["FileCheck", "verify_files"]


@dataclass
class FileCheck:
    """The outcome of checking one file: readable ``records`` and each ``errors`` region found.

    ``regions`` gives the byte range of each damaged region and how many
    records it is counted as (``skipped_records`` in all); a broken
    compressed stream whose data ended whole has an error but no region.
    """

    path: str
    records: int = 0
    bytes: int = 0
    errors: list[CorruptRecordError] = field(default_factory=list)
    regions: list[DamagedRegion] = field(default_factory=list)
    skipped_records: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def region_of(self, error: CorruptRecordError) -> DamagedRegion | None:
        """The damaged region ``error`` opened, if any."""
        return next((r for r in self.regions if r.error is error), None)


def verify_files(paths, *, compression="auto", progress=None) -> list[FileCheck]:
    """Reads every record of ``paths`` checking length and data CRCs; returns one :class:`FileCheck` per file.

    Damage never stops the check: the reader resynchronises at the next
    record whose length and data CRCs verify, and each damaged region is
    reported with its file, byte range and record index.
    ``progress`` is called with the number of bytes of payload read so far in
    the current file (for progress bars).
    """
    checks = []
    for source in expand_paths(paths):
        check = FileCheck(source_name(source) or "<stream>")
        with RecordReader(source, compression=compression, verify=True, on_error="skip") as reader:
            for batch in reader.iter_batches():
                check.records += len(batch)
                n = int(batch.lengths.sum())
                check.bytes += n
                if progress is not None:
                    progress(len(batch), n)
            check.errors = list(reader.stats.errors)
            check.regions = list(reader.stats.regions)
            check.skipped_records = reader.stats.skipped_records
        checks.append(check)
    return checks
