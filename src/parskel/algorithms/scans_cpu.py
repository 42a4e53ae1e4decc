"""Scans shaped for CPU devices, in vectors of 64 bytes (32 where tuned so), for every dtype of :mod:`.scans` (and
what :func:`.scans.scan_buffer` runs on CPU devices: the seed's radix sorts scan their counts
with them).

``two_level_cpu`` splits the input into a few long runs (see :mod:`.runs`): the first launch
adds up every run, the second scans each run from the sum of the runs before it, so the input
is read twice from memory. ``chained_cpu`` takes the input in tiles that fit a core's cache, in
order, one launch of as many work-groups as cores: each tile is added up, its prefix found by a
look-back over the tiles before it, and scanned from the cache, so the input is read from
memory once.
"""

from __future__ import annotations

import numpy as np

from ..runtime import Buffer, Device, Program, c_type, traits
from . import runs
from .registry import Param, Variant, register
from .scans import add_enqueue, host_run, values_at

#: Bytes of one vector the kernels load and store, by default: a cache line, an AVX-512
#: register. Tunable (``vector_bytes``): 32, an AVX2 register, may suit CPUs without AVX-512.
VECTOR_BYTES = 64

_VECTOR = Param("vector_bytes", VECTOR_BYTES, (32, 64), "bytes of the vectors each step loads, scans and stores")


def _program(device: Device, path: str, kt: np.dtype, vector_bytes: int, **defines: int) -> tuple[Program, int]:
    """The scan program at ``path`` for elements ``kt`` in vectors of ``vector_bytes`` (8 lanes
    at least: the kernels take 8 or 16), and its lanes."""
    width = max(vector_bytes // kt.itemsize, 8)
    return device.program(path, {"T": c_type(kt, device), "VW": width, **defines}), width


def _two_level(
    device: Device,
    src: Buffer,
    dst: Buffer,
    n: int,
    kt: np.dtype,
    inclusive: bool,
    *,
    groups_per_cu: int,
    min_run: int,
    vector_bytes: int = VECTOR_BYTES,
) -> None:
    program, width = _program(device, "scan/two_level_cpu.cl", kt, vector_bytes)
    groups, chunk = runs.runs(device, n, groups_per_cu, min_run, width)
    size = (np.uint32(n), np.uint32(chunk))
    if groups > 1:
        sums = device.alloc(groups * kt.itemsize)
        device.launch(program.kernel("run_sums"), groups, 1, src, sums, *size)
    else:  # one run starts from zero and reads no totals: any buffer stands in for them
        sums = src
    device.launch(program.kernel("run_scan"), groups, 1, src, dst, sums, *size, np.uint32(inclusive))


def _chained(
    device: Device,
    src: Buffer,
    dst: Buffer,
    n: int,
    kt: np.dtype,
    inclusive: bool,
    *,
    groups_per_cu: int,
    tile: int,
    vector_bytes: int = VECTOR_BYTES,
    one_pass: int = -1,
    stream: int = -1,
) -> None:
    if one_pass < 0:
        one_pass = int(traits.one_pass(device))
    if stream < 0:
        stream = int(traits.stream_stores(device, n * kt.itemsize))
    stream = int(stream and device.type == "cpu")
    program, _ = _program(device, "scan/chained_cpu.cl", kt, vector_bytes, ONE_PASS=one_pass, STREAM=stream)
    tiles = -(-n // tile)
    groups = max(1, min(tiles, device.info.compute_units * groups_per_cu))
    # the ticket counter and the tiles' flags, zeroed, then their totals, in one buffer: on a
    # device that works in host memory a zeroed host array, which no command has to clear
    flags = 4 * values_at(tiles)
    nbytes = flags + 2 * tiles * kt.itemsize
    if device.shares_host_memory:
        state = device.host_buffer(np.zeros(nbytes, np.uint8))
    else:
        state = device.alloc(nbytes)
        device.fill(state, np.uint32(0), flags)
    args = (np.uint32(n), np.uint32(tile), np.uint32(tiles), np.uint32(inclusive))
    device.launch(program.kernel("chained_scan"), groups, 1, src, dst, state, *args)


_SUMMARY = (
    "a few long runs, one per work-group of one work-item: run totals, then each run scanned "
    "from its carry in 64-byte vectors"
)
add_enqueue("two_level_cpu", _two_level)
register(
    Variant(
        family="scan",
        name="two_level_cpu",
        seed="beyond 000 §4: CPU-shaped",
        summary=_SUMMARY,
        run=host_run("two_level_cpu", f"Scan ``x`` with two_level_cpu: {_SUMMARY}."),
        params=(*runs.params(2), _VECTOR),
    )
)

_CHAINED = (
    "tiles that fit a core's cache, taken in order by one work-group of one work-item per core: "
    "each added up, its prefix found by a look-back, then scanned from the cache"
)
add_enqueue("chained_cpu", _chained)
register(
    Variant(
        family="scan",
        name="chained_cpu",
        seed="beyond 000 §4: CPU-shaped",
        summary=_CHAINED,
        run=host_run("chained_cpu", f"Scan ``x`` with chained_cpu: {_CHAINED}."),
        params=(
            Param("groups_per_cu", 1, (1, 2, 4), "work-groups (of one work-item) per compute unit"),
            Param("tile", 32768, (4096, 16384, 32768, 65536, 262144), "elements of a tile"),
            _VECTOR,
            Param(
                "one_pass",
                -1,
                (-1, 0, 1),
                f"scan a tile in one pass where its prefix is known when it is taken (-1: on devices of at most "
                f"{traits.ONE_PASS_UNITS} compute units)",
            ),
            Param(
                "stream",
                -1,
                (-1, 0, 1),
                "store the output past the cache, on CPUs (-1: where input and output outgrow it)",
            ),
        ),
    )
)
