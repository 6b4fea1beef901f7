"""Fuzz target: ``tfrx.parse_sequence_example`` with context and sequence specs drawn from the input.

A feature whose key byte has the high bit set goes to the sequence spec.
"""

from __future__ import annotations

import sys

import atheris
import numpy  # noqa: F401  (imported first so that only tfrx's own Python code is instrumented)

with atheris.instrument_imports():
    import tfrx
    from common import generated_examples, run_parser, write_parse_seeds

_SPECS = [
    [(0, 4, 0), (0x81, 2, 1), (0x82, 3, 2)],
    [(0x80, 0, 0x40), (0x81, 1, 0x04 * 2 + 1), (2, 1, 2)],
    [(0x80, 3, 0), (0x82, 2, 2)],
]


def _parser(features: dict, num_threads: int):
    seq = {
        k: v
        for k, v in features.items()
        if isinstance(v, tfrx.FixedLenSequenceFeature) or k in ("b", "c") and not isinstance(v, tfrx.FixedLenFeature)
    }
    ctx = {k: v for k, v in features.items() if k not in seq}
    return tfrx.SequenceExampleParser(ctx, seq, num_parallel_calls=num_threads)


def TestOneInput(data: bytes) -> None:
    run_parser(data, _parser, sequence=True)


def seeds(corpus_dir: str | None, out_dir: str) -> int:
    seq = generated_examples()[-1]
    return write_parse_seeds(out_dir, corpus_dir, _SPECS, [seq, seq], single=seq)


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
