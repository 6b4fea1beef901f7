"""Sentence segmentation for raw documents.

``"pysbd"`` (the default, the ``text`` extra) is pySBD's rule-based English
segmenter (abbreviations, initials, numbers, quotes); ``"spacy"`` is spaCy's
rule-based ``sentencizer`` in a blank pipeline (no model download);
``"lines"`` takes each non-blank line as a sentence; ``"regex"`` splits
after ``.``, ``!`` or ``?`` followed by whitespace and an upper-case letter or
a digit, with no dependency. docs/bert.md compares them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["SEGMENTERS", "get_segmenter", "default_segmenter"]

SEGMENTERS = ("pysbd", "spacy", "lines", "regex")

_REGEX_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])")


def _pysbd(language: str) -> Callable[[str], list[str]]:
    try:
        import pysbd
    except ImportError:
        raise ImportError(
            "segmenter='pysbd' needs pySBD: pip install 'tfrx[text]' (or pick segmenter='regex')"
        ) from None
    seg = pysbd.Segmenter(language=language, clean=False)

    def split(text: str) -> list[str]:
        # pySBD is slow on very long inputs; paragraphs (blank lines) never share a sentence.
        out: list[str] = []
        for para in re.split(r"\n\s*\n", text):
            if para.strip():
                out.extend(seg.segment(" ".join(para.split())))
        return out

    return split


def _spacy(language: str) -> Callable[[str], list[str]]:
    try:
        import spacy
    except ImportError:
        raise ImportError("segmenter='spacy' needs spaCy: pip install spacy (or pick segmenter='pysbd')") from None
    nlp = spacy.blank(language)
    nlp.add_pipe("sentencizer")
    nlp.max_length = 10**8

    def split(text: str) -> list[str]:
        out: list[str] = []
        for para in re.split(r"\n\s*\n", text):
            if para.strip():
                out.extend(s.text for s in nlp(" ".join(para.split())).sents)
        return out

    return split


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _regex(text: str) -> list[str]:
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if para:
            out.extend(_REGEX_BOUNDARY.split(para))
    return out


def get_segmenter(
    name: str | Callable[[str], list[str]] = "pysbd", *, language: str = "en"
) -> Callable[[str], list[str]]:
    """A function ``text -> list of sentences``; ``name`` is one of :data:`SEGMENTERS` or a callable."""
    if callable(name):
        return name
    if name == "pysbd":
        return _pysbd(language)
    if name == "spacy":
        return _spacy(language)
    if name == "lines":
        return _lines
    if name == "regex":
        return _regex
    raise ValueError(f"segmenter must be one of {SEGMENTERS} or a callable, got {name!r}")


def default_segmenter() -> Callable[[str], list[str]]:
    """pySBD when it is installed, else the dependency-free ``"regex"`` splitter."""
    try:
        return _pysbd("en")
    except ImportError:
        return _regex
