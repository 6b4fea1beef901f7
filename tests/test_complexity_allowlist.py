"""Every function allowed past a complexity limit (``# noqa: C901`` / ``PLR09xx`` on its ``def``) is in the
allow-list of docs/architecture.md, and every entry there still names such a function."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_NOQA = re.compile(r"#\s*noqa:[^#]*\b(C901|PLR09\d\d)\b")


def exempt_functions(root: Path, folders=("src/tfrx", "benchmarks", "tests")) -> set[tuple[str, str]]:
    """``(path, qualified name)`` of the functions whose ``def`` line carries a complexity noqa; paths
    relative to ``src/tfrx`` for the package, to the root elsewhere."""
    found = set()
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            lines = path.read_text().splitlines()
            if not any(_NOQA.search(line) for line in lines):
                continue
            rel = path.relative_to(root / "src" / "tfrx" if folder == "src/tfrx" else root).as_posix()

            def visit(node: ast.AST, prefix: str) -> None:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        name = prefix + child.name
                        if _NOQA.search(lines[child.lineno - 1]):
                            found.add((rel, name))
                        visit(child, name + ".")
                    elif isinstance(child, ast.ClassDef):
                        visit(child, prefix + child.name + ".")

            visit(ast.parse("\n".join(lines)), "")
    return found


def allow_list(text: str) -> set[tuple[str, str]]:
    """``(path, name)`` pairs of the table under "Complexity limits" (a cell may name several)."""
    section = text[text.index("## Complexity limits") :]
    section = section[: section.index("\n## ", 1)]
    pairs = set()
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        cell = row.split("|")[1]
        path = None
        for token in re.findall(r"`([^`]+)`", cell):
            if token.endswith(".py"):
                path = token
            elif path is not None:
                pairs.add((path, token))
    return pairs


def test_every_exempt_function_is_listed_with_its_reason():
    listed = allow_list((ROOT / "docs" / "architecture.md").read_text())
    exempt = exempt_functions(ROOT)
    assert sorted(exempt - listed) == [], "allowed past a limit but not in docs/architecture.md"
    assert sorted(listed - exempt) == [], "listed in docs/architecture.md but no longer exempt"


def test_the_check_sees_methods_and_plain_functions(tmp_path):
    pkg = tmp_path / "src" / "tfrx" / "io"
    pkg.mkdir(parents=True)
    (pkg / "x.py").write_text(
        "class R:\n    def __init__(self, a, b):  # noqa: PLR0913  reasons\n        pass\n\n"
        "def f():  # noqa: C901  reasons\n    pass\n\ndef g():  # noqa: E501\n    pass\n"
    )
    assert exempt_functions(tmp_path, ("src/tfrx",)) == {("io/x.py", "R.__init__"), ("io/x.py", "f")}
    table = "## Complexity limits\n\n| `io/x.py` `R.__init__`, `io/y.py` `h` | args | why |\n\n## Next\n"
    assert allow_list(table) == {("io/x.py", "R.__init__"), ("io/y.py", "h")}
