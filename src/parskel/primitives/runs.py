"""Runs of equal elements: ``unique`` (NumPy's, over the sorted array), and over runs of
consecutive equal keys as CUB has them, ``run_length_encode``, ``unique_by_key`` and
``reduce_by_key`` (sort the keys first, ``ps.sort(keys, values)``, for one group per key).

Elements are equal as NumPy's ``==`` has them (-0.0 equals +0.0), and NaNs are equal to each
other (``unique``'s ``equal_nan``). Where each run starts comes from a kernel
(``kernels/primitives/runs.cl``); the runs are gathered by stream compaction on parskel's scan.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..algorithms import segmented
from ..algorithms.keys import check_sortable
from ..algorithms.operands import prepare, result_buffer, staged
from ..algorithms.ordering import gather, sort_rows
from ..algorithms.scans import scan_buffer
from ..errors import ArgumentError, ShapeError
from ..runtime import Buffer, Device
from .base import compact, launch, value_spec
from .segments import _kernel_types, _result_dtype


def _heads(dev: Device, keys: Any, equal_nan: bool, what: str) -> Buffer:
    """uint flags, 1 where a run of equal consecutive elements of the 1D ``keys`` starts."""
    spec = value_spec(keys.dtype, dev, what, complex_ok=True)
    program = dev.program("primitives/runs.cl", {**spec, "EQUAL_NAN": int(equal_nan)})
    heads = dev.alloc(4 * max(keys.size, 1))
    launch(dev, program.kernel("run_heads"), keys.size, staged(dev, keys), heads, np.uint32(keys.size))
    return heads


def _runs(dev: Device, keys: Any, heads: Buffer) -> tuple[Any, Buffer, Any]:
    """The runs of ``keys`` from their heads: their starts (uint32 positions), the buffer of
    their last positions, and their lengths (int64)."""
    n = keys.size
    positions = np.arange(n, dtype=np.uint32, like=keys)
    starts, count = compact(dev, staged(dev, positions), heads, n, positions)
    ends = dev.alloc(4 * max(count, 1))
    length_buffer, lengths = result_buffer(dev, starts, dtype=np.int64)
    if count:
        program = dev.program("primitives/runs.cl", {"T": "uint"})
        launch(
            dev,
            program.kernel("run_bounds"),
            count,
            staged(dev, starts),
            np.uint32(count),
            np.uint32(n),
            ends,
            length_buffer,
        )
        dev.download(length_buffer, lengths)
    return starts, ends, lengths


def _taken(dev: Device, source: Any, at: Buffer, count: int) -> Any:
    """``source[at[j]]`` for the ``count`` uint32 positions of ``at``, as a new array."""
    buffer, out = result_buffer(dev, source, shape=(count,))
    if count:
        gather(dev, staged(dev, source), at, buffer, count, source.dtype)
        dev.download(buffer, out)
    return out


def _vector(array: Any, what: str) -> None:
    if array.ndim != 1:
        raise ShapeError(f"{what} takes a 1D array, got shape {array.shape}")


def run_length_encode(a: ArrayLike, *, device: Device | str | None = None) -> tuple[Any, Any]:
    """The runs of equal consecutive elements of the 1D array ``a``: their values and their
    lengths (int64), as CUB's ``DeviceRunLengthEncode::Encode``.

    >>> values, lengths = ps.run_length_encode(np.array([7, 7, 2, 2, 2, 7]))
    >>> values, lengths
    (array([7, 2, 7]), array([2, 3, 1]))
    """
    dev, (arr,), returned = prepare(device, a)
    _vector(arr, "run_length_encode")
    heads = _heads(dev, arr, True, "run_length_encode")
    starts, _, lengths = _runs(dev, arr, heads)
    return returned((_taken(dev, arr, staged(dev, starts), starts.size), lengths))


def unique_by_key(keys: ArrayLike, values: ArrayLike, *, device: Device | str | None = None) -> tuple[Any, Any]:
    """The first key and value of every run of equal consecutive keys, as CUB's
    ``DeviceSelect::UniqueByKey`` (``keys`` 1D, ``values`` of its length, any dtype).

    >>> ps.unique_by_key(np.array([1, 1, 3, 3, 1]), np.array([10, 11, 12, 13, 14]))
    (array([1, 3, 1]), array([10, 12, 14]))
    """
    dev, (key_arr, value_arr), returned = prepare(device, keys, values)
    _pair(key_arr, value_arr, "unique_by_key")
    starts, _, _ = _runs(dev, key_arr, _heads(dev, key_arr, True, "unique_by_key"))
    at = staged(dev, starts)
    return returned((_taken(dev, key_arr, at, starts.size), _taken(dev, value_arr, at, starts.size)))


def _pair(keys: Any, values: Any, what: str) -> None:
    _vector(keys, what)
    if values.shape != keys.shape:
        raise ShapeError(f"{what}: values must have the keys' shape {keys.shape}, got {values.shape}")


def reduce_by_key(
    keys: ArrayLike,
    values: ArrayLike,
    op: str = "add",
    *,
    dtype: DTypeLike | None = None,
    device: Device | str | None = None,
) -> tuple[Any, Any]:
    """The key and the total of the values (``op``: "add", "multiply", "min" or "max") of every
    run of equal consecutive keys, as CUB's ``DeviceReduce::ReduceByKey``; totals have the
    result types of :mod:`parskel.primitives.segments`.

    >>> ps.reduce_by_key(np.array([1, 1, 3, 3, 1]), np.array([10, 11, 12, 13, 14]))
    (array([1, 3, 1]), array([21, 25, 14]))
    """
    dev, (key_arr, value_arr), returned = prepare(device, keys, values)
    _pair(key_arr, value_arr, "reduce_by_key")
    result = _result_dtype(value_arr.dtype, op, dtype, "reduce_by_key")
    heads = _heads(dev, key_arr, True, "reduce_by_key")
    starts, ends, _ = _runs(dev, key_arr, heads)
    computed, target = _kernel_types(result, op)
    n = value_arr.size
    scanned_buffer, scanned = result_buffer(dev, value_arr, dtype=target)
    if n:
        segmented.enqueue(
            dev, staged(dev, value_arr), scanned_buffer, n, value_arr.dtype, computed,
            heads=heads, head_type="uint", inclusive=True, op=op,
        )  # fmt: skip
        dev.download(scanned_buffer, scanned)
    totals = _taken(dev, scanned, ends, starts.size)
    if result.kind == "b":
        totals = totals.view(result)
    elif totals.dtype != result:
        totals = totals.astype(result)
    return returned((_taken(dev, key_arr, staged(dev, starts), starts.size), totals))


def unique(
    ar: ArrayLike,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    device: Device | str | None = None,
) -> Any:
    """The sorted unique elements of ``ar`` (flattened), as ``np.unique``; with
    ``return_index`` also the position of each one's first occurrence, ``return_inverse`` the
    unique element of every input element (of the input's shape), ``return_counts`` how many
    times each occurs (all int64). Keys as ``ps.sort`` takes them; ``axis`` must be None. The
    value of a run of -0.0 and +0.0 is that of its first occurrence, as with NumPy's stable sort.

    >>> ps.unique(np.array([3, 1, 3, 2, 1]), return_counts=True)
    (array([1, 2, 3]), array([2, 1, 2]))
    """
    if axis is not None:
        raise ArgumentError("unique: axis= is not supported; pass axis=None (the flattened array)")
    dev, (arr,), returned = prepare(device, ar)
    check_sortable(arr, "unique")
    flat = arr.reshape(-1)
    n = flat.size
    # positions are sorted along only where they are asked for, or a float's value needs them
    positions = return_index or return_inverse or flat.dtype.kind == "f"
    sorted_keys, _, order = sort_rows(dev, flat.reshape(1, n), None, order=positions)
    sorted_keys = sorted_keys.reshape(n)
    heads = _heads(dev, sorted_keys, equal_nan, "unique")
    starts, ends, counts = _runs(dev, sorted_keys, heads)
    runs = starts.size
    if flat.dtype.kind == "f":  # -0.0 sorts before +0.0 here: a run's first occurrence is its smallest position
        order = order.reshape(n)
        first_buffer, firsts = result_buffer(dev, order)
        if n:
            segmented.enqueue(
                dev, staged(dev, order), first_buffer, n, order.dtype, order.dtype,
                heads=heads, head_type="uint", op="min",
            )  # fmt: skip
            dev.download(first_buffer, firsts)
        index = _taken(dev, firsts, ends, runs)
        values = _taken(dev, flat, staged(dev, index.astype(np.uint32)), runs)
    else:
        order = None if order is None else order.reshape(n)
        index = None if order is None else _taken(dev, order, staged(dev, starts), runs)
        values = _taken(dev, sorted_keys, staged(dev, starts), runs)
    found = [values]
    if return_index:
        found.append(index)
    if return_inverse:
        inverse_buffer, inverse = result_buffer(dev, order)
        if n:
            ids = dev.alloc(4 * n)  # each element's run, from 1: the inclusive scan of the heads
            scan_buffer(dev, heads, ids, n, np.uint32, inclusive=True)
            program = dev.program("primitives/runs.cl", {"T": "uint"})
            launch(dev, program.kernel("scatter_runs"), n, ids, staged(dev, order), inverse_buffer, np.uint32(n))
            dev.download(inverse_buffer, inverse)
        found.append(inverse.reshape(arr.shape))
    if return_counts:
        found.append(counts)
    return returned(found[0] if len(found) == 1 else tuple(found))
