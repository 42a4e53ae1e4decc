#!/usr/bin/env python3
"""Strong and weak scaling of distributed skeletons: Map, Reduce, Scan, MapOverlap and sort.

    python3 benchmarks/dist_scaling.py OUT --devices cuda:0,cuda:1 --size 2^26     # 1 vs 2 GPUs
    python3 benchmarks/dist_scaling.py OUT --devices cpu/2 --size 2^24             # PoCL sub-devices
    mpiexec -n 4 python3 benchmarks/dist_scaling.py OUT --mpi --size 2^24          # 1, 2, 4 ranks:
                                                                                   # run once per -n

``--devices`` lists the devices of one process, or ``DEVICE/P`` for P sub-devices of one OpenCL
device (``Device.partition``). For each P from 1 to the number of devices, the first P devices
hold a block distribution of ``--size`` elements (strong scaling) and of ``--size`` elements per
device (weak scaling); each operation is timed on data already on the devices, as the median of
``--reps`` calls after a warm-up, each call waited for on every device:

- map: ``x * x`` over float32 (a Map; GB/s read + write);
- reduce: the sum of float32 (a Reduce; GB/s read);
- scan: the exclusive int32 sum (a Scan; GB/s read + write);
- stencil: ``(x[-1] + x[0] + x[1]) / 3`` over float32, clamped (a MapOverlap; GB/s read + write);
- sort: ``ps.sort`` of uint32 keys (a sample sort across the parts; Mkeys/s, host-staged).

With ``--mpi`` the script runs on every rank (one part per rank, each on the default device or
``--devices``' first) and times the same operations over all ranks; run it with ``-n 1``, ``-n 2``
and ``-n 4`` for the scaling. ``--dask`` adds Dask's threaded scheduler on the same data with P
workers and P chunks (map, reduce, scan, stencil; Dask has no parallel sort) where Dask is
installed. Every result is checked against NumPy on the whole data. Writes
OUT/dist_scaling[_mpiN].json and a Markdown table OUT/dist_scaling[_mpiN].md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np

import parskel as ps

OPERATIONS = ("map", "reduce", "scan", "stencil", "sort")
BYTES = {"map": 8, "reduce": 4, "scan": 8, "stencil": 8}  # per element moved to or from memory


def _size(text: str) -> int:
    base, _, power = text.partition("^")
    return int(base) ** int(power) if power else int(float(text))


def _devices(spec: str) -> list[ps.Device]:
    found: list[ps.Device] = []
    for item in spec.split(","):
        name, _, parts = item.partition("/")
        dev = ps.device(name)
        found += dev.partition(int(parts)) if parts else [dev]
    return found


class Skeletons:
    """The skeletons timed, built once so that their kernels are compiled before timing."""

    def __init__(self) -> None:
        self.square = ps.Map("float square(float x) { return x * x; }")
        self.total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
        self.prefix = ps.Scan("int add(int a, int b) { return a + b; }", identity=0)
        self.blur = ps.MapOverlap(
            "float blur(const float *x) { return (x[-1] + x[0] + x[1]) / 3.0f; }", radius=1, boundary="clamp"
        )


def _wait(result: Any) -> None:
    """Wait until every part's device has finished (results stay on the devices)."""
    parts = result.parts if hasattr(result, "parts") else {}
    for part in parts.values():
        part.device.finish()


def _median_time(work: Callable[[], Any], reps: int, barrier: Callable[[], None]) -> tuple[float, Any]:
    result = work()
    times = []
    for _ in range(reps):
        barrier()
        start = time.perf_counter()
        result = work()
        _wait(result)
        barrier()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _check_sorted(got: np.ndarray, keys: np.ndarray) -> None:
    """``got`` is ``keys`` sorted: compared with NumPy's sort up to 2^24 keys; beyond, in linear
    time, non-decreasing with the same count, sum and sum of squares (modulo 2^64)."""
    if keys.size <= 1 << 24:
        np.testing.assert_array_equal(got, np.sort(keys))
        return
    wide, mine = got.astype(np.uint64), keys.astype(np.uint64)
    assert got.size == keys.size and bool((got[1:] >= got[:-1]).all()), "not sorted"
    assert wide.sum() == mine.sum() and (wide * wide).sum() == (mine * mine).sum(), "not the same keys"


def measure(
    sk: Skeletons, dist: Any, n: int, reps: int, rng: np.random.Generator, barrier: Callable[[], None]
) -> dict[str, tuple[float, float]]:
    """{operation: (seconds, figure)} for ``n`` elements placed as ``dist``; checked against NumPy."""
    floats = rng.random(n, dtype=np.float32)
    ints = rng.integers(0, 10, n, dtype=np.int32)
    keys = rng.integers(0, 2**32, n, dtype=np.uint32)
    x = ps.Vector(floats, distribution=dist)
    i = ps.Vector(ints, distribution=dist)
    k = ps.Vector(keys, distribution=dist)
    for v in (x, i, k):
        for part in v.parts.values():
            part.to_device()
    found: dict[str, tuple[float, float]] = {}
    seconds, out = _median_time(lambda: sk.square(x), reps, barrier)
    np.testing.assert_allclose(out.numpy(), floats * floats, rtol=1e-6)
    found["map"] = (seconds, BYTES["map"] * n / seconds / 1e9)
    seconds, out = _median_time(lambda: sk.total(x), reps, barrier)
    assert abs(float(out) - floats.sum(dtype=np.float64)) <= 1e-3 * max(1.0, n / 2)
    found["reduce"] = (seconds, BYTES["reduce"] * n / seconds / 1e9)
    seconds, out = _median_time(lambda: sk.prefix(i)[0], reps, barrier)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(ints, dtype=np.int32) - ints)
    found["scan"] = (seconds, BYTES["scan"] * n / seconds / 1e9)
    seconds, out = _median_time(lambda: sk.blur(x), reps, barrier)
    padded = np.concatenate([floats[:1], floats, floats[-1:]])
    np.testing.assert_allclose(out.numpy(), (padded[:-2] + padded[1:-1] + padded[2:]) / 3, rtol=1e-5)
    found["stencil"] = (seconds, BYTES["stencil"] * n / seconds / 1e9)
    seconds, out = _median_time(lambda: ps.sort(k), reps, barrier)
    _check_sorted(out.numpy(), keys)
    found["sort"] = (seconds, n / seconds / 1e6)
    return found


def dask_measure(n: int, workers: int, reps: int, rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    import dask
    import dask.array as da

    floats = rng.random(n, dtype=np.float32)
    ints = rng.integers(0, 10, n, dtype=np.int32)
    chunk = -(-n // workers)
    x = da.from_array(floats, chunks=chunk).persist()
    i = da.from_array(ints, chunks=chunk).persist()
    found = {}
    with dask.config.set(scheduler="threads", num_workers=workers):
        work = {
            "map": lambda: (x * x).compute(),
            "reduce": lambda: x.sum().compute(),
            "scan": lambda: (da.cumsum(i) - i).compute(),
            "stencil": lambda: x.map_overlap(
                lambda b: np.concatenate([b[:1], (b[:-2] + b[1:-1] + b[2:]) / 3, b[-1:]]), depth=1, boundary="nearest"
            ).compute(),
        }
        for name, call in work.items():
            seconds, _ = _median_time(call, reps, lambda: None)
            found[name] = (seconds, BYTES[name] * n / seconds / 1e9)
    return found


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| scaling | parts | elements | subject | " + " | ".join(OPERATIONS) + " |",
        "|---|---|---|---|" + "---|" * len(OPERATIONS),
    ]
    for row in rows:
        cells = []
        for op in OPERATIONS:
            if op in row["results"]:
                seconds, figure = row["results"][op]
                unit = "Mkeys/s" if op == "sort" else "GB/s"
                cells.append(f"{seconds * 1e3:.2f} ms ({figure:.1f} {unit})")
            else:
                cells.append("-")
        head = f"| {row['scaling']} | {row['parts']} | {row['n']:,} | {row['subject']} | "
        lines.append(head + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--devices", default="cpu/2", help="devices, comma-separated; DEVICE/P for sub-devices")
    parser.add_argument("--size", type=_size, default=1 << 24, help="elements (strong) or per part (weak)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--mpi", action="store_true", help="one part per MPI rank")
    parser.add_argument("--dask", action="store_true", help="also time Dask (threads) on the same data")
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    sk = Skeletons()
    rows: list[dict[str, Any]] = []
    if args.mpi:
        from parskel.dist import mpi

        ranks = mpi.world()
        device = _devices(args.devices)[0] if args.devices != "cpu/2" else ps.device()
        barrier = ranks.comm.Barrier
        dist = mpi.block(device=device)
        for scaling, n in (("strong", args.size), ("weak", args.size * ranks.size)):
            rows.append(
                {
                    "scaling": scaling,
                    "parts": ranks.size,
                    "n": n,
                    "subject": f"MPI ranks ({device.id} each)",
                    "results": measure(sk, dist, n, args.reps, rng, barrier),
                }
            )
        name = f"dist_scaling_mpi{ranks.size}"
        if ranks.rank != 0:
            return 0
    else:
        devices = _devices(args.devices)
        name = "dist_scaling"
        for parts in range(1, len(devices) + 1):
            dist = ps.dist.block(devices[:parts])
            subject = "+".join(d.id for d in devices[:parts])
            for scaling, n in (("strong", args.size), ("weak", args.size * parts)):
                results = measure(sk, dist, n, args.reps, rng, lambda: None)
                rows.append({"scaling": scaling, "parts": parts, "n": n, "subject": subject, "results": results})
                print(_table(rows[-1:]).splitlines()[-1], flush=True)
                if args.dask:
                    try:
                        found = dask_measure(n, parts, args.reps, rng)
                    except ImportError as exc:
                        print(f"Dask skipped: {exc}", flush=True)
                        args.dask = False
                    else:
                        peer = f"Dask, {parts} threads"
                        rows.append({"scaling": scaling, "parts": parts, "n": n, "subject": peer, "results": found})
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(json.dumps(rows, indent=2))
    (args.out / f"{name}.md").write_text(_table(rows))
    print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
