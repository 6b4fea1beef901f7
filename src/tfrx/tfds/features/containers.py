"""Connectors that hold others: :class:`Sequence` (and ``Video``), :class:`Dataset`, :class:`FeaturesDict`.

A Sequence passes its length down to the features it holds (``seq``); a
FeaturesDict joins its keys with ``/`` into the stored keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from tfrx.tfds.features.base import Feature, VariableSpec, _Block, _child, _dims_json, _shape_str, to_json
from tfrx.tfds.features.tensor import Tensor


@dataclasses.dataclass
class Sequence(Feature):
    """``tfds.features.Sequence`` (``Video`` is a Sequence of Image): values stacked along a first axis."""

    feature: Any = None  # a Feature after __post_init__ (given as a Feature, a dtype name, a dict, ...)
    length: int | None = None
    kind_: str = "Sequence"

    def __post_init__(self) -> None:
        self.kind = self.kind_
        self.feature = _from_user(self.feature)
        if self.length is not None and int(self.length) < 0:
            self.length = None

    def __repr__(self) -> str:
        if self.kind == "Video":
            return f"Video(shape={_shape_str((self.length,) + self.feature.shape)}, dtype={self.feature.dtype.name})"
        return f"{self.kind}({self.feature.describe()}, length={self.length})"

    def describe(self, indent: int = 0) -> str:
        if self.kind == "Video":
            return repr(self)
        return f"{self.kind}({self.feature.describe(indent)}, length={self.length})"

    def _spec(self, key: str, seq: tuple, out: dict, variable: VariableSpec) -> None:
        self.feature._spec(key, seq + (self.length,), out, variable)

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        return self.feature._decode_batch(b, key, seq + (self.length,))

    def _encode(self, value, key, out, seq):
        if _holds_dict(self.feature) and not isinstance(value, Mapping):
            steps = list(value)
            if self.length is not None and len(steps) != self.length:
                raise ValueError(f"feature {key!r}: Sequence of length {self.length} given {len(steps)} items")
            # A list of step dicts (RLDS steps, nested dicts and sequences of dicts included)
            # as the dict of per-key lists TFDS stacks.
            value = _steps_to_columns(self.feature, steps, key)
        if self.length is not None and not isinstance(value, Mapping) and len(value) != self.length:
            raise ValueError(f"feature {key!r}: Sequence of length {self.length} given {len(value)} items")
        self.feature._encode(value, key, out, seq + (self.length,))

    def to_proto_json(self) -> dict:
        if self.kind == "Video":
            img = self.feature
            d = {
                "dtype": img.dtype.name,
                "encodingFormat": img.encoding_format or "png",
                "shape": _dims_json((self.length,) + img.shape),
            }
            return {"video": d}
        return {
            "sequence": {"feature": to_json(self.feature), "length": str(-1 if self.length is None else self.length)}
        }


@dataclasses.dataclass
class Dataset(Sequence):
    """``tfds.features.Dataset`` (RLDS ``steps``): decoded to a list of step dicts, as iterating it in TFDS gives."""

    kind_: str = "Dataset"

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        stacked = super()._decode_batch(b, key, seq)
        if seq:
            return stacked
        return [[_tree_index(steps, j) for j in range(_leading(steps))] for steps in stacked]


def _is_dict(feature) -> bool:
    return isinstance(feature, FeaturesDict) and feature.kind == "FeaturesDict"


def _holds_dict(feature) -> bool:
    """A FeaturesDict, or Sequences of one: its steps are given as dicts (or lists of dicts)."""
    while isinstance(feature, Sequence):
        feature = feature.feature
    return _is_dict(feature)


def _steps_to_columns(feature, steps: list, key: str):
    """The values of ``feature`` for each step, as the per-key columns TFDS stacks.

    ``[{"a": 1, "o": {"x": 2}}, ...]`` -> ``{"a": [1, ...], "o": {"x": [2, ...]}}``
    down every nested dict; a Sequence of dicts inside gives nested lists
    (``[[{"a": 1}, {"a": 2}], [{"a": 3}]]`` -> ``{"a": [[1, 2], [3]]}``).
    """
    if isinstance(feature, Sequence) and _holds_dict(feature.feature):
        inner = [s if isinstance(s, Mapping) else _steps_to_columns(feature.feature, list(s), key) for s in steps]
        return _zip_columns(feature.feature, inner)
    if not _is_dict(feature):
        return steps
    out = {}
    for name, sub in feature.features.items():
        column = []
        for j, step in enumerate(steps):
            if not isinstance(step, Mapping) or name not in step:
                given = sorted(step) if isinstance(step, Mapping) else type(step).__name__
                raise ValueError(f"feature {_child(key, name)!r} missing from step {j} of the value to write ({given})")
            column.append(step[name])
        out[name] = _steps_to_columns(sub, column, _child(key, name))
    return out


def _zip_columns(feature, trees: list):
    """Per-step column trees of ``feature`` -> one tree whose leaves list the steps' leaves."""
    while isinstance(feature, Sequence):
        feature = feature.feature
    if _is_dict(feature):
        return {name: _zip_columns(sub, [t[name] for t in trees]) for name, sub in feature.features.items()}
    return list(trees)


def _leading(tree) -> int:
    if isinstance(tree, dict):
        for v in tree.values():
            return _leading(v)
        return 0
    return len(tree)


def _tree_index(tree, j):
    if isinstance(tree, dict):
        return {k: _tree_index(v, j) for k, v in tree.items()}
    return tree[j]


@dataclasses.dataclass
class FeaturesDict(Feature):
    """``tfds.features.FeaturesDict`` (and ``Translation``): nested dicts, keys joined with ``/`` on disk."""

    features: dict = dataclasses.field(default_factory=dict)
    kind_: str = "FeaturesDict"
    languages: list | None = None

    def __post_init__(self) -> None:
        self.kind = self.kind_
        self.features = {k: _from_user(v) for k, v in self.features.items()}

    def __repr__(self) -> str:
        return self.describe()

    def describe(self, indent: int = 0) -> str:
        if self.kind == "Translation":
            return f"Translation(languages={self.languages})"
        if self.kind == "TranslationVariableLanguages":
            return f"TranslationVariableLanguages(languages={self.languages})"
        pad = "    " * (indent + 1)
        lines = [f"{pad}{k!r}: {v.describe(indent + 1)}," for k, v in self.features.items()]
        return "FeaturesDict({\n" + "\n".join(lines) + "\n" + "    " * indent + "})"

    def _spec(self, key: str, seq: tuple, out: dict, variable: VariableSpec) -> None:
        for k, v in self.features.items():
            v._spec(_child(key, k), seq, out, variable)

    def _decode_batch(self, b: _Block, key: str, seq: tuple):
        names = list(self.features)
        columns = [v._decode_batch(b, _child(key, k), seq) for k, v in self.features.items()]
        return [dict(zip(names, values)) for values in zip(*columns)] if columns else [{} for _ in range(b.n)]

    def _encode(self, value, key, out, seq):
        if self.kind == "TranslationVariableLanguages" and not (isinstance(value, Mapping) and "language" in value):
            pairs = sorted(
                (lang, t) for lang, texts in value.items() for t in ([texts] if isinstance(texts, str) else texts)
            )
            value = {"language": [p[0] for p in pairs], "translation": [p[1] for p in pairs]}
        for k, f in self.features.items():
            if k not in value:
                raise ValueError(
                    f"feature {_child(key, k)!r} missing from the value to write (keys given: {sorted(value)})"
                )
            f._encode(value[k], _child(key, k), out, seq)

    def to_proto_json(self) -> dict:
        if self.kind == "Translation":
            return {"translation": {"languages": list(self.languages or ())}}
        if self.kind == "TranslationVariableLanguages":
            return {"translation": {"languages": list(self.languages or ()), "variableLanguagesPerExample": True}}
        return {"featuresDict": {"features": {k: to_json(v) for k, v in self.features.items()}}}

    # dict-like access, as tfds.features.FeaturesDict
    def __getitem__(self, k):
        return self.features[k]

    def keys(self):
        return self.features.keys()

    def items(self):
        return self.features.items()

    def __iter__(self):
        return iter(self.features)

    def __len__(self) -> int:
        return len(self.features)


def _from_user(spec: Any) -> Feature:
    """A feature from what users pass to :func:`tfrx.tfds.write` (Feature objects, dicts, dtypes)."""
    if isinstance(spec, Feature):
        return spec
    if isinstance(spec, Mapping):
        return FeaturesDict({k: _from_user(v) for k, v in spec.items()})
    dt = np.dtype(object if spec in (str, bytes) else spec)
    return Tensor((), dt, kind_="Tensor")
