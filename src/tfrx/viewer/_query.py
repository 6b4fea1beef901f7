"""Filter expressions over features, evaluated a batch of records at a time: ``label == 3 and len(image/object/bbox/xmin) > 2``.

Feature names are written as they are, slashes included (the longest known
name wins), or in backticks for any other name (`` `my feature` ``). The
expression is Python's syntax restricted to comparisons, ``and``/``or``/
``not``, arithmetic, ``in``, indexing with a number and the functions
``len``, ``min``, ``max``, ``sum``, ``abs``, ``any``, ``all``: it is parsed
with ``ast`` and walked here, never passed to ``eval``.

Only the features the expression names are parsed, by the native parser
(:class:`tfrx.ExampleParser` with a ``VarLenFeature`` of each one's kind, or
:class:`tfrx.SequenceExampleParser` for a SequenceExample's context and
feature lists), for a whole batch of records; the expression then runs as
NumPy operations over the batch's columns. The meaning of each operation:

- a feature with exactly one value compares, and computes, as that value;
  a comparison (``==``, ``<``, ...) with a feature that has no value or
  several is false, and ``a != b`` is ``not a == b``;
- ``len(f)`` is the number of values (0 when missing; for a feature list,
  the number of steps); ``min``/``max``/``sum``/``any``/``all`` reduce a
  record's values; ``f[i]`` is its ``i``-th value (false in comparisons
  where there is none); ``x in f`` is true when one of ``f``'s values is
  ``x``; ``f in [1, 3]`` when ``f``'s one value is in the list;
- a feature used as a condition is true when it has values; text in quotes
  compares with bytes features as UTF-8.

Naming a feature the records do not have, comparing bytes with a number,
or calling anything else is a :class:`FilterError` with the reason.
"""

from __future__ import annotations

import ast
import difflib
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfrx.errors import FilterError

__all__ = ["Filter", "FilterError"]


_REDUCERS = ("min", "max", "sum", "any", "all")
_FUNCS = ("len", "abs", *_REDUCERS)
_CONSTS = {"True": True, "False": False, "None": None}
_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_WORDS = set(_FUNCS) | set(_CONSTS) | {"and", "or", "not", "in", "is"}
_KINDS = {"int64", "float", "bytes"}


@dataclass
class _Rows:
    """A feature over the batch: record ``r``'s values are ``values[splits[r]:splits[r+1]]``."""

    name: str
    kind: str  # "int64" | "float" | "bytes"
    values: np.ndarray
    splits: np.ndarray
    steps: np.ndarray | None = None  # a feature list's steps per record (what len() counts)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.splits)


@dataclass
class _Vec:
    """One value per record; ``valid`` is False where the record has none."""

    kind: str  # "int64" | "float" | "bytes" | "bool"
    values: np.ndarray
    valid: np.ndarray


def _kind_of_constant(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int64"
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, (str, bytes)):
        return "bytes"
    return type(v).__name__


def _numeric(kind: str) -> bool:
    return kind in ("int64", "float", "bool")


def _as_bytes(v: Any) -> Any:
    return v.encode("utf-8") if isinstance(v, str) else v


class Filter:
    """A compiled filter expression.

    ``Filter(expr, kinds)`` checks the expression against the known
    features (``kinds``: name -> ``"int64"``/``"float"``/``"bytes"``, or just
    the names); ``filter.matches(records)`` gives a boolean array over a
    batch of serialized records (parsed natively); ``filter(features)`` tests
    one record already decoded by :func:`tfrx.decode_example`.
    """

    def __init__(self, expression: str, kinds=(), *, sequence_kinds: dict | None = None) -> None:
        self.expression = expression
        self.kinds: dict[str, str | None] = dict(kinds) if isinstance(kinds, dict) else {n: None for n in kinds}
        self.sequence_kinds: dict[str, str | None] = dict(sequence_kinds or {})
        self.names: list[str] = []
        self._parsers: dict[bool, Any] = {}
        strings: list[str] = []

        def stash(m):  # string literals are kept out of the name substitutions
            strings.append(m.group(0))
            return f"_s{len(strings) - 1}"

        text = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", stash, expression)
        text = re.sub(r"`([^`]*)`", lambda m: self._slot(m.group(1)), text)
        known = sorted({n for n in [*self.kinds, *self.sequence_kinds] if n}, key=len, reverse=True)
        if known:
            pattern = re.compile("|".join(r"(?<![\w/.\-])" + re.escape(n) + r"(?![\w/.\-])" for n in known))
            text = pattern.sub(lambda m: self._slot(m.group(0)), text)
        text = re.sub(
            r"(?<![\w./])(?!_[fs]\d+(?!\w))([A-Za-z_][\w/]*\w|[A-Za-z_])(?![\w(/])",
            lambda m: (
                m.group(1) if m.group(1) in _WORDS or re.fullmatch(r"_[fs]\d+", m.group(1)) else self._slot(m.group(1))
            ),
            text,
        )
        text = re.sub(r"_s(\d+)", lambda m: strings[int(m.group(1))], text)
        if not text.strip():
            raise FilterError("the filter is empty")
        try:
            self._tree = ast.parse(text, mode="eval")
        except SyntaxError as e:
            raise FilterError(f"cannot read the filter {expression!r}: {e.msg}") from None
        self._check(self._tree.body)
        if known:
            for name in self.names:
                if name not in self.kinds and name not in self.sequence_kinds:
                    close = difflib.get_close_matches(name, known, n=3)
                    hint = (
                        f"; did you mean {', '.join(map(repr, close))}?"
                        if close
                        else f"; the features are {', '.join(sorted(known)[:20])}"
                    )
                    raise FilterError(f"the filter {expression!r} names {name!r}, which the records do not have{hint}")

    def _slot(self, name: str) -> str:
        if name not in self.names:
            self.names.append(name)
        return f"_f{self.names.index(name)}"

    def _check(self, node: ast.AST) -> None:
        allowed = (
            ast.BoolOp,
            ast.And,
            ast.Or,
            ast.UnaryOp,
            ast.Not,
            ast.USub,
            ast.UAdd,
            ast.BinOp,
            ast.Compare,
            ast.Call,
            ast.Name,
            ast.Load,
            ast.Constant,
            ast.List,
            ast.Tuple,
            ast.Subscript,
            ast.In,
            ast.NotIn,
            *_BIN,
            *_CMP,
        )
        for sub in ast.walk(node):
            if not isinstance(sub, allowed):
                raise FilterError(
                    f"the filter {self.expression!r} uses {type(sub).__name__}, which filters do not allow"
                )
            if isinstance(sub, ast.Call) and not (
                isinstance(sub.func, ast.Name) and sub.func.id in _FUNCS and not sub.keywords and len(sub.args) == 1
            ):
                raise FilterError(
                    f"the filter {self.expression!r} calls something other than "
                    f"{', '.join(sorted(_FUNCS))} with one argument"
                )
            if isinstance(sub, (ast.List, ast.Tuple)) and not all(isinstance(e, ast.Constant) for e in sub.elts):
                raise FilterError(f"the filter {self.expression!r} has a list of something other than constants")
            if (
                isinstance(sub, ast.Subscript)
                and not (isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, int))
                and not (isinstance(sub.slice, ast.UnaryOp) and isinstance(sub.slice.operand, ast.Constant))
            ):
                raise FilterError(f"the filter {self.expression!r} indexes with something other than a whole number")

    # ------------------------------------------------------------------ parsing
    def _kind(self, name: str, sequence: bool) -> str:
        kind = (self.sequence_kinds if sequence else self.kinds).get(name)
        if kind not in _KINDS:
            raise FilterError(f"the kind of feature {name!r} is not known (it holds no values in the records seen)")
        return kind

    def columns(self, records, *, sequence: bool = False) -> dict[str, _Rows]:
        """The features the filter names, parsed natively from a batch of serialized records."""
        from tfrx import dtypes
        from tfrx.parsing import ExampleParser, SequenceExampleParser, VarLenFeature

        dtype = {"int64": dtypes.int64, "float": dtypes.float32, "bytes": dtypes.string}
        context = [n for n in self.names if n in self.kinds]
        lists = [n for n in self.names if n not in self.kinds and sequence and n in self.sequence_kinds]
        missing = [n for n in self.names if n not in context and n not in lists]
        out: dict[str, _Rows] = {}
        n = len(records)
        for name in missing:  # a name with no kind (only without a schema): no values anywhere
            out[name] = _Rows(name, "int64", np.zeros(0, np.int64), np.zeros(n + 1, np.int64))
        if not context and not lists:
            return out
        parser = self._parsers.get(sequence)
        if parser is None:  # built once per filter: the spec is validated and planned once
            cspec = {k: VarLenFeature(dtype[self._kind(k, False)]) for k in context}
            if sequence:
                lspec = {k: VarLenFeature(dtype[self._kind(k, True)]) for k in lists}
                parser = SequenceExampleParser(cspec or None, lspec or None, num_parallel_calls=1)
            else:
                parser = ExampleParser(cspec, num_parallel_calls=1)
            self._parsers[sequence] = parser
        if sequence:
            parsed, parsed_lists, _ = parser.parse(records)
        else:
            parsed, parsed_lists = parser.parse(records), {}
        for k in context:
            sp = parsed[k]
            out[k] = _Rows(k, self._kind(k, False), sp.values, sp.nested_row_splits[0])
        for k in lists:
            record_splits, step_splits = parsed_lists[k].nested_row_splits
            out[k] = _Rows(
                k, self._kind(k, True), parsed_lists[k].values, step_splits[record_splits], steps=np.diff(record_splits)
            )
        return out

    def matches(self, records, *, sequence: bool = False) -> np.ndarray:
        """A boolean array: which records of the batch match.

        A batch the parser rejects (a record of another payload, a feature of
        another kind than the schema's) is tried record by record; a record
        that cannot be parsed does not match.
        """
        from tfrx.errors import TfrxError

        n = len(records)
        if n == 0:
            return np.zeros(0, bool)
        try:
            return self.evaluate(self.columns(records, sequence=sequence), n)
        except FilterError:
            raise
        except (TfrxError, ValueError):
            if n == 1:
                return np.zeros(1, bool)
        records = records.to_list() if hasattr(records, "to_list") else list(records)
        return np.concatenate([self.matches([r], sequence=sequence) for r in records])

    def __call__(self, features: dict) -> bool:
        """Whether one record, decoded by :func:`tfrx.decode_example`, matches."""
        cols = {}
        for name in self.names:
            value = features.get(name)
            if value is None:
                values, kind = np.zeros(0, np.int64), self.kinds.get(name) or "int64"
            elif isinstance(value, np.ndarray):
                values, kind = value, ("int64" if value.dtype.kind == "i" else "float")
            else:
                values, kind = np.empty(len(value), object), "bytes"
                values[:] = [bytes(v) for v in value]
            cols[name] = _Rows(name, kind, values, np.array([0, len(values)], np.int64))
        return bool(self.evaluate(cols, 1)[0])

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, columns: dict[str, _Rows], n: int) -> np.ndarray:
        """The expression over ``n`` records whose features are ``columns``: a boolean array."""
        env = {f"_f{i}": columns[name] for i, name in enumerate(self.names)}
        with np.errstate(all="ignore"):
            return self._truth(self._eval(self._tree.body, env, n), n)

    def _error(self, message: str) -> FilterError:
        return FilterError(f"the filter {self.expression!r}: {message}")

    def _truth(self, x: Any, n: int) -> np.ndarray:
        if isinstance(x, _Rows):
            return x.lengths > 0
        if isinstance(x, _Vec):
            if x.kind == "bytes":
                return x.valid & np.array([len(v) > 0 for v in x.values], bool)
            return x.valid & (x.values != 0)
        if isinstance(x, (list, tuple)):
            raise self._error("a list is not a condition")
        return np.full(n, bool(x))

    def _vec(self, x: Any, n: int) -> Any:
        """A feature as one value per record (valid where it has exactly one); constants stay constants."""
        if not isinstance(x, _Rows):
            return x
        lengths = x.lengths
        valid = lengths == 1
        if not x.values.size:
            return _Vec(x.kind, np.zeros(n, x.values.dtype if x.values.dtype != object else object), np.zeros(n, bool))
        idx = np.minimum(x.splits[:-1], x.values.size - 1)
        return _Vec(x.kind, x.values[idx], valid)

    def _pair(self, a: Any, b: Any, what: str) -> tuple[Any, Any, np.ndarray | bool]:
        """Two operands as values and their validity; text constants as bytes against bytes features."""
        ka = a.kind if isinstance(a, _Vec) else _kind_of_constant(a)
        kb = b.kind if isinstance(b, _Vec) else _kind_of_constant(b)
        if a is None or b is None:
            raise self._error(f"{what} with None: write len(feature) == 0 for a missing feature")
        if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
            raise self._error(f"{what} with a list: use 'in'")
        if (ka == "bytes") != (kb == "bytes"):
            feature = next((x for x in (a, b) if isinstance(x, _Vec)), None)
            raise self._error(
                f"{what} between bytes and a number"
                + (
                    " (write text in quotes to compare bytes)"
                    if feature is not None and feature.kind == "bytes"
                    else ""
                )
            )
        va = a.values if isinstance(a, _Vec) else _as_bytes(a)
        vb = b.values if isinstance(b, _Vec) else _as_bytes(b)
        valid = (a.valid if isinstance(a, _Vec) else True) & (b.valid if isinstance(b, _Vec) else True)
        return va, vb, valid

    def _eval(self, node: ast.AST, env: dict, n: int) -> Any:  # noqa: C901  an evaluator: one branch per node kind of the query language
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return _CONSTS[node.id]
        if isinstance(node, ast.BoolOp):
            parts = [self._truth(self._eval(v, env, n), n) for v in node.values]
            return np.logical_and.reduce(parts) if isinstance(node.op, ast.And) else np.logical_or.reduce(parts)
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, env, n)
            if isinstance(node.op, ast.Not):
                return ~self._truth(v, n)
            v = self._vec(v, n)
            if isinstance(v, _Vec):
                if not _numeric(v.kind):
                    raise self._error("a sign before bytes")
                return _Vec(v.kind, -v.values if isinstance(node.op, ast.USub) else v.values, v.valid)
            if not isinstance(v, (int, float)):
                raise self._error(f"a sign before {v!r}")
            return -v if isinstance(node.op, ast.USub) else +v
        if isinstance(node, ast.BinOp):
            a, b = self._vec(self._eval(node.left, env, n), n), self._vec(self._eval(node.right, env, n), n)
            if not isinstance(a, _Vec) and not isinstance(b, _Vec):
                try:
                    return _BIN[type(node.op)](a, b)
                except (TypeError, ZeroDivisionError) as e:
                    raise self._error(str(e)) from None
            va, vb, valid = self._pair(a, b, "arithmetic")
            if not (_numeric(a.kind if isinstance(a, _Vec) else _kind_of_constant(a))):
                raise self._error("arithmetic on bytes")
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
                valid = valid & (np.asarray(vb) != 0)
                vb = np.where(np.asarray(vb) != 0, vb, 1)
            values = _BIN[type(node.op)](va, vb)
            kind = "float" if np.asarray(values).dtype.kind == "f" else "int64"
            return _Vec(kind, np.broadcast_to(values, (n,)), np.broadcast_to(valid, (n,)))
        if isinstance(node, ast.Compare):
            result = np.ones(n, bool)
            left = self._eval(node.left, env, n)
            for op, right_node in zip(node.ops, node.comparators):
                right = self._eval(right_node, env, n)
                result &= self._compare(op, left, right, n)
                left = right
            return result
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)  # _check allows calls of _FUNCS names only
            return self._call(node.func.id, self._eval(node.args[0], env, n), n)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [e.value for e in node.elts if isinstance(e, ast.Constant)]  # _check allows constants only
        if isinstance(node, ast.Subscript):
            value = self._eval(node.value, env, n)
            i = self._eval(node.slice, env, n)
            if not isinstance(value, _Rows):
                raise self._error("only features can be indexed")
            lengths = value.lengths
            valid = lengths > i if i >= 0 else lengths >= -i
            pos = (value.splits[:-1] + i) if i >= 0 else (value.splits[1:] + i)
            pos = np.clip(pos, 0, max(0, value.values.size - 1))
            values = value.values[pos] if value.values.size else np.zeros(n, value.values.dtype)
            return _Vec(value.kind, values, valid)
        raise self._error(f"cannot evaluate {type(node).__name__}")

    def _compare(self, op: ast.cmpop, left: Any, right: Any, n: int) -> np.ndarray:
        if isinstance(op, (ast.In, ast.NotIn)):
            hit = self._contains(left, right, n)
            return ~hit if isinstance(op, ast.NotIn) else hit
        a, b = self._vec(left, n), self._vec(right, n)
        if not isinstance(a, _Vec) and not isinstance(b, _Vec):
            try:
                return np.full(n, bool(_CMP[type(op)](a, b)))
            except TypeError as e:
                raise self._error(str(e)) from None
        if isinstance(op, ast.NotEq):
            return ~self._compare(ast.Eq(), left, right, n)
        va, vb, valid = self._pair(a, b, "comparison")
        if isinstance(op, ast.Eq) or isinstance(va, np.ndarray) and va.dtype != object:
            got = _CMP[type(op)](va, vb)
        else:  # ordering of bytes: elementwise on Python bytes
            got = np.array(
                [
                    _CMP[type(op)](x, y)
                    for x, y in zip(*np.broadcast_arrays(np.asarray(va, object), np.asarray(vb, object)))
                ],
                bool,
            )
        return np.asarray(valid & got, bool).reshape(n) if np.ndim(valid & got) else np.full(n, bool(valid & got))

    def _contains(self, item: Any, container: Any, n: int) -> np.ndarray:
        if isinstance(container, _Rows):
            if isinstance(item, (_Rows, _Vec, list, tuple)) or item is None:
                raise self._error("'x in feature' needs a constant x")
            if (container.kind == "bytes") != (_kind_of_constant(item) == "bytes"):
                raise self._error(
                    f"'in' between {_kind_of_constant(item)} and the {container.kind} feature {container.name!r}"
                )
            hits = (
                (container.values == _as_bytes(item)).astype(np.int64)
                if container.values.size
                else np.zeros(0, np.int64)
            )
            if hits.ndim == 0:
                hits = np.full(container.values.size, int(hits), np.int64)
            counts = np.concatenate([[0], np.cumsum(hits)])
            return counts[container.splits[1:]] > counts[container.splits[:-1]]
        if isinstance(container, (list, tuple, str)):
            value = self._vec(item, n)
            if not isinstance(value, _Vec):
                try:
                    return np.full(n, value in container)
                except TypeError as e:
                    raise self._error(str(e)) from None
            if isinstance(container, str):
                raise self._error("'feature in text' is not supported; compare with ==")
            out = np.zeros(n, bool)
            for c in container:
                out |= self._compare(ast.Eq(), value, c, n)
            return out
        raise self._error("'in' needs a feature or a list on its right")

    def _call(self, fn: str, x: Any, n: int) -> Any:
        if fn == "len":
            if isinstance(x, _Rows):
                return _Vec("int64", x.steps if x.steps is not None else x.lengths, np.ones(n, bool))
            if isinstance(x, (list, tuple, str, bytes)):
                return len(x)
            raise self._error("len() of something other than a feature or a list")
        if fn == "abs":
            x = self._vec(x, n)
            if isinstance(x, _Vec) and _numeric(x.kind):
                return _Vec(x.kind, np.abs(x.values), x.valid)
            if isinstance(x, (int, float)):
                return abs(x)
            raise self._error("abs() of something other than a number")
        if not isinstance(x, _Rows):
            if isinstance(x, (list, tuple)) and all(isinstance(v, (int, float)) for v in x):
                reducers: dict[str, Callable[[Any], Any]] = {"min": min, "max": max, "sum": sum, "any": any, "all": all}
                return reducers[fn](x)
            raise self._error(f"{fn}() of something other than a feature or a list of numbers")
        if x.kind == "bytes":
            raise self._error(f"{fn}() of the bytes feature {x.name!r}")
        lengths = x.lengths
        nonempty = lengths > 0
        starts = x.splits[:-1][nonempty]
        if fn in ("any", "all"):
            truth = (x.values != 0).astype(np.int64)
            counts = np.concatenate([[0], np.cumsum(truth)])
            trues = counts[x.splits[1:]] - counts[x.splits[:-1]]
            return _Vec("bool", (trues > 0) if fn == "any" else (trues == lengths), np.ones(n, bool))
        ufunc = {"min": np.minimum, "max": np.maximum, "sum": np.add}[fn]
        values = np.zeros(n, x.values.dtype)
        if starts.size:
            values[nonempty] = ufunc.reduceat(x.values, starts)
        return _Vec(x.kind, values, np.ones(n, bool) if fn == "sum" else nonempty)
