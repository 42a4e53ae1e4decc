#!/usr/bin/env python3
"""``Map`` and ``Zip`` on ``cuda:0`` against a device copy of the same bytes, in one process.

    python3 benchmarks/map_copy.py
    for tree in OLD NEW OLD NEW; do PYTHONPATH=$tree/src python3 benchmarks/map_copy.py; done

At 2^24, 2^26, 2^28 and 2^28 + 3 float32 elements: ``Map`` of x * x and ``Zip`` of x + y over
``Vector``s into ``out=`` ones, and a device-to-device ``cudaMemcpyAsync`` of one input's
bytes; each the median of 21 calls between CUDA events, each call after an untimed one and a
synchronisation. A line per size gives the three times and ``Map``'s ratio to the copy (a
``Map`` reads and writes as many bytes as the copy; a ``Zip`` reads twice as many). The results
are checked against NumPy's.

Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=21, help="measured calls (default 21)")
    args = parser.parse_args()

    import cupy as cp

    import parskel as ps

    dev = ps.device("cuda:0")
    square = ps.Map("float f(float x) { return x * x; }")
    add = ps.Zip("float f(float x, float y) { return x + y; }")
    rng = np.random.default_rng(1)

    def timed(call: Callable[[], Any]) -> float:
        times = []
        for _ in range(args.reps):
            call()
            cp.cuda.Device().synchronize()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e3)
        return float(np.median(times))

    for log2, extra in ((24, 0), (26, 0), (28, 0), (28, 3)):
        n = (1 << log2) + extra
        x = rng.random(n, dtype=np.float32)
        t_map, t_zip, t_copy = _times(ps, cp, dev, square, add, x, timed)
        print(
            f"2^{log2}+{extra}: Map {t_map:.1f} us, Zip {t_zip:.1f} us, copy {t_copy:.1f} us: "
            f"Map {t_copy / t_map:.3f}x of the copy",
            flush=True,
        )


def _times(ps: Any, cp: Any, dev: Any, square: Any, add: Any, x: np.ndarray, timed: Any) -> tuple[float, float, float]:
    """``Map``, ``Zip`` and the copy over ``x``, timed by ``timed``, once their results are checked."""
    n = x.size
    vx = ps.Vector(x, device=dev)
    squares = ps.Vector.empty(n, np.float32, device=dev)
    sums = ps.Vector.empty(n, np.float32, device=dev)
    square(vx, out=squares)
    add(vx, squares, out=sums)
    if not (np.array_equal(squares.numpy(), x * x) and np.array_equal(sums.numpy(), x + x * x)):
        raise SystemExit(f"a result differs from NumPy's at n={n}")
    source = cp.asarray(x)
    target = cp.empty_like(source)
    stream = cp.cuda.Stream.null.ptr

    def copy() -> None:
        cp.cuda.runtime.memcpyAsync(target.data.ptr, source.data.ptr, source.nbytes, 3, stream)

    return timed(lambda: square(vx, out=squares)), timed(lambda: add(vx, squares, out=sums)), timed(copy)


if __name__ == "__main__":
    main()
