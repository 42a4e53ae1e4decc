#!/usr/bin/env python3
"""Where a call's time goes on ``cuda:0``: CUDA events before and after every command that
parskel enqueues (launches, including those of ``Device.launcher``, fills, copies), inside CUDA
events around the whole call.

    python3 benchmarks/call_timeline.py 28          # 2^28 elements
    for tree in OLD NEW OLD NEW; do PYTHONPATH=$tree/src python3 benchmarks/call_timeline.py 28; done

Each of ``keys`` (``parskel.sort`` of uint32 on CuPy arrays), ``pairs`` (with uint32 values),
``scan`` (``parskel.scan``, inclusive int32), ``reduce`` (the ``Reduce`` skeleton's sum of a
float32 ``Vector`` into an ``out=`` one), ``map`` (``Map`` of x * x into an ``out=`` one) and
``matmul`` (``parskel.matmul`` of two float32 CuPy matrices of side 2^(LOG2 / 2), rounded down)
is called 3 times, then 9 times as measured: each measured call follows an untimed one and a
synchronisation, as in ``parskel bench resident``. A line per part gives the medians of the
call, of the time from the call's start to its first command, of its kernels' time summed,
and of the time in no command (the call less its commands), and the host's time in the call;
then the commands of the median call, each with its start after the call's and its duration.
The events around each command add a few microseconds of the host's time to the call. The
results of the last call of each part are checked against CuPy's.

Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log2", type=int, nargs="?", default=28, help="elements: 2^LOG2 (default 28)")
    parser.add_argument("--reps", type=int, default=9, help="measured calls (default 9)")
    args = parser.parse_args()

    import cupy as cp

    import parskel as ps

    dev = ps.device("cuda:0")
    commands = _spy(type(dev), cp)
    n = 1 << args.log2
    rng = cp.random.default_rng(1)
    keys = rng.integers(0, 2**32, n, dtype=cp.uint64).astype(cp.uint32)
    values = cp.arange(n, dtype=cp.uint32)
    counts = rng.integers(0, 100, n, dtype=cp.int64).astype(cp.int32)
    floats = rng.random(n, dtype=cp.float32)
    vin = ps.Vector(cp.asnumpy(floats), device=dev)
    edge = 1 << (args.log2 // 2)
    ma, mb = rng.random((edge, edge), dtype=cp.float32), rng.random((edge, edge), dtype=cp.float32)
    total = ps.Vector.empty(1, np.float32, device=dev)
    squares = ps.Vector.empty(n, np.float32, device=dev)
    add = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    square = ps.Map("float f(float x) { return x * x; }")
    parts: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {
        "keys": (lambda: ps.sort(keys), lambda out: _same(out, cp.sort(keys))),
        "pairs": (lambda: ps.sort(keys, values), lambda out: _same(out[1], cp.argsort(keys))),
        "scan": (lambda: ps.scan(counts, inclusive=True), lambda out: _same(out, cp.cumsum(counts, dtype=cp.int32))),
        "reduce": (lambda: add(vin, out=total), lambda out: _close(total.numpy()[0], float(floats.sum()))),
        "map": (lambda: square(vin, out=squares), lambda out: _same(squares.numpy(), cp.asnumpy(floats * floats))),
        "matmul": (lambda: ps.matmul(ma, mb), lambda out: _close_matrices(out, ma, mb)),
    }
    for name, (call, check) in parts.items():
        for _ in range(3):
            call()
        cp.cuda.Device().synchronize()
        rows = []
        out: Any = None
        for _ in range(args.reps):
            del out
            call()
            cp.cuda.Device().synchronize()
            commands.clear()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            begun = time.perf_counter()
            out = call()
            host = time.perf_counter() - begun
            end.record()
            end.synchronize()
            ms = cp.cuda.get_elapsed_time
            steps = [(label, ms(start, b) * 1e3, ms(b, e) * 1e3) for label, b, e in commands]
            whole = ms(start, end) * 1e3
            kernels = sum(d for label, _, d in steps if label.startswith("launch"))
            rows.append(
                (whole, steps[0][1] if steps else whole, kernels, whole - sum(d for *_, d in steps), host * 1e6, steps)
            )
        check(out)
        del out
        median = np.median
        print(
            f"{name} 2^{args.log2}: call {median([r[0] for r in rows]):.1f} us, to the first command "
            f"{median([r[1] for r in rows]):.1f}, kernels {median([r[2] for r in rows]):.1f}, in no command "
            f"{median([r[3] for r in rows]):.1f}, host {median([r[4] for r in rows]):.1f}"
        )
        middle = sorted(rows, key=lambda r: r[0])[len(rows) // 2]
        for label, at, took in middle[5]:
            print(f"   {label:40s} at {at:9.1f} us, took {took:9.1f} us")
        sys.stdout.flush()


def _spy(cls: Any, cp: Any) -> list[tuple[str, Any, Any]]:
    """Wrap the device class's launch, fill and copy, and the launches its ``launcher`` makes,
    so that each records a CUDA event before and after it; the list the events go to."""
    seen: list[tuple[str, Any, Any]] = []

    def timed(label: str, command: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        before = cp.cuda.Event()
        before.record()
        result = command(*args, **kwargs)
        after = cp.cuda.Event()
        after.record()
        seen.append((label, before, after))
        return result

    for name in ("launch", "fill", "copy"):
        original = getattr(cls, name)

        def spied(self: Any, *args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            label = f"{_name}:{getattr(args[0], 'name', '')}" if _name == "launch" else _name
            return timed(label, _original, self, *args, **kwargs)

        setattr(cls, name, spied)
    made = cls.launcher

    def launcher(self: Any, kernel: Any, *sizes: Any) -> Callable[..., None]:
        launch = made(self, kernel, *sizes)
        return lambda *args: timed(f"launch:{kernel.name}", launch, *args)

    cls.launcher = launcher
    return seen


def _same(got: Any, want: Any) -> None:
    import cupy as cp

    if not bool(cp.array_equal(cp.asarray(got), cp.asarray(want))):
        raise SystemExit("a result differs from CuPy's")


def _close_matrices(got: Any, a: Any, b: Any) -> None:
    import cupy as cp

    want = a @ b
    if float(cp.abs(got - want).max()) > 1e-3 * float(cp.abs(want).max()):
        raise SystemExit("the product differs from CuPy's")


def _close(got: float, want: float) -> None:
    if abs(got - want) > 1e-3 * abs(want):
        raise SystemExit(f"the sum {got} differs from CuPy's {want}")


if __name__ == "__main__":
    main()
