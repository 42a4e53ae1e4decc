"""Kernel times for the probes: device events, a warm-up, the median of repetitions, and launch
sizes grown until a kernel runs long enough to be timed well."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..runtime import Device, Kernel, round_to_multiple


@dataclass(frozen=True)
class Settings:
    """How long and how often each probe runs.

    ``target`` is the kernel time, in seconds, that a launch is grown to (a longer kernel
    hides the launch's own cost and the timer's resolution); ``reps`` timed launches follow a
    warm-up, and their median is kept.
    """

    quick: bool
    target: float
    reps: int

    @classmethod
    def preset(cls, quick: bool) -> Settings:
        return cls(quick=True, target=0.004, reps=3) if quick else cls(quick=False, target=0.02, reps=7)


def median_kernel_seconds(
    device: Device, kernel: Kernel, global_size: int, local_size: int | None, args: Sequence[Any], reps: int
) -> float:
    """The median device time of ``reps`` launches after one warm-up."""
    with device.timed():
        device.launch(kernel, global_size, local_size, *args).wait()
        return statistics.median(device.launch(kernel, global_size, local_size, *args).seconds for _ in range(reps))


def grown(
    device: Device,
    kernel: Kernel,
    local_size: int,
    args_for: Callable[[int], Sequence[Any]],
    *,
    start: int,
    most: int,
    target: float,
) -> int:
    """The number of work-items (a multiple of ``local_size``, from ``start`` up to ``most``)
    at which one launch takes about ``target`` seconds; ``args_for(items)`` gives the arguments."""
    items = round_to_multiple(max(start, local_size), local_size)
    most = max(items, most - most % local_size)
    device.launch(kernel, items, local_size, *args_for(items)).wait()  # the first launch may compile
    for _ in range(8):
        with device.timed():
            seconds = device.launch(kernel, items, local_size, *args_for(items)).seconds
        if seconds >= target / 2 or items >= most:
            break
        factor = min(64.0, max(2.0, target / max(seconds, 1e-9)))
        items = min(most, round_to_multiple(int(items * factor), local_size))
    return items
