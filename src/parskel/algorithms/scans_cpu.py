"""Scans shaped for CPU devices: a two-level scan over a few long runs (see :mod:`.runs`).

The first launch adds up every run, the second scans each run from the sum of the runs before
it: the input is read twice and the output written once, front to back, in vectors of 64 bytes.
It takes every dtype of :mod:`.scans` and is also what :func:`.scans.scan_buffer` runs on CPU
devices (the seed's radix sorts scan their counts with it).
"""

from __future__ import annotations

import numpy as np

from ..runtime import Buffer, Device, c_type
from . import runs
from .registry import Variant, register
from .scans import add_enqueue, host_run

#: Bytes of one vector the kernels load and store: a cache line, an AVX-512 register.
VECTOR_BYTES = 64


def _two_level(
    device: Device, src: Buffer, dst: Buffer, n: int, kt: np.dtype, inclusive: bool, *, groups_per_cu: int, min_run: int
) -> None:
    width = VECTOR_BYTES // kt.itemsize
    program = device.program("scan/two_level_cpu.cl", {"T": c_type(kt, device), "VW": width})
    groups, chunk = runs.runs(device, n, groups_per_cu, min_run, width)
    size = (np.uint32(n), np.uint32(chunk))
    sums = device.alloc(groups * kt.itemsize)
    if groups > 1:  # one run starts from zero: no totals needed
        device.launch(program.kernel("run_sums"), groups, 1, src, sums, *size)
    device.launch(program.kernel("run_scan"), groups, 1, src, dst, sums, *size, np.uint32(inclusive))


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
        params=runs.params(2),
    )
)
