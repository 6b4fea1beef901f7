"""The proof that code ports by changing the import: scripts run with TensorFlow and with ``import tfrx.tf as tf``.

The scripts are TensorFlow's tutorials (the TFRecord guide, the tf.data
guide, the tf.data performance guide, "Load and preprocess images", "Load
CSV data"): their cells that use what tfrx has, unchanged, between lines
marked "harness:" that make them run unattended and record what they print.

Each script under ``tests/porting/`` starts with ``import tensorflow as tf``
and records its values with ``report()``. It runs in a subprocess twice: as
written (only when TensorFlow is installed; that interpreter must not import
torch) and with the first line replaced by ``import tfrx.tf as tf``. The
recorded values must be equal (floats that went through ``tf.image.resize``
to float32 rounding). Without TensorFlow, the tfrx run is compared with the
golden values TensorFlow recorded (``tests/golden/porting/``, written by
``tests/golden/make_porting_golden.py``).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tfrx

HERE = Path(__file__).parent
SCRIPTS = sorted(p for p in (HERE / "porting").glob("*.py") if not p.name.startswith("_"))  # _harness.py is shared code
GOLDEN = HERE / "golden" / "porting"
TFRX_IMPORT = "import tfrx.tf as tf\n"


def run_script(script: Path, tmp: Path, *, with_tfrx: bool) -> dict:
    """Runs one script in a fresh interpreter and returns what it recorded."""
    lines = script.read_text().splitlines(keepends=True)
    assert lines[0] == "import tensorflow as tf\n", f"{script.name} must start with 'import tensorflow as tf'"
    source = tmp / f"{script.stem}_{'tfrx' if with_tfrx else 'tf'}.py"
    source.write_text((TFRX_IMPORT if with_tfrx else lines[0]) + "".join(lines[1:]))
    workdir = tmp / f"work_{'tfrx' if with_tfrx else 'tf'}"
    workdir.mkdir()
    out = tmp / f"{source.stem}.pickle"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    src = str(Path(tfrx.__file__).resolve().parent.parent)  # the tfrx under test, installed or built in place
    harness = str(Path(__file__).resolve().parent / "porting")  # the scripts' shared _harness.py
    env["PYTHONPATH"] = os.pathsep.join([src, harness, *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run(
        [sys.executable, str(source), str(out), str(workdir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{source.name} failed:\n{proc.stderr[-4000:]}"
    with open(out, "rb") as f:
        return pickle.load(f)


def assert_same(name: str, got, want) -> None:
    if isinstance(want, (bytes, str)):
        assert type(got) is type(want) and got == want, f"{name}: {got!r} != {want!r}"
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if want.dtype.kind == "U":
        assert got.dtype.kind == "U" and got.tolist() == want.tolist(), f"{name}: {got!r} != {want!r}"
        return
    if want.dtype == object or want.dtype.kind == "S":
        assert [bytes(v) for v in got.reshape(-1)] == [bytes(v) for v in want.reshape(-1)], (
            f"{name}: {got!r} != {want!r}"
        )
        return
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
    if name.startswith("resized") and want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def assert_results_equal(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want), (
        f"different values recorded: only tfrx {sorted(set(got) - set(want))}, only TensorFlow {sorted(set(want) - set(got))}"
    )
    for name in sorted(want):
        assert_same(name, got[name], want[name])


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_ports_against_golden(script, tmp_path):
    pytest.importorskip("simplejpeg")  # the scripts decode JPEGs; only libjpeg-turbo's pixels equal TensorFlow's
    golden = GOLDEN / f"{script.stem}.pickle"
    with open(golden, "rb") as f:
        want = pickle.load(f)
    got = run_script(script, tmp_path, with_tfrx=True)
    assert not got["torch_imported"]
    assert_results_equal(got["results"], want)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_ports_against_tensorflow(script, tmp_path, tf):
    pytest.importorskip("simplejpeg")
    want = run_script(script, tmp_path, with_tfrx=False)
    assert not want["torch_imported"], "the TensorFlow run must not import torch"
    got = run_script(script, tmp_path, with_tfrx=True)
    assert_results_equal(got["results"], want["results"])


def test_comparison_notices_a_difference():
    with pytest.raises(AssertionError):
        assert_results_equal({"a": np.array([1, 2], np.int64)}, {"a": np.array([1, 3], np.int64)})
    with pytest.raises(AssertionError):
        assert_results_equal({"a": np.array([1, 2], np.int32)}, {"a": np.array([1, 2], np.int64)})
    with pytest.raises(AssertionError):
        assert_results_equal({"a": b"x"}, {"a": "x"})
    with pytest.raises(AssertionError):
        assert_results_equal({"a": np.array(["x", "y"])}, {"a": np.array(["x", "z"])})
