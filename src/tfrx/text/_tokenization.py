"""BERT's WordPiece tokenizer with the reference semantics, in pure Python.

Matches ``FullTokenizer`` of google-research/bert and TensorFlow Model
Garden (``official/nlp/tools/tokenization.py``) token for token:

* cleaning: NUL, U+FFFD and control characters (categories Cc and Cf, but
  not tab, newline, carriage return) are dropped; whitespace (space, tab,
  newline, carriage return and category Zs) becomes a space;
* every CJK Unified Ideograph (the blocks the reference lists) becomes a
  word of its own;
* with ``do_lower_case``: ``str.lower()`` per word, then NFD and removal of
  nonspacing marks (category Mn), i.e. accents are stripped;
* punctuation splitting: every ASCII character that is not a letter or a
  digit, and every character of a Unicode ``P*`` category, is a word of its
  own;
* WordPiece: greedy longest match first against the vocabulary, ``##``
  before every piece that does not start a word, ``[UNK]`` for a word that
  cannot be covered or is longer than 400 characters.

ASCII text takes a regular-expression path that gives the same tokens as the
per-character rules; words are WordPiece-split once and cached.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Sequence

from tfrx.errors import TfrxError

__all__ = ["Vocab", "BasicTokenizer", "WordpieceTokenizer", "FullTokenizer", "load_vocab"]

_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
# ASCII: control characters other than \t \n \r are dropped (\x0b and \x0c are Cc, not whitespace).
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# After cleaning, an ASCII word is a run of letters/digits; every other printable character is punctuation.
_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")


def _is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


class Vocab:
    """A WordPiece vocabulary: ``vocab.txt``, one token per line, id = line number.

    Like the reference, a token listed twice maps to its last line, and
    :attr:`words` (the pool random replacements are drawn from) lists each
    distinct token once, in order of first appearance.
    """

    def __init__(self, tokens: Sequence[str], *, path: str | None = None) -> None:
        self.ids: dict[str, int] = {}
        for i, token in enumerate(tokens):
            self.ids[token] = i
        self.tokens = list(tokens)
        self.path = path
        # ids of the distinct tokens in first-appearance order (what the reference's
        # ``list(vocab.keys())`` holds, mapped through the vocab)
        self.words = [self.ids[t] for t in self.ids]

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self.ids

    def id(self, token: str) -> int:
        try:
            return self.ids[token]
        except KeyError:
            where = f" of {self.path!r}" if self.path else ""
            raise TfrxError(
                f"token {token!r} is not in the vocabulary{where}; add it (BERT vocabularies "
                f"list [PAD] [UNK] [CLS] [SEP] [MASK])"
            ) from None

    def convert_tokens_to_ids(self, tokens: Iterable[str]) -> list[int]:
        return [self.id(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.tokens[int(i)] for i in ids]

    @classmethod
    def from_file(cls, path: str | os.PathLike, *, storage_options: dict | None = None) -> Vocab:
        """Reads ``vocab.txt`` (local path or fsspec URL); each line is stripped of surrounding whitespace."""
        from tfrx.text._sources import read_bytes

        data = read_bytes(os.fspath(path), storage_options=storage_options)
        text = data.decode("utf-8", "ignore")
        # The reference reads with readline(): lines end at "\n" only.
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return cls([line.strip() for line in lines], path=os.fspath(path))


def load_vocab(path: str | os.PathLike, *, storage_options: dict | None = None) -> Vocab:
    """Reads a ``vocab.txt``; see :class:`Vocab`."""
    return Vocab.from_file(path, storage_options=storage_options)


class BasicTokenizer:
    """Cleaning, CJK and punctuation splitting, optional lower casing with accent stripping."""

    def __init__(self, *, do_lower_case: bool = True, split_on_punc: bool = True) -> None:
        self.do_lower_case = bool(do_lower_case)
        self.split_on_punc = bool(split_on_punc)

    def tokenize(self, text: str) -> list[str]:
        if text.isascii() and self.split_on_punc:
            text = _ASCII_CONTROL.sub("", text)
            if self.do_lower_case:
                text = text.lower()
            return _ASCII_WORDS.findall(text)
        out: list[str] = []
        for word in self._clean(text).split(" "):
            if not word:
                continue
            if self.do_lower_case:
                word = _strip_accents(word.lower())
            if self.split_on_punc:
                out.extend(_split_punctuation(word))
            else:
                out.append(word)
        # The reference joins and re-splits on whitespace: a word the steps above turned into
        # nothing disappears, and whitespace produced by lower() or NFD splits words.
        return " ".join(out).split()

    @staticmethod
    def _clean(text: str) -> str:
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            if _is_whitespace(ch):
                chars.append(" ")
            elif _is_cjk(cp):
                chars.append(f" {ch} ")
            else:
                chars.append(ch)
        # whitespace_tokenize splits on str.split()'s whitespace, which includes more than the
        # characters mapped to " " above (e.g. U+001C..U+001F are Cc and already gone, U+0085 is Cc too,
        # U+2028 is Zl): normalise with str.split() as the reference does.
        return " ".join("".join(chars).split())


def _strip_accents(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", word) if unicodedata.category(ch) != "Mn")


def _split_punctuation(word: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for ch in word:
        if _is_punctuation(ch):
            if current:
                out.append("".join(current))
                current = []
            out.append(ch)
        else:
            current.append(ch)
    if current:
        out.append("".join(current))
    return out


class WordpieceTokenizer:
    """Greedy longest-match-first WordPiece over a :class:`Vocab`, with a per-word cache."""

    def __init__(self, vocab: Vocab, *, unk_token: str = "[UNK]", max_input_chars_per_word: int = 400) -> None:
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self._cache: dict[str, tuple[str, ...]] = {}

    def tokenize_word(self, word: str) -> tuple[str, ...]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        pieces = self._split(word)
        if len(self._cache) < 1_000_000:
            self._cache[word] = pieces
        return pieces

    def _split(self, word: str) -> tuple[str, ...]:
        if len(word) > self.max_input_chars_per_word:
            return (self.unk_token,)
        ids = self.vocab.ids
        pieces = []
        start, n = 0, len(word)
        while start < n:
            end = n
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in ids:
                    found = piece
                    break
                end -= 1
            if found is None:
                return (self.unk_token,)
            pieces.append(found)
            start = end
        return tuple(pieces)

    def tokenize(self, text: str) -> list[str]:
        out: list[str] = []
        for word in text.split():
            out.extend(self.tokenize_word(word))
        return out


class FullTokenizer:
    """:class:`BasicTokenizer` then :class:`WordpieceTokenizer`: the reference ``FullTokenizer``."""

    def __init__(
        self,
        vocab: Vocab | str | os.PathLike,
        *,
        do_lower_case: bool = True,
        split_on_punc: bool = True,
        storage_options: dict | None = None,
    ) -> None:
        if not isinstance(vocab, Vocab):
            vocab = Vocab.from_file(vocab, storage_options=storage_options)
        self.vocab = vocab
        self.basic = BasicTokenizer(do_lower_case=do_lower_case, split_on_punc=split_on_punc)
        self.wordpiece = WordpieceTokenizer(vocab)

    def tokenize(self, text: str) -> list[str]:
        out: list[str] = []
        for word in self.basic.tokenize(text):
            out.extend(self.wordpiece.tokenize_word(word))
        return out

    def tokenize_to_ids(self, text: str) -> list[int]:
        ids = self.vocab.ids
        return [ids[t] for t in self.tokenize(text)]

    def convert_tokens_to_ids(self, tokens: Iterable[str]) -> list[int]:
        return self.vocab.convert_tokens_to_ids(tokens)

    def convert_ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        return self.vocab.convert_ids_to_tokens(ids)
