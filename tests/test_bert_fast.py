"""tfrx.text fast mode: same distributions as the exact mode (the reference's draws), bounded buffers, workers."""

from __future__ import annotations

import random

import numpy as np
import pytest
from bert_helpers import GOLDEN
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrx.text import FullTokenizer, Vocab, create_pretraining_data, read

VOCAB = GOLDEN / "vocab.txt"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """400 documents of 1 to 12 sentences of 1 to 25 vocabulary words: long and short documents, many chunks."""
    rng = random.Random(5)
    words = [w for w in VOCAB.read_text(encoding="utf-8").split("\n") if w and not w.startswith(("[", "##"))]
    docs = []
    for _ in range(400):
        docs.append(
            "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(1, 25))) for _ in range(rng.randint(1, 12)))
        )
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    return path


def _stats(paths, vocab: Vocab, **sizes) -> dict:
    b = list(read(paths, batch_size=1_000_000, **sizes))[0]
    mask = b["input_mask"].astype(bool)
    length = mask.sum(axis=1)
    weights = b["masked_lm_weights"]
    npred = weights.sum(axis=1)
    pos = b["masked_lm_positions"]
    at = np.take_along_axis(b["input_ids"], pos, axis=1)
    labels = b["masked_lm_ids"]
    real = weights > 0
    return {
        "n": len(length),
        "length_mean": length.mean(),
        "short_fraction": (length < 0.75 * sizes.get("max_seq_length", 128)).mean(),
        "predictions_per_token": npred.sum() / length.sum(),
        "nsp_random": b["next_sentence_labels"].mean(),
        "mask_share": (at[real] == vocab.id("[MASK]")).mean(),
        "kept_share": (at[real] == labels[real]).mean(),
        "segment_a_share": ((b["segment_ids"] == 0) & mask).sum() / mask.sum(),
    }


@pytest.mark.parametrize("whole_word", [False, True])
def test_fast_mode_is_statistically_equivalent_to_exact(corpus, tmp_path, whole_word):
    vocab = Vocab.from_file(VOCAB)
    flags = dict(
        max_seq_length=64, max_predictions_per_seq=10, dupe_factor=3, short_seq_prob=0.2, do_whole_word_mask=whole_word
    )
    exact = create_pretraining_data(corpus, vocab, str(tmp_path / "e"), **flags)
    fast = create_pretraining_data(
        corpus, vocab, str(tmp_path / "f"), mode="fast", chunk_documents=150, shuffle_buffer=500, **flags
    )
    assert exact.num_tokens == fast.num_tokens and exact.num_documents == fast.num_documents
    sizes = {"max_seq_length": 64, "max_predictions_per_seq": 10}
    e, f = _stats(exact.paths, vocab, **sizes), _stats(fast.paths, vocab, **sizes)
    # one run of each: thousands of instances, tolerances a few standard errors wide
    assert abs(f["n"] - e["n"]) / e["n"] < 0.06, (e, f)
    assert abs(f["length_mean"] - e["length_mean"]) < 1.5, (e, f)
    assert abs(f["short_fraction"] - e["short_fraction"]) < 0.04, (e, f)
    assert abs(f["predictions_per_token"] - e["predictions_per_token"]) < 0.004, (e, f)
    assert abs(f["nsp_random"] - e["nsp_random"]) < 0.04, (e, f)
    assert abs(f["mask_share"] - 0.8) < 0.03 and abs(e["mask_share"] - 0.8) < 0.03, (e, f)
    # kept: the 10% left alone plus random replacements that drew the same token
    assert abs(f["kept_share"] - e["kept_share"]) < 0.03, (e, f)
    assert abs(f["segment_a_share"] - e["segment_a_share"]) < 0.03, (e, f)


def test_fast_records_are_well_formed(corpus, tmp_path):
    vocab = Vocab.from_file(VOCAB)
    r = create_pretraining_data(
        corpus,
        vocab,
        str(tmp_path / "f"),
        mode="fast",
        max_seq_length=32,
        max_predictions_per_seq=5,
        dupe_factor=1,
        do_whole_word_mask=True,
    )
    b = list(read(r.paths, batch_size=1_000_000))[0]
    cont = np.array([t.startswith("##") for t in vocab.tokens])
    cls, sep = vocab.id("[CLS]"), vocab.id("[SEP]")
    for ids, mask, seg, pos, lab, w in zip(
        b["input_ids"],
        b["input_mask"],
        b["segment_ids"],
        b["masked_lm_positions"],
        b["masked_lm_ids"],
        b["masked_lm_weights"],
    ):
        n = int(mask.sum())
        k = int(w.sum())
        orig = ids.copy()
        orig[pos[:k]] = lab[:k]  # random replacements may draw any entry, [SEP] too, as in the reference
        assert orig[0] == cls and orig[n - 1] == sep and (ids[n:] == 0).all() and (orig[:n] == sep).sum() == 2
        assert 1 <= k <= min(5, max(1, round(n * 0.15)))
        p = pos[:k]
        assert (np.diff(p) > 0).all() and (p > 0).all() and (p < n - 1).all() and (pos[k:] == 0).all()
        assert not np.isin(lab[:k], [cls, sep]).any()
        # whole words: a masked continuation's word start is masked too
        chosen = set(p.tolist())
        for q in p:
            if cont[lab[list(p).index(q)]]:
                assert q - 1 in chosen
        a_end = int((seg[:n] == 0).sum())
        assert orig[a_end - 1] == sep


def test_fast_output_does_not_depend_on_workers(corpus, tmp_path):
    vocab = Vocab.from_file(VOCAB)
    flags = dict(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1, chunk_documents=100, mode="fast")
    one = create_pretraining_data(corpus, vocab, str(tmp_path / "one"), num_parallel_calls=1, **flags)
    two = create_pretraining_data(corpus, vocab, str(tmp_path / "two"), num_parallel_calls=2, **flags)
    a = list(read(one.paths, batch_size=1_000_000))[0]
    b = list(read(two.paths, batch_size=1_000_000))[0]
    assert one.num_instances == two.num_instances > 0
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_shuffle_buffer_bounds_and_mixes(tmp_path):
    from tfrx.text._fast import _ShuffleBuffer

    buf = _ShuffleBuffer(10, seed=1)
    out = []
    for start in range(0, 100, 7):
        chunk = [bytes([i]) for i in range(start, min(start + 7, 100))]
        out += buf.add(chunk)
        assert len(buf.records) <= 10
    out += buf.drain()
    assert sorted(out) == [bytes([i]) for i in range(100)] and out != sorted(out)
    # a record can come out no earlier than (buffer + chunk - 1) places before its input position
    assert max(i - out.index(bytes([i])) for i in range(100)) <= 10 + 7 - 1


def test_tokenizer_choices_give_the_same_records_on_the_test_corpora(tmp_path):
    pytest.importorskip("tokenizers")
    inputs = [GOLDEN / "corpus_a.txt", GOLDEN / "corpus_b.txt", GOLDEN / "corpus_c.txt"]  # accents, CJK, NBSP, ZWSP
    out = {}
    for choice in ("auto", "hf", "reference"):
        r = create_pretraining_data(
            inputs,
            VOCAB,
            str(tmp_path / choice),
            mode="fast",
            tokenizer=choice,
            max_seq_length=32,
            max_predictions_per_seq=5,
            dupe_factor=2,
        )
        out[choice] = next(iter(read(r.paths, batch_size=1_000_000)))
    for choice in ("hf", "reference"):
        for k in out["auto"]:
            assert np.array_equal(out["auto"][k], out[choice][k]), (choice, k)


def test_hf_tokenizer_matches_reference_tokenizer_on_test_corpora():
    pytest.importorskip("tokenizers")
    from tfrx.text._fast import hf_tokenizer

    vocab = Vocab.from_file(VOCAB)
    for lower in (True, False):
        ours, hf = FullTokenizer(vocab, do_lower_case=lower), hf_tokenizer(vocab, do_lower_case=lower)
        for name in ("corpus_a.txt", "corpus_b.txt", "corpus_c.txt"):
            for line in (GOLDEN / name).read_text(encoding="utf-8").split("\n"):
                assert hf.encode(line.strip(), add_special_tokens=False).tokens == ours.tokenize(line.strip())


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.integers(2, 200))
def test_truncation_lengths_are_the_reference_loop(la, lb, max_num_tokens):
    from tfrx.text._fast import _truncate_lengths

    a, b = la, lb
    while a + b > max_num_tokens:  # truncate_seq_pair's rule: the longer loses one, B on ties
        if a > b:
            a -= 1
        else:
            b -= 1
    ca, cb = _truncate_lengths(np.array([la]), np.array([lb]), max_num_tokens)
    assert (int(ca[0]), int(cb[0])) == (a, b)


@pytest.mark.slow
def test_ray_tasks_give_the_same_records(corpus, tmp_path):
    ray = pytest.importorskip("ray")
    import os

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    vocab = Vocab.from_file(VOCAB)
    flags = dict(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1, chunk_documents=150, mode="fast")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        on_ray = create_pretraining_data(
            corpus, vocab, str(tmp_path / "ray"), use_ray=True, num_parallel_calls=2, **flags
        )
    finally:
        ray.shutdown()
    local = create_pretraining_data(corpus, vocab, str(tmp_path / "local"), **flags)
    a = list(read(on_ray.paths, batch_size=1_000_000))[0]
    b = list(read(local.paths, batch_size=1_000_000))[0]
    assert on_ray.num_instances == local.num_instances > 0
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_cli_with_worker_processes(corpus, tmp_path):
    # the command in a fresh interpreter, its worker processes spawned, the same records as in this process
    import os
    import subprocess
    import sys
    from pathlib import Path

    import tfrx

    src = str(Path(tfrx.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "cli"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tfrx",
            "bert-data",
            str(corpus),
            "--vocab_file",
            str(VOCAB),
            "-o",
            str(out),
            "--mode",
            "fast",
            "--workers",
            "2",
            "--num-shards",
            "2",
            "--max_seq_length",
            "32",
            "--dupe_factor",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    paths = proc.stdout.split()
    assert len(paths) == 2
    local = create_pretraining_data(
        corpus, VOCAB, str(tmp_path / "local"), mode="fast", num_shards=2, max_seq_length=32, dupe_factor=1
    )
    for a, b in zip(paths, local.paths):
        x = next(iter(read([a], batch_size=1_000_000, max_seq_length=32)))
        y = next(iter(read([b], batch_size=1_000_000, max_seq_length=32)))
        for k in x:
            assert np.array_equal(x[k], y[k]), k
