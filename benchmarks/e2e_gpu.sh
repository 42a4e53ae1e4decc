#!/usr/bin/env bash
# End to end from NumPy arrays on the GPU machine (docs/pipeline.md; docs/benchmarks.md, "End to
# end from NumPy arrays"): the pipeline's tests on the GPU, `parskel bench e2e --full` against
# CuPy and PyTorch with the link measured in the same run, the same work out of core under a
# cap, and the NVIDIA OpenCL device where there is one.
#
#   bash benchmarks/e2e_gpu.sh OUT          (about 5 minutes on an H200; everything under OUT)
#
# OUT/log.txt has all that was printed; OUT/full, OUT/capped and OUT/opencl each hold a run's
# results.sqlite and report/ (`parskel report --out OUT/full` draws it again). Each step has its
# own time limit, so one that fails or stalls costs only itself.
set -uo pipefail
OUT=${1:?usage: bash benchmarks/e2e_gpu.sh OUT}
# a trial run elsewhere, e.g. on PoCL: GPU=opencl:0:0 FULL= CAP=16MiB bash benchmarks/e2e_gpu.sh /tmp/trial
GPU=${GPU:-cuda:0}
CAP=${CAP:-256MiB}
FULL=${FULL---full}
PY=${PY:-python3}  # the Python that has parskel, CuPy and PyTorch
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

echo "## the pipeline's tests on $GPU ${NVCL} (its streams and pinned staging run only on GPUs)"
PARSKEL_TEST_DEVICES="$GPU${NVCL:+,$NVCL}" timeout 150 $PY -m pytest -q -x -p no:cacheprovider \
    tests/test_pipeline.py tests/test_runtime.py

echo "## NumPy in and out: Map, Reduce, sort, scan (2^24, 2^26), matmul (2048, 4096) against NumPy, CuPy, PyTorch"
timeout 240 $PARSKEL bench e2e $FULL --reps 5 --warmup 2 --device "$GPU" --out "$OUT/full"

echo "## the same at 2^26 (matmul 4096) under a $CAP cap: out of core"
timeout 90 $PARSKEL bench e2e --device "$GPU" --sizes 2^26 --sizes e2e.matmul=4096 --peers none --reps 3 \
    --max-device-memory "$CAP" --out "$OUT/capped"

if [ -n "$NVCL" ]; then
    echo "## NVIDIA's OpenCL device ($NVCL) at 2^26 (matmul 4096)"
    timeout 90 $PARSKEL bench e2e --device "$NVCL" --sizes 2^26 --sizes e2e.matmul=4096 --peers none --reps 3 \
        --out "$OUT/opencl"
fi
