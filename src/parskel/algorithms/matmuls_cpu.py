"""Matrix products shaped for CPU devices: packed panels and register-blocked tiles.

As in BLAS libraries, A and B are copied into panels in the order the product reads them
(kernels/matmul/packed_cpu.cl), then each work-group of one work-item computes one MR x NR tile
of C in vector registers: every step reads one row of a B panel and one column of an A panel,
both contiguous, and does MR * NV vector multiply-adds. Any shapes; float32 and float64.
"""

from __future__ import annotations

import numpy as np

from ..runtime import Device, c_type
from .matmuls import check_operands, trivial_product
from .operands import result_buffer, staged
from .registry import Param, Variant, register
from .scratch import scratch

#: Bytes of the vectors a tile is computed in: an AVX-512 register, a cache line.
VECTOR_BYTES = 64
PACK_K = 64


def run_packed(device: Device, a: np.ndarray, b: np.ndarray, *, MR: int, NV: int) -> np.ndarray:
    """``a @ b`` from packed panels, one MR x (NV vectors) tile of C per work-group."""
    check_operands(a, b)
    done = trivial_product(a, b)
    if done is not None:
        return done
    (m, k), n = a.shape, b.shape[1]
    width = VECTOR_BYTES // a.dtype.itemsize
    nr = NV * width
    defines: dict[str, int | str] = {"T": c_type(a.dtype, device), "MR": MR, "NV": NV, "VW": width, "PACK_K": PACK_K}
    program = device.program("matmul/packed_cpu.cl", defines)
    panels_m, panels_n = -(-m // MR), -(-n // nr)
    item = a.dtype.itemsize
    buf_a, buf_b = staged(device, a), staged(device, b)
    buf_c, out = result_buffer(device, a, (m, n))
    k_blocks = -(-k // PACK_K)
    um, un, uk = np.uint32(m), np.uint32(n), np.uint32(k)
    with scratch(device) as take:
        packed_a, packed_b = take(panels_m * MR * k * item), take(panels_n * nr * k * item)
        device.launch(program.kernel("pack_a"), (k_blocks, panels_m), None, buf_a, packed_a, um, uk)
        device.launch(program.kernel("pack_b"), (k_blocks, panels_n), None, buf_b, packed_b, un, uk)
        tiles = panels_m * panels_n
        device.launch(
            program.kernel("matmul_packed"), tiles, 1, packed_a, packed_b, buf_c, um, un, uk, np.uint32(panels_m)
        )
        device.download(buf_c, out)
    return out


register(
    Variant(
        family="matmul",
        name="packed_cpu",
        seed="beyond 000 §3: CPU-shaped",
        summary="A and B packed into panels, one MR x NV-vector tile of C in registers per work-item",
        run=run_packed,
        params=(
            Param("MR", 6, (1, 2, 4, 6, 8, 12, 14, 16), "rows of a tile"),
            Param("NV", 4, (1, 2, 3, 4), "vectors of 64 bytes across a tile"),
        ),
    )
)
