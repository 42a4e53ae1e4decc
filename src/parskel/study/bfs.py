"""bfs: breadth-first search over a random graph (seed 002 §6.5).

A level-synchronous search from node 0: each level, every node of the frontier hands its cost
plus one to its unvisited neighbours (``bfs_expand``, the kernel studied and timed), which then
form the next frontier (``bfs_mark``). The result is each node's level, -1 where unreached,
checked against a level-by-level search on the host.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.registry import Param, Variant
from ..bench.cases import Case, exact
from ..runtime import Device, Kernel, round_down_to_power_of_two, round_to_multiple
from .base import Study, add, work_group

FAMILY = "study.bfs"
SOURCE = 0
DEGREES = (2, 10)  # each node has 2 ... 10 out-edges, 6 on average


def make(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random directed graph of n nodes in compressed rows: starts, degrees, edges."""
    degrees = rng.integers(DEGREES[0], DEGREES[1] + 1, n).astype(np.int32)
    starts = np.zeros(n, dtype=np.int32)
    if n:
        np.cumsum(degrees[:-1], out=starts[1:])
    edges = rng.integers(0, max(n, 1), int(degrees.sum())).astype(np.int32)
    return starts, degrees, edges


def levels(starts: np.ndarray, degrees: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each node's distance from node 0 in edges, -1 where unreached, on the host."""
    n = starts.size
    cost = np.full(n, -1, dtype=np.int32)
    if n == 0:
        return cost
    cost[SOURCE] = 0
    frontier, level = np.array([SOURCE]), 0
    while frontier.size:
        counts = degrees[frontier].astype(np.int64)
        # the positions of every frontier node's edges, one run per node
        runs = np.repeat(starts[frontier] - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        reached = np.unique(edges[runs])
        frontier = reached[cost[reached] < 0]
        level += 1
        cost[frontier] = level
    return cost


def search(
    device: Device,
    starts: np.ndarray,
    degrees: np.ndarray,
    edges: np.ndarray,
    *,
    local: int | None = None,
    coarsen: int = 1,
    unroll: int = 1,
) -> np.ndarray:
    """Levels from node 0 on ``device``; the expand kernel in work-groups of ``local`` (default
    the baseline's) with ``coarsen`` nodes per work-item and its edge loop unrolled by ``unroll``."""
    n = starts.size
    if n == 0:
        return np.empty(0, dtype=np.int32)
    expand = device.program("study/bfs/bfs.cl", {"COARSEN": coarsen, "UNROLL": unroll}).kernel("bfs_expand")
    mark = device.program("study/bfs/bfs.cl").kernel("bfs_mark")
    base = base_work_group(device, expand, mark)
    local = local or base
    frontier = np.zeros(n, dtype=np.uint8)
    frontier[SOURCE] = 1
    cost = np.full(n, -1, dtype=np.int32)
    cost[SOURCE] = 0
    graph = [device.to_device(a) for a in (starts, degrees, edges if edges.size else np.zeros(1, np.int32))]
    marks = [device.to_device(frontier), device.to_device(np.zeros(n, np.uint8)), device.to_device(frontier)]
    costs, more = device.to_device(cost), device.alloc(4)
    nodes, flag = np.uint32(n), np.zeros(1, dtype=np.int32)
    while True:
        device.fill(more, np.int32(0))
        device.launch(expand, round_to_multiple(-(-n // coarsen), local), local, *graph, *marks, costs, nodes)
        device.launch(mark, round_to_multiple(n, base), base, *marks, more, nodes)
        device.download(more, flag)
        if not flag[0]:
            break
    device.download(costs, cost)
    return cost


def base_work_group(device: Device, *kernels: Kernel) -> int:
    """The baseline's work-group: the largest the device runs the kernels in, at most 1024 (as
    in the seed)."""
    return round_down_to_power_of_two(
        min(1024, device.info.max_work_group_size, *(k.max_work_group_size for k in kernels))
    )


def run_baseline(device: Device, starts: np.ndarray, degrees: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Seed 002 §6.5.1.2: one work-item per node, the largest work-group (at most 1024)."""
    return search(device, starts, degrees, edges)


def run_fewer_items(
    device: Device, starts: np.ndarray, degrees: np.ndarray, edges: np.ndarray, *, COARSEN: int = 2
) -> np.ndarray:
    """As many work-groups as the baseline, each COARSEN times smaller."""
    expand = device.program("study/bfs/bfs.cl", {"COARSEN": COARSEN, "UNROLL": 1}).kernel("bfs_expand")
    return search(device, starts, degrees, edges, local=base_work_group(device, expand) // COARSEN, coarsen=COARSEN)


def run_fewer_groups(
    device: Device, starts: np.ndarray, degrees: np.ndarray, edges: np.ndarray, *, COARSEN: int = 2
) -> np.ndarray:
    """Work-groups as large as the baseline's, COARSEN times fewer."""
    return search(device, starts, degrees, edges, coarsen=COARSEN)


def run_geometry(
    device: Device, starts: np.ndarray, degrees: np.ndarray, edges: np.ndarray, *, WG: int = 256
) -> np.ndarray:
    return search(device, starts, degrees, edges, local=WG)


def run_unrolling(device: Device, starts: np.ndarray, degrees: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return search(device, starts, degrees, edges, unroll=2)


add(
    Study(
        name="bfs",
        application="bfs",
        section="6.5",
        timed=("bfs_expand",),
        case=Case(
            family=FAMILY,
            summary="levels from node 0 of a random graph with 2 to 10 out-edges per node",
            metric="Medges/s (end to end)",
            scale=1e6,
            work=lambda n: 6.0 * n,
            make=make,
            reference=lambda inputs: levels(*inputs),
            check=exact,
            quick_sizes=(1 << 18,),
            full_sizes=(65536, 1 << 20),
            size_label="nodes",
        ),
        footprint=lambda n: (4 * DEGREES[1] * n, 4 * (DEGREES[1] + 3) * n + 3 * n),
    ),
    [
        Variant(FAMILY, "baseline", "002 §6.5.1.2", "one work-item per node, work-groups of 1024", run_baseline),
        Variant(
            FAMILY,
            "granularity_items",
            "002 §6.5.1.3 (a, first case)",
            "COARSEN nodes per work-item, work-groups COARSEN times smaller",
            run_fewer_items,
            params=(Param("COARSEN", 2, (2, 4), "nodes per work-item"),),
        ),
        Variant(
            FAMILY,
            "granularity_groups",
            "002 §6.5.1.3 (a, second case)",
            "COARSEN nodes per work-item, COARSEN times fewer work-groups",
            run_fewer_groups,
            params=(Param("COARSEN", 2, (2, 4), "nodes per work-item"),),
        ),
        Variant(
            FAMILY,
            "geometry",
            "002 §6.5.1.3 (b)",
            "work-groups of WG work-items",
            run_geometry,
            params=(Param("WG", 256, (128, 256, 512, 1024), "work-group size"),),
            requires=(work_group("work-groups of WG work-items", lambda p: p["WG"]),),
        ),
        Variant(FAMILY, "unrolling", "002 §6.5.1.3 (2)", "the edge loop unrolled by 2", run_unrolling),
    ],
)
