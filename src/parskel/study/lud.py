"""lud: blocked LU decomposition without pivoting (seed 002 §6.1), two studies in one application.

At each block step of BS rows, three kernels run: ``lud_diagonal`` factors the diagonal block,
``lud_perimeter`` solves the row and column strips beside it, ``lud_internal`` updates the
trailing matrix. The study of the perimeter kernel (§6.1.1) varies it and times it alone, the
other two in their baseline form; the study of the internal kernel (§6.1.2) does the same for
the internal kernel. The block size is the program's, so the ``geometry`` variants run every
kernel with BS 32 (or 64).

Inputs are diagonally dominant float32 matrices (no pivoting needed); a size that is not a
multiple of BS is padded with the identity, whose LU is itself, and the result trimmed. The
result, L below the diagonal (unit diagonal implied) and U on and above it, is checked by
multiplying L and U back together against the input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..algorithms.registry import Param, Requirement, Variant
from ..bench.cases import Case
from ..errors import ShapeError
from ..runtime import Device, round_to_multiple
from .base import COMBINED, Study, add, local_memory, work_group

PERIMETER = "study.lud_perimeter"
INTERNAL = "study.lud_internal"
_FLOAT = 4
# float32's unit roundoff: a computed LU satisfies |LU - A| <= n u |L||U| element by element
# (Higham, Accuracy and Stability of Numerical Algorithms, Theorem 9.3); twice that is our bound
_U = 2.0**-24
_ROWS = 256  # rows of the matrix per block of the check


@dataclass(frozen=True)
class Kernel:
    """One kernel of the decomposition as a variant builds it: file, defines, work-group shape."""

    path: str
    defines: Mapping[str, int]
    local: tuple[int, ...]


def perimeter_plain(bs: int, unroll: int = 0) -> Kernel:
    return Kernel("study/lud/perimeter.cl", {"BS": bs, "UNROLL": unroll}, (2 * bs,))


def perimeter_coarse(bs: int, coarsen: int, vector: bool, unroll: int = 1) -> Kernel:
    defines = {"BS": bs, "COARSEN": coarsen, "VECTOR": int(vector), "UNROLL": unroll}
    return Kernel("study/lud/perimeter_coarse.cl", defines, (2 * bs // coarsen,))


def internal_plain(bs: int, unroll: int = 1) -> Kernel:
    return Kernel("study/lud/internal.cl", {"BS": bs, "UNROLL": unroll}, (bs, bs))


def internal_coarse(bs: int, rows: int, cols: int, unroll: int = 1) -> Kernel:
    defines = {"BS": bs, "ROWS": rows, "COLS": cols, "UNROLL": unroll}
    return Kernel("study/lud/internal_coarse.cl", defines, (bs // cols, bs // rows))


def internal_transposed(bs: int, width: int) -> Kernel:
    return Kernel("study/lud/internal_transposed.cl", {"BS": bs, "WIDTH": width}, (bs, bs))


def decompose(device: Device, a: np.ndarray, bs: int, perimeter: Kernel, internal: Kernel) -> np.ndarray:
    """L and U of the square float32 matrix ``a`` in one matrix, factored on ``device`` in
    blocks of ``bs`` with the given perimeter and internal kernels. ``a`` is not modified."""
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.dtype != np.float32:
        raise ShapeError(f"lud takes a square float32 matrix, got {a.dtype} of shape {a.shape}")
    n = a.shape[0]
    if n == 0:
        return a.copy()
    size = round_to_multiple(n, bs)
    padded = a
    if size != n:
        padded = np.eye(size, dtype=np.float32)
        padded[:n, :n] = a
    diagonal = device.program("study/lud/diagonal.cl", {"BS": bs}).kernel("lud_diagonal")
    peri = device.program(perimeter.path, dict(perimeter.defines)).kernel("lud_perimeter")
    inner = device.program(internal.path, dict(internal.defines)).kernel("lud_internal")
    buffer = device.to_device(padded)
    stride = np.uint32(size)
    for offset in range(0, size, bs):
        rest = (size - offset) // bs - 1  # blocks right of (and below) the diagonal block
        at = np.uint32(offset)
        device.launch(diagonal, bs, bs, buffer, stride, at)
        if rest:
            device.launch(peri, rest * perimeter.local[0], perimeter.local, buffer, stride, at)
            grid = (rest * internal.local[0], rest * internal.local[1])
            device.launch(inner, grid, internal.local, buffer, stride, at)
    out = np.empty((size, size), dtype=np.float32)
    device.download(buffer, out)
    return out if size == n else out[:n, :n].copy()


# the check ------------------------------------------------------------------------------------


def check(result: np.ndarray, a: np.ndarray) -> str | None:
    """None when ``result`` holds an LU factorization of ``a`` to float32 accuracy.

    Sampled rows of L U (the first, the last, and some between) are compared with ``a`` element
    by element, and every row through a product with a random vector x (Freivalds' check: L U x
    against A x), each against the backward-error bound 2 n u |L||U| of the product. It is one
    float64 pass over the matrix in blocks of rows, O(n^2).
    """
    n = a.shape[0]
    if result.shape != a.shape:
        return f"shape {result.shape}, expected {a.shape}"
    if not np.isfinite(result).all():
        return f"{int(np.count_nonzero(~np.isfinite(result)))} values are not finite"
    if n == 0:
        return None
    tol = 2.0 * n * _U
    rows = np.unique(np.linspace(0, n - 1, min(n, 8)).astype(np.int64))
    lower = np.where(np.arange(n) < rows[:, None], result[rows], 0.0)  # L's sampled rows
    lower[np.arange(rows.size), rows] = 1.0
    product, product_bound = np.zeros((rows.size, n)), np.zeros((rows.size, n))
    x = np.random.default_rng(7).standard_normal(n)
    ux, ux_bound = np.empty(n), np.empty(n)  # U x and |U||x|
    error, bound = np.empty(n), np.empty(n)  # |L U x - A x| and its bound, per row
    for start in range(0, n, _ROWS):
        stop = min(n, start + _ROWS)
        block = result[start:stop].astype(np.float64)
        upper = np.triu(block, start)  # U's rows start ... stop - 1
        ux[start:stop], ux_bound[start:stop] = upper @ x, np.abs(upper) @ np.abs(x)
        product += lower[:, start:stop] @ upper
        product_bound += np.abs(lower[:, start:stop]) @ np.abs(upper)
        strict = np.tril(block[:, :stop], start - 1)  # L's rows, unit diagonal left out; needs U x up to here
        lux = strict @ ux[:stop] + ux[start:stop]
        error[start:stop] = np.abs(lux - a[start:stop].astype(np.float64) @ x)
        bound[start:stop] = tol * (np.abs(strict) @ ux_bound[:stop] + ux_bound[start:stop])
    wrong = np.argwhere(np.abs(product - a[rows]) > tol * product_bound)
    if wrong.size:
        i, j = wrong[0]
        off = abs(product[i, j] - a[rows[i], j])
        return f"(L U)[{rows[i]}, {j}] is off by {off:.3g}, more than {tol * product_bound[i, j]:.3g}"
    bad = np.flatnonzero(error > bound)
    if bad.size:
        i = int(bad[0])
        return f"(L U x)[{i}] is off by {error[i]:.3g}, more than {bound[i]:.3g}: {bad.size} rows wrong"
    return None


def make(n: int, rng: np.random.Generator) -> tuple[np.ndarray]:
    """A random n x n float32 matrix in [0, 1) plus n on the diagonal: diagonally dominant."""
    a = rng.random((n, n), dtype=np.float32)
    a[np.diag_indices(n)] += np.float32(n)
    return (a,)


def _case(family: str, summary: str) -> Case:
    return Case(
        family=family,
        summary=summary,
        metric="GFLOP/s (whole LU, end to end)",
        scale=1e9,
        work=lambda n: 2.0 / 3.0 * n**3,
        make=make,
        reference=lambda inputs: inputs[0],
        check=check,
        quick_sizes=(256, 512),
        full_sizes=(4096, 8192),
        size_label="matrix edge",
    )


def _footprint(n: int) -> tuple[int, int]:
    size = round_to_multiple(max(n, 1), 64) ** 2 * _FLOAT
    return size, size


# variants -------------------------------------------------------------------------------------


def run_baseline(device: Device, a: np.ndarray) -> np.ndarray:
    """Seed 002 §6.1.1.2 and §6.1.2.2: BS 16, the kernels as the seed lists them."""
    return decompose(device, a, 16, perimeter_plain(16), internal_plain(16))


def run_geometry(device: Device, a: np.ndarray, *, BS: int = 32) -> np.ndarray:
    """Seed 002 §6.1.1.3 (1b) and §6.1.2.3 (1b): every kernel with BS x BS blocks."""
    return decompose(device, a, BS, perimeter_plain(BS), internal_plain(BS))


def run_perimeter_granularity(device: Device, a: np.ndarray, *, COARSEN: int = 2) -> np.ndarray:
    return decompose(device, a, 16, perimeter_coarse(16, COARSEN, False), internal_plain(16))


def run_perimeter_vectorization(device: Device, a: np.ndarray, *, COARSEN: int = 4) -> np.ndarray:
    return decompose(device, a, 16, perimeter_coarse(16, COARSEN, True), internal_plain(16))


def run_perimeter_unrolling(device: Device, a: np.ndarray, *, UNROLL: int = 1) -> np.ndarray:
    return decompose(device, a, 16, perimeter_plain(16, UNROLL), internal_plain(16))


def run_perimeter_combined(
    device: Device, a: np.ndarray, *, BS: int = 16, COARSEN: int = 4, VECTOR: int = 1, UNROLL: int = 1
) -> np.ndarray:
    """The perimeter kernel's optimizations at once: BS x BS blocks, COARSEN columns (rows) per
    work-item, held as one vector when VECTOR is 1, the loop over earlier rows unrolled by
    UNROLL; the space the tuner searches for a device. The other kernels keep 16 x 16
    work-groups (the internal one updates (BS / 16)^2 elements per work-item), so that every
    block edge runs wherever the perimeter kernel does."""
    side = BS // 16
    return decompose(
        device, a, BS, perimeter_coarse(BS, COARSEN, bool(VECTOR), UNROLL), internal_coarse(BS, side, side)
    )


def run_internal_strided(device: Device, a: np.ndarray, *, COARSEN: int = 2) -> np.ndarray:
    return decompose(device, a, 16, perimeter_plain(16), internal_coarse(16, 1, COARSEN))


def run_internal_adjacent(device: Device, a: np.ndarray, *, COARSEN: int = 2) -> np.ndarray:
    return decompose(device, a, 16, perimeter_plain(16), internal_coarse(16, COARSEN, 1))


def run_internal_transposed(device: Device, a: np.ndarray) -> np.ndarray:
    return decompose(device, a, 16, perimeter_plain(16), internal_transposed(16, 1))


def run_internal_vectorization(device: Device, a: np.ndarray, *, WIDTH: int = 4) -> np.ndarray:
    return decompose(device, a, 16, perimeter_plain(16), internal_transposed(16, WIDTH))


def run_internal_unrolling(device: Device, a: np.ndarray, *, UNROLL: int = 2) -> np.ndarray:
    return decompose(device, a, 16, perimeter_plain(16), internal_plain(16, UNROLL))


def run_internal_blocked(
    device: Device, a: np.ndarray, *, BS: int = 32, ROWS: int = 2, COLS: int = 2, UNROLL: int = 1
) -> np.ndarray:
    """The internal kernel's optimizations at once: BS x BS blocks, each work-item updating
    ROWS adjacent rows and COLS strided columns, the inner product unrolled by UNROLL; the
    space the tuner searches for a device."""
    return decompose(device, a, BS, perimeter_plain(BS), internal_coarse(BS, ROWS, COLS, UNROLL))


def _vectors(device: Device, p: Mapping[str, int]) -> bool:
    return not p["VECTOR"] or p["COARSEN"] >= 2


_BLOCKS = Param("BS", 32, (32, 64), "block edge of every kernel (the baseline's is 16)")
_BLOCK_NEEDS = (
    work_group("work-groups of BS x BS work-items (the internal kernel)", lambda p: p["BS"] ** 2),
    local_memory("local memory for three BS x BS float blocks (the perimeter kernel)", lambda p: 3 * p["BS"] ** 2 * 4),
)

add(
    Study(
        name="lud_perimeter",
        application="lud",
        section="6.1.1",
        timed=("lud_perimeter",),
        case=_case(PERIMETER, "blocked LU of a diagonally dominant float32 matrix; the perimeter kernel timed"),
        footprint=_footprint,
    ),
    [
        Variant(PERIMETER, "baseline", "002 §6.1.1.2", "2 BS work-items per block pair, BS 16", run_baseline),
        Variant(
            PERIMETER,
            "granularity",
            "002 §6.1.1.3 (1a)",
            "each work-item solves COARSEN adjacent columns (rows, stored transposed)",
            run_perimeter_granularity,
            params=(Param("COARSEN", 2, (2, 4, 8, 16), "columns or rows per work-item"),),
        ),
        Variant(
            PERIMETER,
            "geometry",
            "002 §6.1.1.3 (1b)",
            "BS x BS blocks instead of 16 x 16, in every kernel",
            run_geometry,
            params=(_BLOCKS,),
            requires=_BLOCK_NEEDS,
        ),
        Variant(
            PERIMETER,
            "vectorization",
            "002 §6.1.1.3 (2)",
            "granularity COARSEN with the values held as one floatCOARSEN vector",
            run_perimeter_vectorization,
            params=(Param("COARSEN", 4, (2, 4, 8, 16), "vector width and columns per work-item"),),
        ),
        Variant(
            PERIMETER,
            "unrolling",
            "002 §6.1.1.3 (3)",
            "case 1: outer loops unrolled, inner by 2; case 2: all solve loops unrolled; case 3: loads too",
            run_perimeter_unrolling,
            params=(Param("UNROLL", 1, (1, 2, 3), "the seed's unrolling case"),),
        ),
        Variant(
            PERIMETER,
            "combined",
            "beyond 002 §6.1.1 (its optimizations together)",
            "BS x BS blocks, COARSEN columns (rows) per work-item, as one vector when VECTOR is 1, "
            "the solve's inner loop unrolled by UNROLL",
            run_perimeter_combined,
            params=(
                Param("BS", 16, (16, 32, 64), "block edge of every kernel"),
                Param("COARSEN", 4, (1, 2, 4, 8, 16), "columns or rows per work-item"),
                Param("VECTOR", 1, (0, 1), "1: a work-item's values as one floatCOARSEN vector"),
                Param("UNROLL", 1, (1, 2, 4, 8), "unrolling factor of the loop over earlier rows"),
            ),
            requires=(
                Requirement("vectors of 2 to 16 values (VECTOR needs COARSEN 2 or more)", _vectors),
                work_group("work-groups of 2 BS / COARSEN work-items", lambda p: 2 * p["BS"] // p["COARSEN"]),
                local_memory(
                    "local memory for three BS x BS float blocks (the perimeter kernel)", lambda p: 3 * p["BS"] ** 2 * 4
                ),
            ),
            tags=frozenset({COMBINED}),
        ),
    ],
)

add(
    Study(
        name="lud_internal",
        application="lud",
        section="6.1.2",
        timed=("lud_internal",),
        case=_case(INTERNAL, "blocked LU of a diagonally dominant float32 matrix; the internal kernel timed"),
        footprint=_footprint,
    ),
    [
        Variant(INTERNAL, "baseline", "002 §6.1.2.2", "a BS x BS work-group per block, BS 16", run_baseline),
        Variant(
            INTERNAL,
            "granularity_strided",
            "002 §6.1.2.3 (1a, first way)",
            "work-group width / COARSEN: each work-item updates COARSEN columns BS / COARSEN apart",
            run_internal_strided,
            params=(Param("COARSEN", 2, (2, 4, 8), "elements per work-item"),),
        ),
        Variant(
            INTERNAL,
            "granularity_adjacent",
            "002 §6.1.2.3 (1a, second way)",
            "work-group height / COARSEN: each work-item updates COARSEN adjacent rows",
            run_internal_adjacent,
            params=(Param("COARSEN", 2, (2, 4, 8), "elements per work-item"),),
        ),
        Variant(
            INTERNAL,
            "geometry",
            "002 §6.1.2.3 (1b)",
            "BS x BS blocks instead of 16 x 16, in every kernel",
            run_geometry,
            params=(_BLOCKS,),
            requires=_BLOCK_NEEDS,
        ),
        Variant(
            INTERNAL,
            "transposed",
            "002 §6.1.2.3 (2)",
            "the row strip's block transposed as it is loaded into local memory",
            run_internal_transposed,
        ),
        Variant(
            INTERNAL,
            "vectorization",
            "002 §6.1.2.3 (2)",
            "the transposed load with the inner product in floatWIDTH vectors",
            run_internal_vectorization,
            params=(Param("WIDTH", 4, (2, 4, 8), "vector width"),),
        ),
        Variant(
            INTERNAL,
            "unrolling",
            "002 §6.1.2.3 (3)",
            "the inner product's loop unrolled by UNROLL",
            run_internal_unrolling,
            params=(Param("UNROLL", 2, (2, 4, 8), "unrolling factor"),),
        ),
        Variant(
            INTERNAL,
            "blocked",
            "beyond 002 §6.1.2 (its optimizations together)",
            "BS x BS blocks, each work-item updating ROWS adjacent rows and COLS strided columns, unrolled by UNROLL",
            run_internal_blocked,
            params=(
                Param("BS", 32, (16, 32, 64), "block edge of every kernel"),
                Param("ROWS", 2, (1, 2, 4, 8), "adjacent rows per work-item"),
                Param("COLS", 2, (1, 2, 4, 8), "strided columns per work-item"),
                Param("UNROLL", 1, (1, 2, 4, 8), "unrolling factor of the inner product"),
            ),
            requires=(
                work_group(
                    "work-groups of BS / COLS x BS / ROWS work-items",
                    lambda p: (p["BS"] // p["COLS"]) * (p["BS"] // p["ROWS"]),
                ),
                local_memory(
                    "local memory for three BS x BS float blocks (the perimeter kernel)", lambda p: 3 * p["BS"] ** 2 * 4
                ),
            ),
            tags=frozenset({COMBINED}),
        ),
    ],
)
