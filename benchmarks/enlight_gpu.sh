#!/usr/bin/env bash
# Enlight on the GPU machine (docs/enlight.md, "H200"): generate the seed's scenes at full size
# and time them with `parskel render --bench` at 1024x768 on cuda:0 and on the NVIDIA OpenCL
# device, with Embree on the host's cores as the peer where its wheel (embreex) is installed.
#
#   bash benchmarks/enlight_gpu.sh OUT          (about 5 minutes on an H200; everything under OUT)
#
# OUT/<run>/<scene>/ gets bench.json, bench.txt and frame.png; OUT/summary.txt collects the
# figures. Each run has its own time limit, so one that fails or stalls costs only itself.
set -uo pipefail
OUT=${1:?usage: bash benchmarks/enlight_gpu.sh OUT}
# smaller settings for a trial run elsewhere, e.g. on PoCL:
#   GPU=opencl:0:0 SIZE=64x48 LEVEL=2 TRIANGLES=20000 BOXES=100 bash benchmarks/enlight_gpu.sh /tmp/trial
SIZE=${SIZE:-1024x768}
GPU=${GPU:-cuda:0}
LEVEL=${LEVEL:-5}
TRIANGLES=${TRIANGLES:-12500000}
BOXES=${BOXES:-100000}
LIMIT=${LIMIT:-150}
PY=${PY:-python3}  # the Python that has parskel (and, for the peer, embreex)
PARSKEL="$PY -m parskel"
mkdir -p "$OUT/scenes"
exec > >(tee "$OUT/log.txt") 2>&1

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi -L 2>/dev/null || true
$PARSKEL devices

$PARSKEL scene cylinder-head --out "$OUT/scenes/cylinder-head"
$PARSKEL scene menger --level "$LEVEL" --out "$OUT/scenes/menger"
$PARSKEL scene impeller --volumes 48 --triangles "$TRIANGLES" --out "$OUT/scenes/impeller"
$PARSKEL scene random-boxes --volumes "$BOXES" --out "$OUT/scenes/boxes"
SCENES="cylinder-head menger impeller boxes"

# the NVIDIA OpenCL device's id, e.g. opencl:1:0
NVCL=$($PARSKEL devices --json | $PY -c '
import json, sys
ids = [d["id"] for d in json.load(sys.stdin) if d["backend"] == "opencl" and "nvidia" in d["vendor"].lower()]
print(ids[0] if ids else "")')

run() {  # label device scene [extra options]
    local label=$1 dev=$2 scene=$3
    shift 3
    local dir="$OUT/$label/$scene"
    mkdir -p "$dir"
    echo "## $scene on $dev $*"
    timeout "$LIMIT" $PARSKEL render "$OUT/scenes/$scene/scene.json" --out "$dir" --bench --size "$SIZE" \
        --device "$dev" "$@" | tee "$dir/bench.txt" || echo "(failed or timed out: $dev $scene)"
}

# Embree (trimesh + embreex) on the host's cores, after parskel's figures in the same run: on the
# cylinder head with the CUDA run, and last, as they may take minutes, on the impeller and the
# boxes (one frame each). Not on the sponge: trimesh finds all hits by casting again past each
# one, and a ray through the sponge crosses up to a hundred walls (51 s a frame on 2 cores for
# level 4).
EMBREE=""
if $PY -c 'import embreex' 2>/dev/null; then EMBREE="--embree"; else echo "(no Embree peer: pip install trimesh embreex)"; fi
run cuda "$GPU" cylinder-head $EMBREE
run cuda "$GPU" menger
run cuda "$GPU" impeller
run cuda "$GPU" boxes
if [ -n "$NVCL" ]; then
    for scene in $SCENES; do run opencl "$NVCL" "$scene"; done
else
    echo "(no NVIDIA OpenCL device)"
fi
run cuda-double "$GPU" cylinder-head --precision double
run cuda-packet "$GPU" cylinder-head --caster packet --frames 3
if [ -n "$EMBREE" ]; then
    run cuda-embree "$GPU" impeller --embree --frames 1
    run cuda-embree "$GPU" boxes --embree --frames 1
fi

grep -h -e "^scene" -e "^device" -e "^grid" -e "^build" -e "^frames" -e "^peer" -e "^caster" "$OUT"/*/*/bench.txt \
    > "$OUT/summary.txt" 2>/dev/null || true
echo "# done $(date -u +%Y-%m-%dT%H:%M:%SZ)"
