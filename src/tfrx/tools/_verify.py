"""Checking the CRC of every record of TFRecord files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfrx._progress import progress_bar
from tfrx.errors import CorruptRecordError
from tfrx.io._data_files import expand_paths
from tfrx.io._framing import FRAMING_BYTES
from tfrx.io._paths import is_url, local_size, source_name, url_to_fs
from tfrx.io._reader import DamagedRegion, RecordReader
from tfrx.options import ProgressOption, check_progress

__all__ = ["FileCheck", "source_size", "verify_files"]


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


def source_size(source) -> int | None:
    """The size in bytes of a file, a URL's object or an in-memory stream; ``None`` when it cannot be
    known without reading."""
    if isinstance(source, str) and is_url(source):
        try:
            fs, path = url_to_fs(source)
            return int(fs.size(path))
        except Exception:  # noqa: BLE001 - progress without a total is fine
            return None
    size = local_size(source)
    if size is None and hasattr(source, "getbuffer"):  # standard input, read into memory
        size = len(source.getbuffer())
    return size


def verify_files(
    paths,
    *,
    compression="auto",
    progress: ProgressOption | Callable[[int, int], Any] = None,
    storage_options: dict | None = None,
) -> list[FileCheck]:
    """Reads every record of ``paths`` checking length and data CRCs; returns one :class:`FileCheck` per file.

    Damage never stops the check: the reader resynchronises at the next
    record whose length and data CRCs verify, and each damaged region is
    reported with its file, byte range and record index.
    ``progress`` (see :mod:`tfrx.options`: a bar on a terminal by default, or a
    callable) reports the bytes checked, framing included (unit ``"B"``); ``total``
    is the files' summed size when every size is known. ``storage_options`` go to
    the fsspec filesystem of URLs.
    """
    old = check_progress(progress, where="verify_files", old_shape="progress(records, payload_bytes)")
    legacy: Any = progress  # the deprecated (records, payload_bytes) callback when ``old``
    sources = list(expand_paths(paths, storage_options=storage_options))
    sizes = [source_size(s) for s in sources]
    total = None if None in sizes else sum(s or 0 for s in sizes)
    checks = []
    end = 0
    with progress_bar(total, desc="verify", unit="B", enabled=False if old else progress) as bar:
        for source, size in zip(sources, sizes):
            end += size or 0
            check = FileCheck(source_name(source) or "<stream>")
            with RecordReader(source, compression=compression, verify=True, on_error="skip") as reader:
                for batch in reader.iter_batches():
                    check.records += len(batch)
                    n = int(batch.lengths.sum())
                    check.bytes += n
                    if old:
                        legacy(len(batch), n)
                    elif bar.active:
                        step = n + FRAMING_BYTES * len(batch)  # never past the end of this file
                        step = min(step, end - bar.n) if total is not None else step
                        if step > 0:
                            bar.update(step)
                check.errors = list(reader.stats.errors)
                check.regions = list(reader.stats.regions)
                check.skipped_records = reader.stats.skipped_records
            if bar.active and total is not None and end > bar.n:  # compressed files, damaged regions
                bar.update(end - bar.n)
            checks.append(check)
    return checks
