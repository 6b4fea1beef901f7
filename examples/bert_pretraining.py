"""BERT pre-training data from raw text, inspected, read back and used for one training step.

1. ``tfrx.text.create_pretraining_data`` turns a small bundled text
   (``examples/data/bert/corpus.txt``: one sentence per line, a blank line
   between documents; written for this example and dedicated to the public
   domain) and a small WordPiece vocabulary (``vocab.txt``, made from the text
   by ``build_vocab`` below) into sharded TFRecords, exactly as BERT's
   ``create_pretraining_data.py`` would (``mode="exact"``), with the same
   features: ``input_ids``, ``input_mask``, ``segment_ids``,
   ``masked_lm_positions``, ``masked_lm_ids``, ``masked_lm_weights``,
   ``next_sentence_labels``;
2. prints the first instance as word pieces, with its predictions;
3. reads the shards back with ``tfrx.text.read`` (parsed batches of NumPy
   arrays) into PyTorch and runs one optimisation step of a tiny BERT-style
   encoder with a masked-LM head and a next-sentence head.

    python examples/bert_pretraining.py [--workdir DIR] [--seq-len 64] [--dupe-factor 5] [--small]

The command-line equivalent of step 1:

    tfrx bert-data examples/data/bert/corpus.txt --vocab_file examples/data/bert/vocab.txt \\
        -o DIR/bert --num-shards 2 --max_seq_length 64 --max_predictions_per_seq 10 --dupe_factor 5
"""

from __future__ import annotations

import argparse
import collections
import os
import string
import sys
import tempfile
from pathlib import Path

from tfrx.text import BasicTokenizer, Vocab, create_pretraining_data, read

DATA = Path(__file__).resolve().parent / "data" / "bert"
CORPUS = DATA / "corpus.txt"
VOCAB = DATA / "vocab.txt"


def build_vocab(corpus: Path, path: Path, *, min_count: int = 2) -> None:
    """Special tokens, every lower-cased word seen ``min_count`` times, letters/digits alone and as ``##`` pieces,
    and a few suffixes: small, but WordPiece still splits the rarer words into pieces."""
    basic = BasicTokenizer(do_lower_case=True)
    counts = collections.Counter(
        w for line in corpus.read_text(encoding="utf-8").splitlines() for w in basic.tokenize(line)
    )
    chars = sorted({c for w in counts for c in w} | set(string.ascii_lowercase + string.digits))
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + ["##" + c for c in chars if c.isalnum()]
    tokens += ["##s", "##ed", "##ing", "##er", "##ly", "##es", "##tion"]
    tokens += sorted(w for w, n in counts.items() if n >= min_count and len(w) > 1)
    path.write_text("".join(t + "\n" for t in dict.fromkeys(tokens)), encoding="utf-8")


def describe(instance: dict, vocab: Vocab) -> str:
    n = int(instance["input_mask"].sum())
    tokens = vocab.convert_ids_to_tokens(instance["input_ids"][:n])
    k = int(instance["masked_lm_weights"].sum())
    preds = [
        f"{int(p)}:{t}"
        for p, t in zip(instance["masked_lm_positions"][:k], vocab.convert_ids_to_tokens(instance["masked_lm_ids"][:k]))
    ]
    return (
        f"tokens ({n}): {' '.join(tokens)}\n"
        f"segment_ids: {' '.join(map(str, instance['segment_ids'][:n]))}\n"
        f"predictions (position:original): {' '.join(preds)}\n"
        f"next_sentence_label: {int(instance['next_sentence_labels'][0])} (1 = random next segment)"
    )


def tiny_bert(vocab_size: int, seq_len: int, hidden: int = 32):
    import torch
    from torch import nn

    class TinyBert(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(vocab_size, hidden)
            self.positions = nn.Embedding(seq_len, hidden)
            self.segments = nn.Embedding(2, hidden)
            layer = nn.TransformerEncoderLayer(hidden, nhead=2, dim_feedforward=2 * hidden, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=1)
            self.mlm = nn.Linear(hidden, vocab_size)
            self.nsp = nn.Linear(hidden, 2)

        def forward(self, ids, mask, segments, positions):
            x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1])) + self.segments(segments)
            x = self.encoder(x, src_key_padding_mask=mask == 0)
            picked = torch.gather(x, 1, positions[..., None].expand(-1, -1, x.shape[-1]))
            return self.mlm(picked), self.nsp(x[:, 0])

    return TinyBert()


def train_step(batch: dict, vocab_size: int, seq_len: int) -> dict:
    import torch

    torch.manual_seed(0)
    t = {k: torch.from_numpy(v) for k, v in batch.items()}
    model = tiny_bert(vocab_size, seq_len)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def loss_of():
        mlm_logits, nsp_logits = model(t["input_ids"], t["input_mask"], t["segment_ids"], t["masked_lm_positions"])
        per = torch.nn.functional.cross_entropy(mlm_logits.transpose(1, 2), t["masked_lm_ids"], reduction="none")
        mlm = (per * t["masked_lm_weights"]).sum() / t["masked_lm_weights"].sum()
        nsp = torch.nn.functional.cross_entropy(nsp_logits, t["next_sentence_labels"][:, 0])
        return mlm + nsp

    before = loss_of()
    opt.zero_grad()
    before.backward()
    opt.step()
    with torch.no_grad():
        after = loss_of()
    return {"loss_before": float(before.detach()), "loss_after": float(after)}


def run(
    workdir: str,
    *,
    seq_len: int = 64,
    max_predictions: int = 10,
    dupe_factor: int = 5,
    batch_size: int = 32,
    shards: int = 2,
) -> dict:
    vocab = Vocab.from_file(VOCAB)
    result = create_pretraining_data(
        CORPUS,
        vocab,
        os.path.join(workdir, "bert"),
        num_shards=shards,
        max_seq_length=seq_len,
        max_predictions_per_seq=max_predictions,
        dupe_factor=dupe_factor,
    )
    print(
        f"{result.num_instances} instances from {result.num_documents} documents ({result.num_tokens} word pieces) "
        f"in {len(result.paths)} shards; metadata {os.path.basename(result.metadata_path)}"
    )
    # sizes and layout come from the metadata file written beside the shards
    first = next(iter(read(result.paths)))
    print(describe(first, vocab))
    batches = list(read(result.paths, batch_size=batch_size, shuffle_buffer=256, seed=0))
    count = sum(len(b["input_ids"]) for b in batches)
    shapes = {k: (tuple(v.shape), str(v.dtype)) for k, v in batches[0].items()}
    print(f"read {count} instances in {len(batches)} batches; first batch {shapes}")
    out = {"count": count, "instances": result.num_instances, "batches": len(batches), "shapes": shapes}
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not installed: skipping the training step")
        return out
    losses = train_step(batches[0], len(vocab), seq_len)
    print(
        f"one SGD step of a tiny BERT: loss {losses['loss_before']:.3f} -> {losses['loss_after']:.3f} on the same batch"
    )
    out.update(losses)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workdir", help="where to write (default: a temporary directory)")
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--max-predictions", type=int, default=10)
    p.add_argument("--dupe-factor", type=int, default=5)
    p.add_argument("--rebuild-vocab", action="store_true", help=f"rewrite {VOCAB.name} from the corpus")
    p.add_argument("--small", action="store_true", help="a quick run (sequences of 48, dupe factor 2, batches of 16)")
    args = p.parse_args(argv)
    if args.rebuild_vocab:
        build_vocab(CORPUS, VOCAB)
    sizes: dict[str, int] = dict(
        seq_len=args.seq_len, max_predictions=args.max_predictions, dupe_factor=args.dupe_factor
    )
    if args.small:
        sizes = dict(seq_len=48, max_predictions=8, dupe_factor=2, batch_size=16)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        out = run(workdir, **sizes)
    return 0 if out["count"] == out["instances"] else 1


if __name__ == "__main__":
    sys.exit(main())
