"""The tf.data operation cases of ``golden/make_data_ops.py``: run with tfrx, with TensorFlow, or read the golden file."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_path = Path(__file__).resolve().parent / "golden" / "make_data_ops.py"
_spec = importlib.util.spec_from_file_location("make_data_ops", _path)
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

_golden = None


def names(prefix: str) -> list[str]:
    """The cases whose name starts with ``prefix``."""
    found = [n for n in cases.CASES if n.startswith(prefix)]
    assert found, f"no case starts with {prefix!r}"
    return found


def golden(name: str) -> list:
    """What TensorFlow produced for case ``name``, as written to ``golden/data_ops.json``."""
    global _golden
    if _golden is None:
        _golden = json.loads(cases.GOLDEN.read_text())["cases"]
    return _golden[name]


def ours(name: str) -> list:
    from tfrx.data import Dataset

    return cases.run_case(name, Dataset, cases.NumpyKit())


def pipeline(name: str):
    """A function building case ``name``'s tfrx pipeline (for resume checks)."""
    from tfrx.data import Dataset

    kit = cases.NumpyKit()
    return lambda: cases.CASES[name](Dataset, kit)


def tensorflow(name: str, tf) -> list:
    return cases.run_case(name, tf.data.Dataset, cases.TensorFlowKit(tf))
