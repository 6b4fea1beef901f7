"""Fast mode: batch tokenization, NumPy instance creation, a shuffle buffer, several processes.

Tokenization (``tokenizer=``, see :class:`_Tokenizers`): by default ASCII
sentences go through the reference tokenizer with its per-word cache and the
others through Hugging Face ``tokenizers`` in one batch call.

The reference holds the whole corpus and every instance in memory to shuffle
them globally, and draws every random choice one Python call at a time. Fast
mode keeps the reference's distributions but not its draws:

* documents are read as a stream and cut into chunks of ``chunk_documents``
  documents (or 512 KiB of text, whichever comes first);
  each chunk is one task (a process of a pool, or a Ray task). A task
  tokenizes all its sentences in one batch call, shuffles its documents,
  makes ``dupe_factor`` passes over them, masks all its instances at once
  with NumPy and returns serialized records;
* the random document of a random next segment comes from the same chunk,
  not from the whole corpus (with chunks of hundreds of documents the
  difference does not show in the statistics: tests/test_bert_fast.py);
* records from the tasks pass, in chunk order, through a shuffle buffer of
  ``shuffle_buffer`` records before they are written: instances made far
  apart in the input are not mixed (shuffle the shards' records again at
  training time, e.g. ``read(..., shuffle_buffer=...)``);
* every task draws from ``numpy.random.default_rng([random_seed, chunk])``,
  so the output is the same for any number of workers.

Memory is bounded by the chunks in flight (2 per worker, each masked in
batches of 4096 instances) and the shuffle buffer, whatever the corpus size.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence

import numpy as np

from tfrx.options import resolve_parallelism
from tfrx.text._bert_options import BertDataOptions
from tfrx.text._records import assemble_columns, encode_columns
from tfrx.text._tokenization import Vocab

__all__ = ["create_fast", "hf_tokenizer", "make_chunk_records", "DEFAULT_SHUFFLE_BUFFER", "DEFAULT_CHUNK_DOCUMENTS"]

DEFAULT_SHUFFLE_BUFFER = 50_000
DEFAULT_CHUNK_DOCUMENTS = 1_000
CHUNK_TEXT_BYTES = 512 * 1024  # a chunk also ends after this much text: ~25k instances at dupe_factor 10
_MASK_BATCH = 4096  # instances masked and encoded at once


def hf_tokenizer(vocab: Vocab, *, do_lower_case: bool = True):
    """A Hugging Face ``tokenizers.Tokenizer`` set up as the reference's ``FullTokenizer``.

    BertNormalizer (clean text, CJK spacing, lower case and accent stripping
    with ``do_lower_case``), BertPreTokenizer (whitespace and punctuation),
    WordPiece with ``##`` continuations, ``[UNK]`` and words of up to 400
    characters (the reference's limit; the library's default is 100).
    """
    try:
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    except ImportError:
        raise ImportError(
            "tokenizer='hf' needs Hugging Face tokenizers: pip install 'tfrx[text]' (or pass tokenizer='reference')"
        ) from None
    tok = Tokenizer(models.WordPiece(vocab=dict(vocab.ids), unk_token="[UNK]", max_input_chars_per_word=400))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=do_lower_case, lowercase=do_lower_case
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


TOKENIZERS = ("auto", "hf", "reference")


class _Tokenizers:
    """Word pieces for a batch of sentences with the tokenizer choice of fast mode.

    ``"auto"``: ASCII sentences through :class:`tfrx.text.FullTokenizer` (a
    regular expression and a per-word cache: faster than the Rust tokenizer
    on English text, measured in docs/bert.md), the others through Hugging
    Face ``tokenizers`` in one batch (or the reference tokenizer when it is not
    installed). ``"hf"``: every sentence through Hugging Face ``tokenizers``.
    ``"reference"``: every sentence through :class:`tfrx.text.FullTokenizer`.
    """

    def __init__(self, vocab: Vocab, options: BertDataOptions, choice: str = "auto") -> None:
        from tfrx.text._tokenization import FullTokenizer

        if choice not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {choice!r}")
        self.choice = choice
        self.reference = FullTokenizer(vocab, do_lower_case=options.do_lower_case)
        self.hf = None
        if choice == "hf":
            self.hf = hf_tokenizer(vocab, do_lower_case=options.do_lower_case)
        elif choice == "auto":
            try:
                self.hf = hf_tokenizer(vocab, do_lower_case=options.do_lower_case)
            except ImportError:
                self.hf = None

    def _hf_ids(self, sentences: list[str]) -> list[list[int]]:
        assert self.hf is not None  # callers check
        encode = getattr(self.hf, "encode_batch_fast", self.hf.encode_batch)
        return [e.ids for e in encode(sentences, add_special_tokens=False)] if sentences else []

    def ids(self, sentences: list[str]) -> list[list[int]]:
        if self.choice == "hf":
            return self._hf_ids(sentences)
        ref = self.reference.tokenize_to_ids
        if self.choice == "reference" or self.hf is None:
            return [ref(s) for s in sentences]
        out: list = [None] * len(sentences)
        other = []
        for k, s in enumerate(sentences):
            if s.isascii():
                out[k] = ref(s)
            else:
                other.append(k)
        for k, ids in zip(other, self._hf_ids([sentences[k] for k in other])):
            out[k] = ids
        return out


class _Specials:
    def __init__(self, vocab: Vocab) -> None:
        self.cls = vocab.id("[CLS]")
        self.sep = vocab.id("[SEP]")
        self.mask = vocab.id("[MASK]")
        self.continuation = np.array([t.startswith("##") for t in vocab.tokens] + [False], dtype=bool)
        self.words = np.asarray(vocab.words, dtype=np.int64)


# ------------------------------------------------------------------ one chunk (runs in a worker)
_STATE: dict = {}


def _init_worker(vocab_tokens: list[str], options: BertDataOptions, tokenizer: str = "auto") -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    vocab = Vocab(vocab_tokens)
    _STATE.update(
        key=None,
        vocab=vocab,
        options=options,
        tokenizer=_Tokenizers(vocab, options, tokenizer),
        specials=_Specials(vocab),
    )


def _run_chunk(task: tuple[int, list[list[str]]]):
    index, docs = task
    batch = make_chunk_records(
        docs, index, _STATE["vocab"], _STATE["options"], tokenizer=_STATE["tokenizer"], specials=_STATE["specials"]
    )
    return batch.data, batch.starts, batch.lengths, _STATE.pop("last_stats", (0, 0))


class _Doc:
    """A tokenized document: all its word pieces in one array, sentence k at ``tokens[offsets[k]:offsets[k + 1]]``."""

    __slots__ = ("tokens", "offsets")

    def __init__(self, tokens: np.ndarray, offsets: list[int]) -> None:
        self.tokens = tokens
        self.offsets = offsets


def _tokenize(tokenizer: _Tokenizers, docs: list[list[str]]) -> list[_Doc]:
    from itertools import chain

    ids = tokenizer.ids([s for d in docs for s in d])
    lengths = [len(x) for x in ids]
    everything = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=sum(lengths))
    out: list[_Doc] = []
    k = pos = 0
    for d in docs:
        offsets = [0]
        for n in lengths[k : k + len(d)]:
            if n:  # sentences without word pieces are dropped, as the reference does
                offsets.append(offsets[-1] + n)
        k += len(d)
        if len(offsets) > 1:
            out.append(_Doc(everything[pos : pos + offsets[-1]], offsets))
        pos += offsets[-1]
    return out


class _Uniforms:
    """Uniform draws from a Generator, taken a block at a time (scalar Generator calls cost microseconds each)."""

    def __init__(self, rng: np.random.Generator, block: int = 8192) -> None:
        self.rng = rng
        self.block = block
        self.values: list[float] = []
        self.i = 0

    def random(self) -> float:
        if self.i >= len(self.values):
            self.values = self.rng.random(self.block).tolist()
            self.i = 0
        self.i += 1
        return self.values[self.i - 1]

    def randint(self, low: int, high: int) -> int:
        """An integer in [low, high], both included."""
        return low + int(self.random() * (high - low + 1))


def make_chunk_records(
    docs: list[list[str]],
    index: int,
    vocab: Vocab,
    options: BertDataOptions,
    *,
    tokenizer: _Tokenizers | None = None,
    specials: _Specials | None = None,
):
    """The serialized records (a :class:`tfrx.RecordBatch`) of one chunk of documents (lists of sentences)."""
    tokenizer = tokenizer or _Tokenizers(vocab, options)
    specials = specials or _Specials(vocab)
    rng = np.random.default_rng([options.random_seed, index])
    tokenized = _tokenize(tokenizer, docs)
    num_tokens = sum(len(d.tokens) for d in tokenized)
    plans = _plan_instances(tokenized, options, rng)
    parts = [
        encode_columns(_build_columns(plans[lo : lo + _MASK_BATCH], tokenized, options, specials, rng))
        for lo in range(0, len(plans), _MASK_BATCH)
    ]
    _STATE["last_stats"] = (len(tokenized), num_tokens)
    return _concat(parts)


def _concat(parts):
    from tfrx.io._batch import RecordBatch

    if not parts:
        return RecordBatch(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
    if len(parts) == 1:
        return parts[0]
    parts = [p if p.is_contiguous() else RecordBatch.from_records(p.to_list()) for p in parts if len(p)]
    data = np.concatenate([p.data[p.starts[0] : p.starts[-1] + p.lengths[-1]] for p in parts])
    lengths = np.concatenate([p.lengths for p in parts])
    starts = np.zeros(len(lengths), np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return RecordBatch(data, starts, lengths)


# An instance plan, in word pieces of a document: (doc, a_start, a_end, b_doc, b_start, b_end, is_random_next);
# b_doc is -1 for MLM-only instances.
def _plan_instances(docs: list[_Doc], options: BertDataOptions, rng: np.random.Generator) -> list[tuple]:
    from bisect import bisect_left

    n_docs = len(docs)
    if n_docs == 0:
        return []
    u = _Uniforms(rng)
    max_num_tokens = options.max_num_tokens
    short_prob = options.short_seq_prob
    plans: list[tuple] = []
    for _ in range(options.dupe_factor):
        for di in rng.permutation(n_docs).tolist():
            off = docs[di].offsets
            n = len(off) - 1
            target = max_num_tokens
            if u.random() < short_prob:
                target = u.randint(options.min_short_seq_length, max_num_tokens)
            start = 0
            while start < n:
                # the first sentence at which the chunk reaches the target (or the document's last)
                end = min(bisect_left(off, off[start] + target, start + 1), n)  # chunk = sentences [start, end)
                count = end - start
                if options.mlm_only:
                    plans.append((di, off[start], off[end], -1, 0, 0, False))
                    start = end
                    continue
                a_end = start + (u.randint(1, count - 1) if count >= 2 else 1)
                if count == 1 or u.random() < 0.5:
                    other = di
                    if n_docs > 1:
                        other = u.randint(0, n_docs - 2)
                        other += other >= di
                    oo = docs[other].offsets
                    b_first = u.randint(0, len(oo) - 2)
                    target_b = target - (off[a_end] - off[start])
                    # sentences from b_first until B holds target_b pieces (at least one sentence)
                    b_end = min(bisect_left(oo, oo[b_first] + target_b, b_first + 1), len(oo) - 1)
                    plans.append((di, off[start], off[a_end], other, oo[b_first], oo[b_end], True))
                    start = a_end  # the unused sentences go back
                else:
                    plans.append((di, off[start], off[a_end], di, off[a_end], off[end], False))
                    start = end
    return plans


def _truncate_lengths(la: np.ndarray, lb: np.ndarray, max_num_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """Lengths after truncate_seq_pair, in closed form.

    The reference removes one token at a time from the longer segment (B on
    ties) until both fit: the longer one comes down to the shorter, then they
    alternate, B first.
    """
    excess = np.maximum(la + lb - max_num_tokens, 0)
    gap = np.abs(la - lb)
    first = np.minimum(excess, gap)  # taken from the longer one alone
    rest = excess - first  # then shared, B taking the odd one
    ca = la - np.where(la > lb, first, 0) - rest // 2
    cb = lb - np.where(lb > la, first, 0) - (rest - rest // 2)
    return ca, cb


def _build_columns(
    plans, docs: list[_Doc], options: BertDataOptions, specials: _Specials, rng: np.random.Generator
) -> dict:
    n = len(plans)
    seq = options.max_seq_length
    max_num_tokens = options.max_num_tokens
    ids = np.zeros((n, seq), np.int64)
    nsp = np.zeros((n, 1), np.int64)
    plan = np.array([p[1:3] + p[4:6] for p in plans], dtype=np.int64).reshape(n, 4)
    la = plan[:, 1] - plan[:, 0]
    rows = np.arange(n)
    if options.mlm_only:
        ca = np.minimum(la, max_num_tokens)
        for r, p in enumerate(plans):
            ids[r, 1 : ca[r] + 1] = docs[p[0]].tokens[p[1] : p[1] + ca[r]]
        lengths = ca + 2
        ids[:, 0] = specials.cls
        ids[rows, lengths - 1] = specials.sep
        num_a = lengths
    else:
        lb = plan[:, 3] - plan[:, 2]
        ca, cb = _truncate_lengths(la, lb, max_num_tokens)
        # each removed token comes off the front or the back with probability 1/2
        a0 = plan[:, 0] + rng.binomial(la - ca, 0.5)
        b0 = plan[:, 2] + rng.binomial(lb - cb, 0.5)
        for r, p in enumerate(plans):
            x, y = ca[r], cb[r]
            ids[r, 1 : x + 1] = docs[p[0]].tokens[a0[r] : a0[r] + x]
            ids[r, x + 2 : x + y + 2] = docs[p[3]].tokens[b0[r] : b0[r] + y]
        ids[:, 0] = specials.cls
        ids[rows, ca + 1] = specials.sep
        lengths = ca + cb + 3
        ids[rows, lengths - 1] = specials.sep
        num_a = ca + 2
        nsp[:, 0] = [p[6] for p in plans]
    if options.disable_masking:
        empty = np.zeros((n, options.max_predictions_per_seq), np.int64)
        return assemble_columns(ids, lengths, num_a, nsp, empty, empty, np.zeros(n, np.int64), options)
    masked, positions, labels, npred = mask_batch(ids, lengths, options, specials, rng)
    return assemble_columns(masked, lengths, num_a, nsp, positions, labels, npred, options)


def mask_batch(
    ids: np.ndarray, lengths: np.ndarray, options: BertDataOptions, specials: _Specials, rng: np.random.Generator
):
    """80/10/10 masking of a padded batch, the reference's rule in NumPy.

    Candidates are the tokens (or, with ``do_whole_word_mask``, the words: a
    piece and its ``##`` continuations) other than ``[CLS]``/``[SEP]``; they
    are visited in random order and taken while they fit in
    ``min(max_predictions_per_seq, max(1, round(length * masked_lm_prob)))``
    tokens. Each chosen word becomes ``[MASK]`` (80%), a random vocabulary
    entry per piece (10%) or stays (10%).
    """
    n, seq = ids.shape
    pos = np.arange(seq)
    real = pos < lengths[:, None]
    candidate = real & (ids != specials.cls) & (ids != specials.sep)
    budget = np.minimum(
        options.max_predictions_per_seq, np.maximum(1, np.round(lengths * options.masked_lm_prob).astype(np.int64))
    )
    if options.do_whole_word_mask:
        start = candidate & ~(
            specials.continuation[ids] & np.concatenate([np.zeros((n, 1), bool), candidate[:, :-1]], axis=1)
        )
        word = np.cumsum(start, axis=1) - 1  # word index of each token (continuations join the word before)
        word = np.where(candidate, word, seq)  # non-candidates: a sentinel word
        nwords = start.sum(axis=1)
        wlen = np.zeros((n, seq + 1), np.int64)
        np.add.at(wlen, (np.repeat(np.arange(n), seq), word.ravel()), 1)
        wlen = wlen[:, :seq]
        keys = np.where(np.arange(seq) < nwords[:, None], rng.random((n, seq)), np.inf)
        order = np.argsort(keys, axis=1)
        used = np.zeros(n, np.int64)
        take_word = np.zeros((n, seq), bool)
        rows = np.arange(n)
        for rank in range(seq):
            w = order[:, rank]
            size = wlen[rows, w]
            ok = (rank < nwords) & (used + size <= budget)
            if not ok.any() and (rank >= nwords).all():
                break
            take_word[rows[ok], w[ok]] = True
            used += np.where(ok, size, 0)
        selected = candidate & np.take_along_axis(
            np.concatenate([take_word, np.zeros((n, 1), bool)], axis=1), np.minimum(word, seq), axis=1
        )
        action_u = rng.random((n, seq + 1))
        u = np.take_along_axis(action_u, np.minimum(word, seq), axis=1)  # one draw per word
    else:
        keys = np.where(candidate, rng.random((n, seq)), np.inf)
        # the budget smallest keys of a row: at or below its budget-th smallest key
        threshold = np.take_along_axis(np.sort(keys, axis=1), (budget - 1)[:, None], axis=1)
        selected = candidate & (keys <= threshold)
        u = rng.random((n, seq))
    out = ids.copy()
    to_mask = selected & (u < 0.8)
    to_random = selected & (u >= 0.8) & (u < 0.9)
    out[to_mask] = specials.mask
    k = int(to_random.sum())
    if k:
        out[to_random] = specials.words[rng.integers(0, len(specials.words), k)]
    npred = selected.sum(axis=1)
    order = np.argsort(~selected, axis=1, kind="stable")[:, : options.max_predictions_per_seq]
    width = order.shape[1]
    keep = np.arange(width) < npred[:, None]
    positions = np.zeros((n, options.max_predictions_per_seq), np.int64)
    labels = np.zeros((n, options.max_predictions_per_seq), np.int64)
    positions[:, :width] = np.where(keep, order, 0)
    labels[:, :width] = np.where(keep, np.take_along_axis(ids, order, axis=1), 0)
    return out, positions, labels, npred


# ------------------------------------------------------------------ the driver
def _chunks(docs: Iterator[list[str]], size: int) -> Iterator[tuple[int, list[list[str]]]]:
    chunk: list[list[str]] = []
    index = 0
    text = 0
    for d in docs:
        chunk.append(d)
        text += sum(len(s) for s in d)
        if len(chunk) >= size or text >= CHUNK_TEXT_BYTES:
            yield index, chunk
            index += 1
            chunk = []
            text = 0
    if chunk:
        yield index, chunk


class _ShuffleBuffer:
    """Holds up to ``capacity`` records; each arrival pushes out a random selection of the excess."""

    def __init__(self, capacity: int, seed: int) -> None:
        self.capacity = capacity
        self.rng = np.random.default_rng([seed, 0x5EED])
        self.records: list[bytes] = []

    def add(self, records: list[bytes]) -> list[bytes]:
        self.records.extend(records)
        excess = len(self.records) - self.capacity
        if excess <= 0:
            return []
        perm = self.rng.permutation(len(self.records))
        out = [self.records[i] for i in perm[:excess]]
        self.records = [self.records[i] for i in perm[excess:]]
        return out

    def drain(self) -> list[bytes]:
        perm = self.rng.permutation(len(self.records))
        out = [self.records[i] for i in perm]
        self.records = []
        return out


def _results(tasks: Iterator, vocab: Vocab, options: BertDataOptions, num_workers: int, use_ray: bool, tokenizer: str):
    """(data, starts, lengths, (docs, tokens)) per chunk, in chunk order."""
    if use_ray:
        yield from _ray_results(tasks, vocab, options, num_workers, tokenizer)
        return
    if num_workers <= 1:
        _init_worker(vocab.tokens, options, tokenizer)
        for t in tasks:
            yield _run_chunk(t)
        return
    import multiprocessing as mp
    from collections import deque

    ctx = mp.get_context("spawn")  # tokenizers' thread pool does not survive fork
    with ctx.Pool(num_workers, initializer=_init_worker, initargs=(vocab.tokens, options, tokenizer)) as pool:
        pending: deque = deque()
        for t in tasks:
            pending.append(pool.apply_async(_run_chunk, (t,)))
            if len(pending) >= 2 * num_workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _ray_results(tasks, vocab: Vocab, options: BertDataOptions, num_workers: int, tokenizer: str):
    try:
        import ray
    except ImportError:
        raise ImportError("use_ray=True needs Ray: pip install 'tfrx[ray]'") from None
    from collections import deque

    if not ray.is_initialized():
        ray.init(num_cpus=max(1, num_workers), include_dashboard=False, log_to_driver=False)

    run = ray.remote(_ray_task)
    key = (hash(tuple(vocab.tokens)), options, tokenizer)
    tokens_ref = ray.put(vocab.tokens)
    pending: deque = deque()
    for t in tasks:
        pending.append(run.remote(key, tokens_ref, options, t))
        if len(pending) >= 2 * max(1, num_workers):
            yield ray.get(pending.popleft())
    while pending:
        yield ray.get(pending.popleft())


def _ray_task(key, tokens: list[str], options: BertDataOptions, task):
    # A Ray worker process runs tasks of any job: set up again when the vocabulary or options change.
    if _STATE.get("key") != key:
        _init_worker(tokens, options, key[2])
        _STATE["key"] = key
    return _run_chunk(task)


def create_fast(  # noqa: PLR0913  the BERT reference's flags, for the fast path
    files: Sequence[str],
    vocab: Vocab,
    output,
    *,
    options: BertDataOptions,
    num_shards: int = 1,
    compression=None,
    naming: str = "tfds",
    input_format: str = "lines",
    segmenter=None,
    text_field: str = "text",
    document_separator=None,
    storage_options=None,
    progress=None,
    metadata: bool = True,
    num_parallel_calls: int = 1,
    shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER,
    chunk_documents: int = DEFAULT_CHUNK_DOCUMENTS,
    use_ray: bool = False,
    tokenizer: str = "auto",
):
    from tfrx.io._batch import RecordBatch
    from tfrx.text._output import BertDataResult, open_output, write_metadata
    from tfrx.text._segment import get_segmenter
    from tfrx.text._sources import iter_documents
    from tfrx._progress import progress_bar

    num_workers = resolve_parallelism(num_parallel_calls)
    if not isinstance(chunk_documents, int) or chunk_documents < 1:
        raise ValueError(f"chunk_documents must be a positive integer, got {chunk_documents!r}")
    if not isinstance(shuffle_buffer, int) or shuffle_buffer < 0:
        raise ValueError(f"shuffle_buffer must be a non-negative integer, got {shuffle_buffer!r}")
    _Specials(vocab)  # a vocabulary without [CLS]/[SEP]/[MASK] fails here, not in a worker
    _Tokenizers(vocab, options, tokenizer)  # so does a bad tokenizer choice or a missing package
    t0 = time.perf_counter()
    listed: list[tuple[str, int]] = []
    seg = get_segmenter(segmenter) if segmenter is not None else None
    docs = iter_documents(
        files,
        input_format=input_format,
        segmenter=seg,
        text_field=text_field,
        document_separator=document_separator,
        storage_options=storage_options,
        on_document=(lambda p, k: listed.append((p, k))) if metadata else None,
    )
    out = open_output(
        output, num_shards=num_shards, compression=compression, naming=naming, storage_options=storage_options
    )
    buffer = _ShuffleBuffer(shuffle_buffer, options.random_seed)
    total = n_docs = n_tokens = 0
    try:
        with progress_bar(None, desc="bert-data", unit="inst", enabled=progress) as bar:
            for data, starts, lengths, (d, t) in _results(
                _chunks(docs, chunk_documents), vocab, options, num_workers, use_ray, tokenizer
            ):
                n_docs += d
                n_tokens += t
                records = RecordBatch(data, starts, lengths).to_list()
                ready = buffer.add(records)
                if ready:
                    out.write_many(RecordBatch.from_records(ready))
                total += len(records)
                bar.update(len(records))
            rest = buffer.drain()
            if rest:
                out.write_many(RecordBatch.from_records(rest))
    except BaseException:
        out.abort()
        raise
    paths = out.close()
    result = BertDataResult(paths, total, n_docs, n_tokens, time.perf_counter() - t0, options=options)
    if metadata:
        result.metadata_path = write_metadata(
            out.metadata_path,
            result,
            mode="fast",
            files=list(files),
            vocab=vocab,
            documents=listed,
            storage_options=storage_options,
            extra={
                "fast": {"shuffle_buffer": shuffle_buffer, "chunk_documents": chunk_documents, "tokenizer": tokenizer}
            },
        )
    return result
