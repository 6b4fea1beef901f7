"""A test run leaves nothing in the system's temporary folder but pytest's own ``pytest-of-<user>``.

The tests that used to leave folders behind run here in a child pytest whose
``TMPDIR`` is a fresh folder: the TensorFlow interpreter's work folder
(``tests/interpreters.py``, whenever a test requests TensorFlow) and the
viewer's index caches (``tests/test_viewer.py``). Whatever else stays there
afterwards is a leak.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import tfrx

TESTS = Path(__file__).resolve().parent
SELECTED = [
    "tests/test_bert_lines.py::test_pinned_cases_are_what_tensorflow_gfile_reads[lf]",  # split to the TF interpreter
    "tests/test_bert_lines.py::test_line_reading_is_the_references[lf]",
    "tests/test_viewer.py::test_media_serves_the_image_bytes",
    "tests/test_viewer.py::test_the_page_shows_index_progress_and_the_api_waits",
]


def test_a_run_leaves_no_temporary_folders(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    src = str(Path(tfrx.__file__).resolve().parent.parent)
    env = dict(
        os.environ, TMPDIR=str(temp), PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    )
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *SELECTED],
        cwd=str(TESTS.parent),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if importlib.util.find_spec("tensorflow") is not None:
        assert "4 passed" in done.stdout, done.stdout[-2000:]
    left = sorted(name for name in os.listdir(temp) if not name.startswith("pytest-of-"))
    assert left == [], left
