#!/usr/bin/env python3
"""Public calls on NumPy arrays with and without the host pool (``parskel.runtime.hostpool``),
beside NumPy, in one process: each round makes every call once, in turn, with the pool on,
with it off (``PARSKEL_HOST_POOL=0``) and NumPy's, 3 ms apart; medians over the rounds.

    python3 benchmarks/host_pool.py [--sizes 24,26] [--rounds 9] [--device opencl:0:0]

Calls: ``parskel.scan`` of int32 (inclusive; ``np.cumsum(x, dtype=np.int32)``),
``parskel.sort`` of uint32 (``np.sort``), and ``Map`` x*x of float32 from and to NumPy
(``x * x``). Every result is checked against NumPy's and dropped before the next call, as a
loop over batches would.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np

import parskel as ps
from parskel.runtime import hostpool


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="24,26", help="log2 of the element counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--device", default=None, help="a parskel device id (default: the default device)")
    args = parser.parse_args()
    try:
        sizes = [1 << int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: give log2 sizes such as 24,26, not {args.sizes!r}")
    square = ps.Map("float square(float x) { return x * x; }")
    rng = np.random.default_rng(3)
    with ps.using(args.device) if args.device else contextlib.nullcontext():
        pool = "off" if hostpool.idle_limit() == 0 else "on"
        print(f"device {ps.runtime.device(None).id}, pool {pool} by default")
        for n in sizes:
            ints = rng.integers(0, 100, n, dtype=np.int32)
            keys = rng.integers(0, 2**32, n, dtype=np.uint32)
            floats = rng.random(n, dtype=np.float32)
            calls: dict[str, tuple[Callable[[], np.ndarray], Callable[[], np.ndarray]]] = {
                "scan": (partial(ps.scan, ints, inclusive=True), partial(np.cumsum, ints, dtype=np.int32)),
                "sort": (partial(ps.sort, keys), partial(np.sort, keys)),
                "Map x*x": (partial(square, floats), partial(np.square, floats)),
            }
            for name, (call, numpy_call) in calls.items():
                expected = numpy_call()
                times: dict[str, list[float]] = {"pool": [], "no pool": [], "numpy": []}
                for _ in range(args.rounds + 1):  # the first round warms up
                    for how in times:
                        os.environ[hostpool.ENV_VAR] = "0" if how == "no pool" else ""
                        time.sleep(0.003)
                        start = time.perf_counter()
                        got = numpy_call() if how == "numpy" else call()
                        times[how].append(time.perf_counter() - start)
                        if not np.array_equal(np.asarray(got), expected):
                            raise SystemExit(f"{name} at {n}: {how} gave a wrong result")
                        del got
                os.environ.pop(hostpool.ENV_VAR, None)
                ms = {how: 1e3 * float(np.median(t[1:])) for how, t in times.items()}
                print(
                    f"{name:8s} n=2^{n.bit_length() - 1}: pool {ms['pool']:.2f} ms, no pool {ms['no pool']:.2f} ms, "
                    f"numpy {ms['numpy']:.2f} ms; numpy / pool {ms['numpy'] / ms['pool']:.2f}x, "
                    f"numpy / no pool {ms['numpy'] / ms['no pool']:.2f}x"
                )


if __name__ == "__main__":
    main()
