"""Where an element came from, for error messages: the file and record in an iterator state.

Record sources put ``"path"`` and ``"record"`` (records consumed from that
file) into their state. A transformation that sees an exception holds the
state from just after its input produced the failing element, so the record
is the last one consumed: index ``record - 1`` in that file.
"""

from __future__ import annotations

from typing import Any

__all__ = ["find_position", "annotate"]


def find_position(state: Any) -> tuple[str | None, int | None]:
    """``(path, index of the last record consumed)`` found in a nested state, or ``(None, None)``."""
    if isinstance(state, dict):
        if state.get("path") is not None and "record" in state:
            return state["path"], int(state["record"]) - 1
        for v in state.values():
            found = find_position(v)
            if found[0] is not None:
                return found
    elif isinstance(state, (list, tuple)):
        for v in state:
            found = find_position(v)
            if found[0] is not None:
                return found
    return None, None


def annotate(exc: BaseException, what: str, element_index: int | None, state_after: Any) -> BaseException:
    """Adds a note naming the stage, element, file and record; sets ``tfrx_path`` / ``tfrx_record_index``."""
    path, record = find_position(state_after)
    where = f" (element {element_index}" if element_index is not None else " ("
    if path is not None:
        where += f"{', ' if element_index is not None else ''}file {path!r}, record {record}"
        if getattr(exc, "tfrx_path", None) is None:
            try:
                setattr(exc, "tfrx_path", path)
                setattr(exc, "tfrx_record_index", record)
            except AttributeError:  # exceptions with __slots__
                pass
    where += ")" if where != " (" else ""
    if where == " (":
        where = ""
    if hasattr(exc, "add_note") and not getattr(exc, "_tfrx_annotated", False):
        exc.add_note(f"raised in {what}{where}")
        try:
            setattr(exc, "_tfrx_annotated", True)
        except AttributeError:
            pass
    return exc
