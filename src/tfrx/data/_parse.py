"""parse: serialized ``tf.train.Example`` records -> dicts of arrays, with the native parser.

``ds.parse(spec)`` parses every element of ``ds``: a batch (an object array
of ``bytes``, a list, or a :class:`tfrx.RecordBatch`) gives a batched dict,
as ``tf.io.parse_example`` does; a single record gives one example's dict.
``spec`` is a feature spec dict (``{"label": tfrx.FixedLenFeature([], tfrx.int64)}``)
or a parser object with a ``parse(batch)`` method (``tfrx.ExampleParser(spec)``,
``tfrx.SequenceExampleParser(...)``).

The fast path: when ``ds`` is a ``batch`` whose input can hand its records
over in ``RecordBatch`` es (:meth:`Dataset._record_batches`), the parser
reads those and no Python object is made per record.
``TFRecordDataset(files).batch(n).parse(spec)``: the reader fills each batch
in one buffer sized for it (``files.py``); with ``shuffle(m)`` before the
batch, the shuffle keeps the records in a native store and the parser reads
each batch's records where they lie (``shuffle.py``). The native
parser releases the GIL and splits each large batch over the usable cores
itself. A stage that turns records into other objects (``map`` before
``batch``) leaves the fast path: the batches are object arrays of ``bytes``,
and ``ds.explain()`` says which stage and why.

``num_parallel_calls``: with ``tfrx.AUTOTUNE`` (the default) or ``None``
each batch is parsed where the pipeline runs (the consumer's thread, or a
``prefetch`` thread), with the parser's own native threads for batches big
enough to split (>= 256 KiB and 64 records a thread); ``n > 1`` parses ``n``
batches at once on ``n`` threads, one native thread each. Measured on
Criteo-like and BERT-like batches of 256, the first costs 10-30% less CPU
time and gives more records per second (docs/benchmarks.md): the parser's
Python objects need the GIL, so batches parsed side by side mostly wait for
each other, and their outputs are made on one thread and freed on another.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np

from tfrx.data._dataset import AUTOTUNE, Dataset, resolve_parallelism, transformation
from tfrx.data._map import MapDataset
from tfrx.parsing import ExampleParser

__all__ = ["make_parser"]


def make_parser(spec: Any):
    """A parser object (with ``parse(batch)``) for a spec dict, or ``spec`` itself when it is one."""
    if hasattr(spec, "parse") and callable(spec.parse):
        return spec
    return ExampleParser(spec)


def _threads_keyword(fn) -> str | None:
    """The keyword ``fn`` takes a thread count by: ``num_parallel_calls`` (tfrx's parsers), ``num_threads``
    (a parser written for older releases), or none."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    return next((k for k in ("num_parallel_calls", "num_threads") if k in parameters), None)


class _Parse:
    """Parses batches; a single record (``bytes``) gives one example's dict, without a batch dimension.

    When batches are parsed on several threads at once, each call uses one
    thread (``num_parallel_calls=1``) so that the stages do not oversubscribe the
    cores; otherwise the parser picks its own thread count.
    """

    # A function giving an OutputArena (native) for the next call's numeric outputs, or None: see
    # ParseDataset._with_outputs_from.
    _take: Any = None

    def __init__(self, spec: Any, threads_per_call: int | None) -> None:
        self._parser = make_parser(spec)
        self._kwargs = {}
        keyword = _threads_keyword(self._parser.parse) if threads_per_call is not None else None
        if keyword is not None:
            self._kwargs[keyword] = threads_per_call
        self.__qualname__ = f"parse({type(self._parser).__name__})"

    def __call__(self, records):
        take = self._take
        if take is not None:
            arena = take()
            if arena is not None:
                with arena:
                    return self._call(records)
        return self._call(records)

    def _call(self, records):
        if isinstance(records, (bytes, np.bytes_)):
            single = getattr(self._parser, "parse_single", None)
            if single is not None:
                return single(bytes(records))
            out = self._parser.parse(np.array([bytes(records)], dtype=object), **self._kwargs)
            return {k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in out.items()}
        return self._parser.parse(records, **self._kwargs)


class ParseDataset(MapDataset):
    """``parse``: a map of the parser over batches (or records), on the batch-native path where there is one."""

    def __init__(self, batches: Dataset, spec: Any, num_parallel_calls: int | None, deterministic: bool | None) -> None:
        native = batches._natively_batched()
        self._why_not = None if native is not None else batches._why_not_natively_batched()
        if num_parallel_calls is None or num_parallel_calls == AUTOTUNE:
            fn, threads = _Parse(spec, None), None
        else:
            n = resolve_parallelism(num_parallel_calls)
            fn, threads = _Parse(spec, 1 if n > 1 else None), num_parallel_calls
        super().__init__(native if native is not None else batches, fn, threads, deterministic)

    def _for_handoff(self, outputs_from: Any) -> tuple[Dataset, bool]:
        # No stage of the user's follows (prefetch steps aside), so nobody sees the difference: bytes
        # features as BytesArray views (the main process makes each bytes object once, from the slot)
        # and numeric outputs written into the worker's ring slots.
        views = self._with_bytes_views()
        into_slots = (views if views is not None else self)._with_outputs_from(outputs_from)
        if into_slots is None:
            return self, False
        return into_slots, views is not None

    def _with_bytes_views(self) -> ParseDataset | None:
        """This parse with its bytes features as ``BytesArray`` (``bytes_as="views"``), or None when its
        parser is not a plain ``ExampleParser`` that makes ``bytes`` objects.

        For a consumer that turns the views back into object arrays of ``bytes``
        elsewhere (a DataLoader worker's shared-memory handoff: the main process
        makes the objects, the worker never does).
        """
        if not isinstance(self._fn, _Parse):
            return None
        parser = self._fn._parser
        if type(parser) is not ExampleParser or parser.bytes_as != "bytes":
            return None
        clone = self._with_fn()
        clone._fn._parser = ExampleParser(
            parser.features, num_parallel_calls=parser.num_parallel_calls, bytes_as="views"
        )
        return clone

    def _with_outputs_from(self, take: Any) -> ParseDataset | None:
        """This parse with each call's numeric outputs written into the memory ``take()`` hands out (a
        native ``OutputArena``: a DataLoader worker's shared-memory slot), or None when it is not tfrx's.

        When ``take()`` gives None, or an output does not fit, the output comes
        from the parser's usual pool.
        """
        if not isinstance(self._fn, _Parse):
            return None
        clone = self._with_fn()
        clone._fn._take = take
        return clone

    def _with_fn(self) -> Any:
        """A copy of this stage with a copy of its parse function (to change one setting of the copy)."""
        clone = copy.copy(self)
        clone._fn = copy.copy(self._fn)
        return clone

    def _describe(self) -> str:
        threads = f", num_parallel_calls={self._threads}" if self._parallel else ""
        text = f"parse({type(getattr(self._fn, '_parser', self._fn)).__name__}{threads})"
        if self._inputs[0]._natively_batched() is not None:
            return f"{text} on RecordBatch es (batch-native)"
        return f"{text}, not batch-native: {self._why_not}"


@transformation
def parse(
    self: Dataset, spec: Any, num_parallel_calls: int | None = AUTOTUNE, deterministic: bool | None = None
) -> Dataset:
    """Parses serialized Examples with ``spec``; batches of records from files take the batch-native path."""
    return ParseDataset(self, spec, num_parallel_calls, deterministic)
