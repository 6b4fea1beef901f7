"""Dataset methods are visible to type checkers.

Transformations attach themselves to :class:`tfrx.data.Dataset` at import time,
which type checkers cannot follow, so ``dataset.py`` declares their signatures
in a ``TYPE_CHECKING`` block. These tests check that the declarations list every
attached method with the same signature, and run a pipeline whose every step is
wrapped in ``typing.assert_type``: the type checker of CI (mypy, on ``tests/``)
fails if a method is missing or typed ``Any``.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import assert_type

import numpy as np

import tfrx
import tfrx.data._dataset as dataset_module
from tfrx.data import Dataset, DatasetIterator, Options, TFRecordDataset


def _declared() -> dict[str, ast.FunctionDef]:
    """The functions declared under ``if TYPE_CHECKING:`` in the body of class Dataset."""
    tree = ast.parse(Path(dataset_module.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Dataset")
    out = {}
    for node in cls.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            out.update({f.name: f for f in node.body if isinstance(f, ast.FunctionDef)})
    return out


def _attached() -> dict[str, tuple[bool, Callable]]:
    """Methods set on Dataset by other modules: name -> (static, function)."""
    out: dict[str, tuple[bool, Callable]] = {}
    for name, value in vars(Dataset).items():
        static = isinstance(value, staticmethod)
        fn = value.__func__ if static else value
        if inspect.isfunction(fn) and fn.__module__ != dataset_module.__name__:
            out[name] = (static, fn)
    return out


def _signature(fn: ast.FunctionDef, *, static: bool) -> str:
    """The parameters and return annotation as source text; a method's ``self`` without its annotation."""
    args = fn.args
    if not static and args.args:
        args.args[0].annotation = None
    returns = f" -> {ast.unparse(fn.returns)}" if fn.returns is not None else ""
    return f"({ast.unparse(args)}){returns}"


def test_every_attached_method_is_declared() -> None:
    declared, attached = _declared(), _attached()
    assert len(attached) > 30  # the transformations were found at all
    missing = sorted(set(attached) - set(declared))
    assert not missing, f"declare these in the TYPE_CHECKING block of Dataset (tfrx/data/_dataset.py): {missing}"
    stale = sorted(set(declared) - set(attached))
    assert not stale, f"declared in Dataset's TYPE_CHECKING block but attached by no module: {stale}"


def test_declared_signatures_match_the_implementations() -> None:
    declared = _declared()
    mismatched = []
    for name, (static, fn) in sorted(_attached().items()):
        decl = declared.get(name)
        if decl is None:
            continue  # test_every_attached_method_is_declared names it
        impl = ast.parse(inspect.getsource(fn)).body[0]
        assert isinstance(impl, ast.FunctionDef)
        is_static = any(ast.unparse(d) == "staticmethod" for d in decl.decorator_list)
        want, got = _signature(impl, static=static), _signature(decl, static=is_static)
        if is_static != static or want != got:
            mismatched.append(
                f"{name}: declared {'@staticmethod ' if is_static else ''}{got}, "
                f"implemented {'@staticmethod ' if static else ''}{want}"
            )
    assert not mismatched, "\n".join(mismatched)


def test_a_typed_pipeline(tmp_path: Path) -> None:
    """Every step keeps its static type; at run time the same steps read the records back."""
    path = str(tmp_path / "typed.tfrecord")
    tfrx.write_records(path, tfrx.encode_examples({"x": np.arange(10)}))
    spec = {"x": tfrx.FixedLenFeature([], tfrx.int64)}

    ds = assert_type(TFRecordDataset([path]), TFRecordDataset)
    parsed = assert_type(ds.shuffle(4, seed=1).batch(4).parse(spec), Dataset)
    doubled = assert_type(parsed.map(lambda e: e["x"] * 2).prefetch(2), Dataset)
    it = assert_type(iter(doubled), DatasetIterator)
    assert sorted(np.concatenate(list(it)).tolist()) == list(range(0, 20, 2))

    counted = assert_type(Dataset.range(3).repeat(2).enumerate(), Dataset)
    assert assert_type(counted.cardinality(), int) == 6
    zipped = assert_type(Dataset.zip((Dataset.range(2), Dataset.from_tensor_slices([5, 6]))), Dataset)
    assert [(int(a), int(b)) for a, b in zipped] == [(0, 5), (1, 6)]
    assert isinstance(assert_type(zipped.options(), Options), Options)
