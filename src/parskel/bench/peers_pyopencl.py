"""PyOpenCL's own primitives on a parskel OpenCL device: the peers ``parskel bench`` measures.

Each peer takes the device and host arrays and returns ``(result, Timing)``: upload, PyOpenCL's
kernels and download on the device's own profiling queue, so the split is comparable with the
parskel variants. Kernel time spans the device timestamps of two markers around the kernels,
because PyOpenCL's scan and sort enqueue several kernels but return only the last event.
Kernels are built on first use and cached per device; the bench counts that as compile time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import Device, Timing

Peer = Callable[..., tuple[Any, Timing]]

try:
    import pyopencl as cl
    import pyopencl.array as cl_array
except ImportError:  # pragma: no cover - pyopencl is a hard dependency
    cl = None


def available() -> tuple[bool, str]:
    """Whether PyOpenCL's primitives can be used; they need the Mako template engine."""
    if cl is None:
        return False, "pyopencl is not installed"
    try:
        import pyopencl.scan  # noqa: F401
    except ImportError:
        return False, "PyOpenCL's scan, sort and reduction need Mako (pip install mako)"
    return True, ""


def supports(device: Device) -> bool:
    """Whether ``device`` is an OpenCL device these peers can run on."""
    return cl is not None and device.backend == "opencl" and hasattr(device, "queue")


_kernels: dict[tuple[int, str, str], Any] = {}


def _cached(device: Device, what: str, dtype: np.dtype, make: Callable[[Any], Any]) -> Any:
    key = (id(device), what, np.dtype(dtype).str)
    if key not in _kernels:
        _kernels[key] = make(device.context)  # type: ignore[attr-defined]
    return _kernels[key]


def _timed(device: Device, host: np.ndarray, compute: Callable[[Any, Any], Any]) -> tuple[Any, Timing]:
    """Upload ``host``, run ``compute(queue, array)`` -> device array(s), download; with the split."""
    queue = device.queue  # type: ignore[attr-defined]
    start = time.perf_counter()
    data = cl_array.empty(queue, host.shape, host.dtype)
    up = None
    if host.nbytes:
        up = cl.enqueue_copy(queue, data.base_data, np.ascontiguousarray(host), is_blocking=False)
    before = cl.enqueue_marker(queue)
    produced = compute(queue, data)
    after = cl.enqueue_marker(queue)
    out = np.empty(produced.shape, produced.dtype)
    down = None
    if out.nbytes:
        down = cl.enqueue_copy(queue, out, produced.base_data, src_offset=produced.offset, is_blocking=True)
    after.wait()
    wall = time.perf_counter() - start
    kernel = max(0.0, (after.profile.end - before.profile.end) * 1e-9)
    upload = _seconds(up)
    download = _seconds(down)
    return out, Timing(upload=upload, kernel=kernel, download=download, wall=wall)


def _seconds(event: Any) -> float:
    return 0.0 if event is None else (event.profile.end - event.profile.start) * 1e-9


def scan(device: Device, x: np.ndarray, *, inclusive: bool = False) -> tuple[np.ndarray, Timing]:
    """Prefix sum with ``InclusiveScanKernel`` / ``ExclusiveScanKernel``."""
    from pyopencl.scan import ExclusiveScanKernel, InclusiveScanKernel

    kind = InclusiveScanKernel if inclusive else ExclusiveScanKernel

    def make(ctx: Any) -> Any:
        return kind(ctx, x.dtype, "a+b", neutral="0")

    knl = _cached(device, f"scan-{inclusive}", x.dtype, make)

    def compute(queue: Any, data: Any) -> Any:
        if data.size:
            knl(data, queue=queue)
        return data

    return _timed(device, x, compute)


def reduce_sum(device: Device, x: np.ndarray) -> tuple[np.generic, Timing]:
    """Sum with ``ReductionKernel``."""
    from pyopencl.reduction import ReductionKernel
    from pyopencl.tools import dtype_to_ctype

    ctype = dtype_to_ctype(x.dtype)

    def make(ctx: Any) -> Any:
        return ReductionKernel(
            ctx, x.dtype, neutral="0", reduce_expr="a+b", map_expr="x[i]", arguments=f"__global const {ctype} *x"
        )

    knl = _cached(device, "sum", x.dtype, make)

    def compute(queue: Any, data: Any) -> Any:
        return knl(data, queue=queue)

    total, timing = _timed(device, x, compute)
    return total[()], timing


def radix_sort(device: Device, keys: np.ndarray) -> tuple[np.ndarray, Timing]:
    """Keys sorted by ``pyopencl.algorithm.RadixSort`` (all 32 key bits)."""
    from pyopencl.algorithm import RadixSort

    def make(ctx: Any) -> Any:
        ctype = "uint" if keys.dtype == np.uint32 else "int"
        return RadixSort(
            ctx, f"__global {ctype} *keys", key_expr="keys[i]", sort_arg_names=["keys"], key_dtype=keys.dtype
        )

    knl = _cached(device, "radix", keys.dtype, make)

    def compute(queue: Any, data: Any) -> Any:
        if not data.size:
            return data
        (sorted_keys,), _ = knl(data, queue=queue, key_bits=keys.dtype.itemsize * 8)
        return sorted_keys

    return _timed(device, keys, compute)


def bitonic_sort(device: Device, keys: np.ndarray) -> tuple[np.ndarray, Timing]:
    """Keys sorted in place by ``pyopencl.bitonic_sort.BitonicSort`` (power-of-two sizes)."""
    from pyopencl.bitonic_sort import BitonicSort

    if keys.size & (keys.size - 1):
        raise ValueError(f"PyOpenCL's BitonicSort needs a power-of-two size, not {keys.size}")
    knl = _cached(device, "bitonic", keys.dtype, BitonicSort)

    def compute(queue: Any, data: Any) -> Any:
        if data.size > 1:
            knl(data, queue=queue)
        return data

    return _timed(device, keys, compute)


PEERS: dict[str, dict[str, Peer]] = {
    "scan": {"pyopencl_scan": scan},
    "reduce": {"pyopencl_reduction": reduce_sum},
    "sort": {"pyopencl_radix": radix_sort, "pyopencl_bitonic": bitonic_sort},
}
