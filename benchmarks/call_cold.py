#!/usr/bin/env python3
"""A light `Map` call with warm and with cold caches: parskel, the bare kernel, NumPy.

    python3 benchmarks/call_cold.py [--device opencl:0:0] [--log2 4,20] [--flush-mib 32] [--rounds 2]

Each subject is called back to back ("warm"), then with a read of ``--flush-mib`` MiB of other
memory before every call ("cold": what the benchmark's checks and the other subjects leave
between two calls of one subject). The subjects, on float32 host arrays of 2^log2 elements:

- ``numpy``: NumPy's ``x * x``;
- ``bare``: the kernel parskel built, on two new host-pointer buffers (one over a new output
  array; its scalar arguments set once, before), launched on the same inline queue and waited
  for through PyOpenCL alone: the floor of a Python library on PoCL;
- ``launch``: parskel's launch of that kernel and its wait, on buffers made once;
- ``ps(x)``: the skeleton called on the NumPy array (a new result array);
- ``ps(Vector)``: the call as ``parskel bench`` makes it, ``Map(f)(Vector(x, copy=False)).numpy()``.

Each subject's result is checked against NumPy's once, before the timing. Medians of 80 calls
per round, in microseconds. Needs a CPU device that works in host memory.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np
import pyopencl as cl

import parskel as ps
from parskel.cli.common import log2_sizes
from parskel.skeletons.map import _launch

CALLS = 80


def median_us(call: Callable[[], object], before: Callable[[], object]) -> float:
    times = []
    for _ in range(CALLS):
        before()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e6 * statistics.median(times)


def subjects(dev: ps.Device, square: ps.Map, x: np.ndarray) -> dict[str, Callable[[], object]]:
    with ps.using(dev):
        for _ in range(10):  # until the kernel has its inline build
            square(ps.Vector(x, copy=False)).numpy()
            square(x)
    plan = square._host_plan(dev, [x])
    assert plan is not None
    count, extents, first, first_arg, items, _ = plan.sizes[x.shape]
    if first and items:
        raise SystemExit("this script launches one kernel alone; the call here takes two")
    # the one kernel the call launches: the CPU's flat one, or the general one from first_arg on
    chosen, size, tail = (plan.flat, first, []) if first else (plan.kernel, items, [first_arg])
    kernel, queue = chosen.inline_handle(), dev._inline_commands()
    sizes = chosen.geometry(size, plan.group, dev.info)  # the sizes parskel's launch gives it
    if kernel is None:
        raise SystemExit(f"the kernel of {x.size} elements does not run inline on {dev.id}")
    flags = cl.mem_flags.USE_HOST_PTR
    for k, value in enumerate([count, *extents, *tail], start=2):  # set once: an argument stays set
        kernel.set_arg(k, value)

    def bare() -> np.ndarray:
        out = np.empty_like(x)
        a = cl.Buffer(dev.context, flags | cl.mem_flags.READ_ONLY, hostbuf=x)
        b = cl.Buffer(dev.context, flags | cl.mem_flags.READ_WRITE, hostbuf=out)
        kernel.set_arg(0, a)
        kernel.set_arg(1, b)
        cl.enqueue_nd_range_kernel(queue, kernel, *sizes)
        queue.finish()
        return out

    target = np.empty_like(x)
    held = [dev.host_buffer(x), dev.host_buffer(target, upload=False)]

    def launch() -> np.ndarray:
        _launch(plan, dev, x.shape, x.size, held, [])
        dev.download(held[1], target)
        return target

    return {
        "numpy": lambda: x * x,
        "bare": bare,
        "launch": launch,
        "ps(x)": lambda: square(x),
        "ps(Vector)": lambda: square(ps.Vector(x, copy=False)).numpy(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="opencl:0:0")
    parser.add_argument("--log2", default="4,20", type=log2_sizes, help="log2 of the element counts, comma-separated")
    parser.add_argument("--flush-mib", type=int, default=32, help="MiB read before each cold call")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    dev = ps.device(args.device)
    if not dev.shares_host_memory:
        raise SystemExit(f"{dev.id} does not work in host memory: the floor here is PoCL's")
    other = np.random.default_rng(1).random((args.flush_mib << 20) // 4, dtype=np.float32)
    square = ps.Map("float square(float x) { return x * x; }")
    print(f"Map x*x on {dev.id}; medians of {CALLS} calls in us; cold: {args.flush_mib} MiB read before each call")
    for log2 in args.log2:
        x = np.random.default_rng(2).random(1 << log2, dtype=np.float32)
        calls = subjects(dev, square, x)
        with ps.using(dev):
            for name, call in calls.items():  # every subject's result, checked once
                if not np.array_equal(np.asarray(call()), x * x):
                    raise SystemExit(f"{name} gave a wrong result")
            for round_ in range(args.rounds):
                for regime, before in (("warm", lambda: None), ("cold", lambda: other.sum())):
                    row = {name: median_us(call, before) for name, call in calls.items()}
                    shown = "  ".join(f"{name} {us:.1f}" for name, us in row.items())
                    print(
                        f"2^{log2} round {round_ + 1} {regime}: {shown}  (NumPy over ps(Vector): "
                        f"{row['numpy'] / row['ps(Vector)']:.2f}x)"
                    )


if __name__ == "__main__":
    main()
