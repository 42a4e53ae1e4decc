"""The first kernels: seed 000's vector addition, seed 003's SAXPY and its work-item mappings."""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..errors import ShapeError
from ..runtime import Device, c_type, round_to_multiple
from ..runtime import device as select_device
from .operands import prepare

WORK_GROUP = 256

Mapping = Literal["one_to_one", "contiguous", "strided", "locally_spaced"]
MAPPINGS: tuple[Mapping, ...] = ("one_to_one", "contiguous", "strided", "locally_spaced")


def _same_vectors(*arrays: np.ndarray) -> None:
    first = arrays[0]
    for other in arrays:
        if other.ndim != 1 or other.shape != first.shape:
            raise ShapeError(f"expected 1D arrays of one length, got shapes {[a.shape for a in arrays]}")
        if other.dtype != first.dtype:
            raise ShapeError(f"expected one dtype, got {[str(a.dtype) for a in arrays]}")


def vector_add(a: np.ndarray, b: np.ndarray, *, device: Device | str | None = None) -> np.ndarray:
    """``a + b`` on a device, one work-item per element (seed 000, chapter 2)."""
    dev, (a, b), returned = prepare(device, a, b)
    _same_vectors(a, b)
    kernel = dev.program("basics/vector_add.cl", {"T": c_type(a.dtype, dev)}).kernel("vector_add")
    n = a.size
    buf_a, buf_b, buf_c = dev.to_device(a), dev.to_device(b), dev.alloc(a.nbytes)
    dev.launch(kernel, round_to_multiple(n, WORK_GROUP), WORK_GROUP, buf_a, buf_b, buf_c, np.uint32(n))
    out = np.empty_like(a)
    dev.download(buf_c, out)
    return returned(out)


def saxpy(alpha: float, x: np.ndarray, y: np.ndarray, *, device: Device | str | None = None) -> np.ndarray:
    """``alpha * x + y`` as a new array (seed 003); ``y`` is not modified."""
    dev, (x, y), returned = prepare(device, x, y)
    _same_vectors(x, y)
    kernel = dev.program("basics/saxpy.cl", {"T": c_type(x.dtype, dev)}).kernel("saxpy")
    n = x.size
    buf_x, buf_y = dev.to_device(x), dev.to_device(y)
    dev.launch(kernel, round_to_multiple(n, WORK_GROUP), WORK_GROUP, buf_x, buf_y, x.dtype.type(alpha), np.uint32(n))
    out = np.empty_like(y)
    dev.download(buf_y, out)
    return returned(out)


def work_item_mapping(
    kind: Mapping,
    size: int,
    per_item: int = 1,
    local_size: int | None = None,
    *,
    device: Device | str | None = None,
) -> np.ndarray:
    """For each of ``size`` elements, the global index of the work-item that owns it (seed 003).

    ``per_item`` elements go to each work-item and must divide ``size``; ``locally_spaced`` also
    needs a ``local_size`` dividing ``size // per_item``.
    """
    if kind not in MAPPINGS:
        raise ShapeError(f"unknown mapping {kind!r}; choose one of {MAPPINGS}")
    if per_item < 1 or size < 0 or size % per_item:
        raise ShapeError(f"{per_item} elements per work-item must divide the size {size}")
    if kind == "one_to_one" and per_item != 1:
        raise ShapeError("the one-to-one mapping gives each work-item exactly one element")
    items = size // per_item
    if kind == "locally_spaced" and (local_size is None or local_size < 1 or items % local_size):
        raise ShapeError(f"locally_spaced needs a local size dividing the {items} work-items")
    dev = select_device(device)
    kernel = dev.program("basics/mappings.cl").kernel(kind)
    owner = dev.alloc(size * 4)
    args = (owner,) if kind == "one_to_one" else (owner, np.uint32(per_item))
    dev.launch(kernel, items, local_size, *args)
    out = np.empty(size, dtype=np.uint32)
    dev.download(owner, out)
    return out
