"""What a benchmark family measures: its inputs, reference, check, work and default sizes.

A :class:`Case` knows nothing of devices; :class:`Subject` is one thing timed on a case (a parskel
variant on a device, a CPU baseline, a peer). Skeleton cases are named ``skeletons.<name>``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..runtime import Timing

Inputs = tuple[np.ndarray, ...]
Kind = Literal["variant", "baseline", "peer"]

POW2_QUICK = tuple(1 << k for k in range(10, 21, 2))  # 2^10 ... 2^20
POW2_FULL = tuple(1 << k for k in range(10, 27, 2))  # 2^10 ... 2^26, as in seed 000


@dataclass(frozen=True)
class Case:
    """One benchmarked operation: ``make(size, rng)`` inputs, checked against ``reference``."""

    family: str
    summary: str
    metric: str  # the unit of the effective figure, e.g. "GFLOP/s"
    scale: float  # work units per metric unit (1e9 for GFLOP/s ...)
    work: Callable[[int], float]
    make: Callable[[int, np.random.Generator], Inputs]
    reference: Callable[[Inputs], Any]
    check: Callable[[Any, Any], str | None]  # None when right, else what is wrong
    quick_sizes: tuple[int, ...]
    full_sizes: tuple[int, ...]
    size_label: str = "elements"

    def figure(self, size: int, seconds: float) -> float:
        """The effective figure (GFLOP/s, GB/s, Mkeys/s) of one run taking ``seconds``."""
        return self.work(size) / seconds / self.scale if seconds > 0 else float("nan")


@dataclass(frozen=True)
class Subject:
    """One implementation timed on a case; ``call(inputs)`` returns ``(result, Timing or None)``.

    ``where`` is the device id for device code and ``"host"`` for CPU code; a ``None`` timing
    means only the end-to-end time (measured by the harness) exists.

    ``plain(inputs)``, where a device's subject has it, is the same call unrecorded, as a user
    makes it, and returns ``(result, seconds)``: recording makes events of its own, whose host
    time a peer's call does not carry. Measured runs then take their time from ``plain`` and
    the split of it from a recorded ``call`` beside it (:mod:`.harness`).
    """

    family: str
    name: str
    kind: Kind
    where: str
    call: Callable[[Inputs], tuple[Any, Timing | None]]
    params: str = ""
    # whether parskel's public function runs this subject for an input of a given size
    default_at: Callable[[int], bool] = lambda size: False
    plain: Callable[[Inputs], tuple[Any, float]] | None = None


# checks ------------------------------------------------------------------------------------

# A float32 sum of up to 2^26 terms carries rounding error of up to a few 1e-3 relative, by the
# order of summation: NumPy's own float32 dot of 2^26 squares was 4e-4 off on one machine and
# 1.1e-3 on an AMD Zen 5 (OpenBLAS, 2026-11-26); beyond 4e-3 it is a wrong result.
FLOAT32_SUM_RTOL = 4e-3


def _first(result: Any) -> Any:
    return result[0] if isinstance(result, tuple) else result


def exact(result: Any, expected: np.ndarray) -> str | None:
    """None when ``result`` equals ``expected`` element for element, else what differs."""
    got = np.asarray(_first(result))
    if got.shape != expected.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    wrong = np.flatnonzero(got.reshape(-1) != expected.reshape(-1))
    if wrong.size:
        i = int(wrong[0])
        return f"{wrong.size} wrong elements, first at {i}: {got.reshape(-1)[i]} != {expected.reshape(-1)[i]}"
    return None


def close(rtol: float) -> Callable[[Any, Any], str | None]:
    """A check that accepts values within ``rtol`` relative (absolute below 1) of the expected."""

    def check(result: Any, expected: Any) -> str | None:
        got = np.asarray(_first(result), dtype=np.float64)
        want = np.asarray(expected, dtype=np.float64)
        if got.shape != want.shape:
            return f"shape {got.shape}, expected {want.shape}"
        error = np.abs(got - want)
        bound = rtol * np.maximum(np.abs(want), 1.0)
        bad = np.flatnonzero(~(error <= bound).reshape(-1))
        if bad.size:
            i = int(bad[0])
            return (
                f"{bad.size} values off by more than {rtol:g} relative, first at {i}: "
                f"{got.reshape(-1)[i]:.7g} != {want.reshape(-1)[i]:.7g}"
            )
        return None

    return check


# inputs and references -----------------------------------------------------------------------


def _matrices(n: int, rng: np.random.Generator) -> Inputs:
    return rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)


def _digits(n: int, rng: np.random.Generator) -> Inputs:
    # small values so that an int32 prefix sum of 2^26 elements cannot overflow
    return (rng.integers(0, 10, n, dtype=np.int32),)


def _keys(n: int, rng: np.random.Generator) -> Inputs:
    return (rng.integers(0, 1 << 32, n, dtype=np.uint32),)


def _floats(n: int, rng: np.random.Generator) -> Inputs:
    return (rng.random(n, dtype=np.float32),)


def _float_pairs(n: int, rng: np.random.Generator) -> Inputs:
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


#: The degree-8 polynomial of ``skeletons.polynomial``, highest power first: 1 - x/2 + x^2/3 - ...
#: + x^8/9 (the series of ln(1 + x) / x), which stays between 0.69 and 1 on [0, 1).
POLYNOMIAL = (0.111111111, -0.125, 0.142857143, -0.166666667, 0.2, -0.25, 0.333333333, -0.5, 1.0)


def horner(x: Any, coefficients: tuple[float, ...] = POLYNOMIAL) -> Any:
    """The polynomial with ``coefficients`` (highest power first) at every element of ``x``, by
    Horner's rule in ``x``'s dtype and in place: NumPy's (or CuPy's) sixteen array operations.

    >>> horner(np.array([0.0, 1.0, 2.0]), (1.0, -2.0, 3.0))   # x^2 - 2x + 3
    array([3., 2., 3.])
    """
    c = [x.dtype.type(v) for v in coefficients]
    y = x * c[0]
    for v in c[1:-1]:
        y += v
        y *= x
    y += c[-1]
    return y


def exclusive_cumsum(x: np.ndarray) -> np.ndarray:
    """The exclusive prefix sum of ``x`` in its own dtype (NumPy, for references and the peer)."""
    out = np.empty_like(x)
    if x.size:
        out[0] = 0
        np.cumsum(x[:-1], out=out[1:])
    return out


CASES: dict[str, Case] = {
    "matmul": Case(
        family="matmul",
        summary="C = A B, square float32 matrices (seed 000, ch. 3)",
        metric="GFLOP/s",
        scale=1e9,
        work=lambda n: 2.0 * n**3,
        make=_matrices,
        reference=lambda i: i[0].astype(np.float64) @ i[1].astype(np.float64),
        check=close(1e-3),
        size_label="matrix edge",
        quick_sizes=(64, 128, 256, 512),
        full_sizes=(64, 128, 256, 512, 1024, 2048, 4000),
    ),
    "scan": Case(
        family="scan",
        summary="exclusive prefix sum of int32 (seed 000, ch. 4)",
        metric="GB/s",
        scale=1e9,
        work=lambda n: 8.0 * n,
        make=_digits,
        reference=lambda i: exclusive_cumsum(i[0]),
        check=exact,
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
    "sort": Case(
        family="sort",
        summary="uint32 keys, uniformly random (seed 000, ch. 5)",
        metric="Mkeys/s",
        scale=1e6,
        work=float,
        make=_keys,
        reference=lambda i: np.sort(i[0]),
        check=exact,
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
    "reduce": Case(
        family="reduce",
        summary="sum of float32 in [0, 1) (Reduce skeleton, seed 004)",
        metric="GB/s",
        scale=1e9,
        work=lambda n: 4.0 * n,
        make=_floats,
        reference=lambda i: i[0].sum(dtype=np.float64),
        check=close(FLOAT32_SUM_RTOL),
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
    "skeletons.map": Case(
        family="skeletons.map",
        summary="Map x -> x * x over float32 (seed 004)",
        metric="GB/s",
        scale=1e9,
        work=lambda n: 8.0 * n,
        make=_floats,
        reference=lambda i: i[0] * i[0],
        check=close(1e-6),
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
    "skeletons.zip": Case(
        family="skeletons.zip",
        summary="Zip x, y -> x * y over float32 (seed 004)",
        metric="GB/s",
        scale=1e9,
        work=lambda n: 12.0 * n,
        make=_float_pairs,
        reference=lambda i: i[0] * i[1],
        check=close(1e-6),
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
    "skeletons.polynomial": Case(
        family="skeletons.polynomial",
        summary="Map of a degree-8 polynomial (Horner's rule: 8 multiply-adds) over float32",
        metric="GFLOP/s",
        scale=1e9,
        work=lambda n: 16.0 * n,
        make=_floats,
        reference=lambda i: horner(i[0].astype(np.float64)),
        check=close(1e-5),
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
    "skeletons.mapreduce": Case(
        family="skeletons.mapreduce",
        summary="MapReduce: sum of squares of float32 (seed 004)",
        metric="GB/s",
        scale=1e9,
        work=lambda n: 4.0 * n,
        make=_floats,
        reference=lambda i: np.dot(i[0].astype(np.float64), i[0].astype(np.float64)),
        check=close(FLOAT32_SUM_RTOL),
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
    "skeletons.scan": Case(
        family="skeletons.scan",
        summary="Scan skeleton: exclusive int32 sum (seed 004)",
        metric="GB/s",
        scale=1e9,
        work=lambda n: 8.0 * n,
        make=_digits,
        reference=lambda i: exclusive_cumsum(i[0]),
        check=exact,
        quick_sizes=POW2_QUICK,
        full_sizes=POW2_FULL,
    ),
}


# the overhead group: one call on a small input, or on data already on the GPU, timed as the
# median of many calls (bench/overhead.py); the figure is calls per second
def _near(result: Any, expected: Any) -> str | None:
    got, want = np.asarray(result, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        return f"values differ by up to {np.max(np.abs(got - want)):.3g}"
    return None


def _overhead_case(
    name: str,
    summary: str,
    make: Callable[[int, np.random.Generator], Inputs],
    reference: Callable[[Inputs], Any],
    size: int,
) -> Case:
    return Case(
        family=f"overhead.{name}",
        summary=summary,
        metric="calls/s",
        scale=1.0,
        work=lambda n: 1.0,
        make=make,
        reference=reference,
        check=_near,
        quick_sizes=(size,),
        full_sizes=(size,),
    )


OVERHEAD: dict[str, Case] = {
    case.family: case
    for case in (
        _overhead_case(
            "launch", "one kernel launched and waited for: the device's own floor", _floats, lambda i: i[0] + i[0], 1
        ),
        _overhead_case("map", "cached Map x*x of 1,000 float32, read back", _floats, lambda i: i[0] * i[0], 1000),
        _overhead_case(
            "reduce",
            "cached Reduce (sum) of 1,000 float32 to a host scalar",
            _floats,
            lambda i: i[0].sum(dtype=np.float64),
            1000,
        ),
        _overhead_case("sort", "parskel.sort of 1,000 uint32", _keys, lambda i: np.sort(i[0]), 1000),
        _overhead_case("scan", "parskel.scan of 1,000 int32", _digits, lambda i: exclusive_cumsum(i[0]), 1000),
        _overhead_case(
            "matmul",
            "parskel.matmul of 16 x 16 float32",
            _matrices,
            lambda i: i[0].astype(np.float64) @ i[1].astype(np.float64),
            16,
        ),
        _overhead_case(
            "scan_gpu",
            "parskel.scan of 2^24 int32 already on the GPU (CuPy in, CuPy out)",
            _digits,
            lambda i: exclusive_cumsum(i[0]),
            1 << 24,
        ),
    )
}


# the e2e group: NumPy arrays in and out on a GPU, through pinned staging with transfers
# overlapped (bench/e2e.py), against CuPy and PyTorch copying pageable memory; Map, Reduce and scan
# count the bytes of their input a second
E2E_SIZES = ((1 << 20, 1 << 22), (1 << 24, 1 << 26))


def _e2e_case(
    name: str,
    summary: str,
    metric: str,
    scale: float,
    work: Callable[[int], float],
    make: Callable[[int, np.random.Generator], Inputs],
    reference: Callable[[Inputs], Any],
    check: Callable[[Any, Any], str | None],
    sizes: tuple[tuple[int, ...], tuple[int, ...]] = E2E_SIZES,
    size_label: str = "elements",
) -> Case:
    return Case(f"e2e.{name}", summary, metric, scale, work, make, reference, check, *sizes, size_label=size_label)


E2E: dict[str, Case] = {
    case.family: case
    for case in (
        _e2e_case(
            "map",
            "Map x*x of float32, NumPy in and out",
            "GB/s",
            1e9,
            lambda n: 4.0 * n,
            _floats,
            lambda i: i[0] * i[0],
            close(1e-6),
        ),
        _e2e_case(
            "reduce",
            "Reduce (sum) of float32, NumPy in",
            "GB/s",
            1e9,
            lambda n: 4.0 * n,
            _floats,
            lambda i: i[0].sum(dtype=np.float64),
            close(FLOAT32_SUM_RTOL),
        ),
        _e2e_case(
            "sort",
            "parskel.sort of uint32, NumPy in and out",
            "Mkeys/s",
            1e6,
            float,
            _keys,
            lambda i: np.sort(i[0]),
            exact,
        ),
        _e2e_case(
            "scan",
            "parskel.scan (exclusive) of int32, NumPy in and out",
            "GB/s",
            1e9,
            lambda n: 4.0 * n,
            _digits,
            lambda i: exclusive_cumsum(i[0]),
            exact,
        ),
        _e2e_case(
            "matmul",
            "parskel.matmul of float32, NumPy in and out",
            "GFLOP/s",
            1e9,
            lambda n: 2.0 * n**3,
            _matrices,
            lambda i: i[0].astype(np.float64) @ i[1].astype(np.float64),
            close(1e-3),
            ((512, 1024), (2048, 4096)),
            "matrix edge",
        ),
    )
}


# the primitives group: NumPy's operations beyond seed 000's (keys of other dtypes, axes, stacks,
# histograms, unique, compaction), parskel's public call against NumPy's and CuPy's on NumPy
# arrays (bench/primitives.py); every figure is input elements a second
ROW = 1024  # the row length of the cases along an axis, and the side of the stacked matrices / 32
MATRIX = 32
SEGMENT = 1000
TOP = 64
BINS = 256  # of histogram_by: the bin of x in [0, 1) is int(x * BINS)


def _int64_keys(n: int, rng: np.random.Generator) -> Inputs:
    return (rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, n, dtype=np.int64),)


def _bytes(n: int, rng: np.random.Generator) -> Inputs:
    return (rng.integers(-100, 100, n, dtype=np.int8),)


def _weighted(n: int, rng: np.random.Generator) -> Inputs:
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


def _sorted_and_queries(n: int, rng: np.random.Generator) -> Inputs:
    return np.sort(rng.random(n, dtype=np.float32)), rng.random(n, dtype=np.float32)


def _repeats(n: int, rng: np.random.Generator) -> Inputs:
    return (rng.integers(0, max(n // 16, 1), n, dtype=np.int32),)


def _stacks(n: int, rng: np.random.Generator) -> Inputs:
    """Two stacks of n // 1024 matrices of 32 x 32 float32, flattened (the size is elements)."""
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


def stacked(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1, MATRIX, MATRIX)


def segment_starts(n: int) -> np.ndarray:
    return np.arange(0, n, SEGMENT)


def _primitive_case(
    name: str,
    summary: str,
    make: Callable[[int, np.random.Generator], Inputs],
    reference: Callable[[Inputs], Any],
    check: Callable[[Any, Any], str | None] = exact,
) -> Case:
    sizes = (tuple(1 << k for k in (14, 18, 20)), tuple(1 << k for k in range(14, 25, 2)))
    return Case(f"primitives.{name}", summary, "Melem/s", 1e6, float, make, reference, check, *sizes)


PRIMITIVES: dict[str, Case] = {
    case.family: case
    for case in (
        _primitive_case("sort_int64", "sort of int64 keys", _int64_keys, lambda i: np.sort(i[0])),
        _primitive_case("argsort", "stable argsort of float32", _floats, lambda i: np.argsort(i[0], kind="stable")),
        _primitive_case(
            "sort_rows", f"sort of float32 along rows of {ROW}", _floats, lambda i: np.sort(i[0].reshape(-1, ROW))
        ),
        _primitive_case(
            "cumsum_rows",
            f"inclusive prefix sums of float32 along rows of {ROW}",
            _floats,
            lambda i: np.cumsum(i[0].reshape(-1, ROW), axis=1, dtype=np.float64),
            close(1e-4),
        ),
        _primitive_case("cumsum_int8", "inclusive prefix sums of int8 into int64", _bytes, lambda i: np.cumsum(i[0])),
        _primitive_case(
            "matmul_stack",
            f"a stack of {MATRIX} x {MATRIX} float32 products",
            _stacks,
            lambda i: np.matmul(stacked(i[0]).astype(np.float64), stacked(i[1]).astype(np.float64)),
            close(1e-3),
        ),
        _primitive_case(
            "histogram",
            "histogram of float32 in [0, 1), 256 bins",
            _floats,
            lambda i: np.histogram(i[0], 256, (0, 1))[0],
        ),
        _primitive_case(
            "histogram_weighted",
            "histogram of float32 in [0, 1), 256 bins, float32 weights",
            _weighted,
            lambda i: np.histogram(i[0], 256, (0, 1), weights=i[1].astype(np.float64))[0],
            close(1e-5),
        ),
        _primitive_case(
            "histogram_by",
            f"histogram of float32 in [0, 1) by a bin function, {BINS} bins",
            _floats,
            lambda i: np.bincount((i[0] * np.float32(BINS)).astype(np.int64), minlength=BINS),
        ),
        _primitive_case(
            "searchsorted",
            "searchsorted of as many float32 queries",
            _sorted_and_queries,
            lambda i: np.searchsorted(i[0], i[1]),
        ),
        _primitive_case("unique", "unique of int32 with 16 repeats each", _repeats, lambda i: np.unique(i[0])),
        _primitive_case("copy_if", "float32 elements above 0.5 (copy_if)", _floats, lambda i: i[0][i[0] > 0.5]),
        _primitive_case(
            "segmented_sum",
            f"sums of float32 segments of {SEGMENT}",
            _floats,
            lambda i: np.add.reduceat(i[0].astype(np.float64), segment_starts(i[0].size)),
            close(1e-4),
        ),
        _primitive_case("top_k", f"the {TOP} largest float32", _floats, lambda i: np.sort(i[0])[::-1][:TOP]),
    )
}


# resident: the GPU primitives on data that stays on the device (subjects in .resident) -------

RESIDENT_QUICK = (1 << 20, 1 << 22)
RESIDENT_FULL = (1 << 20, 1 << 24, 1 << 26, 1 << 28)


def _pairs(n: int, rng: np.random.Generator) -> Inputs:
    return rng.integers(0, 1 << 32, n, dtype=np.uint32), np.arange(n, dtype=np.uint32)


def stable_pairs(result: Any, expected: Any) -> str | None:
    """None when ``result`` (keys, values) is the stable sort of the keys ``expected[1]`` with
    the values ``arange(n)`` (``expected[0]`` their sorted keys), else what is wrong: linear in n.

    >>> keys = np.array([3, 1, 3, 2], np.uint32)
    >>> stable_pairs((np.sort(keys), np.array([1, 3, 0, 2], np.uint32)), (np.sort(keys), keys))
    >>> stable_pairs((np.sort(keys), np.array([1, 3, 2, 0], np.uint32)), (np.sort(keys), keys))
    'values out of input order among equal keys, first at 2'
    """
    keys, values = (np.asarray(part) for part in result)
    wrong = exact(keys, expected[0])
    if wrong:
        return f"keys: {wrong}"
    source = expected[1]
    if values.shape != keys.shape or (values.size and int(values.max()) >= source.size):
        return "values are not positions of the input"
    moved = np.flatnonzero(source[values] != keys)
    if moved.size:
        return f"{moved.size} values do not belong to their keys, first at {int(moved[0])}"
    backwards = np.flatnonzero((keys[1:] == keys[:-1]) & (values[1:] <= values[:-1]))
    if backwards.size:
        return f"values out of input order among equal keys, first at {int(backwards[0])}"
    return None


def _sorted_and_keys(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    return np.sort(inputs[0]), inputs[0]


def _resident(base: Case, family: str, summary: str, sizes: tuple[tuple[int, ...], tuple[int, ...]]) -> Case:
    return dataclasses.replace(base, family=family, summary=summary, quick_sizes=sizes[0], full_sizes=sizes[1])


_RESIDENT_SIZES = (RESIDENT_QUICK, RESIDENT_FULL)
_RESIDENT_EDGES = ((1024, 2048), (1024, 2048, 4096, 8192))
RESIDENT: dict[str, Case] = {
    case.family: case
    for case in (
        _resident(CASES["sort"], "resident.sort", "uint32 keys sorted on the device", _RESIDENT_SIZES),
        _resident(
            dataclasses.replace(CASES["sort"], make=_pairs, reference=_sorted_and_keys, check=stable_pairs),
            "resident.sort_pairs",
            "uint32 keys with uint32 values sorted on the device",
            _RESIDENT_SIZES,
        ),
        _resident(
            dataclasses.replace(CASES["scan"], reference=lambda i: np.cumsum(i[0])),
            "resident.scan",
            "inclusive prefix sum of int32 on the device",
            _RESIDENT_SIZES,
        ),
        _resident(CASES["reduce"], "resident.reduce", "sum of float32 on the device (Reduce)", _RESIDENT_SIZES),
        _resident(CASES["skeletons.map"], "resident.map", "x * x over float32 on the device (Map)", _RESIDENT_SIZES),
        _resident(CASES["matmul"], "resident.matmul", "C = A B of float32 on the device", _RESIDENT_EDGES),
    )
}


GROUPS: dict[str, tuple[str, ...]] = {
    "matmul": ("matmul",),
    "scan": ("scan",),
    "sort": ("sort",),
    "reduce": ("reduce",),
    "skeletons": ("skeletons.map", "skeletons.zip", "skeletons.polynomial", "skeletons.mapreduce", "skeletons.scan"),
}
CASES.update(OVERHEAD)
GROUPS["overhead"] = tuple(OVERHEAD)
CASES.update(E2E)
GROUPS["e2e"] = tuple(E2E)  # not in "all": its sizes are a GPU's, and it measures the same work as the others
CASES.update(PRIMITIVES)
GROUPS["primitives"] = tuple(PRIMITIVES)  # not in "all", which stays a few minutes on a CPU
CASES.update(RESIDENT)
GROUPS["resident"] = tuple(RESIDENT)  # not in "all": its sizes are a GPU's
GROUPS["all"] = tuple(
    f for group in ("matmul", "scan", "sort", "reduce", "skeletons", "overhead") for f in GROUPS[group]
)
