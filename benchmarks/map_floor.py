#!/usr/bin/env python3
"""A `Map` of x * x against the same kernel launched through PyOpenCL alone, and NumPy's `x * x`.

    python3 benchmarks/map_floor.py [--log2 20] [--device opencl:0:0] [--rounds 3]

The three are timed as `parskel bench` times the skeletons (interleaved repetitions, each
result checked between calls, host arrays in and out): parskel's call, the floor a Python
library on PoCL has for it (two host-pointer buffers, the kernel that parskel built, launched on
the same inline queue and waited for, with no parskel code around it), and NumPy. Medians of 15
repetitions per round. Needs a CPU device that works in host memory (PoCL).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np
import pyopencl as cl

import parskel as ps
from parskel.bench.cases import CASES, Subject
from parskel.bench.harness import measure_together
from parskel.bench.subjects import skeleton_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=20, help="log2 of the element count")
    parser.add_argument("--device", default="opencl:0:0")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n, dev = 1 << args.log2, ps.device(args.device)
    if not dev.shares_host_memory:
        raise SystemExit(f"{dev.id} does not work in host memory: the floor here is PoCL's")
    case = CASES["skeletons.map"]
    inputs = case.make(n, np.random.default_rng(3))
    expected = case.reference(inputs)
    square = ps.Map("float square(float x) { return x * x; }")
    with ps.using(dev):
        for _ in range(10):  # until the kernel has its inline build
            square(ps.Vector(inputs[0], copy=False)).numpy()
    ((_, plan),) = square._plans.items()
    count, extents, first, _, items, _ = plan.sizes[(n,)]
    if plan.flat is None or items or not first:
        raise SystemExit("this script launches the CPU's flat kernel alone; the call here takes another")
    kernel, queue = plan.flat.inline_handle(), dev._inline_commands()
    if kernel is None:
        raise SystemExit(f"the kernel of 2^{args.log2} elements does not run inline on {dev.id}")

    def bare(i: tuple[np.ndarray, ...]) -> np.ndarray:
        out = np.empty_like(i[0])
        flags = cl.mem_flags.USE_HOST_PTR
        a = cl.Buffer(dev.context, flags | cl.mem_flags.READ_ONLY, hostbuf=i[0])
        b = cl.Buffer(dev.context, flags | cl.mem_flags.READ_WRITE, hostbuf=out)
        for k, value in enumerate([a, b, count, *extents]):
            kernel.set_arg(k, value)
        cl.enqueue_nd_range_kernel(queue, kernel, (first,), (plan.group,))
        queue.finish()
        return out

    subjects = [
        Subject(case.family, "parskel Map", "variant", dev.id, skeleton_call(case.family, dev)),
        Subject(case.family, "the kernel through PyOpenCL", "baseline", "host", lambda i: (bare(i), None)),
        Subject(case.family, "numpy x * x", "peer", "host", lambda i: (i[0] * i[0], None)),
    ]
    print(f"Map x*x of 2^{args.log2} float32 on {dev.id}, medians of 15 interleaved calls:")
    for _ in range(args.rounds):
        results = measure_together(case, subjects, inputs, expected, 15, 3)
        numpy = results[-1].e2e or 0.0
        print(
            " | ".join(
                f"{r.subject} {1e6 * (r.e2e or 0):.1f} us ({numpy / (r.e2e or 1):.2f}x NumPy, {r.status})"
                for r in results
            )
        )


if __name__ == "__main__":
    main()
