"""Writes ``tests/golden/porting/<script>.pickle``: what each ``tests/porting`` script records under TensorFlow.

Run from the repository root with TensorFlow installed (and without torch in
the same interpreter; the scripts never import it):

    python tests/golden/make_porting_golden.py

``tests/test_porting.py`` compares the ``import tfrx.tf as tf`` run of each
script with these values when TensorFlow is not installed.
"""

from __future__ import annotations

import pickle
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_porting import SCRIPTS, run_script


def main() -> None:
    out = HERE / "porting"
    out.mkdir(exist_ok=True)
    for script in SCRIPTS:
        with tempfile.TemporaryDirectory() as tmp:
            recorded = run_script(script, Path(tmp), with_tfrx=False)
        if recorded["torch_imported"]:
            raise SystemExit(f"{script.name} imported torch under TensorFlow")
        with open(out / f"{script.stem}.pickle", "wb") as f:
            pickle.dump(recorded["results"], f, protocol=4)
        print(f"wrote {script.stem}.pickle: {len(recorded['results'])} values")


if __name__ == "__main__":
    main()
