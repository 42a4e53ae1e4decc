#!/usr/bin/env python3
"""Sort, scan, reduce, map and matmul on the GPU, on data that stays on the device.

    python3 benchmarks/gpu_primitives.py OUT [--sizes 20,24,26,28] [--matmul 1024,2048,4096,8192]
                                             [--devices cuda:0,opencl] [--profile]

For each device (``cuda:0``; ``opencl``: NVIDIA's OpenCL device) and size it times parskel's new
variants (sort/onesweep, scan/single_pass, the Reduce and Map skeletons, matmul/xgemm and a few
of its configurations) and the seed's best GPU variants, and on CUDA the peers CuPy
(``cupy.sort``, ``cumsum``, ``sum``, a device copy, ``cupy.matmul``: cuBLAS, TF32 off) and
PyTorch (TF32 off). Inputs are created on the device once per size: CuPy arrays for cuda:0,
parskel buffers or containers for OpenCL; no call moves data through the host, except the
seed's sorts and matmuls on OpenCL, whose uploads are left out of their times.

Times are medians over repeated calls: ``ms`` from CUDA events (or the host clock after
``finish`` on OpenCL) around the whole call, ``kernel_ms`` the sum of parskel's own kernel
events (its fills and copies not included). Rates: Gkeys/s for sorts, GB/s for scans (read +
write), reductions (read), maps and copies (read + write), TFLOP/s for matmul; ``vs_best`` is
the rate over the best peer's in the same run. Every result is checked against CuPy (or NumPy).

The defaults alone, against CuPy, PyTorch and CUB's own C++, are ``parskel bench resident``;
this script adds the seed's variants, several matmul configurations and the profiles.

Writes OUT/gpu_primitives.json and OUT/gpu_primitives.txt (the table). ``--profile`` then runs
Nsight Compute (``ncu``: SpeedOfLight, MemoryWorkloadAnalysis, Occupancy, LaunchStats) on one
call of each new kernel at 2^24 (matmul 4096) on cuda:0, into OUT/ncu_<case>.txt. The run
without --profile takes about 3 to 5 minutes on an H100/H200; --profile adds 2 to 3.
"""

# The measuring closures below run at once, inside the loop iteration that defines them.
# ruff: noqa: B023

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np

import parskel as ps
from parskel.algorithms import scans, sorts

BUDGET_S = 0.25  # measuring time per case (timed calls; as many recorded ones besides), after the warm-up
MAX_REPS, MIN_REPS = 20, 3
SLOW_S = 1.5  # a call slower than this is not repeated at larger sizes
XGEMM_CONFIGS = {
    "xgemm": {},
    "xgemm_k16": {"KWG": 16},
    "xgemm_k32": {"KWG": 32, "MIN_GROUPS": 1},
    "xgemm_128x64": {"NWG": 64, "NDIMC": 8},
    "xgemm_vw2": {"VW": 2, "MDIMC": 16, "NDIMC": 16, "MWG": 64, "NWG": 128, "MIN_GROUPS": 3},
    "xgemm_small": None,
}
PROFILE_KERNELS = {
    "sort": "onesweep_pass",
    "scan": "single_pass_scan",
    "reduce": "ps_reduce",
    "map": "ps_map",
    "matmul": "xgemm",
}

RESULTS: list[dict[str, Any]] = []
SLOW: set[tuple[str, str]] = set()


# timing ------------------------------------------------------------------------------------


def _reps(first_s: float) -> int:
    return int(max(MIN_REPS, min(MAX_REPS, BUDGET_S / max(first_s, 1e-6))))


def time_cuda(fn: Callable[[], Any], dev: ps.Device | None = None) -> tuple[float, float, Any]:
    """Median ms of ``fn`` between CUDA events, median ms of parskel's kernels, last result.

    The call is timed as a user makes it, unrecorded: recording makes two CUDA events a
    command, which is host time of its own. Its kernels are timed in recorded calls between.
    """
    import cupy as cp

    start, end = cp.cuda.Event(), cp.cuda.Event()
    out = fn()  # warm-up: builds and caches
    cp.cuda.Stream.null.synchronize()
    t0 = time.perf_counter()
    fn()
    cp.cuda.Stream.null.synchronize()
    reps = _reps(time.perf_counter() - t0)
    walls, kernels = [], []
    for _ in range(reps):
        start.record()
        out = fn()
        end.record()
        end.synchronize()
        walls.append(cp.cuda.get_elapsed_time(start, end))
        if dev is not None:
            with dev.record() as rec:
                out = fn()
            kernels.append(rec.timing.kernel * 1e3)
    return float(np.median(walls)), float(np.median(kernels)) if kernels else float("nan"), out


def time_opencl(fn: Callable[[], Any], dev: ps.Device) -> tuple[float, float, Any]:
    """Median ms of ``fn`` on the host clock after finish (unrecorded, as for
    :func:`time_cuda`), median ms of its kernels in recorded calls between, result."""
    out = fn()
    dev.finish()
    t0 = time.perf_counter()
    fn()
    dev.finish()
    reps = _reps(time.perf_counter() - t0)
    walls, kernels = [], []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        dev.finish()
        walls.append((time.perf_counter() - t) * 1e3)
        with dev.record() as rec:
            out = fn()
        kernels.append(rec.timing.kernel * 1e3)
    return float(np.median(walls)), float(np.median(kernels)), out


def record(device: str, case: str, impl: str, n: int, ms: float, kernel_ms: float, work: float, unit: str, ok: bool):
    """``work`` is keys, bytes or flops of one call; the rate uses the kernel time where the
    whole-call time includes host transfers (seed variants on OpenCL), else the call time."""
    scale = {"Gkeys/s": 1e-9, "GB/s": 1e-9, "TFLOP/s": 1e-12}[unit]
    basis = ms if np.isnan(kernel_ms) or impl not in _KERNEL_BASIS else kernel_ms
    RESULTS.append(
        {
            "device": device,
            "case": case,
            "impl": impl,
            "n": n,
            "ms": round(ms, 4),
            "kernel_ms": None if np.isnan(kernel_ms) else round(kernel_ms, 4),
            "rate": round(work * scale / (basis * 1e-3), 3),
            "unit": unit,
            "ok": bool(ok),
        }
    )


_KERNEL_BASIS: set[str] = set()  # implementations timed by their kernels only


def guarded(device: str, case: str, impl: str, n: int, run: Callable[[], None]) -> None:
    """Run one measurement; a failure is recorded, not fatal; a slow one stops larger sizes."""
    if (device, case + impl) in SLOW:
        return
    t = time.perf_counter()
    try:
        run()
    except Exception as exc:  # keep measuring the rest
        RESULTS.append({"device": device, "case": case, "impl": impl, "n": n, "error": f"{type(exc).__name__}: {exc}"})
        print(f"  {device} {case} {impl} n={n}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
    if time.perf_counter() - t > SLOW_S * (MAX_REPS + 2):
        SLOW.add((device, case + impl))


# CUDA --------------------------------------------------------------------------------------


def cuda_suite(dev: ps.Device, sizes: list[int], edges: list[int]) -> None:
    import cupy as cp

    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    except ImportError:
        torch = None
    name = dev.id
    rng = cp.random
    rng.seed(12)
    for n in sizes:
        print(f"{name}: 2^{n.bit_length() - 1}", flush=True)
        keys = (rng.random(n, dtype=cp.float64) * 4294967296.0).astype(cp.uint32)
        values = cp.arange(n, dtype=cp.uint32)
        want = cp.sort(keys)

        def sort_case(impl: str, fn: Callable[[], Any], check: Callable[[Any], bool], timed_dev=dev) -> None:
            ms, kms, out = time_cuda(fn, timed_dev)
            record(name, "sort_keys", impl, n, ms, kms, n, "Gkeys/s", check(out))

        guarded(
            name,
            "sort_keys",
            "onesweep",
            n,
            lambda: sort_case("onesweep", lambda: ps.sort(keys, variant="onesweep"), lambda o: bool((o == want).all())),
        )
        if n <= 1 << 26:
            guarded(
                name,
                "sort_keys",
                "radix_local_vec",
                n,
                lambda: sort_case(
                    "radix_local_vec",
                    lambda: ps.sort(keys, variant="radix_local_vec"),
                    lambda o: bool((o == want).all()),
                ),
            )
            guarded(
                name,
                "sort_keys",
                "bitonic_fused",
                n,
                lambda: sort_case(
                    "bitonic_fused", lambda: ps.sort(keys, variant="bitonic_fused"), lambda o: bool((o == want).all())
                ),
            )
        guarded(
            name,
            "sort_keys",
            "cupy",
            n,
            lambda: sort_case("cupy", lambda: cp.sort(keys), lambda o: bool((o == want).all()), None),
        )
        if torch is not None:
            tk = torch.as_tensor(keys.astype(cp.int64), device="cuda")
            guarded(
                name,
                "sort_keys",
                "torch",
                n,
                lambda: sort_case("torch", lambda: torch.sort(tk).values, lambda o: True, None),
            )

        order = cp.argsort(keys)  # stable: CUB's radix sort

        def pairs_case(impl: str, fn: Callable[[], Any], timed_dev=dev, check=True) -> None:
            ms, kms, out = time_cuda(fn, timed_dev)
            ok = True
            if check:
                ok = bool((out[0] == want).all()) and bool((out[1] == values[order]).all())
            record(name, "sort_pairs", impl, n, ms, kms, n, "Gkeys/s", ok)

        guarded(
            name,
            "sort_pairs",
            "onesweep",
            n,
            lambda: pairs_case("onesweep", lambda: ps.sort(keys, values, variant="onesweep")),
        )
        if n <= 1 << 24:
            guarded(
                name,
                "sort_pairs",
                "radix_local_vec",
                n,
                lambda: pairs_case("radix_local_vec", lambda: ps.sort(keys, values, variant="radix_local_vec")),
            )
        if torch is not None:
            tk64 = torch.as_tensor(keys.astype(cp.int64), device="cuda")
            guarded(
                name,
                "sort_pairs",
                "torch_stable_argsort",
                n,
                lambda: pairs_case("torch_stable_argsort", lambda: torch.sort(tk64, stable=True), None, False),
            )

        x = rng.randint(-1000, 1000, n, dtype=cp.int32)
        inc = cp.cumsum(x, dtype=cp.int32)
        exc = cp.concatenate([cp.zeros(1, cp.int32), inc[:-1]])
        for inclusive, ref, case in ((True, inc, "scan_inclusive_i32"), (False, exc, "scan_exclusive_i32")):

            def scan_case(impl: str, fn: Callable[[], Any], timed_dev=dev, ref=ref, case=case) -> None:
                ms, kms, out = time_cuda(fn, timed_dev)
                ok = bool((cp.asarray(out) == ref).all()) if out is not None else True  # a tensor too
                record(name, case, impl, n, ms, kms, 8 * n, "GB/s", ok)

            for variant in ("single_pass", "vector_blocks"):
                guarded(
                    name,
                    case,
                    variant,
                    n,
                    lambda v=variant, i=inclusive: scan_case(v, lambda: ps.scan(x, inclusive=i, variant=v)),
                )
            if inclusive:
                guarded(name, case, "cupy", n, lambda: scan_case("cupy", lambda: cp.cumsum(x, dtype=cp.int32), None))
                if torch is not None:
                    tx = torch.as_tensor(x, device="cuda")
                    guarded(
                        name,
                        case,
                        "torch",
                        n,
                        lambda: scan_case("torch", lambda: torch.cumsum(tx, 0, dtype=torch.int32), None),
                    )

        f = rng.random(n, dtype=cp.float32)
        fv = ps.Vector(f, device=dev)
        total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
        want_sum = float(cp.sum(f, dtype=cp.float64))
        sum_out = ps.Vector(np.zeros(1, np.float32), device=dev)

        def reduce_case(impl: str, fn: Callable[[], Any], timed_dev=dev) -> None:
            ms, kms, out = time_cuda(fn, timed_dev)
            got = float(cp.asarray(out).reshape(-1)[0]) if impl == "Reduce" else float(out)
            record(name, "reduce_sum_f32", impl, n, ms, kms, 4 * n, "GB/s", abs(got - want_sum) <= 1e-4 * n)

        guarded(name, "reduce_sum_f32", "Reduce", n, lambda: reduce_case("Reduce", lambda: total(fv, out=sum_out)))
        guarded(name, "reduce_sum_f32", "cupy", n, lambda: reduce_case("cupy", lambda: cp.sum(f), None))
        if torch is not None:
            tf = torch.as_tensor(f, device="cuda")
            guarded(name, "reduce_sum_f32", "torch", n, lambda: reduce_case("torch", lambda: tf.sum(), None))

        square = ps.Map("float f(float x) { return x * x; }")
        mapped = ps.Vector.empty(n, np.float32, device=dev)
        copy_dst = cp.empty_like(f)

        def map_case(impl: str, fn: Callable[[], Any], check: Callable[[], bool], timed_dev=dev) -> None:
            ms, kms, _ = time_cuda(fn, timed_dev)
            record(name, "map_square_f32", impl, n, ms, kms, 8 * n, "GB/s", check())

        guarded(
            name,
            "map_square_f32",
            "Map",
            n,
            lambda: map_case(
                "Map", lambda: square(fv, out=mapped), lambda: bool(cp.allclose(cp.asarray(mapped), f * f))
            ),
        )
        guarded(
            name,
            "map_square_f32",
            "cupy_copy",
            n,
            lambda: map_case("cupy_copy", lambda: cp.copyto(copy_dst, f), lambda: True, None),
        )
        guarded(
            name,
            "map_square_f32",
            "cupy_square",
            n,
            lambda: map_case("cupy_square", lambda: cp.multiply(f, f, out=copy_dst), lambda: True, None),
        )
        cp.get_default_memory_pool().free_all_blocks()

    for edge in edges:
        print(f"{name}: matmul {edge}", flush=True)
        a = rng.standard_normal((edge, edge), dtype=cp.float32)
        b = rng.standard_normal((edge, edge), dtype=cp.float32)
        ref = a @ b
        flops = 2.0 * edge**3

        def mm_case(impl: str, fn: Callable[[], Any], timed_dev=dev) -> None:
            ms, kms, out = time_cuda(fn, timed_dev)
            err = float(cp.abs(cp.asarray(out) - ref).max() / (cp.abs(ref).max() + 1e-30))
            record(name, "matmul_f32", impl, edge, ms, kms, flops, "TFLOP/s", err < 1e-4)

        for impl, params in XGEMM_CONFIGS.items():
            variant = "xgemm_small" if params is None else "xgemm"
            guarded(
                name,
                "matmul_f32",
                impl,
                edge,
                lambda v=variant, p=params or {}: mm_case(impl, lambda: ps.matmul(a, b, variant=v, **p)),
            )
        guarded(
            name,
            "matmul_f32",
            "blocks_tiles",
            edge,
            lambda: mm_case("blocks_tiles", lambda: ps.matmul(a, b, variant="blocks_tiles")),
        )
        guarded(name, "matmul_f32", "cupy_cublas", edge, lambda: mm_case("cupy_cublas", lambda: a @ b, None))
        if torch is not None:
            ta, tb = torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda")
            guarded(name, "matmul_f32", "torch_cublas", edge, lambda: mm_case("torch_cublas", lambda: ta @ tb, None))
        cp.get_default_memory_pool().free_all_blocks()


# OpenCL ------------------------------------------------------------------------------------


def opencl_suite(dev: ps.Device, sizes: list[int], edges: list[int]) -> None:
    name = f"{dev.id} ({dev.name})"
    rng = np.random.default_rng(12)
    for n in sizes:
        print(f"{name}: 2^{n.bit_length() - 1}", flush=True)
        keys = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        checksum = int(keys.sum(dtype=np.uint64))

        def sorted_ok(got: np.ndarray) -> bool:
            """Sorted, and the same keys (an O(n) check: NumPy's sort of 2^28 keys takes long)."""
            return bool((got[1:] >= got[:-1]).all()) and int(got.sum(dtype=np.uint64)) == checksum

        kbuf, out = dev.to_device(keys), dev.alloc(n * 4)
        vbuf, vout = dev.to_device(np.arange(n, dtype=np.uint32)), dev.alloc(n * 4)

        def sort_buffers(with_values: bool) -> None:
            # the public path's parameters: the tuned tile for this device and size
            values, out_values = (vbuf, vout) if with_values else (None, None)
            sorts.sort_words(dev, kbuf, values, out, out_values, n, variant="onesweep")

        def keys_ok() -> bool:
            host = np.empty(n, np.uint32)
            dev.download(out, host)
            return sorted_ok(host)

        def sort_run(case: str, with_values: bool) -> None:
            ms, kms, _ = time_opencl(lambda: sort_buffers(with_values), dev)
            record(name, case, "onesweep", n, ms, kms, n, "Gkeys/s", keys_ok())

        guarded(name, "sort_keys", "onesweep", n, lambda: sort_run("sort_keys", False))
        guarded(name, "sort_pairs", "onesweep", n, lambda: sort_run("sort_pairs", True))
        if n <= 1 << 24:
            for variant in ("radix_local_vec", "bitonic_fused"):

                def seed_sort(v=variant) -> None:
                    ms, kms, got = time_opencl(lambda: ps.sort(keys, variant=v, device=dev), dev)
                    record(name, "sort_keys", v, n, ms, kms, n, "Gkeys/s", sorted_ok(got))

                _KERNEL_BASIS.add(variant)
                guarded(name, "sort_keys", variant, n, seed_sort)

        x = rng.integers(-1000, 1000, n).astype(np.int32)
        xbuf, ybuf = dev.to_device(x), dev.alloc(n * 4)
        for inclusive in (True, False):
            case = "scan_inclusive_i32" if inclusive else "scan_exclusive_i32"
            ref = np.cumsum(x, dtype=np.int32)
            if not inclusive:
                ref = np.concatenate([np.zeros(1, np.int32), ref[:-1]])
            for variant in ("single_pass", "vector_blocks"):

                def scan_run(v=variant, i=inclusive, c=case, r=ref) -> None:
                    ms, kms, _ = time_opencl(
                        lambda: scans.scan_buffer(dev, xbuf, ybuf, n, np.int32, inclusive=i, variant=v), dev
                    )
                    host = np.empty(n, np.int32)
                    dev.download(ybuf, host)
                    record(name, c, v, n, ms, kms, 8 * n, "GB/s", bool((host == r).all()))

                guarded(name, case, variant, n, scan_run)

        f = rng.random(n, dtype=np.float32)
        fv = ps.Vector(f, device=dev)
        total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
        sum_out = ps.Vector(np.zeros(1, np.float32), device=dev)

        def reduce_run() -> None:
            ms, kms, _ = time_opencl(lambda: total(fv, out=sum_out), dev)
            got = float(sum_out.numpy()[0])
            record(
                name,
                "reduce_sum_f32",
                "Reduce",
                n,
                ms,
                kms,
                4 * n,
                "GB/s",
                abs(got - f.sum(dtype=np.float64)) <= 1e-4 * n,
            )

        guarded(name, "reduce_sum_f32", "Reduce", n, reduce_run)
        square = ps.Map("float f(float x) { return x * x; }")
        mapped = ps.Vector.empty(n, np.float32, device=dev)
        copied = dev.alloc(n * 4)
        fbuf = fv.to_device()

        def map_run() -> None:
            ms, kms, _ = time_opencl(lambda: square(fv, out=mapped), dev)
            record(name, "map_square_f32", "Map", n, ms, kms, 8 * n, "GB/s", bool(np.allclose(mapped.numpy(), f * f)))

        def copy_run() -> None:
            ms, _, _ = time_opencl(lambda: dev.copy(copied, fbuf), dev)
            record(name, "map_square_f32", "copy", n, ms, float("nan"), 8 * n, "GB/s", True)

        guarded(name, "map_square_f32", "Map", n, map_run)
        guarded(name, "map_square_f32", "copy", n, copy_run)

    for edge in edges:
        print(f"{name}: matmul {edge}", flush=True)
        a = rng.standard_normal((edge, edge)).astype(np.float32)
        b = rng.standard_normal((edge, edge)).astype(np.float32)
        ref = a.astype(np.float64) @ b if edge <= 2048 else None
        for impl, params in [*XGEMM_CONFIGS.items(), ("blocks_tiles", {})]:
            variant = "xgemm_small" if params is None else impl if impl == "blocks_tiles" else "xgemm"
            _KERNEL_BASIS.add(impl)

            def mm_run(v=variant, p=params or {}, impl=impl) -> None:
                ms, kms, got = time_opencl(lambda: ps.matmul(a, b, variant=v, device=dev, **p), dev)
                ok = True if ref is None else float(np.abs(got - ref).max() / np.abs(ref).max()) < 1e-4
                record(name, "matmul_f32", impl, edge, ms, kms, 2.0 * edge**3, "TFLOP/s", ok)

            guarded(name, "matmul_f32", impl, edge, mm_run)


# report ------------------------------------------------------------------------------------

PEERS = {"cupy", "torch", "cupy_cublas", "torch_cublas", "cupy_copy", "cupy_square", "copy", "torch_stable_argsort"}


def table() -> str:
    lines = []
    keys = sorted({(r["device"], r["case"], r["n"]) for r in RESULTS}, key=lambda k: (k[0], k[1], k[2]))
    for device, case, n in keys:
        rows = [r for r in RESULTS if (r["device"], r["case"], r["n"]) == (device, case, n) and "rate" in r]
        peers = [r["rate"] for r in rows if r["impl"] in PEERS]
        best = max(peers) if peers else None
        size = f"2^{n.bit_length() - 1}" if case != "matmul_f32" else str(n)
        cells = []
        for r in rows:
            ratio = f" {r['rate'] / best:.2f}x" if best and r["impl"] not in PEERS else ""
            flag = "" if r["ok"] else " WRONG"
            kernel = f"/{r['kernel_ms']:.3g}" if r.get("kernel_ms") is not None else ""
            cells.append(f"{r['impl']} {r['ms']:.3g}{kernel} ms {r['rate']:.4g} {r['unit']}{ratio}{flag}")
        errors = [
            f"{r['impl']} FAILED"
            for r in RESULTS
            if (r["device"], r["case"], r["n"]) == (device, case, n) and "error" in r
        ]
        lines.append(f"{device[:22]:22s} {case:20s} {size:>6s} | " + " | ".join(cells + errors))
    return "\n".join(lines)


def profile(out: Path) -> None:
    script = Path(__file__).resolve()
    for case, kernel in PROFILE_KERNELS.items():
        target = out / f"ncu_{case}.txt"
        cmd = [
            "ncu",
            "--target-processes",
            "all",
            "-k",
            f"regex:^{kernel}$",
            "-c",
            "1",
            "--section",
            "SpeedOfLight",
            "--section",
            "MemoryWorkloadAnalysis",
            "--section",
            "Occupancy",
            "--section",
            "LaunchStats",
            sys.executable,
            str(script),
            str(out),
            "--one",
            case,
        ]
        print("profiling", case, flush=True)
        with target.open("w") as fh:
            subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, timeout=300, check=False)


def one(case: str) -> None:
    """One call of a new kernel at 2^24 (matmul 4096) on cuda:0, for the profiler."""
    import cupy as cp

    dev = ps.device("cuda:0")
    n = 1 << 24
    rng = cp.random
    if case == "sort":
        ps.sort((rng.random(n) * 4294967296.0).astype(cp.uint32), variant="onesweep")
    elif case == "scan":
        ps.scan(rng.randint(-9, 9, n, dtype=cp.int32), inclusive=True, variant="single_pass")
    elif case == "reduce":
        ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)(
            ps.Vector(rng.random(n, dtype=cp.float32), device=dev)
        )
    elif case == "map":
        ps.Map("float f(float x) { return x * x; }")(ps.Vector(rng.random(n, dtype=cp.float32), device=dev))
    elif case == "matmul":
        a = rng.standard_normal((4096, 4096), dtype=cp.float32)
        ps.matmul(a, a, variant="xgemm")
    cp.cuda.Stream.null.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sizes", default="20,24,26,28", help="log2 of the element counts")
    parser.add_argument("--matmul", default="1024,2048,4096,8192", help="matrix edges")
    parser.add_argument("--devices", default="cuda:0,opencl", help="cuda:N and/or opencl (NVIDIA's) or an id")
    parser.add_argument("--profile", action="store_true", help="Nsight Compute on each new kernel afterwards")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    sizes = [1 << int(s) for s in args.sizes.split(",") if s]
    edges = [int(e) for e in args.matmul.split(",") if e]
    began = time.perf_counter()
    for spec in args.devices.split(","):
        try:
            if spec == "opencl":
                found = [d for d in ps.devices() if d.backend == "opencl" and "nvidia" in d.info.vendor.lower()]
                if not found:
                    print("no NVIDIA OpenCL device: skipped (source .gpu/setup.sh registers it)", flush=True)
                    continue
                opencl_suite(found[0], sizes, edges)
            elif spec.startswith("cuda"):
                cuda_suite(ps.device(spec), sizes, edges)
            else:
                opencl_suite(ps.device(spec), sizes, edges)
        except ps.errors.ParskelError as exc:
            print(f"{spec}: skipped: {exc}", flush=True)
    text = table()
    stamp = time.strftime("%Y-%m-%d %H:%M")
    header = f"gpu_primitives {stamp}, {time.perf_counter() - began:.0f} s: ms (call/kernels), rate, vs best peer"
    print(header + "\n" + text)
    (args.out / "gpu_primitives.txt").write_text(header + "\n" + text + "\n")
    meta = {
        "date": stamp,
        "devices": [str(d) for d in ps.devices()],
        "env": {k: v for k, v in os.environ.items() if k.startswith("CUPY")},
    }
    (args.out / "gpu_primitives.json").write_text(json.dumps({"meta": meta, "results": RESULTS}, indent=1))
    if args.profile:
        profile(args.out)


if __name__ == "__main__":
    main()
