"""The layers of docs/architecture.md hold, and the check that enforces them in CI catches an upward import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

pytest.importorskip("importlinter")


def _lint_imports(src: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def _copy_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(SRC / "tfrx", src / "tfrx", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    return src


def test_the_tree_keeps_its_layers_and_has_no_circles(tmp_path):
    proc = _lint_imports(_copy_tree(tmp_path), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 2 kept, 0 broken." in proc.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # io is below parsing: reaching up to it is refused.
        (
            "io/_writer.py",
            "from tfrx.parsing import _specs as _specs  # noqa",
            "tfrx.io is not allowed to import tfrx.parsing",
        ),
        # two packages of one layer that must stay independent.
        (
            "tfds/_splits.py",
            "from tfrx.text import _bert_options as _text  # noqa",
            "tfrx.tfds is not allowed to import tfrx.text",
        ),
        # data below integrations: only Dataset.to_torch & co. may, and only in data/_adapters.py.
        (
            "data/_batch.py",
            "from tfrx.integrations import torch as _t  # noqa",
            "tfrx.data is not allowed to import tfrx.integrations",
        ),
    ],
)
def test_an_upward_import_fails_the_check(tmp_path, module, line, broken):
    src = _copy_tree(tmp_path)
    path = src / "tfrx" / module
    path.write_text(path.read_text() + "\n" + line + "\n")
    proc = _lint_imports(src, tmp_path)
    assert proc.returncode != 0
    assert broken in proc.stdout


def test_a_circle_inside_a_package_fails_the_check(tmp_path):
    src = _copy_tree(tmp_path)
    # io/_framing.py is imported by io/_writer.py; writer importing back from framing's importer closes a circle.
    path = src / "tfrx" / "io" / "_framing.py"
    path.write_text(path.read_text() + "\nfrom tfrx.io import _writer as _w  # noqa\n")
    proc = _lint_imports(src, tmp_path)
    assert proc.returncode != 0
    assert "No cycles are allowed in tfrx.io" in proc.stdout


def test_a_new_top_level_module_must_be_placed_in_a_layer(tmp_path):
    src = _copy_tree(tmp_path)
    (src / "tfrx" / "newthing.py").write_text('"""A module nobody placed."""\n')
    proc = _lint_imports(src, tmp_path)
    assert proc.returncode != 0
    assert "newthing" in proc.stdout
