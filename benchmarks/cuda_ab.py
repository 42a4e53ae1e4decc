#!/usr/bin/env python3
"""Before-and-after timings on ``cuda:0`` against CuPy in the same process, for comparing two
commits: run it on each checkout in turn, alternating, on the same warm machine.

    for tree in OLD NEW OLD NEW; do PYTHONPATH=$tree/src python3 benchmarks/cuda_ab.py sort; done

Parts (each prints one line):

- ``sort``: ``parskel.sort`` of uint32 keys on CuPy arrays at 2^24 and 2^28 against
  ``cupy.sort`` (CUB): CUDA events around the call, median of 15 after 3 warm-ups; the result
  is checked against CuPy's.
- ``pairs``: ``parskel.sort(keys, values)`` at 2^24 and 2^28, keys alone again, against
  ``cupy.argsort`` and ``cupy.sort``: median of 11 after 2 warm-ups; checked.
- ``scan``: ``parskel.scan`` (inclusive int32) at 2^24 and 2^28 against ``cupy.cumsum``:
  median of 21 after 3 warm-ups; checked.
- ``issue``: ``parskel.scan`` and ``parskel.sort`` on CuPy arrays at 2^20, 2^24 and 2^28, each
  the median of 21 calls between CUDA events against CuPy's ``cumsum`` and ``sort``, and the
  host's time per call when 300 calls are made without waiting (the GPU waits on the host
  where that exceeds the kernels' time); checked.
- ``calls``: the calls of ``parskel bench overhead`` (a cached ``Map`` of 1,000 float32 read
  back, ``Reduce`` to a host scalar, ``sort`` and ``scan`` of 1,000 and ``matmul`` of 16 x 16
  from NumPy arrays) against CuPy's same work, each the median of 2,000 calls after 100,
  measured twice; with ``--profile DIR`` also a cProfile of 3,000 calls of each into DIR.

Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cupy as cp
import numpy as np

import parskel as ps


def event_ms(call: Callable[[], Any], reps: int, warmup: int) -> float:
    """Median milliseconds of ``call`` between CUDA events on the default stream."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(warmup):
        call()
    times = []
    for _ in range(reps):
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return sorted(times)[reps // 2]


def random_keys(n: int) -> Any:
    return cp.random.default_rng(1).integers(0, 2**32, n, dtype=cp.uint64).astype(cp.uint32)


def versus(label: str, ours: Callable[[], Any], peer: Callable[[], Any], reps: int, warmup: int) -> str:
    """``label``, then the median milliseconds of ``ours`` and of CuPy's ``peer`` and their ratio."""
    mine, theirs = event_ms(ours, reps, warmup), event_ms(peer, reps, warmup)
    return f"{label} {mine:.3f} ms (CuPy {theirs:.3f}, {theirs / mine:.2f}x)"


def sort(dev: ps.Device) -> str:
    row = []
    for e in (24, 28):
        k = random_keys(1 << e)
        assert bool((ps.sort(k, device=dev) == cp.sort(k)).all())
        row.append(versus(f"2^{e} keys", lambda k=k: ps.sort(k, device=dev), lambda k=k: cp.sort(k), 15, 3))
    return " | ".join(row)


def pairs(dev: ps.Device) -> str:
    row = []
    for e in (24, 28):
        n = 1 << e
        k, v = random_keys(n), cp.arange(n, dtype=cp.uint32)
        got_k, got_v = ps.sort(k, v, device=dev)
        assert bool((got_k == cp.sort(k)).all()) and bool((k[got_v] == got_k).all())
        both = event_ms(lambda k=k, v=v: ps.sort(k, v, device=dev), 11, 2)
        keys = event_ms(lambda k=k: ps.sort(k, device=dev), 11, 2)
        argsort = event_ms(lambda k=k: cp.argsort(k), 11, 2)
        peer = event_ms(lambda k=k: cp.sort(k), 11, 2)
        row.append(f"2^{e}: pairs {both:.3f} keys {keys:.3f} | CuPy argsort {argsort:.3f} sort {peer:.3f}")
    return " || ".join(row)


def scan(dev: ps.Device) -> str:
    row = []
    for e in (24, 28):
        x = cp.random.default_rng(1).integers(-100, 100, 1 << e, dtype=cp.int32)
        assert bool((ps.scan(x, inclusive=True, device=dev) == cp.cumsum(x, dtype=cp.int32)).all())
        ours = lambda x=x: ps.scan(x, inclusive=True, device=dev)
        row.append(versus(f"2^{e}", ours, lambda x=x: cp.cumsum(x, dtype=cp.int32), 21, 3))
    return " | ".join(row)


def issued_us(call: Callable[[], Any], reps: int) -> float:
    """Host microseconds per call of ``reps`` calls made without waiting for the GPU."""
    for _ in range(20):
        call()
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        call()
    seconds = time.perf_counter() - start
    cp.cuda.Device().synchronize()
    return seconds / reps * 1e6


def issue(dev: ps.Device) -> str:
    row = []
    for e in (20, 24, 28):
        x = cp.random.default_rng(1).integers(-100, 100, 1 << e, dtype=cp.int32)
        k = random_keys(1 << e)
        scan = lambda x=x: ps.scan(x, inclusive=True, device=dev)
        sort = lambda k=k: ps.sort(k, device=dev)
        assert bool((scan() == cp.cumsum(x, dtype=cp.int32)).all()) and bool((sort() == cp.sort(k)).all())
        row.append(
            f"2^{e}: scan {event_ms(scan, 21, 3):.4f} ms (cumsum {event_ms(lambda x=x: cp.cumsum(x), 21, 3):.4f}) "
            f"issue {issued_us(scan, 300):.0f} us | sort {event_ms(sort, 21, 3):.4f} ms "
            f"(cupy {event_ms(lambda k=k: cp.sort(k), 21, 3):.4f}) issue {issued_us(sort, 100):.0f} us"
        )
    return "\n".join(row)


def calls(dev: ps.Device, profile: Path | None) -> str:
    square = ps.Map("float f(float x) { return x * x; }")
    total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    rng = np.random.default_rng(1)
    x = rng.random(1000, dtype=np.float32)
    k = rng.integers(0, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    xi = rng.integers(-9, 9, 1000).astype(np.int32)
    a = rng.random((16, 16), dtype=np.float32)
    v = ps.Vector(x, copy=False, device=dev)
    d = cp.asarray(x)
    cases: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "map": (lambda: square(v).numpy(), lambda: (d * d).get()),
        "reduce": (lambda: total(v), lambda: float(d.sum())),
        "sort": (lambda: ps.sort(k, device=dev), lambda: cp.sort(cp.asarray(k)).get()),
        "scan": (lambda: ps.scan(xi, device=dev), lambda: cp.cumsum(cp.asarray(xi)).get()),
        "matmul": (lambda: ps.matmul(a, a, device=dev), lambda: (cp.asarray(a) @ cp.asarray(a)).get()),
    }
    sync = cp.cuda.Stream.null.synchronize

    def us(call: Callable[[], Any], finish: Callable[[], None]) -> float:
        times = []
        for _ in range(2000):
            start = time.perf_counter()
            call()
            finish()
            times.append(time.perf_counter() - start)
        return sorted(times)[1000] * 1e6

    row = []
    for name, (ours, peer) in cases.items():
        for _ in range(100):
            ours()
            peer()
        t1, c1, t2, c2 = us(ours, dev.finish), us(peer, sync), us(ours, dev.finish), us(peer, sync)
        row.append(
            f"{name}: parskel {t1:.1f}/{t2:.1f} us, CuPy {c1:.1f}/{c2:.1f} us, ratio {c1 / t1:.2f}/{c2 / t2:.2f}"
        )
        if profile is not None:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(3000):
                ours()
                dev.finish()
            profiler.disable()
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(35)
            profile.mkdir(parents=True, exist_ok=True)
            (profile / f"prof_{name}.txt").write_text(text.getvalue())
    return "\n".join(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("sort", "pairs", "scan", "issue", "calls"))
    parser.add_argument("--profile", type=Path, help="with calls: write a cProfile of each call here")
    args = parser.parse_args()
    dev = ps.device("cuda:0")
    if args.part == "calls":
        print(calls(dev, args.profile), flush=True)
    else:
        print({"sort": sort, "pairs": pairs, "scan": scan, "issue": issue}[args.part](dev), flush=True)


if __name__ == "__main__":
    main()
