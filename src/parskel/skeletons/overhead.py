"""The fixed cost of a cached skeleton call on a tiny Vector (seed 004's complaint: large
overhead on small inputs), next to the floor of one bare kernel launch on the same device.

``python -m parskel.skeletons.overhead [--device SPEC] [--size N] [--repeats R]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from ..containers.vector import Vector
from ..runtime import Device
from ..runtime import device as select_device
from .map import EXTENTS, Map
from .reduce import Reduce


def _median_us(dev: Device, call: Callable[[], object], repeats: int) -> float:
    call()
    dev.finish()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        dev.finish()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def measure(dev: Device, size: int = 16, repeats: int = 2000) -> dict[str, float]:
    """Median microseconds per call, each call waited for (``finish``), after a warm-up call."""
    v = Vector(np.arange(size, dtype=np.float32), device=dev)
    out = Vector(size=size, dtype=np.float32, device=dev)
    square = Map("float f(float x) { return x * x; }")
    total = Reduce("float add(float a, float b) { return a + b; }", identity=0)
    square(v, out=out)
    kernel = next(iter(square._plans.values())).kernel
    src, dst = v.to_device(), out.to_device()
    # the Map kernel's arguments: input, output, count, the extents of the other axes, first index
    sizes = (np.uint32(size), *[np.uint32(1)] * len(EXTENTS), np.uint32(0))
    return {
        "bare kernel launch": _median_us(dev, lambda: dev.launch(kernel, 256, 256, src, dst, *sizes), repeats),
        "Map(v, out=w)": _median_us(dev, lambda: square(v, out=out), repeats),
        "Map(v) (new Vector)": _median_us(dev, lambda: square(v), repeats),
        "Reduce(v) to a host scalar": _median_us(dev, lambda: total(v), repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None)
    parser.add_argument("--size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2000)
    args = parser.parse_args()
    dev = select_device(args.device)
    print(f"{dev}, {args.size} float32 elements, median of {args.repeats} calls")
    for name, us in measure(dev, args.size, args.repeats).items():
        print(f"  {name:28s} {us:8.1f} us")


if __name__ == "__main__":
    main()
