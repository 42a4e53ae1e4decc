"""NumPy's matmul beyond two float matrices of one dtype: stacks of matrices broadcast against
each other, 1D operands, and every numeric dtype with NumPy's result type
(``kernels/matmul/batched.cl``).

``a @ b`` of shapes ``(..., m, k)`` and ``(..., k, n)`` is the stack of products over the
broadcast of the leading dimensions; a 1D ``a`` is a row (``(k,)`` as ``(1, k)``), a 1D ``b`` a
column, and the dimension they add is removed from the result. The elements of each product are
converted to the result type ``np.result_type(a, b)`` and added there: integers wrap around as
NumPy's do, bool products are true where any term is, complex products are complex. Unlike
NumPy, float16 products are added in float32 and rounded once.

Stacks of float32 or float64 matrices of one dtype, each large (at least
:data:`VARIANT_WORK` multiply-adds), or any stack when a ``variant`` is named, are multiplied one
product after another by the matmul variants; every other product runs on the batched kernel,
all of a stack in one launch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError, VariantError
from ..runtime import Device, c_type, round_to_multiple
from .operands import result_buffer, staged
from .segmented import RESULT_TYPES, input_spec

#: Element dtypes of matmul's operands.
MATMUL_TYPES = (np.dtype(np.bool_), *RESULT_TYPES)
#: batched.cl's A_KIND of a complex operand, read as a pair of parts
COMPLEX_KIND = 3
#: Multiply-adds of one product from which a stack of float matrices goes through the variants.
VARIANT_WORK = 1 << 18
#: The most work-groups along the stack (CUDA's limit on a grid's third dimension is 65535).
MOST_GROUPS = 4096


def result_type(a: Any, b: Any) -> np.dtype:
    """NumPy's result type of ``a @ b``; :class:`DTypeError` for an operand dtype not in
    :data:`MATMUL_TYPES`."""
    for operand in (a, b):
        if operand.dtype not in MATMUL_TYPES:
            names = ", ".join(str(d) for d in MATMUL_TYPES)
            raise DTypeError(f"matmul takes operands of {names} (native byte order), got {operand.dtype}")
    return np.result_type(a.dtype, b.dtype)


def shapes(a: Any, b: Any) -> tuple[tuple[int, ...], int, int, int, tuple[int, ...]]:
    """The broadcast stack's shape, m, k, n, and the result's shape; :class:`ShapeError` where
    NumPy's matmul refuses the shapes."""
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands need at least one dimension, got shapes {a.shape} and {b.shape}")
    a_shape = (1, *a.shape) if a.ndim == 1 else a.shape
    b_shape = (*b.shape, 1) if b.ndim == 1 else b.shape
    (m, k), (k2, n) = a_shape[-2:], b_shape[-2:]
    if k != k2:
        raise ShapeError(
            f"matmul: the last dimension of a ({k}) must match the second to last of b ({k2}); "
            f"shapes {a.shape} and {b.shape}"
        )
    try:
        stack = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise ShapeError(f"matmul: the stacks of shapes {a.shape} and {b.shape} do not broadcast") from None
    out = (*stack, *((m,) if a.ndim > 1 else ()), *((n,) if b.ndim > 1 else ()))
    return stack, m, k, n, out


def matmul_any(dev: Device, a: Any, b: Any, variant: str | None, params: dict[str, int]) -> Any:
    """``a @ b`` as NumPy's matmul computes it (see the module's docstring)."""
    dtype = result_type(a, b)
    stack, m, k, n, out_shape = shapes(a, b)
    if dtype.kind in "fc" and dtype != np.float16:
        c_type(np.dtype(f"f{dtype.itemsize // (2 if dtype.kind == 'c' else 1)}"), dev)  # refuses fp64 without it
    # like=: a device array (CuPy) stays one
    a3 = np.ascontiguousarray(a.reshape(1, -1) if a.ndim == 1 else a, like=a)
    b3 = np.ascontiguousarray(b.reshape(-1, 1) if b.ndim == 1 else b, like=b)
    products = int(np.prod(stack, dtype=np.int64))
    by_variants = a.dtype == b.dtype == dtype and dtype in (np.float32, np.float64)
    if variant is not None or params:
        if not by_variants:
            raise VariantError(
                f"matmul of {a.dtype} and {b.dtype} runs on the batched kernel, which takes no variant or parameters"
            )
    elif m * k * n < VARIANT_WORK:
        by_variants = False
    if by_variants:
        out = _one_by_one(dev, a3, b3, stack, (m, n), variant, params).reshape(out_shape)
    else:
        out = _batched(dev, a3, b3, dtype, stack, m, k, n, products).reshape(out_shape)
    return out[()] if isinstance(out, np.ndarray) and not out_shape else out  # a scalar, as NumPy gives


def _stack_offsets(shape: tuple[int, ...], stack: tuple[int, ...], size: int) -> np.ndarray:
    """The element where each product of the broadcast ``stack`` finds its matrix in an operand
    whose stack is ``shape``."""
    index = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64).reshape(shape)
    return np.ascontiguousarray(np.broadcast_to(index, stack).reshape(-1)) * np.uint64(size)


def _one_by_one(
    dev: Device, a: Any, b: Any, stack: tuple[int, ...], mn: tuple[int, int], variant: str | None, params: dict
) -> Any:
    from .matmuls import matmul

    out = np.empty((*stack, *mn), dtype=a.dtype, like=a)
    a_at = np.broadcast_to(np.arange(int(np.prod(a.shape[:-2], dtype=np.int64))).reshape(a.shape[:-2]), stack)
    b_at = np.broadcast_to(np.arange(int(np.prod(b.shape[:-2], dtype=np.int64))).reshape(b.shape[:-2]), stack)
    a_mats, b_mats = a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:])
    flat = out.reshape(-1, *mn)
    for p, (i, j) in enumerate(zip(a_at.reshape(-1), b_at.reshape(-1))):
        flat[p] = matmul(a_mats[i], b_mats[j], variant=variant, device=dev, **params)
    return out


def _compute_types(dtype: np.dtype) -> tuple[np.dtype, np.dtype]:
    """The dtype products are added in, and the dtype the kernel writes, for a result of ``dtype``."""
    if dtype.kind == "b":
        return np.dtype(np.uint32), np.dtype(np.uint8)
    if dtype.kind in "iu":
        unsigned = np.dtype(f"u{dtype.itemsize}")
        return unsigned, unsigned
    if dtype == np.float16:
        return np.dtype(np.float32), np.dtype(np.float32)
    if dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        return part, part
    return dtype, dtype


def stages_tiles(device: Device, work: int) -> bool:
    """Whether products of ``work`` multiply-adds stage tiles in local memory: on GPUs, and on
    CPUs (whose work-groups pay for every barrier) only large ones. PoCL, 2 cores: 1024
    products of 32 x 32 float32 took 33 ms unstaged, 77 ms staged; 512 x 512 int32 64 ms staged,
    160 ms not."""
    return device.type != "cpu" or work >= VARIANT_WORK


def _tile(device: Device, m: int, n: int) -> int:
    """The tile side: 16, or 8 for matrices no larger, or less where the device's work-groups are."""
    sides = device.info.max_work_item_sizes
    fits = [t for t in (16, 8, 4, 2, 1) if t * t <= device.info.max_work_group_size and t <= min(sides[:2])]
    return fits[1] if max(m, n) <= 8 and len(fits) > 1 else fits[0]


def _batched(
    dev: Device, a: Any, b: Any, dtype: np.dtype, stack: tuple[int, ...], m: int, k: int, n: int, products: int
) -> Any:
    compute, written = _compute_types(dtype)
    ta, a_kind = input_spec(a.dtype, dev, COMPLEX_KIND)
    tb, b_kind = input_spec(b.dtype, dev, COMPLEX_KIND)
    tile = _tile(dev, m, n)
    defines: dict[str, int | str] = {
        "T": c_type(compute, dev),
        "TA": ta,
        "TB": tb,
        "TC": c_type(written, dev),
        "A_KIND": a_kind,
        "B_KIND": b_kind,
        "COMPLEX": int(dtype.kind == "c"),
        "BOOLEAN": int(dtype.kind == "b"),
        "TILE": tile,
        "STAGED": int(stages_tiles(dev, m * k * n)),
    }
    target = np.dtype(np.float32) if dtype == np.float16 else dtype
    buffer, out = result_buffer(dev, a, shape=(*stack, m, n), dtype=target)
    if out.size:
        kernel = dev.program("matmul/batched.cl", defines).kernel("matmul_batched")
        a_offsets = dev.to_device(_stack_offsets(a.shape[:-2], stack, m * k))
        b_offsets = dev.to_device(_stack_offsets(b.shape[:-2], stack, k * n))
        groups = min(products, MOST_GROUPS)
        size = (round_to_multiple(n, tile), round_to_multiple(m, tile), groups)
        sizes = (np.uint32(m), np.uint32(k), np.uint32(n), np.uint32(products))
        dev.launch(kernel, size, (tile, tile, 1), staged(dev, a), staged(dev, b), buffer, a_offsets, b_offsets, *sizes)
        dev.download(buffer, out)
    return out if target == dtype else out.astype(dtype)
