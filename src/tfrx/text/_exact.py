"""Exact mode: the reference's instance creation, draw for draw.

Given the same documents, vocabulary, flags and seed, :func:`create_instances`
returns the instances TensorFlow Model Garden's
``official.nlp.data.create_pretraining_data`` (and google-research/bert's
``create_pretraining_data.py``) creates, in the same order. The reference
draws every random choice from one ``random.Random(random_seed)``; this module
makes the same calls on its own ``random.Random`` in the same order:

1. ``shuffle`` of the documents (after dropping empty ones);
2. ``dupe_factor`` passes over the documents; for each document one
   ``random()`` for a short target length (then ``randint(2, max_num_tokens)``),
   and per chunk of sentences ``randint`` for the end of segment A, ``random()``
   for a random next segment (then ``randint`` for the other document, up to
   ten tries to differ, and ``randint`` for its first sentence; unused
   sentences of the chunk are put back), ``random()`` per token removed by
   ``truncate_seq_pair`` (front or back of the longer segment);
3. masking: ``shuffle`` of the candidate positions (words with
   ``do_whole_word_mask``), taken from the end while they fit in
   ``num_to_predict = min(max_predictions_per_seq, max(1, round(len * masked_lm_prob)))``;
   per chosen word ``random() < 0.8`` for ``[MASK]``, else ``random() < 0.5`` to
   keep it, else ``choice(vocab)`` per piece; positions sorted at the end;
4. ``shuffle`` of all instances.

Tokens are handled as vocabulary ids throughout. N-gram masking
(``max_ngram_size``) is not supported: the reference draws it from Python's
global random generator.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tfrx.text._bert_options import BertDataOptions
from tfrx.text._tokenization import Vocab

__all__ = ["Instance", "SpecialIds", "create_instances", "create_instances_from_document", "mask_tokens"]


class _Draws:
    """``shuffle``, ``randint``, ``choice`` and ``random`` of a ``random.Random``, the same values in the same order.

    ``random.Random``'s ``shuffle``, ``randint`` and ``choice`` all reduce to
    ``_randbelow(n)``: ``getrandbits(n.bit_length())`` until the value is
    below ``n``. Inlining that saves most of the Python calls of exact mode;
    it is used only for a plain ``random.Random`` and only once a probe has
    shown, on this interpreter, that it gives what the standard library gives
    (otherwise the standard methods are called).
    """

    _inline_ok: bool | None = None

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.random = rng.random
        if type(rng) is random.Random and _Draws._check_inline():
            self._bits = rng.getrandbits
            self.shuffle, self.randint, self.choice = self._shuffle, self._randint, self._choice
        else:
            self.shuffle, self.randint, self.choice = rng.shuffle, rng.randint, rng.choice

    def _below(self, n: int) -> int:
        bits = self._bits
        k = n.bit_length()
        r = bits(k)
        while r >= n:
            r = bits(k)
        return r

    def _shuffle(self, x: list) -> None:
        bits = self._bits
        for i in range(len(x) - 1, 0, -1):
            n = i + 1
            k = n.bit_length()
            r = bits(k)
            while r >= n:
                r = bits(k)
            x[i], x[r] = x[r], x[i]

    def _randint(self, a: int, b: int) -> int:
        if b < a:
            return self.rng.randint(a, b)  # the standard error
        return a + self._below(b - a + 1)

    def _choice(self, seq):
        return seq[self._below(len(seq))]

    @classmethod
    def _check_inline(cls) -> bool:
        if cls._inline_ok is None:
            std, probe = random.Random(20240601), random.Random(20240601)
            fast = object.__new__(cls)
            fast.rng, fast._bits = probe, probe.getrandbits
            ok = True
            for n in [*range(0, 70), 255, 256, 257, 1000, 4097]:
                x, y = list(range(n)), list(range(n))
                std.shuffle(x)
                fast._shuffle(y)
                ok &= x == y and std.randint(0, n) == fast._randint(0, n) and std.random() == probe.random()
                if n:
                    ok &= std.choice(x) == fast._choice(y)
            cls._inline_ok = bool(ok)
        return cls._inline_ok


@dataclass(slots=True)
class Instance:
    """One training instance: ids after masking, where segment B starts, the predictions, the NSP label."""

    input_ids: list[int]
    num_a: int  # positions 0..num_a-1 ([CLS] A [SEP]) have segment id 0, the rest 1
    masked_lm_positions: list[int]
    masked_lm_ids: list[int]
    is_random_next: bool

    @property
    def segment_ids(self) -> list[int]:
        return [0] * self.num_a + [1] * (len(self.input_ids) - self.num_a)


class SpecialIds:
    """Ids of ``[CLS]``, ``[SEP]``, ``[MASK]`` and which ids are ``##`` continuations."""

    def __init__(self, vocab: Vocab) -> None:
        self.cls = vocab.id("[CLS]")
        self.sep = vocab.id("[SEP]")
        self.mask = vocab.id("[MASK]")
        self.continuation = [t.startswith("##") for t in vocab.tokens]
        self.words = vocab.words


def create_instances(
    documents: Iterable[Sequence[Sequence[int]]],
    vocab: Vocab,
    options: BertDataOptions,
    *,
    rng: random.Random | None = None,
) -> list[Instance]:
    """All instances of ``documents`` (lists of sentences of token ids), shuffled as the reference does."""
    draws = _Draws(random.Random(options.random_seed) if rng is None else rng)
    special = SpecialIds(vocab)
    docs = [[list(s) for s in d if len(s)] for d in documents]
    docs = [d for d in docs if d]
    draws.shuffle(docs)
    instances: list[Instance] = []
    for _ in range(options.dupe_factor):
        for index in range(len(docs)):
            instances.extend(create_instances_from_document(docs, index, options, special, draws))
    draws.shuffle(instances)
    return instances


def create_instances_from_document(
    docs: list[list[list[int]]],
    index: int,
    options: BertDataOptions,
    special: SpecialIds,
    rng: random.Random | _Draws,
) -> list[Instance]:
    document = docs[index]
    max_num_tokens = options.max_num_tokens
    target = max_num_tokens
    if rng.random() < options.short_seq_prob:
        target = rng.randint(options.min_short_seq_length, max_num_tokens)
    out: list[Instance] = []
    chunk: list[list[int]] = []
    length = 0
    i = 0
    while i < len(document):
        chunk.append(document[i])
        length += len(document[i])
        if i == len(document) - 1 or length >= target:
            if options.mlm_only:
                tokens = [t for s in chunk for t in s][:max_num_tokens]
                ids = [special.cls, *tokens, special.sep]
                out.append(_finish(ids, len(ids), False, options, special, rng))
            else:
                a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
                tokens_a = [t for s in chunk[:a_end] for t in s]
                tokens_b: list[int] = []
                if len(chunk) == 1 or rng.random() < 0.5:
                    is_random_next = True
                    target_b = target - len(tokens_a)
                    for _ in range(10):
                        other = rng.randint(0, len(docs) - 1)
                        if other != index:
                            break
                    other_doc = docs[other]
                    for sentence in other_doc[rng.randint(0, len(other_doc) - 1) :]:
                        tokens_b.extend(sentence)
                        if len(tokens_b) >= target_b:
                            break
                    i -= len(chunk) - a_end  # the unused sentences go back
                else:
                    is_random_next = False
                    tokens_b = [t for s in chunk[a_end:] for t in s]
                truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
                ids = [special.cls, *tokens_a, special.sep, *tokens_b, special.sep]
                out.append(_finish(ids, len(tokens_a) + 2, is_random_next, options, special, rng))
            chunk = []
            length = 0
        i += 1
    return out


def _finish(
    ids: list[int],
    num_a: int,
    is_random_next: bool,
    options: BertDataOptions,
    special: SpecialIds,
    rng: random.Random | _Draws,
) -> Instance:
    if options.disable_masking:
        return Instance(ids, num_a, [], [], is_random_next)
    masked, positions, labels = mask_tokens(ids, options, special, rng)
    return Instance(masked, num_a, positions, labels, is_random_next)


def truncate_seq_pair(
    tokens_a: list[int], tokens_b: list[int], max_num_tokens: int, rng: random.Random | _Draws
) -> None:
    """Removes tokens from the longer of the two (B on ties), front or back at random, until they fit."""
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


def _words(ids: Sequence[int], special: SpecialIds, whole_word: bool) -> list[tuple[int, int]]:
    """Candidate spans [begin, end): one per token, or one per word (a piece and its ``##`` continuations)."""
    boundary = (special.cls, special.sep)
    if not whole_word:
        return [(i, i + 1) for i, t in enumerate(ids) if t not in boundary]
    spans: list[tuple[int, int]] = []
    start = None
    cont = special.continuation
    for i, t in enumerate(ids):
        if start is not None and cont[t]:
            continue
        if start is not None:
            spans.append((start, i))
        start = None if t in boundary else i
    if start is not None:
        spans.append((start, len(ids)))
    return spans


def mask_tokens(ids: list[int], options: BertDataOptions, special: SpecialIds, rng: random.Random | _Draws):
    """80/10/10 masking; returns (ids after masking, sorted positions, original ids at them)."""
    budget = min(options.max_predictions_per_seq, max(1, round(len(ids) * options.masked_lm_prob)))
    out = list(ids)
    words = special.words
    if not options.do_whole_word_mask:
        # one-token candidates: after the shuffle the last `budget` ones are taken, last first
        cls, sep = special.cls, special.sep
        candidates = [i for i, t in enumerate(ids) if t != cls and t != sep]
        rng.shuffle(candidates)
        chosen = candidates[: -budget - 1 : -1] if budget < len(candidates) else candidates[::-1]
        for k in chosen:
            if rng.random() < 0.8:
                out[k] = special.mask
            elif rng.random() >= 0.5:
                out[k] = rng.choice(words)
        positions = sorted(chosen)
        return out, positions, [ids[k] for k in positions]
    spans = _words(ids, special, True)
    rng.shuffle(spans)
    picked: list[tuple[int, int]] = []
    used = 0
    while used < budget and spans:
        begin, end = spans.pop()
        if used + end - begin > budget:
            continue
        picked.append((begin, end))
        used += end - begin
    predictions: list[int] = []
    for begin, end in picked:
        if rng.random() < 0.8:
            for k in range(begin, end):
                out[k] = special.mask
        elif rng.random() >= 0.5:
            for k in range(begin, end):
                out[k] = rng.choice(words)
        predictions.extend(range(begin, end))
    predictions.sort()
    return out, predictions, [ids[k] for k in predictions]
