"""Matrix multiplication in seed 000's four variants (chapter 3): naive, tiles, blocks, blocks_tiles.

Every variant computes ``a @ b`` for a row-major ``m x k`` and ``k x n`` pair of float32 (or,
where the device has it, float64) matrices of any size. The padded variants copy the inputs into
zeroed buffers whose sides are multiples of their tile or block (the seed's rectangular copy), so
that their kernels need no bounds checks, and read the ``m x n`` corner of the result back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError, VariantError
from ..runtime import Buffer, Device, c_type, round_to_multiple
from . import registry
from .batched import matmul_any
from .operands import prepare
from .recall import MISSED, Recall, call_key, recording, rerun, runs_on
from .registry import Param, Requirement, Variant, register

FLOAT_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def check_operands(a: np.ndarray, b: np.ndarray) -> None:
    """Raise :class:`ShapeError` or :class:`DTypeError` unless ``a @ b`` is a product we compute."""
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"matmul takes two 2D matrices, got shapes {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ShapeError(
            f"matmul: the columns of a ({a.shape[1]}) must match the rows of b ({b.shape[0]}); "
            f"shapes {a.shape} and {b.shape}"
        )
    if a.dtype != b.dtype or a.dtype not in FLOAT_TYPES:
        raise DTypeError(
            f"matmul takes two float32 or two float64 matrices, got {a.dtype} and {b.dtype}; convert them with astype"
        )


def _prepare(device: Device, a: np.ndarray, b: np.ndarray) -> str:
    """Validate the operands for ``device``; the C element type of the kernels."""
    check_operands(a, b)
    return c_type(a.dtype, device)


def _check_local(device: Device, variant: str, elements: int, dtype: np.dtype) -> None:
    """Refuse, before any upload, tiles that do not fit the device's local memory in ``dtype``."""
    need = elements * dtype.itemsize
    if need > device.info.local_mem_bytes:
        raise VariantError(
            f"matmul/{variant} needs {need} bytes of local memory for {dtype} tiles; "
            f"{device.id} has {device.info.local_mem_bytes} (try smaller TILE or WIDTH)"
        )


def trivial_product(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The product when there is nothing to compute (an empty side, or an empty shared one)."""
    (m, k), n = a.shape, b.shape[1]
    if m == 0 or n == 0 or k == 0:
        return np.zeros((m, n), dtype=a.dtype, like=a)
    return None


def padded_product(
    device: Device,
    a: np.ndarray,
    b: np.ndarray,
    multiples: tuple[int, int, int],
) -> tuple[tuple[int, int, int], Buffer, Buffer, Buffer]:
    """Upload ``a`` and ``b`` zero-padded to sides that are ``multiples`` of (m, k, n).

    Returns the padded sides and the buffers of A, B and the (padded) result, which
    :meth:`~parskel.runtime.Device.download_trimmed` reads back.
    """
    (m, k), n = a.shape, b.shape[1]
    mp, kp, np_ = (round_to_multiple(x, step) for x, step in zip((m, k, n), multiples))
    buf_a = device.upload_padded(a, (mp, kp))
    buf_b = device.upload_padded(b, (kp, np_))
    buf_c = device.alloc(mp * np_ * a.dtype.itemsize)
    return (mp, kp, np_), buf_a, buf_b, buf_c


def _trimmed(
    device: Device, buf_c: Buffer, padded: tuple[int, int], shape: tuple[int, int], like: np.ndarray
) -> np.ndarray:
    """The top-left ``shape`` of the padded result, in a new array of the kind of ``like``."""
    dtype = like.dtype
    out = np.empty(shape, dtype=dtype, like=like)
    device.download_trimmed(buf_c, padded, out)
    return out


# variants ---------------------------------------------------------------------------------


def run_naive(device: Device, a: np.ndarray, b: np.ndarray, *, GROUP: int = 16) -> np.ndarray:
    """Seed 000 §3.2: one element of C per work-item; no padding, a bounds check instead."""
    ctype = _prepare(device, a, b)
    done = trivial_product(a, b)
    if done is not None:
        return done
    (m, k), n = a.shape, b.shape[1]
    kernel = device.program("matmul/naive.cl", {"T": ctype}).kernel("matmul_naive")
    buf_a, buf_b = device.to_device(a), device.to_device(b)
    buf_c = device.alloc(m * n * a.dtype.itemsize)
    device.launch(
        kernel,
        (round_to_multiple(n, GROUP), round_to_multiple(m, GROUP)),
        (GROUP, GROUP),
        buf_a,
        buf_b,
        buf_c,
        np.uint32(m),
        np.uint32(k),
        np.uint32(n),
    )
    out = np.empty((m, n), dtype=a.dtype, like=a)
    device.download(buf_c, out)
    return out


def run_tiles(device: Device, a: np.ndarray, b: np.ndarray, *, TILE: int = 16) -> np.ndarray:
    """Seed 000 §3.3: TILE x TILE tiles of A and B staged in local memory."""
    ctype = _prepare(device, a, b)
    done = trivial_product(a, b)
    if done is not None:
        return done
    _check_local(device, "tiles", _tiles_elements(TILE), a.dtype)
    kernel = device.program("matmul/tiles.cl", {"T": ctype, "TILE": TILE}).kernel("matmul_tiles")
    (mp, kp, np_), buf_a, buf_b, buf_c = padded_product(device, a, b, (TILE, TILE, TILE))
    device.launch(kernel, (np_, mp), (TILE, TILE), buf_a, buf_b, buf_c, np.uint32(kp), np.uint32(np_))
    return _trimmed(device, buf_c, (mp, np_), (a.shape[0], b.shape[1]), a)


def run_blocks(device: Device, a: np.ndarray, b: np.ndarray, *, WIDTH: int = 4, GROUP: int = 16) -> np.ndarray:
    """Seed 000 §3.4: a WIDTH x WIDTH block of C per work-item, from vector loads."""
    ctype = _prepare(device, a, b)
    done = trivial_product(a, b)
    if done is not None:
        return done
    kernel = device.program("matmul/blocks.cl", {"T": ctype, "WIDTH": WIDTH}).kernel("matmul_blocks")
    # As in the seed (Listing 8): the matrices are padded to whole blocks only, and the
    # range of blocks is rounded up to whole work-groups behind a bounds check.
    (mp, kp, np_), buf_a, buf_b, buf_c = padded_product(device, a, b, (WIDTH, WIDTH, WIDTH))
    rows, cols = mp // WIDTH, np_ // WIDTH
    device.launch(
        kernel,
        (round_to_multiple(cols, GROUP), round_to_multiple(rows, GROUP)),
        (GROUP, GROUP),
        buf_a,
        buf_b,
        buf_c,
        np.uint32(rows),
        np.uint32(kp // WIDTH),
        np.uint32(cols),
    )
    return _trimmed(device, buf_c, (mp, np_), (a.shape[0], b.shape[1]), a)


def run_blocks_tiles(device: Device, a: np.ndarray, b: np.ndarray, *, TILE: int = 16, WIDTH: int = 4) -> np.ndarray:
    """Seed 000 §3.5: tiles of TILE x TILE blocks (of WIDTH x WIDTH) in local memory."""
    ctype = _prepare(device, a, b)
    done = trivial_product(a, b)
    if done is not None:
        return done
    _check_local(device, "blocks_tiles", _blocks_tiles_elements(TILE, WIDTH), a.dtype)
    defines: dict[str, int | str] = {"T": ctype, "TILE": TILE, "WIDTH": WIDTH}
    kernel = device.program("matmul/blocks_tiles.cl", defines).kernel("matmul_blocks_tiles")
    side = TILE * WIDTH
    (mp, kp, np_), buf_a, buf_b, buf_c = padded_product(device, a, b, (side, side, side))
    device.launch(
        kernel,
        (np_ // WIDTH, mp // WIDTH),
        (TILE, TILE),
        buf_a,
        buf_b,
        buf_c,
        np.uint32(kp // WIDTH),
        np.uint32(np_ // WIDTH),
    )
    return _trimmed(device, buf_c, (mp, np_), (a.shape[0], b.shape[1]), a)


# requirements -----------------------------------------------------------------------------


def _group_fits(name: str) -> Requirement:
    def test(device: Device, p: Mapping[str, int]) -> bool:
        side = p[name]
        sizes = device.info.max_work_item_sizes
        return side * side <= device.info.max_work_group_size and all(side <= s for s in sizes[:2])

    return Requirement(f"work-groups of {name} x {name} work-items", test)


def _tiles_elements(tile: int) -> int:
    return 2 * tile * tile


def _blocks_tiles_elements(tile: int, width: int) -> int:
    return 2 * (tile * width) ** 2


def _local_fits(text: str, elements: Callable[[Mapping[str, int]], int]) -> Requirement:
    """Local memory for the tiles in the operands' element type (float32 unless told)."""
    return Requirement(text, lambda device, p: elements(p) * p.get("itemsize", 4) <= device.info.local_mem_bytes)


register(
    Variant(
        family="matmul",
        name="naive",
        seed="000 §3.2",
        summary="one element of C per work-item, straight from global memory",
        run=run_naive,
        params=(Param("GROUP", 16, (4, 8, 16, 32), "work-group side (GROUP x GROUP work-items)"),),
        requires=(_group_fits("GROUP"),),
    )
)

register(
    Variant(
        family="matmul",
        name="tiles",
        seed="000 §3.3",
        summary="TILE x TILE tiles of A and B cached in local memory; inputs padded to the tile",
        run=run_tiles,
        params=(Param("TILE", 16, (4, 8, 16, 32), "tile side, also the work-group side"),),
        requires=(
            _group_fits("TILE"),
            _local_fits("local memory for two TILE x TILE tiles", lambda p: _tiles_elements(p["TILE"])),
        ),
    )
)

register(
    Variant(
        family="matmul",
        name="blocks",
        seed="000 §3.4",
        summary="a WIDTH x WIDTH block of C per work-item from vector loads, no local memory",
        run=run_blocks,
        params=(
            Param("WIDTH", 4, (2, 4, 8, 16), "block side, an OpenCL vector width"),
            Param("GROUP", 16, (4, 8, 16), "work-group side (GROUP x GROUP work-items)"),
        ),
        requires=(_group_fits("GROUP"),),
    )
)

register(
    Variant(
        family="matmul",
        name="blocks_tiles",
        seed="000 §3.5",
        summary="tiles of TILE x TILE vector blocks cached in local memory; inputs padded to TILE * WIDTH",
        run=run_blocks_tiles,
        params=(
            Param("TILE", 16, (4, 8, 16), "tile side in blocks, also the work-group side"),
            Param("WIDTH", 4, (2, 4, 8), "block side, an OpenCL vector width"),
        ),
        requires=(
            _group_fits("TILE"),
            _local_fits(
                "local memory for two (TILE * WIDTH)^2 tiles",
                lambda p: _blocks_tiles_elements(p["TILE"], p["WIDTH"]),
            ),
        ),
    )
)


def matmul(
    a: np.ndarray,
    b: np.ndarray,
    *,
    variant: str | None = None,
    device: Device | str | None = None,
    max_device_memory: int | str | None = None,
    **params: int,
) -> np.ndarray:
    """``a @ b`` on a device, as ``np.matmul``: matrices, stacks of them and vectors.

    Two float32 (or float64) matrices of shapes ``m x k`` and ``k x n`` go to the variants:
    ``variant`` picks one of :func:`parskel.algorithms.variants("matmul")`; by default the
    fastest known for the device runs, and one that cannot run there gives way to the next.
    ``params`` are the variant's tunables (``TILE=8``, ``WIDTH=8``). The inputs are not modified.
    CUDA device arrays (CuPy, PyTorch) stay on their GPU: see :mod:`parskel.algorithms.operands`.
    NumPy matrices larger than the device's memory, or than ``max_device_memory`` (see
    :func:`parskel.max_device_memory`), are multiplied in tiles; on a GPU large ones go through
    pinned memory (see :mod:`parskel.algorithms.pipelined`).

    Stacks of matrices (``(..., m, k) @ (..., k, n)``, broadcast), 1D operands, and operands of
    any numeric dtype (bool, integers, float16, complex; mixed, with NumPy's result type) run as
    :mod:`parskel.algorithms.batched` says; unlike NumPy, float16 products are added in float32.

    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> ps.matmul(a, a.T, variant="blocks", WIDTH=4)
    array([[ 5., 14.],
           [14., 50.]], dtype=float32)
    >>> ps.matmul(np.arange(12, dtype=np.int64).reshape(2, 2, 3), np.arange(3, dtype=np.int8))
    array([[ 5, 14],
           [23, 32]])
    """
    key = call_key([a, b], (variant, device, max_device_memory), params)
    done = _RECALL.replayed(key, a, b)  # CuPy matrices of a signature seen before: what that call ran
    if done is not MISSED:
        return done
    dev, (a, b), returned = prepare(device, a, b)
    if not (a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype and a.dtype in FLOAT_TYPES):
        return returned(matmul_any(dev, a, b, variant, params))
    check_operands(a, b)
    c_type(a.dtype, dev)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):  # through pinned memory, or in tiles, where that pays
        from .pipelined import matmul as in_tiles

        done = in_tiles(dev, np.ascontiguousarray(a), np.ascontiguousarray(b), variant, params, max_device_memory)
        if done is not None:
            return done
    ran: list[tuple[Variant, dict[str, int]]] = []
    run = recording(lambda v, p: v.run(dev, a, b, **p), ran)
    result = registry.dispatch("matmul", dev, variant, params, run, dispatch_context(a, b))
    if key is not None and ran and runs_on(dev):
        _RECALL.keep(key, rerun(dev, *ran[-1]))
    return returned(result)


_RECALL = Recall()


def dispatch_context(a: Any, b: Any) -> dict[str, int]:
    """What the dispatch of the product ``a @ b`` knows of it: the element size, and the size
    the tuning database is asked for, the edge of the cube of as many multiply-adds.

    >>> dispatch_context(np.ones((256, 2048), np.float32), np.ones((2048, 2048), np.float32))
    {'itemsize': 4, 'size': 1024}
    """
    return {"itemsize": a.dtype.itemsize, "size": round((a.shape[0] * a.shape[1] * b.shape[1]) ** (1 / 3))}
