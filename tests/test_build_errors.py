"""A source checkout that is not built yet says what to run, instead of failing somewhere deeper."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tfrx

PACKAGE = Path(tfrx.__file__).parent
REPO = Path(__file__).resolve().parent.parent


def _unbuilt_copy(tmp_path: Path, *, leftover: str | None = None) -> Path:
    """The Python sources of tfrx without the compiled extension (and optionally a stray one)."""
    target = tmp_path / "src" / "tfrx"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("_native*.so", "_native*.pyd", "__pycache__"))
    if leftover:
        (target / leftover).write_bytes(b"")
    return tmp_path / "src"


def _import(src: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run([sys.executable, "-c", "import tfrx"], capture_output=True, text=True, env=env, timeout=120)


def test_import_without_the_extension_says_to_build_it(tmp_path):
    done = _import(_unbuilt_copy(tmp_path))
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: tfrx's native extension (tfrx._native) is not built")
    assert "make dev" in last and "pip install ." in last
    assert "circular import" not in done.stderr


def test_import_with_an_extension_for_another_python_names_it(tmp_path):
    done = _import(_unbuilt_copy(tmp_path, leftover="_native.cpython-39-x86_64-linux-gnu.so"))
    assert "_native.cpython-39-x86_64-linux-gnu.so is there, built for another Python" in done.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_dev_without_nanobind_says_what_to_install(tmp_path):
    # a Python in which `import nanobind` fails, as in a fresh venv
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "nanobind.py").write_text("raise ImportError('not installed')\n")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={blocker} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    done = subprocess.run(
        ["make", "-C", str(REPO), "dev", f"PYTHON={python}", f"BUILD={tmp_path / 'build'}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "nanobind is not installed" in done.stderr and "-m pip install 'nanobind>=2.4' cmake ninja" in done.stderr
    assert not (tmp_path / "build").exists()  # stopped before CMake
