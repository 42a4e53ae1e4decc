"""What the primitives share: how their kernels read elements (``kernels/primitives/values.h``),
one-dimensional launches, and stream compaction on parskel's own scan."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithms.operands import prepare, result_buffer
from ..algorithms.ordering import moved_as
from ..algorithms.scans import scan_buffer
from ..containers import Vector
from ..containers.base import Container
from ..errors import DTypeError, ShapeError
from ..runtime import Buffer, Device, Kernel, c_type, round_to_multiple

GROUP = 256


def value_spec(dtype: np.dtype, device: Device, what: str, *, complex_ok: bool = False) -> dict[str, int | str]:
    """The defines of values.h for elements of ``dtype``: the C type they are stored as (T) and
    how they are read (KIND); :class:`DTypeError` for a dtype the primitive cannot compare."""
    if dtype.kind == "b":
        return {"T": "uchar", "KIND": 0}
    if dtype == np.float16:
        return {"T": "ushort", "KIND": 2}
    if dtype.kind == "c" and complex_ok:
        return {"T": c_type(np.dtype(f"f{dtype.itemsize // 2}"), device), "KIND": 3}
    if dtype.kind in "iuf" and dtype.byteorder != ">":
        return {"T": c_type(dtype, device), "KIND": int(dtype.kind == "f")}
    kinds = "bool, integers, float16, float32, float64" + (", complex64, complex128" if complex_ok else "")
    raise DTypeError(f"{what} takes {kinds} (native byte order), got {dtype}")


def as_container(a: Any, device: Device | str | None, what: str, *, flatten: bool = False) -> tuple[Container, Any]:
    """``a`` as a container: a container as it is, an array as a Vector (borrowed where it can
    be; ``flatten`` takes any shape, flattened, else only 1D), and the function that gives a
    result back as ``a``'s kind of array."""
    if isinstance(a, Container):
        if a.ndim != 1 and not flatten:
            raise ShapeError(f"{what} takes a 1D array or a Vector, got a {type(a).__name__}")
        return a, lambda result: result
    dev, (arr,), returned = prepare(device, a)
    if flatten:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ShapeError(f"{what} takes a 1D array or a Vector, got shape {arr.shape}")
    if isinstance(arr, np.ndarray):
        return Vector(np.ascontiguousarray(arr), copy=False, device=dev), returned
    return Vector(arr, device=dev), returned


def launch(device: Device, kernel: Kernel, n: int, *args: Any) -> None:
    """Enqueue ``kernel`` over ``n`` work-items (rounded up to whole work-groups)."""
    group = min(GROUP, device.info.max_work_group_size)
    device.launch(kernel, round_to_multiple(max(n, 1), group), group, *args)


def read_count(device: Device, scanned: Buffer, flags: Buffer, n: int) -> int:
    """How many of ``n`` uint flags are set, from their exclusive scan: the last sum plus the last flag."""
    if n == 0:
        return 0
    last = np.empty(2, np.uint32)
    device.download(scanned, last[:1], offset=4 * (n - 1), wait=False)
    device.download(flags, last[1:], offset=4 * (n - 1))
    return int(last[0]) + int(last[1])


def compact(
    device: Device, source: Buffer, flags: Buffer, n: int, like: Any, *, partition: bool = False
) -> tuple[Any, int]:
    """The elements of ``source`` (``n`` of ``like``'s dtype) whose uint flag is set, in order,
    as a new array of ``like``'s kind; with ``partition`` all ``n`` elements, those whose flag
    is set first, then the others, each in order. Also how many flags are set."""
    positions = device.alloc(4 * max(n, 1))
    scan_buffer(device, flags, positions, n, np.uint32)
    count = read_count(device, positions, flags, n)
    buffer, out = result_buffer(device, like, shape=(n if partition else count,))
    if out.size:
        unit, words = moved_as(like.dtype)
        defines: dict[str, int | str] = {"E": unit, "WORDS": words, "PARTITION": int(partition)}
        kernel = device.program("primitives/compact.cl", defines).kernel("compact")
        launch(device, kernel, n, source, flags, positions, buffer, np.uint32(n), np.uint32(count))
        device.download(buffer, out)
    return out, count
