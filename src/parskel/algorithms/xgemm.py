"""Register-tiled matrix multiplication in the manner of CLBlast's xgemm (beside seed 000's).

Every tunable is a ``#define`` of ``kernels/matmul/xgemm.cl`` and a parameter here: the tile of
C a work-group computes (``MWG x NWG``), the step along K (``KWG``), the work-group's shape
(``MDIMC x NDIMC``), the vector width (``VW``), on CUDA ``MIN_GROUPS``, the work-groups
per compute unit the register budget is cut for, and ``ORDER``, the order of each step's
multiply-adds (the same sums; the registers the compiler gives them differ). ``xgemm`` and
``xgemm_small`` register two configurations (large tiles for large products on GPUs, small
ones for small products and CPUs). Operands whose sides are already multiples of the tiles
(and device arrays aligned to the vectors) are used as they are; others are copied into
zero-padded buffers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError, VariantError
from ..runtime import Buffer, Device, c_type, round_to_multiple
from ..runtime.traits import aligned
from .matmuls import FLOAT_TYPES, _prepare, _trimmed, trivial_product
from .registry import Param, Requirement, Variant, register


def _operand(device: Device, array: Any, padded: tuple[int, int], vector_bytes: int) -> Buffer:
    """A device buffer of ``array`` with ``padded`` sides: the array itself (a device array,
    aligned) or a plain copy where no padding is needed, a zero-padded copy otherwise."""
    if tuple(array.shape) != padded:
        return device.upload_padded(array, padded)
    if not isinstance(array, np.ndarray):
        buffer, _ = device.wrap(array)
        if aligned(buffer, vector_bytes):
            return buffer
    return device.to_device(array)


def run_xgemm(
    device: Device,
    a: Any,
    b: Any,
    *,
    MWG: int,
    NWG: int,
    KWG: int,
    MDIMC: int,
    NDIMC: int,
    VW: int,
    MIN_GROUPS: int,
    ORDER: int = 0,
) -> Any:
    """``a @ b`` with the register-tiled kernel; see the module's docstring."""
    ctype = _prepare(device, a, b)
    done = trivial_product(a, b)
    if done is not None:
        return done
    item = a.dtype.itemsize
    need = (2 * KWG * (MWG + VW) + 2 * KWG * NWG) * item
    if need > device.info.local_mem_bytes:
        raise VariantError(
            f"matmul/xgemm needs {need} bytes of local memory for {a.dtype} tiles; "
            f"{device.id} has {device.info.local_mem_bytes} (try smaller MWG, NWG or KWG)"
        )
    (m, k), n = a.shape, b.shape[1]
    mp, kp, np_ = round_to_multiple(m, MWG), round_to_multiple(k, KWG), round_to_multiple(n, NWG)
    vector_bytes = VW * item
    buf_a = _operand(device, a, (mp, kp), vector_bytes)
    buf_b = _operand(device, b, (kp, np_), vector_bytes)
    direct = (mp, np_) == (m, n)
    out = None
    if direct and not isinstance(a, np.ndarray):
        out = np.empty((m, n), dtype=a.dtype, like=a)  # a new device array, written in place
        buf_c, _ = device.wrap(out)
        if not aligned(buf_c, vector_bytes):
            out, buf_c = None, device.alloc(mp * np_ * item)
    else:
        buf_c = device.alloc(mp * np_ * item)
    params = {"MWG": MWG, "NWG": NWG, "KWG": KWG, "MDIMC": MDIMC, "NDIMC": NDIMC, "VW": VW}
    _enqueue(device, buf_a, buf_b, buf_c, (mp, kp, np_), ctype, params | {"MIN_GROUPS": MIN_GROUPS, "ORDER": ORDER})
    if out is not None:
        return out
    return _trimmed(device, buf_c, (mp, np_), (m, n), a)


def xgemm_buffers(
    device: Device, a: Buffer, b: Buffer, c: Buffer, sides: tuple[int, int, int], dtype: Any, **params: int
) -> None:
    """Enqueue ``c = a @ b`` on device buffers of row-major matrices whose ``sides`` ``(m, k,
    n)`` are whole tiles (as :func:`~parskel.algorithms.matmuls.padded_product` pads them): ``a``
    of ``m x k``, ``b`` of ``k x n``, ``c`` of ``m x n``, all of ``dtype`` (float32 or float64),
    with the kernel's parameters as :func:`run_xgemm` takes them (``MIN_GROUPS`` and ``ORDER``
    may be left out): what that function launches once its operands are on the device. Does
    not wait.

    >>> from parskel.algorithms.matmuls import padded_product
    >>> dev, p = ps.device(), {"MWG": 16, "NWG": 16, "KWG": 4, "MDIMC": 4, "NDIMC": 4, "VW": 1}
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> sides, left, right, c = padded_product(dev, a, a.T.copy(), (16, 4, 16))
    >>> xgemm_buffers(dev, left, right, c, sides, np.float32, **p)
    >>> out = np.empty((2, 2), np.float32)
    >>> _ = dev.download_trimmed(c, (sides[0], sides[2]), out)
    >>> out
    array([[ 5., 14.],
           [14., 50.]], dtype=float32)
    """
    m, k, n = sides
    if np.dtype(dtype) not in FLOAT_TYPES:
        raise DTypeError(f"matmul/xgemm multiplies float32 or float64 matrices, not {np.dtype(dtype)}")
    if (m % params["MWG"], k % params["KWG"], n % params["NWG"]) != (0, 0, 0):
        raise ShapeError(f"matmul/xgemm takes sides in whole tiles, not {sides}: pad the operands (padded_product)")
    item = np.dtype(dtype).itemsize
    for name, buffer, rows, cols in (("a", a, m, k), ("b", b, k, n), ("c", c, m, n)):
        if buffer.nbytes < rows * cols * item:
            raise ShapeError(f"matmul/xgemm: {name} holds {buffer.nbytes} bytes, fewer than {rows} x {cols} elements")
    _enqueue(device, a, b, c, sides, c_type(np.dtype(dtype), device), params)


def _enqueue(
    device: Device, a: Buffer, b: Buffer, c: Buffer, sides: tuple[int, int, int], ctype: str, params: Mapping[str, int]
) -> None:
    """The launch of :func:`run_xgemm` and :func:`xgemm_buffers` on checked operands: the
    kernel for C type ``ctype`` and the tile ``params`` (``MIN_GROUPS`` 1 and ``ORDER`` 0 where
    left out)."""
    m, k, n = sides
    defines: dict[str, int | str] = {"T": ctype}
    defines.update({name: params[name] for name in ("MWG", "NWG", "KWG", "MDIMC", "NDIMC", "VW")})
    defines.update(MIN_GROUPS=params.get("MIN_GROUPS", 1), ORDER=params.get("ORDER", 0))
    kernel = device.program("matmul/xgemm.cl", defines).kernel("xgemm")
    mdimc, ndimc = params["MDIMC"], params["NDIMC"]
    grid = (n // params["NWG"] * ndimc, m // params["MWG"] * mdimc)
    device.launch(kernel, grid, (ndimc, mdimc), a, b, c, np.uint32(m), np.uint32(n), np.uint32(k))


def _valid(p: Mapping[str, int]) -> bool:
    threads = p["MDIMC"] * p["NDIMC"]
    vw = p["VW"]
    return (
        p["MWG"] % (p["MDIMC"] * vw) == 0
        and p["NWG"] % (p["NDIMC"] * vw) == 0
        and p["KWG"] % vw == 0
        and (p["MWG"] * p["KWG"] // vw) % threads == 0
        and (p["KWG"] * p["NWG"] // vw) % threads == 0
    )


def _params(
    mwg: int, nwg: int, kwg: int, mdimc: int, ndimc: int, vw: int, min_groups: int, order: int = 0
) -> tuple[Param, ...]:
    tiles = (16, 32, 64, 128, 256)
    return (
        Param("MWG", mwg, tiles, "rows of C per work-group"),
        Param("NWG", nwg, tiles, "columns of C per work-group"),
        Param("KWG", kwg, (4, 8, 16, 32, 64), "step along K (the depth of the local tiles)"),
        Param("MDIMC", mdimc, (4, 8, 16, 32), "work-items along M"),
        Param("NDIMC", ndimc, (4, 8, 16, 32), "work-items along N"),
        Param("VW", vw, (1, 2, 4, 8), "vector width of loads, local reads and stores"),
        Param("MIN_GROUPS", min_groups, (1, 2, 3, 4), "CUDA: work-groups per compute unit (caps registers)"),
        Param("ORDER", order, (0, 1, 2), "order of a step's multiply-adds: rows, column vectors, rows snaking"),
    )


_REQUIRES = (
    Requirement("the tiles divide into work-items and vectors", lambda dev, p: _valid(p)),
    Requirement(
        "MDIMC x NDIMC work-items in a work-group",
        lambda dev, p: (
            p["MDIMC"] * p["NDIMC"] <= dev.info.max_work_group_size
            and p["NDIMC"] <= dev.info.max_work_item_sizes[0]
            and p["MDIMC"] <= dev.info.max_work_item_sizes[1]
        ),
    ),
    Requirement(
        "local memory for two steps of both tiles in the operands' type",
        lambda dev, p: (
            (2 * p["KWG"] * (p["MWG"] + p["VW"]) + 2 * p["KWG"] * p["NWG"]) * p.get("itemsize", 4)
            <= dev.info.local_mem_bytes
        ),
    ),
)

register(
    Variant(
        family="matmul",
        name="xgemm",
        seed="beyond 000 §3",
        summary="register tiles (CLBlast's xgemm): 128 x 128 of C per group, 8 x 8 per work-item, float4, prefetch",
        run=run_xgemm,
        # KWG 8: 0.90x cuBLAS at 8192 on H100 and H200 where 16 gave 0.85x (docs/benchmarks.md)
        params=_params(128, 128, 8, 16, 16, 4, 2),
        requires=_REQUIRES,
    )
)
register(
    Variant(
        family="matmul",
        name="xgemm_small",
        seed="beyond 000 §3",
        summary="register tiles (CLBlast's xgemm): 64 x 64 of C per group, 4 x 4 per work-item, float4",
        run=run_xgemm,
        params=_params(64, 64, 16, 16, 16, 4, 4),
        requires=_REQUIRES,
    )
)
