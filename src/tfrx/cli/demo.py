"""tfrx demo: delegates to tfrx.tools.demo."""

from __future__ import annotations

import tfrx.tools.demo as demo

DESCRIPTION = "Run the tfrx demo (see tfrx.tools.demo)."


def add_arguments(p) -> None:
    demo.add_arguments(p)


def run(args) -> int:
    return demo.main(args)
