#!/usr/bin/env python3
"""NumPy to NumPy through a CUDA GPU's pinned staging, under several staging configurations.

    python3 benchmarks/staging_sweep.py [--sizes 26,28] [--rounds 2]
                                        [--configs 64x2/2,64x4/2,32x2/4] [--chunks 8,4]
    python3 benchmarks/staging_sweep.py --streams [--mib 256]

The first form times ``Reduce``, ``Map`` (x*x) and ``parskel.scan`` of 2^k-element NumPy arrays
on ``cuda:0`` (medians of 5) under each configuration, alternating them in one process so that
the host's load falls on all alike. A configuration ``ZxS/P`` is ``S`` slots each way of
``Z`` MiB (``parskel.pipeline.staging``) with copy parts of at least ``P`` MiB
(``parskel.pipeline.copies``); a trailing ``t`` (``8x2/1t``) makes every copy on the threads
(plain stores, which leave the slots in the host's cache) instead of the host's CPU device
(non-temporal stores) where it has one; ``--chunks`` sets how many chunks a staged call aims for
(``parskel.pipeline.budget.TARGET_CHUNKS``). Rates are the input's bytes over the time.

``--streams`` times a ``--mib`` MiB upload alone, without parskel, two ways: the slot ring
(threads fill a slot, then one device copy of it) and per-thread rings (each thread streams
its own 4 MiB parts through two pinned buffers and a stream of its own), each as one call over
the whole array and as calls of 32 MiB that wait for their host copies, as a pipeline's
chunks do.

Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np

import parskel as ps

MiB = 1 << 20


def _median_s(call: Callable[[], object], reps: int = 5) -> float:
    call()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def sweep(sizes: list[int], configs: list[str], chunks: list[int], rounds: int) -> None:
    # the pipeline's modules (their names are shadowed by functions in parskel.pipeline)
    staging = sys.modules["parskel.pipeline.staging"]
    copies = sys.modules["parskel.pipeline.copies"]
    budget = sys.modules["parskel.pipeline.budget"]
    rng = np.random.default_rng(3)
    total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    square = ps.Map("float square(float x) { return x * x; }")
    streamed = copies.STREAM_BYTES
    for log in sizes:
        n = 1 << log
        x = rng.random(n, dtype=np.float32)
        ints = rng.integers(-9, 9, n, dtype=np.int32)
        calls = {
            "Reduce": lambda x=x: total(x),
            "Map": lambda x=x: square(x),
            "scan": lambda ints=ints: ps.scan(ints),
        }
        with ps.using("cuda:0"):
            assert np.allclose(square(x), x * x) and np.array_equal(ps.scan(ints), np.cumsum(ints) - ints)
            for _ in range(rounds):
                for config in configs:
                    size, rest = config.split("x")
                    count, part = rest.rstrip("t").split("/")
                    copies.STREAM_BYTES = 1 << 62 if config.endswith("t") else streamed
                    for target in chunks:
                        staging._staging.clear()
                        staging.SLOT_BYTES, staging.SLOTS = int(size) * MiB, int(count)
                        copies.PART_BYTES, budget.TARGET_CHUNKS = int(part) * MiB, target
                        shown = []
                        for name, call in calls.items():
                            seconds = _median_s(call)
                            shown.append(f"{name} {seconds * 1e3:6.2f} ms ({4 * n / seconds / 1e9:4.1f} GB/s)")
                        label = f"2^{log} {count} x {size} MiB slots, parts >= {part} MiB, {target} chunks"
                        print(f"{label}: " + "  ".join(shown), flush=True)


def streams(mib: int) -> None:
    import cupy as cp

    nbytes = mib * MiB
    source = np.random.default_rng(1).integers(0, 255, nbytes, dtype=np.uint8)
    target = cp.empty(nbytes, cp.uint8)
    runtime = cp.cuda.runtime
    pool = ThreadPoolExecutor(16)

    def pinned(size: int) -> np.ndarray:
        return np.frombuffer(cp.cuda.alloc_pinned_memory(size), np.uint8, size)

    def slot_ring(slot: int, slots: int, threads: int) -> Callable[[int, int], None]:
        ring = [pinned(slot) for _ in range(slots)]
        done: list[object] = [None] * slots
        stream = cp.cuda.Stream(non_blocking=True)
        turn = [0]

        def upload(lo: int, hi: int) -> None:
            while lo < hi:
                k = turn[0] % slots
                turn[0] += 1
                if done[k] is not None:
                    done[k].synchronize()
                used = min(slot, hi - lo)
                bounds = np.linspace(0, used, threads + 1).astype(int)
                pairs = [(ring[k][a:b], source[lo + a : lo + b]) for a, b in zip(bounds, bounds[1:])]
                for part in [pool.submit(np.copyto, *pair) for pair in pairs]:
                    part.result()
                runtime.memcpyAsync(target.data.ptr + lo, ring[k].ctypes.data, used, 1, stream.ptr)
                event = cp.cuda.Event(disable_timing=True)
                event.record(stream)
                done[k] = event
                lo += used

        return upload

    def thread_rings(threads: int, part: int) -> Callable[[int, int], None]:
        rings = [[pinned(part), pinned(part)] for _ in range(threads)]
        own = [cp.cuda.Stream(non_blocking=True) for _ in range(threads)]
        done: list[list[object]] = [[None, None] for _ in range(threads)]
        turns = [0] * threads

        def work(t: int, starts: list[int]) -> None:
            for lo in starts:
                k = turns[t] % 2
                turns[t] += 1
                if done[t][k] is not None:
                    done[t][k].synchronize()
                used = min(part, nbytes - lo)
                np.copyto(rings[t][k][:used], source[lo : lo + used])
                runtime.memcpyAsync(target.data.ptr + lo, rings[t][k].ctypes.data, used, 1, own[t].ptr)
                event = cp.cuda.Event(disable_timing=True)
                event.record(own[t])
                done[t][k] = event

        def upload(lo: int, hi: int) -> None:
            starts = list(range(lo, hi, part))
            jobs = [pool.submit(work, t, starts[t::threads]) for t in range(threads) if starts[t::threads]]
            for job in jobs:
                job.result()

        return upload

    for chunk in (nbytes, 32 * MiB):
        for label, upload in (
            ("slot ring, 2 x 64 MiB, 16 threads", slot_ring(64 * MiB, 2, 16)),
            ("per-thread rings, 8 threads x 2 x 4 MiB", thread_rings(8, 4 * MiB)),
            ("per-thread rings, 16 threads x 2 x 4 MiB", thread_rings(16, 4 * MiB)),
        ):

            def run(upload: Callable[[int, int], None] = upload, chunk: int = chunk) -> None:
                for lo in range(0, nbytes, chunk):
                    upload(lo, min(lo + chunk, nbytes))
                cp.cuda.Device().synchronize()

            seconds = _median_s(run)
            print(f"calls of {chunk >> 20} MiB, {label}: {nbytes / seconds / 1e9:.1f} GB/s", flush=True)
    assert bool((target == cp.asarray(source)).all())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="26,28", help="log2 of the element counts")
    parser.add_argument("--configs", default="64x2/2,64x4/2,32x2/4", help="SLOT_MiBxSLOTS/PART_MiB[t], comma list")
    parser.add_argument("--chunks", default="8", help="TARGET_CHUNKS values, comma list")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--streams", action="store_true", help="time the upload designs alone instead")
    parser.add_argument("--mib", type=int, default=256, help="bytes of the --streams upload, in MiB")
    args = parser.parse_args()
    if args.streams:
        streams(args.mib)
        return
    configs = args.configs.split(",")
    if not all(re.fullmatch(r"\d+x\d+/\d+t?", c) for c in configs):
        parser.error(f"--configs takes SLOT_MiBxSLOTS/PART_MiB[t] items such as 64x2/2, got {args.configs!r}")
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
        chunks = [int(c) for c in args.chunks.split(",")]
    except ValueError:
        parser.error("--sizes and --chunks take comma lists of integers")
    sweep(sizes, configs, chunks, args.rounds)


if __name__ == "__main__":
    main()
