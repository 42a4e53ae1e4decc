#!/usr/bin/env python3
"""Launch shapes of an element-wise kernel (x * x over float32) against a device copy, on ``cuda:0``.

    python3 benchmarks/map_shapes.py              # 16-byte vectors, as Map's ps_map_vec
    python3 benchmarks/map_shapes.py --scalar     # one float a work-item and row

Three shapes of the same CUDA kernel body, each with 4, 8 or 16 rows (a row: one vector, or one
element, a work-item) loaded before they are stored:

- ``tile``: a work-group per tile of rows, as many work-groups as tiles;
- ``run``: a grid that fills the device once (work-groups per SM given), each work-group a
  contiguous run of rows, as many rows a step;
- ``gs``: the same grid, each work-item taking the elements a grid apart, as many a step.

At 2^24, 2^26 and 2^28 floats, each shape's time (CUDA events around 10 calls, median of 15)
and its ratio to ``cudaMemcpyAsync`` of the same bytes, fastest first; every result is checked
against CuPy's ``x * x``. Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

BODY = r"""
#if SCALAR
typedef float V;
__device__ V sq(V a) { return a * a; }
#else
typedef float4 V;
__device__ V sq(V a) { return make_float4(a.x * a.x, a.y * a.y, a.z * a.z, a.w * a.w); }
#endif
extern "C" __global__ void tile(const V *__restrict__ x, V *__restrict__ y, unsigned count) {
    unsigned q0 = blockIdx.x * (blockDim.x * U) + threadIdx.x;
    V v[U];
    #pragma unroll
    for (unsigned k = 0; k < U; ++k) if (q0 + k * blockDim.x < count) v[k] = sq(x[q0 + k * blockDim.x]);
    #pragma unroll
    for (unsigned k = 0; k < U; ++k) if (q0 + k * blockDim.x < count) y[q0 + k * blockDim.x] = v[k];
}
extern "C" __global__ void run(const V *__restrict__ x, V *__restrict__ y, unsigned count) {
    unsigned l = blockDim.x, rows = count / l, per = rows / gridDim.x, more = rows % gridDim.x;
    unsigned r = blockIdx.x * per + min(blockIdx.x, more), end = r + per + (blockIdx.x < more);
    for (; r < end; r += U) {
        unsigned q0 = r * l + threadIdx.x, m = end - r;
        V v[U];
        #pragma unroll
        for (unsigned k = 0; k < U; ++k) if (k < m) v[k] = sq(x[q0 + k * l]);
        #pragma unroll
        for (unsigned k = 0; k < U; ++k) if (k < m) y[q0 + k * l] = v[k];
    }
    for (unsigned q = rows * l + blockIdx.x * l + threadIdx.x; q < count; q += gridDim.x * l) y[q] = sq(x[q]);
}
extern "C" __global__ void gs(const V *__restrict__ x, V *__restrict__ y, unsigned count) {
    unsigned s = gridDim.x * blockDim.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * s < count; i += U * s) {
        V v[U];
        #pragma unroll
        for (unsigned k = 0; k < U; ++k) v[k] = sq(x[i + k * s]);
        #pragma unroll
        for (unsigned k = 0; k < U; ++k) y[i + k * s] = v[k];
    }
    for (; i < count; i += s) y[i] = sq(x[i]);
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scalar", action="store_true", help="one float a row, not a 16-byte vector")
    parser.add_argument("--top", type=int, default=12, help="shapes printed per size (default 12)")
    args = parser.parse_args()

    import cupy as cp

    lanes = 1 if args.scalar else 4
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    kernels: dict[tuple[str, int], Any] = {}
    for rows in (4, 8, 16):
        module = cp.RawModule(code=BODY, options=(f"-DU={rows}", f"-DSCALAR={int(args.scalar)}"))
        for name in ("tile", "run", "gs"):
            kernels[name, rows] = module.get_function(name)

    def timed(call: Callable[..., Any], *args: Any, reps: int = 15, inner: int = 10) -> float:
        """``call(*args)``'s time, us: the median over ``reps`` of ``inner`` calls in a row."""
        times = []
        for _ in range(reps):
            call(*args)
            cp.cuda.Device().synchronize()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            for _ in range(inner):
                call(*args)
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e3 / inner)
        return float(np.median(times))

    for log2 in (24, 26, 28):
        n = 1 << log2
        x = cp.random.random(n, dtype=cp.float32)
        y = cp.empty_like(x)
        want = x * x
        count = np.uint32(n // lanes)
        copy = timed(cp.cuda.runtime.memcpyAsync, y.data.ptr, x.data.ptr, x.nbytes, 3, 0)
        found = []
        for (name, rows), group in itertools.product(kernels, (128, 256, 512, 1024)):
            kernel = kernels[name, rows]
            grids = [-(-int(count) // (group * rows))] if name == "tile" else [sms * k for k in (4, 8, 16, 32)]
            for grid in grids:
                try:
                    took = timed(kernel, (grid,), (group,), (x, y, count))
                except cp.cuda.driver.CUDADriverError:  # too many registers for the group
                    continue
                if not bool((y == want).all()):
                    raise SystemExit(f"{name} with {rows} rows in groups of {group} gave a wrong result")
                y.fill(0)
                shape = f"{name} rows={rows} group={group}" + ("" if name == "tile" else f" per_sm={grid // sms}")
                found.append((took, shape))
        found.sort()
        print(f"2^{log2}: device copy {copy:.1f} us")
        for took, shape in found[: args.top]:
            print(f"  {took:8.1f} us  {copy / took:.3f}x of the copy  {shape}")


if __name__ == "__main__":
    main()
