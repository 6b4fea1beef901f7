"""with_options: pipeline-wide options, as ``tf.data.Options``.

Options apply to the whole pipeline, wherever ``with_options`` is called
(as in ``tf.data``): the options of every ``with_options`` in the pipeline
are merged, a later (outer) call winning where two set the same option, and
every stage sees the result. A stage's own argument (``map(...,
deterministic=True)``) wins over the pipeline's option.

Supported, with ``tf.data``'s spellings:

* ``deterministic`` (also ``experimental_deterministic``): the default of
  every stage whose ``deterministic`` argument was left as ``None``;
* ``threading.private_threadpool_size`` (also ``experimental_threading``)
  and ``autotune.cpu_budget``: the most threads a parallel ``map`` stage
  runs, whatever its ``num_parallel_calls`` (``AUTOTUNE`` included).

Setting any other attribute raises ``AttributeError``; ``tf.data`` options
that have no counterpart in tfrx (graph optimizations, tf.data service,
distribution) say so instead of being silently ignored.
"""

from __future__ import annotations

from tfrx.data._dataset import Dataset, DatasetIterator, IterContext, transformation

__all__ = ["Options", "ThreadingOptions", "AutotuneOptions", "OptionsDataset"]

# tf.data.Options attributes (and sub-options) that mean nothing without TensorFlow's runtime
_NO_COUNTERPART = {
    "experimental_optimization": "tfrx has no graph rewrites to switch on or off",
    "experimental_distribute": "shard with Dataset.shard or the framework adapters instead",
    "experimental_service": "tfrx has no tf.data service",
    "experimental_external_state_policy": "tfrx pipelines are not serialized as graphs",
    "experimental_slack": "tfrx prefetch has no slack period",
    "experimental_warm_start": "tfrx iterators start their threads on the first element",
    "experimental_symbolic_checkpoint": "every tfrx iterator has state_dict() / load_state_dict()",
    "dataset_name": "tfrx does not report per-dataset metrics",
    "framework_type": "tfrx does not report per-dataset metrics",
    "max_intra_op_parallelism": "tfrx ops do not parallelise within one element; use num_parallel_calls",
    "enabled": "tfrx does not autotune buffer sizes; AUTOTUNE means the usable cores",
    "ram_budget": "tfrx does not autotune buffer sizes",
    "autotune_algorithm": "tfrx does not autotune",
    "initial_parallelism": "tfrx does not autotune",
    "min_parallelism": "tfrx does not autotune",
}


class _Strict:
    """Attributes limited to ``_fields``; anything else raises AttributeError with what to do instead."""

    _fields: tuple[str, ...] = ()
    _aliases: dict[str, str] = {}

    def __setattr__(self, name: str, value) -> None:
        name = self._aliases.get(name, name)
        if name not in self._fields:
            raise AttributeError(self._unknown(name))
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):  # only called for names that are not set
        alias = type(self)._aliases.get(name)
        if alias is not None:
            return getattr(self, alias)
        raise AttributeError(self._unknown(name))

    def _unknown(self, name: str) -> str:
        where = f"tfrx.data.{type(self).__name__}"
        why = _NO_COUNTERPART.get(name)
        if why is not None:
            return f"{where}.{name}: tf.data's option has no tfrx counterpart ({why}); leave it out"
        return f"{where} has no option {name!r}; options: {', '.join(self._fields)}"

    def _set(self) -> dict:
        """The options given a value (not None), as {name: value}."""
        return {k: getattr(self, k) for k in self._fields if getattr(self, k) is not None}

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._set() == other._set()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._set().items())})"


def _check_threads(name: str, value) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive int or None, got {value!r}")


class ThreadingOptions(_Strict):
    """``tf.data.ThreadingOptions``: ``private_threadpool_size`` caps the threads of parallel stages."""

    _fields = ("private_threadpool_size",)

    def __init__(self, private_threadpool_size: int | None = None) -> None:
        self.private_threadpool_size = private_threadpool_size

    def __setattr__(self, name: str, value) -> None:
        if name == "private_threadpool_size":
            _check_threads(f"threading.{name}", value)
        super().__setattr__(name, value)


class AutotuneOptions(_Strict):
    """``tf.data.experimental.AutotuneOptions``: ``cpu_budget`` caps the threads of parallel stages."""

    _fields = ("cpu_budget",)

    def __init__(self, cpu_budget: int | None = None) -> None:
        self.cpu_budget = cpu_budget

    def __setattr__(self, name: str, value) -> None:
        if name == "cpu_budget":
            _check_threads(f"autotune.{name}", value)
        super().__setattr__(name, value)


class Options(_Strict):
    """``tf.data.Options``: ``deterministic``, ``threading.private_threadpool_size``, ``autotune.cpu_budget``.

    ``experimental_deterministic`` and ``experimental_threading`` are
    tf.data's older names of ``deterministic`` and ``threading``.
    """

    _fields = ("deterministic", "threading", "autotune")
    _aliases = {"experimental_deterministic": "deterministic", "experimental_threading": "threading"}

    def __init__(self, deterministic: bool | None = None) -> None:
        self.deterministic = deterministic
        object.__setattr__(self, "threading", ThreadingOptions())
        object.__setattr__(self, "autotune", AutotuneOptions())

    def __setattr__(self, name: str, value) -> None:
        name = self._aliases.get(name, name)
        if name == "deterministic" and value is not None and not isinstance(value, bool):
            raise ValueError(f"deterministic must be True, False or None, got {value!r}")
        if name in ("threading", "autotune"):
            expected = ThreadingOptions if name == "threading" else AutotuneOptions
            if not isinstance(value, expected):
                raise TypeError(f"Options.{name} must be a tfrx.data.{expected.__name__}, got {type(value).__name__}")
        super().__setattr__(name, value)

    def _set(self) -> dict:
        out = {}
        if self.deterministic is not None:
            out["deterministic"] = self.deterministic
        for group in ("threading", "autotune"):
            out.update({f"{group}.{k}": v for k, v in getattr(self, group)._set().items()})
        return out

    def merge(self, other: Options) -> Options:
        """These options with those ``other`` sets on top (``tf.data.Options.merge``)."""
        if not isinstance(other, Options):
            raise TypeError(f"Options.merge expects tfrx.data.Options, got {type(other).__name__}")
        out = Options()
        for source in (self, other):
            if source.deterministic is not None:
                out.deterministic = source.deterministic
            for group in ("threading", "autotune"):
                for k, v in getattr(source, group)._set().items():
                    setattr(getattr(out, group), k, v)
        return out

    def _max_threads(self) -> int | None:
        caps = [c for c in (self.threading.private_threadpool_size, self.autotune.cpu_budget) if c is not None]
        return min(caps) if caps else None

    def _context(self) -> dict:
        """The IterContext fields these options set."""
        return {"deterministic": self.deterministic, "max_threads": self._max_threads()}


class OptionsDataset(Dataset):
    def __init__(self, input_dataset: Dataset, options: Options) -> None:
        super().__init__(input_dataset)
        self._options = options

    def _own_options(self) -> Options:
        return self._options

    def _iterator(self, ctx: IterContext) -> DatasetIterator:
        # The iteration context already holds the options of the whole pipeline (Dataset._root_context).
        return self._inputs[0]._iterator(ctx)

    def cardinality(self) -> int:
        return self._inputs[0].cardinality()


@transformation
def with_options(self: Dataset, options: Options | None = None, *, deterministic: bool | None = None) -> Dataset:
    """Sets pipeline options: ``with_options(deterministic=False)`` or ``with_options(tfrx.data.Options(...))``.

    The options apply to the whole pipeline, the stages after this call
    included; see :mod:`tfrx.data._pipeline_options`.
    """
    if options is None:
        options = Options(deterministic=deterministic)
    elif not isinstance(options, Options):
        raise TypeError(f"with_options expects tfrx.data.Options, got {type(options).__name__}")
    elif deterministic is not None:
        options = options.merge(Options(deterministic=deterministic))
    return OptionsDataset(self, options)


@transformation
def options(self: Dataset) -> Options:
    """The options of this pipeline: every ``with_options`` in it, merged (``tf.data.Dataset.options``)."""
    return self._pipeline_options() or Options()
