"""Each family's figures against the device's measured peaks (from ``parskel probe``'s profile):
the "% of measured peak" of the summary and the roofline chart of the report.

A family's traffic is the least it must move: every input read and every output written once
(sort: each key read and written once, whatever the passes). Its arithmetic is the operations it
must do (matmul 2n^3; scan, reduce and Map one per element). Memory-bound families are compared
with the measured bandwidth, matmul with the measured fp32 fma throughput.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from ..pages import save_chart
from ..probe import Profile, load


@dataclass(frozen=True)
class Work:
    """What one size of a family must move (``bytes``) and compute (``ops``, None where there
    is no arithmetic to count), and which measured peak bounds it."""

    bytes: Callable[[int], float]
    ops: Callable[[int], float] | None
    bound: str  # "bandwidth" or "fp32"


WORK: dict[str, Work] = {
    "matmul": Work(lambda n: 12.0 * n * n, lambda n: 2.0 * n**3, "fp32"),
    "scan": Work(lambda n: 8.0 * n, float, "bandwidth"),
    "sort": Work(lambda n: 8.0 * n, None, "bandwidth"),
    "reduce": Work(lambda n: 4.0 * n, float, "bandwidth"),
    "skeletons.map": Work(lambda n: 8.0 * n, float, "bandwidth"),
    "skeletons.zip": Work(lambda n: 12.0 * n, float, "bandwidth"),
    "skeletons.polynomial": Work(lambda n: 8.0 * n, lambda n: 16.0 * n, "bandwidth"),
    "skeletons.mapreduce": Work(lambda n: 4.0 * n, lambda n: 2.0 * n, "bandwidth"),
    "skeletons.scan": Work(lambda n: 8.0 * n, float, "bandwidth"),
}


def of_peak(family: str, size: int, seconds: float | None, profile: Profile | None) -> float | None:
    """The fraction of the measured peak that ``size`` of ``family`` in ``seconds`` reaches.

    >>> from parskel.probe import Figure, Profile
    >>> bw = Figure("global", "copy", 100.0, "GB/s", 1.0, peak="bandwidth")
    >>> profile = Profile({}, "", "", True, {}, [bw])
    >>> of_peak("reduce", 10**9, 0.08, profile)          # 4 GB in 0.08 s: 50 of 100 GB/s
    0.5
    """
    work = WORK.get(family)
    if work is None or profile is None or not seconds:
        return None
    peak = profile.measured_peak(work.bound)
    if not peak:
        return None
    if work.bound == "fp32":
        assert work.ops is not None
        return work.ops(size) / seconds / 1e9 / peak
    return work.bytes(size) / seconds / 1e9 / peak


def profiles_of(devices: Sequence[Mapping[str, Any]]) -> dict[str, Profile]:
    """The stored profiles of devices (``DeviceInfo.as_dict()`` each), by device id."""
    found = {}
    for info in devices:
        profile = load(info)
        if profile is not None:
            found[info["id"]] = profile
    return found


def roofline_chart(points: Sequence[tuple[str, int, float]], profile: Profile, title: str, path: Path) -> str | None:
    """The roofline of ``profile``'s device (measured, and theoretical where known) with each
    (family, size, seconds) of ``points`` at its operational intensity."""
    bandwidth, flops = profile.measured_peak("bandwidth"), profile.measured_peak("fp32")
    placed = []
    for family, size, seconds in points:
        work = WORK.get(family)
        if work is None or work.ops is None or not seconds:
            continue
        placed.append((family, size, work.ops(size) / work.bytes(size), work.ops(size) / seconds / 1e9))
    if not placed or not (bandwidth or flops):
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    xs = [p[2] for p in placed]
    low, high = min(xs + [0.05]) / 2, max(xs + [100.0]) * 2
    grid = [low * (high / low) ** (i / 200) for i in range(201)]
    theory = [profile.peaks[k].value if k in profile.peaks else None for k in ("bandwidth", "fp32")]
    for label, (bw, top), style in (("measured", (bandwidth, flops), "-"), ("theoretical", theory, "--")):
        if bw or top:
            ax.plot(grid, [_roof(x, bw, top) for x in grid], style, color="black", label=f"{label} roof")
    for family in dict.fromkeys(p[0] for p in placed):
        mine = [p for p in placed if p[0] == family]
        ax.plot([p[2] for p in mine], [p[3] for p in mine], "o", markersize=4, label=family)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("operational intensity (operations per byte of least traffic)")
    ax.set_ylabel("G(FL)OP/s")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_chart(fig, path)


def _roof(intensity: float, bandwidth: float | None, flops: float | None) -> float:
    """The attainable G(FL)OP/s at ``intensity`` under the ceilings that are known."""
    ceilings = [c for c in (intensity * bandwidth if bandwidth else None, flops) if c]
    return min(ceilings)


#: what a figure above its measured peak is marked with, and why
ABOVE_PEAK = "!"
ABOVE_PEAK_NOTE = (
    "! above the peak the probe measured: the figure beats the probe's best (its scalar instruction "
    "chains do not use all of a CPU's vector units), so that peak bounds nothing here"
)


def peak_cell(e2e: float | None, kernel: float | None) -> str:
    """The "% of peak" cell of a row: end to end / kernels, each marked when above the peak.

    >>> peak_cell(0.5, 1.2)
    '50 % / 120 %!'
    """
    from ..probe.display import percent

    def one(value: float | None) -> str:
        return percent(value) + (ABOVE_PEAK if value is not None and value > 1.0 else "")

    return f"{one(e2e)} / {one(kernel)}"
