"""tfrx.text exact mode against golden records written by the reference (no TensorFlow needed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bert_helpers import CASES, GOLDEN, assert_same_records, make_golden, parsed_records
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.cli import main as cli_main
from tfrx.errors import TfrxError
from tfrx.text import BasicTokenizer, BertDataOptions, FullTokenizer, Vocab, create_pretraining_data, read
from tfrx.text._sources import InputFormatError

VOCAB = GOLDEN / "vocab.txt"


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_mode_matches_reference_golden(name, tmp_path):
    case = CASES[name]
    flags = make_golden.case_flags(case)
    outs = make_golden.output_names(name, case)
    result = create_pretraining_data(
        [GOLDEN / p for p in case["inputs"]],
        VOCAB,
        [str(tmp_path / o) for o in outs],
        compression="gzip" if case.get("gzip") else None,
        metadata=False,
        **flags,
    )
    total = sum(assert_same_records(GOLDEN / o, tmp_path / o, flags) for o in outs)
    assert total == result.num_instances > 0


def test_cli_reference_flags_match_golden(tmp_path):
    case = CASES["base"]
    flags = make_golden.case_flags(case)
    out = tmp_path / "base-0.tfrecord"
    argv = [
        "bert-data",
        "--input_file",
        ",".join(str(GOLDEN / p) for p in case["inputs"]),
        f"--vocab_file={VOCAB}",
        f"--output_file={out}",
    ]
    argv += [f"--{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in flags.items()]
    assert cli_main(argv) == 0
    assert assert_same_records(GOLDEN / "base-0.tfrecord", out, flags) > 0


def test_sharded_output_is_round_robin_with_tfds_names(tmp_path):
    case = CASES["wwm_short_3files"]
    flags = make_golden.case_flags(case)
    result = create_pretraining_data(
        [GOLDEN / p for p in case["inputs"]], VOCAB, str(tmp_path / "train"), num_shards=3, compression="gzip", **flags
    )
    assert [p.rsplit("/", 1)[-1] for p in result.paths] == [f"train.tfrecord-0000{k}-of-00003" for k in range(3)]
    for k, path in enumerate(result.paths):
        golden = GOLDEN / f"wwm_short_3files-{k}.tfrecord.gz"
        sizes = {"max_seq_length": 48, "max_predictions_per_seq": 8}
        # ShardedWriter names have no .gz suffix: compare through read(), which detects the compression
        got = list(read([path], max_seq_length=48, max_predictions_per_seq=8, metadata=result.metadata_path))
        want = parsed_records(golden, **sizes)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            for name in w:
                assert np.array_equal(g[name], w[name])
    meta = json.loads(Path(result.metadata_path).read_text())
    assert meta["num_instances"] == result.num_instances
    assert meta["num_documents"] == result.num_documents == len(meta["documents"])
    assert meta["options"]["do_whole_word_mask"] is True


def test_read_batches_for_training(tmp_path):
    result = create_pretraining_data(
        GOLDEN / "corpus_a.txt",
        VOCAB,
        str(tmp_path / "d"),
        num_shards=2,
        max_seq_length=32,
        max_predictions_per_seq=5,
        dupe_factor=2,
    )
    batches = list(read(sorted(result.paths), batch_size=16))
    n = sum(len(b["input_ids"]) for b in batches)
    assert n == result.num_instances
    b = batches[0]
    assert b["input_ids"].shape == (16, 32) and b["input_ids"].dtype == np.int64
    assert b["masked_lm_weights"].dtype == np.float32 and b["masked_lm_positions"].shape == (16, 5)
    assert b["next_sentence_labels"].shape == (16, 1)
    vocab = Vocab.from_file(VOCAB)
    cls, sep = vocab.id("[CLS]"), vocab.id("[SEP]")
    for row, mask, seg in zip(b["input_ids"], b["input_mask"], b["segment_ids"]):
        n_tok = int(mask.sum())
        assert row[0] == cls and row[n_tok - 1] == sep and (row[n_tok:] == 0).all()
        assert (seg[n_tok:] == 0).all() and seg[0] == 0 and seg[n_tok - 1] == 1


def test_cerebras_variants_layout(tmp_path):
    common = dict(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1)
    inv = create_pretraining_data(GOLDEN / "corpus_a.txt", VOCAB, str(tmp_path / "inv"), inverted_mask=True, **common)
    plain = create_pretraining_data(GOLDEN / "corpus_a.txt", VOCAB, str(tmp_path / "plain"), **common)
    a = list(read(inv.paths, batch_size=1000))[0]
    b = list(read(plain.paths, batch_size=1000))[0]
    assert np.array_equal(a["input_mask"], 1 - b["input_mask"]) and np.array_equal(a["input_ids"], b["input_ids"])
    mlm = create_pretraining_data(GOLDEN / "corpus_a.txt", VOCAB, str(tmp_path / "mlm"), mlm_only=True, **common)
    m = list(read(mlm.paths, batch_size=1000))[0]
    assert "segment_ids" not in m and "next_sentence_labels" not in m
    sep = Vocab.from_file(VOCAB).id("[SEP]")
    assert ((m["input_ids"] == sep).sum(axis=1) == 1).all()  # one segment
    raw = create_pretraining_data(GOLDEN / "corpus_a.txt", VOCAB, str(tmp_path / "raw"), disable_masking=True, **common)
    r = list(read(raw.paths, batch_size=1000))[0]
    assert "masked_lm_ids" not in r
    assert not (r["input_ids"] == Vocab.from_file(VOCAB).id("[MASK]")).any()
    short = create_pretraining_data(
        GOLDEN / "corpus_a.txt", VOCAB, str(tmp_path / "short"), short_seq_prob=1.0, min_short_seq_length=20, **common
    )
    s = list(read(short.paths, batch_size=1000))[0]
    assert s["input_mask"].sum(axis=1).min() >= 8  # targets of 20+ tokens; a document's end may cut one short


def test_tokenizer_known_cases():
    vocab = Vocab(
        [
            "[PAD]",
            "[UNK]",
            "[CLS]",
            "[SEP]",
            "[MASK]",
            "un",
            "##aff",
            "##able",
            "runn",
            "##ing",
            ",",
            "hello",
            "!",
            "cafe",
            "東",
            "京",
            "##s",
        ]
    )
    tok = FullTokenizer(vocab)
    assert tok.tokenize("UNaffable running, Hello!") == ["un", "##aff", "##able", "runn", "##ing", ",", "hello", "!"]
    assert tok.tokenize("Café\u200b東京") == ["cafe", "東", "京"]  # accent stripped, Cf dropped, CJK split
    assert tok.tokenize("unknownword") == ["[UNK]"]
    assert tok.tokenize("x" * 401) == ["[UNK]"]
    assert FullTokenizer(vocab, do_lower_case=False).tokenize("Hello hello") == ["[UNK]", "hello"]
    assert BasicTokenizer().tokenize("a\x0bb\tc\u00a0d\u2028e^f") == ["ab", "c", "d", "e", "^", "f"]


_ascii_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=60)


@settings(max_examples=150, deadline=None)
@given(_ascii_text, st.booleans())
def test_ascii_fast_path_equals_general_rules(text, lower):
    fast = BasicTokenizer(do_lower_case=lower).tokenize(text)
    # the general per-character path, reached by a non-ASCII character that cleaning drops (U+200B is Cf)
    general = BasicTokenizer(do_lower_case=lower).tokenize(text + "\u200b")
    assert fast == general


def test_vocab_duplicates_map_to_last_line(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\nthe\n[UNK]\nthe\n  spaced  \n")
    v = Vocab.from_file(path)
    assert v.id("the") == 3 and v.id("spaced") == 4 and len(v) == 5
    assert v.words == [0, 3, 2, 4]


def test_errors_name_the_problem(tmp_path):
    bad = tmp_path / "vocab.txt"
    bad.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n")
    with pytest.raises(TfrxError, match=r"\[MASK\].*vocab"):
        create_pretraining_data(GOLDEN / "corpus_a.txt", bad, str(tmp_path / "o"))
    jl = tmp_path / "docs.jsonl"
    jl.write_text('{"text": "One. Two."}\n{"body": "x"}\n')
    with pytest.raises(InputFormatError, match=r"line 2: no field 'text'"):
        create_pretraining_data(jl, VOCAB, str(tmp_path / "o"), input_format="jsonl")
    with pytest.raises(FileNotFoundError):
        create_pretraining_data(tmp_path / "missing-*.txt", VOCAB, str(tmp_path / "o"))
    with pytest.raises(ValueError, match="max_seq_length"):
        BertDataOptions(max_seq_length=3)
    with pytest.raises(TypeError, match="unknown options"):
        create_pretraining_data(GOLDEN / "corpus_a.txt", VOCAB, str(tmp_path / "o"), max_ngram_size=3)


def test_raw_documents_and_jsonl_give_the_same_instances(tmp_path):
    docs = [
        "The mill grinds grain. The wind turns the blades! Is it late? Yes.",
        "Bees make honey. A hive holds many bees. Beekeepers wear veils.",
    ]
    d = tmp_path / "docs"
    d.mkdir()
    for k, text in enumerate(docs):
        (d / f"{k}.txt").write_text(text)
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"content": t}) + "\n" for t in docs))
    (tmp_path / "lines.txt").write_text(
        "\n\n".join("\n".join(s.strip() for s in __import__("re").split(r"(?<=[.!?])\s+", t)) for t in docs) + "\n"
    )
    common = dict(max_seq_length=24, max_predictions_per_seq=4, dupe_factor=2, segmenter="regex")
    a = create_pretraining_data(str(d / "*.txt"), VOCAB, [str(tmp_path / "a")], input_format="text", **common)
    b = create_pretraining_data(
        tmp_path / "docs.jsonl", VOCAB, [str(tmp_path / "b")], input_format="jsonl", text_field="content", **common
    )
    common.pop("segmenter")
    c = create_pretraining_data(tmp_path / "lines.txt", VOCAB, [str(tmp_path / "c")], **common)
    flags = {"max_seq_length": 24, "max_predictions_per_seq": 4}
    assert a.num_documents == b.num_documents == c.num_documents == 2
    assert_same_records(tmp_path / "c", tmp_path / "a", flags)
    assert_same_records(tmp_path / "c", tmp_path / "b", flags)


def test_cerebras_metadata_files_and_document_separator(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text(
        "The mill grinds grain.\nThe wind turns.\n[SEP]\nBees make honey.\nA hive holds bees.\n"
    )
    (data / "b.txt").write_text("Snow fell all night.\nThe children built a snowman.\n")
    (tmp_path / "meta.txt").write_text("a.txt\n\nb.txt\n")
    ref = tmp_path / "ref.txt"
    ref.write_text(
        "The mill grinds grain.\nThe wind turns.\n\nBees make honey.\nA hive holds bees.\n\n"
        "Snow fell all night.\nThe children built a snowman.\n"
    )
    common = dict(max_seq_length=24, max_predictions_per_seq=4, dupe_factor=3)
    out = tmp_path / "cz.tfrecord"
    argv = [
        "bert-data",
        f"--vocab_file={VOCAB}",
        f"--output_file={out}",
        f"--metadata_files={tmp_path / 'meta.txt'}",
        f"--input_files_prefix={data}",
        "--input-format",
        "text",
        "--multiple_docs_separator",
        "[SEP]",
        "--single_sentence_per_line",
        "--max_seq_length=24",
        "--max_predictions_per_seq=4",
        "--dupe_factor=3",
    ]
    assert cli_main(argv) == 0
    r = create_pretraining_data(ref, VOCAB, [str(tmp_path / "ref.tfrecord")], **common)
    assert r.num_documents == 3
    assert assert_same_records(tmp_path / "ref.tfrecord", out, common) == r.num_instances


def test_cli_usage_errors_are_one_line(tmp_path, capsys):
    assert (
        cli_main(["bert-data", str(tmp_path / "none-*.txt"), f"--vocab_file={VOCAB}", "-o", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no files match" in err and "Traceback" not in err
    assert (
        cli_main(
            [
                "bert-data",
                str(GOLDEN / "corpus_a.txt"),
                f"--vocab_file={tmp_path / 'nope.txt'}",
                "-o",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "nope.txt" in capsys.readouterr().err
    assert (
        cli_main(
            [
                "bert-data",
                str(GOLDEN / "corpus_a.txt"),
                f"--vocab_file={VOCAB}",
                "-o",
                str(tmp_path / "o"),
                "--workers",
                "2",
            ]
        )
        == 2
    )
    assert "--mode fast" in capsys.readouterr().err


def test_fsspec_urls_and_gzip_inputs(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    import gzip

    data = (GOLDEN / "corpus_a.txt").read_bytes()
    fs = fsspec.filesystem("memory")
    fs.pipe("/bert-test/corpus_a.txt", data)
    fs.pipe("/bert-test/vocab.txt", VOCAB.read_bytes())
    (tmp_path / "corpus_a.txt.gz").write_bytes(gzip.compress(data))
    common = dict(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2)
    plain = create_pretraining_data(GOLDEN / "corpus_a.txt", VOCAB, [str(tmp_path / "plain")], **common)
    remote = create_pretraining_data(
        "memory://bert-test/corpus_*.txt", "memory://bert-test/vocab.txt", [str(tmp_path / "remote")], **common
    )
    gz = create_pretraining_data(tmp_path / "corpus_a.txt.gz", VOCAB, [str(tmp_path / "gz")], **common)
    assert remote.num_instances == gz.num_instances == plain.num_instances
    assert_same_records(tmp_path / "plain", tmp_path / "remote", common)
    assert_same_records(tmp_path / "plain", tmp_path / "gz", common)
    fs.rm("/bert-test", recursive=True)


def test_cerebras_command_line_names(tmp_path):
    argv = [
        "bert-data",
        str(GOLDEN / "corpus_a.txt"),
        f"--vocab_file={VOCAB}",
        "--output_dir",
        str(tmp_path),
        "--name",
        "train",
        "--num_output_files",
        "2",
        "--mask_whole_word",
        "--seed",
        "3",
        "--max_seq_length",
        "32",
        "--max_predictions_per_seq",
        "5",
        "--dupe_factor",
        "2",
    ]
    assert cli_main(argv) == 0
    shards = sorted(str(p) for p in tmp_path.glob("train.tfrecord-*-of-00002"))
    ref = create_pretraining_data(
        GOLDEN / "corpus_a.txt",
        VOCAB,
        [str(tmp_path / "r0"), str(tmp_path / "r1")],
        do_whole_word_mask=True,
        random_seed=3,
        max_seq_length=32,
        max_predictions_per_seq=5,
        dupe_factor=2,
    )
    flags = {"max_seq_length": 32, "max_predictions_per_seq": 5}
    assert len(shards) == 2 and sum(assert_same_records(a, b, flags) for a, b in zip(ref.paths, shards)) > 0
    meta = json.loads((tmp_path / ".tfrx" / "train.bert.json").read_text())
    assert meta["options"]["random_seed"] == 3 and meta["options"]["do_whole_word_mask"] is True


def test_read_finds_the_metadata_from_a_glob(tmp_path):
    create_pretraining_data(
        GOLDEN / "corpus_a.txt",
        VOCAB,
        str(tmp_path / "d"),
        num_shards=2,
        max_seq_length=24,
        max_predictions_per_seq=3,
        dupe_factor=1,
        mlm_only=True,
    )
    batch = next(iter(read(str(tmp_path / "d.tfrecord-*"), batch_size=4)))
    assert batch["input_ids"].shape == (4, 24) and batch["masked_lm_ids"].shape == (4, 3)
    assert "segment_ids" not in batch
    # where earlier versions wrote it, beside the records: still found, and left out of globs
    (tmp_path / ".tfrx" / "d.bert.json").rename(tmp_path / "d.bert.json")
    batch = next(iter(read(str(tmp_path / "d.tfrecord-*"), batch_size=4)))
    assert batch["input_ids"].shape == (4, 24) and batch["masked_lm_ids"].shape == (4, 3)
    assert len(list(tfrx.TFRecordDataset(str(tmp_path / "d*")))) > 0
    with pytest.raises(tfrx.SidecarFileError, match="metadata tfrx bert-data writes"):
        list(tfrx.TFRecordDataset(str(tmp_path / "d.bert.json")))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.integers(0, 300), max_size=20))
def test_inlined_draws_equal_the_standard_library(seed, sizes):
    import random

    from tfrx.text._exact import _Draws

    std, ours = random.Random(seed), _Draws(random.Random(seed))
    for n in sizes:
        x, y = list(range(n)), list(range(n))
        std.shuffle(x)
        ours.shuffle(y)
        assert x == y
        assert std.randint(2, n + 2) == ours.randint(2, n + 2)
        assert std.random() == ours.random()
        if n:
            assert std.choice(x) == ours.choice(y)
