"""Embree, the peer of Enlight's casters: all hits per ray through trimesh's Embree intersector
(``pip install trimesh embreex``), counted the way :mod:`parskel.enlight.reference` counts.

Rays start behind the eye, outside the scene's box, so that every volume's entries and exits
are seen; a point is material inside the stock and inside no subtraction volume, and the
first passage into material in front of the eye is the visible surface.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from ..enlight.scenes import Camera, Scene
from ..errors import BackendUnavailableError


def embree_available() -> tuple[bool, str]:
    """Whether trimesh can use Embree here, and why not."""
    try:
        import embreex  # noqa: F401
        from trimesh.ray import ray_pyembree  # noqa: F401
    except ImportError as exc:
        return False, f"{exc}; pip install trimesh embreex"
    return True, ""


def embree_intersector(scene: Scene) -> Any:
    """trimesh's Embree intersector over every triangle of the scene, as they are."""
    ok, why = embree_available()
    if not ok:
        raise BackendUnavailableError(f"Embree is not available: {why}")
    import trimesh
    from trimesh.ray.ray_pyembree import RayMeshIntersector

    vertices = scene.triangles.reshape(-1, 3)
    faces = np.arange(len(vertices)).reshape(-1, 3)
    return RayMeshIntersector(trimesh.Trimesh(vertices, faces, process=False))


def embree_cast(scene: Scene, camera: Camera, intersector: Any = None) -> np.ndarray:
    """The depth (height, width) of every pixel, inf where nothing is hit."""
    intersector = intersector or embree_intersector(scene)
    eye, dirs = camera.rays()
    d = dirs.reshape(-1, 3)
    lo, hi = scene.triangles.reshape(-1, 3).min(axis=0), scene.triangles.reshape(-1, 3).max(axis=0)
    back = float(np.linalg.norm(hi - lo) + np.linalg.norm(eye - (lo + hi) / 2))
    origins = eye - back * d
    tri, ray, points = intersector.intersects_id(origins, d, multiple_hits=True, return_locations=True)
    t = np.einsum("ij,ij->i", points - origins[ray], d[ray]) - back
    corners = scene.triangles[tri]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    enter = np.einsum("ij,ij->i", normal, d[ray]) < 0
    stock = scene.volume[tri] == 0
    adds = enter == stock  # entering the stock, or leaving a subtraction volume
    order = np.lexsort((adds, t, ray))
    ray, t, enter, stock = ray[order], t[order], enter[order], stock[order]
    step = np.where(enter, 1, -1)
    in_stock = _running(ray, np.where(stock, step, 0))
    in_subtraction = _running(ray, np.where(stock, 0, step))
    material = (in_stock > 0) & (in_subtraction == 0)
    before = np.concatenate([[False], material[:-1]]) & np.concatenate([[False], ray[1:] == ray[:-1]])
    surface = material & ~before & (t >= 0)
    depth = np.full(len(d), np.inf)
    rays, first = np.unique(ray[surface], return_index=True)
    depth[rays] = t[surface][first]
    return depth.reshape(camera.height, camera.width)


def _running(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``values`` restarting where ``group`` (sorted) changes."""
    total = np.cumsum(values)
    starts = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    base = np.repeat(total[starts] - values[starts], np.diff(np.concatenate([starts, [len(group)]])))
    return total - base


def time_embree(scene: Scene, camera: Camera, frames: int = 3) -> float:
    """Median seconds per frame of :func:`embree_cast` (the scene's BVH built once, before)."""
    intersector = embree_intersector(scene)
    embree_cast(scene, camera.resized(8, 8), intersector)
    times = []
    for _ in range(frames):
        start = time.perf_counter()
        embree_cast(scene, camera, intersector)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
