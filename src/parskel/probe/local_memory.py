"""Local-memory bandwidth with and without bank conflicts (``kernels/probe/local_memory.cl``):
the words read per second as neighbouring work-items read words ``stride`` apart."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..runtime import Buffer, Device, round_down_to_power_of_two
from .figures import Figure, Step
from .timing import Settings, grown, median_kernel_seconds

PATH = "probe/local_memory.cl"
REPEATS = 1024
STRIDES_QUICK = (1, 32)
STRIDES_FULL = (1, 2, 4, 8, 16, 32, 33)
WORD = 4  # bytes of a float
BANKS = 32  # the local-memory banks of NVIDIA and AMD GPUs, which the conflict counts assume


def words(device: Device) -> int:
    """The local array's length: 4096 floats (16 KiB), or half the local memory if smaller."""
    return min(4096, round_down_to_power_of_two(max(device.info.local_mem_bytes // (2 * WORD), 1)))


def measure_stride(device: Device, settings: Settings, stride: int) -> list[Figure]:
    defines = {"WORDS": words(device), "STRIDE": stride, "REPEATS": REPEATS}
    kernel = device.program(PATH, defines).kernel("local_reads")
    group = min(256, kernel.max_work_group_size, device.info.max_work_group_size)
    outs: dict[int, Buffer] = {}

    def args(items: int) -> tuple:
        if items not in outs:
            outs.clear()
            outs[items] = device.alloc(items * WORD)
        return (outs[items], np.int32(0))

    start = device.info.compute_units * group * 4
    items = grown(device, kernel, group, args, start=start, most=1 << 24, target=settings.target)
    seconds = median_kernel_seconds(device, kernel, items, group, args(items), settings.reps)
    value = float(items) * REPEATS * WORD / seconds / 1e9
    ways = math.gcd(stride, BANKS)
    name = "read, no bank conflicts" if ways == 1 else f"read, {ways}-way bank conflicts"
    params = {"stride": stride, "work-group": group, "work-items": items}
    return [Figure("local", name, value, "GB/s", seconds, params)]


def steps(device: Device, settings: Settings) -> list[Step]:
    return [
        Step("local", f"local reads, stride {stride}", partial(measure_stride, device, settings, stride))
        for stride in (STRIDES_QUICK if settings.quick else STRIDES_FULL)
    ]
