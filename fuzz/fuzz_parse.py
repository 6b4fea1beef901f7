"""Fuzz target: ``tfrx.parse_example`` with a feature spec drawn from the input (see ``common.draw_spec``)."""

from __future__ import annotations

import sys

import atheris
import numpy  # noqa: F401  (imported first so that only tfrx's own Python code is instrumented)

with atheris.instrument_imports():
    import tfrx
    from common import generated_examples, run_parser, write_parse_seeds

# FixedLen/VarLen/Ragged/Sparse over the generated examples' keys a, b, c
_SPECS = [
    [(0, 4, 0), (1, 4, 1), (2, 4, 2)],
    [(0, 2, 0x04 * 3), (1, 1, 1)],
    [(0, 5, 0), (2, 6, 2 | 0x00)],
    [(5, 8, 0x40 | 0), (0, 9, 0)],
    [(2, 0, 2)],
]


def _parser(features: dict, num_threads: int):
    return tfrx.ExampleParser(features, num_parallel_calls=num_threads)


def TestOneInput(data: bytes) -> None:
    run_parser(data, _parser)


def seeds(corpus_dir: str | None, out_dir: str) -> int:
    return write_parse_seeds(out_dir, corpus_dir, _SPECS, generated_examples()[:4])


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
