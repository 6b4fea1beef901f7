"""A package's names imported on first use (PEP 562), so that importing the package stays cheap.

``import tfrx`` (and so the ``tfrx`` command's start-up) loads only the
native core; NumPy, protobuf, the pipeline and the optional extras load
when a name that needs them is first used. Type checkers read the same
names from an ``if TYPE_CHECKING:`` block beside each table.
"""

from __future__ import annotations

import importlib

#: typing.TYPE_CHECKING without importing typing at run time (type checkers treat the name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def lazy_names(
    package: str, namespace: dict, names: Mapping[str, str], submodules: frozenset[str] = frozenset()
) -> tuple[Callable, Callable]:
    """``(__getattr__, __dir__)`` for ``package``, whose module globals are ``namespace``.

    ``names`` maps each lazy name to the module that defines it;
    ``submodules`` are ``package``'s modules reachable as attributes. A
    name is imported once, then kept in ``namespace``.
    """

    def __getattr__(name: str):
        module = names.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names) | set(submodules))

    return __getattr__, __dir__
