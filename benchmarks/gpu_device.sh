#!/usr/bin/env bash
# One prepared run for a GPU machine (written for one H200 and 16 cores, no network; the steps' limits
# add up to 9.5 minutes, a run should take 5-8):
# builds the extension, runs the CUDA-marked tests, `python -m benchmarks gpu` and
# `python -m benchmarks workers --workers 0,1,2,4,8,16`, and writes everything under $OUT.
#
#   OUT=/some/folder bash benchmarks/gpu_device.sh
#
# The machine is expected to have python3 with a CUDA build of PyTorch (and torchvision), nanobind,
# cmake, ninja, pytest and hypothesis, and zlib's headers. Packages it lacks can travel as wheels in
# .gpu-wheels/ at the repository's root (ignored by git), installed from there without a network, e.g.
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#       -d .gpu-wheels nvidia-nvimgcodec-cu13 simplejpeg
# (nvImageCodec for the GPU's CUDA major version: cu12 or cu13). Each step has its own time limit and
# the run goes on past a failed step; the summary at the end says which steps failed.
set -u
OUT=${OUT:-/tmp/tfrx-gpu-out}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
export PYTHONPATH=src PYTHONUNBUFFERED=1 TFRX_BENCH_DIR=${TFRX_BENCH_DIR:-/tmp/tfrx-bench}
failed=()

step() {  # step NAME SECONDS COMMAND...: runs COMMAND with a time limit, its output in $OUT/NAME.txt
    local name=$1 limit=$2
    shift 2
    echo "== $name (limit ${limit}s): $*"
    local start=$SECONDS
    timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.txt" 2>&1
    local rc=$?
    echo "   exit $rc after $((SECONDS - start))s"
    tail -n 5 "$OUT/$name.txt" | sed 's/^/   | /'
    [ $rc -eq 0 ] || failed+=("$name (exit $rc)")
}

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
    nproc
    "$PY" -c 'import sys, torch; print(sys.version); print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
    "$PY" -c 'import torchvision; print("torchvision", torchvision.__version__)' 2>&1
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

if [ -d .gpu-wheels ]; then
    step wheels 60 "$PY" -m pip install --no-index --find-links .gpu-wheels --no-deps .gpu-wheels/*.whl
fi
step build 150 make dev PYTHON="$PY" BUILD=build/gpu JOBS="$(nproc)"
"$PY" -c 'import tfrx.image as im; print("jpeg decoder on the GPU:", im.device_jpeg_backend("cuda"))' >>"$OUT/machine.txt" 2>&1

# The CUDA tests, then the stand-in tests of the same modules (they must pass with a GPU present too).
step pytest-cuda 60 "$PY" -m pytest -q -m cuda -p no:cacheprovider tests/test_device_feed.py tests/test_image_device.py
step pytest-device 60 "$PY" -m pytest -q -x -p no:cacheprovider tests/test_device_feed.py tests/test_image_device.py tests/test_worker_ranges.py

step bench-gpu 170 "$PY" -m benchmarks gpu --size small --repeat 1 --workers 0,1,2,4,8,16
step bench-workers 130 "$PY" -m benchmarks workers --size small --repeat 1 --workloads bert,criteo \
    --workers 0,1,2,4,8,16 --skip "tfrecord,tf.data,tfrx (torch handoff),handoff only,tfrx -> GPU (pin_memory)"

{
    echo "finished $(date -u), ${SECONDS}s"
    if [ ${#failed[@]} -eq 0 ]; then echo "all steps passed"; else printf 'failed: %s\n' "${failed[@]}"; fi
} | tee "$OUT/summary.txt"
