"""How the CPU-shaped variants split their input: a few long contiguous runs, one a work-group.

A CPU runs a work-group on one core and its work-items one after another, so a variant shaped
for it launches a few work-groups of one work-item, each owning a run of the input that it
walks front to back (streaming reads, private state in the core's caches). A long input gets
``groups_per_cu`` work-groups per compute unit, at least one per core, so that the cores stay
balanced when one of them is busy elsewhere; ``min_run`` keeps a short input from being split
into runs that cost more to start than to do.
"""

from __future__ import annotations

from ..runtime import Device
from .registry import Param


def params(groups_per_cu: int) -> tuple[Param, Param]:
    """The two tunables of a CPU-shaped variant, with its default ``groups_per_cu``."""
    return (
        Param("groups_per_cu", groups_per_cu, (1, 2, 4, 8, 16, 32), "work-groups (of one work-item) per compute unit"),
        Param("min_run", 4096, (1, 16, 256, 4096, 65536), "elements a work-group takes at least"),
    )


def runs(device: Device, n: int, groups_per_cu: int, min_run: int, multiple: int = 1) -> tuple[int, int]:
    """The number of work-groups for ``n`` elements (``n`` >= 1) on ``device``, and the
    elements each one owns: a multiple of ``multiple``; the last run is shorter.

    >>> class Info: compute_units = 2
    >>> class Dev: info = Info()
    >>> runs(Dev(), 100_000, 4, 4096, 16)    # 8 runs of 12512 (the last 12416)
    (8, 12512)
    >>> runs(Dev(), 5000, 4, 4096, 16)       # too short for 8 runs of 4096
    (2, 2512)
    """
    groups = max(1, min(device.info.compute_units * groups_per_cu, -(-n // min_run)))
    per_group = -(-n // groups)
    chunk = -(-per_group // multiple) * multiple
    return -(-n // chunk), chunk
