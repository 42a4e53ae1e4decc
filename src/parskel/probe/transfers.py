"""Host-device transfer bandwidth: uploads and downloads from pageable NumPy arrays and from
page-locked (pinned) host memory where the backend offers it (``Device.empty_pinned``; on a CPU
device, mapped memory)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from ..errors import BackendUnavailableError
from ..runtime import Device
from .figures import Figure, Step
from .timing import Settings


def transfer_bytes(device: Device, quick: bool) -> int:
    """64 MiB (16 MiB in a quick probe), within what the device can allocate."""
    return min((16 if quick else 64) << 20, device.info.max_alloc_bytes // 2)


def _timed(run: Callable[[], object], reps: int) -> float:
    run()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_transfers(device: Device, settings: Settings, memory: str) -> list[Figure]:
    """Upload and download of one buffer, host time of a blocking copy (what a caller waits)."""
    nbytes = transfer_bytes(device, settings.quick)
    if memory == "pinned":
        try:
            host = device.empty_pinned(nbytes, np.uint8)
        except BackendUnavailableError:
            return []
    else:
        host = np.empty(nbytes, np.uint8)
    host[:] = 1
    buffer = device.alloc(nbytes)
    figures = []
    for direction, run in (
        ("upload", lambda: device.upload(buffer, host, wait=True)),
        ("download", lambda: device.download(buffer, host, wait=True)),
    ):
        seconds = _timed(run, settings.reps)
        params = {"memory": memory, "bytes": nbytes}
        figures.append(Figure("transfers", f"{direction}, {memory}", nbytes / seconds / 1e9, "GB/s", seconds, params))
    return figures


def steps(device: Device, settings: Settings) -> list[Step]:
    return [
        Step("transfers", f"transfers, {memory} memory", partial(measure_transfers, device, settings, memory))
        for memory in ("pageable", "pinned")
    ]
