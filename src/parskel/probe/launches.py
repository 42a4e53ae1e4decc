"""What a launch costs (an empty kernel, ``kernels/probe/empty.cl``) and how one kernel's time
depends on its work-group size (the one-to-one copy of ``kernels/probe/global_memory.cl``)."""

from __future__ import annotations

import statistics
import time
from functools import partial

import numpy as np

from ..runtime import Device
from .figures import Figure, Step
from .global_memory import ELEMENT
from .global_memory import PATH as COPY_PATH
from .timing import Settings, median_kernel_seconds

PATH = "probe/empty.cl"
SMALLEST_GROUP = 32


def measure_launch(device: Device, settings: Settings) -> list[Figure]:
    """Three costs of an empty one-item kernel: back-to-back launches per second (the host's
    cost of enqueueing), a launch waited for (the round trip), and the device's own time."""
    kernel = device.program(PATH).kernel("empty")
    count = 200 if settings.quick else 1000
    device.launch(kernel, 1, 1).wait()
    start = time.perf_counter()
    for _ in range(count):
        device.launch(kernel, 1, 1)
    device.finish()
    enqueued = (time.perf_counter() - start) / count
    round_trips = []
    for _ in range(count // 10):
        start = time.perf_counter()
        device.launch(kernel, 1, 1).wait()
        round_trips.append(time.perf_counter() - start)
    waited = statistics.median(round_trips)
    on_device = median_kernel_seconds(device, kernel, 1, 1, (), settings.reps * 10)
    return [
        Figure("launch", "launches back to back", enqueued * 1e6, "us", enqueued, {"launches": count}),
        Figure("launch", "launch and wait", waited * 1e6, "us", waited, {"launches": count // 10}),
        Figure("launch", "empty kernel, device time", on_device * 1e6, "us", on_device, {}),
    ]


def group_sizes(device: Device, kernel_max: int) -> list[int]:
    """32, 64, ... up to the largest work-group the kernel runs with."""
    largest = min(kernel_max, device.info.max_work_group_size)
    sizes = []
    size = min(SMALLEST_GROUP, largest)
    while size <= largest:
        sizes.append(size)
        size *= 2
    return sizes


def measure_group_sizes(device: Device, settings: Settings) -> list[Figure]:
    """The one-to-one copy of 16 MiB (4 MiB in a quick probe) at every work-group size."""
    kernel = device.program(COPY_PATH, {"MAPPING": 1, "ACCESS": 0, "PER_ITEM": 1, "T": "float"}).kernel("traffic")
    sizes = group_sizes(device, kernel.max_work_group_size)
    nbytes = (4 if settings.quick else 16) << 20
    items = nbytes // ELEMENT.itemsize
    src, dst = device.alloc(nbytes), device.alloc(nbytes)
    device.fill(src, ELEMENT.type(1))
    args = (src, dst, ELEMENT.type(0), np.int32(0))
    figures = []
    for size in sizes:
        seconds = median_kernel_seconds(device, kernel, items, size, args, settings.reps)
        params = {"work-group": size, "bytes": nbytes}
        figures.append(Figure("work-group", "copy", seconds * 1e6, "us", seconds, params))
    return figures


def steps(device: Device, settings: Settings) -> list[Step]:
    return [
        Step("launch", "empty kernel", partial(measure_launch, device, settings)),
        Step("work-group", "copy against work-group size", partial(measure_group_sizes, device, settings)),
    ]
