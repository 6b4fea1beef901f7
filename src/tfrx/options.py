"""The options every entry point shares, checked in one place.

- ``on_error``: ``"raise"`` (the default everywhere), ``"skip"`` or ``"warn"``.
- ``compression``: ``"auto"`` detects GZIP/ZLIB from a file's first bytes
  (the default of every reader); ``""``, ``None`` and ``"none"`` mean no
  compression, as ``None`` does in TensorFlow (``TFRecordDataset``,
  ``TFRecordOptions``, ``tf_record_iterator``); ``"GZIP"`` and ``"ZLIB"``
  in any case (``"gz"`` too); a :class:`tfrx.TFRecordOptions`. Writers take
  the same names except ``"auto"``. Where TensorFlow spells the argument
  ``compression_type`` (``TFRecordDataset``, ``TFRecordOptions``) that name
  is accepted with the same meaning.
- parallelism (``num_parallel_calls``, ``num_parallel_reads``): a positive
  int, or ``tfrx.AUTOTUNE`` for the cores this process may use; ``None`` is
  each entry point's default.
- ``progress``: ``None`` shows a bar on stderr when it is a terminal and tqdm
  is installed, ``True`` always asks for one, ``False`` never shows one, and
  a callable is called with one :class:`Progress` ``(done, total, unit,
  desc)`` as the work goes (:func:`check_progress`).
- ``storage_options``: a dict for the fsspec filesystem of URLs (``s3://``,
  ``gs://``, ...), wherever a path may be a URL.

Keyword arguments that were renamed keep working for one release with a
:class:`DeprecationWarning` (:func:`renamed_arguments`).
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, Union

__all__ = [
    "AUTOTUNE",
    "ON_ERROR",
    "Progress",
    "ProgressOption",
    "check_on_error",
    "check_progress",
    "normalize_compression",
    "share_cores_with",
    "usable_cores",
    "resolve_parallelism",
    "renamed_arguments",
    "deprecated_alias",
]

#: ``tf.data.AUTOTUNE``: let tfrx choose a parallelism (the usable cores).
AUTOTUNE = -1
ON_ERROR = ("raise", "skip", "warn")

_COMPRESSIONS = {
    None: "",
    "": "",
    "none": "",
    "gzip": "GZIP",
    "gz": "GZIP",
    "zlib": "ZLIB",
}


def check_on_error(on_error: Any) -> str:
    """``on_error`` itself when it is ``"raise"``, ``"skip"`` or ``"warn"``, else a ValueError naming the choices."""
    if not isinstance(on_error, str) or on_error not in ON_ERROR:
        raise ValueError(f"on_error must be 'raise', 'skip' or 'warn', got {on_error!r}")
    return on_error


def normalize_compression(value: Any, *, allow_auto: bool = False, name: str = "compression") -> str:
    """``""``, ``"GZIP"`` or ``"ZLIB"`` (or ``"auto"`` where ``allow_auto``) from any accepted spelling.

    Accepts TensorFlow's names in any case, ``None`` and ``"none"`` (no
    compression), ``"gz"``, and a :class:`tfrx.TFRecordOptions`.
    """
    if not isinstance(value, str) and hasattr(value, "compression_type"):  # tfrx's or TensorFlow's TFRecordOptions
        return normalize_compression(value.compression_type, name=name)
    if isinstance(value, str) or value is None:
        key = value.lower() if isinstance(value, str) else value
        if allow_auto and key == "auto":
            return "auto"
        if key in _COMPRESSIONS:
            return _COMPRESSIONS[key]
    choices = "'auto', " if allow_auto else ""
    raise ValueError(f"{name} must be {choices}'', None, 'GZIP' or 'ZLIB' (any case), got {value!r}")


class Progress(NamedTuple):
    """What a ``progress`` callable is told as work goes: ``done`` of ``total`` (``None`` when
    unknown) ``unit`` s (``"B"`` for bytes, ``"rec"`` for records, ...) of the step named ``desc``."""

    done: int
    total: int | None
    unit: str
    desc: str


#: The values every ``progress=`` takes (see the module's docstring).
ProgressOption = Union[bool, None, Callable[[Progress], Any]]


def _required_positionals(func: Callable) -> int | None:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: taken as the documented shape
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in params if p.kind in kinds and p.default is inspect.Parameter.empty)


def check_progress(progress: Any, *, where: str, old_shape: str | None = None, stacklevel: int = 3) -> bool:
    """Checks a ``progress=`` value; True when it is a callable of an entry point's former shape.

    ``progress`` is ``None``, a bool, or a callable taking one :class:`Progress`;
    anything else is a TypeError. ``old_shape`` (e.g. ``"progress(bytes_scanned,
    file_size)"``) names what ``where`` called before; a callable that needs two
    positional arguments is taken to be that one: it keeps working for one release,
    with a DeprecationWarning (``stacklevel`` as :func:`warnings.warn`'s, counted from
    here: 3 names the entry point's caller), and the caller calls it the old way.
    """
    if progress is None or isinstance(progress, bool):
        return False
    if not callable(progress):
        raise TypeError(
            f"{where}: progress must be True, False, None or a callable taking one tfrx.Progress, got {progress!r}"
        )
    if old_shape is not None and (_required_positionals(progress) or 0) >= 2:
        warnings.warn(
            f"{where}: a {old_shape} callback is deprecated and will be removed in the next release; "
            f"pass a callable taking one tfrx.Progress (done, total, unit, desc)",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        return True
    return False


_share = 1


def _affinity() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def usable_cores() -> int:
    """Cores this process's threads may use, at least 1: the cores it may run on (its CPU affinity
    where the OS has one), divided by the processes that share them (:func:`share_cores_with`)."""
    return max(1, _affinity() // _share)


def share_cores_with(processes: int) -> None:
    """This process is one of ``processes`` that run the same work at once on the same cores.

    A PyTorch ``DataLoader`` forks ``num_workers`` processes that all run the
    pipeline; ``tfrx.integrations.torch`` calls this in each worker so that ``k`` workers
    together start about as many threads (``AUTOTUNE`` stages, prefetch, the
    parser's and image decoders' threads) as one process would.
    """
    global _share
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a positive int, got {processes!r}")
    _share = processes


def resolve_parallelism(n: Any, *, default: int | None = 1, name: str = "num_parallel_calls") -> int:
    """How many workers ``n`` asks for: ``None`` -> ``default`` (``None`` there: the usable cores),
    ``AUTOTUNE`` -> the usable cores, else ``n``, which must be a positive int."""
    if n is None:
        return usable_cores() if default is None else default
    if isinstance(n, bool) or not isinstance(n, int) or (n < 1 and n != AUTOTUNE):
        raise ValueError(f"{name} must be a positive int, None or tfrx.AUTOTUNE, got {n!r}")
    return usable_cores() if n == AUTOTUNE else n


F = TypeVar("F", bound=Callable[..., Any])


def renamed_arguments(**renames: str) -> Callable[[F], F]:
    """Accepts old keyword names (``old="new"``) for one release, with a DeprecationWarning.

    Passing both the old and the new name is a TypeError.
    """

    def decorate(func: F) -> F:
        what = func.__qualname__.replace(".__init__", "")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{what}() got both {old}= and {new}=; pass only {new}=")
                    warnings.warn(
                        f"{what}({old}=...) is deprecated and will be removed in the next release; pass {new}= instead",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def deprecated_alias(func: F, old_name: str, new_name: str) -> F:
    """``func`` under its former name ``old_name``, warning that ``new_name`` replaces it."""

    @functools.wraps(func)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"{old_name} is deprecated and will be removed in the next release; use {new_name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return func(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old_name.rpartition(".")[2]
    return alias  # type: ignore[return-value]
