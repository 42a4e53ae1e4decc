#!/usr/bin/env python3
"""Sorts and reductions of every key and element type on ``cuda:0`` against CuPy (CUB).

    python3 benchmarks/dtypes_gpu.py [--log2 24,28]

- ``parskel.sort`` of uint32, int32 and float32 keys on CuPy arrays, alone and with uint32
  values, against ``cupy.sort`` of the same keys; each result checked against CuPy's (the
  values against ``cupy.argsort``, which is stable);
- the ``Reduce`` skeleton's sum of float32, int32, float64 and int64 on a ``Vector`` into an
  ``out=`` Vector against ``cupy.sum``; checked against NumPy's sum.

Each figure is calls in a row between CUDA events (5 for sorts, 20 for sums) divided by their
number, median of 7: the kernels' pace, with the host's part of each call overlapped by the
kernels before it. Needs CuPy and a CUDA device.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import parskel as ps
from parskel.cli.common import log2_sizes

_C_TYPES = {"float32": "float", "int32": "int", "float64": "double", "int64": "long"}


def in_a_row(call: Callable[[], Any], count: int) -> float:
    """Median milliseconds per call of ``count`` calls between two CUDA events, of 7."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    call()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(7):
        start.record()
        for _ in range(count):
            call()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / count)
    return float(np.median(times))


def sorts(n: int, rng: np.random.Generator) -> None:
    bits = cp.asarray(rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32))
    values = cp.arange(n, dtype=cp.uint32)
    for name in ("uint32", "int32", "float32"):
        keys = bits.view(name) if name != "float32" else bits.view(cp.int32).astype(cp.float32) / 7
        one_sort(name, keys, values)


def one_sort(name: str, keys: Any, values: Any) -> None:
    want = cp.sort(keys)
    got_keys, got_values = ps.sort(keys, values)
    checked = (
        bool(cp.array_equal(ps.sort(keys), want))
        and bool(cp.array_equal(got_keys, want))
        and bool(cp.array_equal(got_values, cp.argsort(keys).astype(cp.uint32)))
    )
    if not checked:
        raise SystemExit(f"sort of {name} keys differs from CuPy's")
    ours, theirs = in_a_row(lambda: ps.sort(keys), 5), in_a_row(lambda: cp.sort(keys), 5)
    pairs = in_a_row(lambda: ps.sort(keys, values), 5)
    print(
        f"2^{keys.size.bit_length() - 1} sort {name:8}: keys {ours:.3f} ms (cupy.sort {theirs:.3f}: "
        f"{theirs / ours:.2f}x), pairs {pairs:.3f} ms",
        flush=True,
    )


def sums(n: int, rng: np.random.Generator) -> None:
    for name in _C_TYPES:
        dtype = np.dtype(name)
        host = rng.random(n).astype(dtype) if dtype.kind == "f" else rng.integers(-1000, 1000, n).astype(dtype)
        one_sum(name, host)


def one_sum(name: str, host: np.ndarray) -> None:
    device, c = ps.device("cuda:0"), _C_TYPES[name]
    total = ps.Reduce(f"{c} add({c} a, {c} b) {{ return a + b; }}", identity=0)
    x, out = ps.Vector(host, device=device), ps.Vector.empty(1, host.dtype, device=device)
    total(x, out=out)
    got = out.numpy()[0]
    if host.dtype.kind == "f":
        want = float(host.sum(dtype=np.float64))
        good = abs(float(got) - want) <= 1e-4 * max(1.0, abs(want))
    else:
        good = bool(got == host.sum(dtype=host.dtype))
    if not good:
        raise SystemExit(f"Reduce of {name}: {got}, NumPy's sum differs")
    on_gpu = cp.asarray(host)
    ours, theirs = in_a_row(lambda: total(x, out=out), 20), in_a_row(lambda: cp.sum(on_gpu), 20)
    print(
        f"2^{host.size.bit_length() - 1} Reduce {name:8}: {ours:.4f} ms ({host.nbytes / ours / 1e9:.2f} TB/s), "
        f"cupy.sum {theirs:.4f} ms ({theirs / ours:.2f}x)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", default="24,28", type=log2_sizes, help="comma list of log2 sizes (1 to 30)")
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    for k in args.log2:
        sorts(1 << k, rng)
        sums(1 << k, rng)


if __name__ == "__main__":
    main()
