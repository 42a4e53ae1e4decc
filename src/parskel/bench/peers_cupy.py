"""CuPy's primitives on the current CUDA GPU: peers for ``parskel bench`` on a machine with CuPy.

CuPy is imported on first use; where it is missing or finds no GPU, :func:`available` says why
and the bench skips these peers. Each peer takes host arrays and returns ``(result, Timing)``
with upload, kernel and download timed by CUDA events on the current stream.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ..runtime import Timing
from .cases import horner

Peer = Callable[..., tuple[Any, Timing]]


@cache
def _cupy() -> Any:
    import cupy

    return cupy


@cache
def available() -> tuple[bool, str]:
    """Whether CuPy can be imported and sees a GPU, and why not."""
    try:
        cp = _cupy()
    except ImportError:
        return False, "CuPy is not installed"
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA driver errors have no common base class in CuPy
        return False, f"CuPy finds no CUDA GPU: {exc}"
    if count < 1:
        return False, "CuPy finds no CUDA GPU"
    return True, ""


def device_name() -> str:
    """The name of the GPU CuPy uses, for the results store."""
    cp = _cupy()
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def timed(inputs: tuple[np.ndarray, ...], compute: Callable[..., Any]) -> tuple[Any, Timing]:
    """``compute`` on ``inputs`` copied to the GPU, its result copied back, with CUDA events
    timing the upload, the computation and the download."""
    cp = _cupy()
    marks = [cp.cuda.Event() for _ in range(4)]
    start = time.perf_counter()
    marks[0].record()
    on_device = [cp.asarray(a) for a in inputs]
    marks[1].record()
    produced = compute(*on_device)
    marks[2].record()
    out = cp.asnumpy(produced)
    marks[3].record()
    marks[3].synchronize()
    wall = time.perf_counter() - start
    upload, kernel, download = (cp.cuda.get_elapsed_time(a, b) * 1e-3 for a, b in zip(marks, marks[1:]))
    return out, Timing(upload=upload, kernel=kernel, download=download, wall=wall)


def matmul(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, Timing]:
    """``a @ b`` with cuBLAS through ``cupy.matmul``."""
    return timed((a, b), lambda x, y: _cupy().matmul(x, y))


def scan(x: np.ndarray, *, inclusive: bool = False) -> tuple[np.ndarray, Timing]:
    """Prefix sum with ``cupy.cumsum`` (exclusive: shifted on the device)."""
    cp = _cupy()

    def compute(d: Any) -> Any:
        total = cp.cumsum(d, dtype=d.dtype)
        if inclusive or not d.size:
            return total
        out = cp.empty_like(d)
        out[0] = 0
        out[1:] = total[:-1]
        return out

    return timed((x,), compute)


def sort(keys: np.ndarray) -> tuple[np.ndarray, Timing]:
    """Keys sorted with ``cupy.sort`` (CUB radix sort)."""
    return timed((keys,), lambda d: _cupy().sort(d))


def reduce_sum(x: np.ndarray) -> tuple[Any, Timing]:
    """Sum with ``cupy.sum``."""
    total, timing = timed((x,), lambda d: d.sum(dtype=d.dtype))
    return np.asarray(total)[()], timing


def square(x: np.ndarray) -> tuple[np.ndarray, Timing]:
    """``x * x`` element-wise (the Map of the benchmarks)."""
    return timed((x,), lambda d: d * d)


def multiply(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, Timing]:
    """``x * y`` element-wise (the Zip of the benchmarks)."""
    return timed((x, y), lambda d, e: d * e)


def polynomial(x: np.ndarray) -> tuple[np.ndarray, Timing]:
    """The benchmarks' degree-8 polynomial by Horner's rule, one CuPy operation at a time."""
    return timed((x,), horner)


PEERS: dict[str, dict[str, Peer]] = {
    "matmul": {"cupy_matmul": matmul},
    "skeletons.map": {"cupy_multiply": square},
    "skeletons.zip": {"cupy_multiply": multiply},
    "skeletons.polynomial": {"cupy_horner": polynomial},
    "scan": {"cupy_cumsum": scan},
    "sort": {"cupy_sort": sort},
    "reduce": {"cupy_sum": reduce_sum},
}
