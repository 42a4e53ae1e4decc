"""Binary search and counting by bins: ``searchsorted``, ``histogram`` and ``bincount``, with
NumPy's signatures (``kernels/primitives/search.cl``, ``histogram.cl``).

A histogram by a bin function of your own is a Map to bin numbers, then ``bincount``::

    bins = ps.Map(lambda x: int(x * x) % 8)(ps.Vector(values))
    counts = ps.bincount(bins, minlength=8)
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..algorithms.operands import prepare, result_buffer, staged
from ..algorithms.ordering import gather
from ..errors import ArgumentError, DTypeError, ShapeError
from ..runtime import Device, round_to_multiple
from ..runtime.traits import grid_stride_groups
from .base import GROUP, launch, value_spec

#: The most bins counted in a work-group's local memory first (the local array's size); more go
#: straight to the global counts.
LOCAL_BINS = 4096
#: Work-groups per compute unit of a histogram whose counts fit in local memory.
GROUPS_PER_UNIT = 8
SIDES = ("left", "right")


def searchsorted(
    a: ArrayLike,
    v: ArrayLike,
    side: str = "left",
    sorter: ArrayLike | None = None,
    *,
    device: Device | str | None = None,
) -> Any:
    """Where the elements of ``v`` go in the ascending 1D array ``a``, as ``np.searchsorted``:
    for ``side="left"`` the first position ``i`` with ``v <= a[i]``, for ``"right"`` the first
    with ``v < a[i]``; int64, of ``v``'s shape (a scalar for a scalar ``v``). ``sorter`` holds
    the positions that sort ``a`` (``ps.argsort(a)``). Both are compared in NumPy's common
    dtype of the two; NaNs sort after every number, as in NumPy. ``a`` is not checked to be
    sorted. Bool, integers and floats (float16 to float64).

    >>> ps.searchsorted(np.array([1, 2, 2, 5]), np.array([2, 3, 9]))
    array([1, 3, 4])
    >>> ps.searchsorted([1.0, 2.0, 2.0], 2.0, side="right")
    np.int64(3)
    """
    if side not in SIDES:
        raise ArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    scalar = np.ndim(v) == 0
    dev, (a_arr, v_arr, order), returned = prepare(device, a, v, sorter)
    if a_arr.ndim != 1:
        raise ShapeError(f"searchsorted: a must be 1D, got shape {a_arr.shape}")
    for name, arr in (("a", a_arr), ("v", v_arr)):
        value_spec(arr.dtype, dev, f"searchsorted: {name}")
    common = _common_dtype(a_arr, v, v_arr)
    spec = value_spec(common, dev, "searchsorted")
    n, count = a_arr.size, v_arr.size
    if order is not None:
        _check_sorter(order, n)
    if count == 0 or n == 0:
        return returned(np.zeros_like(v_arr, dtype=np.int64))
    a_common = a_arr.astype(common, copy=False)
    source = staged(dev, a_common)
    if order is not None:  # a in its sorted order
        ordered = dev.alloc(a_common.nbytes)
        gather(dev, source, staged(dev, order.astype(np.uint32)), ordered, n, common)
        source = ordered
    kernel = dev.program("primitives/search.cl", {**spec, "RIGHT": int(side == "right")}).kernel("searchsorted")
    queries = v_arr.astype(common, copy=False).reshape(-1)
    buffer, out = result_buffer(dev, queries, dtype=np.int64)
    launch(dev, kernel, count, source, np.uint32(n), staged(dev, queries), buffer, np.uint32(count))
    dev.download(buffer, out)
    out = out.reshape(v_arr.shape)
    return out[()] if scalar and isinstance(out, np.ndarray) else returned(out)


def _common_dtype(a: Any, v: Any, v_arr: Any) -> np.dtype:
    """NumPy's common dtype of ``a`` and ``v``: a Python number takes ``a``'s dtype where it fits."""
    if not hasattr(v, "dtype") and np.ndim(v) == 0:
        try:
            return np.result_type(a.dtype, v)  # NumPy 2: a Python number is weakly typed
        except (OverflowError, TypeError):
            pass
    return np.result_type(a.dtype, v_arr.dtype)


def _check_sorter(order: Any, n: int) -> None:
    if order.ndim != 1 or order.size != n or order.dtype.kind not in "iu":
        raise ShapeError(
            f"searchsorted: sorter must be {n} integer positions, got {order.dtype} of shape {order.shape}"
        )
    if n and (int(order.min()) < 0 or int(order.max()) >= n):
        raise ShapeError(f"searchsorted: sorter holds positions outside 0 .. {n - 1}")


def histogram(
    a: ArrayLike,
    bins: int | ArrayLike | str = 10,
    range: tuple[float, float] | None = None,
    density: bool = False,
    weights: ArrayLike | None = None,
    *,
    device: Device | str | None = None,
) -> tuple[Any, Any]:
    """The histogram of ``a`` (flattened) as ``np.histogram``: the counts (int64; float64 with
    ``density=True``) and the bin edges, which are NumPy's own. ``bins`` is a number of even
    bins over ``range`` (by default the data's), a sequence of ascending edges, or one of
    NumPy's rules ("auto", ...; NumPy arrays only). An element ``x`` counts for bin ``b`` where
    ``edges[b] <= x < edges[b + 1]``, the last bin also taking its right edge; NaNs and elements
    outside count nowhere. Integers and floats (float16 to float64). ``weights`` is not
    supported (counts only).

    >>> counts, edges = ps.histogram(np.array([0.5, 1.5, 1.7, 9.9]), bins=10, range=(0, 10))
    >>> counts
    array([1, 2, 0, 0, 0, 0, 0, 0, 0, 1])
    """
    if weights is not None:
        raise ArgumentError("histogram: weights= is not supported; parskel's histograms count elements")
    dev, (arr,), returned = prepare(device, a)
    if arr.dtype.kind not in "iuf":
        raise DTypeError(f"histogram takes integers and floats (float16 to float64), got {arr.dtype}")
    spec = value_spec(arr.dtype, dev, "histogram")
    arr = arr.reshape(-1)
    edges = _edges(arr, bins, range)
    nbins = edges.size - 1
    even = isinstance(bins, (int, np.integer)) and not isinstance(bins, bool)
    counts = _count(dev, arr, spec, {"MODE": 1, "EVEN": int(even)}, nbins, edges)
    if density:
        counts = counts / np.diff(edges) / counts.sum()
    return returned(counts), edges


def _edges(arr: Any, bins: Any, value_range: Any) -> np.ndarray:
    """NumPy's bin edges: from the data itself for a NumPy array, else from its range."""
    try:
        if isinstance(arr, np.ndarray):
            return np.histogram_bin_edges(arr, bins, value_range)
        if isinstance(bins, str):
            raise ArgumentError(f"histogram: bins={bins!r} needs the data on the host; pass a number of bins")
        if value_range is None:  # NumPy's outer edges, from the data on its device
            value_range = (arr.min().item(), arr.max().item()) if arr.size else (0, 1)
        return np.histogram_bin_edges(np.empty(0, arr.dtype), bins, value_range)
    except (ValueError, TypeError) as exc:
        raise ArgumentError(f"histogram: {exc}") from None


def bincount(
    x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *, device: Device | str | None = None
) -> Any:
    """How many times each value occurs in the 1D array of non-negative integers ``x``, as
    ``np.bincount``: int64 counts of ``max(x) + 1`` values, or ``minlength`` if more.
    ``weights`` is not supported (counts only).

    >>> ps.bincount(np.array([0, 1, 1, 3, 1], dtype=np.uint8))
    array([1, 3, 0, 1])
    """
    if weights is not None:
        raise ArgumentError("bincount: weights= is not supported; parskel's bincount counts elements")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ArgumentError(f"bincount: minlength must be non-negative, got {minlength}")
    dev, (arr,), returned = prepare(device, x)
    if arr.ndim != 1 or arr.dtype.kind not in "biu":
        raise ShapeError(f"bincount takes a 1D array of non-negative integers, got {arr.dtype} of shape {arr.shape}")
    if arr.size and arr.dtype.kind == "i" and int(arr.min()) < 0:
        raise ArgumentError("bincount: x must not hold negative numbers")
    largest = int(arr.max()) if arr.size else -1
    if largest >= 2**31 - 1:
        raise ShapeError(f"bincount: the largest value {largest} makes too many bins (at most 2**31 - 1)")
    spec = value_spec(arr.dtype, dev, "bincount")
    return returned(_count(dev, arr, spec, {"MODE": 0}, max(largest + 1, minlength), None))


def _count(dev: Device, arr: Any, spec: dict, mode: dict, bins: int, edges: np.ndarray | None) -> Any:
    """The int64 counts of ``arr``'s elements in ``bins`` bins (histogram.cl)."""
    wide = dev.info.fp64
    edge_type = np.dtype(np.float64 if wide else np.float32)
    group = min(GROUP, dev.info.max_work_group_size)
    defines = {**spec, **mode, "E": "double" if wide else "float", "WG": group}
    local = 0 < bins <= LOCAL_BINS and dev.info.local_mem_bytes >= 4 * LOCAL_BINS
    defines["LOCAL_BINS"] = LOCAL_BINS if local else 0
    counts_buffer, counts = result_buffer(dev, arr, shape=(bins,), dtype=np.uint32)
    if bins == 0:
        return counts.astype(np.int64)
    dev.fill(counts_buffer, np.uint32(0))
    n = arr.size
    if n:
        kernel = dev.program("primitives/histogram.cl", defines).kernel("histogram")
        bounds = np.zeros(2, edge_type) if edges is None else edges.astype(edge_type)
        low = edge_type.type(bounds[0])
        span = bounds[-1] - bounds[0]
        scale = edge_type.type(bins / span if edges is not None and span > 0 else 0)
        groups = grid_stride_groups(dev, n, group)
        if defines["LOCAL_BINS"]:  # every work-group clears and adds its counts: few of them
            groups = min(groups, GROUPS_PER_UNIT * dev.info.compute_units)
        size = round_to_multiple(groups * group, group)
        edge_buffer = dev.to_device(bounds)
        dev.launch(
            kernel, size, group, staged(dev, arr), np.uint32(n), edge_buffer, np.uint32(bins), low, scale, counts_buffer
        )
    dev.download(counts_buffer, counts)
    return counts.astype(np.int64)
