"""tfrx demo: delegates to tfrx.demo."""

from __future__ import annotations

import tfrx.demo as demo

DESCRIPTION = "Run the tfrx demo (see tfrx.demo)."


def add_arguments(p) -> None:
    demo.add_arguments(p)


def run(args) -> int:
    return demo.main(args)
