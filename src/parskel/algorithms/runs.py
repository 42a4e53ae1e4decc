"""How the CPU-shaped variants split their input: a few long contiguous runs, one a work-group.

A CPU runs a work-group on one core and its work-items one after another, so a variant shaped
for it launches a few work-groups of one work-item, each owning a run of the input that it
walks front to back (streaming reads, private state in the core's caches). A long input gets
``groups_per_cu`` work-groups per compute unit, at least one per core, so that the cores stay
balanced when one of them is busy elsewhere; ``min_run`` keeps a short input from being split
into runs that cost more to start than to do.
"""

from __future__ import annotations

from ..runtime.traits import cpu_runs as runs
from .registry import Param

__all__ = ["params", "runs"]


def params(groups_per_cu: int) -> tuple[Param, Param]:
    """The two tunables of a CPU-shaped variant, with its default ``groups_per_cu``."""
    return (
        Param("groups_per_cu", groups_per_cu, (1, 2, 4, 8, 16, 32), "work-groups (of one work-item) per compute unit"),
        Param("min_run", 4096, (1, 16, 256, 4096, 65536), "elements a work-group takes at least"),
    )
