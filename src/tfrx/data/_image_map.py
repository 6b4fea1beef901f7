"""Image maps fused with ``batch``: the tutorials' parse + decode + resize as one batched native call.

``TFRecordDataset(files).map(parse).map(decode).map(resize).batch(n)``, or
one map function doing all three (``tf.io.parse_single_example``,
``tf.io.decode_jpeg`` / ``decode_image``, ``tf.image.resize``, under
``import tfrx.tf as tf`` or with ``tfrx.image``'s functions), runs as
``batch(n).parse(spec)`` (batch-native over records) and one
:func:`tfrx.image.decode_and_resize` per batch: no Python call per record,
the images decoded and resized on the usable cores without the GIL.

Recognition traces the functions once when ``batch`` is called, as
``tf.data`` traces a map function: each is called with placeholders that
stand for the element, and the tfrx functions above record what they would
do instead of doing it. Besides those calls a function may index the parsed
dict, build tuples and dicts, cast (``tf.cast``, ``convert_image_dtype``)
and do arithmetic with constants (``image / 255``). Anything else with the
element's value (NumPy calls, ``if`` on a value, ``.shape``, another image
function) ends the trace, and the maps run one element at a time as before;
``explain()`` says why at the map. Only chains that decode an image are
traced (the functions' code names ``decode_jpeg`` or ``decode_image``, or a
function they call does), so other maps are never called on placeholders.

The fused batches equal the unfused ones bit for bit: every leaf is
computed by the same functions on the same values, either per element or
on the whole batch where that is the same arithmetic (casts, arithmetic with
constants, which NumPy does element by element), and the decode + resize by
``decode_and_resize``, which equals the per-image calls stacked.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext
from tfrx.data._structure import map_structure, stack
from tfrx.image import decode_and_resize, decode_image, decode_jpeg
from tfrx.parsing import FixedLenFeature

__all__ = ["ImageMapBatchDataset", "fuse_image_maps", "mentions_images"]

_IMAGE_NAMES = frozenset({"decode_jpeg", "decode_image"})
_KNOWN = (decode_jpeg, decode_image)


class _NotFusable(Exception):
    """The traced function did something with an element's value that only running it per element can do."""


class Traced:
    """What a map function sees of an element while it is traced: every operation on it is recorded."""

    __slots__ = ("op", "inputs", "args")

    def __init__(self, op: str, inputs: tuple = (), **args: Any) -> None:
        self.op = op
        self.inputs = inputs
        self.args = args

    def __tfrx_trace__(self, op: str, **args: Any) -> Any:
        if op == "parse_single_example":
            if self.op != "element" or self.args["path"]:
                raise _NotFusable("parse_single_example of something other than the record")
            features = args["features"]
            return {k: Traced("feature", (self,), key=k, spec=features[k], features=features) for k in features}
        return Traced(op, (self,), **args)

    def __getitem__(self, key: Any) -> Traced:
        if self.op == "element":
            return Traced("element", (), path=self.args["path"] + (key,))
        raise _NotFusable("indexes into a decoded or parsed value")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise _NotFusable(f"reads .{name} of a value")

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise _NotFusable("uses a value in Python (if, len, iteration, NumPy or a conversion)")

    __bool__ = __len__ = __iter__ = __index__ = __int__ = __float__ = __array__ = __contains__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse

    def __eq__(self, other: object) -> Any:
        raise _NotFusable("compares a value")

    __ne__ = __eq__
    __hash__ = object.__hash__

    def _binary(self, other: Any, ufunc: Any, reflected: bool) -> Traced:
        if isinstance(other, Traced):
            raise _NotFusable("combines two values of the element")
        if isinstance(other, (bool, np.bool_)) or not isinstance(other, (int, float, np.number, np.ndarray)):
            raise _NotFusable(f"does arithmetic with a {type(other).__name__}")
        return Traced("binary", (self,), ufunc=ufunc, const=other, reflected=reflected)

    def __add__(self, o: Any) -> Traced:
        return self._binary(o, np.add, False)

    def __radd__(self, o: Any) -> Traced:
        return self._binary(o, np.add, True)

    def __sub__(self, o: Any) -> Traced:
        return self._binary(o, np.subtract, False)

    def __rsub__(self, o: Any) -> Traced:
        return self._binary(o, np.subtract, True)

    def __mul__(self, o: Any) -> Traced:
        return self._binary(o, np.multiply, False)

    def __rmul__(self, o: Any) -> Traced:
        return self._binary(o, np.multiply, True)

    def __truediv__(self, o: Any) -> Traced:
        return self._binary(o, np.true_divide, False)

    def __rtruediv__(self, o: Any) -> Traced:
        return self._binary(o, np.true_divide, True)


# ---------------------------------------------------------------- which functions to trace
def mentions_images(fn: Callable, depth: int = 3) -> bool:
    """Whether ``fn`` is, or its code (or a function it calls by a global name) names, an image decoder."""
    fn = inspect.unwrap(fn)
    while hasattr(fn, "func") and callable(fn.func):  # functools.partial
        fn = fn.func
    if any(fn is k or getattr(fn, "__wrapped__", None) is k for k in _KNOWN):
        return True
    code = getattr(fn, "__code__", None)
    if code is None:
        call = getattr(type(fn), "__call__", None)
        code = getattr(call, "__code__", None)
    if code is None:
        return False
    names = _names(code)
    if names & _IMAGE_NAMES:
        return True
    if depth <= 0:
        return False
    cells = [c.cell_contents for c in getattr(fn, "__closure__", None) or () if _filled(c)]
    if any(callable(c) and not isinstance(c, type) and mentions_images(c, depth - 1) for c in cells):
        return True
    globals_ = getattr(fn, "__globals__", {})
    return any(
        callable(globals_.get(n)) and not isinstance(globals_.get(n), type) and mentions_images(globals_[n], depth - 1)
        for n in names
        if n in globals_ and getattr(globals_[n], "__module__", "") not in ("builtins",)
    )


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _names(code: Any) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            out |= _names(c)
    return out


# ---------------------------------------------------------------- tracing
def _root(fn: Callable) -> Any:
    """The placeholder element for ``fn``: a tuple of components when it takes several positional arguments."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return Traced("element", path=())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if len(required) > 1 and not any(p.kind == p.VAR_POSITIONAL for p in params):
        return tuple(Traced("element", path=(i,)) for i in range(len(required)))
    return Traced("element", path=())


def _call(fn: Callable, value: Any) -> Any:
    return fn(*value) if type(value) is tuple else fn(value)


def _describe_node(node: Any) -> str:
    if not isinstance(node, Traced):
        return repr(node)
    if node.op == "element":
        return "element" + "".join(f"[{k!r}]" for k in node.args["path"])
    if node.op == "feature":
        return f"feature {node.args['key']!r}"
    inner = _describe_node(node.inputs[0])
    if node.op == "resize":
        h, w = node.args["size"]
        return f"resize({inner}, {h}x{w}, {node.args['method']})"
    return f"{node.op}({inner})"


class FusionPlan:
    """What a traced chain of maps computes, per batch."""

    def __init__(self, output: Any, names: list[str], num_parallel_calls: int) -> None:
        self.output = output
        self.names = names
        self.num_parallel_calls = num_parallel_calls
        self.spec: dict | None = None
        self.tuple_root = 0  # the number of components of a tuple element, 0 for another element
        leaves: list = []
        map_structure(leaves.append, output)
        self.leaves = leaves
        self._check(output)

    # -------------------------------------------------------- checks at trace time
    def _check(self, output: Any) -> None:
        if isinstance(output, list) or (isinstance(output, dict) and any(isinstance(v, list) for v in output.values())):
            raise _NotFusable("returns a list (batch makes one array of it); return a tuple or dict")
        decodes = 0
        for leaf in self.leaves:
            if isinstance(leaf, Traced):
                decodes += self._check_node(leaf, top=True)
        if not decodes:
            raise _NotFusable("decodes no image into the result")
        self._check_element_use()

    def _check_node(self, node: Traced, top: bool = False) -> int:
        op = node.op
        if op == "element":
            return 0
        if op == "feature":
            spec = node.args["spec"]
            if not isinstance(spec, FixedLenFeature):
                raise _NotFusable(f"returns feature {node.args['key']!r}, a {type(spec).__name__} (not stacked alike)")
            features = node.args["features"]
            if self.spec is None:
                self.spec = features
            elif self.spec is not features and self.spec != features:
                raise _NotFusable("parses the record twice with different specs")
            return 0
        if op in ("decode_jpeg", "decode_image"):
            self._check_source(node.inputs[0])
            return 1
        if op == "resize":
            inner = node.inputs[0]
            if not (isinstance(inner, Traced) and inner.op in ("decode_jpeg", "decode_image")):
                raise _NotFusable(f"resizes {_describe_node(inner)}, not a decoded image")
            return self._check_node(inner)
        if op in ("cast", "convert_image_dtype", "binary"):
            return self._check_node(node.inputs[0])
        raise _NotFusable(f"calls {op}")

    def _check_source(self, node: Any) -> None:
        if not isinstance(node, Traced) or node.op not in ("element", "feature"):
            raise _NotFusable(f"decodes {_describe_node(node)}, not a record's bytes")
        if node.op == "feature":
            spec = node.args["spec"]
            if not isinstance(spec, FixedLenFeature) or tuple(spec.shape) != () or spec.dtype.name != "string":
                raise _NotFusable(f"decodes feature {node.args['key']!r}, not a FixedLenFeature([], string)")
            self._check_node(node)

    def _check_element_use(self) -> None:
        if self.spec is None:
            return
        for node in _walk(self.leaves):
            if node.op == "element":
                raise _NotFusable("uses the serialized record besides parsing it")

    # -------------------------------------------------------- per batch
    def __call__(self, *parts: Any) -> Any:
        # map hands a batch of tuples over as positional arguments, as it would the elements; elements of
        # another arity than the traced one fail as the user's function would have.
        if len(parts) != (self.tuple_root or 1):
            raise TypeError(
                f"{self.names[0]}() was traced with {self.tuple_root or 1} argument(s) but the elements have {len(parts)}"
            )
        batch = parts if self.tuple_root else parts[0]
        n = _rows(batch)
        memo: dict[int, Any] = {}

        def leaf(value: Any) -> Any:
            if isinstance(value, Traced):
                return self._value(value, batch, memo)
            return stack([value] * n)

        return map_structure(leaf, self.output)

    def _value(self, node: Traced, batch: Any, memo: dict[int, Any]) -> Any:
        key = id(node)
        if key in memo:
            return memo[key]
        op, args = node.op, node.args
        if op == "element":
            value = batch
            for k in args["path"]:
                value = value[k]
        elif op == "feature":
            value = batch[args["key"]]
        elif op == "resize":
            value = self._decode_resize(node, batch, memo)
        elif op in ("decode_jpeg", "decode_image"):
            value = self._decode(node, batch, memo)
        else:
            value = _elementwise(node, self._value(node.inputs[0], batch, memo))
        memo[key] = value
        return value

    def _decode_resize(self, node: Traced, batch: Any, memo: dict[int, Any]) -> np.ndarray:
        decode = node.inputs[0]
        contents = self._value(decode.inputs[0], batch, memo)
        a = decode.args
        fmt = "jpeg" if decode.op == "decode_jpeg" else "image"
        extra = (
            {k: a[k] for k in ("ratio", "fancy_upscaling", "try_recover_truncated", "dct_method")}
            if fmt == "jpeg"
            else {"dtype": a["dtype"]}
        )
        return decode_and_resize(
            contents,
            node.args["size"],
            channels=a["channels"],
            method=node.args["method"],
            antialias=node.args["antialias"],
            preserve_aspect_ratio=node.args["preserve_aspect_ratio"],
            format=fmt,
            num_parallel_calls=self.num_parallel_calls,
            **extra,
        )

    def _decode(self, node: Traced, batch: Any, memo: dict[int, Any]) -> Any:
        contents = self._value(node.inputs[0], batch, memo)
        a = dict(node.args)
        fn = decode_jpeg if node.op == "decode_jpeg" else decode_image
        return stack([fn(c, **a) for c in contents])

    def describe(self) -> str:
        shown = ", ".join(_describe_node(leaf) for leaf in self.leaves if isinstance(leaf, Traced))
        parse = "parse + " if self.spec is not None else ""
        return f"{parse}decode + resize per batch in one native call ({shown})"


def _walk(leaves: list) -> list[Traced]:
    out: list[Traced] = []
    todo = [leaf for leaf in leaves if isinstance(leaf, Traced)]
    while todo:
        node = todo.pop()
        out.append(node)
        if node.op != "feature":  # (a feature's input is the record it was parsed from)
            todo.extend(i for i in node.inputs if isinstance(i, Traced))
    return out


def _rows(batch: Any) -> int:
    """The batch's number of elements: the first dimension of its first array."""
    todo = [batch]
    while todo:
        value = todo.pop(0)
        if isinstance(value, dict):
            todo.extend(value.values())
        elif isinstance(value, tuple):
            todo.extend(value)
        elif isinstance(value, np.ndarray) and value.ndim:
            return len(value)
    raise ValueError("a batch without arrays")


def _elementwise(node: Traced, value: Any) -> Any:
    """A cast or arithmetic with a constant on the whole batch: NumPy computes each element alike."""
    args = node.args
    if node.op == "cast":
        dtype = np.dtype(args["dtype"])
        return np.asarray(value) != 0 if dtype == np.bool_ else np.asarray(value).astype(dtype)
    if node.op == "convert_image_dtype":
        from tfrx.image import convert_image_dtype

        return convert_image_dtype(value, args["dtype"], args["saturate"])
    ufunc, const = args["ufunc"], args["const"]
    return ufunc(const, value) if args["reflected"] else ufunc(value, const)


def trace(maps: list) -> tuple[FusionPlan | None, int, str]:
    """Traces a chain of maps (bottom first); returns (plan, index of the first map fused, why not)."""
    value: Any = None
    start = 0
    why = ""
    tuple_root = 0
    for i, m in enumerate(maps):
        fn = m._fn
        if value is None:
            start, value = i, _root(fn)
            tuple_root = len(value) if type(value) is tuple else 0
        try:
            value = _call(fn, value)
        except _NotFusable as e:
            why = f"map({_short(fn)}) {e}"
            value = None
        except Exception as e:  # noqa: BLE001 - any failure on a placeholder means: run it per element
            why = f"map({_short(fn)}) cannot be traced: {type(e).__name__}: {e}"
            value = None
    if value is None:
        return None, len(maps), why
    threads = max((m._threads if m._parallel else 1) for m in maps[start:])
    try:
        plan = FusionPlan(value, [_short(m._fn) for m in maps[start:]], threads)
        plan.tuple_root = tuple_root
        return plan, start, ""
    except _NotFusable as e:
        return None, len(maps), f"map({_short(maps[-1]._fn)}) {e}"


def _short(fn: Callable) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


class ImageMapBatchDataset(Dataset):
    """``batch`` over image maps, fused: ``input.batch(n)[.parse(spec)]`` and the plan per batch."""

    def __init__(self, base: Dataset, plan: FusionPlan, batch_size: int, drop_remainder: bool) -> None:
        super().__init__(base)
        self._fusion = plan
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    def _fused(self, plan: FusionPlan | None = None) -> Dataset:
        plan = self._fusion if plan is None else plan
        batches = self._inputs[0].batch(self.batch_size, self.drop_remainder)
        if plan.spec is not None:
            batches = batches.parse(plan.spec)
        return batches.map(plan)

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        plan = self._fusion
        if ctx.max_threads is not None:  # this iteration's limit, on a copy: the dataset is shared
            plan = copy.copy(plan)
            plan.num_parallel_calls = max(1, min(plan.num_parallel_calls, ctx.max_threads))
        return self._fused(plan)._iterator(ctx)

    def cardinality(self) -> int:
        return self._fused().cardinality()

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        return self._fused()._inputs

    def _describe(self) -> str:
        drop = ", drop_remainder=True" if self.drop_remainder else ""
        maps = " + ".join(f"map({n})" for n in self._fusion.names)
        return f"batch({self.batch_size}{drop}) fused with {maps}: {self._fusion.describe()}"


def fuse_image_maps(top: Any, batch_size: int, drop_remainder: bool, plain: Dataset) -> Dataset:
    """``plain`` (``top.batch(...)``) as an :class:`ImageMapBatchDataset` when the maps ending at ``top`` decode images
    and trace; else ``plain``, with the reason kept on ``top`` for ``explain()``."""
    chain = []
    d = top
    while type(d) is type(top):
        chain.append(d)
        d = d._inputs[0]
    chain.reverse()
    for m in chain:
        m._before_batch = True
    if not any(mentions_images(m._fn) for m in chain):
        return plain
    plan, start, why = trace(chain)
    if plan is None:
        top._not_fused = why
        return plain
    return ImageMapBatchDataset(chain[start]._inputs[0], plan, batch_size, drop_remainder)
