#!/usr/bin/env python3
"""Host time of one public call on CuPy arrays, beside CuPy's own, on ``cuda:0``.

    python3 benchmarks/host_calls.py [--log2 24] [--edge 4096] [--reps 15]

Each call runs after the GPU has finished the one before; ``host`` is the time until the call
returns to Python (the GPU still working on what it enqueued, unless the call waits for a
result, as ``Reduce`` does for its scalar), ``call`` the time between CUDA events recorded
before and after it. Medians of ``--reps``. A call's kernels start after most of its host
time, so the difference between a call and its kernels at these sizes is mostly this time.

Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import cupy as cp
import numpy as np

import parskel as ps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=24, help="log2 of the element count")
    parser.add_argument("--edge", type=int, default=4096, help="matmul edge")
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    n = 1 << args.log2
    rng = np.random.default_rng(1)
    keys = cp.asarray(rng.integers(0, 2**32, n, dtype=np.uint32))
    values = cp.arange(n, dtype=cp.uint32)
    floats = cp.asarray(rng.random(n, dtype=np.float32))
    ints = cp.asarray(rng.integers(-9, 9, n, dtype=np.int32))
    a = cp.asarray(rng.random((args.edge, args.edge), dtype=np.float32))
    total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    square = ps.Map("float square(float x) { return x * x; }")
    calls = {
        "parskel.sort, keys": lambda: ps.sort(keys),
        "parskel.sort, pairs": lambda: ps.sort(keys, values),
        "parskel.scan": lambda: ps.scan(ints),
        "Reduce, to a host scalar": lambda: total(ps.Vector(floats, copy=False)),
        "Map": lambda: square(ps.Vector(floats, copy=False)),
        "parskel.matmul": lambda: ps.matmul(a, a),
        "cupy.sort": lambda: cp.sort(keys),
        "cupy.cumsum": lambda: cp.cumsum(ints),
        "cupy.sum, to a host scalar": lambda: float(cp.sum(floats)),
        "cupy.matmul": lambda: cp.matmul(a, a),
    }
    with ps.using("cuda:0"):
        for name, call in calls.items():
            call()
            host, between = [], []
            for _ in range(args.reps):
                start, end = cp.cuda.Event(), cp.cuda.Event()
                cp.cuda.Device().synchronize()
                start.record()
                clock = time.perf_counter()
                call()
                host.append(time.perf_counter() - clock)
                end.record()
                end.synchronize()
                between.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
            shown = f"host {np.median(host) * 1e6:7.1f} us   call {np.median(between) * 1e6:8.1f} us"
            print(f"{name:28s} {shown}", flush=True)


if __name__ == "__main__":
    main()
