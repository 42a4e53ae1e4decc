"""CPU baselines: the seed's compiled sequential code (through Numba), and the NumPy peers.

Seed 000 measures every GPU variant against CPU code: a naive triple-loop matrix product and
an optimized BLAS (chapter 3), a sequential prefix sum (chapter 4), and an LSD radix sort with
16-bit digits in two passes beside ``qsort`` and ``std::sort`` (chapter 5). Here the loops are
compiled with Numba (single-threaded, as in the seed; compiled once and cached on disk), and a
Python user's own choices stand beside them: ``a @ b`` (BLAS), ``np.cumsum`` and ``np.sort``.

:data:`BASELINES` holds them by family and name, with the signatures of the GPU families::

    matmul(a, b) -> c
    scan(x, inclusive=False) -> y             # same dtype as x, integers wrap as in C
    sort(keys, values=None) -> keys | (keys, values)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from ..algorithms.keys import check_keys, check_values
from ..algorithms.matmuls import check_operands
from ..errors import DTypeError, ShapeError

_SIGN = np.uint32(0x80000000)
_ALL = np.uint32(0xFFFFFFFF)
_QUIET_NAN = np.uint32(0x7FC00000)
_RADIX_BITS = 16


# matmul -----------------------------------------------------------------------------------


@njit(cache=True)
def _matmul_loop(a, b, c):  # pragma: no cover - compiled
    m, k = a.shape
    n = b.shape[1]
    for row in range(m):
        for col in range(n):
            acc = c[row, col]
            for i in range(k):
                acc += a[row, i] * b[i, col]
            c[row, col] = acc


def matmul_naive_loop(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` by the seed's triple loop (row, column, dot product), compiled, one thread."""
    a, b = np.asarray(a), np.asarray(b)
    check_operands(a, b)
    c = np.zeros((a.shape[0], b.shape[1]), dtype=a.dtype)
    _matmul_loop(np.ascontiguousarray(a), np.ascontiguousarray(b), c)
    return c


def matmul_numpy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` through NumPy's BLAS (multi-threaded): the optimized CPU peer."""
    a, b = np.asarray(a), np.asarray(b)
    check_operands(a, b)
    return a @ b


# scan -------------------------------------------------------------------------------------


def _check_scan(x: np.ndarray) -> None:
    if x.ndim != 1:
        raise ShapeError(f"scan takes a 1D array, got shape {x.shape}")
    if x.dtype.kind not in "iuf":
        raise DTypeError(f"scan takes an integer or float array, got {x.dtype}")


@njit(cache=True)
def _scan_loop(x, out, inclusive, zero):  # pragma: no cover - compiled
    acc = zero
    for i in range(x.size):
        if inclusive:
            acc += x[i]
            out[i] = acc
        else:
            out[i] = acc
            acc += x[i]


def scan_loop(x: np.ndarray, inclusive: bool = False) -> np.ndarray:
    """Prefix sums by one sequential compiled loop (seed 000 §4.1); exclusive by default."""
    x = np.asarray(x)
    _check_scan(x)
    out = np.empty_like(x)
    _scan_loop(np.ascontiguousarray(x), out, bool(inclusive), x.dtype.type(0))
    return out


def scan_numpy(x: np.ndarray, inclusive: bool = False) -> np.ndarray:
    """Prefix sums by ``np.cumsum`` in the input's dtype; exclusive by default."""
    x = np.asarray(x)
    _check_scan(x)
    if inclusive:
        return np.cumsum(x, dtype=x.dtype)
    out = np.empty_like(x)
    if x.size:
        out[0] = 0
        np.cumsum(x[:-1], dtype=x.dtype, out=out[1:])
    return out


# sort -------------------------------------------------------------------------------------


def _encode(keys: np.ndarray) -> np.ndarray:
    """Keys as uint32 in the same order (the transforms of ``keys.py``), always a new array."""
    bits = keys.view(np.uint32).copy()
    if keys.dtype == np.int32:
        bits ^= _SIGN
    elif keys.dtype == np.float32:
        bits[np.isnan(keys)] = _QUIET_NAN
        bits ^= np.where(bits & _SIGN, _ALL, _SIGN)
    return bits


def _decode(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.int32:
        bits ^= _SIGN
    elif dtype == np.float32:
        bits ^= np.where(bits & _SIGN, _SIGN, _ALL)
    return bits.view(dtype)


@njit(cache=True)
def _radix_sort(keys, values, carry):  # pragma: no cover - compiled
    """LSD radix sort of uint32 ``keys`` in place, ``values`` alongside when ``carry``."""
    buckets = 1 << _RADIX_BITS
    mask = buckets - 1
    n = keys.size
    src_k, dst_k = keys, np.empty_like(keys)
    src_v, dst_v = values, np.empty_like(values)
    for shift in range(0, 32, _RADIX_BITS):
        offsets = np.zeros(buckets, dtype=np.int64)
        for i in range(n):
            offsets[(src_k[i] >> shift) & mask] += 1
        total = 0
        for d in range(buckets):
            count = offsets[d]
            offsets[d] = total
            total += count
        for i in range(n):
            d = (src_k[i] >> shift) & mask
            dst_k[offsets[d]] = src_k[i]
            if carry:
                dst_v[offsets[d]] = src_v[i]
            offsets[d] += 1
        src_k, dst_k = dst_k, src_k
        src_v, dst_v = dst_v, src_v
    # an even number of passes leaves the result where it started: in keys and values


def _check_sort(keys: np.ndarray, values: np.ndarray | None) -> None:
    check_keys(keys)
    if values is not None:
        check_values(values, keys.size)


def sort_radix(keys: np.ndarray, values: np.ndarray | None = None) -> Any:
    """Stable LSD radix sort, 16-bit digits in two passes (seed 000 §5.1.2), compiled.

    uint32, int32 or float32 keys (NaNs last); with ``values`` (4-byte numbers), returns
    ``(keys, values)`` permuted alike.
    """
    keys = np.asarray(keys)
    values = None if values is None else np.asarray(values)
    _check_sort(keys, values)
    bits = _encode(keys)
    carried = np.empty(0, np.uint32) if values is None else values.view(np.uint32).copy()
    _radix_sort(bits, carried, values is not None)
    out = _decode(bits, keys.dtype)
    return out if values is None else (out, carried.view(values.dtype))


def _numpy_sort(kind: Any) -> Callable[..., Any]:
    def sort(keys: np.ndarray, values: np.ndarray | None = None) -> Any:
        keys = np.asarray(keys)
        values = None if values is None else np.asarray(values)
        _check_sort(keys, values)
        if values is None:
            return np.sort(keys, kind=kind)
        order = np.argsort(keys, kind=kind)
        return keys[order], values[order]

    sort.__name__ = f"sort_numpy_{kind or 'default'}"
    sort.__doc__ = f"``np.sort(keys, kind={kind!r})``; with values, through ``np.argsort``."
    return sort


sort_numpy = _numpy_sort(None)
sort_numpy_stable = _numpy_sort("stable")

BASELINES: dict[str, dict[str, Callable[..., Any]]] = {
    "matmul": {"naive_loop": matmul_naive_loop, "numpy": matmul_numpy},
    "scan": {"loop": scan_loop, "numpy": scan_numpy},
    "sort": {"radix": sort_radix, "numpy": sort_numpy, "numpy_stable": sort_numpy_stable},
}
"""CPU baselines by family, then name; each takes the family's arguments (module docstring)."""
