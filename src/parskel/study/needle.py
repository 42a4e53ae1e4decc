"""needle: Needleman-Wunsch global alignment scores over BLOSUM62 (seed 002 §6.3).

The score matrix of two protein sequences of length n is (n + 1) x (n + 1): the borders hold
the gap penalties, and every other cell the best of a match (the diagonal neighbour plus the
BLOSUM62 similarity of the two residues) or a gap (the left or upper neighbour minus the
penalty). The device computes it one anti-diagonal of BS x BS blocks per launch; the host
reference computes it a row at a time, the row's left-to-right dependency resolved by a running
maximum. Both must agree on every cell.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..algorithms.registry import Param, Variant
from ..bench.cases import Case, exact
from ..runtime import Device, round_to_multiple
from .base import Study, add, local_memory, work_group

FAMILY = "study.needle"
PENALTY = 10
# the similarity matrix is padded to a multiple of the largest block edge, so that one layout
# serves every variant
_PAD = 64

RESIDUES = "ARNDCQEGHILKMFPSTWYV"
# BLOSUM62 (Henikoff and Henikoff 1992) for the 20 standard amino acids, in the order above
BLOSUM62 = np.array(
    [
        [4, -1, -2, -2, 0, -1, -1, 0, -2, -1, -1, -1, -1, -2, -1, 1, 0, -3, -2, 0],
        [-1, 5, 0, -2, -3, 1, 0, -2, 0, -3, -2, 2, -1, -3, -2, -1, -1, -3, -2, -3],
        [-2, 0, 6, 1, -3, 0, 0, 0, 1, -3, -3, 0, -2, -3, -2, 1, 0, -4, -2, -3],
        [-2, -2, 1, 6, -3, 0, 2, -1, -1, -3, -4, -1, -3, -3, -1, 0, -1, -4, -3, -3],
        [0, -3, -3, -3, 9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1],
        [-1, 1, 0, 0, -3, 5, 2, -2, 0, -3, -2, 1, 0, -3, -1, 0, -1, -2, -1, -2],
        [-1, 0, 0, 2, -4, 2, 5, -2, 0, -3, -3, 1, -2, -3, -1, 0, -1, -3, -2, -2],
        [0, -2, 0, -1, -3, -2, -2, 6, -2, -4, -4, -2, -3, -3, -2, 0, -2, -2, -3, -3],
        [-2, 0, 1, -1, -3, 0, 0, -2, 8, -3, -3, -1, -2, -1, -2, -1, -2, -2, 2, -3],
        [-1, -3, -3, -3, -1, -3, -3, -4, -3, 4, 2, -3, 1, 0, -3, -2, -1, -3, -1, 3],
        [-1, -2, -3, -4, -1, -2, -3, -4, -3, 2, 4, -2, 2, 0, -3, -2, -1, -2, -1, 1],
        [-1, 2, 0, -1, -3, 1, 1, -2, -1, -3, -2, 5, -1, -3, -1, 0, -1, -3, -2, -2],
        [-1, -1, -2, -3, -1, 0, -2, -3, -2, 1, 2, -1, 5, 0, -2, -1, -1, -1, -1, 1],
        [-2, -3, -3, -3, -2, -3, -3, -3, -1, 0, 0, -3, 0, 6, -4, -2, -2, 1, 3, -1],
        [-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4, 7, -1, -1, -4, -3, -2],
        [1, -1, 1, 0, -1, 0, 0, 0, -1, -2, -2, 0, -1, -2, -1, 4, 1, -3, -2, -2],
        [0, -1, 0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1, 1, 5, -2, -2, 0],
        [-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1, 1, -4, -3, -2, 11, 2, -3],
        [-2, -2, -2, -3, -2, -1, -2, -3, 2, -1, -1, -2, -1, 3, -3, -2, -2, 2, 7, -1],
        [0, -3, -3, -3, -1, -2, -2, -3, -3, 3, 1, -2, 1, -1, -2, -2, 0, -3, -1, 4],
    ],
    dtype=np.int32,
)


def similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The BLOSUM62 scores of every residue pair, laid out like the score matrix: row i + 1,
    column j + 1 for residues a[i] and b[j]; row and column 0, and the padding up to a multiple
    of 64, are zero."""
    rows, cols = round_to_multiple(max(a.size, 1), _PAD) + 1, round_to_multiple(max(b.size, 1), _PAD) + 1
    out = np.zeros((rows, cols), dtype=np.int32)
    out[1 : a.size + 1, 1 : b.size + 1] = BLOSUM62[a[:, None], b[None, :]]
    return out


def scores(a: np.ndarray, b: np.ndarray, penalty: int = PENALTY) -> np.ndarray:
    """The (len(a) + 1) x (len(b) + 1) Needleman-Wunsch score matrix, on the host, a row at a time.

    >>> scores(np.array([0]), np.array([0, 1])).tolist()  # A against AR: A-A match, then a gap
    [[0, -10, -20], [-10, 4, -6]]
    """
    n, m = a.size, b.size
    out = np.empty((n + 1, m + 1), dtype=np.int32)
    steps = penalty * np.arange(m + 1, dtype=np.int64)
    out[0] = -steps
    best = np.empty(m + 1, dtype=np.int64)
    for i in range(1, n + 1):
        above = out[i - 1].astype(np.int64)
        best[0] = -i * penalty
        best[1:] = np.maximum(above[:-1] + BLOSUM62[a[i - 1], b], above[1:] - penalty)
        # cell j = max over k <= j of best[k] - (j - k) penalty: the left gaps, as a running maximum
        out[i] = np.maximum.accumulate(best + steps) - steps
    return out


def align(device: Device, a: np.ndarray, b: np.ndarray, sim: np.ndarray, *, BS: int = 16) -> np.ndarray:
    """The score matrix of ``a`` and ``b`` (equal lengths) on ``device``, in BS x BS blocks;
    ``sim`` is :func:`similarity` of the two."""
    n = a.size
    if b.size != n or sim.shape[0] != round_to_multiple(max(n, 1), _PAD) + 1:
        raise ValueError("needle takes two sequences of one length and their similarity matrix")
    padded = sim.shape[0] - 1
    blocks = padded // BS
    cols = padded + 1
    start = np.zeros((cols, cols), dtype=np.int32)
    steps = -PENALTY * np.arange(cols, dtype=np.int32)
    start[0], start[:, 0] = steps, steps
    score, similar = device.to_device(start), device.to_device(sim)
    kernel = device.program("study/needle/needle.cl", {"BS": BS}).kernel("needle_blocks")
    for diagonal in range(2 * blocks - 1):
        first = max(0, diagonal - blocks + 1)
        count = min(diagonal, blocks - 1) - first + 1
        device.launch(
            kernel,
            count * BS,
            BS,
            score,
            similar,
            np.uint32(cols),
            np.int32(PENALTY),
            np.uint32(diagonal),
            np.uint32(first),
        )
    out = np.empty((n + 1, n + 1), dtype=np.int32)
    device.download_trimmed(score, (cols, cols), out)
    return out


def make(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two random sequences of n residues (codes into :data:`RESIDUES`) and their similarity."""
    a = rng.integers(0, len(RESIDUES), n).astype(np.int64)
    b = rng.integers(0, len(RESIDUES), n).astype(np.int64)
    return a, b, similarity(a, b)


def run_baseline(device: Device, a: np.ndarray, b: np.ndarray, sim: np.ndarray) -> np.ndarray:
    """Seed 002 §6.3.1.2: 16 x 16 blocks, 16 work-items each."""
    return align(device, a, b, sim)


def run_geometry(device: Device, a: np.ndarray, b: np.ndarray, sim: np.ndarray, *, BS: int = 32) -> np.ndarray:
    return align(device, a, b, sim, BS=BS)


def _local_bytes(params: Mapping[str, int]) -> int:
    return 4 * ((params["BS"] + 1) ** 2 + params["BS"] ** 2)


def _footprint(n: int) -> tuple[int, int]:
    side = round_to_multiple(max(n, 1), _PAD) + 1
    return side * side * 4, 2 * side * side * 4


add(
    Study(
        name="needle",
        application="needle",
        section="6.3",
        timed=("needle_blocks",),
        case=Case(
            family=FAMILY,
            summary="Needleman-Wunsch scores of two random protein sequences, BLOSUM62, gap penalty 10",
            metric="Mcells/s (end to end)",
            scale=1e6,
            work=lambda n: float(n) * n,
            make=make,
            reference=lambda inputs: scores(inputs[0], inputs[1]),
            check=exact,
            quick_sizes=(2000,),
            full_sizes=(4096, 8192, 16384),
            size_label="sequence length",
        ),
        footprint=_footprint,
    ),
    [
        Variant(FAMILY, "baseline", "002 §6.3.1.2", "16 x 16 blocks of 16 work-items", run_baseline),
        Variant(
            FAMILY,
            "geometry",
            "002 §6.3.1.3 (1a)",
            "BS x BS blocks of BS work-items: fewer launches, longer ones",
            run_geometry,
            params=(Param("BS", 32, (32, 64), "block edge"),),
            requires=(
                work_group("work-groups of BS work-items", lambda p: p["BS"]),
                local_memory("local memory for (BS + 1)^2 + BS^2 ints", _local_bytes),
            ),
        ),
    ],
)
