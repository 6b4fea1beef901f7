"""The harness every tutorial script here shares (its lines are not the tutorial's).

A script runs as ``python SCRIPT OUT.pickle [WORKDIR]`` (tests/test_porting.py), under TensorFlow or under
``import tfrx.tf as tf``: :func:`start` moves into the work folder and returns the folder and the results;
:func:`report` keeps a value as NumPy or text, :func:`print` records what the tutorial prints (while
:data:`state` ``.recording``), and :func:`save` writes the results for the test to compare.
"""

import ast
import pickle
import re
import sys
import tempfile
import types

import numpy as np

state = types.SimpleNamespace(tf=None, out=None, results={}, recording=True)


def start(tf):
    """Moves into the work folder (the tutorials write into the current one); ``(workdir, results)``."""
    import os

    state.tf = tf
    state.out = sys.argv[1]
    workdir = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
    os.chdir(workdir)
    return workdir, state.results


def report(name, value):
    """Keeps ``value`` (dicts key by key) as NumPy or text under ``name``."""
    if isinstance(value, dict):
        for key in sorted(value):
            report(f"{name}/{key}", value[key])
        return
    if isinstance(value, (str, bytes)):
        state.results[name] = bytes(value) if isinstance(value, bytes) else value
        return
    state.results[name] = np.asarray(value, dtype=object) if np.asarray(value).dtype.kind == "S" else np.asarray(value)


def canonical(text):
    """``text`` with shown records rewritten in a fixed order: protobuf writes a Features map in no fixed
    order (the one under TensorFlow's classes differs from the one under tfrx's)."""

    def fix(match):
        try:
            record = state.tf.train.Example.FromString(ast.literal_eval(match.group(1)))
        except Exception:
            return match.group(0)
        return "numpy=" + repr(record.SerializeToString(deterministic=True))

    return re.sub(r"numpy=(b'(?:[^'\\]|\\.)*')", fix, text)


def print(*args, **kwargs):
    """What the tutorial prints, recorded (while ``state.recording``)."""
    if state.recording:
        state.results[f"print/{len(state.results):04d}"] = canonical(" ".join(str(a) for a in args))


def save():
    """Writes the results, and whether torch was imported, for the test to read."""
    with open(state.out, "wb") as f:
        pickle.dump({"results": state.results, "torch_imported": "torch" in sys.modules}, f)
