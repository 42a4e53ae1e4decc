#!/usr/bin/env python3
"""Small calls of two checkouts, timed in turns on one core: for a before-and-after of the host's
part of a call on a machine too noisy for runs one after the other.

    python3 benchmarks/calls_ab.py OLD/src NEW/src [--device opencl:0:0] [--cases map,reduce]
                                   [--rounds 20] [--core 1]

It starts one worker process per checkout (``PYTHONPATH`` set to it), both pinned to the same
core, and asks them in turns for bursts of 300 calls of a case (a cached ``Map`` of x*x over
1,000 float32 read back, ``Reduce`` to a host scalar, ``parskel.sort`` or ``scan`` of 1,000 from
NumPy arrays), each waited for; a burst reports its median. The order within a round alternates.
Printed per case: each checkout's median and best burst, and the median of the ratios of the
bursts paired in a round (new over old). Results are not checked here: the tests do that.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

CASES = ("map", "reduce", "sort", "scan")
BURST = 300


def worker(device: str, core: int) -> None:
    """Answer each case name read from stdin with the median microseconds of a burst."""
    os.sched_setaffinity(0, {core})
    import parskel as ps

    dev = ps.device(device)
    square = ps.Map("float f(float x) { return x * x; }")
    total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    x = np.arange(1000, dtype=np.float32)
    v = ps.Vector(x, copy=False, device=dev)
    keys = np.random.default_rng(1).integers(0, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    calls = {
        "map": lambda: square(v).numpy(),
        "reduce": lambda: total(v),
        "sort": lambda: ps.sort(keys, device=dev),
        "scan": lambda: ps.scan(keys.view(np.int32), device=dev),
    }
    for call in calls.values():
        for _ in range(100):
            call()
    for line in sys.stdin:
        call = calls[line.strip()]
        times = []
        for _ in range(BURST):
            start = time.perf_counter()
            call()
            dev.finish()
            times.append(time.perf_counter() - start)
        print(float(np.median(times)) * 1e6, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", nargs="?", help="the first checkout's src directory")
    parser.add_argument("new", nargs="?", help="the second checkout's src directory")
    parser.add_argument("--device", default="opencl:0:0")
    parser.add_argument("--cases", default="map,reduce", help=f"comma list of {', '.join(CASES)}")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--core", type=int, default=1 if (os.cpu_count() or 1) > 1 else 0, help="the core both run on")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.device, args.core)
        return
    if not (args.old and args.new):
        parser.error("give the two checkouts' src directories")
    cases = args.cases.split(",")
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    command = [sys.executable, __file__, "--worker", "--device", args.device, "--core", str(args.core)]
    workers = {
        name: subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": path}
        )
        for name, path in (("old", args.old), ("new", args.new))
    }
    bursts: dict[tuple[str, str], list[float]] = {(n, c): [] for n in workers for c in cases}
    for round_ in range(args.rounds):
        for case in cases:
            for name in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
                proc = workers[name]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(case + "\n")
                proc.stdin.flush()
                bursts[(name, case)].append(float(proc.stdout.readline()))
    for case in cases:
        old, new = np.array(bursts[("old", case)]), np.array(bursts[("new", case)])
        print(
            f"{case}: old median {np.median(old):.1f} us (best {old.min():.1f}), "
            f"new median {np.median(new):.1f} us (best {new.min():.1f}), new/old paired {np.median(new / old):.3f}"
        )
    for proc in workers.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


if __name__ == "__main__":
    main()
