"""Segmented scans and reductions (``kernels/scan/segmented.cl``): the running sum (or product,
minimum, maximum) of the elements since the head of their segment.

They give ``ps.scan`` its axes (every row of the axis a segment) and its dtypes beyond those of
the scan variants (bool, 8- and 16-bit integers, float16, complex), and they are the
segmented scans and reductions of :mod:`parskel.primitives`. Each work-item scans a contiguous
run of the input: on a CPU device a few long runs, one per work-group of one work-item (see
:mod:`.runs`); elsewhere runs of :data:`GPU_CHUNK` elements, work-groups of
:data:`GPU_GROUP`. The runs' totals are scanned the same way, level after level, until one
run holds them all.

Result types follow ``np.cumsum``: integers wrap around in their own width (added as the
unsigned type of that width), float16 is accumulated in float32 and rounded once at the end
(closer to the exact sums than NumPy, which rounds every step), complex numbers are added part
by part.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DTypeError
from ..runtime import Buffer, Device, c_type, round_to_multiple
from . import runs
from .operands import result_buffer, staged

#: Operators of the segmented scans and reductions, by name, as segmented.cl numbers them.
OPS = {"add": 0, "multiply": 1, "min": 2, "max": 3}
GPU_CHUNK = 16
GPU_GROUP = 256
#: Result dtypes, each with the dtype its kernels compute in.
RESULT_TYPES = tuple(
    np.dtype(t)
    for t in (
        np.int8,
        np.uint8,
        np.int16,
        np.uint16,
        np.int32,
        np.uint32,
        np.int64,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
)
#: Input dtypes: the result dtypes and bool.
INPUT_TYPES = (np.dtype(np.bool_), *RESULT_TYPES)


def result_dtype(dtype: np.dtype, requested: Any, what: str) -> np.dtype:
    """The dtype of a scan of ``dtype`` elements: ``requested`` (``dtype=``) if given, else
    NumPy's cumsum rule for bool and integers narrower than 32 bits (int64, or uint64 for
    unsigned ones); any other dtype scans in its own type (int32 and uint32 too, unlike
    ``np.cumsum``, whose default there is int64)."""
    if dtype not in INPUT_TYPES:
        raise DTypeError(f"{what}: cannot scan {dtype}; supported: {_names(INPUT_TYPES)} (native byte order)")
    if requested is not None:
        wanted = np.dtype(requested)
        if wanted not in RESULT_TYPES:
            raise DTypeError(f"{what}: dtype={wanted} is not a result type; supported: {_names(RESULT_TYPES)}")
        if dtype.kind == "c" and wanted.kind != "c":
            raise DTypeError(f"{what}: cannot scan complex numbers into {wanted}; pass a complex dtype")
        return wanted
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 4):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 4:
        return np.dtype(np.uint64)
    return dtype


def _names(dtypes: tuple[np.dtype, ...]) -> str:
    return ", ".join(str(d) for d in dtypes)


def compute_type(dtype: np.dtype, op: str) -> tuple[np.dtype, int]:
    """The scalar dtype the kernels compute a result of ``dtype`` in, and its components."""
    if dtype.kind == "c":
        return np.dtype(f"f{dtype.itemsize // 2}"), 2
    if dtype == np.float16:
        return np.dtype(np.float32), 1
    if dtype.kind == "i" and op in ("add", "multiply"):  # wraps around, as the unsigned type does
        return np.dtype(f"u{dtype.itemsize}"), 1
    return dtype, 1


def identity(dtype: np.dtype, op: str) -> str:
    """The C literal of ``op``'s identity in ``dtype`` (a compute type)."""
    if op == "add":
        return "0"
    if op == "multiply":
        return "1"
    low = op == "max"
    if dtype.kind == "f":
        big = "INFINITY" if dtype.itemsize == 4 else "HUGE_VAL"
        return f"(-{big})" if low else big
    info = np.iinfo(dtype)
    value = int(info.min if low else info.max)
    if value == -(2**63):
        return "(-9223372036854775807L - 1)"
    suffix = {(8, "u"): "UL", (8, "i"): "L", (4, "u"): "U"}.get((dtype.itemsize, dtype.kind), "")
    return f"({value}{suffix})"


def program_defines(device: Device, out_dtype: np.dtype, op: str, head_type: str = "uchar") -> dict[str, int | str]:
    """The defines of segmented.cl for results of ``out_dtype`` under ``op``."""
    kt, components = compute_type(out_dtype, op)
    return {
        "T": c_type(kt, device),
        "COMPONENTS": components,
        "OP": OPS[op],
        "IDENTITY": identity(kt, op),
        "HEAD_T": head_type,
    }


def input_spec(dtype: np.dtype, device: Device, complex_kind: int = 0) -> tuple[str, int]:
    """The C type kernels read elements of ``dtype`` as, and how they convert them (IN_KIND
    here, batched.cl's A_KIND): 1 a bool byte, 2 float16 bits, ``complex_kind`` the parts of a
    complex number, 0 as they are."""
    if dtype.kind == "b":
        return "uchar", 1
    if dtype == np.float16:
        return "ushort", 2
    if dtype.kind == "c":
        return c_type(np.dtype(f"f{dtype.itemsize // 2}"), device), complex_kind
    return c_type(dtype, device), 0


def geometry(device: Device, n: int, long_runs: bool | None = None) -> tuple[int, int, int]:
    """Work-items, their work-group size and the elements each one takes, for ``n`` elements:
    a few long runs (``long_runs``, by default on CPU devices) or many short ones."""
    if device.type == "cpu" if long_runs is None else long_runs:
        items, chunk = runs.runs(device, n, 2, 4096)
        return items, 1, chunk
    items = -(-n // GPU_CHUNK)
    return items, min(GPU_GROUP, device.info.max_work_group_size), GPU_CHUNK


def enqueue(
    device: Device,
    src: Buffer,
    dst: Buffer,
    n: int,
    in_dtype: np.dtype,
    out_dtype: np.dtype,
    *,
    heads: Buffer | None = None,
    head_type: str = "uchar",
    row: int = 0,
    inclusive: bool = True,
    op: str = "add",
) -> None:
    """Enqueue the segmented scan of ``n`` elements of ``in_dtype`` in ``src`` into ``dst``
    (elements of the compute type of ``out_dtype``, :func:`compute_type`), a segment starting
    at every nonzero ``heads`` element (of the C type ``head_type``: uchar or uint), or every
    ``row`` elements when ``heads`` is None."""
    if n == 0:
        return
    kt, components = compute_type(out_dtype, op)
    tin, in_kind = input_spec(in_dtype, device)
    defines = program_defines(device, out_dtype, op, head_type) | {
        "TIN": tin,
        "IN_KIND": in_kind,
        "HEADS": int(heads is None),
        "INCLUSIVE": int(inclusive),
    }
    program = device.program("scan/segmented.cl", defines)
    items, group, chunk = geometry(device, n)
    flags = src if heads is None else heads  # not read when segments are rows
    size = (round_to_multiple(items, group), group)
    sizes = (np.uint32(n), np.uint32(max(row, 1)), np.uint32(chunk))
    if items == 1:
        device.launch(program.kernel("segmented_scan"), *size, src, flags, dst, dst, *sizes, np.uint32(0))
        return
    sums = device.alloc(items * components * kt.itemsize)
    sum_heads = device.alloc(items * (4 if head_type == "uint" else 1))
    device.launch(program.kernel("segmented_reduce"), *size, src, flags, sums, sum_heads, *sizes)
    enqueue(device, sums, sums, items, kt, out_dtype, heads=sum_heads, head_type=head_type, op=op)
    device.launch(program.kernel("segmented_scan"), *size, src, flags, sums, dst, *sizes, np.uint32(1))


def scan_rows(device: Device, rows: Any, dtype: np.dtype, inclusive: bool, op: str = "add") -> Any:
    """The scan of every row of the C-contiguous 2D array ``rows`` as a new array of ``dtype``."""
    n, row = rows.size, rows.shape[1]
    if rows.dtype.kind != "c" and dtype.kind == "c":  # a real input into complex sums: as complex numbers
        rows = rows.astype(dtype)
    kt, _ = compute_type(dtype, op)
    target = dtype if dtype != np.float16 else kt
    buffer, out = result_buffer(device, rows, dtype=target)
    if n:
        enqueue(device, staged(device, rows), buffer, n, rows.dtype, dtype, row=row, inclusive=inclusive, op=op)
        device.download(buffer, out)
    return out if target == dtype else out.astype(dtype)
