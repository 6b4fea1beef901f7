"""JAX adapter: NumPy iteration and device placement with an optional sharding.

JAX runs in a subprocess: once JAX's threads exist, forking (as the PyTorch
DataLoader tests do) can deadlock.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("jax") is None:  # not imported here: see the module docstring
    pytest.skip("jax is not installed", allow_module_level=True)

import tfrx  # noqa: E402

SRC = str(Path(tfrx.__file__).resolve().parent.parent)  # wherever the tested tfrx is installed

SCRIPT = r"""
import json
import numpy as np
import jax
from tfrx.data import Dataset
from tfrx.jax import as_numpy_iterator, device_put_iterator

ds = Dataset.from_tensor_slices({"x": np.arange(24, dtype=np.float32).reshape(12, 2), "id": np.arange(12)}).batch(4)

# plain NumPy iteration
assert [b["x"].shape for b in as_numpy_iterator(ds)] == [(4, 2)] * 3

# device_put with a sharding
sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
batches = list(device_put_iterator(ds, sharding=sharding))
assert all(isinstance(b["x"], jax.Array) for b in batches)
assert batches[0]["x"].sharding == sharding
assert [np.asarray(b["id"]).tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]

# strings stay on the host; state round-trips through JSON
ds2 = Dataset.from_tensor_slices((np.arange(6), np.array([b"a"] * 6, dtype=object))).batch(2)
it = ds2.to_jax(prefetch=2)
x, s = next(it)
assert isinstance(x, jax.Array) and s.dtype == object
state = json.loads(json.dumps(it.state_dict()))
rest = [np.asarray(b[0]).tolist() for b in it]
again = ds2.to_jax()
again.load_state_dict(state)
assert [np.asarray(b[0]).tolist() for b in again] == rest == [[2, 3], [4, 5]]
print("ok")
"""


def test_jax_adapter():
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
