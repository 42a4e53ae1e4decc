"""Skeletons called on NumPy arrays: in one piece where that is best, otherwise chunk by chunk
through the device (:mod:`parskel.pipeline`): on a GPU from a few MiB on, with pinned staging
and transfers overlapped with the kernels, and on any device when the work is larger than its
memory or the cap. The results are NumPy arrays (a scalar for a reduction), equal to those of
the same skeleton on containers.

Device memory of one call on ``n`` elements (what decides whether it is cut into chunks):

- ``Map``, ``Zip``: the inputs and the output, nothing else.
- ``MapOverlap``: the input and the output (and one neutral element); a chunk also holds the
  elements (rows, for more axes) within the first axis's radius on either side that its edges read.
- ``Reduce``, ``MapReduce``: the input, and partial results that fit in :data:`REDUCTION_FIXED`.
- ``Scan``: the input and the output, plus block totals (under 1 % of the input) and a fixed part.

A user function that takes its element's index (``ps_index``) is run in one piece only: a
chunk's kernels number its elements from 0. Such a call that does not fit raises
:class:`~parskel.errors.DeviceMemoryError` before any kernel runs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..containers import RANKS, Vector, of_rank
from ..containers.base import Container
from ..errors import DeviceMemoryError, ShapeError
from ..pipeline import Need, Pipeline, Route, chunk_length, page_locked, route
from ..runtime import Device, hostpool
from ..runtime import device as select_device
from .base import Skeleton
from .userfn import UserFunction

#: The fixed device memory of a reduction or a scan besides its input and output: identities,
#: partial results, block totals of the last levels.
REDUCTION_FIXED = 16 << 10

Compute = Callable[[], None]


def elementwise(skeleton: Any, arrays: Sequence[Any], extra: tuple[Any, ...], out: Any) -> np.ndarray | None:
    """``Map`` or ``Zip`` on host arrays of one shape; a new array (or ``out``)."""
    xs = [_host(x, skeleton.name) for x in arrays]
    shape = xs[0].shape
    if any(x.shape != shape for x in xs):
        raise ShapeError(f"{skeleton.name}: the inputs have shapes {[x.shape for x in xs]}; they must be equal")
    dev = _device(extra)
    out_dtype = skeleton._out_dtype
    n = xs[0].size
    need = Need(
        per_element=sum(x.itemsize for x in xs) + (out_dtype.itemsize if out_dtype is not None else 0),
        largest_per_element=max([x.itemsize for x in xs] + ([out_dtype.itemsize] if out_dtype is not None else [])),
    )
    way = _route(skeleton, [skeleton.fn], dev, n, need, xs, chunkable=out_dtype is not None)
    if way is None:
        plan = skeleton._host_plan(dev, xs) if n and _scalar_extras(extra) else None
        if plan is not None and (out is None or not any(_overlap(out, x) for x in xs)):
            target = _target(out, shape, out_dtype, skeleton.name)
            skeleton._run_host(plan, dev, xs, extra, target)
            return target
        result = skeleton(*[_container(x, dev) for x in xs], *extra)
        return None if result is None else _give(result, out, skeleton.name)
    assert out_dtype is not None
    target = _target(out, shape, out_dtype, skeleton.name, dev if way.staged else None)
    flat_in, flat_out = [x.reshape(-1) for x in xs], target.reshape(-1)
    pipe = Pipeline(dev, skeleton.name, staged=way.staged)
    m = chunk_length(n, need, way.within, overlap=way.staged, pinned=page_locked(dev, [*xs, target]))

    def chunks() -> Iterator[Compute]:
        for lo in range(0, n, m):
            hi = min(lo + m, n)
            inputs = [_input(pipe, dev, [x[lo:hi]], (hi - lo,)) for x in flat_in]

            def compute(inputs: list[Container] = inputs, lo: int = lo, hi: int = hi) -> None:
                result = skeleton(*inputs, *extra)
                pipe.store(result.to_device(), 0, [flat_out[lo:hi]])

            yield compute

    pipe.run(chunks())
    return target


def reduction(skeleton: Any, a: Any, extra: tuple[Any, ...], out: Container | None) -> Any:
    """``Reduce`` or ``MapReduce`` of a host array: a NumPy scalar (or ``out``, a one-element
    container). Each chunk reduces into a partial result on the device; the partials, in
    order, are reduced with the operator alone."""
    x = _host(a, skeleton.name)
    dev = _device(extra)
    n = x.size
    need = Need(per_element=x.itemsize, largest_per_element=x.itemsize, fixed=REDUCTION_FIXED)
    functions = [f for f in (skeleton.mapper, skeleton.op) if f is not None]
    way = _route(skeleton, functions, dev, n, need, [x])
    if way is None:
        # types reduced before: straight to the kernel (asked only where a plan may exist, so that
        # a first call does not put the array on a GPU twice)
        if out is None and n and skeleton._plans and _scalar_extras(extra):
            src = dev.host_buffer(x)
            plan = skeleton._host_plan(dev, x, src)
            if plan is not None:
                return skeleton._launch(plan, dev, src, x.shape, extra, None)
        return skeleton(_container(x, dev), *extra, out=out)
    flat = x.reshape(-1)
    pipe = Pipeline(dev, skeleton.name, staged=way.staged)
    m = chunk_length(n, need, way.within, overlap=way.staged)
    parts: list[Container] = []

    def chunks() -> Iterator[Compute]:
        for lo in range(0, n, m):
            hi = min(lo + m, n)
            chunk = _input(pipe, dev, [flat[lo:hi]], (hi - lo,))

            def compute(chunk: Container = chunk) -> None:
                part = Vector.empty(1, skeleton.dtype, device=dev)  # for the device's own queue, which uses it
                skeleton(chunk, *extra, out=part)
                parts.append(part)

            yield compute

    pipe.run(chunks())
    item = skeleton.dtype.itemsize
    partials = Vector.empty(len(parts), skeleton.dtype, device=dev)
    target = partials.output_buffer()
    for k, part in enumerate(parts):
        dev.copy(target, part.to_device(), item, dst_offset=k * item)
    partials.mark_device_written()
    op_extra = extra[len(skeleton.mapper.extras) :] if skeleton.mapper is not None else extra
    return _combiner(skeleton)(partials, *op_extra, out=out)


def scan(skeleton: Any, a: Any, extra: tuple[Any, ...], out: Any) -> tuple[np.ndarray, Any]:
    """``Scan`` of a host array: the scanned array (or ``out``) and the total.

    Chunk i > 0 is scanned behind one more element, the total of the chunks before it: the
    scan of ``[carry, x_lo, ..., x_hi-1]`` holds the chunk's results from its second element
    on (exclusive or inclusive alike), and its total is the next carry.
    """
    x = _host(a, skeleton.name)
    dev = _device(extra)
    n = x.size
    item = x.itemsize
    need = Need(per_element=2.02 * item, largest_per_element=item, fixed=REDUCTION_FIXED)
    way = _route(skeleton, [skeleton.op], dev, n, need, [x])
    if way is None:
        if n and skeleton._plans and _scalar_extras(extra) and (out is None or not _overlap(out, x)):  # planned
            target = _target(out, x.shape, skeleton.dtype, skeleton.name)
            total = skeleton._run_host(dev, x, extra, target)
            if total is not None:
                return target, total
        result, total = skeleton(_container(x, dev), *extra)
        return _give(result, out, skeleton.name), total
    target = _target(out, x.shape, skeleton.dtype, skeleton.name, dev if way.staged else None)
    flat, flat_out = x.reshape(-1), target.reshape(-1)
    pipe = Pipeline(dev, skeleton.name, staged=way.staged)
    m = chunk_length(n, need, way.within, overlap=way.staged, least=2)
    carry: list[Any] = []

    def chunks() -> Iterator[Compute]:
        for lo in range(0, n, m):
            hi = min(lo + m, n)
            lead = 1 if lo else 0
            chunk = _input(pipe, dev, [flat[lo:hi]], (lead + hi - lo,), skip=lead)

            def compute(chunk: Container = chunk, lead: int = lead, lo: int = lo, hi: int = hi) -> None:
                if lead:
                    dev.upload(chunk.to_device(), np.array(carry[-1:], dtype=skeleton.dtype))
                result, total = skeleton(chunk, *extra)
                carry[:] = [total]
                pipe.store(result.to_device(), lead * item, [flat_out[lo:hi]])

            yield compute

    pipe.run(chunks())
    return target, carry[0]


def map_overlap(skeleton: Any, a: Any, extra: tuple[Any, ...], out: Any) -> np.ndarray:
    """``MapOverlap`` of a host array of 1 to 4 axes; a new array (or ``out``).

    A chunk of rows (elements, for a vector; slices along the first axis, for more axes) is
    computed with as many rows of the input on either side as the radius along the first axis,
    so that the rows it keeps see the same neighbours as in one piece; at the array's edges the
    skeleton's boundary applies as usual, except for ``"wrap"``, whose chunks take their outer
    rows from the other end of the array.
    """
    x = _host(a, skeleton.name)
    dev = _device(extra)
    out_dtype = skeleton._out_dtype
    rows = x.shape[0]
    row = int(np.prod(x.shape[1:], dtype=np.int64))  # elements a row (1 for a vector)
    r = skeleton.radii(x.ndim)[0]
    need = Need(
        per_element=(x.itemsize + out_dtype.itemsize) * row,
        largest_per_element=max(x.itemsize, out_dtype.itemsize) * row,
        fixed=REDUCTION_FIXED,
    )
    way = _route(skeleton, [skeleton.fn], dev, rows, need, [x])
    if way is None:
        return _give(skeleton(_container(x, dev), *extra), out, skeleton.name)
    target = _target(out, x.shape, out_dtype, skeleton.name, dev if way.staged else None)
    pipe = Pipeline(dev, skeleton.name, staged=way.staged)
    m = chunk_length(rows, need, way.within, overlap=way.staged, least=2 * r + 1)
    wrap = skeleton.boundary == "wrap"

    def chunks() -> Iterator[Compute]:
        for lo in range(0, rows, m):
            hi = min(lo + m, rows)
            if wrap:
                pieces, lead = _circular(x, lo - r, hi + r), r
            else:
                first, last = max(lo - r, 0), min(hi + r, rows)
                pieces, lead = [x[first:last]], lo - first
            chunk = _input(pipe, dev, pieces, (sum(p.shape[0] for p in pieces), *x.shape[1:]))

            def compute(chunk: Container = chunk, lead: int = lead, lo: int = lo, hi: int = hi) -> None:
                result = skeleton(chunk, *extra)
                pipe.store(result.to_device(), lead * row * out_dtype.itemsize, [target[lo:hi]])

            yield compute

    pipe.run(chunks())
    return target


# shared ---------------------------------------------------------------------------------------


def _route(
    skeleton: Skeleton,
    functions: Sequence[UserFunction],
    dev: Device,
    n: int,
    need: Need,
    arrays: Sequence[np.ndarray],
    *,
    chunkable: bool = True,
) -> Route | None:
    """The call's route (None: in one piece, as on containers). A call that cannot be chunked
    runs in one piece if it fits, else it is refused before any kernel runs."""
    way = route(dev, n, need, sum(x.nbytes for x in arrays))
    if way is None or n == 0:
        return None
    indexed = any(f.index_positions for f in functions)
    if chunkable and not indexed:
        return way
    if way.whole:
        return None
    why = "its function takes the element's index" if indexed else "its function returns nothing"
    raise DeviceMemoryError(
        f"{skeleton.name}: {need.total(n)} bytes of device memory do not fit the {way.within.total} allowed "
        f"on {dev.id}, and the call cannot be cut into chunks: {why}"
    )


def _scalar_extras(extra: Sequence[Any]) -> bool:
    """Whether a call in one piece on host arrays may go straight to the kernels of a plan made
    before: no extra argument is a container (which the call would run beside, on its device,
    and which the kernels may write), so none needs the containers' checks and bookkeeping."""
    return not any(isinstance(value, Container) for value in extra)


def _overlap(out: Any, x: np.ndarray) -> bool:
    """Whether ``out`` may share memory with the input ``x`` other than as the very same
    elements (which an element-wise kernel may write in place).

    >>> x = np.zeros(4)
    >>> _overlap(x, x), _overlap(x[1:], x[:3]), _overlap(np.zeros(4), x)
    (False, True, False)
    """
    if not isinstance(out, np.ndarray) or not np.may_share_memory(out, x):
        return False
    same = out.nbytes == x.nbytes and out.__array_interface__["data"][0] == x.__array_interface__["data"][0]
    return not same


def _host(value: Any, name: str) -> np.ndarray:
    x = np.ascontiguousarray(value)
    of_rank(x.ndim, f"{name} of a NumPy array of shape {x.shape}")
    return x


def _device(extra: Sequence[Any]) -> Device:
    """Where a call on host arrays runs: where its container arguments live, else the default."""
    for value in extra:
        if isinstance(value, Container):
            return value.device
    return select_device(None)


def _container(x: np.ndarray, dev: Device) -> Container:
    """``x`` borrowed by a container (read only: parskel never writes into it)."""
    return RANKS[x.ndim](x, copy=False, device=dev)


def _input(
    pipe: Pipeline, dev: Device, pieces: Sequence[np.ndarray], shape: tuple[int, ...], skip: int = 0
) -> Container:
    """A container of ``shape`` holding ``pieces`` one after another from element (row)
    ``skip`` on: loaded by the pipeline, or on a device that works in host memory the host
    array itself (a piece borrowed as it is, or the pieces joined)."""
    cls = RANKS[len(shape)]
    dtype = pieces[0].dtype
    if dev.shares_host_memory and not pipe.staged:
        pipe.count(shape[0])
        if len(pieces) == 1 and not skip and pieces[0].shape == shape:
            return cls(pieces[0], copy=False, device=dev)
        host = hostpool.empty(shape, dtype)
        at = skip
        for piece in pieces:
            host[at : at + piece.shape[0]] = piece
            at += piece.shape[0]
        return cls(host, copy=False, device=dev)
    chunk = cls.empty(shape, dtype, device=dev)
    row = chunk.nbytes // max(shape[0], 1)
    pipe.load(pieces, chunk.output_buffer(), skip * row, elements=shape[0])
    return chunk


def _circular(x: np.ndarray, start: int, stop: int) -> list[np.ndarray]:
    """Rows ``start .. stop - 1`` of ``x`` taken circularly, as slices of ``x``.

    >>> [p.tolist() for p in _circular(np.arange(5), -2, 3)]
    [[3, 4], [0, 1, 2]]
    """
    rows = x.shape[0]
    pieces = []
    while start < stop:
        first = start % rows
        take = min(stop - start, rows - first)
        pieces.append(x[first : first + take])
        start += take
    return pieces


def _target(out: Any, shape: tuple[int, ...], dtype: np.dtype, name: str, staging: Device | None = None) -> np.ndarray:
    """``out`` checked to take a result of ``shape`` and ``dtype``, or a new array (one that
    ``staging``, the device a staged result comes back from, writes best)."""
    if out is None:
        return hostpool.empty(shape, dtype) if staging is None else staging.host_result(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise ShapeError(f"{name}: with NumPy inputs, out is a NumPy array, not {type(out).__name__}")
    if out.shape != shape or out.dtype != dtype or not (out.flags.c_contiguous and out.flags.writeable):
        raise ShapeError(
            f"{name}: out must be a writable C-contiguous array of shape {shape} and dtype {dtype}; "
            f"got shape {out.shape} and dtype {out.dtype}"
        )
    return out


def _give(result: Container, out: Any, name: str) -> np.ndarray:
    """A result container as a NumPy array: ``out`` filled, or the container's own host array."""
    if out is None:
        return result.numpy(writable=True)
    target = _target(out, result.shape, result.dtype, name)
    target[...] = result.numpy()
    return target


def _combiner(skeleton: Any) -> Any:
    """The ``Reduce`` of a reduction's operator alone (a ``MapReduce`` without its map), which
    combines partial results."""
    from .reduce import Reduce

    if isinstance(skeleton, Reduce):
        return skeleton
    twin = copy.copy(skeleton)
    twin.__class__ = Reduce
    twin.mapper = None
    twin._plans = {}
    return twin
