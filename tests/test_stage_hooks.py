"""No module outside ``tfrx.data`` names a pipeline stage's class to choose a code path.

Code that adapts a pipeline (the worker handoff, the device feeder, engines)
asks the stages through hooks on ``Dataset`` (``_for_handoff``,
``_with_outputs_from``, ``_record_batches``...), so a stage can change without
breaking code in other packages. The base class ``Dataset`` itself may be
named (``isinstance(x, Dataset)`` says whether something is a pipeline at
all), and the allow-list below names argument checks that refuse a wrong
input rather than choose a path.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "tfrx"

# (module, class): an argument check that raises, not a choice of code path.
ALLOWED = {("integrations/grain.py", "RandomAccessDataset")}


def _data_classes(tree: ast.Module) -> set[str]:
    """Names a module imports from ``tfrx.data`` (or its private modules) that are classes other than ``Dataset``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tfrx.data"):
            for alias in node.names:
                name = alias.asname or alias.name
                if name[:1].isupper() and name != "Dataset":
                    names.add(name)
    return names


def _isinstance_targets(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"isinstance", "issubclass"}
        ):
            target = node.args[1] if len(node.args) > 1 else None
            for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(t, ast.Name):
                    found.add(t.id)
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            func = node.left.func  # type(x) is SomeDataset
            if isinstance(func, ast.Name) and func.id == "type":
                found.update(c.id for c in node.comparators if isinstance(c, ast.Name))
    return found


def offenders(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("data/"):
            continue
        tree = ast.parse(path.read_text())
        for name in sorted(_data_classes(tree) & _isinstance_targets(tree)):
            if (rel, name) not in ALLOWED:
                out.append(f"{rel}: {name}")
    return out


def test_no_module_outside_data_chooses_a_path_by_a_stage_class():
    assert offenders(SRC) == []


def test_the_check_catches_a_stage_class_test(tmp_path):
    bad = tmp_path / "integrations" / "x.py"
    bad.parent.mkdir()
    bad.write_text(
        "from tfrx.data._parse import ParseDataset\n\n"
        "def f(stage):\n    return stage.x if isinstance(stage, ParseDataset) else stage\n"
    )
    (tmp_path / "integrations" / "y.py").write_text(
        "from tfrx.data import Dataset\n\ndef g(d):\n    return isinstance(d, Dataset)\n"
    )
    assert offenders(tmp_path) == ["integrations/x.py: ParseDataset"]
