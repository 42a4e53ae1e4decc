"""crc: each byte's share of a message's CRC (seed 002 §6.2, the compute kernel).

The CRC is CRC-8 with the polynomial x^8 + x^2 + x + 1 (0x07, no reflection, initial value and
final XOR 0). It is linear: the CRC of a message is the XOR of its bytes' shares, the share of a
byte ``d`` places from the end (itself included) being the byte pushed ``d`` times through the
"one zero byte" map T. The kernel computes every share from tables of T^(2^i), one lookup per
set bit of ``d``; the host reference computes them from the powers of T up to its order, a
different route to the same numbers. ``crc8`` is the textbook bytewise CRC that the XOR of the
shares must equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np

from ..algorithms.registry import Param, Requirement, Variant
from ..bench.cases import Case, exact
from ..errors import LaunchError
from ..runtime import Device, Kernel, round_down_to_power_of_two, round_to_multiple
from .base import COMBINED, Study, add

FAMILY = "study.crc"
POLYNOMIAL = 0x07
_STEPS = 32  # tables: T^(2^i) for i < 32, so any distance below 2^32
_CHUNK = 1 << 24


@cache
def zero_byte_table() -> np.ndarray:
    """T: the CRC state after one zero byte, for each state (the classic CRC-8 table)."""
    table = np.zeros(256, dtype=np.uint8)
    for v in range(256):
        crc = v
        for _ in range(8):
            crc = ((crc << 1) ^ POLYNOMIAL) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
        table[v] = crc
    return table


@cache
def power_tables() -> np.ndarray:
    """The kernel's tables: row i is T^(2^i), 32 x 256 bytes."""
    rows = [zero_byte_table()]
    for _ in range(_STEPS - 1):
        rows.append(rows[-1][rows[-1]])
    return np.stack(rows)


@cache
def _powers() -> np.ndarray:
    """T^0, T^1, ... T^(k-1), where T^k is the identity: k x 256 bytes."""
    identity = np.arange(256, dtype=np.uint8)
    rows = [identity]
    while True:
        following = zero_byte_table()[rows[-1]]
        if np.array_equal(following, identity):
            return np.stack(rows)
        rows.append(following)


def crc8(message: bytes | np.ndarray) -> int:
    """The bytewise CRC-8 of ``message``, one table step per byte.

    >>> hex(crc8(b"123456789"))  # the catalogued check value of CRC-8 with polynomial 0x07
    '0xf4'
    """
    table, crc = zero_byte_table(), 0
    for byte in bytes(message):
        crc = int(table[crc ^ byte])
    return crc


def shares(data: np.ndarray) -> np.ndarray:
    """Each byte's share of the CRC of ``data`` (uint8), computed on the host."""
    powers = _powers()
    n, out = data.size, np.empty_like(data)
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        distance = (n - np.arange(start, stop, dtype=np.int64)) % powers.shape[0]
        out[start:stop] = powers[distance, data[start:stop]]
    return out


def compute(
    device: Device,
    data: np.ndarray,
    *,
    coarsen: int = 1,
    unroll: int = 1,
    divide: int = 1,
    groups: int | None = None,
) -> np.ndarray:
    """The shares of ``data`` on ``device``: ``coarsen`` bytes per work-item, the table loop
    unrolled by ``unroll``, work-groups of the base size / ``divide``; or, with ``groups``,
    that many work-groups striding over the whole message."""
    if data.ndim != 1 or data.dtype != np.uint8:
        raise ValueError(f"crc takes a 1D uint8 array, got {data.dtype} of shape {data.shape}")
    n = data.size
    if n == 0:
        return data.copy()
    program = device.program("study/crc/crc.cl", {"COARSEN": coarsen, "UNROLL": unroll})
    kernel = program.kernel("crc_bytes" if groups is None else "crc_strided")
    base = base_work_group(device, kernel)
    local = base // divide
    if local < 1:  # the kernel's own limit, known once built, is below the device's (_DIVIDES)
        raise LaunchError(f"crc: a work-group of {base} work-items cannot be divided by {divide}")
    items = round_to_multiple(-(-n // coarsen), local) if groups is None else groups * local
    source, tables = device.to_device(data), device.to_device(power_tables())
    out = device.alloc(n)
    device.launch(kernel, items, local, source, tables, out, np.uint32(n))
    result = np.empty_like(data)
    device.download(out, result)
    return result


def base_work_group(device: Device, kernel: Kernel) -> int:
    """The baseline's work-group: the largest the device runs the kernel in, as in the seed, but
    at most 1024 (the largest on every device the seed measured), so that devices compare at
    one geometry where they can (NVIDIA's OpenCL runs this kernel in at most 256)."""
    return round_down_to_power_of_two(min(1024, device.info.max_work_group_size, kernel.max_work_group_size))


def _divides(device: Device, p: Mapping[str, int]) -> bool:
    """Whether the base work-group, bounded by the device before any kernel is built, keeps a
    work-item when divided by DIVIDE."""
    return round_down_to_power_of_two(min(1024, device.info.max_work_group_size)) >= p["DIVIDE"]


_DIVIDES = Requirement("work-groups of the base size / DIVIDE, at least one work-item", _divides)


def make(n: int, rng: np.random.Generator) -> tuple[np.ndarray]:
    return (rng.integers(0, 256, n, dtype=np.uint8),)


# variants -------------------------------------------------------------------------------------


def run_baseline(device: Device, data: np.ndarray) -> np.ndarray:
    """Seed 002 §6.2.1.2: one work-item per byte, the largest work-group."""
    return compute(device, data)


def run_granularity(device: Device, data: np.ndarray, *, COARSEN: int = 2) -> np.ndarray:
    return compute(device, data, coarsen=COARSEN)


def run_geometry(device: Device, data: np.ndarray, *, DIVIDE: int = 2) -> np.ndarray:
    return compute(device, data, divide=DIVIDE)


def run_unrolling(device: Device, data: np.ndarray, *, UNROLL: int = 2) -> np.ndarray:
    return compute(device, data, unroll=UNROLL)


def run_combined(device: Device, data: np.ndarray, *, COARSEN: int = 4, UNROLL: int = 4, DIVIDE: int = 4) -> np.ndarray:
    """The seed's three optimizations at once, each at any of its levels: the space the tuner
    searches for a device (seed 002's future work), rather than one optimization at a time."""
    return compute(device, data, coarsen=COARSEN, unroll=UNROLL, divide=DIVIDE)


def run_groups(device: Device, data: np.ndarray, *, PERCENT: int = 100) -> np.ndarray:
    """As many work-groups as PERCENT % of the device's compute units (at least one)."""
    return compute(device, data, groups=max(1, device.info.compute_units * PERCENT // 100))


add(
    Study(
        name="crc",
        application="crc",
        section="6.2",
        timed=("crc_bytes", "crc_strided"),
        case=Case(
            family=FAMILY,
            summary="each byte's share of a random message's CRC-8",
            metric="MB/s (end to end)",
            scale=1e6,
            work=float,
            make=make,
            reference=lambda inputs: shares(inputs[0]),
            check=exact,
            quick_sizes=(1 << 22,),
            full_sizes=(50_000_000, 100_000_000, 200_000_000),
            size_label="bytes",
        ),
        footprint=lambda n: (n, 2 * n),
    ),
    [
        Variant(FAMILY, "baseline", "002 §6.2.1.2", "one work-item per byte, work-groups of 1024", run_baseline),
        Variant(
            FAMILY,
            "granularity",
            "002 §6.2.1.3 (1a)",
            "each work-item takes COARSEN adjacent bytes",
            run_granularity,
            params=(Param("COARSEN", 2, (2, 4, 8, 16), "bytes per work-item"),),
        ),
        Variant(
            FAMILY,
            "geometry",
            "002 §6.2.1.3 (1b)",
            "work-groups of the baseline's size / DIVIDE",
            run_geometry,
            params=(Param("DIVIDE", 2, (2, 4, 8, 16, 32), "divisor of the work-group size"),),
            requires=(_DIVIDES,),
        ),
        Variant(
            FAMILY,
            "unrolling",
            "002 §6.2.1.3 (2)",
            "the 32-step table loop unrolled by UNROLL",
            run_unrolling,
            params=(Param("UNROLL", 2, (2, 4, 8, 16, 32), "unrolling factor"),),
        ),
        Variant(
            FAMILY,
            "groups",
            "002 ch. 7 (1)",
            "PERCENT % as many work-groups as compute units (the advice: never fewer than CPU cores)",
            run_groups,
            params=(Param("PERCENT", 100, (50, 100, 200), "work-groups per 100 compute units"),),
            requires=(Requirement("at least 2 compute units", lambda d, p: d.info.compute_units >= 2),),
        ),
        Variant(
            FAMILY,
            "combined",
            "beyond 002 §6.2 (its optimizations together)",
            "COARSEN bytes per work-item, the table loop unrolled by UNROLL, work-groups of the base size / DIVIDE",
            run_combined,
            params=(
                Param("COARSEN", 4, (1, 2, 4, 8, 16), "bytes per work-item"),
                Param("UNROLL", 4, (1, 2, 4, 8, 16, 32), "unrolling factor"),
                Param("DIVIDE", 4, (1, 2, 4, 8, 16, 32), "divisor of the work-group size"),
            ),
            requires=(_DIVIDES,),
            tags=frozenset({COMBINED}),
        ),
    ],
)
