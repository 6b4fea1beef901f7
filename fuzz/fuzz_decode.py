"""Fuzz target: ``tfrx.decode_example``, ``tfrx.decode_sequence_example``, the statistics' native presence
walk (``tfrx.validate.columns.feature_presence``, which must see the keys the decoder sees) and the payload
classifier (``tfrx.codec._sniff``: the native ``classify_records`` and ``message_fields``) on arbitrary bytes."""

from __future__ import annotations

import sys

import atheris
import numpy  # noqa: F401  (imported first so that only tfrx's own Python code is instrumented)

with atheris.instrument_imports():
    import tfrx
    from tfrx.codec import _sniff as sniff
    from tfrx.validate.columns import feature_presence
    from common import EXPECTED, corpus_records, generated_examples, write_seed


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    keep_empty = bool(data[0] & 1)
    body = data[1:]
    decoded: dict = {}
    try:
        decoded[False] = set(tfrx.decode_example(body, keep_empty=True))
    except EXPECTED:
        pass
    try:
        ctx, lists = tfrx.decode_sequence_example(body, keep_empty=keep_empty)
        decoded[True] = set(ctx) if keep_empty else None
    except EXPECTED:
        pass
    half = len(body) // 2
    for sequence in (False, True):
        try:
            presence = feature_presence([body, body[:half], body[half:]], sequence)
        except EXPECTED:
            continue
        want = decoded.get(sequence)
        got = {
            presence.features.keys[k] for k, r in zip(presence.features.key_ids, presence.features.records) if r == 0
        }
        if sequence not in decoded or (want is not None and got != want):
            raise AssertionError("feature_presence and the decoder disagree")
    # The classifier never raises on bytes; a batch of the input and its halves.
    kinds = sniff.record_kinds([body, body[:half], body[half:]], top_level_only=keep_empty)
    if kinds[0] != sniff.record_kind(body) and not keep_empty:
        raise AssertionError("record_kinds and record_kind disagree")
    sniff.describe([body])


def seeds(corpus_dir: str | None, out_dir: str) -> int:
    records = corpus_records(corpus_dir) + generated_examples()
    for i, r in enumerate(records):
        write_seed(out_dir, f"rec{i}", bytes([i & 1]) + r)
    return len(records)


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
