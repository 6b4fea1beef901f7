"""Filter expressions over a record's features: ``label == 3 and len(image/object/bbox/xmin) > 2``.

Feature names are written as they are, slashes included (the longest known
name wins), or in backticks for any other name (`` `my feature` ``). A
feature with one value is that value (a number, or text for UTF-8 bytes);
with several, a list; a missing feature is ``None``. The expression is
Python's syntax restricted to comparisons, ``and``/``or``/``not``,
arithmetic, ``in``, indexing and the functions ``len``, ``min``, ``max``,
``sum``, ``abs``, ``any``, ``all``: it is parsed with ``ast`` and walked
here, never passed to ``eval``. A record for which the expression fails
(``None > 2``) does not match.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Filter", "FilterError"]


class FilterError(ValueError):
    """The expression is not a valid filter (the message says where)."""


_FUNCS: dict[str, Callable[..., Any]] = {"len": len, "min": min, "max": max, "sum": sum, "abs": abs, "any": any, "all": all}
_CONSTS = {"True": True, "False": False, "None": None}
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
        ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_WORDS = set(_FUNCS) | set(_CONSTS) | {"and", "or", "not", "in", "is"}


def _python_value(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        items = value.tolist()
    else:
        items = []
        for v in value:
            try:
                items.append(bytes(v).decode("utf-8"))
            except UnicodeDecodeError:
                items.append(bytes(v))
    return items[0] if len(items) == 1 else items


class Filter:
    """A compiled filter; ``Filter(expr, names)(features)`` is True when the record matches."""

    def __init__(self, expression: str, names=()) -> None:
        self.expression = expression
        self.names: list[str] = []
        strings: list[str] = []

        def stash(m):  # string literals are kept out of the name substitutions
            strings.append(m.group(0))
            return f"_s{len(strings) - 1}"

        text = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", stash, expression)
        text = re.sub(r"`([^`]*)`", lambda m: self._slot(m.group(1)), text)
        known = sorted({n for n in names if n}, key=len, reverse=True)
        if known:
            pattern = re.compile("|".join(r"(?<![\w/.\-])" + re.escape(n) + r"(?![\w/.\-])" for n in known))
            text = pattern.sub(lambda m: self._slot(m.group(0)), text)
        text = re.sub(r"(?<![\w.])([A-Za-z_]\w*)(?![\w(])", lambda m: m.group(1) if m.group(1) in _WORDS or re.fullmatch(r"_[fs]\d+", m.group(1)) else self._slot(m.group(1)), text)
        text = re.sub(r"_s(\d+)", lambda m: strings[int(m.group(1))], text)
        try:
            self._tree = ast.parse(text, mode="eval")
        except SyntaxError as e:
            raise FilterError(f"cannot read the filter {expression!r}: {e.msg}") from None
        self._check(self._tree.body)

    def _slot(self, name: str) -> str:
        if name not in self.names:
            self.names.append(name)
        return f"_f{self.names.index(name)}"

    def _check(self, node: ast.AST) -> None:
        allowed = (ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.BinOp, ast.Compare,
                   ast.Call, ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple, ast.Subscript, ast.Slice,
                   *_BIN, *_CMP)
        for sub in ast.walk(node):
            if not isinstance(sub, allowed):
                raise FilterError(f"the filter {self.expression!r} uses {type(sub).__name__}, which filters do not allow")
            if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Name) and sub.func.id in _FUNCS and not sub.keywords):
                raise FilterError(f"the filter {self.expression!r} calls something other than {', '.join(sorted(_FUNCS))}")

    def __call__(self, features: dict) -> bool:
        env = {f"_f{i}": _python_value(features.get(name)) for i, name in enumerate(self.names)}
        try:
            return bool(self._eval(self._tree.body, env))
        except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError, AttributeError):
            return False

    def _eval(self, node: ast.AST, env: dict) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in _CONSTS:
                return _CONSTS[node.id]
            raise KeyError(node.id)
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                return all(self._eval(v, env) for v in node.values)
            return any(self._eval(v, env) for v in node.values)
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, env)
            return (not v) if isinstance(node.op, ast.Not) else (-v if isinstance(node.op, ast.USub) else +v)
        if isinstance(node, ast.BinOp):
            return _BIN[type(node.op)](self._eval(node.left, env), self._eval(node.right, env))
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                right = self._eval(right_node, env)
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)  # _check allows calls of _FUNCS names only
            arg = [self._eval(a, env) for a in node.args]
            if node.func.id == "len" and arg and not isinstance(arg[0], (list, str, bytes)):
                return 0 if arg[0] is None else 1  # a feature with one value
            return _FUNCS[node.func.id](*arg)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._eval(e, env) for e in node.elts]
        if isinstance(node, ast.Subscript):
            value = self._eval(node.value, env)
            if not isinstance(value, (list, str, bytes)):
                value = [value]
            if isinstance(node.slice, ast.Slice):
                lo, hi, st = (self._eval(x, env) if x is not None else None for x in (node.slice.lower, node.slice.upper, node.slice.step))
                return value[lo:hi:st]
            return value[self._eval(node.slice, env)]
        raise FilterError(f"cannot evaluate {type(node).__name__}")
