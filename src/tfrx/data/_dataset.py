"""The Dataset base: iteration, state, cardinality and the registry of transformations.

A :class:`Dataset` is an immutable description of a pipeline; iterating it
creates a :class:`DatasetIterator`, which holds all mutable state (positions,
buffers, threads). Every iterator can report a small JSON-serialisable state
(:meth:`DatasetIterator.state_dict`) and be restored from one, so that a
restored iterator yields exactly the remaining elements.

Transformations live in their own modules (``shuffle.py``, ``batch.py``, ...)
and attach themselves to :class:`Dataset` with :func:`transformation`; this
module never imports them.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Self, TypeVar, overload

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import numpy as np

    from tfrx.data._pipeline_options import Options

from tfrx.options import AUTOTUNE, resolve_parallelism, usable_cores

from tfrx.data._provenance import Provenance

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "DatasetIterator",
    "IterContext",
    "transformation",
    "usable_cores",
    "resolve_parallelism",
]

#: :meth:`Dataset.cardinality` of an endless dataset (``tf.data.INFINITE_CARDINALITY``).
INFINITE_CARDINALITY = -1
#: :meth:`Dataset.cardinality` when the count is unknown without reading (``tf.data.UNKNOWN_CARDINALITY``).
UNKNOWN_CARDINALITY = -2


@dataclass(frozen=True)
class IterContext:
    """What an iterator is told when it is created.

    ``epoch`` identifies this pass over the dataset: the top-level iteration
    count, extended by one number per enclosing ``repeat``. Seeded shuffles
    derive their order from (seed, epoch), so orders are reproducible and a
    restored iterator sees the epoch it was saved in. ``deterministic`` (the
    default of stages given ``deterministic=None``) and ``max_threads`` (the
    most threads a parallel stage runs) come from the options of every
    :meth:`Dataset.with_options` in the pipeline.
    """

    epoch: tuple[int, ...] = (0,)
    deterministic: bool | None = None
    max_threads: int | None = None

    def for_epoch(self, e: int) -> IterContext:
        return replace(self, epoch=self.epoch + (int(e),))

    def with_epoch(self, epoch) -> IterContext:
        return replace(self, epoch=tuple(int(x) for x in epoch))


class DatasetIterator(Iterator):
    """Iterator over a dataset, with exact-resume state and explicit shutdown.

    Subclasses implement ``__next__``, ``get_state`` and ``set_state``; those
    that own threads or files also override ``close``. ``state_dict`` /
    ``load_state_dict`` are PyTorch-style aliases. Iterators made from input
    datasets are listed in ``_children`` so that ``close`` reaches them.
    """

    _children: tuple = ()

    def __iter__(self) -> DatasetIterator:
        return self

    def __next__(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def get_state(self) -> dict:
        """A JSON-serialisable snapshot; restoring it resumes right after the last element returned."""
        raise NotImplementedError(f"{type(self).__name__} does not support state")

    def set_state(self, state: dict) -> None:
        """Restores a snapshot from :meth:`get_state` (of an iterator over an equal dataset)."""
        raise NotImplementedError(f"{type(self).__name__} does not support state")

    def state_dict(self) -> dict:
        """:meth:`get_state` under the name PyTorch's checkpointing protocol uses."""
        return self.get_state()

    def load_state_dict(self, state: dict) -> None:
        """:meth:`set_state` under the name PyTorch's checkpointing protocol uses."""
        self.set_state(state)

    def ready(self) -> bool:
        """Read-ahead iterators (``Dataset._read_ahead_iterator``): whether ``next`` would not wait."""
        raise NotImplementedError(f"{type(self).__name__} does not read ahead")

    def provenance(self, state: dict) -> Provenance | None:
        """The file and record of the last element read before ``state`` (one of this iterator's states).

        By default a stage with one input asks that input about the input's
        state, kept under ``"parent"``; file readers answer from their position.
        """
        children = [c for c in self._children if c is not None]
        if len(children) == 1 and isinstance(state, dict) and "parent" in state:
            return children[0].provenance(state["parent"])
        return None

    def close(self) -> None:
        """Stops background threads and releases resources; iteration then ends."""
        for child in self._children:
            if child is not None:
                child.close()

    def __enter__(self) -> DatasetIterator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _ViewedIterator(DatasetIterator):
    """Another iterator's elements through a view function; state, readiness and provenance are the other's."""

    def __init__(self, inner: DatasetIterator, view: Callable[[Any], Any]) -> None:
        self._inner = inner
        self._view = view
        self._children = (inner,)

    def __next__(self):
        return self._view(next(self._inner))

    def get_state(self) -> dict:
        return self._inner.get_state()

    def set_state(self, state: dict) -> None:
        self._inner.set_state(state)

    def ready(self) -> bool:
        return self._inner.ready()

    def provenance(self, state: dict) -> Provenance | None:
        return self._inner.provenance(state)


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def transformation(fn: _F, *, static: bool = False) -> _F: ...
@overload
def transformation(fn: None = None, *, static: bool = False) -> Callable[[_F], _F]: ...
def transformation(fn: Callable | None = None, *, static: bool = False) -> Callable:
    """Attaches ``fn`` to :class:`Dataset` under its own name (a static method when ``static``).

    Type checkers do not see attributes set at run time: declare the method in the
    ``TYPE_CHECKING`` block at the end of :class:`Dataset` too (tests/test_typing.py
    checks that the two signatures agree).
    """

    def register(f: _F) -> _F:
        setattr(Dataset, f.__name__, staticmethod(f) if static else f)
        return f

    return register(fn) if fn is not None else register


class Dataset:
    """A lazily evaluated pipeline of elements, mirroring ``tf.data.Dataset``.

    Elements are NumPy arrays and scalars, ``bytes``, and dicts / tuples of
    them. Sources: :meth:`from_tensor_slices`, :meth:`from_generator`,
    :meth:`range`, :meth:`list_files` and :class:`tfrx.TFRecordDataset`.
    Every transformation returns a new dataset; iterate with ``for`` or
    ``iter(ds)``, whose iterator has ``state_dict()`` / ``load_state_dict()``.
    """

    #: Input datasets, in order. Sources have none. Rewrites (sharding for
    #: workers and ranks) rebuild a pipeline by replacing these.
    _inputs: tuple[Dataset, ...] = ()

    #: When set on any stage of the pipeline, applied to every element a top-level iteration
    #: returns and to the arguments of map/filter/interleave functions; its ``plain`` method undoes
    #: it for ``as_numpy_iterator``. ``tfrx.tf`` sets one on the datasets it makes, to hand out
    #: tensors; None here.
    _element_view: Any = None

    def __init__(self, *inputs: Dataset) -> None:
        self._inputs = tuple(inputs)
        self._iterations = 0  # passes started with iter(ds): the default epoch of the next one

    def _next_epoch(self) -> int:
        e = self._iterations
        self._iterations = e + 1
        return e

    # ------------------------------------------------------------------ iteration
    def _iterator(self, ctx: IterContext) -> DatasetIterator:  # pragma: no cover - abstract
        raise NotImplementedError

    def __iter__(self) -> DatasetIterator:
        return self._viewed(self._iterator(self._root_context(self._next_epoch())))

    def iterator(self, *, epoch: int | None = None) -> DatasetIterator:
        """An iterator; ``epoch`` fixes which reshuffle of seeded shuffles it uses (default: the next one)."""
        e = self._next_epoch() if epoch is None else int(epoch)
        return self._viewed(self._iterator(self._root_context(e)))

    def _pipeline_element_view(self) -> Any:
        """The ``_element_view`` of this stage or the first of its inputs (depth first) that has one."""
        if self._element_view is not None:
            return self._element_view
        for d in self._inputs:
            view = d._pipeline_element_view()
            if view is not None:
                return view
        return None

    def _viewing_function(self, fn: Callable) -> Callable:
        """``fn`` taking its arguments through this pipeline's element view, if it has one (``tfrx.tf``'s
        pipelines give ``map``/``filter``/``interleave`` functions tensors, as TensorFlow's do); classes
        (``interleave(TFRecordDataset)``) are left as they are."""
        view = self._pipeline_element_view()
        if view is None or isinstance(fn, type):
            return fn

        @functools.wraps(fn)
        def call(*args: Any) -> Any:
            return fn(*[view(a) for a in args])

        return call

    def _viewed(self, it: DatasetIterator) -> DatasetIterator:
        view = self._pipeline_element_view()
        return it if view is None else _ViewedIterator(it, view)

    # ------------------------------------------------------------------ options
    def _own_options(self):
        """Options this stage sets for the whole pipeline (``with_options``), or None."""
        return None

    def _pipeline_options(self):
        """The options set anywhere in this pipeline, merged in pipeline order (later wins), or None."""
        found = [o for o in (d._pipeline_options() for d in self._inputs) if o is not None]
        own = self._own_options()
        if own is not None:
            found.append(own)
        if not found:
            return None
        merged = found[0]
        for o in found[1:]:
            merged = merged.merge(o)
        return merged

    def _root_context(self, epoch: int) -> IterContext:
        """The context of a top-level iteration: the pipeline's options apply to every stage (as in tf.data)."""
        options = self._pipeline_options()
        ctx = IterContext(epoch=(int(epoch),))
        return ctx if options is None else replace(ctx, **options._context())

    def as_numpy_iterator(self) -> DatasetIterator:
        """An iterator of plain NumPy values (``tf.data`` name): ``iter(ds)`` for datasets tfrx makes,
        without the tensor view for those ``tfrx.tf`` makes."""
        it = self._iterator(self._root_context(self._next_epoch()))
        view = self._pipeline_element_view()
        return it if view is None else _ViewedIterator(it, view.plain)

    def take_all(self) -> list:
        """All elements as a list (for tests and small datasets)."""
        with iter(self) as it:
            return list(it)

    # ------------------------------------------------------------------ size
    def cardinality(self) -> int:
        """Number of elements, ``INFINITE_CARDINALITY`` (-1) or ``UNKNOWN_CARDINALITY`` (-2)."""
        return UNKNOWN_CARDINALITY

    def __len__(self) -> int:
        n = self.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("the dataset is infinite")
        if n < 0:
            raise TypeError("the dataset length is unknown; use cardinality() to test for this")
        return n

    def __bool__(self) -> bool:
        return True

    # ------------------------------------------------------------------ composition
    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``, for chaining reusable transformations."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"apply: the function must return a Dataset, got {type(out).__name__}")
        return out

    @property
    def element_spec(self) -> Any:  # pragma: no cover - informational
        """Not tracked (tf.data's element_spec describes graph tensors); look at an element instead."""
        raise NotImplementedError("element specs are not tracked; look at an element instead")

    def _with_inputs(self, inputs: tuple[Dataset, ...]) -> Self:
        """A copy of this dataset reading from other inputs (for pipeline rewrites)."""
        clone = copy.copy(self)
        clone._inputs = tuple(inputs)
        clone._iterations = 0
        return clone

    def _read_ahead_iterator(self, ctx: IterContext) -> DatasetIterator | None:
        """An iterator that reads ahead on its own thread(s) and has ``ready()``, if this dataset
        has a cheaper one than a generic prefetch (a parallel ``interleave`` asks)."""
        return None

    def _for_handoff(self, outputs_from: Any) -> tuple[Dataset, bool]:
        """This pipeline as a worker process runs it to hand its batches over through shared memory.

        Returns ``(pipeline, bytes_as_views)``. A stage that can do better
        than its default says so by overriding this: ``parse`` gives its bytes
        features as ``BytesArray`` views and writes its numeric outputs into
        the memory ``outputs_from()`` hands out (a slot of the worker's ring);
        ``prefetch`` steps aside (the loader prefetches). The default: the
        pipeline as it is, with ``bytes`` objects.
        """
        return self, False

    def _with_outputs_from(self, take: Any) -> Dataset | None:
        """This stage writing its numeric outputs into the memory ``take()`` hands out (a reused pinned
        buffer, a ring slot), or None where the stage makes no arrays of its own (the default): ``parse``
        overrides it. For a consumer that rewrites a pipeline, without naming the stages' classes."""
        return None

    @classmethod
    def _interleaved_record_batches(
        cls, files: Dataset, cycle_length: int, block_length: int, batch_size: int, drop_remainder: bool
    ) -> Dataset | None:
        """For ``files.interleave(cls, cycle_length, block_length).batch(batch_size)``: the batch-native
        form of that pipeline when ``cls``, used as ``interleave``'s ``map_func``, reads records from each
        file name (``TFRecordDataset``), else ``None``."""
        return None

    # ------------------------------------------------------------------ the batch-native plane
    def _record_batches(self, batch_size: int, drop_remainder: bool) -> Dataset | None:
        """The batch-native form of ``self.batch(batch_size, drop_remainder)``, or ``None``.

        A dataset whose elements are serialized records it can hand over in
        :class:`tfrx.RecordBatch` es (no Python object per record) returns a
        dataset of ``RecordBatch`` es holding exactly the records, in the same
        order, that ``batch`` would stack; ``parse`` reads from it. Others
        return ``None`` and say why in :meth:`_why_not_record_batches`.
        """
        return None

    def _record_pieces(self, max_records: int, max_bytes: int) -> Dataset | None:
        """This dataset's records, in order, as ``RecordBatch`` es of at most ``max_records`` records
        and about ``max_bytes`` bytes (the chunks a batch-native ``shuffle`` draws from), or ``None``."""
        return None

    def _strided_record_pieces(
        self, num_shards: int, index: int, max_records: int, max_bytes: int | None
    ) -> Dataset | None:
        """Records ``index, index + num_shards, ...`` of this dataset, in order, as ``RecordBatch`` es of
        at most ``max_records`` records (exactly that many but where a file ends when ``max_bytes`` is
        ``None``, else about ``max_bytes`` bytes) read by a source that need not read the other records'
        bytes (``shard`` asks), or ``None``."""
        return None

    def _natively_batched(self) -> Dataset | None:
        """A dataset of ``RecordBatch`` es with this dataset's elements (batches of records), or ``None``."""
        return None

    def _why_not_natively_batched(self) -> str:
        """Why :meth:`_natively_batched` is ``None`` here (shown by :meth:`explain`)."""
        return "its input is not batches of records (batch(n).parse(spec) over records takes the batch-native path)"

    def _why_not_record_batches(self) -> str:
        """Why :meth:`_record_batches` is ``None`` here (shown by :meth:`explain`)."""
        if self._inputs:
            return f"{self._describe()} makes its own elements, not records read from files"
        return f"{self._describe()} does not read records from files"

    def _describe(self) -> str:
        """This stage in one line of :meth:`explain`."""
        name = type(self).__name__
        return name[: -len("Dataset")] if name.endswith("Dataset") and name != "Dataset" else name

    def explain(self, file=None) -> None:
        """Prints the plan this pipeline runs, one stage a line from the last stage down to the sources.

        It says which stages run batch-native (records in ``RecordBatch`` es
        from the reader's buffers, no Python object per record) and, for a
        ``parse`` that cannot, why not.
        """
        print(self._plan(), file=file)

    def _plan(self) -> str:
        lines: list[str] = []

        def walk(ds: Dataset, depth: int) -> None:
            lines.append("  " * depth + ds._describe())
            for d in ds._plan_inputs():
                walk(d, depth + 1)

        walk(self, 0)
        return "\n".join(lines)

    def _plan_inputs(self) -> tuple[Dataset, ...]:
        """The datasets this stage reads, as :meth:`explain` shows them."""
        return self._inputs

    def _shard_source(self, num_shards: int, index: int) -> Dataset | None:
        """For sources: this source restricted to shard ``index``; ``None`` means shard element-wise."""
        return None

    def _for_shard(self, key: str) -> Dataset:
        """This stage as used by one shard of a sharded pipeline (e.g. a cache file per shard)."""
        return self

    def _rewrite(self, fn: Callable[[Dataset], Dataset]) -> Dataset:
        """The pipeline rebuilt bottom-up, every stage ``d`` (with rebuilt inputs) replaced by ``fn(d)``."""
        if not self._inputs:
            return fn(self)
        return fn(self._with_inputs(tuple(d._rewrite(fn) for d in self._inputs)))

    def _rewrite_sources(self, fn: Callable[[Dataset], Dataset]) -> Dataset:
        """This pipeline with every source ``s`` replaced by ``fn(s)``."""
        return self._rewrite(lambda d: d if d._inputs else fn(d))

    def __repr__(self) -> str:
        n = self.cardinality()
        size = "infinite" if n == INFINITE_CARDINALITY else "unknown" if n < 0 else str(n)
        return f"<{type(self).__name__} cardinality={size}>"

    if TYPE_CHECKING:
        # ---------------------------------------------------------- transformations
        # Each module of tfrx.data attaches its transformation at import (transformation()),
        # which type checkers cannot follow; these declarations repeat the signatures so that
        # ``ds.map(f).batch(32)`` is typed. tests/test_typing.py checks that they match.
        def to_torch(self, **kwargs): ...
        def to_jax(self, **kwargs): ...
        def to_keras(self, **kwargs): ...
        def batch(
            self,
            batch_size: int,
            drop_remainder: bool = False,
            num_parallel_calls=None,
            deterministic=None,
        ) -> Dataset: ...
        def bucket_by_sequence_length(
            self,
            element_length_func: Callable,
            bucket_boundaries: Sequence[int],
            bucket_batch_sizes: Sequence[int],
            padded_shapes=None,
            padding_values=None,
            pad_to_bucket_boundary: bool = False,
            no_padding: bool = False,
            drop_remainder: bool = False,
            name: str | None = None,
        ) -> Dataset: ...
        def cache(self, filename: str = "") -> Dataset: ...
        @staticmethod
        def choose_from_datasets(
            datasets: Sequence[Dataset],
            choice_dataset: Dataset,
            stop_on_empty_dataset: bool = True,
        ) -> Dataset: ...
        def concatenate(self, dataset: Dataset) -> Dataset: ...
        def enumerate(self, start: int = 0) -> Dataset: ...
        def filter(self, predicate: Callable) -> Dataset: ...
        def group_by_window(
            self,
            key_func: Callable,
            reduce_func: Callable[[np.int64, Dataset], Dataset],
            window_size: int | None = None,
            window_size_func: Callable | None = None,
            name: str | None = None,
        ) -> Dataset: ...
        def ignore_errors(self, log_warning: bool = False, name: str | None = None) -> Dataset: ...
        def interleave(
            self,
            map_func: Callable[..., Dataset],
            cycle_length: int | None = None,
            block_length: int | None = None,
            num_parallel_calls: int | None = None,
            deterministic: bool | None = None,
        ) -> Dataset: ...
        def flat_map(self, map_func: Callable[..., Dataset]) -> Dataset: ...
        def map(
            self,
            map_func: Callable,
            num_parallel_calls: int | None = None,
            deterministic: bool | None = None,
        ) -> Dataset: ...
        def with_options(self, options: Options | None = None, *, deterministic: bool | None = None) -> Dataset: ...
        def options(self) -> Options: ...
        def padded_batch(
            self,
            batch_size: int,
            padded_shapes=None,
            padding_values=None,
            drop_remainder: bool = False,
        ) -> Dataset: ...
        def parse(
            self,
            spec: Any,
            num_parallel_calls: int | None = AUTOTUNE,
            deterministic: bool | None = None,
        ) -> Dataset: ...
        def prefetch(self, buffer_size: int | None = AUTOTUNE) -> Dataset: ...
        def rebatch(
            self,
            batch_size: int | Sequence[int],
            drop_remainder: bool = False,
            name: str | None = None,
        ) -> Dataset: ...
        def repeat(self, count: int | None = None) -> Dataset: ...
        @staticmethod
        def sample_from_datasets(
            datasets: Sequence[Dataset],
            weights=None,
            seed: int | None = None,
            stop_on_empty_dataset: bool = False,
            rerandomize_each_iteration: bool | None = None,
        ) -> Dataset: ...
        def save(
            self,
            path,
            compression: str | None = None,
            shard_func: Callable | None = None,
            checkpoint_args=None,
        ) -> None: ...
        @staticmethod
        def load(
            path,
            element_spec=None,
            compression: str | None = "auto",
            reader_func: Callable | None = None,
        ) -> Dataset: ...
        def scan(self, initial_state: Any, scan_func: Callable) -> Dataset: ...
        def shard(self, num_shards: int, index: int) -> Dataset: ...
        def shuffle(
            self,
            buffer_size: int,
            seed: int | None = None,
            reshuffle_each_iteration: bool = True,
        ) -> Dataset: ...
        def skip(self, count: int) -> Dataset: ...
        def snapshot(
            self,
            path,
            compression: str | None = "auto",
            reader_func: Callable | None = None,
            shard_func: Callable | None = None,
            name: str | None = None,
        ) -> Dataset: ...
        @staticmethod
        def from_tensor_slices(tensors: Any) -> Dataset: ...
        @staticmethod
        def from_tensors(tensors: Any) -> Dataset: ...
        @staticmethod
        def range(*args: int, dtype=np.int64, output_type=None, name: str | None = None) -> Dataset: ...
        @staticmethod
        def from_generator(
            generator: Callable[..., Iterable],
            output_types: Any = None,
            output_shapes: Any = None,
            args: tuple | None = None,
            output_signature: Any = None,
        ) -> Dataset: ...
        @staticmethod
        def list_files(
            file_pattern,
            shuffle: bool | None = None,
            seed: int | None = None,
            *,
            require_all_shards: bool = True,
        ) -> Dataset: ...
        def take(self, count: int) -> Dataset: ...
        def unbatch(self) -> Dataset: ...
        def window(
            self,
            size: int,
            shift: int | None = None,
            stride: int = 1,
            drop_remainder: bool = False,
        ) -> Dataset: ...
        @staticmethod
        def zip(*datasets: Any) -> Dataset: ...
