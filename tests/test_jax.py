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


SHARDED = r"""
import numpy as np
import jax
from tfrx.data import Dataset
from tfrx.jax import data_parallel_sharding, device_put_iterator

assert len(jax.local_devices()) == 2, jax.local_devices()
ds = Dataset.from_tensor_slices(
    {"x": np.arange(48, dtype=np.float32).reshape(24, 2), "id": np.arange(24), "s": np.array([b"v"] * 24, dtype=object)}
).batch(4).map(lambda b: dict(b, step=np.int64(7)))

# sharding="data": every batch split along its first axis over the two local devices, in one device_put
calls = []
real = jax.device_put
jax.device_put = lambda *a, **k: calls.append(1) or real(*a, **k)
it = device_put_iterator(ds, sharding="data", prefetch=2)
batches = list(it)
jax.device_put = real
assert len(calls) == len(batches) == 6
for k, b in enumerate(batches):
    assert b["x"].sharding.spec[0] == "data" and len(b["x"].addressable_shards) == 2
    assert [s.data.shape for s in b["x"].addressable_shards] == [(2, 2), (2, 2)]
    assert {s.device for s in b["id"].addressable_shards} == set(jax.local_devices())
    assert np.asarray(b["id"]).tolist() == list(range(4 * k, 4 * k + 4))
    assert int(b["step"]) == 7 and b["step"].sharding.is_fully_replicated  # a 0-d array: replicated
    assert b["s"].dtype == object  # bytes stay on the host
assert data_parallel_sharding().mesh.axis_names == ("data",)

# prefetch: the state is the one after the last batch handed out, not the ones prefetched
it = ds.to_jax(sharding=data_parallel_sharding(), prefetch=3)
head = [next(it) for _ in range(2)]
again = ds.to_jax(sharding="data")
again.load_state_dict(it.state_dict())
assert [np.asarray(b["id"])[0] for b in again] == [8, 12, 16, 20]

# a batch the device count does not divide is an error naming it
odd = Dataset.from_tensor_slices({"x": np.arange(6)}).batch(3)
try:
    list(device_put_iterator(odd, sharding="data"))
except ValueError as e:
    assert "cannot be split over 2 devices" in str(e) and "drop_remainder=True" in str(e), e
else:
    raise AssertionError("expected a ValueError")
print("ok")
"""


def test_jax_data_parallel_sharding_over_two_cpu_devices():
    env = dict(
        os.environ,
        PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        JAX_PLATFORMS="cpu",
        XLA_FLAGS="--xla_force_host_platform_device_count=2",
    )
    out = subprocess.run([sys.executable, "-c", SHARDED], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
