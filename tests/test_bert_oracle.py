"""tfrx.text exact mode against the running reference, TensorFlow Model Garden's create_pretraining_data.

The reference (``official.nlp.data.create_pretraining_data``, package
``tf-models-official``) imports TensorFlow, so every test here requests the
``tf`` fixture and skips without the reference.
"""

from __future__ import annotations

import random

import pytest
from bert_helpers import CASES, GOLDEN, assert_same_records, make_golden
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfrx.text import FullTokenizer, create_pretraining_data

VOCAB = GOLDEN / "vocab.txt"


@pytest.fixture(scope="module")
def reference(tf):
    from absl import logging

    pytest.importorskip("official.nlp.data.create_pretraining_data")
    logging.set_verbosity(logging.WARNING)
    return make_golden


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_files_are_what_the_reference_writes(reference, name, tmp_path):
    case = CASES[name]
    flags = make_golden.case_flags(case)
    outs = make_golden.output_names(name, case)
    reference.run_reference(
        [str(GOLDEN / p) for p in case["inputs"]],
        str(VOCAB),
        [str(tmp_path / o) for o in outs],
        flags,
        bool(case.get("gzip")),
    )
    for o in outs:
        assert_same_records(GOLDEN / o, tmp_path / o, flags)


def _random_corpus(rng: random.Random, words: list[str], n_docs: int) -> str:
    extra = ["Ünïcode", "naïve", "東京", "x\u200by", "a\tb", "3.14", "(ok)", "#tag", "don't", "ZZZqqq", "\u00a0"]
    lines = []
    for _ in range(n_docs):
        for _ in range(rng.randint(1, 7)):
            n = rng.randint(0, 30)
            lines.append(" ".join(rng.choice(words + extra) for _ in range(n)))
        lines.extend([""] * rng.randint(1, 2))
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(6))
def test_random_corpora_and_flags_match_the_reference(reference, seed, tmp_path):
    rng = random.Random(seed)
    words = [w for w in VOCAB.read_text(encoding="utf-8").split("\n") if w and not w.startswith("[")]
    inputs = []
    for k in range(rng.randint(1, 3)):
        path = tmp_path / f"in{k}.txt"
        path.write_text(_random_corpus(rng, words, rng.randint(1, 8)), encoding="utf-8")
        inputs.append(str(path))
    flags = {
        "max_seq_length": rng.choice([8, 16, 33, 64, 128]),
        "max_predictions_per_seq": rng.choice([1, 3, 7, 20]),
        "masked_lm_prob": rng.choice([0.1, 0.15, 0.3]),
        "short_seq_prob": rng.choice([0.0, 0.1, 0.6, 1.0]),
        "dupe_factor": rng.randint(1, 4),
        "random_seed": rng.randint(0, 10**6),
        "do_lower_case": rng.random() < 0.7,
        "do_whole_word_mask": rng.random() < 0.5,
    }
    n_out = rng.randint(1, 3)
    want = [str(tmp_path / f"ref-{k}.tfrecord") for k in range(n_out)]
    got = [str(tmp_path / f"tfrx-{k}.tfrecord") for k in range(n_out)]
    reference.run_reference(inputs, str(VOCAB), want, flags, False)
    create_pretraining_data(inputs, VOCAB, got, metadata=False, **flags)
    for w, g in zip(want, got):
        assert_same_records(w, g, flags)


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80)  # type: ignore[arg-type]  # a valid category; mypy widens the literal


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_text, lower=st.booleans())
def test_tokenizer_matches_reference_on_any_text(reference, text, lower):
    from official.nlp.tools import tokenization

    ref = tokenization.FullTokenizer(str(VOCAB), do_lower_case=lower)
    ours = FullTokenizer(VOCAB, do_lower_case=lower)
    assert ours.tokenize(text) == ref.tokenize(text)
    assert ours.basic.tokenize(text) == ref.basic_tokenizer.tokenize(text)
