"""Where an element came from, for error messages: a file and a record index.

Each iterator knows its own state's form, so :meth:`DatasetIterator.provenance`
turns a state into a :class:`Provenance`: file readers from their position
(``path`` and the records consumed), transformations by asking their input
about the input's part of the state. A stage that sees an exception holds
the state from just after its input produced the failing element, so the
record is the last one consumed.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Provenance", "annotate"]


@dataclass(frozen=True)
class Provenance:
    """A record of a file: ``path`` and its index in that file."""

    path: str
    record_index: int


def annotate(exc: BaseException, what: str, element_index: int | None, where: Provenance | None) -> BaseException:
    """Adds a note naming the stage, element, file and record; sets ``tfrx_path`` / ``tfrx_record_index``."""
    parts = [] if element_index is None else [f"element {element_index}"]
    if where is not None:
        parts.append(f"file {where.path!r}, record {where.record_index}")
        if getattr(exc, "tfrx_path", None) is None:
            try:
                setattr(exc, "tfrx_path", where.path)
                setattr(exc, "tfrx_record_index", where.record_index)
            except AttributeError:  # exceptions with __slots__
                pass
    if hasattr(exc, "add_note") and not getattr(exc, "_tfrx_annotated", False):
        exc.add_note(f"raised in {what}" + (f" ({', '.join(parts)})" if parts else ""))
        try:
            setattr(exc, "_tfrx_annotated", True)
        except AttributeError:
            pass
    return exc
