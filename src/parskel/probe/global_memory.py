"""Global-memory bandwidth (``kernels/probe/global_memory.cl``): copy, read-only and write-only
with seed 003's four mappings of work-items onto data, the driver's own copy, and the useful
bandwidth against the stride between neighbouring work-items."""

from __future__ import annotations

import statistics
from functools import partial

import numpy as np

from ..runtime import Buffer, Device
from .figures import Figure, Step
from .timing import Settings, median_kernel_seconds

PATH = "probe/global_memory.cl"
MAPPINGS = {"one-to-one": 1, "contiguous": 2, "strided": 3, "locally spaced": 4}
ACCESSES = {"copy": 0, "read": 1, "write": 2}
PER_ITEM = 16  # elements per work-item in the one-to-many mappings
STRIDES_QUICK = (1, 2, 4, 8, 16, 32)
STRIDES_FULL = (1, 2, 4, 8, 16, 32, 64)
ELEMENT = np.dtype(np.float32)


def buffer_bytes(device: Device, quick: bool) -> int:
    """Bytes per buffer: well beyond the caches (256 MiB; 64 MiB in a quick probe or on a CPU),
    within what the device can allocate, a multiple of every work-group size used."""
    wanted = (64 if quick or device.type == "cpu" else 256) << 20
    limit = min(device.info.max_alloc_bytes, device.info.global_mem_bytes // 4)
    size = 1 << 20
    while size * 2 <= min(wanted, limit):
        size *= 2
    return size


class Buffers:
    """The source and destination of every probe of one device, allocated once."""

    def __init__(self, device: Device, nbytes: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self._pair: tuple[Buffer, Buffer] | None = None

    @property
    def pair(self) -> tuple[Buffer, Buffer]:
        if self._pair is None:
            src, dst = self.device.alloc(self.nbytes), self.device.alloc(self.nbytes)
            self.device.fill(src, ELEMENT.type(1))
            self.device.fill(dst, ELEMENT.type(0))
            self._pair = (src, dst)
        return self._pair

    @property
    def elements(self) -> int:
        return self.nbytes // ELEMENT.itemsize


def _local(device: Device, kernel_max: int) -> int:
    return min(256, kernel_max, device.info.max_work_group_size)


def measure_mapping(device: Device, settings: Settings, buffers: Buffers, access: str, mapping: str) -> list[Figure]:
    per_item = 1 if mapping == "one-to-one" else PER_ITEM
    defines: dict[str, int | str] = {
        "MAPPING": MAPPINGS[mapping],
        "ACCESS": ACCESSES[access],
        "PER_ITEM": per_item,
        "T": "float",
    }
    kernel = device.program(PATH, defines).kernel("traffic")
    src, dst = buffers.pair
    items = buffers.elements // per_item
    local = _local(device, kernel.max_work_group_size)
    args = (src, dst, ELEMENT.type(2), np.int32(0))
    seconds = median_kernel_seconds(device, kernel, items, local, args, settings.reps)
    moved = buffers.nbytes * (2 if access == "copy" else 1)
    params = {"mapping": mapping, "per item": per_item, "bytes": buffers.nbytes}
    return [Figure("global", access, moved / seconds / 1e9, "GB/s", seconds, params, "bandwidth")]


def measure_driver_copy(device: Device, settings: Settings, buffers: Buffers) -> list[Figure]:
    """The backend's own device-to-device copy, a reference for the copy kernels."""
    src, dst = buffers.pair
    device.copy(dst, src).wait()
    with device.timed():
        seconds = statistics.median(device.copy(dst, src).seconds for _ in range(settings.reps))
    params = {"mapping": "driver copy", "bytes": buffers.nbytes}
    return [Figure("global", "copy", 2 * buffers.nbytes / seconds / 1e9, "GB/s", seconds, params, "bandwidth")]


def measure_strides(device: Device, settings: Settings, buffers: Buffers) -> list[Figure]:
    """Work-item i copies element i * stride: the bytes used against the stride."""
    kernel = device.program(PATH, {"T": "float"}).kernel("stride_copy")
    src, dst = buffers.pair
    local = _local(device, kernel.max_work_group_size)
    figures = []
    for stride in STRIDES_QUICK if settings.quick else STRIDES_FULL:
        items = buffers.elements // stride
        items -= items % local
        seconds = median_kernel_seconds(device, kernel, items, local, (src, dst, np.uint32(stride)), settings.reps)
        useful = 2 * items * ELEMENT.itemsize
        params = {"stride": stride, "work-items": items}
        figures.append(Figure("stride", "copy", useful / seconds / 1e9, "GB/s", seconds, params, "bandwidth"))
    return figures


def steps(device: Device, settings: Settings) -> list[Step]:
    buffers = Buffers(device, buffer_bytes(device, settings.quick))
    found = [
        Step("global", f"{access}, {mapping}", partial(measure_mapping, device, settings, buffers, access, mapping))
        for access in ACCESSES
        for mapping in MAPPINGS
    ]
    found.append(Step("global", "copy by the driver", partial(measure_driver_copy, device, settings, buffers)))
    found.append(Step("stride", "copy against stride", partial(measure_strides, device, settings, buffers)))
    return found
