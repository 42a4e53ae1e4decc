#!/usr/bin/env python3
"""What bounds a Map or Reduce of NumPy arrays on a CUDA GPU: the host's copies or the link.

    python3 benchmarks/host_link.py [--mib 256]

A host array reaches the device either through parskel's pinned slots (a host copy into
page-locked memory on several threads, :mod:`parskel.pipeline.copies`, then a copy over the
link) or, the alternative measured here, by page-locking the caller's own pages where they are
(``cudaHostRegister``), copying from them and unlocking them. For an array of ``--mib`` MiB
(float32, its pages touched first) it prints, as medians of 7:

- the host copy into page-locked memory with 1 to 16 threads (parskel's copy threads);
- copies to the device from pageable and from page-locked memory;
- locking the array, copying from it, unlocking it; the same in 4 to 64 pieces, locked on 16
  threads at once, and locked piece by piece while the earlier pieces cross the link;
- parskel's ``Reduce`` (sum) and ``Map`` (x * x) of the array on ``cuda:0``, from its pageable
  memory and from a page-locked copy of it (each result checked against NumPy's), with the
  share of the page-locked link each reaches (the input's bytes over the time, against the
  copy to the device from page-locked memory; ``Map``'s result comes back at the same time).

Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import cupy as cp
import cupyx
import numpy as np

import parskel as ps
from parskel.pipeline import copies


def median_ms(call: Callable[[], object], reps: int = 7) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return sorted(times)[reps // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256, help="array size in MiB (default 256)")
    args = parser.parse_args()
    nbytes = args.mib << 20
    host = np.random.default_rng(1).random(nbytes // 4, dtype=np.float32)
    locked = cupyx.empty_pinned(host.shape, np.float32)
    device = cp.empty(host.shape, cp.float32)
    runtime = cp.cuda.runtime

    def rate(ms: float) -> str:
        return f"{ms:8.2f} ms {nbytes / ms / 1e6:6.1f} GB/s"

    for threads in (1, 2, 4, 8, 16):
        copies.THREADS, copies._pool = threads, None
        copied = median_ms(lambda: copies.copy([(locked, host)]))
        print(f"host copy into page-locked memory, {threads:2d} threads: {rate(copied)}")

    def upload(source: np.ndarray) -> None:
        runtime.memcpy(device.data.ptr, source.ctypes.data, nbytes, 1)

    print(f"to the device from pageable memory:            {rate(median_ms(lambda: upload(host)))}")
    link = median_ms(lambda: upload(locked))
    print(f"to the device from page-locked memory:         {rate(link)}")
    _calls(host, locked, link, rate)

    base = host.ctypes.data
    for _ in range(3):
        start = time.perf_counter()
        runtime.hostRegister(base, nbytes, 0)
        lock = time.perf_counter() - start
        copy = median_ms(lambda: upload(host), 1)
        start = time.perf_counter()
        runtime.hostUnregister(base)
        unlock = time.perf_counter() - start
        print(f"lock {lock * 1e3:.2f} ms, copy from the locked array {rate(copy)}, unlock {unlock * 1e3:.2f} ms")

    pool = ThreadPoolExecutor(16)
    stream = cp.cuda.Stream(non_blocking=True)
    for pieces in (4, 16, 64):
        step = nbytes // pieces
        parts = [(base + k * step, step) for k in range(pieces)]
        start = time.perf_counter()
        list(pool.map(lambda p: runtime.hostRegister(p[0], p[1], 0), parts))
        lock = time.perf_counter() - start
        list(pool.map(lambda p: runtime.hostUnregister(p[0]), parts))
        both = median_ms(functools.partial(_lock_while_copying, pool, stream, device.data.ptr, base, parts), 5)
        print(f"{pieces:2d} pieces: locked on 16 threads in {lock * 1e3:.2f} ms;", end=" ")
        print(f"locked while copied, then unlocked: {rate(both)}")


def _calls(host: np.ndarray, locked: np.ndarray, link: float, rate: Callable[[float], str]) -> None:
    """parskel's Reduce and Map of ``host`` and of its page-locked copy ``locked``."""
    total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    square = ps.Map("float square(float x) { return x * x; }")
    np.copyto(locked, host)
    exact = float(host.astype(np.float64).sum())
    with ps.using("cuda:0"):
        for name, source in (("pageable", host), ("page-locked", locked)):
            if abs(float(total(source)) - exact) > 1e-4 * abs(exact) or not np.array_equal(square(source), host * host):
                raise SystemExit(f"a call on the {name} array gave a wrong result")
            for label, call in (("Reduce", total), ("Map", square)):
                ms = median_ms(functools.partial(call, source))
                print(f"{label} from {name} memory: {rate(ms)} of input, {link / ms:.0%} of the page-locked link")


def _lock_while_copying(
    pool: ThreadPoolExecutor, stream: cp.cuda.Stream, target: int, base: int, parts: list[tuple[int, int]]
) -> None:
    """Lock the pieces on the threads, copy each to ``target`` once it is locked, unlock all."""
    runtime = cp.cuda.runtime
    locking = [pool.submit(runtime.hostRegister, p, size, 0) for p, size in parts]
    for done, (p, size) in zip(locking, parts):
        done.result()
        runtime.memcpyAsync(target + (p - base), p, size, 1, stream.ptr)
    stream.synchronize()
    list(pool.map(lambda q: runtime.hostUnregister(q[0]), parts))


if __name__ == "__main__":
    main()
