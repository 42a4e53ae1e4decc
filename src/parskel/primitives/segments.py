"""Segmented scans and reductions: the scan or the total of every segment of a 1D array, the
segments given by offsets (``offsets[j]`` to ``offsets[j + 1]``, as CSR row pointers and CUB's
segmented reductions take them) or by head flags (a segment starts at every nonzero flag, and
at the first element). On :mod:`parskel.algorithms.segmented`.

The operators are ``"add"``, ``"multiply"``, ``"min"`` and ``"max"``; sums and products take
``np.cumsum``'s result type (int64 for bool and small integers, or ``dtype=``), minima and
maxima the input's. An empty segment's total is the operator's identity (0, 1, the dtype's
largest or smallest value, ±inf), where NumPy's ``ufunc.reduceat`` has other rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..algorithms import segmented
from ..algorithms.operands import prepare, result_buffer, staged
from ..errors import ArgumentError, DTypeError, ShapeError
from ..runtime import Buffer, Device
from .base import compact, launch


def _result_dtype(dtype: np.dtype, op: str, requested: Any, what: str) -> np.dtype:
    if op not in segmented.OPS:
        raise ArgumentError(f"{what}: op must be one of {', '.join(segmented.OPS)}, got {op!r}")
    result = segmented.result_dtype(dtype, requested, what)
    if op in ("min", "max"):
        if dtype.kind == "c":
            raise DTypeError(f"{what}: op={op!r} does not take complex numbers")
        return result if requested is not None else dtype
    if op == "multiply" and result.kind == "c":
        raise DTypeError(f"{what}: op='multiply' does not take complex numbers")
    return result


def _check_flags(flags: Any, n: int, what: str) -> None:
    if flags.shape != (n,):
        raise ShapeError(f"{what}: flags must have the array's shape ({n},), got {flags.shape}")
    if flags.dtype.kind not in "biu":
        raise DTypeError(f"{what}: flags must be bool or integers, got {flags.dtype}")


def _checked_offsets(offsets: Any, n: int, what: str) -> Any:
    if offsets.ndim != 1 or offsets.size < 1 or offsets.dtype.kind not in "iu":
        raise ShapeError(f"{what}: offsets must be a 1D array of integers (segments + 1 of them)")
    offsets = offsets.astype(np.int64, copy=False)
    steps = offsets[1:] - offsets[:-1]
    if offsets.size and (int(offsets[0]) < 0 or int(offsets[-1]) > n or (steps.size and int(steps.min()) < 0)):
        raise ShapeError(f"{what}: offsets must ascend from 0 or more to at most the length {n}")
    return offsets


def _heads_from_offsets(dev: Device, offsets: Any, n: int, defines: dict) -> Buffer:
    heads = dev.alloc(max(n, 1))
    dev.fill(heads, np.uint8(0))
    kernel = dev.program("scan/segmented.cl", defines).kernel("segment_heads")
    launch(dev, kernel, offsets.size, staged(dev, offsets), np.uint32(offsets.size), np.uint32(n), heads)
    return heads


def _segments(what: str, device: Device | str | None, a: Any, flags: Any, offsets: Any) -> tuple[Any, ...]:
    """The device, the 1D array, the flags and the offsets (one of them None) and the result's
    returner of a segmented call, its arguments checked."""
    if (flags is None) == (offsets is None):
        raise ArgumentError(f"{what}: give the segments by offsets= or by flags=, one of them")
    dev, (arr, flag_arr, offset_arr), returned = prepare(device, a, flags, offsets)
    if arr.ndim != 1:
        raise ShapeError(f"{what}: takes a 1D array, got shape {arr.shape}")
    return dev, arr, flag_arr, offset_arr, returned


def segmented_scan(
    a: ArrayLike,
    *,
    flags: ArrayLike | None = None,
    offsets: ArrayLike | None = None,
    op: str = "add",
    inclusive: bool = False,
    dtype: DTypeLike | None = None,
    device: Device | str | None = None,
) -> Any:
    """The scan of every segment of the 1D array ``a`` (see the module's docstring), exclusive
    (the default, as ``ps.scan``) or ``inclusive``; elements outside every segment given by
    ``offsets`` are scanned as one more segment each run of them.

    >>> ps.segmented_scan(np.array([1, 2, 3, 4, 5]), flags=np.array([0, 0, 1, 0, 1]), inclusive=True)
    array([1, 3, 3, 7, 5])
    >>> ps.segmented_scan(np.array([1.0, 2.0, 3.0]), offsets=[0, 1, 3], op="max")
    array([-inf, -inf,  2.])
    """
    what = "segmented_scan"
    dev, arr, flag_arr, offset_arr, returned = _segments(what, device, a, flags, offsets)
    result = _result_dtype(arr.dtype, op, dtype, what)
    n = arr.size
    defines = segmented.program_defines(dev, _kernel_types(result, op)[0], op)
    if flag_arr is not None:
        _check_flags(flag_arr, n, what)
        heads = staged(dev, (flag_arr != 0).astype(np.uint8))
    else:
        heads = _heads_from_offsets(dev, _checked_offsets(offset_arr, n, what), n, defines)
    computed, target = _kernel_types(result, op)
    buffer, out = result_buffer(dev, arr, dtype=target)
    if n:
        segmented.enqueue(
            dev, staged(dev, arr), buffer, n, arr.dtype, computed, heads=heads, inclusive=inclusive, op=op
        )
        dev.download(buffer, out)
    return returned(_as_result(out, result))


def segmented_reduce(
    a: ArrayLike,
    offsets: ArrayLike | None = None,
    *,
    flags: ArrayLike | None = None,
    op: str = "add",
    dtype: DTypeLike | None = None,
    device: Device | str | None = None,
) -> Any:
    """The total of every segment of the 1D array ``a`` (see the module's docstring): one per
    segment, ``len(offsets) - 1`` of them, or one per run started by a flag.

    >>> ps.segmented_reduce(np.arange(6), [0, 2, 2, 6])
    array([ 1,  0, 14])
    >>> ps.segmented_reduce(np.array([4, 1, 7, 2]), flags=[1, 0, 1, 0], op="min")
    array([1, 2])
    """
    what = "segmented_reduce"
    dev, arr, flag_arr, offset_arr, returned = _segments(what, device, a, flags, offsets)
    result = _result_dtype(arr.dtype, op, dtype, what)
    n = arr.size
    defines = segmented.program_defines(dev, _kernel_types(result, op)[0], op)
    if flag_arr is not None:  # the segments' offsets: where the flags (and the first element) are
        _check_flags(flag_arr, n, what)
        offset_arr = _flag_offsets(dev, flag_arr, n)
    offset_arr = _checked_offsets(offset_arr, n, what)
    heads = _heads_from_offsets(dev, offset_arr, n, defines)
    computed, target = _kernel_types(result, op)
    kt, components = segmented.compute_type(computed, op)
    segments = offset_arr.size - 1
    scanned = dev.alloc(max(n, 1) * components * kt.itemsize)
    segmented.enqueue(dev, staged(dev, arr), scanned, n, arr.dtype, computed, heads=heads, inclusive=True, op=op)
    buffer, out = result_buffer(dev, arr, shape=(segments,), dtype=target)
    if segments:
        kernel = dev.program("scan/segmented.cl", defines).kernel("segment_totals")
        launch(dev, kernel, segments, scanned, staged(dev, offset_arr), np.uint32(segments), buffer)
        dev.download(buffer, out)
    return returned(_as_result(out, result))


def _kernel_types(result: np.dtype, op: str) -> tuple[np.dtype, np.dtype]:
    """The result dtype the kernels compute (bool minima and maxima as uint8) and the dtype they
    write (float32 for float16, rounded afterwards)."""
    computed = np.dtype(np.uint8) if result.kind == "b" else result
    return computed, segmented.compute_type(computed, op)[0] if computed == np.float16 else computed


def _as_result(out: Any, result: np.dtype) -> Any:
    if result.kind == "b":
        return out.view(result)
    return out if out.dtype == result else out.astype(result)


def _flag_offsets(dev: Device, flags: Any, n: int) -> Any:
    """The offsets of the segments the flags start (the first element always starts one)."""
    if n == 0:
        return np.zeros(1, np.int64, like=flags)
    starts = (flags != 0).astype(np.uint32)
    starts[0] = 1
    positions = np.arange(n, dtype=np.int64, like=flags)
    found, _ = compact(dev, staged(dev, positions), staged(dev, starts), n, positions)
    return np.concatenate([found, np.full(1, n, np.int64, like=found)])
