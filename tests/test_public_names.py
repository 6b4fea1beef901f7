"""The public names and the docs agree.

Every ``tfrx.<name>`` / ``tfrx.<package>.<name>`` that README.md and docs/*.md
use in code (fenced blocks, inline code, ``from tfrx.<package> import ...``)
resolves, and a name used from a public package is in that package's
``__all__``; every name in the ``__all__`` of tfrx and of each public package
is documented somewhere in README.md or docs/.

The framework integrations (torch, jax, keras, grain, ray) and TFDS are read
from their source instead of imported: importing them would load PyTorch and
TensorFlow (Keras' default backend) into one interpreter.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pathlib
import re
import warnings
from collections import defaultdict

import pytest

import tfrx

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PUBLIC_PACKAGES = ("io", "data", "parsing", "codec", "image", "tf", "tfds", "text", "integrations", "tools", "train")
# Modules whose import would load a framework (see the module docstring): checked from their source.
HEAVY = {"torch", "jax", "keras", "grain", "ray", "tfds"}
# Names that are a framework itself, handed out by a module's __getattr__: checked in that module's source.
FRAMEWORKS = {"tfrx.tf.keras": ("tfrx.tf", 'name == "keras"')}
# Dotted strings in the docs that are not Python names.
NOT_NAMES = {
    "tfrx.feature_lists": "a key of the Arrow schema metadata",
}

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_INLINE = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"(?<![\w.])tfrx(?:\.[A-Za-z_]\w*)+")
_FROM_LINE = re.compile(r"^\s*from (tfrx(?:\.\w+)*) import ([\w, ]+)$", re.M)


def _code(text: str) -> list[str]:
    """The fenced code blocks and inline code spans of a Markdown text."""
    blocks = _FENCE.findall(text)
    return blocks + _INLINE.findall(_FENCE.sub("", text))


def _imports(code: str) -> list[str]:
    """``tfrx.<module>.<name>`` for each ``from tfrx.<module> import <name>`` of a piece of code."""
    try:
        with warnings.catch_warnings():  # doc snippets' escapes ("\\|" in a shell line) are not ours to fix
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except SyntaxError:  # shell lines, fragments: single-line imports only
        return [f"{m}.{n.strip()}" for m, names in _FROM_LINE.findall(code) for n in names.split(",") if n.strip()]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tfrx" and not node.level:
            out += [f"{node.module}.{a.name}" for a in node.names if a.name != "*"]
    return out


def documented_references() -> dict[str, set[str]]:
    """Every ``tfrx.`` name the docs use in code -> the documents using it."""
    refs: dict[str, set[str]] = defaultdict(set)
    for md in DOCS:
        for code in _code(md.read_text()):
            for name in _DOTTED.findall(code) + _imports(code):
                if name not in NOT_NAMES:
                    refs[name].add(md.name)
    return refs


def _module_source(dotted: str) -> pathlib.Path | None:
    spec = importlib.util.find_spec(dotted)
    return pathlib.Path(spec.origin) if spec is not None and spec.origin else None


def _defined_in_source(module: str, name: str) -> bool:
    """Whether ``module`` (not imported) defines or imports ``name`` at its top level, or has it as a submodule."""
    path = _module_source(module)
    if path is None:
        return False
    if importlib.util.find_spec(f"{module}.{name}") is not None if path.name == "__init__.py" else False:
        return True
    tree = ast.parse(path.read_text())
    for node in tree.body:
        targets: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = [node.name]
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            targets = [(a.asname or a.name).split(".")[0] for a in node.names]
        if name in targets:
            return True
    return False


def _heavy(parts: list[str]) -> str | None:
    """The real module name when ``tfrx.<parts>`` goes through a framework integration, else None."""
    if parts and parts[0] in HEAVY:
        return "tfrx.tfds" if parts[0] == "tfds" else f"tfrx.integrations.{parts[0]}"
    if len(parts) > 1 and parts[0] == "integrations" and parts[1] in HEAVY:
        return f"tfrx.integrations.{parts[1]}"
    return None


def resolve(dotted: str) -> object:
    """The object a dotted ``tfrx.`` name names (attributes, else submodules); raises when there is none."""
    parts = dotted.split(".")[1:]
    obj: object = tfrx
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(["tfrx", *parts[: i + 1]]))
    return obj


def _all_of(package: str) -> list[str]:
    if not package:
        return list(tfrx.__all__)
    if package in HEAVY:
        path = _module_source(f"tfrx.{package}")
        assert path is not None
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                return list(ast.literal_eval(node.value))
        return []
    return list(importlib.import_module(f"tfrx.{package}").__all__)


def _is_submodule(package: str, name: str) -> bool:
    return importlib.util.find_spec(f"{package}.{name}") is not None


REFS = documented_references()


@pytest.mark.parametrize("dotted", sorted(REFS))
def test_each_documented_name_resolves_and_is_exported(dotted):
    where = ", ".join(sorted(REFS[dotted]))
    if dotted in FRAMEWORKS:
        module, handled = FRAMEWORKS[dotted]
        path = _module_source(module)
        assert path is not None and handled in path.read_text(), f"{dotted} (used in {where}) is not given by {module}"
        return
    parts = dotted.split(".")[1:]
    heavy = _heavy(parts)
    if heavy is not None:
        rest = parts[2:] if parts[0] == "integrations" else parts[1:]
        if rest:
            assert _defined_in_source(heavy, rest[0]), f"{dotted} (used in {where}) is not defined in {heavy}"
        return
    try:
        resolve(dotted)
    except (AttributeError, ImportError) as e:
        pytest.fail(f"{dotted} (used in {where}) does not resolve: {e}")
    package, name = ("tfrx", parts[0]) if len(parts) == 1 else (f"tfrx.{parts[0]}", parts[1])
    if package != "tfrx" and parts[0] not in PUBLIC_PACKAGES:
        return  # a module named in prose (tfrx.viewer._server, tfrx.io._stored): resolving is enough
    if _is_submodule(package, name):
        return
    if name in importlib.import_module(package).__all__:
        return
    # tfrx.io reaches tf.io's names, implemented in other packages: an alias of a name exported there.
    homes = [p for p in ("", *PUBLIC_PACKAGES) if p not in HEAVY and name in _all_of(p)]
    assert any(_exported(p, name) is resolve(dotted) for p in homes), (
        f"{dotted} (used in {where}) is not in {package}.__all__"
    )


def _exported(package: str, name: str) -> object:
    return getattr(importlib.import_module(f"tfrx.{package}" if package else "tfrx"), name)


def _words(pages) -> set[str]:
    words: set[str] = set()
    for md in pages:
        for code in _code(md.read_text()):
            words.update(re.findall(r"[A-Za-z_]\w*", code))
    return words


def _documented_in(qualified: str) -> set[str]:
    """The names of ``qualified`` that the docs show: used as ``<qualified>.<name>`` or imported from it in
    code, or named in the code of a page about ``qualified`` (one that uses ``<qualified>`` in its code)."""
    shown = {r.rsplit(".", 1)[-1] for r in REFS if r.rsplit(".", 1)[0] == qualified}
    if qualified == "tfrx":
        return shown | _words(DOCS)
    pattern = re.compile(re.escape(qualified) + r"\b")
    pages = [md for md in DOCS if any(pattern.search(code) for code in _code(md.read_text()))]
    return shown | _words(pages)


@pytest.mark.parametrize("package", ["", *PUBLIC_PACKAGES])
def test_every_exported_name_is_documented(package):
    qualified = f"tfrx.{package}" if package else "tfrx"
    names = _all_of(package)
    documented = _documented_in(qualified)
    facade = _documented_in("tfrx") if package and package not in HEAVY else set()
    missing = [
        n
        for n in names
        if n not in documented
        and not n.startswith("__")  # __version__
        # the same object as a documented top-level name (tfrx.decode_raw is tfrx.codec.decode_raw)
        and not (n in facade and n in tfrx.__all__ and _exported("", n) is _exported(package, n))
    ]
    assert not missing, f"in {qualified}.__all__ but not in README.md or docs/: {missing}"
