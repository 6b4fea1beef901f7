"""Writes data_options.json: the options tf.data gives pipelines that set them in several places.

Run from the repository root with TensorFlow installed:

    python tests/golden/make_options_golden.py

Each case is a small pipeline description that ``build`` turns into a
``tf.data`` or a ``tfrx.data`` pipeline (the two APIs share these names);
the file records ``options()`` of the result as TensorFlow computes it, so
the tests check tfrx against it without TensorFlow.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "data_options.json"

# A pipeline: ["range", n] | [op, pipeline, ...args]; options are {dotted attribute: value}.
CASES = {
    "before_map": ["map", ["with_options", ["range", 4], {"deterministic": False}]],
    "after_map": ["with_options", ["map", ["range", 4]], {"deterministic": False}],
    "later_wins": [
        "with_options",
        ["map", ["with_options", ["range", 4], {"deterministic": False}]],
        {"deterministic": True},
    ],
    "experimental_spelling": ["map", ["with_options", ["range", 4], {"experimental_deterministic": False}]],
    "zip_input": ["zip", ["with_options", ["range", 3], {"deterministic": False}], ["range", 3]],
    "concatenate_both": [
        "concatenate",
        ["with_options", ["range", 3], {"deterministic": False}],
        ["with_options", ["range", 3], {"deterministic": True}],
    ],
    "threads_and_deterministic": [
        "with_options",
        ["map", ["with_options", ["range", 4], {"threading.private_threadpool_size": 2}]],
        {"deterministic": False, "autotune.cpu_budget": 3},
    ],
    "none": ["map", ["range", 4]],
}
REPORTED = ("deterministic", "threading.private_threadpool_size", "autotune.cpu_budget")


def make_options(options_class, settings: dict):
    options = options_class()
    for dotted, value in settings.items():
        *parents, leaf = dotted.split(".")
        target = options
        for p in parents:
            target = getattr(target, p)
        setattr(target, leaf, value)
    return options


def build(spec, dataset_class, options_class):
    op = spec[0]
    if op == "range":
        return dataset_class.range(spec[1])
    if op == "map":
        return build(spec[1], dataset_class, options_class).map(lambda x: x)
    if op == "with_options":
        return build(spec[1], dataset_class, options_class).with_options(make_options(options_class, spec[2]))
    if op == "zip":
        return dataset_class.zip(tuple(build(s, dataset_class, options_class) for s in spec[1:]))
    if op == "concatenate":
        return build(spec[1], dataset_class, options_class).concatenate(build(spec[2], dataset_class, options_class))
    raise ValueError(op)


def reported(options) -> dict:
    out = {}
    for dotted in REPORTED:
        value = options
        for part in dotted.split("."):
            value = getattr(value, part)
        out[dotted] = value
    return out


def main() -> None:
    import tensorflow as tf

    results = {name: reported(build(spec, tf.data.Dataset, tf.data.Options).options()) for name, spec in CASES.items()}
    OUTPUT.write_text(json.dumps({"tensorflow": tf.__version__, "cases": results}, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
