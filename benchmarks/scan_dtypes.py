#!/usr/bin/env python3
"""``parskel.scan`` of every dtype its kernels add, inclusive and exclusive, on GPU-resident data,
against CUB's C++ of the same dtypes (``src/parskel/bench/cub_reference.cu scans``, built with
``nvcc``).

    python3 benchmarks/scan_dtypes.py [--log2 24,28] [--devices cuda:0,opencl:0:0]

For each device, dtype (int32, uint32, int64, uint64, float32, float64) and kind of scan, two
figures, each the median of 9 after 2 warm-ups:

- the call: one scan between two waits (CUDA events around ``ps.scan`` on a CuPy array on
  ``cuda:0``; ``time.perf_counter`` around ``scans.scan_buffer`` and ``finish`` on OpenCL);
- the kernels: 10 scans in a row between two waits, divided by 10, where the host's part of
  each call overlaps the kernels of the ones before.

Each rate is the bytes read and written (2 n itemsize) over the time, as CUB's lines give it.
Every result is checked: integers exactly against NumPy's ``cumsum`` (which wraps as the scan
does), floats by their largest error against a float64 ``cumsum``, relative to the last sum.
Needs CuPy and a CUDA device for ``cuda:0``; ``nvcc`` and CUB's headers for the reference.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import parskel as ps
from parskel.algorithms import scans
from parskel.cli.common import log2_sizes
from parskel.errors import ParskelError

DTYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")
BURST = 10


def values(n: int, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """Small values, so that float sums stay comparable with a float64 reference."""
    if dtype.kind == "f":
        return rng.random(n, dtype=np.float32).astype(dtype)
    return rng.integers(0, 1000, n).astype(dtype)


def check(got: np.ndarray, x: np.ndarray, inclusive: bool) -> None:
    if x.dtype.kind == "f":
        full = np.cumsum(x, dtype=np.float64)
        want = full if inclusive else np.concatenate(([0.0], full[:-1]))
        error = float(np.max(np.abs(got.astype(np.float64) - want))) / max(float(full[-1]), 1.0)
        if error > (1e-3 if x.dtype.itemsize == 4 else 1e-9):
            raise SystemExit(f"scan of {x.dtype}: largest error {error:.2e} of the last sum")
        return
    full = np.cumsum(x, dtype=x.dtype)
    want = full if inclusive else np.concatenate((np.zeros(1, x.dtype), full[:-1]))
    if not np.array_equal(got, want):
        raise SystemExit(f"scan of {x.dtype}: result differs from NumPy's")


def median(call: Callable[[], Any], wait: Callable[[], None], count: int) -> float:
    """Median seconds per call of ``count`` calls in a row between two waits, of 9 after 2."""
    for _ in range(2):
        call()
    wait()
    times = []
    for _ in range(9):
        start = time.perf_counter()
        for _ in range(count):
            call()
        wait()
        times.append((time.perf_counter() - start) / count)
    return float(np.median(times))


def cuda_figures(x: np.ndarray, inclusive: bool) -> tuple[float, float]:
    import cupy as cp

    dev = cp.asarray(x)
    check(cp.asnumpy(ps.scan(dev, inclusive=inclusive)), x, inclusive)
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def between_events(count: int) -> Callable[[], float]:
        def timed() -> float:
            cp.cuda.Device().synchronize()
            start.record()
            for _ in range(count):
                ps.scan(dev, inclusive=inclusive)
            end.record()
            end.synchronize()
            return cp.cuda.get_elapsed_time(start, end) * 1e-3 / count

        return timed

    call = float(np.median([between_events(1)() for _ in range(11)][2:]))
    kernels = float(np.median([between_events(BURST)() for _ in range(11)][2:]))
    return call, kernels


def opencl_figures(device: Any, x: np.ndarray, inclusive: bool) -> tuple[float, float]:
    src, dst = device.to_device(x), device.alloc(x.nbytes)

    def run() -> None:
        scans.scan_buffer(device, src, dst, x.size, x.dtype, inclusive=inclusive)

    run()
    got = np.empty_like(x)
    device.download(dst, got)
    check(got, x, inclusive)
    return median(run, device.finish, 1), median(run, device.finish, BURST)


def cub_lines(log2s: list[int]) -> list[str]:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return ["CUB's figures skipped: nvcc is not on the PATH"]
    source = Path(__file__).resolve().parents[1] / "src" / "parskel" / "bench" / "cub_reference.cu"
    with tempfile.TemporaryDirectory() as folder:
        binary = Path(folder) / "cub_reference"
        subprocess.run([nvcc, "-O3", "-arch=native", "-o", str(binary), str(source)], check=True)
        done = subprocess.run([str(binary), "scans", *map(str, log2s)], check=True, capture_output=True, text=True)
    return done.stdout.splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", default="24,28", type=log2_sizes, help="comma list of log2 sizes (1 to 30)")
    parser.add_argument("--devices", default="cuda:0,opencl:0:0", help="comma list of GPU devices")
    args = parser.parse_args()
    log2s = args.log2
    rng = np.random.default_rng(7)
    names = args.devices.split(",")
    try:
        devices = [ps.device(name) for name in names]
    except ParskelError as error:
        parser.error(str(error))
    for line in cub_lines(log2s) if any(name.startswith("cuda") for name in names) else []:
        print(line, flush=True)
    for name, device in zip(names, devices):
        for k in log2s:
            for dtype in map(np.dtype, DTYPES):
                x = values(1 << k, dtype, rng)
                for inclusive in (True, False):
                    if device.backend == "cuda":
                        with device.current():
                            call, kernels = cuda_figures(x, inclusive)
                    else:
                        call, kernels = opencl_figures(device, x, inclusive)
                    moved = 2 * x.nbytes / 1e9
                    kind = "inclusive" if inclusive else "exclusive"
                    print(
                        f"{name} {kind} scan {dtype.name:8} 2^{k}: call {call * 1e3:.3f} ms "
                        f"({moved / call:.0f} GB/s), kernels {kernels * 1e3:.3f} ms ({moved / kernels:.0f} GB/s)",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
