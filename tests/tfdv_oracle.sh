#!/usr/bin/env bash
# The live TFDV oracle of tfrx.validate (docs/validate.md), run after the main tests:
#  1. a virtual environment of its own with tensorflow-data-validation (it pins TensorFlow 2.16,
#     pyarrow<11, pandas<2; the pins below let pip resolve it in minutes rather than hours);
#  2. TFDV writes fresh golden files for the committed inputs and the benchmark workloads, and
#     tfrx's golden test compares tfrx's statistics, schemas and anomalies with them (same bounds
#     as with the committed ones);
#  3. TFDV loads tfrx's stats.pb and schema.pbtxt and agrees with them.
# Usage: tests/tfdv_oracle.sh   (PYTHON: tfrx's interpreter, default python; TFDV_VENV: where to
# make TFDV's environment, default a temporary directory; TFRX_CORPUS: the real corpus, optional)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python}"
TFDV_VENV="${TFDV_VENV:-$(mktemp -d)/tfdv-venv}"
if [ ! -x "$TFDV_VENV/bin/python" ]; then
    python3 -m venv "$TFDV_VENV"
    "$TFDV_VENV/bin/pip" install --quiet "tensorflow-data-validation==1.16.1" "tensorflow==2.16.2" \
        "tf-keras==2.16.0" "tensorflow-serving-api==2.16.1" "tensorboard==2.16.2" "apache-beam[gcp]==2.61.0" \
        "protobuf==4.25.5" "pyarrow==10.0.1" "pandas<2"
fi

OUT="$(mktemp -d)"
ARGS=()
if [ -n "${TFRX_CORPUS:-}" ]; then ARGS=(--corpus "$TFRX_CORPUS"); fi
# the benchmark workloads (benchmarks/workloads.py, small size) as well
WORKLOADS=""
for name in criteo bert image; do
    path="$("$PYTHON" -c "from benchmarks import workloads; print(workloads.ensure('$name', 'small'))")"
    ARGS+=(--workload "$name=$path")
    WORKLOADS="${WORKLOADS:+$WORKLOADS,}$name=$path"
done
"$TFDV_VENV/bin/python" tests/golden/validate/make_validate_golden.py --out "$OUT/golden" "${ARGS[@]}"
TFRX_VALIDATE_GOLDEN="$OUT/golden" TFRX_VALIDATE_WORKLOADS="$WORKLOADS" \
    "$PYTHON" -m pytest -q -p no:cacheprovider tests/test_validate_golden.py

mkdir -p "$OUT/tfrx"
"$PYTHON" -m tfrx stats --format tfdv -o "$OUT/tfrx/stats.pb" tests/golden/validate/generated.tfrecord
"$PYTHON" -m tfrx schema --infer --from-stats -o "$OUT/tfrx/schema.pbtxt" "$OUT/tfrx/stats.pb"
"$TFDV_VENV/bin/python" tests/golden/validate/make_validate_golden.py --check-tfrx "$OUT/tfrx"
