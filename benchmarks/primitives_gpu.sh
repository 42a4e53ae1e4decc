#!/usr/bin/env bash
# NumPy's operations and the primitives on the GPU machine (docs/primitives.md; docs/benchmarks.md,
# "NumPy's operations and the primitives"): their tests on the GPU (CUDA, and NVIDIA's OpenCL
# device where there is one), then `parskel bench primitives` against NumPy and CuPy.
#
#   bash benchmarks/primitives_gpu.sh OUT     (about 6 minutes on an H100 or H200; all under OUT)
#
# OUT/log.txt has all that was printed; OUT/cuda (and OUT/opencl) hold a run's results.sqlite and
# report/ (`parskel report --out OUT/cuda` draws it again). Each step has its own time limit, so
# one that fails or stalls costs only itself.
set -uo pipefail
OUT=${1:?usage: bash benchmarks/primitives_gpu.sh OUT}
# a trial run elsewhere, e.g. on PoCL: GPU=opencl:0:0 SIZES=2^14,2^18 bash benchmarks/primitives_gpu.sh /tmp/trial
GPU=${GPU:-cuda:0}
SIZES=${SIZES:-2^16..2^24:4}
PY=${PY:-python3}  # the Python that has parskel and CuPy
PARSKEL="$PY -m parskel"
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi -L 2>/dev/null || true
$PARSKEL devices

# the NVIDIA OpenCL device's id, e.g. opencl:1:0
NVCL=$($PARSKEL devices --json | $PY -c '
import json, sys
ids = [d["id"] for d in json.load(sys.stdin) if d["backend"] == "opencl" and "nvidia" in d["vendor"].lower()]
print(ids[0] if ids else "")')

echo "## the tests of every dtype, axis, stack and primitive on $GPU ${NVCL}"
PARSKEL_TEST_DEVICES="$GPU${NVCL:+,$NVCL}" timeout 200 $PY -m pytest -q -p no:cacheprovider \
    tests/test_ordering.py tests/test_scan_axes.py tests/test_matmul_stacks.py tests/test_primitives.py \
    tests/test_complex.py tests/test_skeletons_bool.py tests/test_skeletons_stencil.py

echo "## the primitives group on $GPU against NumPy and CuPy, $SIZES elements"
timeout 240 $PARSKEL bench primitives --device "$GPU" --sizes "$SIZES" --peers numpy,cupy --reps 5 --warmup 2 \
    --out "$OUT/cuda"

if [ -n "$NVCL" ]; then
    echo "## NVIDIA's OpenCL device ($NVCL) at 2^24, parskel alone"
    timeout 60 $PARSKEL bench primitives --device "$NVCL" --sizes 2^24 --peers none --reps 3 --out "$OUT/opencl"
fi
