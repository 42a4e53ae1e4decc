"""Binary search and counting by bins: ``searchsorted``, ``histogram`` and ``bincount``, with
NumPy's signatures (``kernels/primitives/search.cl``, ``histogram.cl``), and ``histogram_by``,
counts by a bin function of one's own (a Map to bin numbers, then the counting kernel).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..algorithms.operands import prepare, result_buffer, staged
from ..algorithms.ordering import gather
from ..containers.base import Container
from ..errors import ArgumentError, DTypeError, ShapeError, UserFunctionError
from ..runtime import Buffer, Device, round_to_multiple
from ..runtime.arrays import is_device_array
from ..runtime.traits import grid_stride_groups
from ..skeletons import Map, function
from ..skeletons.userfn import UserFunction, UserSource, dtype_of
from .base import GROUP, as_container, launch, value_spec

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
    ``density=True``) and the bin edges, which are NumPy's own (a device array of its device for a
    device array, as CuPy gives them). ``bins`` is a number of even
    bins over ``range`` (by default the data's), a sequence of ascending edges, or one of
    NumPy's rules ("auto", ...; NumPy arrays only). An element ``x`` counts for bin ``b`` where
    ``edges[b] <= x < edges[b + 1]``, the last bin also taking its right edge; NaNs and elements
    outside count nowhere. Integers and floats (float16 to float64).

    ``weights`` (of ``a``'s shape, integers or floats) makes each element add its weight instead
    of 1, and the result has the weights' dtype, as in NumPy; a NaN weight makes its bin NaN.
    Integer weights are summed exactly as 64-bit integers, floating-point ones as float64 (as
    float32 on a device without double precision), then converted. NumPy sums even bins in
    float64 too, but uneven ones (``bins`` a sequence) as differences of cumulative sums in the
    weights' dtype: there float32 and float16 sums may differ from NumPy's in the last bits, and
    a NaN weight makes NumPy's later bins NaN as well. Counting by a bin function of your own
    is :func:`histogram_by`.

    >>> counts, edges = ps.histogram(np.array([0.5, 1.5, 1.7, 9.9]), bins=10, range=(0, 10))
    >>> counts
    array([1, 2, 0, 0, 0, 0, 0, 0, 0, 1])
    >>> ps.histogram(np.array([0.5, 1.5, 1.7]), bins=2, range=(0, 2), weights=np.float32([1, 2, 0.5]))[0]
    array([1. , 2.5], dtype=float32)
    """
    dev, (arr, given_weights), returned = prepare(device, a, weights)
    if arr.dtype.kind not in "iuf":
        raise DTypeError(f"histogram takes integers and floats (float16 to float64), got {arr.dtype}")
    spec = value_spec(arr.dtype, dev, "histogram")
    if given_weights is not None:
        _check_weights(dev, given_weights, arr.shape, "histogram")
    arr = arr.reshape(-1)
    edges = _edges(arr, bins, range)
    nbins = edges.size - 1
    even = isinstance(bins, (int, np.integer)) and not isinstance(bins, bool)
    flat = None if given_weights is None else given_weights.reshape(-1)
    counts = _count(dev, staged(dev, arr), arr.size, arr, spec, {"MODE": 1, "EVEN": int(even)}, nbins, edges, flat)
    if flat is not None:
        counts = counts.astype(flat.dtype, copy=False)
    if not isinstance(arr, np.ndarray):  # a device array's edges are one too, as CuPy gives them
        edges = dev.view(dev.to_device(edges), edges.shape, edges.dtype)
    if density:
        counts = counts / np.diff(edges) / counts.sum()
    return returned((counts, edges))


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
    ``np.bincount``: int64 counts of ``max(x) + 1`` values, or ``minlength`` if more. With
    ``weights`` (integers or floats, one per element) the sums of the weights instead, float64
    as in NumPy (summed as float32 on a device without double precision).

    >>> ps.bincount(np.array([0, 1, 1, 3, 1], dtype=np.uint8))
    array([1, 3, 0, 1])
    >>> ps.bincount(np.array([0, 1, 1]), weights=np.array([0.5, 1.0, 2.0]))
    array([0.5, 3. ])
    """
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ArgumentError(f"bincount: minlength must be non-negative, got {minlength}")
    dev, (arr, given_weights), returned = prepare(device, x, weights)
    if arr.ndim != 1 or arr.dtype.kind not in "biu":
        raise ShapeError(f"bincount takes a 1D array of non-negative integers, got {arr.dtype} of shape {arr.shape}")
    if given_weights is not None:
        _check_weights(dev, given_weights, arr.shape, "bincount")
    if arr.size and arr.dtype.kind == "i" and int(arr.min()) < 0:
        raise ArgumentError("bincount: x must not hold negative numbers")
    largest = int(arr.max()) if arr.size else -1
    if largest >= 2**31 - 1:
        raise ShapeError(f"bincount: the largest value {largest} makes too many bins (at most 2**31 - 1)")
    spec = value_spec(arr.dtype, dev, "bincount")
    bins = max(largest + 1, minlength)
    counts = _count(dev, staged(dev, arr), arr.size, arr, spec, {"MODE": 0}, bins, None, given_weights)
    return returned(counts if given_weights is None else counts.astype(np.float64, copy=False))


def histogram_by(
    a: Any, bin_of: UserSource, bins: int, weights: ArrayLike | None = None, *, device: Device | str | None = None
) -> Any:
    """Counts by a bin function of your own: ``bin_of`` maps an element of ``a`` (any shape,
    flattened; an array or a container) to its bin number, and the result holds, for each of the
    ``bins`` bins, how many elements it got (int64), or with ``weights`` (of ``a``'s shape) the
    sum of their weights, in the weights' dtype as :func:`histogram` gives it, as an array of
    the data's kind (as the other primitives give theirs). Bin numbers outside
    ``0 .. bins - 1`` count nowhere.

    ``bin_of`` is a Python function or OpenCL C source of one element, as skeletons take them,
    that returns an integer; it may name the element type of any container, OpenCL vector
    types included (``int f(float4 p)``). C gives no bin number to a NaN (converting one to an
    integer is undefined): a bin function of floats tests ``isnan`` first.

    >>> ps.histogram_by(np.arange(10, dtype=np.int32), "int f(int x) { return x % 3; }", 3)
    array([4, 3, 3])
    >>> ps.histogram_by(np.float32([0.2, 1.7, 5.0]), lambda x: int(x), 2, weights=[1.0, 2.0, 4.0])
    array([1., 2.])
    """
    if isinstance(bins, bool):
        raise ArgumentError(f"histogram_by: bins must be a whole number, got {bins!r}")
    nbins = operator.index(bins)
    if not 0 <= nbins < 2**31:
        raise ArgumentError(f"histogram_by: bins must be between 0 and 2**31 - 1, got {nbins}")
    elements, returned = as_container(a, device, "histogram_by", flatten=True)
    dev = elements.device
    given_weights = None
    if weights is not None:
        _, (given_weights,), _ = prepare(dev, weights)
        shape = np.shape(a) if not isinstance(a, Container) else a.shape
        _check_weights(dev, given_weights, shape, "histogram_by")
        given_weights = given_weights.reshape(-1)
    numbers = _bin_map(bin_of, elements.dtype, dev)(elements, np.uint32(nbins))
    assert isinstance(numbers, Container)
    # the result is of the data's kind: CuPy for a device array or a container on a CUDA device
    on_gpu = dev.backend == "cuda" and (isinstance(a, Container) or is_device_array(a))
    like = prepare(dev, numbers)[1][0] if on_gpu else np.empty(0)
    spec = {"T": "int", "KIND": 0}
    counts = _count(dev, numbers.to_device(), numbers.size, like, spec, {"MODE": 0}, nbins, None, given_weights)
    return returned(counts if given_weights is None else counts.astype(given_weights.dtype, copy=False))


def _bin_map(bin_of: UserSource, dtype: np.dtype, device: Device) -> Map:
    """A Map from elements to their bin numbers (int), -1 for those outside ``0 .. bins - 1``
    (``bins`` its extra argument): ``bin_of`` wrapped by a function that checks the range."""
    source = function(bin_of).source(dtype, fp64=device.info.fp64) if callable(bin_of) else bin_of
    fn = UserFunction(source, "histogram_by", "bin_of", 1)
    name = repr(fn.signature.name)
    if fn.extras or fn.index_positions:
        raise UserFunctionError(f"histogram_by: the bin function {name} takes one element and nothing else")
    if dtype_of(fn.return_type, fn.where).kind not in "biu":
        raise UserFunctionError(
            f"histogram_by: the bin function {name} returns {fn.return_type}; it returns an integer, the bin number"
        )
    wrapper = (
        f"int ps_bin_or_none({fn.elements[0].type} ps_x, uint ps_bins)\n{{\n"
        f"    long ps_b = (long){fn.signature.name}(ps_x);\n"
        "    return ps_b >= 0 && ps_b < (long)ps_bins ? (int)ps_b : -1;\n}\n"
    )
    return Map(source + "\n" + wrapper)


def _check_weights(dev: Device, weights: Any, shape: tuple[int, ...], what: str) -> None:
    """Weights of ``shape``, integers or floats, that ``dev`` can sum (64-bit atomics)."""
    if weights.shape != tuple(shape):
        raise ShapeError(f"{what}: weights must have the shape of the data, {tuple(shape)}; got {weights.shape}")
    if weights.dtype.kind not in "iuf" or weights.dtype.byteorder == ">":
        raise DTypeError(f"{what}: weights must be integers or floats (float16 to float64), got {weights.dtype}")
    value_spec(weights.dtype, dev, f"{what}: weights")
    if dev.backend == "opencl" and "cl_khr_int64_base_atomics" not in dev.info.extensions:
        raise ArgumentError(
            f"{what}: weights are summed with 64-bit atomics (cl_khr_int64_base_atomics), which {dev.id} lacks"
        )


def _weight_defines(dev: Device, weights: Any) -> tuple[dict[str, Any], np.dtype]:
    """The defines of histogram.cl for summing ``weights``, and the dtype of the sums."""
    spec = value_spec(weights.dtype, dev, "weights")
    defines = {"WEIGHTS": 1, "W": spec["T"], "W_HALF": int(spec["KIND"] == 2)}
    if weights.dtype.kind in "iu":
        return {**defines, "ACC_KIND": 0}, np.dtype(np.int64)
    if dev.info.fp64:
        return {**defines, "ACC_KIND": 1}, np.dtype(np.float64)
    return {**defines, "ACC_KIND": 2}, np.dtype(np.float32)


def _count(
    dev: Device,
    source: Buffer,
    n: int,
    like: Any,
    spec: dict,
    mode: dict,
    bins: int,
    edges: np.ndarray | None,
    weights: Any = None,
) -> Any:
    """The counts (int64) of the ``n`` elements in ``source`` in ``bins`` bins (histogram.cl), or
    the sums of their ``weights`` (int64 for integers, float64 for floats; float32 without
    double precision), as an array of ``like``'s kind."""
    wide = dev.info.fp64
    edge_type = np.dtype(np.float64 if wide else np.float32)
    group = min(GROUP, dev.info.max_work_group_size)
    defines = {**spec, **mode, "E": "double" if wide else "float", "WG": group}
    sums = np.dtype(np.uint32)
    if weights is not None:
        weighted, sums = _weight_defines(dev, weights)
        defines.update(weighted)
    local = 0 < bins <= LOCAL_BINS and dev.info.local_mem_bytes >= sums.itemsize * LOCAL_BINS
    defines["LOCAL_BINS"] = LOCAL_BINS if local else 0
    counts_buffer, counts = result_buffer(dev, like, shape=(bins,), dtype=sums)
    if bins == 0:
        return counts.astype(np.int64) if weights is None else counts
    dev.fill(counts_buffer, sums.type(0))
    if n:
        kernel = dev.program("primitives/histogram.cl", defines).kernel("histogram")
        bounds = np.zeros(2, edge_type) if edges is None else edges.astype(edge_type)
        low = edge_type.type(bounds[0])
        span = bounds[-1] - bounds[0]
        with np.errstate(over="ignore"):  # a subnormal span: an infinite scale (see histogram.cl)
            scale = edge_type.type(bins / span if edges is not None and span > 0 else 0)
        groups = grid_stride_groups(dev, n, group)
        if defines["LOCAL_BINS"]:  # every work-group clears and adds its counts: few of them
            groups = min(groups, GROUPS_PER_UNIT * dev.info.compute_units)
        size = round_to_multiple(groups * group, group)
        edge_buffer = dev.to_device(bounds)
        args = [source, np.uint32(n), edge_buffer, np.uint32(bins), low, scale, counts_buffer]
        if weights is not None:
            args.append(staged(dev, weights))
        dev.launch(kernel, size, group, *args)
    dev.download(counts_buffer, counts)
    return counts.astype(np.int64) if weights is None else counts
