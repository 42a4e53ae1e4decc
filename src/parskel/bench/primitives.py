"""The subjects of the ``primitives`` group of ``parskel bench`` (its cases are in :mod:`.cases`):
parskel's public calls beyond seed 000's operations (int64 keys, argsort, sorts and scans along
an axis, int8 scans, stacks of products, histograms (weighted, and by a bin function),
searchsorted, unique, copy_if, segmented sums, top_k) on NumPy arrays, against the same
operation in NumPy and, where CuPy sees a GPU, in CuPy (the inputs copied up, the operation,
the result copied back, as CuPy users call it). parskel's time is split by device events into
uploads, kernels and downloads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..runtime import Device
from . import peers_cupy
from .cases import BINS, MATRIX, ROW, SEGMENT, TOP, Inputs, Subject, segment_starts, stacked
from .subjects import recorded_call, unrecorded

_ABOVE_HALF = "bool above(float x) { return x > 0.5f; }"
_BIN = f"int bin(float x) {{ return (int)(x * {BINS}.0f); }}"


def _parskel_calls(ps: Any) -> dict[str, Callable[[Inputs], Any]]:
    above = ps.Select(_ABOVE_HALF)  # built once: its kernels are compiled by the first call
    return {
        "sort_int64": lambda i: ps.sort(i[0]),
        "argsort": lambda i: ps.argsort(i[0]),
        "sort_rows": lambda i: ps.sort(i[0].reshape(-1, ROW)),
        "cumsum_rows": lambda i: ps.scan(i[0].reshape(-1, ROW), axis=1, inclusive=True),
        "cumsum_int8": lambda i: ps.scan(i[0], inclusive=True),
        "matmul_stack": lambda i: ps.matmul(stacked(i[0]), stacked(i[1])),
        "histogram": lambda i: ps.histogram(i[0], 256, (0, 1))[0],
        "histogram_weighted": lambda i: ps.histogram(i[0], 256, (0, 1), weights=i[1])[0],
        "histogram_by": lambda i: ps.histogram_by(i[0], _BIN, BINS),
        "searchsorted": lambda i: ps.searchsorted(i[0], i[1]),
        "unique": lambda i: ps.unique(i[0]),
        "copy_if": lambda i: above(i[0]),
        "segmented_sum": lambda i: ps.segmented_reduce(i[0], np.append(segment_starts(i[0].size), i[0].size)),
        "top_k": lambda i: ps.top_k(i[0], TOP)[0],
    }


NUMPY: dict[str, Callable[..., Any]] = {
    "sort_int64": np.sort,
    "argsort": lambda x: np.argsort(x, kind="stable"),
    "sort_rows": lambda x: np.sort(x.reshape(-1, ROW)),
    "cumsum_rows": lambda x: np.cumsum(x.reshape(-1, ROW), axis=1),
    "cumsum_int8": np.cumsum,
    "matmul_stack": lambda a, b: np.matmul(stacked(a), stacked(b)),
    "histogram": lambda x: np.histogram(x, 256, (0, 1))[0],
    "histogram_weighted": lambda x, w: np.histogram(x, 256, (0, 1), weights=w)[0],
    "histogram_by": lambda x: np.bincount((x * np.float32(BINS)).astype(np.intp), minlength=BINS),
    "searchsorted": np.searchsorted,
    "unique": np.unique,
    "copy_if": lambda x: x[x > 0.5],
    "segmented_sum": lambda x: np.add.reduceat(x, segment_starts(x.size)),
    "top_k": lambda x: np.sort(np.partition(x, x.size - TOP)[x.size - TOP :])[::-1],
}


def _cupy_calls(cp: Any) -> dict[str, Callable[..., Any]]:
    def segmented_sum(x: Any) -> Any:  # CuPy has no reduceat: the differences of a cumsum at the segment ends
        ends = cp.minimum(cp.arange(1, -(-x.size // SEGMENT) + 1) * SEGMENT, x.size) - 1
        sums = cp.cumsum(x, dtype=cp.float64)[ends]
        return cp.concatenate([sums[:1], cp.diff(sums)])

    return {
        "sort_int64": cp.sort,
        "argsort": lambda x: cp.argsort(x),  # CuPy's argsort is a stable radix sort (CUB)
        "sort_rows": lambda x: cp.sort(x.reshape(-1, ROW)),
        "cumsum_rows": lambda x: cp.cumsum(x.reshape(-1, ROW), axis=1),
        "cumsum_int8": cp.cumsum,
        "matmul_stack": lambda a, b: cp.matmul(a.reshape(-1, MATRIX, MATRIX), b.reshape(-1, MATRIX, MATRIX)),
        "histogram": lambda x: cp.histogram(x, 256, (0, 1))[0],
        "histogram_weighted": lambda x, w: cp.histogram(x, 256, (0, 1), weights=w)[0],
        "histogram_by": lambda x: cp.bincount((x * BINS).astype(cp.int32), minlength=BINS),
        "searchsorted": cp.searchsorted,
        "unique": cp.unique,
        "copy_if": lambda x: x[x > 0.5],
        "segmented_sum": segmented_sum,
        "top_k": lambda x: cp.sort(cp.partition(x, x.size - TOP)[x.size - TOP :])[::-1],
    }


def subjects(family: str, devices: Sequence[Device], chosen: set[str], notes: list[str]) -> list[Subject]:
    """parskel's call on each device, then NumPy's and CuPy's, as ``chosen`` asks."""
    import parskel as ps

    name = family.removeprefix("primitives.")
    found = []
    for device in devices:
        call = _parskel_calls(ps)[name]
        run, plain = recorded_call(device, call), unrecorded(device, call)
        found.append(Subject(family, "parskel", "variant", device.id, run, default_at=lambda size: True, plain=plain))
    if "numpy" in chosen:
        numpy_call = NUMPY[name]
        found.append(Subject(family, "numpy", "peer", "host", lambda inputs: (numpy_call(*inputs), None)))
    if "cupy" in chosen:
        ok, why = peers_cupy.available()
        if ok:
            import cupy

            compute = _cupy_calls(cupy)[name]
            where = f"cupy:{peers_cupy.device_name()}"
            found.append(Subject(family, "cupy", "peer", where, lambda inputs: peers_cupy.timed(inputs, compute)))
        elif f"CuPy peers skipped: {why}" not in notes:
            notes.append(f"CuPy peers skipped: {why}")
    return found
