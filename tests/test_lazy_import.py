"""``import tfrx`` loads only the native core; every facade name and submodule loads on first use."""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import tfrx

SRC = Path(tfrx.__file__).resolve().parent.parent
# Optional extras, frameworks, and the runtime dependencies that dominate start-up (NumPy, protobuf).
HEAVY = (
    "numpy",
    "google.protobuf",
    "pyarrow",
    "fsspec",
    "PIL",
    "simplejpeg",
    "soundfile",
    "torch",
    "jax",
    "tensorflow",
    "grain",
    "ray",
    "pyspark",
    "dask",
    "isal",
    "zlib_ng",
)


def fresh(code: str) -> str:
    """``code``'s standard output in a new interpreter that imports this checkout's tfrx."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=True
    ).stdout


def loaded_after(statement: str) -> dict:
    out = fresh(
        f"import json, sys\n{statement}\n"
        f"print(json.dumps({{'heavy': [m for m in {HEAVY!r} if m in sys.modules], "
        "'tfrx': sorted(m for m in sys.modules if m.startswith('tfrx'))}))"
    )
    return json.loads(out.splitlines()[-1])


def test_import_tfrx_loads_no_heavy_module():
    loaded = loaded_after("import tfrx")
    assert loaded["heavy"] == []
    assert set(loaded["tfrx"]) <= {"tfrx", "tfrx._lazy", "tfrx._native", "tfrx.errors", "tfrx.memory"}


def test_cli_help_loads_no_command_and_a_command_loads_only_its_own():
    loaded = loaded_after("from tfrx.cli import main\nassert main(['--help']) == 0")
    assert loaded["heavy"] == []
    assert not [m for m in loaded["tfrx"] if m.startswith("tfrx.cli.") and m != "tfrx.cli._common"]
    loaded = loaded_after("from tfrx.cli import main\nassert main(['count', '--help']) == 0")
    assert [m for m in loaded["tfrx"] if m.startswith("tfrx.cli.")] == ["tfrx.cli._common", "tfrx.cli.count"]


def test_every_name_in_all_resolves_in_a_fresh_interpreter():
    out = fresh(
        "import tfrx\n"
        "missing = [n for n in tfrx.__all__ if getattr(tfrx, n, None) is None]\n"
        "ns = {}\nexec('from tfrx import *', ns)\n"
        "print(missing, sorted(set(tfrx.__all__) - set(ns)))"
    )
    assert out.strip() == "[] []"


def test_lazy_names_are_their_modules_objects():
    import importlib

    for name, module in {**tfrx._API, **tfrx._OTHER}.items():
        assert getattr(tfrx, name) is getattr(importlib.import_module(module), name), name
    assert set(tfrx._API) <= set(tfrx.__all__) and not set(tfrx._OTHER) & set(tfrx.__all__)
    assert len(tfrx.__all__) == len(set(tfrx.__all__))
    assert tfrx.example_to_dict is not None and "example_to_dict" not in tfrx.__all__


def test_type_checkers_see_the_same_names():
    """The ``if TYPE_CHECKING:`` block imports each lazy name from the module the table names."""
    tree = ast.parse(Path(tfrx.__file__).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    seen = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        for alias in node.names:
            seen[alias.asname or alias.name] = node.module if node.module != "tfrx" else f"tfrx.{alias.name}"
    expected = {**tfrx._API, **tfrx._OTHER, "train": "tfrx.train"}
    assert seen == expected


def test_every_submodule_is_an_attribute():
    public = {m.name for m in pkgutil.iter_modules(tfrx.__path__) if not m.name.startswith("_")}
    assert public == set(tfrx._SUBMODULES)
    for name in ("data", "io", "tfds", "tools"):
        assert getattr(tfrx, name).__name__ == f"tfrx.{name}"
    assert fresh("import tfrx; print(tfrx.data.Dataset.__module__, tfrx.tfds.features.Image.__name__)").split() == [
        "tfrx.data._dataset",
        "Image",
    ]
    assert public | set(tfrx.__all__) <= set(dir(tfrx))


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'tfrx' has no attribute 'nope'"):
        tfrx.nope  # noqa: B018
    assert not hasattr(tfrx, "nope")
